package schedule

import "errors"

// The failures checkScopeRace reports, made once (see Exhibits).
var (
	errScopeNoThread  = errors.New("a task of the witness has no thread")
	errScopeOneThread = errors.New("both tasks run on one thread")
	errScopeOrdered   = errors.New("no cta-scoped operation of one task meets an operation of the other on its object unordered")
)

// checkScopeRace confirms a race.scope witness: after the trace, an
// operation of task a and one of task b, on different threads and on one
// counter or semaphore, at least one modifying it and at least one
// cta-scoped, have both been reached with neither happening before the
// other's reaching (docs/SEMANTICS.md).
func checkScopeRace(p *Program, st *State, a, b int) error {
	f := st.form
	ta, tb := st.threadOf(a), st.threadOf(b)
	if ta < 0 || tb < 0 {
		return errScopeNoThread
	}
	if ta == tb {
		return errScopeOneThread
	}
	at := st.eventIndex()
	for i, x := range f.Threads[ta].Ops {
		if int(x.Task) != a || !syncAccess(x) {
			continue
		}
		for j, y := range f.Threads[tb].Ops {
			if int(y.Task) != b || !syncAccess(y) || !sameObject(x, y) {
				continue
			}
			if !modifies(x) && !modifies(y) || x.Scope != ScopeCTA && y.Scope != ScopeCTA {
				continue
			}
			if !st.reached(ta, i) || !st.reached(tb, j) {
				continue
			}
			if st.beforeReach(at, ta, i, tb, j) || st.beforeReach(at, tb, j, ta, i) {
				continue
			}
			return nil
		}
	}
	return errScopeOrdered
}

// syncAccess reports whether op reads or writes a counter or semaphore.
func syncAccess(op Op) bool {
	switch op.Kind {
	case OpWait, OpSignal, OpAcquire, OpRelease:
		return true
	}
	return false
}

func isSemaphoreOp(op Op) bool { return op.Kind == OpAcquire || op.Kind == OpRelease }

func sameObject(x, y Op) bool { return isSemaphoreOp(x) == isSemaphoreOp(y) && x.Object == y.Object }

// modifies reports whether op writes its sync object (a wait only reads).
func modifies(op Op) bool { return op.Kind != OpWait }

// threadOf returns the thread that runs task t, or -1.
func (s *State) threadOf(t int) int {
	if w := s.p.Tasks[t].Worker; w != Dynamic {
		return int(w)
	}
	for th := s.form.Workers; th < len(s.form.Threads); th++ {
		if int(s.form.Threads[th].Task) == t {
			return th
		}
	}
	return -1
}

// running reports whether thread th runs: a started worker, or a dynamic
// task that has been claimed.
func (s *State) running(th int) bool {
	if th < s.form.Workers {
		return th < s.Started
	}
	return s.Pos[th] > 0
}

// reached reports whether thread th's k-th operation has executed or is
// the next operation of a running thread.
func (s *State) reached(th, k int) bool {
	pos := int(s.Pos[th])
	return pos > k || pos == k && s.running(th) && !s.Finished(th)
}

// eventIndex maps (thread, step) to the trace index of that event.
func (s *State) eventIndex() func(th, k int) int {
	idx := make([][]int32, len(s.form.Threads))
	for i, ev := range s.trace {
		idx[ev.Thread] = append(idx[ev.Thread], int32(i))
	}
	return func(th, k int) int {
		if k < 0 || k >= len(idx[th]) {
			return -1
		}
		return int(idx[th][k])
	}
}

// beforeReach reports whether operation i of thread tx, executed, happens
// before thread ty's operation preceding j (so before ty reached j).
func (s *State) beforeReach(at func(th, k int) int, tx, i, ty, j int) bool {
	ex, ep := at(tx, i), at(ty, j-1)
	return ex >= 0 && ep >= 0 && s.HappensBefore(ex, ep)
}
