package explore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/internal/progen"
	"github.com/megaproof/megaproof/schedule"
)

var coop2 = schedule.Launch{Target: "test", SMs: 4, PerSM: 1, Workers: 2, Cooperative: true}

func launch(workers int) schedule.Launch {
	return schedule.Launch{Target: "test", SMs: 8, PerSM: 1, Workers: workers, Cooperative: true}
}

func build(t testing.TB, b *schedule.Builder) *schedule.Program {
	t.Helper()
	p, err := b.Build()
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	return p
}

// explore runs the explorer, requires a complete result and confirms every
// witness through schedule.CheckWitness.
func explore(t testing.TB, p *schedule.Program) *Result {
	t.Helper()
	r, err := Run(context.Background(), p, Config{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !r.Complete {
		t.Fatalf("Run: incomplete after %d states", r.States)
	}
	checkWitnesses(t, p, r)
	return r
}

func checkWitnesses(t testing.TB, p *schedule.Program, r *Result) {
	t.Helper()
	for _, f := range r.Findings {
		if err := witness(p, f); err != nil {
			t.Errorf("witness of %s %v rejected: %v\ntrace %v", f.Code, f.Tasks, err, f.Trace)
		}
	}
}

// witness confirms a finding through schedule.CheckWitness.
func witness(p *schedule.Program, f Finding) error {
	return schedule.CheckWitness(p, f.Code, f.Tasks, f.Trace)
}

func codes(r *Result) []string {
	var cs []string
	for _, f := range r.Findings {
		cs = append(cs, fmt.Sprintf("%s%v", f.Code, f.Tasks))
	}
	return cs
}

// Two workers take two semaphores in opposite orders.
func TestSemaphoreOppositeOrder(t *testing.T) {
	for _, same := range []bool{false, true} {
		b := schedule.NewBuilder("locks", coop2)
		s1 := b.Semaphore("s1", 1)
		s2 := b.Semaphore("s2", 1)
		x := b.Buffer("x", schedule.KindState, 8)
		b.Task("a").On(0).Acquire(s1, 1).Acquire(s2, 1).Write(x, 0, 8).Release(s2, 1).Release(s1, 1)
		if same {
			b.Task("b").On(1).Acquire(s1, 1).Acquire(s2, 1).Write(x, 0, 8).Release(s2, 1).Release(s1, 1)
		} else {
			b.Task("b").On(1).Acquire(s2, 1).Acquire(s1, 1).Write(x, 0, 8).Release(s1, 1).Release(s2, 1)
		}
		r := explore(t, build(t, b))
		got := codes(r)
		want := []string{"deadlock.semaphore[0 1]"}
		if same {
			want = nil
		}
		if !slices.Equal(got, want) {
			t.Errorf("same order %v: findings %v, want %v", same, got, want)
		}
	}
}

// slotReuse: a producer fills a page, two readers read it, and the producer
// reuses the page (through an aliasing buffer) once a "free" token comes
// back. With fixed=false only the first reader returns the token, so the
// reuse races with the second reader.
func slotReuse(fixed bool) *schedule.Builder {
	b := schedule.NewBuilder("slot-reuse", launch(3))
	page := b.Arena("page", 64)
	a := b.BufferIn("a", schedule.KindScratch, 64, page, 0)
	bb := b.BufferIn("b", schedule.KindScratch, 64, page, 0)
	out := b.Buffer("out", schedule.KindOutput, 16)
	free := b.Semaphore("free", 1)
	full := b.Semaphore("full", 0)
	need := uint64(1)
	if fixed {
		need = 2
	}
	b.Task("fill").On(0).Acquire(free, 1).Write(a, 0, 64).Release(full, 2)
	b.Task("read1").On(1).Acquire(full, 1).Read(a, 0, 64).Write(out, 0, 8).Release(free, 1)
	r2 := b.Task("read2").On(2).Acquire(full, 1).Read(a, 0, 64).Write(out, 8, 8)
	if fixed {
		r2.Release(free, 1)
	}
	b.Task("reuse").On(0).Acquire(free, need).Write(bb, 0, 64)
	return b
}

func TestSemaphoreSlotReuseRace(t *testing.T) {
	r := explore(t, build(t, slotReuse(false)))
	if got, want := codes(r), []string{"race.war[2 3]"}; !slices.Equal(got, want) {
		t.Errorf("findings %v, want %v", got, want)
	}
	r = explore(t, build(t, slotReuse(true)))
	if got := codes(r); len(got) != 0 {
		t.Errorf("fixed slot reuse: findings %v, want none", got)
	}
}

// ring is a bounded ring buffer: a producer and a consumer hand over items
// through slots guarded by free/full semaphores.
func ring(slots, items int, freeTokens uint64) *schedule.Builder {
	b := schedule.NewBuilder("ring", launch(2))
	buf := b.Buffer("ring", schedule.KindScratch, uint64(16*slots))
	out := b.Buffer("out", schedule.KindOutput, uint64(8*items))
	free := b.Semaphore("free", freeTokens)
	full := b.Semaphore("full", 0)
	for i := 0; i < items; i++ {
		slot := uint64(16 * (i % slots))
		b.Task(fmt.Sprintf("put%d", i)).On(0).Acquire(free, 1).Write(buf, slot, 16).Release(full, 1)
	}
	for i := 0; i < items; i++ {
		slot := uint64(16 * (i % slots))
		b.Task(fmt.Sprintf("get%d", i)).On(1).Acquire(full, 1).Read(buf, slot, 16).Write(out, uint64(8*i), 8).Release(free, 1)
	}
	return b
}

func TestSemaphoreRingBuffer(t *testing.T) {
	for _, slots := range []int{2, 3} {
		r := explore(t, build(t, ring(slots, 5, uint64(slots))))
		if len(r.Findings) != 0 {
			t.Errorf("%d-slot ring: findings %v, want none", slots, codes(r))
		}
		// One token too many lets the producer overwrite a slot still being read.
		r = explore(t, build(t, ring(slots, 5, uint64(slots+1))))
		if !slices.ContainsFunc(r.Findings, func(f Finding) bool { return strings.HasPrefix(f.Code, "race.") }) {
			t.Errorf("%d-slot ring with %d tokens: findings %v, want a race", slots, slots+1, codes(r))
		}
	}
}

// twin is a minimal unsafe program and its one-edit safe twin.
type twin struct {
	name   string
	want   []string // findings of the unsafe program
	reason string
	prog   func(unsafe bool) *schedule.Builder
}

var twins = []twin{
	{"cycle", []string{"deadlock.cycle[0 1]"}, "each worker waits for the other's signal; init 1 breaks it",
		func(u bool) *schedule.Builder {
			b := schedule.NewBuilder("cycle", coop2)
			init := uint64(1)
			if u {
				init = 0
			}
			a := b.CounterInit("a", init, 32)
			c := b.Counter("c")
			b.Task("x").On(0).Wait(a, 1).Signal(c, 1)
			b.Task("y").On(1).Wait(c, 1).Signal(a, 1)
			return b
		}},
	{"unsatisfiable", []string{"deadlock.unsatisfiable[1]"}, "threshold 2 exceeds the one signal",
		func(u bool) *schedule.Builder {
			b := schedule.NewBuilder("unsat", coop2)
			c := b.Counter("c")
			k := uint64(1)
			if u {
				k = 2
			}
			b.Task("x").On(0).Signal(c, 1)
			b.Task("y").On(1).Wait(c, k)
			return b
		}},
	{"barrier", []string{"deadlock.barrier[0 1]"}, "three parties, two workers",
		func(u bool) *schedule.Builder {
			b := schedule.NewBuilder("barrier", coop2)
			parties := 2
			if u {
				parties = 3
			}
			br := b.Barrier("bar", parties)
			b.Task("x").On(0).Sync(br)
			b.Task("y").On(1).Sync(br)
			return b
		}},
	{"semaphore", []string{"deadlock.semaphore[1]"}, "acquires 2 of 1 token",
		func(u bool) *schedule.Builder {
			b := schedule.NewBuilder("sem", coop2)
			s := b.Semaphore("s", 1)
			n := uint64(1)
			if u {
				n = 2
			}
			b.Task("x").On(0).Acquire(s, 1).Release(s, 1)
			b.Task("y").On(1).Acquire(s, n).Release(s, n)
			return b
		}},
	{"occupancy-static", []string{"occupancy[]"}, "cooperative launch of 3 workers on 2 slots",
		func(u bool) *schedule.Builder {
			l := schedule.Launch{SMs: 2, PerSM: 1, Workers: 2, Cooperative: true}
			if u {
				l.Workers = 3
			}
			b := schedule.NewBuilder("coop", l)
			b.Task("x").On(0)
			return b
		}},
	{"occupancy-residency", []string{"occupancy[0]"}, "worker 0 waits for worker 1, which never becomes resident",
		func(u bool) *schedule.Builder {
			b := schedule.NewBuilder("resid", schedule.Launch{SMs: 1, PerSM: 1, Workers: 2})
			c := b.Counter("c")
			if u {
				b.Task("x").On(0).Wait(c, 1)
				b.Task("y").On(1).Signal(c, 1)
			} else {
				b.Task("x").On(1).Wait(c, 1)
				b.Task("y").On(0).Signal(c, 1)
			}
			return b
		}},
	{"raw", []string{"race.raw[0 1]"}, "no wait between writer and reader",
		func(u bool) *schedule.Builder {
			b := schedule.NewBuilder("raw", coop2)
			x := b.Buffer("x", schedule.KindState, 16)
			c := b.Counter("c")
			b.Task("w").On(0).Write(x, 0, 16).Signal(c, 1)
			r := b.Task("r").On(1).Read(x, 8, 8)
			if !u {
				r.Wait(c, 1)
			}
			return b
		}},
	{"war", []string{"race.war[0 1]"}, "the writer does not wait for the reader",
		func(u bool) *schedule.Builder {
			b := schedule.NewBuilder("war", coop2)
			x := b.Buffer("x", schedule.KindState, 16)
			c := b.Counter("c")
			b.Task("r").On(0).Read(x, 0, 16).Signal(c, 1)
			w := b.Task("w").On(1).WriteTile(x, 0, 2, 4, 4)
			if !u {
				w.Wait(c, 1)
			}
			return b
		}},
	{"waw", []string{"race.waw[0 1]"}, "overlapping 2-D tiles",
		func(u bool) *schedule.Builder {
			b := schedule.NewBuilder("waw", coop2)
			x := b.Buffer("x", schedule.KindState, 64)
			b.Task("a").On(0).WriteTile(x, 0, 4, 4, 16)
			off := uint64(4)
			if u {
				off = 2
			}
			b.Task("b").On(1).WriteTile(x, off, 4, 4, 16)
			return b
		}},
	{"unsynchronized-relaxed", []string{"race.unsynchronized[0 1]"}, "relaxed signal without a fence",
		func(u bool) *schedule.Builder {
			b := schedule.NewBuilder("relaxed", coop2)
			x := b.Buffer("x", schedule.KindState, 16)
			c := b.Counter("c")
			w := b.Task("w").On(0).Write(x, 0, 16)
			if !u {
				w.FenceAfter(schedule.ScopeGPU)
			}
			w.Signal(c, 1, schedule.Relaxed())
			b.Task("r").On(1).Wait(c, 1).Read(x, 0, 16)
			return b
		}},
	{"unsynchronized-scope", []string{"race.scope[0 1]", "race.unsynchronized[0 1]"}, "cta scope does not order workers, and a cta wait on another worker's counter races on it",
		func(u bool) *schedule.Builder {
			b := schedule.NewBuilder("scope", coop2)
			x := b.Buffer("x", schedule.KindState, 16)
			c := b.Counter("c")
			sc := schedule.ScopeSys
			if u {
				sc = schedule.ScopeCTA
			}
			b.Task("w").On(0).Write(x, 0, 16).Signal(c, 1)
			b.Task("r").On(1).Wait(c, 1, schedule.WithScope(sc)).Read(x, 0, 16)
			return b
		}},
	{"relaxed-wait-fence", []string{"race.unsynchronized[0 1]"}, "relaxed wait needs a fence after it",
		func(u bool) *schedule.Builder {
			b := schedule.NewBuilder("rwait", coop2)
			x := b.Buffer("x", schedule.KindState, 16)
			c := b.Counter("c")
			b.Task("w").On(0).Write(x, 0, 16).Signal(c, 1)
			r := b.Task("r").On(1).Wait(c, 1, schedule.Relaxed())
			if !u {
				r.FenceBefore(schedule.ScopeGPU)
			}
			r.Read(x, 0, 16)
			return b
		}},
	{"alias", []string{"race.war[1 2]"}, "a page reused through an aliasing buffer while still read",
		func(u bool) *schedule.Builder {
			b := schedule.NewBuilder("alias", coop2)
			pg := b.Arena("page", 32)
			a := b.BufferIn("a", schedule.KindScratch, 16, pg, 0)
			off := uint64(16)
			if u {
				off = 8
			}
			bb := b.BufferIn("b", schedule.KindScratch, 16, pg, off)
			c := b.Counter("c")
			b.Task("fill").On(0).Write(a, 0, 16).Signal(c, 1)
			b.Task("use").On(1).Wait(c, 1).Read(a, 0, 16)
			b.Task("reuse").On(0).Write(bb, 0, 16)
			return b
		}},
	{"uninitialized", []string{"uninitialized-read[1]"}, "the reader reads bytes 8..16 nobody wrote",
		func(u bool) *schedule.Builder {
			b := schedule.NewBuilder("uninit", coop2)
			x := b.Buffer("x", schedule.KindScratch, 16)
			c := b.Counter("c")
			n := uint64(16)
			if u {
				n = 8
			}
			b.Task("w").On(0).Write(x, 0, n).Signal(c, 1)
			b.Task("r").On(1).Wait(c, 1).Read(x, 0, 16)
			return b
		}},
	{"uninitialized-alias", []string{"uninitialized-read[1]"}, "a write through an aliasing buffer does not initialize",
		func(u bool) *schedule.Builder {
			b := schedule.NewBuilder("uninit-alias", coop2)
			pg := b.Arena("page", 16)
			a := b.BufferIn("a", schedule.KindScratch, 16, pg, 0)
			bb := b.BufferIn("b", schedule.KindScratch, 16, pg, 0)
			c := b.Counter("c")
			w := bb
			if !u {
				w = a
			}
			b.Task("w").On(0).Write(w, 0, 16).Signal(c, 1)
			b.Task("r").On(1).Wait(c, 1).Read(a, 0, 16)
			return b
		}},
	{"overflow", []string{"counter-overflow[1]"}, "a 32-bit counter at its maximum is signalled",
		func(u bool) *schedule.Builder {
			b := schedule.NewBuilder("overflow", coop2)
			w := uint8(64)
			if u {
				w = 32
			}
			c := b.CounterInit("c", 1<<32-2, w)
			b.Task("x").On(0).Signal(c, 1)
			b.Task("y").On(1).Signal(c, 1)
			return b
		}},
	{"out-of-bounds", []string{"out-of-bounds[0]"}, "a 2-D tile runs past the end",
		func(u bool) *schedule.Builder {
			b := schedule.NewBuilder("oob", coop2)
			x := b.Buffer("x", schedule.KindState, 64)
			rows := uint64(4)
			if u {
				rows = 5
			}
			b.Task("x").On(0).WriteTile(x, 0, 8, rows, 16)
			return b
		}},
	{"readonly-write", []string{"readonly-write[0]"}, "a weight is written",
		func(u bool) *schedule.Builder {
			b := schedule.NewBuilder("ro", coop2)
			k := schedule.KindState
			if u {
				k = schedule.KindWeight
			}
			x := b.Buffer("x", k, 8)
			b.Task("x").On(0).Write(x, 0, 8)
			return b
		}},
	{"output-unwritten", []string{"output-unwritten[]"}, "half of the output stays unwritten",
		func(u bool) *schedule.Builder {
			b := schedule.NewBuilder("out", coop2)
			x := b.Buffer("x", schedule.KindOutput, 16)
			b.Task("x").On(0).Write(x, 0, 8)
			n := uint64(8)
			if u {
				n = 4
			}
			b.Task("y").On(0).Write(x, 8, n)
			return b
		}},
	{"dynamic", []string{"race.raw[0 1]"}, "dynamic tasks need a wait like pinned ones",
		func(u bool) *schedule.Builder {
			b := schedule.NewBuilder("dyn", coop2)
			x := b.Buffer("x", schedule.KindState, 16)
			c := b.Counter("c")
			b.Task("w").Write(x, 0, 16).Signal(c, 1)
			r := b.Task("r").Read(x, 0, 16)
			if !u {
				r.Wait(c, 1)
			}
			return b
		}},
	{"partial-threshold", []string{"race.raw[1 2]"}, "a wait for 1 of 2 signals does not cover the second writer",
		func(u bool) *schedule.Builder {
			b := schedule.NewBuilder("partial", launch(3))
			x := b.Buffer("x", schedule.KindState, 16)
			c := b.Counter("c")
			k := uint64(2)
			if u {
				k = 1
			}
			b.Task("w0").On(0).Write(x, 0, 8).Signal(c, 1)
			b.Task("w1").On(1).Write(x, 8, 8).Signal(c, 1)
			b.Task("r").On(2).Wait(c, k).Read(x, 8, 8)
			return b
		}},
}

func TestTwins(t *testing.T) {
	for _, tw := range twins {
		t.Run(tw.name, func(t *testing.T) {
			r := explore(t, build(t, tw.prog(true)))
			if got := codes(r); !slices.Equal(got, tw.want) {
				t.Errorf("unsafe (%s): findings %v, want %v", tw.reason, got, tw.want)
			}
			r = explore(t, build(t, tw.prog(false)))
			if got := codes(r); len(got) != 0 {
				t.Errorf("safe twin: findings %v, want none", got)
			}
		})
	}
}

// Static findings carry no trace; races, reads and overflows carry one.
func TestWitnessShape(t *testing.T) {
	static := map[string]bool{CodeOutOfBounds: true, CodeReadonlyWrite: true, CodeOutputUnwritten: true}
	for _, tw := range twins {
		p := build(t, tw.prog(true))
		r := explore(t, p)
		for _, f := range r.Findings {
			coopOcc := f.Code == CodeOccupancy && p.Launch.Cooperative
			if static[f.Code] || coopOcc {
				if len(f.Trace) != 0 {
					t.Errorf("%s: static %s has a trace", tw.name, f.Code)
				}
			} else if len(f.Trace) == 0 && !strings.HasPrefix(f.Code, "deadlock.") && f.Code != CodeOccupancy {
				// Only a state stuck from the start has an empty witness.
				t.Errorf("%s: %s has no trace", tw.name, f.Code)
			}
		}
	}
}

func TestBudgetAndContext(t *testing.T) {
	p := build(t, ring(2, 6, 2))
	r, err := Run(context.Background(), p, Config{MaxStates: 3})
	if err != nil || r.Complete || r.States != 3 || r.Limit != LimitStates || !strings.Contains(r.Reason, "state budget") {
		t.Errorf("budget 3: complete %v states %d limit %v (%s) err %v; want incomplete at 3 by the state budget", r.Complete, r.States, r.Limit, r.Reason, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// Cancellation is polled every 1024 states; a large ring gets there.
	r, err = Run(ctx, build(t, ring(3, 40, 3)), Config{})
	if err == nil || r.Complete || r.Limit != LimitContext {
		t.Errorf("cancelled: complete %v limit %v err %v; want incomplete with ctx error", r.Complete, r.Limit, err)
	}
}

// semaphorePool is the shape that once took 8.5 GB: many workers, each
// with tasks taking one token of a shared semaphore around a body.
func semaphorePool(workers, tasks, tokens int) *schedule.Builder {
	b := schedule.NewBuilder("pool", schedule.Launch{SMs: workers, PerSM: 1, Workers: workers, Cooperative: true})
	s := b.Semaphore("s", uint64(tokens))
	x := b.Buffer("x", schedule.KindState, uint64(8*workers*tasks))
	for w := 0; w < workers; w++ {
		for k := 0; k < tasks; k++ {
			i := uint64(w*tasks + k)
			b.Task(fmt.Sprintf("t%d_%d", w, k)).On(w).Acquire(s, 1).Write(x, 8*i, 8).Release(s, 1)
		}
	}
	return b
}

// The memory budget bounds what an exploration holds, and the result says
// which bound stopped it.
func TestMemoryBudget(t *testing.T) {
	p := build(t, semaphorePool(60, 3, 30))
	const budget = 32 << 20
	r, err := Run(context.Background(), p, Config{MaxMemory: budget})
	if err != nil {
		t.Fatal(err)
	}
	if r.Complete || r.Limit != LimitMemory || !strings.Contains(r.Reason, "memory budget of 32 MiB") {
		t.Fatalf("complete %v, limit %v (%q); want the memory budget", r.Complete, r.Limit, r.Reason)
	}
	if r.PeakMemory > budget || r.PeakMemory < budget/2 {
		t.Errorf("peak %d bytes, budget %d", r.PeakMemory, budget)
	}
	if r.States == 0 {
		t.Error("no state explored")
	}
	t.Logf("%d states in %d bytes: %s", r.States, r.PeakMemory, r.Reason)
	// A budget too small for one search path refuses at once, and says so.
	r, err = Run(context.Background(), p, Config{MaxMemory: 1 << 10})
	if err != nil || r.Complete || r.Limit != LimitMemory || r.States != 0 {
		t.Errorf("1 KiB: complete %v limit %v states %d err %v", r.Complete, r.Limit, r.States, err)
	}
}

func TestInvalid(t *testing.T) {
	p := &schedule.Program{Launch: schedule.Launch{SMs: 1, PerSM: 1, Workers: 0}}
	if _, err := Run(context.Background(), p, Config{}); err == nil {
		t.Error("invalid program accepted")
	}
}

// A program far beyond the explorer's reach gets its static findings and an
// incomplete result at once, which names the size bound, not the budget.
func TestTooLarge(t *testing.T) {
	b := schedule.NewBuilder("wide", launch(1))
	x := b.Buffer("x", schedule.KindWeight, 8)
	for i := 0; i < 200; i++ {
		b.Task(fmt.Sprintf("t%d", i)).Write(x, 0, 8)
	}
	r, err := Run(context.Background(), build(t, b), Config{})
	if err != nil || r.Complete || len(r.Findings) != 200 || r.Limit != LimitSize || r.States != 0 || !strings.Contains(r.Reason, "not explored") {
		t.Errorf("complete %v, %d findings, limit %v (%q), err %v; want incomplete by size with 200 readonly-write findings", r.Complete, len(r.Findings), r.Limit, r.Reason, err)
	}
}

// dispatch programs: the runner's dynamic dispatch on the launch's workers
// and scope races, each with the twin the runner runs fine.
type dispatchCase struct {
	name, reason string
	want         []string
	prog         func() *schedule.Program
}

var dispatchCases = []dispatchCase{
	{"cta-wait-across-workers", "a cta-scoped spin on a counter another worker signals", []string{"race.scope[0 1]"},
		func() *schedule.Program {
			b := schedule.NewBuilder("cta-wait-across-workers", coop2)
			c := b.Counter("c")
			b.Task("producer").On(0).Signal(c, 1)
			b.Task("consumer").On(1).Wait(c, 1, schedule.WithScope(schedule.ScopeCTA))
			return must(b)
		}},
	{"cta-wait-same-worker", "both tasks on worker 0: cta scope orders one worker", nil,
		func() *schedule.Program {
			b := schedule.NewBuilder("cta-wait-same-worker", coop2)
			c := b.Counter("c")
			b.Task("producer").On(0).Signal(c, 1)
			b.Task("consumer").On(0).Wait(c, 1, schedule.WithScope(schedule.ScopeCTA))
			return must(b)
		}},
	{"cta-signal-dynamic", "a dynamic task's worker is unknown, so its cta signal races with a static wait", []string{"race.scope[0 1]"},
		func() *schedule.Program {
			b := schedule.NewBuilder("cta-signal-dynamic", coop2)
			c := b.Counter("c")
			b.Task("consumer").On(0).Wait(c, 1)
			b.Task("producer").Signal(c, 1, schedule.WithScope(schedule.ScopeCTA))
			return must(b)
		}},
	{"cta-ordered-by-gpu", "a gpu handoff orders the cta signal before the other worker's wait", nil,
		func() *schedule.Program {
			b := schedule.NewBuilder("cta-ordered", coop2)
			c := b.Counter("c")
			d := b.Counter("d")
			b.Task("producer").On(0).Signal(c, 1, schedule.WithScope(schedule.ScopeCTA)).Signal(d, 1)
			b.Task("consumer").On(1).Wait(d, 1).Wait(c, 1)
			return must(b)
		}},
	{"cta-unordered-by-relaxed", "a relaxed handoff does not order the cta signal", []string{"race.scope[0 1]"},
		func() *schedule.Program {
			b := schedule.NewBuilder("cta-relaxed", coop2)
			c := b.Counter("c")
			d := b.Counter("d")
			b.Task("producer").On(0).Signal(c, 1, schedule.WithScope(schedule.ScopeCTA)).Signal(d, 1, schedule.Relaxed())
			b.Task("consumer").On(1).Wait(d, 1).Wait(c, 1)
			return must(b)
		}},
	{"cta-semaphore", "a cta-scoped acquire of a semaphore another worker releases", []string{"race.scope[0 1]"},
		func() *schedule.Program {
			b := schedule.NewBuilder("cta-semaphore", coop2)
			s := b.Semaphore("s", 0)
			b.Task("giver").On(0).Release(s, 1)
			b.Task("taker").On(1).Acquire(s, 1)
			p := must(b)
			p.Tasks[1].Before[0].Scope = schedule.ScopeCTA
			return p
		}},
	{"dynamic-barrier-pool", "three dynamic tasks sync a 3-party barrier on 2 workers", []string{"occupancy[0 1 2]"},
		func() *schedule.Program { return barrierPool(2, false) }},
	{"dynamic-barrier-pool-3", "three workers hold all three", nil,
		func() *schedule.Program { return barrierPool(3, false) }},
	{"dynamic-barrier-pool-pinned", "the three tasks pinned to workers 0, 0 and 1", []string{"deadlock.barrier[0 2]"},
		func() *schedule.Program { return barrierPool(2, true) }},
	{"exit-rule", "worker 0 is done but cannot exit while the dynamic task waits, so worker 1 never starts", []string{"occupancy[1]"},
		func() *schedule.Program {
			b := schedule.NewBuilder("exit", schedule.Launch{SMs: 1, PerSM: 1, Workers: 2})
			c := b.Counter("c")
			b.Task("signal").On(1).Signal(c, 1)
			b.Task("wait").Wait(c, 1)
			return must(b)
		}},
	{"exit-rule-no-dynamic", "without dynamic tasks the empty worker 0 exits and worker 1 runs", nil,
		func() *schedule.Program {
			b := schedule.NewBuilder("exit", schedule.Launch{SMs: 1, PerSM: 1, Workers: 3})
			c := b.Counter("c")
			b.Task("signal").On(1).Signal(c, 1)
			b.Task("wait").On(2).Wait(c, 1)
			return must(b)
		}},
	{"simple-helper", "a spinning worker runs the ready simple task it waits for", nil,
		func() *schedule.Program {
			b := schedule.NewBuilder("simple", schedule.Launch{SMs: 1, PerSM: 1, Workers: 1, Cooperative: true})
			c := b.Counter("c")
			x := b.Buffer("x", schedule.KindScratch, 8)
			out := b.Buffer("out", schedule.KindOutput, 8)
			b.Task("consumer").On(0).Wait(c, 1).Read(x, 0, 8).Write(out, 0, 8)
			b.Task("producer").Write(x, 0, 8).Signal(c, 1)
			return must(b)
		}},
	{"guard-order", "the claim waits for the whole guard, so the reader's first wait sees the writer's release", nil,
		func() *schedule.Program { return guardOrder(false) }},
	{"guard-order-pinned", "pinned, the reader's first wait can pass on c's initial value", []string{"race.unsynchronized[0 1]"},
		func() *schedule.Program { return guardOrder(true) }},
	{"acquire-guard", "a task with an acquire in its guard needs a finished worker, and the only one waits for it", []string{"occupancy[0 1]"},
		func() *schedule.Program {
			b := schedule.NewBuilder("acquire-guard", schedule.Launch{SMs: 1, PerSM: 1, Workers: 1, Cooperative: true})
			c := b.Counter("c")
			sm := b.Semaphore("s", 1)
			b.Task("producer").Acquire(sm, 1).Release(sm, 1).Signal(c, 1)
			b.Task("consumer").On(0).Wait(c, 1)
			return must(b)
		}},
	{"acquire-guard-empty-worker", "an empty second worker claims it", nil,
		func() *schedule.Program {
			b := schedule.NewBuilder("acquire-guard", coop2)
			c := b.Counter("c")
			sm := b.Semaphore("s", 1)
			b.Task("producer").Acquire(sm, 1).Release(sm, 1).Signal(c, 1)
			b.Task("consumer").On(0).Wait(c, 1)
			return must(b)
		}},
	{"blocking-helper", "a task that waits after its body cannot run on the only worker, which spins", []string{"occupancy[0 1]"},
		func() *schedule.Program {
			b := schedule.NewBuilder("blocking", schedule.Launch{SMs: 1, PerSM: 1, Workers: 1, Cooperative: true})
			c := b.Counter("c")
			d := b.Counter("d")
			b.Task("consumer").On(0).Wait(c, 1).Signal(d, 1)
			b.Task("producer").Signal(c, 1)
			p := must(b)
			p.Tasks[1].After = append(p.Tasks[1].After, schedule.Step{Kind: schedule.Wait, Object: int32(d), Value: 1})
			return p
		}},
}

// guardOrder: a reader's guard waits for c (already 1) and then, relaxed,
// for d, which the writer signals after its release of c. A dynamic reader
// is claimed only once d >= 1, so its wait on c comes after the release.
func guardOrder(pinned bool) *schedule.Program {
	b := schedule.NewBuilder("guard-order", coop2)
	c := b.CounterInit("c", 1, 32)
	d := b.Counter("d")
	x := b.Buffer("x", schedule.KindState, 8)
	b.Task("writer").On(0).Write(x, 0, 8).Signal(c, 1).Signal(d, 1)
	r := b.Task("reader").Wait(c, 1).Wait(d, 1, schedule.Relaxed()).Read(x, 0, 8)
	if pinned {
		r.On(1)
	}
	return must(b)
}

func must(b *schedule.Builder) *schedule.Program {
	p, err := b.Build()
	if err != nil {
		panic(err)
	}
	return p
}

// barrierPool is the dynamic-barrier-pool: three tasks sync a
// 3-party barrier; pinned puts them on workers 0, 0 and 1 instead.
func barrierPool(workers int, pinned bool) *schedule.Program {
	b := schedule.NewBuilder("dynamic-barrier-pool", schedule.Launch{SMs: workers, PerSM: 1, Workers: workers, Cooperative: true})
	br := b.Barrier("b", 3)
	for i := 0; i < 3; i++ {
		tk := b.Task(fmt.Sprintf("d%d", i)).Sync(br)
		if pinned {
			tk.On(i / 2)
		}
	}
	return must(b)
}

func TestDispatchAndScope(t *testing.T) {
	for _, c := range dispatchCases {
		t.Run(c.name, func(t *testing.T) {
			p := c.prog()
			r := explore(t, p)
			if got := codes(r); !slices.Equal(got, c.want) {
				t.Errorf("%s: findings %v, want %v", c.reason, got, c.want)
			}
			for _, f := range r.Findings {
				if len(f.Trace) == 0 && f.Code == CodeRaceScope {
					t.Errorf("%s has no trace", f.Code)
				}
				t.Logf("%s %v: %s\n  trace %v", f.Code, f.Tasks, f.Message, f.Trace)
			}
		})
	}
}

// The occupancy message names the shortfall and the workers that avoid it.
func TestOccupancyMessage(t *testing.T) {
	r := explore(t, barrierPool(2, false))
	if len(r.Findings) != 1 || !strings.Contains(r.Findings[0].Message, "no worker is free") || !strings.Contains(r.Findings[0].Message, "3 co-resident workers avoid it") {
		t.Errorf("findings %+v", r.Findings)
	}
	r = explore(t, dispatchCases[slices.IndexFunc(dispatchCases, func(c dispatchCase) bool { return c.name == "exit-rule" })].prog())
	if len(r.Findings) != 1 || !strings.Contains(r.Findings[0].Message, "workers 1..1 cannot start") || !strings.Contains(r.Findings[0].Message, "2 co-resident workers avoid it") {
		t.Errorf("findings %+v", r.Findings)
	}
}

// The explorer's own guards and simple tasks are the ones schedule (and so
// the runner) computes.
func TestGuardsAgreeWithSchedule(t *testing.T) {
	g := progen.Program(progen.Small())
	for seed := 0; seed < 500; seed++ {
		p := g.Example(seed)
		m := newModel(p)
		for th := m.W; th < m.T; th++ {
			ft := &m.f.Threads[th]
			if int(m.guard[th]) != ft.Guard() || m.simple[th] != ft.Simple() {
				t.Fatalf("seed %d thread %d: guard %d simple %v, schedule says %d %v", seed, th, m.guard[th], m.simple[th], ft.Guard(), ft.Simple())
			}
		}
	}
}
