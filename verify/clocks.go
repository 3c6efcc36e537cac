package verify

// Proof clocks: one pass over the greedy run in its order computes, for
// every operation, how long a prefix of each thread must precede it in a
// relaxed system where only some waits wait:
//
//   - waits that need every add of their object (all-joins, threshold =
//     init + every increment) join the clocks of all those adds;
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

const maxClockThreads = 1024

// proveOrdered marks, for every query (a, b) with a's body before b's in
// the greedy run, whether the clocks prove a before b. It returns false if
// the program has too many threads for clocks.
func proveOrdered(f *form, trace []int32, hb bool, qs []query, proven []bool) bool {
	T := f.threads()
	if T > maxClockThreads {
		return false
	}
	// Queries by the later task, as a CSR list.
	first := make([]int32, len(f.p.Tasks)+1)
	for _, q := range qs {
		first[q.late+1]++
	}
	for i := 1; i < len(first); i++ {
		first[i] += first[i-1]
	}
	byLate := make([]int32, len(qs))
	fill := append([]int32(nil), first[:len(first)-1]...)
	for i, q := range qs {
		byLate[fill[q.late]] = int32(i)
		fill[q.late]++
	}
	// Which waits join: all-joins of counters, awaits of well-formed barriers.
	wellFormed := wellFormedBarriers(f)
	joins := func(x int32) bool {
		o := f.obj[x]
		if hb && f.link[x] != x {
			return false
		}
		if f.is(x, fBarrier) {
			return wellFormed[o-int32(f.nc)]
		}
		return f.val[x] == f.total[o]
	}
	cur := make([][]int32, T)
	for t := range cur {
		cur[t] = make([]int32, T)
	}
	// Join of the adds on each object; for barriers, per generation.
	joinOf := make([][]int32, len(f.init))
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
	join := func(dst, src []int32) {
		for i, v := range src {
			if v > dst[i] {
				dst[i] = v
			}
		}
	}
	for _, x := range trace {
		t := f.opThread[x]
		c := cur[t]
		switch f.kind[x] {
		case kWait:
			if !joins(x) {
				break
			}
			o := f.obj[x]
			if f.is(x, fBarrier) {
				b := o - int32(f.nc)
				gen := int(f.val[x] / uint64(f.p.Barriers[b].Parties))
				for g := 1; g <= gen && g < len(barGen[b]); g++ {
					if barGen[b][g] != nil {
						join(c, barGen[b][g])
					}
				}
			} else if joinOf[o] != nil {
				join(c, joinOf[o])
			}
		case kAdd:
			if hb && f.link[x] < 0 {
				break
			}
			c[t] = x - f.start[t] + 1
			src := c
			if hb && f.link[x] != x {
				// A relaxed add releases what precedes its fence.
				src = append([]int32(nil), c...)
				src[t] = f.link[x] - f.start[t] + 1
			}
			o := f.obj[x]
			if f.is(x, fBarrier) {
				b := o - int32(f.nc)
				g := int(genOf[x])
				for len(barGen[b]) <= g {
					barGen[b] = append(barGen[b], nil)
				}
				if barGen[b][g] == nil {
					barGen[b][g] = make([]int32, T)
				}
				join(barGen[b][g], src)
			} else {
				if joinOf[o] == nil {
					joinOf[o] = make([]int32, T)
				}
				join(joinOf[o], src)
			}
		case kBody:
			tk := f.task[x]
			for _, i := range byLate[first[tk]:first[tk+1]] {
				q := qs[i]
				ea := f.body[f.task[q.at]]
				ta := f.opThread[ea]
				if c[ta] > ea-f.start[ta] {
					proven[i] = true
				}
			}
		}
		c[t] = x - f.start[t] + 1
	}
	return true
}

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
