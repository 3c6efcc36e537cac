// Command gen regenerates the corpus expectations: every seed's own entry,
// labelled by every oracle that applies, then operator × sampled site of
// every safe seed, each mutant labelled with the oracles (verify/explore,
// the definitional checker, the brute-force oracle; never verify), and
// writes testdata/expectations.tsv and the counts table of README.md.
//
// Labels depend on work budgets only, never on time, so the output does
// not depend on the machine. Labels are remembered by content hash in a
// cache file (-cache), so that an interrupted or repeated run only labels
// what it has not labelled before.
//
// Run it through `go generate ./corpus` (from the corpus directory).
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/megaproof/megaproof/corpus"
	"github.com/megaproof/megaproof/mutate"
	"github.com/megaproof/megaproof/schedule"
)

// labeller names the oracles' behaviour and budgets; cached labels
// (undecided ones too) of another labeller are ignored, except those of
// the labellers in sameBelow for programs of fewer tasks than given,
// where they answer exactly as this one does. Change it whenever an
// oracle or a budget changes what it answers, and say in sameBelow for
// which sizes the earlier one still holds.
const labeller = "v3"

// sameBelow: v2 differs from v3 only from corpus.LabelConfig's
// DefcheckAtScale (2,000 tasks) on, where v3 runs the definitional checker
// at scale (and up to 200,000 tasks rather than 20,000); below it the
// same code answers with the same budgets.
var sameBelow = map[string]int{"v2": 2000}

var (
	out    = flag.String("o", corpus.ExpectationsFile, "expectations file to write")
	readme = flag.String("readme", "README.md", "README whose counts table is rewritten (empty: none)")
	jobs   = flag.Int("j", runtime.GOMAXPROCS(0), "parallel labelling jobs")
	only   = flag.String("seeds", "", "comma-separated seed id prefixes to generate (for trials; default all)")
	cache  = flag.String("cache", filepath.Join(os.TempDir(), "megaproof-corpus-labels.tsv"), "label cache file (empty: none)")
)

func main() {
	flag.Parse()
	log.SetFlags(0)
	start := time.Now()
	var seeds []corpus.Seed
	for _, s := range corpus.Seeds() {
		if *only == "" || hasAnyPrefix(s.ID, strings.Split(*only, ",")) {
			seeds = append(seeds, s)
		}
	}
	known, learn, closeCache := openCache(*cache)
	cfg := corpus.GenerateConfig{
		Label:         corpus.LabelConfig{Cross: true},
		Jobs:          *jobs,
		OperatorSites: sites,
		Known:         known,
		Learn:         learn,
		Progress: func(done, total int) {
			if done%500 == 0 || done == total {
				log.Printf("gen: %d/%d labelled, %v", done, total, time.Since(start).Round(time.Second))
			}
		},
	}
	entries, rep, err := corpus.Generate(context.Background(), seeds, cfg)
	closeCache()
	if err != nil {
		log.Fatal(err)
	}
	var buf bytes.Buffer
	if err := corpus.WriteEntries(&buf, entries); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	table := countsTable(entries, rep)
	if *readme != "" {
		if err := rewriteReadme(*readme, table); err != nil {
			log.Fatal(err)
		}
	}
	os.Stderr.WriteString(table)
	for _, u := range rep.Undecided {
		log.Printf("undecided: %s", u)
	}
	for _, u := range rep.UnsafeSeeds {
		log.Printf("unsafe seed: %s", u)
	}
	for _, u := range rep.UndecidedSeeds {
		log.Printf("undecided seed: %s", u)
	}
	for _, u := range rep.LocationViolations {
		log.Printf("location declaration violated: %s", u)
	}
	log.Printf("gen: %d entries of %d candidates, %d undecided, %d duplicates, %d disputed, %d unsafe seeds, %v",
		len(entries), rep.Candidates, len(rep.Undecided), rep.Duplicates, rep.Disputed, len(rep.UnsafeSeeds), time.Since(start).Round(time.Second))
}

// sites samples 4 sites per operator on the large seeds (programs of
// 1,000 to 1,400 tasks), 5 on the big lowerings (2,800 to 5,800 tasks)
// and 1 of each of hugeOperators on the huge one (89,803 tasks; the
// definitional checker at scale takes about 10 s a mutant there), none of
// the memory-order and scope operators on the big and huge ones, and
// corpus.DefaultSites elsewhere.
func sites(s corpus.Seed, p *schedule.Program, op *mutate.Operator) int {
	switch {
	case strings.HasPrefix(s.ID, "large-"):
		return 4
	case s.Big && slices.Contains(memoryOrder, op.Name):
		return 0
	case strings.HasPrefix(s.ID, "huge-") && slices.Contains(hugeOperators, op.Name):
		return 1
	case strings.HasPrefix(s.ID, "huge-"):
		return 0
	case s.Big:
		return 5
	}
	return corpus.DefaultSites(s, p)
}

// hugeOperators are the operators sampled on the 89,803-task seed: static
// faults, whose findings come from verify's static checks (computed beside
// the greedy run from 16,384 tasks on, and joined to its findings). Its
// race and deadlock mutants are labelled as quickly, but verify's witness
// for each takes minutes there on a 2-core machine, beyond what
// `go test ./corpus` can spend.
var hugeOperators = []string{"widen-oob", "write-readonly", "kv-beyond-cache"}

// memoryOrder are the operators that weaken a release or an acquire or
// narrow a scope. Their mutants of the big lowerings (132 workers and
// more) are not synchronizing, and there the definitional checker's
// search over poison orders spends its whole work budget on nearly all of
// them (minutes each on a 2-core machine, with no label at the end); the
// large seeds give these classes their entries of 1,000 tasks and more.
var memoryOrder = []string{"relax-signal", "relax-wait", "drop-fence", "narrow-scope", "move-acquire", "narrow-sys-scope", "narrow-shared-scope"}

func hasAnyPrefix(s string, ps []string) bool {
	for _, p := range ps {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// openCache reads the label cache and returns its lookup, its writer and
// a function that flushes it. Lines are labeller, hash, verdict, oracle,
// codes and the explorer's findings (code:task;task,...).
func openCache(path string) (func(string, int) (corpus.Label, bool), func(string, corpus.Label), func()) {
	if path == "" {
		return nil, nil, func() {}
	}
	m := map[string]corpus.Label{}
	old := map[string]corpus.Label{} // labels of earlier labellers
	oldBelow := map[string]int{}
	if data, err := os.ReadFile(path); err == nil {
		for line := range strings.SplitSeq(string(data), "\n") {
			f := strings.Split(line, "\t")
			if len(f) != 6 || f[0] != labeller && sameBelow[f[0]] == 0 {
				continue
			}
			l := corpus.Label{Verdict: f[2], Oracle: f[3]}
			if f[4] != "" {
				l.Codes = strings.Split(f[4], ",")
			}
			if f[5] != "" {
				for fs := range strings.SplitSeq(f[5], ",") {
					code, tasks, _ := strings.Cut(fs, ":")
					of := corpus.OracleFinding{Code: code}
					for t := range strings.SplitSeq(tasks, ";") {
						var n int
						if _, err := fmt.Sscan(t, &n); err == nil {
							of.Tasks = append(of.Tasks, n)
						}
					}
					l.Findings = append(l.Findings, of)
				}
			}
			if f[0] == labeller {
				m[f[1]] = l
			} else {
				old[f[1]], oldBelow[f[1]] = l, sameBelow[f[0]]
			}
		}
	}
	lookupOld := func(h string, tasks int) (corpus.Label, bool) {
		l, ok := old[h]
		return l, ok && tasks < oldBelow[h]
	}
	fh, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		log.Printf("gen: label cache %s: %v (not remembering labels)", path, err)
		return func(h string, tasks int) (corpus.Label, bool) {
			if l, ok := m[h]; ok {
				return l, ok
			}
			return lookupOld(h, tasks)
		}, nil, func() {}
	}
	log.Printf("gen: %d labels cached in %s (%d of earlier labellers)", len(m)+len(old), path, len(old))
	w := bufio.NewWriter(fh)
	var mu sync.Mutex
	learn := func(h string, l corpus.Label) {
		var fs []string
		for _, f := range l.Findings {
			var ts []string
			for _, t := range f.Tasks {
				ts = append(ts, fmt.Sprint(t))
			}
			fs = append(fs, f.Code+":"+strings.Join(ts, ";"))
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", labeller, h, l.Verdict, l.Oracle, strings.Join(l.Codes, ","), strings.Join(fs, ","))
		w.Flush() // an interrupted run keeps what it labelled
	}
	lookup := func(h string, tasks int) (corpus.Label, bool) {
		mu.Lock()
		defer mu.Unlock()
		if l, ok := m[h]; ok {
			return l, ok
		}
		return lookupOld(h, tasks)
	}
	return lookup, learn, func() { mu.Lock(); w.Flush(); fh.Close(); mu.Unlock() }
}
