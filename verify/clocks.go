package verify

import "slices"

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

// maxClockThreads bounds the static workers given clock components.
const maxClockThreads = 1024

// proveOrdered marks, for every query (a, b) with a's body before b's in
// the greedy run, whether the clocks prove a before b. It returns false if
// the program has too many threads for clocks.
func proveOrdered(f *form, trace []int32, hb bool, qs []query, proven []bool) bool {
	cp := newClockPass(f, hb)
	if cp == nil {
		return false
	}
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

	level      []uint64 // per add: highest threshold its thread waited for on the object before it
	byObj      [][]lvlAdd
	prefixSum  [][]uint64
	prefixMin  [][]uint64
	wellFormed []bool
	leveled    []bool        // counters that some wait can prefix-join
	crossN     map[int32]int // partial waits that can prefix-join -> adds in their crossing
	K          int           // clock components
	chainOf    []int32       // per thread: its chain, -1 not yet placed, or unplaced
	base       []int32       // per thread: chain position of its first op
	c          []int32       // the clock of the op being visited
}

type lvlAdd struct{ lvl, amt uint64 }

// newClockPass prepares the pass, or returns nil if the program has too
// many static workers for clocks.
func newClockPass(f *form, hb bool) *clockPass {
	if f.workers > maxClockThreads {
		return nil
	}
	T := f.threads()
	cp := &clockPass{f: f, hb: hb}
	// A partial wait also joins when its threshold can only first be
	// crossed by a set of adds that are each necessary. An add that comes
	// after a wait of its own thread on the same counter with threshold ≥ t
	// runs only once the value has reached t, so the first crossing of t is
	// made by adds whose thread waited for less (their "level" is below t);
	// if removing any one of those leaves too little, every one of them runs
	// before the first crossing, in every execution. (Epoch counters shared
	// across layers are the common case.)
	level := make([]uint64, len(f.kind))
	{
		last := make([]uint64, len(f.init))
		var touched []int32
		for t := 0; t < T; t++ {
			for x := f.start[t]; x < f.start[t+1]; x++ {
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
					level[x] = last[o]
				}
			}
			for _, o := range touched {
				last[o] = 0
			}
			touched = touched[:0]
		}
	}
	cp.level = level
	// Per counter: its adds' levels in order, with prefix sums and minima of
	// the amounts.
	byObj := make([][]lvlAdd, f.nc)
	for x, k := range f.kind {
		if k == kAdd && !f.is(int32(x), fBarrier) {
			byObj[f.obj[x]] = append(byObj[f.obj[x]], lvlAdd{level[x], f.val[x]})
		}
	}
	cp.prefixSum = make([][]uint64, f.nc)
	cp.prefixMin = make([][]uint64, f.nc)
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
	cp.wellFormed = wellFormedBarriers(f)
	cp.leveled = make([]bool, f.nc)
	cp.crossN = make(map[int32]int)
	for x, k := range f.kind {
		if k == kWait && !f.is(int32(x), fBarrier) && f.val[x] != f.total[f.obj[x]] {
			if n := cp.crossing(int32(x)); n > 0 {
				cp.leveled[f.obj[x]] = true
				cp.crossN[int32(x)] = n
			}
		}
	}
	cp.K = f.workers + min(maxDynamicChains, T-f.workers)
	cp.chainOf = make([]int32, T)
	cp.base = make([]int32, T)
	for t := 0; t < f.workers; t++ {
		cp.chainOf[t] = int32(t)
	}
	for t := f.workers; t < T; t++ {
		cp.chainOf[t] = -1
	}
	return cp
}

// crossing returns, for a partial wait, how many adds make its first
// crossing (0 if they are not each necessary).
func (cp *clockPass) crossing(x int32) int {
	f := cp.f
	o := f.obj[x]
	l := cp.byObj[o]
	n := len(l)
	if n > 0 && l[n-1].lvl >= f.val[x] {
		n, _ = slices.BinarySearchFunc(l, f.val[x], func(e lvlAdd, t uint64) int { return cmpU64(e.lvl, t) })
	}
	if n == 0 || cp.prefixSum[o][n] < f.val[x] || cp.prefixSum[o][n]-cp.prefixMin[o][n] >= f.val[x] {
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
	return f.val[x] == f.total[o]
}

// pos is thread t's chain prefix through op x.
func (cp *clockPass) pos(t, x int32) int32 { return cp.base[t] + x - cp.f.start[t] + 1 }

// precedes reports, while visiting a body, whether the clocks prove task
// a's body (which ran earlier in the greedy run) before it.
func (cp *clockPass) precedes(a int32) bool {
	f := cp.f
	ta := f.taskTh[a]
	ca := cp.chainOf[ta]
	return ca >= 0 && cp.c[ca] >= cp.pos(ta, f.body[a])
}

func joinClock(dst, src []int32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = max(dst[i], v)
	}
}

// run visits the greedy run in order and calls visit at every body, with
// the body's task, while cp.c is the body's clock (precedes reads it).
// visit returns false to stop the pass early.
func (cp *clockPass) run(trace []int32, visit func(task int32) bool) {
	f := cp.f
	T := f.threads()
	K := cp.K
	chainOf, base := cp.chainOf, cp.base
	chainLen := make([]int32, 0, K)
	var freeChains []int32 // dynamic chains whose last thread has finished
	for t := 0; t < f.workers; t++ {
		chainLen = append(chainLen, f.start[t+1]-f.start[t])
	}
	cur := make([][]int32, T)
	for t := 0; t < f.workers; t++ {
		cur[t] = make([]int32, K)
	}
	var pool [][]int32
	// Join of the adds on each object; for barriers, per generation; for
	// counters, also per level of the adds, with how many have run.
	joinOf := make([][]int32, len(f.init))
	type bucket struct {
		lvl uint64
		ran int
		vec []int32
	}
	buckets := make([][]bucket, f.nc)
	bucketOf := func(o int32, lvl uint64) *bucket {
		bs := buckets[o]
		i, found := slices.BinarySearchFunc(bs, lvl, func(b bucket, l uint64) int { return cmpU64(b.lvl, l) })
		if !found {
			bs = slices.Insert(bs, i, bucket{lvl: lvl, vec: make([]int32, K)})
			buckets[o] = bs
		}
		return &buckets[o][i]
	}
	barGen := make([][][]int32, f.nb) // barrier -> generation -> join
	genOf := make([]int32, len(f.kind))
	if f.nb > 0 {
		seen := map[[2]int32]int32{}
		for x := range f.kind {
			if f.is(int32(x), fBarrier) && f.kind[x] == kAdd {
				k := [2]int32{f.opThread[x], f.obj[x]}
				seen[k]++
				genOf[x] = seen[k]
			}
		}
	}
	hb := cp.hb
	for _, x := range trace {
		t := f.opThread[x]
		c := cur[t]
		if c == nil { // a dynamic thread's first op
			if n := len(pool); n > 0 {
				c, pool = pool[n-1], pool[:n-1]
				clear(c)
			} else {
				c = make([]int32, K)
			}
			cur[t] = c
		}
		switch f.kind[x] {
		case kWait:
			if !cp.joins(x) {
				break
			}
			o := f.obj[x]
			if f.is(x, fBarrier) {
				b := o - int32(f.nc)
				gen := int(f.val[x] / uint64(f.p.Barriers[b].Parties))
				for g := 1; g <= gen && g < len(barGen[b]); g++ {
					if barGen[b][g] != nil {
						joinClock(c, barGen[b][g])
					}
				}
			} else if joinOf[o] != nil {
				joinClock(c, joinOf[o])
			}
		}
		if f.kind[x] == kWait && !f.is(x, fBarrier) && cp.leveled[f.obj[x]] && (!hb || f.link[x] == x) && f.val[x] != f.total[f.obj[x]] {
			if n := cp.crossN[x]; n > 0 {
				o := f.obj[x]
				ran := 0
				for i := range buckets[o] {
					if buckets[o][i].lvl < f.val[x] {
						ran += buckets[o][i].ran
					}
				}
				if ran == n { // every add of the crossing ran before x, as it must
					for i := range buckets[o] {
						if buckets[o][i].lvl < f.val[x] {
							joinClock(c, buckets[o][i].vec)
						}
					}
				}
			}
		}
		if chainOf[t] < 0 && (f.kind[x] == kAdd || f.kind[x] == kBody || x == f.start[t+1]-1) {
			// Place the dynamic thread, once its leading waits have joined
			// what precedes them (clocks only learn of a thread through its
			// adds, which come no earlier): after a chain wholly before it.
			k := int32(-1)
			for i, ch := range freeChains {
				if c[ch] >= chainLen[ch] {
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
			chainOf[t] = k
			if k >= 0 {
				base[t] = chainLen[k]
				chainLen[k] += f.start[t+1] - f.start[t]
			}
		}
		ch := chainOf[t]
		if ch == -1 {
			continue // a leading wait or fence of a dynamic thread not yet placed
		}
		switch f.kind[x] {
		case kAdd:
			if !f.is(x, fBarrier) && cp.leveled[f.obj[x]] {
				bucketOf(f.obj[x], cp.level[x]).ran++
			}
			if hb && f.link[x] < 0 {
				break
			}
			src := c
			if ch >= 0 {
				c[ch] = cp.pos(t, x)
				if hb && f.link[x] != x {
					// A relaxed add releases what precedes its fence.
					src = append([]int32(nil), c...)
					src[ch] = cp.pos(t, f.link[x])
				}
			} else if hb && f.link[x] != x {
				break // what preceded the fence is not known apart
			}
			o := f.obj[x]
			if f.is(x, fBarrier) {
				b := o - int32(f.nc)
				g := int(genOf[x])
				for len(barGen[b]) <= g {
					barGen[b] = append(barGen[b], nil)
				}
				if barGen[b][g] == nil {
					barGen[b][g] = make([]int32, K)
				}
				joinClock(barGen[b][g], src)
			} else {
				if joinOf[o] == nil {
					joinOf[o] = make([]int32, K)
				}
				joinClock(joinOf[o], src)
				if cp.leveled[o] {
					joinClock(bucketOf(o, cp.level[x]).vec, src)
				}
			}
		case kBody:
			cp.c = c
			if !visit(f.task[x]) {
				return
			}
		}
		if ch >= 0 {
			c[ch] = cp.pos(t, x)
		}
		if int(t) >= f.workers && x == f.start[t+1]-1 {
			// The thread is done: its chain may take a successor.
			if ch >= 0 {
				freeChains = append(freeChains, ch)
			}
			pool = append(pool, c)
			cur[t] = nil
		}
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
