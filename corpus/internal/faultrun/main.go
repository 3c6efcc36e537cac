// Command faultrun runs the corpus under the deliberately wrong verifiers
// of internal/faults and reports which entries catch each one. It only
// works when built with the megaproof_faults tag:
//
//	go run -tags megaproof_faults ./corpus/internal/faultrun [flags]
//
// By default it stops as soon as every variant is caught: for each entry
// (those named by -hints first, then the corpus in order) it checks the
// entry with the correct verifier, then under every variant not caught
// yet, and drops a variant at the first entry whose outcome is not ok (a
// false accept, a false reject, another finding family or code, a witness
// that does not replay, an error or a panic). It prints one line per
// variant and exits 1 if some variant is caught by no entry.
//
// With -all it measures instead: every entry under every variant selected
// by -variant, printing per variant how many entries flip and how (-j
// entries at a time; a variant is global, so variants run one after the
// other). -seeds keeps only the entries of the seeds it names (to measure
// the entries a regeneration added). -write-hints writes, per variant, the entries that caught it
// (with -all, the first three), for -hints.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/megaproof/megaproof/corpus"
	"github.com/megaproof/megaproof/internal/faults"
	"github.com/megaproof/megaproof/verify"
)

func main() {
	all := flag.Bool("all", false, "measure: check every entry under every selected variant and print the flips per variant")
	only := flag.String("variant", "", "comma-separated variant names (default: every variant)")
	hints := flag.String("hints", "", "file of `variant<TAB>entry id` lines: entries to try first")
	writeHints := flag.String("write-hints", "", "write the catching entries per variant (with -all, up to 3) to this file, for -hints")
	jobs := flag.Int("j", runtime.GOMAXPROCS(0), "with -all, entries checked at a time")
	timeout := flag.Duration("timeout", time.Minute, "limit of one verify run (a run past it is an error outcome)")
	seedList := flag.String("seeds", "", "comma-separated seed ids: check only their entries (default: every entry)")
	flag.Parse()
	if !faults.Enabled {
		fmt.Fprintln(os.Stderr, "faultrun: build with -tags megaproof_faults")
		os.Exit(2)
	}
	variants, err := selectVariants(*only)
	if err != nil {
		fmt.Fprintln(os.Stderr, "faultrun:", err)
		os.Exit(2)
	}
	entries, err := corpus.Entries()
	if err != nil {
		fmt.Fprintln(os.Stderr, "faultrun:", err)
		os.Exit(2)
	}
	var seedIDs []string
	if *seedList != "" {
		seedIDs = strings.Split(*seedList, ",")
	}
	kept := entries[:0]
	for _, e := range entries {
		if e.Verdict != corpus.VerdictMalformed && (seedIDs == nil || slices.Contains(seedIDs, e.Seed)) {
			kept = append(kept, e)
		}
	}
	if len(kept) == 0 {
		fmt.Fprintln(os.Stderr, "faultrun: no entry selected")
		os.Exit(2)
	}
	entries = kept
	r := &runner{timeout: *timeout}
	if *all {
		os.Exit(r.measure(entries, variants, *jobs, *writeHints))
	}
	if *hints != "" {
		entries, err = hinted(entries, *hints)
		if err != nil {
			fmt.Fprintln(os.Stderr, "faultrun:", err)
			os.Exit(2)
		}
	}
	os.Exit(r.earlyExit(entries, variants, *writeHints))
}

func selectVariants(list string) ([]faults.Info, error) {
	vs := faults.Variants()
	if list == "" {
		return vs, nil
	}
	var out []faults.Info
	for _, name := range strings.Split(list, ",") {
		v, ok := faults.Lookup(strings.TrimSpace(name))
		if !ok || v == faults.None {
			return nil, fmt.Errorf("no variant %q", name)
		}
		out = append(out, vs[v-1])
	}
	return out, nil
}

// hinted puts the entries the hints file names first, in its order.
func hinted(entries []corpus.Entry, file string) ([]corpus.Entry, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	at := make(map[string]int, len(entries))
	for i, e := range entries {
		at[e.ID] = i
	}
	var first []corpus.Entry
	taken := make([]bool, len(entries))
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		_, id, ok := strings.Cut(line, "\t")
		if !ok {
			return nil, fmt.Errorf("%s: malformed line %q", file, line)
		}
		if i, ok := at[id]; ok && !taken[i] {
			taken[i] = true
			first = append(first, entries[i])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for i, e := range entries {
		if !taken[i] {
			first = append(first, e)
		}
	}
	return first, nil
}

type runner struct{ timeout time.Duration }

// check checks e under variant v; a panic is an error outcome.
func (r *runner) check(e corpus.Entry, v faults.Variant) (o corpus.Outcome) {
	if err := faults.Set(v); err != nil {
		return corpus.Outcome{Entry: e, Kind: corpus.OutcomeError, Detail: err.Error()}
	}
	defer func() {
		if p := recover(); p != nil {
			o = corpus.Outcome{Entry: e, Kind: "panic", Detail: fmt.Sprint(p)}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	return corpus.CheckConfig(ctx, e, verify.Config{Sanity: true})
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// earlyExit checks entries in order until every variant is caught.
func (r *runner) earlyExit(entries []corpus.Entry, variants []faults.Info, hintsFile string) int {
	left := append([]faults.Info(nil), variants...)
	var hints []string
	start := time.Now()
	checked, skipped := 0, 0
	for _, e := range entries {
		if len(left) == 0 {
			break
		}
		checked++
		if o := r.check(e, faults.None); o.Kind != corpus.OutcomeOK {
			skipped++ // the corpus test reports it; it proves nothing here
			continue
		}
		keep := left[:0]
		for _, in := range left {
			o := r.check(e, in.Variant)
			if o.Kind == corpus.OutcomeOK {
				keep = append(keep, in)
				continue
			}
			fmt.Printf("caught\t%s\t%s\t%s\t%s\n", in.Name, e.ID, o.Kind, oneLine(o.Detail))
			hints = append(hints, in.Name+"\t"+e.ID)
		}
		left = keep
	}
	for _, in := range left {
		fmt.Printf("uncaught\t%s\t%s\n", in.Name, in.Doc)
	}
	fmt.Printf("summary\t%d variants\t%d caught\t%d entries checked\t%d skipped (not ok under the correct verifier)\t%.1fs\n",
		len(variants), len(variants)-len(left), checked, skipped, time.Since(start).Seconds())
	if hintsFile != "" {
		if err := writeHintsFile(hintsFile, hints); err != nil {
			fmt.Fprintln(os.Stderr, "faultrun:", err)
			return 2
		}
	}
	if len(left) > 0 {
		return 1
	}
	return 0
}

func writeHintsFile(name string, hints []string) error {
	text := "# variant<TAB>entry: corpus entries that catch each variant, tried first by the fault-variant test.\n" +
		"# Written by `go run -tags megaproof_faults ./corpus/internal/faultrun -write-hints corpus/testdata/faults.tsv` (add -all to measure).\n" +
		strings.Join(hints, "\n") + "\n"
	return os.WriteFile(name, []byte(text), 0o644)
}

// measure checks every entry under every variant and prints the flips.
func (r *runner) measure(entries []corpus.Entry, variants []faults.Info, jobs int, hintsFile string) int {
	start := time.Now()
	base := r.runAll(entries, faults.None, jobs)
	ok := make([]bool, len(entries))
	nok := 0
	for i, o := range base {
		if ok[i] = o.Kind == corpus.OutcomeOK; ok[i] {
			nok++
		}
	}
	fmt.Printf("# %d entries (malformed left out), %d ok under the correct verifier, %d cores, -j %d\n", len(entries), nok, runtime.NumCPU(), jobs)
	fmt.Printf("variant\tflips\tby outcome\tfirst entry\n")
	var hints []string
	uncaught := 0
	for _, in := range variants {
		t0 := time.Now()
		outs := r.runAll(entries, in.Variant, jobs)
		kinds := map[string]int{}
		flips := 0
		var first []string
		for i, o := range outs {
			if !ok[i] || o.Kind == corpus.OutcomeOK {
				continue
			}
			flips++
			kinds[o.Kind]++
			if len(first) < 3 {
				first = append(first, entries[i].ID)
			}
		}
		if flips == 0 {
			uncaught++
		}
		for _, id := range first {
			hints = append(hints, in.Name+"\t"+id)
		}
		firstID := "-"
		if len(first) > 0 {
			firstID = first[0]
		}
		var by []string
		for k, n := range kinds {
			by = append(by, fmt.Sprintf("%s %d", k, n))
		}
		slices.Sort(by)
		fmt.Printf("%s\t%d\t%s\t%s\t# %.0fs\n", in.Name, flips, strings.Join(by, ", "), firstID, time.Since(t0).Seconds())
	}
	fmt.Printf("# %d of %d variants caught; %.0fs\n", len(variants)-uncaught, len(variants), time.Since(start).Seconds())
	if hintsFile != "" {
		if err := writeHintsFile(hintsFile, hints); err != nil {
			fmt.Fprintln(os.Stderr, "faultrun:", err)
			return 2
		}
	}
	if uncaught > 0 {
		return 1
	}
	return 0
}

// runAll checks every entry under v, jobs at a time.
func (r *runner) runAll(entries []corpus.Entry, v faults.Variant, jobs int) []corpus.Outcome {
	out := make([]corpus.Outcome, len(entries))
	if err := faults.Set(v); err != nil {
		for i := range out {
			out[i] = corpus.Outcome{Entry: entries[i], Kind: corpus.OutcomeError, Detail: err.Error()}
		}
		return out
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, jobs) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(entries) {
					return
				}
				out[i] = r.checkSet(entries[i])
			}
		})
	}
	wg.Wait()
	return out
}

// checkSet checks e under the variant already set; a panic is an error
// outcome.
func (r *runner) checkSet(e corpus.Entry) (o corpus.Outcome) {
	defer func() {
		if p := recover(); p != nil {
			o = corpus.Outcome{Entry: e, Kind: "panic", Detail: fmt.Sprint(p)}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	return corpus.CheckConfig(ctx, e, verify.Config{Sanity: true})
}
