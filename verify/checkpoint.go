package verify

import (
	"context"
	"slices"
)

// Checkpointed withhold-runs. A withhold-run for thread u (u frozen before
// its first op, then thawed step by step) reaches the same maximal state
// from any reachable state that holds no op of u (confluence). The greedy
// run's prefix before u's first op is such a state, so sweeps in the order
// of their thread's first op start from a checkpoint that follows the
// greedy run, run only what the checkpoint has not run, and are undone
// afterwards. In programs of many dynamic tasks a sweep then costs the ops
// that run beside the withheld thread instead of the whole program.
//
// Waits are found by threshold, not kept in wait lists: per object, every
// wait op sorted by threshold; an add that raises a value from v0 to v1
// wakes the threads parked at waits with thresholds in (v0, v1]. Only
// launches whose workers are all resident qualify (no start order to
// replay), and only execution order (not the synchronizing relaxation).

type checkpoint struct {
	f      *form
	trace  []int32
	at     int       // trace ops applied to the checkpoint
	pos    []int32   // per thread: next op
	val    []uint64  // per object
	limit  []int32   // per thread: ops before it may run
	waits  [][]int32 // per object: its wait ops by threshold
	next   []int32   // per object: the first of its waits above its value
	ready  []int32   // threads to advance
	enable []int32   // threads whose next op may be enabled at the checkpoint
	inEn   []bool

	// Undo log of a sweep: first-changed threads and objects, with their
	// values at the checkpoint.
	posStamp, valStamp []int32
	stamp              int32
	posLog             []int32
	posOld             []int32
	valLog             []int32
	valOld             []uint64
	nextOld            []int32
	wake               func(t int32) // queues t in a sweep
}

func newCheckpoint(f *form, trace []int32) *checkpoint {
	T, n := f.threads(), len(f.init)
	// The per-thread and per-object lists of int32 share one slab.
	ints := make([]int32, 3*T+2*n)
	carve := func(k int) []int32 {
		c := ints[:k:k]
		ints = ints[k:]
		return c
	}
	c := &checkpoint{f: f, trace: trace,
		pos: carve(T), val: append([]uint64(nil), f.init...),
		limit: carve(T), inEn: make([]bool, T),
		waits:    make([][]int32, n),
		posStamp: carve(T), valStamp: carve(n),
	}
	copy(c.pos, f.start[:T])
	c.wake = func(t int32) { c.ready = append(c.ready, t) }
	for t := range T {
		c.limit[t] = f.start[t+1]
		c.markEnabled(int32(t))
	}
	for x, k := range f.kind {
		if k == kWait {
			c.waits[f.obj[x]] = append(c.waits[f.obj[x]], int32(x))
		}
	}
	c.next = carve(n)
	for o, ws := range c.waits {
		slices.SortFunc(ws, func(a, b int32) int { return cmpU64(f.val[a], f.val[b]) })
		for int(c.next[o]) < len(ws) && f.val[ws[c.next[o]]] <= c.val[o] {
			c.next[o]++
		}
	}
	return c
}

// useCheckpoints lets execution-order sweeps start from checkpoints; tests
// turn it off to compare.
var useCheckpoints = true

// markEnabled notes thread t as possibly able to move at the checkpoint.
func (c *checkpoint) markEnabled(t int32) {
	if !c.inEn[t] && c.pos[t] < c.f.start[t+1] {
		c.inEn[t] = true
		c.enable = append(c.enable, t)
	}
}

// woken calls fn for every thread parked at a wait on o whose threshold
// the value just passed (from next[o] up to the value to).
func (c *checkpoint) woken(o int32, to uint64, fn func(t int32)) {
	f := c.f
	ws := c.waits[o]
	i := c.next[o]
	for ; int(i) < len(ws) && f.val[ws[i]] <= to; i++ {
		if t := f.opThread[ws[i]]; c.pos[t] == ws[i] {
			fn(t)
		}
	}
	c.next[o] = i
}

// advanceTo applies the greedy run's ops before trace position p.
func (c *checkpoint) advanceTo(p int) {
	f := c.f
	for ; c.at < p; c.at++ {
		x := c.trace[c.at]
		t := f.opThread[x]
		c.pos[t] = x + 1
		c.markEnabled(t)
		if f.kind[x] == kAdd {
			o := f.obj[x]
			c.val[o] = satAdd(c.val[o], f.val[x])
			c.woken(o, c.val[o], c.markEnabled)
		}
	}
}

func (c *checkpoint) setPos(t, x int32) {
	if c.posStamp[t] != c.stamp {
		c.posStamp[t] = c.stamp
		c.posLog = append(c.posLog, t)
		c.posOld = append(c.posOld, c.pos[t])
	}
	c.pos[t] = x
}

func (c *checkpoint) add(o int32, v uint64) {
	if c.valStamp[o] != c.stamp {
		c.valStamp[o] = c.stamp
		c.valLog = append(c.valLog, o)
		c.valOld = append(c.valOld, c.val[o])
		c.nextOld = append(c.nextOld, c.next[o])
	}
	c.val[o] = satAdd(c.val[o], v)
	c.woken(o, c.val[o], c.wake)
}

// run advances threads until none can move.
func (c *checkpoint) run() {
	f := c.f
	for len(c.ready) > 0 {
		t := c.ready[len(c.ready)-1]
		c.ready = c.ready[:len(c.ready)-1]
		x, end := c.pos[t], min(c.limit[t], f.start[t+1])
		for x < end {
			if f.kind[x] == kWait && c.val[f.obj[x]] < f.val[x] {
				break
			}
			c.setPos(t, x+1)
			if f.kind[x] == kAdd {
				c.add(f.obj[x], f.val[x])
			}
			x++
		}
	}
}

// sweep runs the withhold-runs of thread u from the checkpoint (which must
// hold no op of u), asks about each query, and undoes the sweep.
func (c *checkpoint) sweep(u int32, qs []query, ask func(q query, executed func(x int32) bool)) {
	f := c.f
	c.stamp++
	c.posLog, c.posOld, c.valLog, c.valOld, c.nextOld = c.posLog[:0], c.posOld[:0], c.valLog[:0], c.valOld[:0], c.nextOld[:0]
	executed := func(x int32) bool { return c.pos[f.opThread[x]] > x }
	c.limit[u] = f.start[u]
	// Threads that may move at the checkpoint. Those parked at a wait the
	// checkpoint does not satisfy leave the list: the add that satisfies
	// it marks them again.
	keep := c.enable[:0]
	for _, t := range c.enable {
		x := c.pos[t]
		if x < f.start[t+1] && (f.kind[x] != kWait || c.val[f.obj[x]] >= f.val[x]) {
			keep = append(keep, t)
			c.ready = append(c.ready, t)
		} else {
			c.inEn[t] = false
		}
	}
	c.enable = keep
	c.run()
	for _, q := range qs {
		if c.limit[u] != q.at {
			c.limit[u] = q.at
			c.ready = append(c.ready, u)
			c.run()
		}
		ask(q, executed)
	}
	// Undo.
	c.limit[u] = f.start[u+1]
	for i, t := range c.posLog {
		c.pos[t] = c.posOld[i]
	}
	for i, o := range c.valLog {
		c.val[o], c.next[o] = c.valOld[i], c.nextOld[i]
	}
}

// checkpointSweeps sweeps every thread with queries in the order of its
// first op in the greedy run, each from the checkpoint before that op.
func checkpointSweeps(ctx context.Context, f *form, trace []int32, todo map[int32][]query, ask func(q query, executed func(x int32) bool)) error {
	if len(todo) == 0 {
		return nil
	}
	first := make([]int32, f.threads())
	for i := range first {
		first[i] = -1
	}
	for i, x := range trace {
		if t := f.opThread[x]; first[t] < 0 {
			first[t] = int32(i)
		}
	}
	threads := sortedThreads(todo)
	slices.SortStableFunc(threads, func(a, b int32) int { return int(first[a] - first[b]) })
	c := newCheckpoint(f, trace)
	for _, u := range threads {
		if err := ctx.Err(); err != nil {
			return err
		}
		qs := todo[u]
		slices.SortFunc(qs, func(a, b query) int { return int(a.at - b.at) })
		c.advanceTo(int(first[u]))
		c.sweep(u, qs, ask)
	}
	return nil
}
