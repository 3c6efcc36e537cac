package corpus

import (
	"fmt"

	"github.com/megaproof/megaproof/schedule"
)

// Semaphore protocols at scale: many workers sharing rings, credit pools
// and nested locks, and semaphores mixed with counters and barriers. Each
// builder is safe as written; verify/semaphore_scale_test.go holds each to
// its one-edit unsafe twins (a skipped acquire, a missing release, acquires
// in opposite order).

// semaRecipes lists the semaphore protocol seeds: sizes the explorer
// labels, and a few at full-GPU scale.
func semaRecipes() []string {
	var out []string
	for _, r := range [][3]int{{1, 2, 4}, {2, 2, 4}, {3, 1, 3}, {2, 3, 6}, {4, 2, 2}, {66, 2, 4}} {
		out = append(out, fmt.Sprintf("proto:kind=sema-ring,pairs=%d,slots=%d,items=%d", r[0], r[1], r[2]))
	}
	for _, r := range [][4]int{{2, 2, 2, 1}, {3, 1, 2, 1}, {3, 2, 4, 2}, {4, 1, 3, 3}, {4, 1, 2, 1}, {132, 4, 66, 2}} {
		out = append(out, fmt.Sprintf("proto:kind=sema-pool,workers=%d,tasks=%d,pages=%d,take=%d", r[0], r[1], r[2], r[3]))
	}
	for _, r := range [][4]int{{2, 2, 1, 1}, {3, 2, 1, 2}, {3, 3, 2, 1}, {4, 2, 1, 1}, {132, 2, 1, 1}} {
		out = append(out, fmt.Sprintf("proto:kind=sema-chain,workers=%d,items=%d,slots=%d,rounds=%d", r[0], r[1], r[2], r[3]))
	}
	for _, r := range [][2]int{{2, 1}, {2, 2}, {3, 1}} {
		out = append(out, fmt.Sprintf("proto:kind=sema-locks,workers=%d,tasks=%d", r[0], r[1]))
	}
	for _, r := range [][3]int{{2, 2, 1}, {2, 3, 2}, {3, 4, 2}} {
		out = append(out, fmt.Sprintf("proto:kind=sema-dyn,workers=%d,tasks=%d,credits=%d", r[0], r[1], r[2]))
	}
	return out
}

// buildSema builds the semaphore protocol kinds.
func buildSema(kv params) (*schedule.Program, error) {
	switch kv["kind"] {
	case "sema-ring":
		v, err := kv.ints([]string{"pairs", "slots", "items"}, []int{2, 2, 4})
		if err != nil {
			return nil, err
		}
		return protoSemaRing(v[0], v[1], v[2])
	case "sema-pool":
		v, err := kv.ints([]string{"workers", "tasks", "pages", "take"}, []int{2, 2, 2, 1})
		if err != nil {
			return nil, err
		}
		return protoSemaPool(v[0], v[1], v[2], v[3])
	case "sema-chain":
		v, err := kv.ints([]string{"workers", "items", "slots", "rounds"}, []int{2, 2, 1, 1})
		if err != nil {
			return nil, err
		}
		return protoSemaChain(v[0], v[1], v[2], v[3])
	case "sema-locks":
		v, err := kv.ints([]string{"workers", "tasks"}, []int{2, 1})
		if err != nil {
			return nil, err
		}
		return protoSemaLocks(v[0], v[1])
	case "sema-dyn":
		v, err := kv.ints([]string{"workers", "tasks", "credits"}, []int{2, 2, 1})
		if err != nil {
			return nil, err
		}
		return protoSemaDyn(v[0], v[1], v[2])
	}
	return nil, fmt.Errorf("unknown protocol %q", kv["kind"])
}

// maxSemaTasks bounds the tasks a semaphore protocol recipe may ask for,
// so a recipe's numbers cannot make the builder allocate without bound.
const maxSemaTasks = 1 << 16

// semaSize checks that every size is positive and that the task counts
// multiply to at most maxSemaTasks (each size is also at most that).
func semaSize(what string, tasks []int, sizes ...int) error {
	n := 1
	for _, c := range append(sizes, tasks...) {
		if c < 1 || c > maxSemaTasks {
			return fmt.Errorf("%s needs sizes from 1 to %d", what, maxSemaTasks)
		}
	}
	for _, c := range tasks {
		if n *= c; n > maxSemaTasks {
			return fmt.Errorf("%s: more than %d tasks", what, maxSemaTasks)
		}
	}
	return nil
}

// protoSemaRing is P producer/consumer worker pairs, each pair sharing a ring
// of slots guarded by an empty semaphore (slots tokens) and a full one (no
// tokens), items per pair: producer 2k writes item i into slot i mod slots
// after acquiring empty and releases full; consumer 2k+1 acquires full,
// reads the slot, writes its output and releases empty. One pair per two
// SMs of an H200 at pairs = 66.
func protoSemaRing(pairs, slots, items int) (*schedule.Program, error) {
	if err := semaSize("sema-ring", []int{pairs, items, 2}, slots); err != nil {
		return nil, err
	}
	b := schedule.NewBuilder(fmt.Sprintf("sema-ring-%dx%dx%d", pairs, slots, items),
		schedule.Launch{Target: "H200", SMs: 132, PerSM: 1, Workers: 2 * pairs, Cooperative: 2*pairs <= 132})
	for k := range pairs {
		ring := b.Buffer(fmt.Sprintf("ring%d", k), schedule.KindScratch, uint64(slots*protoBytes))
		out := b.Buffer(fmt.Sprintf("out%d", k), schedule.KindOutput, uint64(items*protoBytes))
		empty := b.Semaphore(fmt.Sprintf("empty%d", k), uint64(slots))
		full := b.Semaphore(fmt.Sprintf("full%d", k), 0)
		for i := range items {
			slot := uint64(i%slots) * protoBytes
			b.Task(fmt.Sprintf("produce%d.%d", k, i)).Op("copy").On(2*k).Acquire(empty, 1).
				Write(ring, slot, protoBytes).Release(full, 1)
			b.Task(fmt.Sprintf("consume%d.%d", k, i)).Op("copy").On(2*k+1).Acquire(full, 1).
				Read(ring, slot, protoBytes).Write(out, uint64(i*protoBytes), protoBytes).Release(empty, 1)
		}
	}
	return b.Build()
}

// protoSemaPool is a credit-guarded page pool shared by many workers: each of
// tasks per worker takes take of pages credits, writes its own page of
// the output, gives them back and counts itself done; a compaction task
// on worker 0 waits for every task, takes all the credits (every task has
// given its back), reads every page and writes the summary.
func protoSemaPool(workers, tasks, pages, take int) (*schedule.Program, error) {
	if err := semaSize("sema-pool", []int{workers, tasks}, pages, take); err != nil {
		return nil, err
	}
	if take > pages {
		return nil, fmt.Errorf("sema-pool: take %d exceeds pages %d", take, pages)
	}
	n := workers * tasks
	b := schedule.NewBuilder(fmt.Sprintf("sema-pool-%dx%dx%dx%d", workers, tasks, pages, take),
		schedule.Launch{Target: "H200", SMs: 132, PerSM: 1, Workers: workers, Cooperative: workers <= 132})
	credits := b.Semaphore("credits", uint64(pages))
	done := b.Counter("done")
	out := b.Buffer("pages", schedule.KindScratch, uint64(n*protoBytes))
	sum := b.Buffer("summary", schedule.KindOutput, protoBytes)
	for w := range workers {
		for i := range tasks {
			off := uint64((w*tasks + i) * protoBytes)
			b.Task(fmt.Sprintf("fill%d.%d", w, i)).Op("store").On(w).Acquire(credits, uint64(take)).
				Write(out, off, protoBytes).Release(credits, uint64(take)).Signal(done, 1)
		}
	}
	b.Task("compact").Op("reduce").On(0).Wait(done, uint64(n)).Acquire(credits, uint64(pages)).
		Read(out, 0, uint64(n*protoBytes)).Write(sum, 0, protoBytes).Release(credits, uint64(pages))
	return b.Build()
}

// protoSemaChain mixes semaphores with a barrier and a counter: workers stages
// in a line, stage j passing items to stage j+1 through a ring of slots
// (semaphores empty_j and full_j); rounds of this, separated by a grid
// barrier every stage syncs on; the last stage counts its items on a done
// counter, which a final task on worker 0 waits for before reading the
// results.
func protoSemaChain(workers, items, slots, rounds int) (*schedule.Program, error) {
	if err := semaSize("sema-chain", []int{workers, items, rounds}, slots); err != nil {
		return nil, err
	}
	if workers < 2 {
		return nil, fmt.Errorf("sema-chain needs 2 workers")
	}
	b := schedule.NewBuilder(fmt.Sprintf("sema-chain-%dx%dx%dx%d", workers, items, slots, rounds),
		schedule.Launch{Target: "H200", SMs: 132, PerSM: 1, Workers: workers, Cooperative: workers <= 132})
	in := b.Buffer("in", schedule.KindInput, uint64(items*protoBytes))
	res := b.Buffer("results", schedule.KindScratch, uint64(rounds*items*protoBytes))
	out := b.Buffer("out", schedule.KindOutput, protoBytes)
	done := b.Counter("done")
	bar := b.Barrier("round", workers)
	rings := make([]schedule.BufferRef, workers-1)
	empty := make([]schedule.SemaphoreRef, workers-1)
	full := make([]schedule.SemaphoreRef, workers-1)
	for j := range workers - 1 {
		rings[j] = b.Buffer(fmt.Sprintf("ring%d", j), schedule.KindScratch, uint64(slots*protoBytes))
		empty[j] = b.Semaphore(fmt.Sprintf("empty%d", j), uint64(slots))
		full[j] = b.Semaphore(fmt.Sprintf("full%d", j), 0)
	}
	for r := range rounds {
		for j := range workers {
			for i := range items {
				k := r*items + i // the item's number along the ring
				slot := uint64(k%slots) * protoBytes
				t := b.Task(fmt.Sprintf("stage%d.r%d.i%d", j, r, i)).Op("copy").On(j)
				if r > 0 && i == 0 {
					t.Sync(bar)
				}
				if j > 0 {
					t.Acquire(full[j-1], 1).Read(rings[j-1], slot, protoBytes)
				} else {
					t.Read(in, uint64(i*protoBytes), protoBytes)
				}
				if j < workers-1 {
					t.Acquire(empty[j], 1).Write(rings[j], slot, protoBytes).Release(full[j], 1)
				} else {
					t.Write(res, uint64(k*protoBytes), protoBytes).Signal(done, 1)
				}
				if j > 0 {
					t.Release(empty[j-1], 1)
				}
			}
		}
	}
	b.Task("collect").Op("reduce").On(0).Wait(done, uint64(rounds*items)).
		Read(res, 0, uint64(rounds*items*protoBytes)).Write(out, 0, protoBytes)
	return b.Build()
}

// protoSemaLocks is nested locking over two shared tables: every task, on any
// of workers, takes lock a then lock b (one token each), updates both
// tables, and gives the locks back in reverse order.
func protoSemaLocks(workers, tasks int) (*schedule.Program, error) {
	if err := semaSize("sema-locks", []int{workers, tasks}); err != nil {
		return nil, err
	}
	b := schedule.NewBuilder(fmt.Sprintf("sema-locks-%dx%d", workers, tasks),
		schedule.Launch{Target: "H200", SMs: 132, PerSM: 1, Workers: workers, Cooperative: workers <= 132})
	la := b.Semaphore("a", 1)
	lb := b.Semaphore("b", 1)
	ta := b.Buffer("table_a", schedule.KindState, protoBytes)
	tb := b.Buffer("table_b", schedule.KindState, protoBytes)
	for w := range workers {
		for i := range tasks {
			b.Task(fmt.Sprintf("update%d.%d", w, i)).Op("update").On(w).Acquire(la, 1).Acquire(lb, 1).
				Read(ta, 0, protoBytes).Read(tb, 0, protoBytes).Write(ta, 0, protoBytes).Write(tb, 0, protoBytes).
				Release(lb, 1).Release(la, 1)
		}
	}
	return b.Build()
}

// protoSemaDyn is dynamic tasks whose guard holds a semaphore: a loader on
// worker 0 writes a table and signals ready; tasks dynamic tasks, each
// guarded by a wait for ready and an acquire of one of credits, read the
// table, write their own output chunk, give the credit back and count
// themselves done; a final task on the last worker waits for all of them.
func protoSemaDyn(workers, tasks, credits int) (*schedule.Program, error) {
	if err := semaSize("sema-dyn", []int{tasks}, workers, credits); err != nil {
		return nil, err
	}
	if workers < 2 {
		return nil, fmt.Errorf("sema-dyn needs 2 workers")
	}
	b := schedule.NewBuilder(fmt.Sprintf("sema-dyn-%dx%dx%d", workers, tasks, credits),
		schedule.Launch{Target: "H200", SMs: 132, PerSM: 1, Workers: workers, Cooperative: workers <= 132})
	in := b.Buffer("in", schedule.KindInput, protoBytes)
	table := b.Buffer("table", schedule.KindScratch, protoBytes)
	parts := b.Buffer("parts", schedule.KindScratch, uint64(tasks*protoBytes))
	out := b.Buffer("out", schedule.KindOutput, protoBytes)
	ready := b.Counter("ready")
	done := b.Counter("done")
	cr := b.Semaphore("credits", uint64(credits))
	b.Task("load").Op("copy").On(0).Read(in, 0, protoBytes).Write(table, 0, protoBytes).Signal(ready, 1)
	for i := range tasks {
		b.Task(fmt.Sprintf("work%d", i)).Op("gemv").Wait(ready, 1).Acquire(cr, 1).
			Read(table, 0, protoBytes).Write(parts, uint64(i*protoBytes), protoBytes).Release(cr, 1).Signal(done, 1)
	}
	b.Task("final").Op("reduce").On(workers-1).Wait(done, uint64(tasks)).
		Read(parts, 0, uint64(tasks*protoBytes)).Write(out, 0, protoBytes)
	return b.Build()
}
