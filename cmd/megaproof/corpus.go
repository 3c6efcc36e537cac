package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"

	"github.com/megaproof/megaproof/corpus"
	"github.com/megaproof/megaproof/mutate"
)

// corpusReport is what corpus --json prints: the corpus summary (the
// confusion matrix of verify against the oracles' labels and the per-class
// counts) with its failures.
type corpusReport struct {
	*corpus.Summary
	Failures []corpusFailure `json:"failures"`
}

type corpusFailure struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
}

const corpusDoc = `Runs the regression corpus (package corpus): rebuilds every mutant and seed
from its recipe, checks its content hash, verifies it, replays every witness
verify gives through schedule.CheckWitness, and compares the verdict, the
finding codes and the locations with the oracles' labels. Prints the
confusion matrix (oracle unsafe/safe × verify unsafe/safe), per-class recall
and every entry that failed. On a terminal, stderr shows a progress bar with
the time left.

With --json it prints one object with entries, faulty, safe, malformed,
seeds, unsafe_seeds, undecided_seeds, large_faulty (faulty entries of at
least 1,000 tasks), true_positives, true_negatives, false_accepts,
false_rejects, family_mismatches, code_mismatches, location_mismatches,
witness_failures, oracle_disagreements, inconclusive, drift, errors,
labelled_by (entries per oracle), classes and by_seed_family (per operator
and per seed family: faulty, safe, malformed, detected, recall) and
failures.

Exit status: 0 when every entry agrees with its label; 1 when verify
disagrees with an oracle (a false accept or reject, a family, code or
location mismatch, a witness that does not replay, an inconclusive
verdict) or the oracles disagreed; 2 for bad usage, and when entries
drifted (a recipe no longer rebuilds its hashed mutant) or failed to run
and none disagreed.`

func runCorpus(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("corpus", "[flags]", corpusDoc, stderr)
	jsonOut := fs.Bool("json", false, "print a JSON summary")
	every := fs.Int("every", 1, "check every `N`-th entry only (a quick sample)")
	quiet := fs.Bool("quiet", false, "no progress bar, even on a terminal")
	_, status, done := parseFlags(fs, args, 0, 0)
	if done {
		return status
	}
	if *every < 1 {
		fs.Usage()
		return exitInvalid
	}
	entries, err := corpus.Entries()
	if err != nil {
		fmt.Fprintf(stderr, "megaproof corpus: %v\n", err)
		return exitInvalid
	}
	var sample []corpus.Entry
	for i, e := range entries {
		if i%*every == 0 {
			sample = append(sample, e)
		}
	}
	var update func(done, total int)
	var bar *progress
	if !*quiet && isTerminal(stderr) {
		bar = newProgress(stderr, len(sample))
		update = bar.update
	}
	s, err := corpus.RunEntries(context.Background(), sample, update)
	if bar != nil {
		bar.finish()
	}
	if err != nil {
		fmt.Fprintf(stderr, "megaproof corpus: %v\n", err)
		return exitInvalid
	}
	if *jsonOut {
		r := corpusReport{Summary: s, Failures: []corpusFailure{}}
		for _, f := range s.Failures {
			r.Failures = append(r.Failures, corpusFailure{ID: f.Entry.ID, Kind: f.Kind, Detail: f.Detail})
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			fmt.Fprintf(stderr, "megaproof corpus: %v\n", err)
			return exitInvalid
		}
	} else {
		printCorpus(stdout, s)
	}
	return corpusStatus(s)
}

// corpusStatus is corpus's exit status for a summary.
func corpusStatus(s *corpus.Summary) int {
	switch {
	case s.FalseAccepts > 0 || s.FalseRejects > 0 || s.FamilyMismatches > 0 || s.CodeMismatches > 0 || s.LocationMismatches > 0 ||
		s.WitnessFailures > 0 || s.OracleDisagreements > 0 || s.Inconclusive > 0:
		return exitUnsafe
	case s.Drift > 0 || s.Errors > 0 || !s.OK():
		return exitInvalid
	}
	return exitSafe
}

// printCorpus prints the confusion matrix, per-class recall and failures.
func printCorpus(w io.Writer, s *corpus.Summary) {
	fmt.Fprintf(w, "corpus: %d entries: %d faulty (%d of at least %d tasks), %d safe controls, %d malformed; %d seeds (%d unsafe, %d undecided)\n\n",
		s.Entries, s.Faulty, s.LargeFaulty, corpus.LargeTasks, s.Safe, s.Malformed, s.Seeds, s.UnsafeSeeds, s.UndecidedSeeds)
	fmt.Fprintf(w, "                 verify unsafe  verify safe\n")
	fmt.Fprintf(w, "oracle unsafe    %13d  %11d\n", s.TruePositives, s.FalseAccepts)
	fmt.Fprintf(w, "oracle safe      %13d  %11d\n\n", s.FalseRejects, s.TrueNegatives)
	fmt.Fprintf(w, "%-22s %7s %7s %9s %8s %7s\n", "class", "faulty", "safe", "malformed", "detected", "recall")
	for _, op := range mutate.Operators() {
		c, ok := s.Classes[op.Name]
		if !ok {
			continue
		}
		fmt.Fprintf(w, "%-22s %7d %7d %9d %8d %6.1f%%\n", op.Name, c.Faulty, c.Safe, c.Malformed, c.Detected, 100*c.Recall)
	}
	fmt.Fprintf(w, "\nfalse accepts %d, false rejects %d, family mismatches %d, code mismatches %d, location mismatches %d, witness failures %d, oracle disagreements %d, inconclusive %d, drift %d, errors %d\n",
		s.FalseAccepts, s.FalseRejects, s.FamilyMismatches, s.CodeMismatches, s.LocationMismatches, s.WitnessFailures, s.OracleDisagreements, s.Inconclusive, s.Drift, s.Errors)
	var by []string
	for _, o := range []string{corpus.OracleExplore, corpus.OracleDefcheck, corpus.OracleBrute} {
		by = append(by, fmt.Sprintf("%s %d", o, s.LabelledBy[o]))
	}
	fmt.Fprintf(w, "labelled by: %s\n", strings.Join(by, ", "))
	for _, f := range s.Failures {
		fmt.Fprintf(w, "  %s: %s: %s\n", f.Entry.ID, f.Kind, f.Detail)
	}
}

// isTerminal reports whether w is a terminal; tests replace it.
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progress draws a bar with the count, the percentage, the time spent and
// the time left.
type progress struct {
	p   *mpb.Progress
	bar *mpb.Bar
}

func newProgress(w io.Writer, total int) *progress {
	p := mpb.New(mpb.WithOutput(w), mpb.WithWidth(40), mpb.WithAutoRefresh(), mpb.WithRefreshRate(200*time.Millisecond))
	bar := p.AddBar(int64(total),
		mpb.PrependDecorators(decor.Name("corpus "), decor.CountersNoUnit("%d/%d")),
		mpb.AppendDecorators(decor.Percentage(decor.WCSyncSpace), decor.Name(" spent "), decor.Elapsed(decor.ET_STYLE_GO), decor.Name(", left "), decor.AverageETA(decor.ET_STYLE_GO)),
	)
	return &progress{p, bar}
}

// update is the callback of corpus.RunEntries.
func (pr *progress) update(done, _ int) { pr.bar.SetCurrent(int64(done)) }

// finish draws the last state and stops the bar.
func (pr *progress) finish() {
	if !pr.bar.Completed() {
		pr.bar.Abort(false)
	}
	pr.p.Wait()
}
