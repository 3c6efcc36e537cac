package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

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

func runCorpus(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("corpus", flag.ContinueOnError)
	fs.SetOutput(stderr)
	jsonOut := fs.Bool("json", false, "print a JSON summary")
	every := fs.Int("every", 1, "check every N-th entry only (a quick sample)")
	quiet := fs.Bool("quiet", false, "no progress bar")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: megaproof corpus [--json] [--every N] [--quiet]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 || *every < 1 {
		if err == nil {
			fs.Usage()
		}
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
	var progress func(done, total int)
	if !*quiet {
		progress = (&bar{w: stderr, start: time.Now()}).update
	}
	s, err := corpus.RunEntries(context.Background(), sample, progress)
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
	if s.FalseAccepts > 0 || s.FalseRejects > 0 {
		return exitUnsafe
	}
	return exitSafe
}

// printCorpus prints the confusion matrix, per-class recall and failures.
func printCorpus(w io.Writer, s *corpus.Summary) {
	fmt.Fprintf(w, "corpus: %d entries: %d faulty, %d safe controls, %d malformed\n\n", s.Entries, s.Faulty, s.Safe, s.Malformed)
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
	fmt.Fprintf(w, "\nfalse accepts %d, false rejects %d, family mismatches %d, inconclusive %d, drift %d, errors %d\n",
		s.FalseAccepts, s.FalseRejects, s.FamilyMismatches, s.Inconclusive, s.Drift, s.Errors)
	for _, f := range s.Failures {
		fmt.Fprintf(w, "  %s: %s: %s\n", f.Entry.ID, f.Kind, f.Detail)
	}
}

// bar is a progress bar on stderr, redrawn when its width in cells or the
// count in percent changes. (A 20-line bar needs no dependency.)
type bar struct {
	w     io.Writer
	start time.Time
	last  int
}

const barWidth = 40

func (b *bar) update(done, total int) {
	pct := 100 * done / max(total, 1)
	if pct == b.last && done != total {
		return
	}
	b.last = pct
	cells := barWidth * done / max(total, 1)
	fmt.Fprintf(b.w, "\r[%s%s] %3d%% %d/%d %s", strings.Repeat("=", cells), strings.Repeat(" ", barWidth-cells), pct, done, total, time.Since(b.start).Round(time.Second))
	if done == total {
		fmt.Fprintln(b.w)
	}
}
