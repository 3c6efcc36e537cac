// Command gen regenerates the corpus expectations: it enumerates mutation
// recipes (operator × site of every seed, sites sampled), applies each,
// labels the mutant with the oracles (verify/explore when its state space
// fits, else internal/defcheck; never verify), and writes
// testdata/expectations.tsv and the counts table of README.md.
//
// Run it through `go generate ./corpus` (from the corpus directory).
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/megaproof/megaproof/corpus"
	"github.com/megaproof/megaproof/internal/defcheck"
	"github.com/megaproof/megaproof/mutate"
	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify/explore"
)

var (
	out      = flag.String("o", corpus.ExpectationsFile, "expectations file to write")
	readme   = flag.String("readme", "README.md", "README whose counts table is rewritten (empty: none)")
	jobs     = flag.Int("j", runtime.GOMAXPROCS(0), "parallel labelling jobs")
	only     = flag.String("seeds", "", "comma-separated seed id prefixes to generate (for trials; default all)")
	maxState = flag.Int("maxstates", 200000, "explorer state budget per mutant")
	timeout  = flag.Duration("timeout", 5*time.Second, "explorer time budget per mutant")
	dctime   = flag.Duration("defcheck-timeout", 5*time.Second, "definitional checker time budget per mutant")
	child    = flag.Bool("defcheck-child", false, "internal: run defcheck on the program JSON on stdin")
)

// exploreTasks bounds the seeds the explorer is tried on; beyond it the
// state key or the state count is out of reach and defcheck labels.
const exploreTasks = 400

func main() {
	flag.Parse()
	log.SetFlags(0)
	if *child {
		defcheckChild()
		return
	}
	start := time.Now()
	cands, err := candidates()
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("gen: %d candidate recipes", len(cands))
	labelAll(cands)
	var entries []corpus.Entry
	var unlabeled []string
	for _, c := range cands {
		if c.skip != "" {
			unlabeled = append(unlabeled, c.e.ID+": "+c.skip)
			continue
		}
		entries = append(entries, c.e)
	}
	var buf bytes.Buffer
	if err := corpus.WriteEntries(&buf, entries); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	table := countsTable(entries, len(unlabeled))
	if *readme != "" {
		if err := rewriteReadme(*readme, table); err != nil {
			log.Fatal(err)
		}
	}
	os.Stderr.WriteString(table)
	for _, u := range unlabeled {
		log.Printf("unlabeled: %s", u)
	}
	log.Printf("gen: %d entries, %d unlabeled, %v", len(entries), len(unlabeled), time.Since(start).Round(time.Second))
}

type cand struct {
	e    corpus.Entry
	skip string // why no oracle could label it
}

// sitesPer is how many sites of one operator are sampled on a seed.
func sitesPer(s corpus.Seed) int {
	switch {
	case s.Big:
		return 2
	case strings.HasPrefix(s.ID, "llama-"), strings.HasPrefix(s.ID, "progenm-"):
		return 2
	}
	return 3
}

// mix is splitmix64 over the recipe coordinates: deterministic sampling.
func mix(xs ...uint64) uint64 {
	var z uint64
	for _, x := range xs {
		z += x + 0x9e3779b97f4a7c15
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		z ^= z >> 31
	}
	return z
}

func candidates() ([]*cand, error) {
	var out []*cand
	for si, s := range corpus.Seeds() {
		if *only != "" && !hasAnyPrefix(s.ID, strings.Split(*only, ",")) {
			continue
		}
		p, err := corpus.SeedProgram(s.Recipe)
		if err != nil {
			return nil, err
		}
		for oi, op := range mutate.Operators() {
			n := op.Sites(p)
			k := sitesPer(s)
			var sites []int
			if n <= k {
				for i := range n {
					sites = append(sites, i)
				}
			} else {
				off := mix(uint64(si), uint64(oi)) % uint64(n)
				for i := range k {
					sites = append(sites, int((off+uint64(i*n/k))%uint64(n)))
				}
				slices.Sort(sites)
				sites = slices.Compact(sites)
			}
			for _, site := range sites {
				mseed := 1 + mix(uint64(si), uint64(oi), uint64(site))%1000
				out = append(out, &cand{e: corpus.Entry{
					ID: corpus.EntryID(s.ID, op.Name, site, mseed), Seed: s.ID, Recipe: s.Recipe,
					Operator: op.Name, Site: site, MSeed: mseed,
				}})
			}
		}
	}
	return out, nil
}

func hasAnyPrefix(s string, ps []string) bool {
	for _, p := range ps {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func labelAll(cands []*cand) {
	var next, done atomic.Int64
	var wg sync.WaitGroup
	for range *jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(cands) {
					return
				}
				label(cands[i])
				if d := done.Add(1); d%500 == 0 {
					log.Printf("gen: %d/%d labelled", d, len(cands))
				}
			}
		}()
	}
	wg.Wait()
}

// label applies c's recipe and labels the mutant with the oracles.
func label(c *cand) {
	e := &c.e
	q, err := corpus.Mutant(e.Recipe, e.Operator, e.Site, e.MSeed)
	if errors.Is(err, corpus.ErrMalformed) {
		e.Verdict = corpus.VerdictMalformed
		return
	}
	if err != nil {
		c.skip = "apply: " + err.Error()
		return
	}
	if e.Hash, err = corpus.Hash(q); err != nil {
		c.skip = "marshal: " + err.Error()
		return
	}
	fams, oracle, why := oracles(q)
	if oracle == "" {
		c.skip = why
		return
	}
	e.Oracle, e.Families = oracle, fams
	e.Verdict = corpus.VerdictSafe
	if len(fams) > 0 {
		e.Verdict = corpus.VerdictUnsafe
	}
}

// oracles labels q: the explorer when it completes within its budget,
// else the definitional checker.
func oracles(q *schedule.Program) (fams []string, oracle, why string) {
	var reasons []string
	if len(q.Tasks) <= exploreTasks {
		ctx, cancel := context.WithTimeout(context.Background(), *timeout)
		r, err := explore.Run(ctx, q, explore.Config{MaxStates: *maxState})
		cancel()
		switch {
		case err != nil:
			reasons = append(reasons, "explore: "+err.Error())
		case !r.Complete:
			reasons = append(reasons, fmt.Sprintf("explore: incomplete after %d states", r.States))
		default:
			set := map[string]bool{}
			for _, f := range r.Findings {
				set[familyOf(f.Code)] = true
			}
			for k := range set {
				fams = append(fams, k)
			}
			sort.Strings(fams)
			return fams, corpus.OracleExplore, ""
		}
	} else {
		reasons = append(reasons, fmt.Sprintf("explore: %d tasks, beyond %d", len(q.Tasks), exploreTasks))
	}
	fams, err := defcheckWithTimeout(q)
	if err == nil {
		return fams, corpus.OracleDefcheck, ""
	}
	reasons = append(reasons, err.Error())
	return nil, "", strings.Join(reasons, "; ")
}

// defcheckWithTimeout runs defcheck in a child process (it takes no
// context, and some mutants take it minutes), killed after -defcheck-timeout.
func defcheckWithTimeout(q *schedule.Program) ([]string, error) {
	data, err := schedule.Marshal(q)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), *dctime)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-defcheck-child")
	cmd.Stdin = bytes.NewReader(data)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("defcheck: no answer within %v", *dctime)
		}
		return nil, fmt.Errorf("%s", strings.TrimSpace(stderr.String()))
	}
	line := strings.TrimSpace(stdout.String())
	if line == "" {
		return nil, nil
	}
	return strings.Split(line, ","), nil
}

// defcheckChild is the child side of defcheckWithTimeout.
func defcheckChild() {
	data, err := io.ReadAll(os.Stdin)
	if err != nil {
		log.Fatal(err)
	}
	p, err := schedule.Unmarshal(data)
	if err != nil {
		log.Fatal(err)
	}
	fams, err := defcheck.Families(p)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(strings.Join(fams, ","))
}

// familyOf is the part of a code before its first dot (what verify.Family
// computes; the generator must not import verify).
func familyOf(code string) string {
	f, _, _ := strings.Cut(code, ".")
	return f
}
