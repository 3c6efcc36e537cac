//go:build cgo

package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// corpusTally is one family's row of the corpus falsification table.
type corpusTally struct {
	entries, runs                                 int
	dead, deadEntries                             int // watchdog catches (runs) and entries with at least one
	exact, match, gpuSub, witSub, mismatch, noWit int // stuck set vs witness, per caught run
	occ                                           int // cooperative launches refused
	wrong, wrongEntries                           int
	identical, completedNoRef, other              int
	kernel                                        []time.Duration
	firstOther                                    error
}

// TestGPUCorpusFalsify runs corpus mutants with Options.Body corpusBody ("mixat") and
// AllowUnsafe (set MEGAPROOF_CORPUS=1): corpusPerFamily entries of each
// unsafe family and as many safe controls, selected by selectCorpus.
// Deadlock and occupancy entries run twice with a 150 ms watchdog; race and
// uninitialized-read entries and safe controls ten stressed runs each.
// Bytes are compared with the CPU reference of the mutant itself (one
// valid order, the same Body). Safe controls must be bit-identical and never
// time out; unsafe entries are only tabulated.
func TestGPUCorpusFalsify(t *testing.T) {
	if os.Getenv("MEGAPROOF_CORPUS") == "" {
		t.Skip("set MEGAPROOF_CORPUS=1 to run corpus mutants on the GPU")
	}
	t0 := time.Now()
	cases, err := selectCorpus(corpusPerFamily, func(f string, a ...any) { fmt.Printf(f+"\n", a...) })
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("selection, rebuild, encode, reference and verify of %d entries: %v\n", len(cases), time.Since(t0).Round(time.Millisecond))
	d := device(t)
	budget := 300 * time.Second // stop starting entries after this much
	tally := map[string]*corpusTally{}
	for _, f := range corpusFamilies {
		tally[f] = &corpusTally{}
	}
	sample := ""
	stopped := 0
	for _, c := range cases {
		if time.Since(t0) > budget {
			stopped++
			continue
		}
		ty := tally[c.family]
		ty.entries++
		n, timeout := 10, 300*time.Millisecond
		switch c.family {
		case "deadlock", "occupancy":
			n, timeout = 2, 150*time.Millisecond
		case "safe":
			timeout = 2 * time.Second
		}
		refs := map[byte]map[string][]byte{corpusPoison: c.ref}
		var line []string
		dead, wrong := 0, 0
		for i := 0; i < n; i++ {
			o := stress(i)
			o.AllowUnsafe, o.Body, o.Timeout = true, corpusBody, timeout
			if c.family != "safe" {
				o.Poison = corpusPoison
				if i%2 == 0 {
					o.MaxDelay = 20 * time.Microsecond
				}
			}
			if c.family == "occupancy" {
				o.Permute = false // residency in index order, as the model has it
			}
			ref := refs[o.Poison]
			if ref == nil && c.refErr == nil {
				if ref, err = ReferenceWith(c.prog, o); err != nil {
					t.Fatalf("%s: reference: %v", c.entry.ID, err)
				}
				refs[o.Poison] = ref
			}
			out, err := d.Run(context.Background(), c.prog, o)
			ty.runs++
			var de *DeadlockError
			switch {
			case errors.As(err, &de):
				ty.dead++
				dead++
				if c.family == "safe" {
					t.Errorf("safe control %s run %d timed out: %v", c.entry.ID, i, err)
				}
				if c.family == "deadlock" || c.family == "occupancy" {
					if !c.witness {
						ty.noWit++
						line = append(line, "caught (no witness)")
						break
					}
					v, gpu, dyn := compareStuck(c, de)
					switch v {
					case "exact":
						ty.exact++
					case "match":
						ty.match++
					case "gpu⊂witness":
						ty.gpuSub++
					case "witness⊂gpu":
						ty.witSub++
					default:
						ty.mismatch++
					}
					line = append(line, fmt.Sprintf("caught %s gpu%v/dyn%d vs witness%v/dyn%d", v, gpu, dyn, c.stuckWorkers, c.dynStuck))
					if sample == "" && v != "exact" && len(de.Workers) <= 4 {
						sample = fmt.Sprintf("%s (%s, witness stuck workers %v at steps %v):\n%v", c.entry.ID, c.code, c.stuckWorkers, c.stuckPos, err)
					}
				} else {
					line = append(line, "watchdog")
				}
			case errors.Is(err, ErrOccupancy):
				ty.occ++
				line = append(line, "launch refused")
				if c.family == "safe" {
					t.Errorf("safe control %s run %d: %v", c.entry.ID, i, err)
				}
			case err != nil:
				ty.other++
				if ty.firstOther == nil {
					ty.firstOther = fmt.Errorf("%s: %w", c.entry.ID, err)
				}
				line = append(line, "error")
				t.Errorf("%s run %d: %v", c.entry.ID, i, err)
			case ref == nil:
				ty.completedNoRef++
				ty.kernel = append(ty.kernel, out.Kernel)
				line = append(line, "completed")
			default:
				ty.kernel = append(ty.kernel, out.Kernel)
				if merr := Mismatch(ref, out.Buffers); merr != nil {
					ty.wrong++
					wrong++
					line = append(line, "wrong")
					if c.family == "safe" {
						t.Errorf("safe control %s run %d (%+v): %v", c.entry.ID, i, o, merr)
					}
				} else {
					ty.identical++
					line = append(line, "ok")
				}
			}
			// A race entry that hangs twice is not run further.
			if c.family != "deadlock" && c.family != "occupancy" && i == 1 && dead == 2 {
				line = append(line, "(stopped after 2 watchdog catches)")
				break
			}
		}
		if dead > 0 {
			ty.deadEntries++
		}
		if wrong > 0 {
			ty.wrongEntries++
		}
		coop := "non-coop"
		if c.prog.Launch.Cooperative {
			coop = "coop"
		}
		fmt.Printf("%-18s %-48s %4d tasks %3d workers (cap %d, %s) %d overlapping-write tasks %s: %s\n", c.family, c.entry.ID, len(c.prog.Tasks), c.prog.Launch.Workers, c.prog.Launch.Capacity(), coop, c.selfOverlap, c.code, summarize(line))
	}
	if stopped > 0 {
		fmt.Printf("time budget reached: %d entries not run\n", stopped)
	}
	if sample != "" {
		fmt.Printf("sample watchdog report (stuck set not exact): %s\n", sample)
	}
	fmt.Printf("\n| family | entries | runs | deadlock caught (runs / entries) | stuck set vs witness (exact / same set / gpu⊂witness / witness⊂gpu / mismatch / no witness) | launch refused | wrong bytes (runs / entries) | identical | completed, no reference | other errors | kernel median |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, f := range corpusFamilies {
		ty := tally[f]
		fmt.Printf("| %s | %d | %d | %d / %d | %d / %d / %d / %d / %d / %d | %d | %d / %d | %d | %d | %d | %v |\n",
			f, ty.entries, ty.runs, ty.dead, ty.deadEntries, ty.exact, ty.match, ty.gpuSub, ty.witSub, ty.mismatch, ty.noWit, ty.occ, ty.wrong, ty.wrongEntries, ty.identical, ty.completedNoRef, ty.other, median(ty.kernel))
	}
	fmt.Printf("total wall time %v\n", time.Since(t0).Round(time.Millisecond))
	if s := tally["safe"]; s.entries < 20 || s.identical != s.runs {
		t.Errorf("safe controls: %d entries, %d of %d runs identical", s.entries, s.identical, s.runs)
	}
	// The device is still usable.
	out, err := d.Run(context.Background(), progHandoff(), Options{})
	if err != nil {
		t.Fatalf("device unusable after corpus mutants: %v", err)
	}
	ref, _ := Reference(progHandoff())
	if err := Mismatch(ref, out.Buffers); err != nil {
		t.Fatal(err)
	}
}

// summarize compresses a list of run outcomes: "ok×9, wrong×1".
func summarize(line []string) string {
	count := map[string]int{}
	var order []string
	for _, s := range line {
		if count[s] == 0 {
			order = append(order, s)
		}
		count[s]++
	}
	parts := make([]string, len(order))
	for i, s := range order {
		parts[i] = fmt.Sprintf("%s×%d", s, count[s])
	}
	return strings.Join(parts, ", ")
}
