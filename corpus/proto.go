package corpus

import (
	"embed"
	"fmt"

	"github.com/megaproof/megaproof/schedule"
)

//go:embed testdata/seeds/*.json
var seedFS embed.FS

// protoRecipes lists the hand-written protocol seeds.
func protoRecipes() []string {
	var out []string
	for slots := 1; slots <= 3; slots++ {
		for _, items := range []int{2, 3, 4, 6} {
			out = append(out, fmt.Sprintf("proto:kind=ring,slots=%d,items=%d", slots, items))
		}
	}
	for w := 2; w <= 4; w++ {
		for phases := 1; phases <= 3; phases++ {
			out = append(out, fmt.Sprintf("proto:kind=barrier,workers=%d,phases=%d", w, phases))
		}
	}
	for _, fenced := range []int{0, 1} {
		for w := 1; w <= 3; w++ {
			for _, n := range []int{2, 3, 5} {
				out = append(out, fmt.Sprintf("proto:kind=handoff,workers=%d,length=%d,fenced=%d", w, n, fenced))
			}
		}
	}
	for _, locks := range []int{1, 2} {
		for _, k := range []int{2, 3, 4} {
			out = append(out, fmt.Sprintf("proto:kind=mutex,locks=%d,tasks=%d", locks, k))
		}
	}
	out = append(out, semaRecipes()...)
	return out
}

const protoBytes = 64 // bytes of one slot, chunk or item

func buildProto(kv params) (*schedule.Program, error) {
	switch kv["kind"] {
	case "ring":
		v, err := kv.ints([]string{"slots", "items"}, []int{2, 4})
		if err != nil {
			return nil, err
		}
		return protoRing(v[0], v[1])
	case "sema-ring", "sema-pool", "sema-chain", "sema-locks", "sema-dyn":
		return buildSema(kv)
	case "barrier":
		v, err := kv.ints([]string{"workers", "phases"}, []int{2, 2})
		if err != nil {
			return nil, err
		}
		return protoBarrier(v[0], v[1])
	case "handoff":
		v, err := kv.ints([]string{"workers", "length", "fenced"}, []int{2, 3, 0})
		if err != nil {
			return nil, err
		}
		return protoHandoff(v[0], v[1], v[2] != 0)
	case "mutex":
		v, err := kv.ints([]string{"locks", "tasks"}, []int{1, 2})
		if err != nil {
			return nil, err
		}
		return protoMutex(v[0], v[1])
	case "groups":
		v, err := kv.ints([]string{"a", "b", "pa", "pb"}, []int{2, 3, 2, 2})
		if err != nil {
			return nil, err
		}
		return protoGroups(v[0], v[1], v[2], v[3])
	}
	return nil, fmt.Errorf("unknown protocol %q", kv["kind"])
}

// protoRing is a bounded ring buffer: worker 0 produces items into slot
// i mod slots after acquiring an empty credit and releases a full one;
// worker 1 consumes in order and returns the credit.
func protoRing(slots, items int) (*schedule.Program, error) {
	if slots < 1 || items < 1 {
		return nil, fmt.Errorf("ring needs slots and items")
	}
	b := schedule.NewBuilder(fmt.Sprintf("ring-%dx%d", slots, items), schedule.Launch{Target: "toy", SMs: 2, PerSM: 1, Workers: 2, Cooperative: true})
	in := b.Buffer("in", schedule.KindInput, uint64(items*protoBytes))
	ring := b.Buffer("ring", schedule.KindScratch, uint64(slots*protoBytes))
	out := b.Buffer("out", schedule.KindOutput, uint64(items*protoBytes))
	empty := b.Semaphore("empty", uint64(slots))
	full := b.Semaphore("full", 0)
	for i := range items {
		slot := uint64(i%slots) * protoBytes
		b.Task(fmt.Sprintf("produce%d", i)).Op("copy").On(0).Acquire(empty, 1).
			Read(in, uint64(i*protoBytes), protoBytes).Write(ring, slot, protoBytes).Release(full, 1)
	}
	for i := range items {
		slot := uint64(i%slots) * protoBytes
		b.Task(fmt.Sprintf("consume%d", i)).Op("copy").On(1).Acquire(full, 1).
			Read(ring, slot, protoBytes).Write(out, uint64(i*protoBytes), protoBytes).Release(empty, 1)
	}
	return b.Build()
}

// protoBarrier is a phased stencil: in phase k every worker writes its
// chunk of buffer k after a grid barrier, reading its neighbour's chunk of
// buffer k-1.
func protoBarrier(workers, phases int) (*schedule.Program, error) {
	if workers < 1 || phases < 1 {
		return nil, fmt.Errorf("barrier needs workers and phases")
	}
	b := schedule.NewBuilder(fmt.Sprintf("barrier-%dx%d", workers, phases), schedule.Launch{Target: "toy", SMs: workers, PerSM: 1, Workers: workers, Cooperative: true})
	size := uint64(workers * protoBytes)
	in := b.Buffer("in", schedule.KindInput, size)
	bufs := []schedule.BufferRef{in}
	for k := 1; k <= phases; k++ {
		kind := schedule.KindScratch
		if k == phases {
			kind = schedule.KindOutput
		}
		bufs = append(bufs, b.Buffer(fmt.Sprintf("phase%d", k), kind, size))
	}
	bar := b.Barrier("grid", workers)
	for k := 1; k <= phases; k++ {
		for w := range workers {
			t := b.Task(fmt.Sprintf("p%d.w%d", k, w)).Op("stencil").On(w)
			if k > 1 {
				t.Sync(bar)
			}
			n := (w + 1) % workers
			t.Read(bufs[k-1], uint64(w*protoBytes), protoBytes).Read(bufs[k-1], uint64(n*protoBytes), protoBytes).
				Write(bufs[k], uint64(w*protoBytes), protoBytes)
		}
	}
	return b.Build()
}

// protoHandoff is a chain of producer-consumer handoffs: task i, on worker
// i mod workers, waits for task i-1's counter, reads its buffer and writes
// its own. With fenced set, signals are relaxed after a gpu fence and waits
// relaxed before one (the fence idiom); otherwise release/acquire.
func protoHandoff(workers, length int, fenced bool) (*schedule.Program, error) {
	if workers < 1 || length < 1 {
		return nil, fmt.Errorf("handoff needs workers and length")
	}
	b := schedule.NewBuilder(fmt.Sprintf("handoff-%dx%d-f%v", workers, length, fenced), schedule.Launch{Target: "toy", SMs: workers, PerSM: 1, Workers: workers, Cooperative: true})
	prev := b.Buffer("in", schedule.KindInput, protoBytes)
	var c schedule.CounterRef
	for i := range length {
		kind := schedule.KindScratch
		if i == length-1 {
			kind = schedule.KindOutput
		}
		buf := b.Buffer(fmt.Sprintf("b%d", i), kind, protoBytes)
		next := b.Counter(fmt.Sprintf("c%d", i))
		t := b.Task(fmt.Sprintf("stage%d", i)).Op("copy").On(i % workers)
		if i > 0 {
			if fenced {
				t.Wait(c, 1, schedule.Relaxed()).FenceBefore(schedule.ScopeGPU)
			} else {
				t.Wait(c, 1)
			}
		}
		t.Read(prev, 0, protoBytes).Write(buf, 0, protoBytes)
		if fenced {
			t.FenceAfter(schedule.ScopeGPU).Signal(next, 1, schedule.Relaxed())
		} else {
			t.Signal(next, 1)
		}
		prev, c = buf, next
	}
	return b.Build()
}

// protoMutex is a split-K reduction under locks: dynamic tasks each take
// the locks in a fixed order, update one accumulator per lock and signal a
// done counter; a final task waits for all of them and writes the output.
func protoMutex(locks, tasks int) (*schedule.Program, error) {
	if locks < 1 || tasks < 1 {
		return nil, fmt.Errorf("mutex needs locks and tasks")
	}
	b := schedule.NewBuilder(fmt.Sprintf("mutex-%dx%d", locks, tasks), schedule.Launch{Target: "toy", SMs: 2, PerSM: 1, Workers: 2, Cooperative: true})
	in := b.Buffer("in", schedule.KindInput, uint64(tasks*protoBytes))
	var acc []schedule.BufferRef
	var sem []schedule.SemaphoreRef
	for l := range locks {
		acc = append(acc, b.Buffer(fmt.Sprintf("acc%d", l), schedule.KindState, protoBytes))
		sem = append(sem, b.Semaphore(fmt.Sprintf("lock%d", l), 1))
	}
	out := b.Buffer("out", schedule.KindOutput, uint64(locks*protoBytes))
	done := b.Counter("done")
	for i := range tasks {
		t := b.Task(fmt.Sprintf("partial%d", i)).Op("reduce").Read(in, uint64(i*protoBytes), protoBytes)
		for l := range locks {
			t.Acquire(sem[l], 1).Read(acc[l], 0, protoBytes).Write(acc[l], 0, protoBytes)
		}
		for l := locks - 1; l >= 0; l-- {
			t.Release(sem[l], 1)
		}
		t.Signal(done, 1)
	}
	f := b.Task("final").Op("store").On(0).Wait(done, uint64(tasks))
	for l := range locks {
		f.Read(acc[l], 0, protoBytes).Write(out, uint64(l*protoBytes), protoBytes)
	}
	return b.Build()
}

// groupRecipes are two barrier groups side by side, in small and large
// sizes (after every other seed, so that those keep their places and so
// their sampled sites). Their barriers differ in parties and threads, so
// merge-barriers has sites on them: arrivals of one group counted by the
// other's barrier let a thread pass before its own group has written what
// it reads (a race), and a group that syncs more often than the other,
// merged onto a barrier of more parties, waits for arrivals that never
// come (deadlock.barrier).
func groupRecipes() []string {
	return []string{
		"proto:kind=groups,a=2,b=3,pa=2,pb=2",
		"proto:kind=groups,a=2,b=2,pa=2,pb=3",
		"proto:kind=groups,a=3,b=2,pa=2,pb=5",
		"proto:kind=groups,a=1,b=2,pa=3,pb=2",
	}
}

// largeGroupRecipes are groupRecipes' programs of 1,000 tasks and more on
// 8 workers.
func largeGroupRecipes() []string {
	return []string{
		"proto:kind=groups,a=6,b=2,pa=2,pb=500",
		"proto:kind=groups,a=3,b=5,pa=100,pb=140",
	}
}

// protoGroups is two phased stencils side by side, each on its own
// barrier: group 0 on workers 0..a-1 for pa phases under a barrier of a
// parties, group 1 on the next b workers for pb phases under one of b
// parties. In phase k a worker of a group writes its chunk of the group's
// buffer k after the group's barrier, reading its own chunk and its
// neighbour's (within the group) of buffer k-1.
//
// Class: the seed of merge-barriers (F13: two groups with different
// counts on one named barrier, tenstorrent/tt-metal PR#51773).
func protoGroups(a, b, pa, pb int) (*schedule.Program, error) {
	if a < 1 || b < 1 || pa < 1 || pb < 1 {
		return nil, fmt.Errorf("groups needs a, b, pa and pb")
	}
	workers := a + b
	bl := schedule.NewBuilder(fmt.Sprintf("groups-%dx%d-%dx%d", a, pa, b, pb), schedule.Launch{Target: "toy", SMs: workers, PerSM: 1, Workers: workers, Cooperative: true})
	in := bl.Buffer("in", schedule.KindInput, uint64(workers*protoBytes))
	for g, size := range []int{a, b} {
		first, phases := 0, pa
		if g == 1 {
			first, phases = a, pb
		}
		chunk := uint64(size * protoBytes)
		bufs := []schedule.BufferRef{in}
		for k := 1; k <= phases; k++ {
			kind := schedule.KindScratch
			if k == phases {
				kind = schedule.KindOutput
			}
			bufs = append(bufs, bl.Buffer(fmt.Sprintf("g%d.phase%d", g, k), kind, chunk))
		}
		bar := bl.Barrier(fmt.Sprintf("group%d", g), size)
		for k := 1; k <= phases; k++ {
			for i := range size {
				t := bl.Task(fmt.Sprintf("g%d.p%d.w%d", g, k, i)).Op("stencil").On(first + i)
				base := uint64(0)
				if k == 1 {
					base = uint64(first * protoBytes) // the group's part of in
				} else {
					t.Sync(bar)
				}
				n := (i + 1) % size
				t.Read(bufs[k-1], base+uint64(i*protoBytes), protoBytes).Read(bufs[k-1], base+uint64(n*protoBytes), protoBytes).
					Write(bufs[k], uint64(i*protoBytes), protoBytes)
			}
		}
	}
	return bl.Build()
}
