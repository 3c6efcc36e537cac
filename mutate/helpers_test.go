package mutate_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/megaproof/megaproof/schedule"
)

// pipeline is a small program that exercises every kind of object: two
// producers tile a scratch buffer and join on a counter, two consumers
// behind a barrier and semaphores write an output and a KV cache, and a
// dynamic task reads the result after a second counter.
func pipeline(t testing.TB) *schedule.Program {
	t.Helper()
	b := schedule.NewBuilder("pipeline", schedule.Launch{Target: "H200", SMs: 4, PerSM: 1, Workers: 2, Cooperative: true})
	x := b.Buffer("x", schedule.KindInput, 256)
	w := b.Buffer("w", schedule.KindWeight, 1024)
	h := b.Buffer("h", schedule.KindScratch, 256)
	g := b.Buffer("g", schedule.KindScratch, 128)
	y := b.Buffer("y", schedule.KindOutput, 256)
	kv := b.Buffer("kv", schedule.KindState, 512)
	ar := b.Arena("pages", 1024)
	pa := b.BufferIn("pa", schedule.KindScratch, 256, ar, 0)
	pb := b.BufferIn("pb", schedule.KindScratch, 256, ar, 256)
	c1 := b.Counter("c1")
	c2 := b.Counter("c2")
	ph := b.CounterInit("phase", 0, 64)
	bar := b.Barrier("bar", 2)
	s1 := b.Semaphore("s1", 1)
	s2 := b.Semaphore("s2", 1)

	b.Task("p0").On(0).Op("gemv").Read(x, 0, 256).Read(w, 0, 512).Write(h, 0, 128).Write(pa, 0, 256).
		FenceAfter(schedule.ScopeGPU).Signal(c1, 1).Signal(ph, 1)
	b.Task("p1").On(1).Op("gemv").Read(x, 0, 256).Read(w, 512, 512).Write(h, 128, 128).
		FenceAfter(schedule.ScopeGPU).Signal(c1, 1, schedule.Relaxed()).Signal(ph, 1)
	b.Task("c0").On(0).Op("norm").Wait(c1, 2).Wait(ph, 1).Sync(bar).Acquire(s1, 1).Acquire(s2, 1).
		Read(h, 0, 256).Read(pa, 0, 256).WriteTile(y, 0, 64, 2, 128).Write(kv, 0, 64).Write(g, 0, 128).
		Release(s2, 1).Release(s1, 1).Signal(c2, 1).Signal(ph, 1)
	b.Task("c1").On(1).Op("norm").Wait(c1, 1, schedule.WithScope(schedule.ScopeSys)).Wait(ph, 2).Sync(bar).Acquire(s1, 1).
		Read(h, 128, 128).Read(kv, 0, 64).WriteTile(y, 64, 64, 2, 128).Write(pb, 0, 256).
		Release(s1, 1).Signal(c2, 1).Arrive(bar)
	b.Task("tail").Op("copy").Wait(c2, 2).Wait(ph, 3).FenceBefore(schedule.ScopeGPU).Read(y, 0, 256).Read(g, 0, 128).Read(pb, 0, 256)
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// handoff is the smallest producer/consumer program, non-cooperative.
func handoff(t testing.TB) *schedule.Program {
	t.Helper()
	b := schedule.NewBuilder("handoff", schedule.Launch{SMs: 2, PerSM: 1, Workers: 2})
	x := b.Buffer("x", schedule.KindScratch, 256)
	y := b.Buffer("y", schedule.KindOutput, 256)
	ready := b.Counter("ready")
	b.Task("produce").On(0).Op("fill").Write(x, 0, 256).Signal(ready, 1)
	b.Task("consume").On(1).Op("copy").Wait(ready, 1).Read(x, 0, 256).Write(y, 0, 256)
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// randomProgram builds a valid program from a seed, with every kind of
// step, access and object, including odd corners (64-bit counters near
// their width, negative offsets, arenas, huge thresholds). It returns nil
// when the random choices happen to be invalid.
func randomProgram(seed uint64) *schedule.Program {
	r := rand.New(rand.NewPCG(seed, seed^0x5eed))
	workers := 1 + r.IntN(4)
	b := schedule.NewBuilder("random", schedule.Launch{SMs: 1 + r.IntN(4), PerSM: 1 + r.IntN(2), Workers: workers, Cooperative: r.IntN(2) == 0})
	kinds := []schedule.BufferKind{schedule.KindInput, schedule.KindWeight, schedule.KindOutput, schedule.KindScratch, schedule.KindState}
	var bufs []schedule.BufferRef
	var sizes []uint64
	ar := b.Arena("a0", 4096)
	for i := range 2 + r.IntN(5) {
		size := uint64(64 * (1 + r.IntN(8)))
		k := kinds[r.IntN(len(kinds))]
		name := string(rune('a'+i)) + "buf"
		if r.IntN(4) == 0 {
			bufs = append(bufs, b.BufferIn(name, k, size, ar, uint64(64*r.IntN(8))))
		} else {
			bufs = append(bufs, b.Buffer(name, k, size))
		}
		sizes = append(sizes, size)
	}
	var ctrs []schedule.CounterRef
	var maxes []uint64
	for i := range 1 + r.IntN(3) {
		name := "c" + string(rune('0'+i))
		switch r.IntN(4) {
		case 0:
			ctrs = append(ctrs, b.CounterInit(name, 1<<64-3, 64))
			maxes = append(maxes, 1<<64-1)
		case 1:
			ctrs = append(ctrs, b.CounterInit(name, uint64(r.IntN(3)), 32))
			maxes = append(maxes, 1<<32-1)
		default:
			ctrs = append(ctrs, b.Counter(name))
			maxes = append(maxes, 1<<32-1)
		}
	}
	bar := b.Barrier("bar", 1+r.IntN(3))
	bar2 := b.Barrier("bar2", 1+r.IntN(3))
	sem := b.Semaphore("s0", uint64(r.IntN(3)))
	sem2 := b.Semaphore("s1", 1)
	for i := range 1 + r.IntN(7) {
		tb := b.Task("t" + string(rune('a'+i)))
		if r.IntN(3) != 0 {
			tb.On(r.IntN(workers))
		}
		for range r.IntN(4) {
			switch r.IntN(7) {
			case 0, 1:
				c := r.IntN(len(ctrs))
				th := uint64(1 + r.IntN(3))
				if r.IntN(8) == 0 {
					th = maxes[c]
				}
				var opts []schedule.StepOption
				if r.IntN(4) == 0 {
					opts = append(opts, schedule.Relaxed())
				}
				tb.Wait(ctrs[c], th, opts...)
			case 2:
				tb.Sync([]schedule.BarrierRef{bar, bar2}[r.IntN(2)])
			case 3:
				tb.Acquire(sem, 1)
			case 4:
				tb.Acquire(sem2, 1)
			case 5:
				tb.FenceBefore(schedule.Scope(r.IntN(3)))
			}
		}
		for range r.IntN(4) {
			bi := r.IntN(len(bufs))
			off := uint64(64 * r.IntN(4))
			n := uint64(1 + r.IntN(int(sizes[bi])))
			switch r.IntN(3) {
			case 0:
				tb.Read(bufs[bi], off, n)
			case 1:
				tb.Write(bufs[bi], off, n)
			default:
				tb.WriteTile(bufs[bi], off, 16, 2, 64)
			}
		}
		for range r.IntN(4) {
			switch r.IntN(6) {
			case 0, 1, 2:
				var opts []schedule.StepOption
				if r.IntN(3) == 0 {
					opts = append(opts, schedule.Relaxed(), schedule.WithScope(schedule.ScopeCTA))
				}
				tb.Signal(ctrs[r.IntN(len(ctrs))], uint64(1+r.IntN(2)), opts...)
			case 3:
				tb.Arrive(bar)
			case 4:
				tb.Release(sem, 1)
			default:
				tb.FenceAfter(schedule.ScopeGPU)
			}
		}
	}
	p, err := b.Build()
	if err != nil {
		return nil
	}
	if r.IntN(5) == 0 && len(p.Tasks) > 0 && len(p.Tasks[0].Reads) > 0 {
		p.Tasks[0].Reads[0].Offset = -32 // an already out-of-bounds access
	}
	if p.Validate() != nil {
		return nil
	}
	return p
}

// mustMarshal returns the canonical JSON of a valid program.
func mustMarshal(t testing.TB, p *schedule.Program) []byte {
	t.Helper()
	b, err := schedule.Marshal(p)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return b
}

// same reports whether two valid programs have the same canonical form.
func same(t testing.TB, p, q *schedule.Program) bool {
	return bytes.Equal(mustMarshal(t, p), mustMarshal(t, q))
}

// steps counts the steps of kind k in p.
func steps(p *schedule.Program, k schedule.StepKind) int {
	n := 0
	for _, t := range p.Tasks {
		for _, s := range t.Before {
			if s.Kind == k {
				n++
			}
		}
		for _, s := range t.After {
			if s.Kind == k {
				n++
			}
		}
	}
	return n
}

// allSteps flattens p's steps in site order, with a task index per step.
func allSteps(p *schedule.Program) (ss []schedule.Step, task []int) {
	for i, t := range p.Tasks {
		for _, s := range t.Before {
			ss, task = append(ss, s), append(task, i)
		}
		for _, s := range t.After {
			ss, task = append(ss, s), append(task, i)
		}
	}
	return ss, task
}

// accesses counts the reads and writes of p.
func accesses(p *schedule.Program) (reads, writes int) {
	for _, t := range p.Tasks {
		reads += len(t.Reads)
		writes += len(t.Writes)
	}
	return reads, writes
}
