//go:build cgo

package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify"
)

var (
	devOnce sync.Once
	dev     *Device
	devErr  error
)

// device opens the GPU once per test binary, or skips the test.
func device(t *testing.T) *Device {
	t.Helper()
	devOnce.Do(func() { dev, devErr = Open() })
	if devErr != nil && !errors.Is(devErr, ErrNoDevice) {
		t.Fatalf("Open: %v", devErr)
	}
	if devErr != nil {
		t.Skipf("no GPU: %v (GPU tests need libcuda.so.1 and NVRTC; see docs/GPU.md)", devErr)
	}
	return dev
}

// stress returns the options of stressed run i.
func stress(i int) Options {
	return Options{
		Timeout:  5 * time.Second,
		Seed:     uint64(i)*0x9E37 + 1,
		Permute:  i%2 == 1,
		MaxDelay: []time.Duration{0, 500 * time.Nanosecond, 2 * time.Microsecond, 10 * time.Microsecond}[i%4],
		Poison:   []byte{0, 0xA5}[i%2],
	}
}

func TestGPUInfo(t *testing.T) {
	d := device(t)
	i := d.Info()
	fmt.Printf("device: %s, %d SMs, %s, driver %d, NVRTC %s, cooperative %v, kernel compile %v (cached %v)\n",
		i.Name, i.SMs, i.Arch, i.Driver, i.NVRTC, i.Cooperative, i.Compile, i.CompileCached)
	if i.Fallback != "" {
		fmt.Printf("kernel compiled with a fallback; NVRTC refused the source as written: %s\n", i.Fallback)
	}
	// MEGAPROOF_CUBIN=path writes the compiled kernel image there (for
	// cuobjdump -sass).
	if path := os.Getenv("MEGAPROOF_CUBIN"); path != "" {
		cubinMu.Lock()
		for _, img := range cubins {
			if err := os.WriteFile(path, img, 0o644); err != nil {
				t.Error(err)
			}
		}
		cubinMu.Unlock()
	}
}

// TestGPUSafe runs every safe program in 20 stressed runs and requires
// bytes identical to the CPU reference every time.
func TestGPUSafe(t *testing.T) {
	d := device(t)
	runs := 20
	if testing.Short() {
		runs = 4
	}
	total, tasks := 0, 0
	t0 := time.Now()
	for _, p := range safePrograms(false) {
		refs := map[byte]map[string][]byte{}
		for _, poison := range []byte{0, 0xA5} {
			r, err := ReferencePoisoned(p, poison)
			if err != nil {
				t.Fatalf("%s: reference: %v", p.Name, err)
			}
			refs[poison] = r
		}
		var kernels []time.Duration
		for i := 0; i < runs; i++ {
			o := stress(i)
			out, err := d.Run(context.Background(), p, o)
			if err != nil {
				t.Errorf("%s run %d (%+v): %v", p.Name, i, o, err)
				continue
			}
			if err := Mismatch(refs[o.Poison], out.Buffers); err != nil {
				t.Errorf("%s run %d (%+v): %v", p.Name, i, o, err)
			}
			kernels = append(kernels, out.Kernel)
			total++
		}
		tasks = max(tasks, len(p.Tasks))
		if len(p.Tasks) >= 10000 {
			fmt.Printf("safe %s: %d tasks, %d workers, kernel median %v\n", p.Name, len(p.Tasks), p.Launch.Workers, median(kernels))
		}
	}
	fmt.Printf("safe: %d programs × %d stressed runs = %d runs bit-identical to the reference (largest %d tasks) in %v\n",
		len(safePrograms(false)), runs, total, tasks, time.Since(t0).Round(time.Millisecond))
}

// TestGPUUnverifiedRefused checks the gate.
func TestGPUUnverifiedRefused(t *testing.T) {
	d := device(t)
	m := mutHandoff("dropped-wait", func(tb *schedule.Task) { tb.Before = nil })
	if _, err := d.Run(context.Background(), m, Options{}); !errors.Is(err, ErrUnverified) {
		t.Fatalf("unsafe program without AllowUnsafe: err = %v, want ErrUnverified", err)
	}
}

// mutHandoff returns the handoff program with its consumer edited.
func mutHandoff(name string, edit func(*schedule.Task)) *schedule.Program {
	p := progHandoff()
	p.Name = name
	edit(&p.Tasks[1])
	return p
}

type mutant struct {
	family, name string
	orig, prog   *schedule.Program
	want         string // "deadlock", "occupancy", "bytes"
}

func mutants() []mutant {
	var ms []mutant
	h := progHandoff()
	add := func(family, name, want string, orig, p *schedule.Program) {
		p.Name = name
		ms = append(ms, mutant{family, name, orig, p, want})
	}
	// Deadlocks.
	add("deadlock", "threshold-past-reachable", "deadlock", h, mutHandoff("", func(t *schedule.Task) { t.Before[0].Value = 2 }))
	{
		b := schedule.NewBuilder("", schedule.Launch{SMs: 132, PerSM: 1, Workers: 2, Cooperative: true})
		a, c := b.Counter("a"), b.Counter("b")
		b.Task("x").On(0).Wait(c, 1).Signal(a, 1)
		b.Task("y").On(1).Wait(a, 1).Signal(c, 1)
		add("deadlock", "wait-cycle", "deadlock", nil, must(b.Build()))
	}
	{
		c := layered{workers: 16, layers: 3, width: 8, tile: 16, sync: "barrier", seed: 3, coop: true, maxReads: 2}
		p := c.build()
		p.Barriers[0].Parties++
		add("deadlock", "barrier-parties+1", "deadlock", nil, p)
	}
	{
		p := progChain(64, 8)
		p.Tasks[10].Before[0].Value = 65
		add("deadlock", "chain-threshold-past-reachable", "deadlock", nil, p)
	}
	{
		b := schedule.NewBuilder("", schedule.Launch{SMs: 132, PerSM: 1, Workers: 2, Cooperative: true})
		s := b.Semaphore("s", 1)
		b.Task("x").On(0).Acquire(s, 1)
		b.Task("y").On(1).Acquire(s, 1)
		add("deadlock", "semaphore-leak", "deadlock", nil, must(b.Build()))
	}
	// Races: compared with the reference of the original program.
	add("race", "dropped-wait", "bytes", h, mutHandoff("", func(t *schedule.Task) { t.Before = nil }))
	add("race", "relaxed-signal", "bytes", h, func() *schedule.Program {
		p := progHandoff()
		p.Tasks[0].After[0].Relaxed = true
		return p
	}())
	add("race", "relaxed-wait", "bytes", h, mutHandoff("", func(t *schedule.Task) { t.Before[0].Relaxed = true }))
	add("race", "cta-scope-wait", "bytes", h, mutHandoff("", func(t *schedule.Task) { t.Before[0].Scope = schedule.ScopeCTA }))
	{
		c := layered{workers: 16, layers: 4, width: 16, tile: 64, sync: "join", seed: 5, coop: true, maxReads: 3}
		orig, p := c.build(), c.build()
		for i := range p.Tasks {
			for j := range p.Tasks[i].Before {
				p.Tasks[i].Before[j].Value--
			}
		}
		add("race", "lowered-threshold(all joins -1)", "bytes", orig, p)
	}
	{
		orig, p := progChain(64, 8), progChain(64, 8)
		for i := 1; i < len(p.Tasks); i += 2 {
			p.Tasks[i].Before = nil
		}
		add("race", "chain-dropped-waits", "bytes", orig, p)
	}
	{
		c := layered{workers: 12, layers: 4, width: 12, tile: 64, sync: "deps", seed: 9, coop: true, maxReads: 3, dynamic: 1}
		orig, p := c.build(), c.build()
		for i := range p.Tasks {
			for j := range p.Tasks[i].Before {
				p.Tasks[i].Before[j].Relaxed = true
			}
			for j := range p.Tasks[i].After {
				p.Tasks[i].After[j].Relaxed = true
			}
		}
		add("race", "dynamic-all-relaxed", "bytes", orig, p)
	}
	// Occupancy: one worker beyond 132 SMs × 1.
	for _, coop := range []bool{true, false} {
		b := schedule.NewBuilder("", schedule.Launch{SMs: 132, PerSM: 1, Workers: 133, Cooperative: coop})
		c := b.Counter("go")
		for w := 0; w < 132; w++ {
			b.Task(fmt.Sprintf("wait%d", w)).On(w).Wait(c, 1)
		}
		b.Task("last").On(132).Signal(c, 1)
		name := "extra-worker-noncooperative"
		want := "deadlock"
		if coop {
			name, want = "extra-worker-cooperative", "occupancy"
		}
		add("occupancy", name, want, nil, must(b.Build()))
	}
	// Uninitialized reads (poisoned scratch).
	add("uninitialized-read", "dropped-wait-poisoned", "bytes", h, mutHandoff("", func(t *schedule.Task) { t.Before = nil }))
	{
		b := schedule.NewBuilder("", schedule.Launch{SMs: 132, PerSM: 1, Workers: 1, Cooperative: true})
		x := b.Buffer("x", schedule.KindScratch, 128)
		y := b.Buffer("y", schedule.KindOutput, 128)
		b.Task("w").On(0).Op("fill").Write(x, 0, 128)
		b.Task("r").On(0).Op("mix").Read(x, 0, 128).Write(y, 0, 128)
		orig := must(b.Build())
		p := *orig
		p.Tasks = []schedule.Task{orig.Tasks[1], orig.Tasks[0]}
		add("uninitialized-read", "reader-before-writer", "bytes", orig, &p)
	}
	return ms
}

// TestGPUFalsify runs unsafe mutants with AllowUnsafe and tabulates what
// the watchdog caught and which races produced wrong bytes.
func TestGPUFalsify(t *testing.T) {
	d := device(t)
	runs := 20
	fmt.Printf("\n%-20s %-34s %-22s %-6s %s\n", "family", "mutant", "verify", "runs", "observed")
	for _, m := range mutants() {
		v := "?"
		if r, err := verify.Run(context.Background(), m.prog, verify.Config{}); err == nil {
			v = r.Verdict.String()
			if len(r.Findings) > 0 {
				v += " " + r.Findings[0].Code
			}
		}
		n := runs
		if m.want != "bytes" {
			n = 3
		}
		var ref map[string][]byte
		if m.orig != nil {
			var err error
			if ref, err = ReferencePoisoned(m.orig, 0xA5); err != nil {
				t.Fatalf("%s: %v", m.name, err)
			}
		}
		dead, occ, wrong, other, ok := 0, 0, 0, 0, 0
		var first error
		for i := 0; i < n; i++ {
			o := stress(i)
			o.AllowUnsafe = true
			o.Poison = 0xA5
			o.Timeout = 200 * time.Millisecond
			if m.family == "occupancy" {
				// Residency in index order is what the mutant relies on.
				o.Permute = false
			}
			if i%2 == 0 && m.want == "bytes" {
				o.MaxDelay = 20 * time.Microsecond
			}
			out, err := d.Run(context.Background(), m.prog, o)
			switch {
			case errors.Is(err, ErrDeadlock):
				dead++
			case errors.Is(err, ErrOccupancy):
				occ++
			case err != nil:
				other++
			case ref != nil && Mismatch(ref, out.Buffers) != nil:
				wrong++
			default:
				ok++
			}
			if err != nil && first == nil {
				first = err
			}
		}
		obs := fmt.Sprintf("deadlock caught %d, occupancy refused %d, wrong bytes %d, identical %d, other errors %d", dead, occ, wrong, ok, other)
		fmt.Printf("%-20s %-34s %-22s %-6d %s\n", m.family, m.name, v, n, obs)
		if first != nil && m.want == "deadlock" && m.name == "threshold-past-reachable" {
			fmt.Printf("  sample report: %v\n", first)
		}
		if other > 0 {
			t.Errorf("%s: unexpected error: %v", m.name, first)
		}
		if m.want == "deadlock" && dead != n {
			t.Errorf("%s: watchdog caught %d of %d runs", m.name, dead, n)
		}
		if m.want == "occupancy" && occ != n {
			t.Errorf("%s: occupancy refused %d of %d runs", m.name, occ, n)
		}
	}
	// The device is still usable after all that.
	out, err := d.Run(context.Background(), progHandoff(), Options{})
	if err != nil {
		t.Fatalf("device unusable after mutants: %v", err)
	}
	ref, _ := Reference(progHandoff())
	if err := Mismatch(ref, out.Buffers); err != nil {
		t.Fatal(err)
	}
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func spread(ds []time.Duration) string {
	s := slices.Clone(ds)
	slices.Sort(s)
	return fmt.Sprintf("median %v [min %v, max %v, n=%d]", s[len(s)/2], s[0], s[len(s)-1], len(s))
}

func perUnit(ds []time.Duration, n int) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d / time.Duration(n)
	}
	return out
}

// kernels runs p reps times (after one warm-up) and returns the kernel times.
func kernels(t *testing.T, d *Device, p *schedule.Program, reps int) []time.Duration {
	t.Helper()
	ref, err := Reference(p)
	if err != nil {
		t.Fatal(err)
	}
	var ks []time.Duration
	for i := -1; i < reps; i++ {
		out, err := d.Run(context.Background(), p, Options{AllowUnsafe: true, Timeout: 5 * time.Second})
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		if err := Mismatch(ref, out.Buffers); err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		if i >= 0 {
			ks = append(ks, out.Kernel)
		}
	}
	return ks
}

func pingPongProg(rounds int) *schedule.Program {
	b := schedule.NewBuilder("pingpong", schedule.Launch{SMs: 132, PerSM: 1, Workers: 2, Cooperative: true})
	a, c := b.Counter("a"), b.Counter("b")
	for i := 1; i <= rounds; i++ {
		ping := b.Task(fmt.Sprintf("ping%d", i)).On(0)
		if i > 1 {
			ping.Wait(c, uint64(i-1))
		}
		ping.Signal(a, 1)
		b.Task(fmt.Sprintf("pong%d", i)).On(1).Wait(a, uint64(i)).Signal(c, 1)
	}
	return must(b.Build())
}

func barrierProg(workers, gens int) *schedule.Program {
	b := schedule.NewBuilder("barrier", schedule.Launch{SMs: 132, PerSM: (workers + 131) / 132, Workers: workers, Cooperative: true})
	br := b.Barrier("bar", workers)
	for w := 0; w < workers; w++ {
		for g := 0; g < gens; g++ {
			b.Task(fmt.Sprintf("w%d_%d", w, g)).On(w).Sync(br)
		}
	}
	return must(b.Build())
}

func nopProg(workers, n int) *schedule.Program {
	b := schedule.NewBuilder("nop", schedule.Launch{SMs: 132, PerSM: 1, Workers: workers, Cooperative: true})
	for i := 0; i < n; i++ {
		b.Task(fmt.Sprintf("t%d", i)).On(i % workers)
	}
	return must(b.Build())
}

// TestGPUBench measures sync latency, interpreter overhead, and a chain and
// a fan-out of tiny tasks as one megakernel vs stream launches vs a CUDA
// graph. Set MEGAPROOF_BENCH=1 to run it.
func TestGPUBench(t *testing.T) {
	if os.Getenv("MEGAPROOF_BENCH") == "" {
		t.Skip("set MEGAPROOF_BENCH=1 to run the GPU benchmarks")
	}
	d := device(t)
	const reps = 15
	var empties []time.Duration
	for i := 0; i < reps; i++ {
		e, err := d.timeEmpty(200)
		if err != nil {
			t.Fatal(err)
		}
		empties = append(empties, e)
	}
	fmt.Printf("empty launch, back to back (mean of 200): %s\n", spread(empties))

	const rounds = 2000
	pp := kernels(t, d, pingPongProg(rounds), reps)
	h := perUnit(pp, 2*rounds)
	fmt.Printf("handoff (ping-pong, %d handoffs per kernel): %s; floor 0.53µs → ratio %.2f\n", 2*rounds, spread(h), float64(median(h))/530)

	for _, w := range []int{132, 264} {
		const gens = 1000
		bk := perUnit(kernels(t, d, barrierProg(w, gens), reps), gens)
		floor := 780.0
		if w == 264 {
			floor = 1050
		}
		fmt.Printf("barrier, %d workers (%d generations per kernel): %s; floor %.2fµs → ratio %.2f\n", w, gens, spread(bk), floor/1000, float64(median(bk))/floor)
	}

	const ntasks = 20000
	one := perUnit(kernels(t, d, nopProg(1, ntasks), reps), ntasks)
	fmt.Printf("per-task interpreter overhead, 1 worker, %d empty tasks: %s\n", ntasks, spread(one))
	many := perUnit(kernels(t, d, nopProg(132, 132*200), reps), 200)
	fmt.Printf("per-task interpreter overhead, 132 workers × 200 empty tasks (per task per worker): %s\n", spread(many))

	for _, n := range []int{100, 1000, 10000} {
		for _, p := range []*schedule.Program{progChain(n, 132), progFan(n, 132)} {
			ref, err := Reference(p)
			if err != nil {
				t.Fatal(err)
			}
			mk := kernels(t, d, p, reps)
			st, gr, sb, gb, err := d.baseline(p, reps)
			if err != nil {
				t.Fatalf("%s baseline: %v", p.Name, err)
			}
			if err := Mismatch(ref, sb); err != nil {
				t.Fatalf("%s stream launches: %v", p.Name, err)
			}
			if err := Mismatch(ref, gb); err != nil {
				t.Fatalf("%s graph: %v", p.Name, err)
			}
			fmt.Printf("%s (64-byte mix tasks, 132 workers):\n  megakernel %s\n  %d stream launches %s\n  CUDA graph %s\n  ratios: stream/megakernel %.2f, graph/megakernel %.2f\n",
				p.Name, spread(mk), n, spread(st), spread(gr), float64(median(st))/float64(median(mk)), float64(median(gr))/float64(median(mk)))
		}
	}
	// Cold vs warm: a fresh run of the big program, session setup included.
	p := safePrograms(false)[len(safePrograms(false))-1]
	var tot []time.Duration
	for i := 0; i < 5; i++ {
		out, err := d.Run(context.Background(), p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		tot = append(tot, out.Total)
	}
	fmt.Printf("big program (%d tasks) end-to-end Run incl. verify, encode, upload, download: first %v, then %s\n", len(p.Tasks), tot[0], spread(tot[1:]))
}

// TestGPUProfileNop runs one interpreter kernel of empty tasks, for a
// profiler (set MEGAPROOF_PROFILE=1).
func TestGPUProfileNop(t *testing.T) {
	if os.Getenv("MEGAPROOF_PROFILE") == "" {
		t.Skip("set MEGAPROOF_PROFILE=1 to run")
	}
	d := device(t)
	for _, p := range []*schedule.Program{nopProg(1, 20000), pingPongProg(2000)} {
		if _, err := d.Run(context.Background(), p, Options{AllowUnsafe: true}); err != nil {
			t.Fatal(err)
		}
	}
}
