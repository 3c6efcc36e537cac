//go:build cgo

package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify"
)

// evidenceWatchdog is the watchdog of the unsafe programs' runs.
const evidenceWatchdog = 150 * time.Millisecond

// evidenceTwinRuns is the number of stressed runs of every twin.
const evidenceTwinRuns = 20

// runObserved is Device.Run that also returns the final counter values.
func runObserved(d *Device, p *schedule.Program, o Options) (*Outcome, []uint64, error) {
	if err := gate(context.Background(), p, o); err != nil {
		return nil, nil, err
	}
	e, err := encode(p, o.Body)
	if err != nil {
		return nil, nil, err
	}
	leave, err := d.enter()
	if err != nil {
		return nil, nil, err
	}
	defer leave()
	s, err := d.newSession(e)
	if err != nil {
		return nil, nil, err
	}
	defer s.mem.free()
	out, err := d.runSession(s, o)
	if out == nil {
		return nil, nil, err
	}
	ctr, _, _ := e.initialSync()
	if cerr := dtoh(ctr, s.ctr); cerr != nil {
		return nil, nil, cerr
	}
	return out, ctr[:len(p.Counters)], err
}

// unsafeTally counts what the runs of an unsafe program showed.
type unsafeTally struct {
	runs                        int
	watchdog, launch, refused   int   // stopped by the watchdog; cooperative launch refused; runner refused it
	wrong, poison, identical    int   // bytes: differ from the same-poison reference; equal it but show the poison; equal the poison-0 reference
	noReference                 int   // completed, but the CPU reference of one valid order is stuck
	readonlyChanged, overflowed int   // runs that changed an input/weight buffer; that left a counter beyond its width
	firstErr                    error // the first run's error
	firstDiff                   error // the first difference from a reference
	counterMax                  uint64
	kernels                     []time.Duration
}

func (u unsafeTally) String() string {
	var parts []string
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d/%d", what, n, u.runs))
		}
	}
	add(u.watchdog, "**watchdog**")
	add(u.launch, "**launch refused**")
	add(u.refused, "**runner refused**")
	add(u.wrong, "**wrong bytes**")
	add(u.poison, "**poison in output**")
	add(u.noReference, "completed, CPU reference stuck")
	add(u.identical, "identical")
	s := strings.Join(parts, ", ")
	var extra []string
	if u.readonlyChanged > 0 {
		extra = append(extra, fmt.Sprintf("**a read-only buffer changed** in %d/%d", u.readonlyChanged, u.runs))
	}
	if u.overflowed > 0 {
		extra = append(extra, fmt.Sprintf("the device counter ended at %d, beyond its width, in %d/%d", u.counterMax, u.overflowed, u.runs))
	}
	if u.identical == u.runs && len(extra) == 0 {
		return fmt.Sprintf("not observable in %d stressed runs (identical %d/%d)", u.runs, u.identical, u.runs)
	}
	if u.identical == u.runs {
		s = fmt.Sprintf("bytes not observable in %d stressed runs (identical %d/%d)", u.runs, u.identical, u.runs)
	}
	if len(extra) > 0 {
		s += "; " + strings.Join(extra, "; ")
	}
	return s
}

// runUnsafe runs an unsafe evidence program with AllowUnsafe and tallies
// what the device showed.
func runUnsafe(t *testing.T, d *Device, row evidenceRow, p *schedule.Program) unsafeTally {
	t.Helper()
	refs := map[byte]map[string][]byte{}
	for _, poison := range []byte{0, 0xA5} {
		if r, err := ReferencePoisoned(p, poison); err == nil {
			refs[poison] = r
		}
	}
	var image map[string][]byte // initial bytes, for the read-only buffers
	if e, err := Encode(p); err == nil {
		image = e.Buffers(e.Image(0))
	}
	u := unsafeTally{runs: row.runs}
	for i := 0; i < row.runs; i++ {
		o := stress(i)
		o.AllowUnsafe = true
		o.Timeout = evidenceWatchdog
		if row.indexOrder {
			o.Permute = false
		}
		out, ctr, err := runObserved(d, p, o)
		if err != nil && u.firstErr == nil {
			u.firstErr = err
		}
		switch {
		case errors.Is(err, ErrDeadlock):
			u.watchdog++
		case errors.Is(err, ErrOccupancy):
			u.launch++
		case err != nil && out == nil && row.code == verify.CodeOutOfBounds:
			u.refused++
		case err != nil:
			t.Errorf("%s run %d: unexpected error: %v", row.name, i, err)
			continue
		case refs[o.Poison] == nil:
			u.noReference++
		case Mismatch(refs[o.Poison], out.Buffers) != nil:
			u.wrong++
			if u.firstDiff == nil {
				u.firstDiff = fmt.Errorf("run %d (poison %#02x): %w", i, o.Poison, Mismatch(refs[o.Poison], out.Buffers))
			}
		case Mismatch(refs[0], out.Buffers) != nil:
			u.poison++
			if u.firstDiff == nil {
				u.firstDiff = fmt.Errorf("run %d (poison %#02x) against the poison-0 reference: %w", i, o.Poison, Mismatch(refs[0], out.Buffers))
			}
		default:
			u.identical++
		}
		if out != nil && err == nil {
			u.kernels = append(u.kernels, out.Kernel)
			for _, b := range p.Buffers {
				if (b.Kind == schedule.KindInput || b.Kind == schedule.KindWeight) && image != nil &&
					string(out.Buffers[b.Name]) != string(image[b.Name]) {
					u.readonlyChanged++
					break
				}
			}
			for ci, c := range p.Counters {
				if c.Width == 0 {
					c.Width = 32 // the default width
				}
				if ctr[ci] > c.Max() {
					u.overflowed++
					u.counterMax = max(u.counterMax, ctr[ci])
					break
				}
			}
		}
	}
	return u
}

// runTwin runs a safe twin in evidenceTwinRuns stressed runs through the
// runner's own gate (no AllowUnsafe) and requires every run bit-identical
// to the CPU reference of the same poison. It returns the identical runs.
func runTwin(t *testing.T, d *Device, row evidenceRow, q *schedule.Program) (int, []time.Duration) {
	t.Helper()
	refs := map[byte]map[string][]byte{}
	for _, poison := range []byte{0, 0xA5} {
		r, err := ReferencePoisoned(q, poison)
		if err != nil {
			t.Fatalf("%s: reference: %v", q.Name, err)
		}
		refs[poison] = r
	}
	ok := 0
	var ks []time.Duration
	for i := 0; i < evidenceTwinRuns; i++ {
		o := stress(i)
		if row.indexOrder {
			o.Permute = false
		}
		out, err := d.Run(context.Background(), q, o)
		if err != nil {
			t.Errorf("%s run %d (%+v): %v", q.Name, i, o, err)
			continue
		}
		if err := Mismatch(refs[o.Poison], out.Buffers); err != nil {
			t.Errorf("%s run %d (%+v): %v", q.Name, i, o, err)
			continue
		}
		ks = append(ks, out.Kernel)
		ok++
	}
	return ok, ks
}

// TestGPUEvidence runs every row of the hardware evidence table
// (evidenceRows): the unsafe program with AllowUnsafe, tallying watchdog
// catches, launch and runner refusals and wrong bytes, and each twin in 20
// stressed runs through the gate, which must all be bit-identical to the
// CPU reference. It prints the table of docs/GPU.md and writes it to
// $MEGAPROOF_OUT/evidence.md when that is set. Set MEGAPROOF_EVIDENCE=1 to
// run it.
func TestGPUEvidence(t *testing.T) {
	if os.Getenv("MEGAPROOF_EVIDENCE") == "" {
		t.Skip("set MEGAPROOF_EVIDENCE=1 to run the hardware evidence table")
	}
	d := device(t)
	info := d.Info()
	t0 := time.Now()
	var sb strings.Builder
	fmt.Fprintf(&sb, "Device: %s, %d SMs, %s, driver %d, NVRTC %s. Unsafe programs: AllowUnsafe, `stress(i)` runs with a %v watchdog; twins: %d `stress(i)` runs through the gate.\n\n",
		info.Name, info.SMs, info.Arch, info.Driver, info.NVRTC, evidenceWatchdog, evidenceTwinRuns)
	sb.WriteString("| code | what is wrong | program | verify | H200, unsafe program | twin (one edit) | verify | H200, twin |\n")
	sb.WriteString("|---|---|---|---|---|---|---|---|\n")
	var reports []string
	for _, row := range evidenceRows {
		summary, twinVerdicts := checkEvidenceVerdicts(t, row)
		p := loadEvidence(t, row.name)
		u := runUnsafe(t, d, row, p)
		obs := u.String()
		if u.firstErr != nil {
			reports = append(reports, fmt.Sprintf("%s: %v", row.name, u.firstErr))
		}
		if u.firstDiff != nil {
			reports = append(reports, fmt.Sprintf("%s: %v", row.name, u.firstDiff))
		}
		fmt.Printf("evidence %s (%s): verify %s; unsafe: %s; kernel median %v\n", row.name, row.code, summary, obs, median(u.kernels))
		var twins, tverd, truns []string
		for k, tw := range row.twins {
			q := loadEvidence(t, row.name+"."+tw.suffix)
			ok, ks := runTwin(t, d, row, q)
			fmt.Printf("  twin %s (%s): %d/%d bit-identical, kernel median %v\n", q.Name, tw.edit, ok, evidenceTwinRuns, median(ks))
			twins = append(twins, fmt.Sprintf("`%s`: %s", tw.suffix, tw.edit))
			tverd = append(tverd, twinVerdicts[k])
			truns = append(truns, fmt.Sprintf("%d/%d bit-identical", ok, evidenceTwinRuns))
		}
		fmt.Fprintf(&sb, "| `%s` | %s | `%s` | %s | %s | %s | %s | %s |\n", row.code, row.kind, row.name, summary, obs,
			strings.Join(twins, "; "), strings.Join(tverd, "; "), strings.Join(truns, "; "))
	}
	sb.WriteString("\nFirst watchdog report, refusal or byte difference of each unsafe program:\n\n```\n")
	for _, r := range reports {
		sb.WriteString(r + "\n")
	}
	sb.WriteString("```\n")
	fmt.Fprintf(&sb, "\nTest wall time %v.\n", time.Since(t0).Round(time.Millisecond))
	fmt.Print("\n" + sb.String())
	if dir := os.Getenv("MEGAPROOF_OUT"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "evidence.md"), []byte(sb.String()), 0o644); err != nil {
			t.Error(err)
		}
	}
	// The device is still usable after all that.
	out, err := d.Run(context.Background(), progHandoff(), Options{})
	if err != nil {
		t.Fatalf("device unusable after the evidence runs: %v", err)
	}
	ref, _ := Reference(progHandoff())
	if err := Mismatch(ref, out.Buffers); err != nil {
		t.Fatal(err)
	}
}
