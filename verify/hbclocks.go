package verify

import "slices"

// Composed happens-before clocks. An acquire wait w synchronizes, in every
// execution, with every releasing add that must execute before w (atomic
// adds continue release sequences). So with exact must-precede facts from
// one withhold-run sweep per releasing thread, one pass over the greedy run
// joins, at each acquire, the clocks of the latest such add of each thread.
// The result orders only what happens before in every execution: it proves
// pairs, never refutes them. It is what lets relaxed or cta-scoped
// synchronization on one edge leave every pair that does not depend on
// that edge proven without the taint game.

const maxHBClockCells = 1 << 24

func (v *verifier) proveHB(run *engine, qs []query, proven []bool) bool {
	f := v.f
	T := f.threads()
	if T > maxClockThreads {
		return false
	}
	// Acquiring waits, releasing adds, and the threads that release.
	waitIdx := make([]int32, len(f.kind))
	var waits, adds []int32
	releasers := make([]bool, T)
	for x := range f.kind {
		waitIdx[x] = -1
		switch {
		case f.kind[x] == kWait && f.link[x] >= 0:
			waitIdx[x] = int32(len(waits))
			waits = append(waits, int32(x))
		case f.kind[x] == kAdd && f.link[x] >= 0:
			adds = append(adds, int32(x))
			releasers[f.opThread[x]] = true
		}
	}
	if len(waits)*T > maxHBClockCells || len(adds)*T > maxHBClockCells {
		return false
	}
	// must[k*T+u]: how many of u's ops must run before acquiring wait k can.
	must := make([]int32, len(waits)*T)
	e := newEngine(f, false)
	e.firstAt = make([]int32, len(f.kind))
	for u := 0; u < T; u++ {
		if !releasers[u] {
			continue
		}
		for i := range e.firstAt {
			e.firstAt[i] = -1
		}
		e.reset()
		e.stamp = 0
		e.freeze(u, f.start[u])
		e.run()
		n := f.start[u+1] - f.start[u]
		for i := int32(0); i < n; i++ {
			e.stamp = i + 1
			e.thaw(u, f.start[u]+i+1)
			e.run()
		}
		for k, w := range waits {
			at := e.firstAt[w]
			if at < 0 {
				at = n + 1 // never: every op of u "must precede"
			}
			must[k*T+u] = at
		}
	}
	e.release()
	// Releasing adds of each (object, thread), in program order.
	slices.SortFunc(adds, func(a, b int32) int {
		if f.obj[a] != f.obj[b] {
			return int(f.obj[a] - f.obj[b])
		}
		if f.opThread[a] != f.opThread[b] {
			return int(f.opThread[a] - f.opThread[b])
		}
		return int(a - b)
	})
	addIdx := make([]int32, len(f.kind))
	for i, x := range adds {
		addIdx[x] = int32(i)
	}
	objFirst := make([]int32, len(f.init)+1) // adds of object o: adds[objFirst[o]:objFirst[o+1]]
	for _, x := range adds {
		objFirst[f.obj[x]+1]++
	}
	for o := 1; o < len(objFirst); o++ {
		objFirst[o] += objFirst[o-1]
	}
	clock := make([]int32, len(adds)*T) // per add: the clock of its release point
	cur := make([][]int32, T)
	fenceClock := make([][]int32, T) // per thread: clock at its latest cross fence
	pending := make([][]int32, T)    // per thread: joins owed to its next fence
	for t := range cur {
		cur[t] = make([]int32, T)
	}
	first, byLate := queriesByLate(qs, len(f.p.Tasks))
	joinInto := func(dst []int32, src []int32) {
		for i, x := range src {
			if x > dst[i] {
				dst[i] = x
			}
		}
	}
	// acquired joins into dst the clocks of the latest add of each thread
	// on w's object that must run before w.
	acquired := func(dst []int32, w int32) {
		o, k := f.obj[w], waitIdx[w]
		lo, hi := objFirst[o], objFirst[o+1]
		for lo < hi {
			u := f.opThread[adds[lo]]
			end := lo
			for end < hi && f.opThread[adds[end]] == u {
				end++
			}
			limit := f.start[u] + must[int(k)*T+int(u)] // ops of u before this index must run first
			// Latest add of u in [lo, end) with index < limit.
			j := lo + int32(slicesIndexBelow(adds[lo:end], limit))
			if j > lo {
				s := adds[j-1]
				joinInto(dst, clock[int(addIdx[s])*T:int(addIdx[s]+1)*T])
			}
			lo = end
		}
	}
	for _, x := range run.trace {
		t := f.opThread[x]
		c := cur[t]
		switch f.kind[x] {
		case kWait:
			if f.link[x] == x {
				acquired(c, x)
			} else if f.link[x] >= 0 {
				if pending[t] == nil {
					pending[t] = make([]int32, T)
				}
				acquired(pending[t], x)
			}
		case kFence:
			if f.is(x, fCross) {
				if pending[t] != nil {
					joinInto(c, pending[t])
				}
				c[t] = x - f.start[t] + 1
				if fenceClock[t] == nil {
					fenceClock[t] = make([]int32, T)
				}
				copy(fenceClock[t], c)
			}
		case kAdd:
			if f.link[x] < 0 {
				break
			}
			dst := clock[int(addIdx[x])*T : int(addIdx[x]+1)*T]
			if f.link[x] == x {
				c[t] = x - f.start[t] + 1
				copy(dst, c)
			} else {
				copy(dst, fenceClock[t])
			}
		case kBody:
			tk := f.task[x]
			for _, i := range byLate[first[tk]:first[tk+1]] {
				ea := f.body[f.task[qs[i].at]]
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

// slicesIndexBelow returns how many of the sorted ops are below limit.
func slicesIndexBelow(ops []int32, limit int32) int {
	i, _ := slices.BinarySearch(ops, limit)
	return i
}
