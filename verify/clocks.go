package verify

import (
	"context"
	"math"
	"slices"
	"sync"

	"github.com/megaproof/megaproof/internal/faults"
)

// Proof clocks: one pass over the greedy run in its order computes, for
// every operation, how long a prefix of each chain of threads must precede
// it in a relaxed system where only some waits wait:
//
//   - waits that need every add of their object (all-joins, threshold =
//     init + every increment) join the clocks of all those adds;
//   - partial waits whose first crossing can only be made by a set of adds
//     that are each necessary (epoch counters) join those adds;
//   - awaits of a well-formed barrier (every participant only syncs, the
//     same number of times, and parties = participants) join the arrivals
//     of their generation and all before it;
//   - a wait on a counter that only one thread adds to joins the clock of
//     the add that first lifts the counter to its threshold (that thread's
//     adds run in its program order, so the first j of them run before
//     the wait in every execution, j the fewest whose sum reaches it); in
//     hb mode the latest releasing add among those j (rings, credits and
//     the counter form of single-acquirer semaphores are the common case);
//   - every other wait is ignored, and so is residency.
//
// Ignoring a wait only makes more executions possible, so what these clocks
// order is ordered in the real program: they prove pairs, never refute
// them. In hb mode only synchronizing edges count (release points to
// acquire points), so what they order is ordered by happens-before. Pairs
// they cannot prove go to the exact withhold-run sweeps.
//
// A chain is a static worker, or a sequence of dynamic threads each proven
// to follow all of the chain before it, so a clock component still counts
// a prefix.
//
// A join that can grow no more (every add of an all-join ran, every
// arrival of a barrier generation, every add of an epoch crossing) is
// registered as final, and a thread's clock is kept sparse — a final join
// as its base plus its own component — for as long as what it joins
// includes its base. A join that already includes the base of a sparse
// clock takes that clock's add by one component. Layered programs then
// cost a vector operation per layer, not per task.
//
// Without dynamic threads, the chains of a part (threads that share no
// counter or barrier with the others, transitively) are consecutive, and
// a clock of one of its threads names no other chain: every join, copy and
// kept clock of its threads covers the part's chains only, so independent
// pipelines cost their own size, not the program's.

// maxClockThreads bounds the static workers given clock components.
const maxClockThreads = 1024

// proveOrdered marks, for every query (a, b) with a's body before b's in
// the greedy run, whether the clocks prove a before b. It returns false if
// the program has too many threads for clocks.
func proveOrdered(f *form, trace []int32, hb bool, qs []query, proven []bool) bool {
	return proveOrderedCtx(context.Background(), f, trace, hb, qs, proven)
}

// proveOrderedCtx is proveOrdered that stops early, having proved less,
// once ctx is done.
func proveOrderedCtx(ctx context.Context, f *form, trace []int32, hb bool, qs []query, proven []bool) bool {
	cp := newClockPassCtx(ctx, f, hb)
	if cp == nil {
		return false
	}
	defer cp.release()
	first, byLate := queriesByLate(qs, len(f.p.Tasks))
	cp.run(trace, func(b int32) bool {
		for _, i := range byLate[first[b]:first[b+1]] {
			if cp.precedes(f.task[qs[i].at]) {
				proven[i] = true
			}
		}
		return true
	})
	return true
}

// clockPass computes the proof clocks in one pass over the greedy run.
type clockPass struct {
	f  *form
	hb bool

	level      []uint64 // per op: an add's highest threshold its thread waited for on the object before it (nil: all 0)
	adds       []int    // with level nil, per counter: its adds
	minAmt     []uint64 // with level nil, per counter: its smallest add
	byObj      [][]lvlAdd
	prefixSum  [][]uint64
	prefixMin  [][]uint64
	wellFormed []bool
	leveled    []bool        // counters that some wait can prefix-join
	crossN     map[int32]int // partial waits that can prefix-join -> adds in their crossing
	soloAdd    []int32       // per wait op: the add of a one-thread counter whose clock it joins, or -1 (nil: none)
	soloNeed   []bool        // per op: some wait joins this add's clock (nil: none)
	K          int           // clock components
	chainOf    []int32       // per thread: its chain, -1 not yet placed, or unplaced
	lo, hi     []int32       // per thread: the chains its clock can name (its part's), [lo, hi)
	base       []int32       // per thread: chain position of its first op
	part       []int32       // per thread: its part's representative, once computed (see parts)
	cur        []tclock      // per thread: its clock during run
	finals     [][]int32     // joins that can grow no more, by id
	finalInc   []int32       // per final join: a final join it includes, or -1
	t          int32         // the thread of the body being visited
	sc         *clockScratch // memory a finished pass handed back, for run
	ctx        context.Context
	err        error // ctx's error, if it stopped run

	// The per-thread lists of a small program, in the pass's own
	// allocation: those newClockPassCtx sets, and run's clocks (its first
	// run's).
	lists0  [4 * smallThreads]int32
	cur0    [smallThreads]tclock
	active0 [smallThreads]bool
}

type lvlAdd struct{ lvl, amt uint64 }

// clockScratch is memory that one clock pass's run leaves to the next:
// the vectors of its joins and the threads' clocks. Passes run one after
// another on programs of about the same size (a batch of programs, the
// passes of one program), so run takes it instead of allocating, and the
// memory is already mapped and cached. Nothing a pass returns refers to
// it: release hands it back once the pass is done.
type clockScratch struct {
	vecs   []int32 // the joins' vectors, carved K at a time
	want   int     // cells the joins of the last run took (vecs is made this large)
	cur    []tclock
	active []bool
	lists  []int32 // the per-thread lists of newClockPassCtx
}

// maxScratchCells bounds the join cells a scratch keeps for the next pass
// (1 MiB): a larger run allocates as it would without one, its
// allocations being few for their size, and keeps no more memory alive.
const maxScratchCells = 1 << 18

var clockScratches = sync.Pool{New: func() any { return new(clockScratch) }}

// clockPasses holds passes that were released, for newClockPassCtx to
// take again (see engines).
var clockPasses = sync.Pool{New: func() any { return new(clockPass) }}

// release hands the pass and its scratch back; nothing may use the pass,
// or any list it holds, after it. Until it is taken again (or the pool is
// emptied by a collection), it keeps what it refers to alive.
func (cp *clockPass) release() {
	if cp == nil {
		return
	}
	if cp.sc != nil {
		clear(cp.sc.cur[:cap(cp.sc.cur)]) // keep no vector of this pass alive
		clockScratches.Put(cp.sc)
	}
	cp.sc = nil
	clockPasses.Put(cp) // newClockPassCtx clears it
}

// newClockPass prepares the pass, or returns nil if the program has too
// many static workers for clocks.
func newClockPass(f *form, hb bool) *clockPass { return newClockPassCtx(context.Background(), f, hb) }

// ctxEvery is how many operations the pass handles between checks of its
// context.
const ctxEvery = 1 << 14

// newClockPassCtx is newClockPass that also returns nil once ctx is done;
// the pass it returns stops at ctx too (see clockPass.err).
func newClockPassCtx(ctx context.Context, f *form, hb bool) *clockPass {
	if f.workers > maxClockThreads {
		return nil
	}
	T := f.threads()
	cp := clockPasses.Get().(*clockPass)
	*cp = clockPass{f: f, hb: hb, ctx: ctx}
	tick := 0
	canceled := func() bool {
		if tick++; tick%ctxEvery == 0 {
			return ctx.Err() != nil
		}
		return false
	}
	// A partial wait also joins when its threshold can only first be
	// crossed by a set of adds that are each necessary. An add that comes
	// after a wait of its own thread on the same counter with threshold ≥ t
	// runs only once the value has reached t, so the first crossing of t is
	// made by adds whose thread waited for less (their "level" is below t);
	// if removing any one of those leaves too little, every one of them runs
	// before the first crossing, in every execution. (Epoch counters shared
	// across layers are the common case.)
	var level []uint64 // per op, allocated at the first add of a nonzero level
	{
		last := make([]uint64, len(f.init))
		var touched []int32
		for t := 0; t < T; t++ {
			for x := f.start[t]; x < f.start[t+1]; x++ {
				if canceled() {
					return nil
				}
				o := f.obj[x]
				switch f.kind[x] {
				case kWait:
					if !f.is(x, fBarrier) && f.val[x] > last[o] {
						if last[o] == 0 {
							touched = append(touched, o)
						}
						last[o] = f.val[x]
					}
				case kAdd:
					if last[o] != 0 {
						if level == nil {
							level = make([]uint64, len(f.kind))
						}
						level[x] = last[o]
					}
				}
			}
			for _, o := range touched {
				last[o] = 0
			}
			touched = touched[:0]
		}
	}
	cp.level = level
	if level == nil {
		// Every add is of level 0: a crossing is made by all adds of the
		// counter, and only their count and smallest amount matter.
		cp.adds = make([]int, f.nc)
		cp.minAmt = make([]uint64, f.nc)
		for o := range cp.minAmt {
			cp.minAmt[o] = ^uint64(0)
		}
		for x, k := range f.kind {
			if k == kAdd && !f.is(int32(x), fBarrier) {
				o := f.obj[x]
				cp.adds[o]++
				cp.minAmt[o] = min(cp.minAmt[o], f.val[x])
			}
		}
	} else {
		// Per counter: its adds' levels in order, with prefix sums and
		// minima of the amounts.
		byObj := make([][]lvlAdd, f.nc)
		for x, k := range f.kind {
			if k == kAdd && !f.is(int32(x), fBarrier) {
				byObj[f.obj[x]] = append(byObj[f.obj[x]], lvlAdd{level[x], f.val[x]})
			}
		}
		cp.prefixSum = make([][]uint64, f.nc)
		cp.prefixMin = make([][]uint64, f.nc)
		if ctx.Err() != nil {
			return nil
		}
		for o, l := range byObj {
			slices.SortFunc(l, func(a, b lvlAdd) int { return cmpU64(a.lvl, b.lvl) })
			ps, pm := make([]uint64, len(l)+1), make([]uint64, len(l)+1)
			ps[0], pm[0] = f.init[o], ^uint64(0)
			for i, e := range l {
				ps[i+1], pm[i+1] = satAdd(ps[i], e.amt), min(pm[i], e.amt)
			}
			cp.prefixSum[o], cp.prefixMin[o] = ps, pm
		}
		cp.byObj = byObj
	}
	cp.wellFormed = wellFormedBarriers(f)
	cp.leveled = make([]bool, f.nc)
	for x, k := range f.kind {
		if canceled() {
			return nil
		}
		if k == kWait && !f.is(int32(x), fBarrier) && f.val[x] != f.total[f.obj[x]] {
			if n := cp.crossing(int32(x)); n > 0 {
				cp.leveled[f.obj[x]] = true
				if cp.crossN == nil {
					cp.crossN = make(map[int32]int)
				}
				cp.crossN[int32(x)] = n
			}
		}
	}
	if clockSoloJoins && !cp.soloJoins() {
		return nil
	}
	// Static workers with ops own the first chains, in order; a worker
	// without ops has none (launches of many workers whose tasks are all
	// dynamic would otherwise carry a component per idle worker).
	// The per-thread lists share one slab.
	var lists []int32
	switch {
	case T <= smallThreads:
		// A small pass lives in its own allocation and takes no scratch.
		lists = cp.lists0[:4*T]
	default:
		cp.sc = clockScratches.Get().(*clockScratch)
		sc := cp.sc
		if cap(sc.lists) < 4*T {
			sc.lists = make([]int32, 4*T)
		}
		lists = sc.lists[:4*T]
		clear(lists)
	}
	cp.chainOf, cp.base = lists[:T:T], lists[T:2*T:2*T]
	cp.lo, cp.hi = lists[2*T:3*T:3*T], lists[3*T:]
	static := 0
	for _, t := range cp.partOrder() {
		if f.start[t+1] > f.start[t] {
			cp.chainOf[t] = int32(static)
			static++
		} else {
			cp.chainOf[t] = unplaced
		}
	}
	cp.K = static + min(maxDynamicChains, T-f.workers)
	for t := f.workers; t < T; t++ {
		cp.chainOf[t] = -1
	}
	for t := range T {
		cp.hi[t] = int32(cp.K)
	}
	if clockParts && T == f.workers && !f.semaphore {
		// Without dynamic threads, a part's clocks only ever name its
		// own chains, which are consecutive: every vector operation of
		// one of its threads can stay within them.
		part := cp.parts()
		first := make([]int32, T)
		last := make([]int32, T)
		for t := range first {
			first[t], last[t] = int32(cp.K), 0
		}
		for t := range T {
			if ch := cp.chainOf[t]; ch >= 0 {
				r := part[t]
				first[r], last[r] = min(first[r], ch), max(last[r], ch+1)
			}
		}
		for t := range T {
			if r := part[t]; first[r] < last[r] {
				cp.lo[t], cp.hi[t] = first[r], last[r]
			} else {
				cp.lo[t], cp.hi[t] = 0, 0
			}
		}
	}
	return cp
}

// clockSoloJoins joins the waits of one-thread counters (soloJoins); tests
// turn it off to compare.
var clockSoloJoins = true

// clockWindow keeps vector operations to the chains given out so far;
// tests turn it off to compare.
var clockWindow = true

// clockParts keeps each part's clocks to its own chains; tests turn it off
// to compare.
var clockParts = true

// parts returns, per thread, a representative of its part: threads that
// share a counter or barrier (transitively) are in one part.
func (cp *clockPass) parts() []int32 {
	if cp.part != nil {
		return cp.part
	}
	f := cp.f
	T := f.threads()
	up := make([]int32, T)
	for t := range up {
		up[t] = int32(t)
	}
	find := func(t int32) int32 {
		for up[t] != t {
			up[t] = up[up[t]]
			t = up[t]
		}
		return t
	}
	owner := make([]int32, len(f.init)) // per object: a thread using it, or -1
	for o := range owner {
		owner[o] = -1
	}
	for x, k := range f.kind {
		if k != kWait && k != kAdd {
			continue
		}
		o, t := f.obj[x], f.opThread[x]
		if owner[o] < 0 {
			owner[o] = t
			continue
		}
		if a, b := find(owner[o]), find(t); a != b {
			up[max(a, b)] = min(a, b)
		}
	}
	for t := range up {
		up[t] = find(int32(t))
	}
	cp.part = up
	return up
}

// partOrder lists the static workers part by part (each part in worker
// order, parts in the order of their first worker), so that a part's
// chains are consecutive; with dynamic threads, in worker order.
func (cp *clockPass) partOrder() []int32 {
	f := cp.f
	order := make([]int32, f.workers)
	for t := range order {
		order[t] = int32(t)
	}
	if !clockParts || f.threads() != f.workers || f.semaphore {
		return order
	}
	part := cp.parts()
	slices.SortStableFunc(order, func(a, b int32) int { return int(part[a] - part[b]) })
	return order
}

// soloJoins finds, for every wait on a counter that only one thread adds
// to and that the all-joins and crossings do not join, the add whose
// clock it joins (see the pass's doc). It returns false once ctx is done.
func (cp *clockPass) soloJoins() bool {
	f := cp.f
	solo := make([]int32, f.nc) // per counter: the one thread adding to it, -1 none, -2 several
	for o := range solo {
		solo[o] = -1
	}
	for x, k := range f.kind {
		if k != kAdd || f.is(int32(x), fBarrier) {
			continue
		}
		switch o, t := f.obj[x], f.opThread[x]; {
		case solo[o] == -1:
			solo[o] = t
		case solo[o] != t:
			solo[o] = -2
		}
	}
	// Per counter, its adds in program order (op order within one thread)
	// with the value after each.
	var adds [][]int32
	var after [][]uint64
	for x, k := range f.kind {
		if x%ctxEvery == ctxEvery-1 && cp.ctx.Err() != nil {
			return false
		}
		if k != kWait || f.is(int32(x), fBarrier) || solo[f.obj[x]] < 0 {
			continue
		}
		o := f.obj[x]
		if f.val[x] <= f.init[o] || f.val[x] > f.total[o] || cp.joins(int32(x)) || cp.crossN[int32(x)] > 0 {
			continue // passes at once, never, or joined already
		}
		if cp.hb && f.link[x] != int32(x) {
			continue
		}
		if adds == nil {
			adds, after = make([][]int32, f.nc), make([][]uint64, f.nc)
			for y, k := range f.kind {
				if k == kAdd && !f.is(int32(y), fBarrier) && solo[f.obj[y]] >= 0 {
					p := f.obj[y]
					v := f.init[p]
					if n := len(after[p]); n > 0 {
						v = after[p][n-1]
					}
					adds[p] = append(adds[p], int32(y))
					after[p] = append(after[p], satAdd(v, f.val[y]))
				}
			}
		}
		j, _ := slices.BinarySearch(after[o], f.val[x]) // the first add reaching the threshold
		if cp.hb {
			// The latest releasing add up to it: the wait synchronizes with
			// every releasing add executed before it.
			for j >= 0 && f.link[adds[o][j]] != adds[o][j] {
				j--
			}
			if j < 0 {
				continue
			}
		}
		if cp.soloAdd == nil {
			cp.soloAdd = make([]int32, len(f.kind))
			for i := range cp.soloAdd {
				cp.soloAdd[i] = -1
			}
			cp.soloNeed = make([]bool, len(f.kind))
		}
		a := adds[o][j]
		cp.soloAdd[x] = a
		cp.soloNeed[a] = true
	}
	return true
}

// crossing returns, for a partial wait, how many adds make its first
// crossing (0 if they are not each necessary).
func (cp *clockPass) crossing(x int32) int {
	f := cp.f
	o := f.obj[x]
	if cp.level == nil {
		n := cp.adds[o]
		// A saturated sum (2^64-1) minus an add says nothing of what the
		// other adds reach: no crossing is known then (see joins).
		if n == 0 || f.total[o] < f.val[x] || f.total[o] == math.MaxUint64 || f.total[o]-cp.minAmt[o] >= f.val[x] && !faults.On(faults.KOfNAsNOfN) {
			return 0
		}
		return n
	}
	l := cp.byObj[o]
	n := len(l)
	if n > 0 && l[n-1].lvl >= f.val[x] {
		n, _ = slices.BinarySearchFunc(l, f.val[x], func(e lvlAdd, t uint64) int { return cmpU64(e.lvl, t) })
	}
	if n == 0 || cp.prefixSum[o][n] < f.val[x] || cp.prefixSum[o][n] == math.MaxUint64 || cp.prefixSum[o][n]-cp.prefixMin[o][n] >= f.val[x] && !faults.On(faults.KOfNAsNOfN) {
		return 0
	}
	return n
}

// joins reports whether wait x joins the clocks of the adds it waits for:
// all-joins of counters, awaits of well-formed barriers.
func (cp *clockPass) joins(x int32) bool {
	f := cp.f
	o := f.obj[x]
	if cp.hb && f.link[x] != x {
		return false
	}
	if f.is(x, fBarrier) {
		return cp.wellFormed[o-int32(f.nc)]
	}
	// A total that saturated (sums are kept at 2^64-1) is no sum of every
	// add: the value may reach 2^64-1 before the last add, so a wait for it
	// needs no particular one (a total of exactly 2^64-1 loses the join
	// too, which only proves less).
	return f.val[x] == f.total[o] && f.total[o] != math.MaxUint64 || faults.On(faults.PartialJoinAll)
}

// levelOf is add x's level.
func (cp *clockPass) levelOf(x int32) uint64 {
	if cp.level == nil {
		return 0
	}
	return cp.level[x]
}

// pos is thread t's chain prefix through op x.
func (cp *clockPass) pos(t, x int32) int32 { return cp.base[t] + x - cp.f.start[t] + 1 }

// precedes reports, while visiting a body, whether the clocks prove task
// a's body (which ran earlier in the greedy run) before it.
func (cp *clockPass) precedes(a int32) bool {
	f := cp.f
	ta := f.taskTh[a]
	ca := cp.chainOf[ta]
	return ca >= 0 && cp.component(cp.t, ca) >= cp.pos(ta, f.body[a])
}

func joinClock(dst, src []int32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = max(dst[i], v)
	}
}

// tclock is a thread's clock. Dense, it is a vector; sparse, it is a final
// join (base: an id among the pass's finals, or -1 for none) with the
// thread's own chain component raised to own. Threads that only pass
// all-joins, barrier generations and epoch crossings, and add to joins
// that already include their base, stay sparse: a join costs one
// component instead of K.
type tclock struct {
	vec  []int32
	base int32
	own  int32
}

// acc is a join of adds' clocks: its vector (nil before the first), a
// final join it includes (inc, -1 for none), and its id among the finals
// once registered (-1 before).
type acc struct {
	vec   []int32
	inc   int32
	final int32
	used  bool // some clock was joined in
}

// run visits the greedy run in order and calls visit at every body, with
// the body's task, while the body's clock is current (precedes reads it).
// visit returns false to stop the pass early.
func (cp *clockPass) run(trace []int32, visit func(task int32) bool) {
	f := cp.f
	T := f.threads()
	K := cp.K
	chainOf, base := cp.chainOf, cp.base
	chainLen := make([]int32, 0, K)
	var freeChains []int32 // dynamic chains whose last thread has finished
	for t := 0; t < f.workers; t++ {
		if ch := chainOf[t]; ch >= 0 {
			for int(ch) >= len(chainLen) {
				chainLen = append(chainLen, 0)
			}
			chainLen[ch] = f.start[t+1] - f.start[t]
		}
	}
	lo, hi := cp.lo, cp.hi
	// w cuts a vector to the chains thread t's clock can name and that
	// exist so far: a component of a chain not yet given out is 0 in every
	// vector (only a placed thread's ops set components, of its own chain),
	// so joins and copies need not touch it. With dynamic threads K counts
	// one chain per thread, of which layered programs give out a few.
	w := func(t int32, v []int32) []int32 { return v[lo[t]:min(hi[t], int32(len(chainLen)))] }
	if !clockWindow {
		w = func(t int32, v []int32) []int32 { return v[lo[t]:hi[t]] }
	}
	var cur []tclock
	var active []bool
	sc := cp.sc
	switch {
	case T <= smallThreads && cp.cur == nil:
		cur, active = cp.cur0[:T:T], cp.active0[:T:T]
	case sc != nil && cp.cur == nil:
		if cap(sc.cur) < T {
			sc.cur, sc.active = make([]tclock, T), make([]bool, T)
		}
		cur, active = sc.cur[:T:T], sc.active[:T:T]
		clear(cur)
		clear(active)
	default:
		cur, active = make([]tclock, T), make([]bool, T)
	}
	for t := range cur {
		cur[t].base = -1
		active[t] = t < f.workers
	}
	cp.cur = cur
	var pool [][]int32
	newVec := func() []int32 {
		if n := len(pool); n > 0 {
			v := pool[n-1]
			pool = pool[:n-1]
			if clockWindow {
				clear(v[:len(chainLen)]) // zero beyond: see w
			} else {
				clear(v)
			}
			return v
		}
		return make([]int32, K)
	}
	// Join of the adds on each object; for barriers, per generation; for
	// counters, also per level of the adds, with how many have run. A join
	// that can grow no more is registered as final: sparse clocks take it
	// as their base.
	cp.finals, cp.finalInc = cp.finals[:0], cp.finalInc[:0]
	newAcc := func() acc { return acc{inc: -1, final: -1} }
	joinOf := make([]acc, len(f.init))
	addsLeft := make([]int32, len(f.init)) // adds not yet run: joinOf is final at 0
	for o := range joinOf {
		joinOf[o] = newAcc()
	}
	for x, k := range f.kind {
		if k == kAdd {
			addsLeft[f.obj[x]]++
		}
	}
	// Buckets of a leveled counter: one per distinct level of its adds, in
	// increasing level, with how many adds it has and how many have run.
	type bucket struct {
		lvl       uint64
		size, ran int
		acc
	}
	buckets := make([][]bucket, f.nc)
	for o := range buckets {
		if !cp.leveled[o] {
			continue
		}
		if cp.level == nil {
			buckets[o] = []bucket{{lvl: 0, size: cp.adds[o], acc: newAcc()}}
			continue
		}
		for _, e := range cp.byObj[o] {
			if n := len(buckets[o]); n > 0 && buckets[o][n-1].lvl == e.lvl {
				buckets[o][n-1].size++
			} else {
				buckets[o] = append(buckets[o], bucket{lvl: e.lvl, size: 1, acc: newAcc()})
			}
		}
	}
	// below is the number of buckets of counter o under threshold v.
	below := func(o int32, v uint64) int {
		i, _ := slices.BinarySearchFunc(buckets[o], v, func(b bucket, l uint64) int { return cmpU64(b.lvl, l) })
		return i
	}
	bucketOf := func(o int32, lvl uint64) *bucket {
		return &buckets[o][below(o, lvl)]
	}
	// The running fold of each leveled counter's complete buckets, from
	// the lowest level up: a threshold at or above it extends it by the
	// buckets in between, so a counter's prefix joins cost each bucket
	// once, not once per threshold. Thresholds below it are joined from
	// the buckets, within scratch (components joined); past it they are
	// not joined, which only proves less.
	type foldState struct {
		upto int   // buckets folded
		last int32 // the final registered for the fold as it is, or -1
		acc
	}
	folds := make([]foldState, f.nc)
	for o := range folds {
		folds[o] = foldState{last: -1, acc: newAcc()}
	}
	scratch := 8*len(f.kind) + 1<<20
	prefix := map[[2]uint64]int32{} // (counter, threshold) -> final join of the buckets below
	barGen := make([][]acc, f.nb)   // barrier -> generation -> join
	genRan := make([][]int, f.nb)   // barrier -> generation -> arrivals run
	var genOf []int32               // per barrier arrive: its generation
	if f.nb > 0 {
		genOf = make([]int32, len(f.kind))
		seen := map[[2]int32]int32{}
		for x := range f.kind {
			if f.is(int32(x), fBarrier) && f.kind[x] == kAdd {
				k := [2]int32{f.opThread[x], f.obj[x]}
				seen[k]++
				genOf[x] = seen[k]
			}
		}
	}
	// dense makes thread t's clock a vector.
	dense := func(t int32) []int32 {
		c := &cur[t]
		if c.vec == nil {
			c.vec = newVec()
			if c.base >= 0 {
				copy(w(t, c.vec), w(t, cp.finals[c.base]))
			}
			if ch := chainOf[t]; ch >= 0 {
				c.vec[ch] = max(c.vec[ch], c.own)
			}
			c.base, c.own = -1, 0
		}
		return c.vec
	}
	// contribute joins thread t's clock (or, for a relaxed add, what
	// precedes its fence) into a: one component when a already includes
	// the base of t's sparse clock.
	// Joins live as long as the pass: their vectors are carved from
	// chunks of up to 64.
	var accSlab []int32
	accChunk := 2
	var reused []int32 // the scratch's join cells not yet carved
	taken := 0         // join cells carved, from the scratch or not
	if sc != nil {
		if cap(sc.vecs) < sc.want {
			sc.vecs = make([]int32, sc.want)
		}
		reused = sc.vecs[:cap(sc.vecs)]
		defer func() {
			if taken <= maxScratchCells {
				sc.want = max(sc.want, taken)
			}
		}()
	}
	accVec := func() []int32 {
		if K == 0 {
			return []int32{}
		}
		taken += K
		if len(reused) >= K {
			v := reused[:K:K]
			reused = reused[K:]
			clear(v)
			return v
		}
		if len(accSlab) < K {
			accChunk = min(64, 2*accChunk)
			accSlab = make([]int32, K*accChunk)
		}
		v := accSlab[:K:K]
		accSlab = accSlab[K:]
		return v
	}
	contribute := func(a *acc, t int32, relaxed []int32) {
		if a.vec == nil {
			a.vec = accVec()
		}
		c := &cur[t]
		switch {
		case relaxed != nil:
			joinClock(w(t, a.vec), w(t, relaxed))
			a.used = true
			return
		case c.vec != nil:
			joinClock(w(t, a.vec), w(t, c.vec))
			a.used = true
			return
		case c.base < 0 || c.base == a.inc:
		case !a.used:
			copy(w(t, a.vec), w(t, cp.finals[c.base]))
			a.inc = c.base
		default:
			joinClock(w(t, a.vec), w(t, cp.finals[c.base]))
			if a.inc < 0 {
				a.inc = c.base
			}
		}
		a.used = true
		if ch := chainOf[t]; ch >= 0 {
			a.vec[ch] = max(a.vec[ch], c.own)
		}
	}
	// final registers a join that can grow no more.
	final := func(a *acc) int32 {
		if a.final < 0 {
			a.final = int32(len(cp.finals))
			cp.finals = append(cp.finals, a.vec)
			cp.finalInc = append(cp.finalInc, a.inc)
		}
		return a.final
	}
	// adopt joins final join id into thread t's clock: a sparse clock whose
	// base the join includes takes the join as its base.
	adopt := func(t, id int32) {
		if c := &cur[t]; c.vec == nil && (c.base < 0 || c.base == id || c.base == cp.finalInc[id]) {
			c.base = id
			return
		}
		joinClock(w(t, dense(t)), w(t, cp.finals[id]))
	}
	// Snapshots of the clocks of the adds some wait of a one-thread
	// counter joins, within a budget of vector cells (past it such waits
	// are not joined, which only proves less).
	var snaps []tclock // per op (nil: none); base -2: not taken
	var snapArena []int32
	snapCells := 32*len(f.kind) + 1<<22
	if cp.soloNeed != nil {
		snaps = make([]tclock, len(f.kind))
		for i := range snaps {
			snaps[i].base = -2
		}
	}
	hb := cp.hb
	for i, x := range trace {
		if i%ctxEvery == ctxEvery-1 {
			if cp.err = cp.ctx.Err(); cp.err != nil {
				return
			}
		}
		t := f.opThread[x]
		if !active[t] { // a dynamic thread's first op
			active[t] = true
			cur[t] = tclock{base: -1}
		}
		switch f.kind[x] {
		case kWait:
			if !cp.joins(x) {
				break
			}
			o := f.obj[x]
			if f.is(x, fBarrier) {
				b := o - int32(f.nc)
				// In a well-formed barrier every arrival of a generation
				// follows its thread's await of the one before, so the
				// join of a generation includes every earlier one.
				gen := int(f.val[x] / uint64(f.p.Barriers[b].Parties))
				if gen >= len(barGen[b]) || barGen[b][gen].vec == nil {
					break
				}
				if genRan[b][gen] == f.p.Barriers[b].Parties {
					adopt(t, final(&barGen[b][gen]))
				} else {
					joinClock(w(t, dense(t)), w(t, barGen[b][gen].vec))
				}
				break
			}
			switch {
			case joinOf[o].vec == nil:
			case addsLeft[o] == 0:
				adopt(t, final(&joinOf[o]))
			default:
				joinClock(w(t, dense(t)), w(t, joinOf[o].vec))
			}
		}
		if f.kind[x] == kWait && !f.is(x, fBarrier) && cp.leveled[f.obj[x]] && (!hb || f.link[x] == x) && f.val[x] != f.total[f.obj[x]] {
			if n := cp.crossN[x]; n > 0 {
				o := f.obj[x]
				key := [2]uint64{uint64(o), f.val[x]}
				id, ok := prefix[key]
				if !ok {
					k := below(o, f.val[x])
					bs := buckets[o]
					if fd := &folds[o]; k >= fd.upto {
						// Every add of the crossing ran before x, as it
						// must: the buckets below the threshold are
						// complete, and join the fold.
						for fd.upto < k && bs[fd.upto].ran == bs[fd.upto].size {
							if bk := &bs[fd.upto]; bk.vec != nil {
								if fd.vec == nil {
									fd.vec = make([]int32, K)
								} else if fd.last >= 0 {
									fd.vec = slices.Clone(fd.vec) // the registered one is final
									fd.inc, fd.final = fd.last, -1
								}
								fd.last = -1
								joinClock(w(t, fd.vec), w(t, bk.vec))
								if fd.inc < 0 {
									fd.inc = bk.inc
								}
							}
							fd.upto++
						}
						if fd.upto == k && fd.vec != nil {
							if fd.last < 0 {
								fd.final = -1
								fd.last = final(&fd.acc)
							}
							id, ok = fd.last, true
						}
					} else if scratch >= k*K {
						scratch -= k * K
						a := newAcc()
						a.vec = make([]int32, K)
						for i := range bs[:k] {
							if bk := &bs[i]; bk.vec != nil {
								joinClock(w(t, a.vec), w(t, bk.vec))
								if a.inc < 0 {
									a.inc = bk.inc
								}
							}
						}
						id, ok = final(&a), true
					}
					if ok {
						prefix[key] = id
					}
				}
				if ok {
					adopt(t, id)
				}
			}
		}
		if f.kind[x] == kWait && cp.soloAdd != nil && cp.soloAdd[x] >= 0 {
			a := cp.soloAdd[x]
			if sn := snaps[a]; sn.base != -2 {
				if sn.vec != nil {
					joinClock(w(t, dense(t)), sn.vec) // a snapshot holds the adding thread's part, which is t's
				} else {
					if sn.base >= 0 {
						adopt(t, sn.base)
					}
					if ch := chainOf[f.opThread[a]]; ch >= 0 && cp.component(t, ch) < sn.own {
						if c := &cur[t]; c.vec == nil && chainOf[t] == ch {
							c.own = sn.own
						} else {
							dense(t)[ch] = sn.own
						}
					}
				}
			}
		}
		if chainOf[t] < 0 && (f.kind[x] == kAdd || f.kind[x] == kBody || x == f.start[t+1]-1) {
			// Place the dynamic thread, once its leading waits have joined
			// what precedes them (clocks only learn of a thread through its
			// adds, which come no earlier): after a chain wholly before it.
			// The chains that finished first are the likeliest to be
			// wholly before it; only so many are tried.
			k := int32(-1)
			for i, ch := range freeChains[:min(len(freeChains), maxChainTries)] {
				if cp.component(t, ch) >= chainLen[ch] {
					k = ch
					freeChains = append(freeChains[:i], freeChains[i+1:]...)
					break
				}
			}
			switch {
			case k >= 0:
			case len(chainLen) < K:
				k = int32(len(chainLen))
				chainLen = append(chainLen, 0)
			default:
				// No component left: the thread still passes on what it
				// learned, but no clock will ever name its own ops.
				k = unplaced
			}
			if k >= 0 {
				// The own component of a sparse clock is its chain's:
				// settle what the clock held there first.
				own := cp.component(t, k)
				chainOf[t] = k
				if c := &cur[t]; c.vec == nil {
					c.own = own
				}
				base[t] = chainLen[k]
				chainLen[k] += f.start[t+1] - f.start[t]
			} else {
				chainOf[t] = k
			}
		}
		ch := chainOf[t]
		if ch == -1 {
			continue // a leading wait or fence of a dynamic thread not yet placed
		}
		switch f.kind[x] {
		case kAdd:
			o := f.obj[x]
			addsLeft[o]--
			if !f.is(x, fBarrier) && cp.leveled[o] {
				bucketOf(o, cp.levelOf(x)).ran++
			}
			if f.is(x, fBarrier) {
				b, g := o-int32(f.nc), int(genOf[x])
				for len(barGen[b]) <= g {
					barGen[b] = append(barGen[b], newAcc())
					genRan[b] = append(genRan[b], 0)
				}
				genRan[b][g]++
			}
			if hb && f.link[x] < 0 {
				break
			}
			if ch >= 0 {
				cp.setOwn(t, ch, cp.pos(t, x))
			} else if hb && f.link[x] != x {
				break // what preceded the fence is not known apart
			}
			var relaxed []int32
			if ch >= 0 && hb && f.link[x] != x {
				// A relaxed add releases what precedes its fence.
				relaxed = make([]int32, K)
				copy(w(t, relaxed), w(t, dense(t)))
				relaxed[ch] = cp.pos(t, f.link[x])
			}
			if f.is(x, fBarrier) {
				contribute(&barGen[o-int32(f.nc)][genOf[x]], t, relaxed)
				break
			}
			contribute(&joinOf[o], t, relaxed)
			if cp.leveled[o] {
				contribute(&bucketOf(o, cp.levelOf(x)).acc, t, relaxed)
			}
		case kBody:
			cp.t = t
			if !visit(f.task[x]) {
				return
			}
		}
		if ch >= 0 {
			cp.setOwn(t, ch, cp.pos(t, x))
		}
		if snaps != nil && cp.soloNeed[x] {
			c := cur[t]
			if c.vec != nil {
				n := len(w(t, c.vec)) // later windows are no shorter
				if snapCells >= n {
					snapCells -= n
					if len(snapArena) < n {
						snapArena = make([]int32, max(n, min(snapCells, 64*n)))
					}
					c.vec, snapArena = snapArena[:n:n], snapArena[n:]
					copy(c.vec, w(t, cur[t].vec))
					snaps[x] = c
				}
			} else {
				snaps[x] = c
			}
		}
		if int(t) >= f.workers && x == f.start[t+1]-1 {
			// The thread is done: its chain may take a successor.
			if ch >= 0 {
				freeChains = append(freeChains, ch)
			}
			if cur[t].vec != nil {
				pool = append(pool, cur[t].vec)
			}
			cur[t] = tclock{base: -1}
		}
	}
}

// component is thread t's clock at chain k.
func (cp *clockPass) component(t, k int32) int32 {
	c := &cp.cur[t]
	if c.vec != nil {
		return c.vec[k]
	}
	var v int32
	if c.base >= 0 {
		v = cp.finals[c.base][k]
	}
	if cp.chainOf[t] == k {
		v = max(v, c.own)
	}
	return v
}

// setOwn raises thread t's clock at its own chain ch to v.
func (cp *clockPass) setOwn(t, ch, v int32) {
	c := &cp.cur[t]
	if c.vec != nil {
		c.vec[ch] = v
	} else {
		c.own = v
	}
}

// queriesByLate lists the queries by their later task, as CSR: the
// queries of task t are byLate[first[t]:first[t+1]].
func queriesByLate(qs []query, tasks int) (first, byLate []int32) {
	first = make([]int32, tasks+1)
	for _, q := range qs {
		first[q.late+1]++
	}
	for i := 1; i < len(first); i++ {
		first[i] += first[i-1]
	}
	byLate = make([]int32, len(qs))
	fill := append([]int32(nil), first[:tasks]...)
	for i, q := range qs {
		byLate[fill[q.late]] = int32(i)
		fill[q.late]++
	}
	return first, byLate
}

// maxDynamicChains bounds the clock components given to chains of dynamic
// threads; threads beyond it get none (chainOf = unplaced). Tests lower it.
var maxDynamicChains = 2048

const unplaced = -2

// maxChainTries bounds the free chains a dynamic thread is tried on.
const maxChainTries = 64

// wellFormedBarriers reports, per barrier, whether every participant only
// syncs on it, all sync the same number of times, and the parties equal
// the participants.
func wellFormedBarriers(f *form) []bool {
	ok := make([]bool, f.nb)
	if f.nb == 0 {
		return ok
	}
	count := make([]map[int32]int, f.nb)
	arrives := make([]int, f.nb)
	awaits := make([]int, f.nb)
	for x := range f.kind {
		if !f.is(int32(x), fBarrier) {
			continue
		}
		b := f.obj[x] - int32(f.nc)
		if f.kind[x] == kAdd {
			if count[b] == nil {
				count[b] = map[int32]int{}
			}
			count[b][f.opThread[x]]++
			arrives[b]++
		} else {
			awaits[b]++
		}
	}
	for b := range ok {
		if arrives[b] != awaits[b] || len(count[b]) != f.p.Barriers[b].Parties {
			continue
		}
		n, same := -1, true
		for _, k := range count[b] {
			if n >= 0 && k != n {
				same = false
			}
			n = k
		}
		ok[b] = same
	}
	return ok
}
