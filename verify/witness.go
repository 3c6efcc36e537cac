package verify

import (
	"slices"
	"strings"

	"github.com/megaproof/megaproof/schedule"
)

// events converts a trace of op indices into schedule events (normal form
// of schedule.Lower, where a body is a Begin and an End), then begins the
// bodies in flight (ops at which their threads stand).
func (f *form) events(trace []int32, inflight ...int32) []schedule.Event {
	step := make(map[int32]int32) // thread -> next schedule step
	out := make([]schedule.Event, 0, len(trace)+len(trace)/4+len(inflight))
	lowered := func(x int32) int32 {
		t := f.opThread[x]
		s, ok := step[t]
		if !ok {
			// Steps before x in its thread that are not in the trace cannot
			// exist: traces execute each thread in order from its start.
			s = 0
		}
		return s
	}
	for _, x := range trace {
		if f.is(x, fCheck) {
			continue // no step of the schedule
		}
		t := f.opThread[x]
		s := lowered(x)
		out = append(out, schedule.Event{Thread: t, Step: s})
		s++
		if f.kind[x] == kBody {
			out = append(out, schedule.Event{Thread: t, Step: s})
			s++
		}
		step[t] = s
	}
	for _, x := range inflight {
		t := f.opThread[x]
		out = append(out, schedule.Event{Thread: t, Step: lowered(x)})
		step[t] = lowered(x) + 1
	}
	return out
}

// staticFinding reports whether a finding of p takes no trace: the static
// codes, cooperative occupancy (a launch that cannot start) and
// inconclusive.
func staticFinding(p *schedule.Program, f *Finding) bool {
	switch f.Code {
	case CodeOutOfBounds, CodeReadonlyWrite, CodeOutputUnwritten, CodeInconclusive:
		return true
	case CodeOccupancy:
		l := p.Launch
		return f.Witness == nil && l.Cooperative && l.Workers > l.Capacity()
	}
	return strings.HasPrefix(f.Code, "invalid.")
}

// annotator renders one finding's witness and locations for a [Report].
type annotator struct {
	p   *schedule.Program
	loc schedule.Locator
	m   *schedule.Machine // replays the witness; nil for a finding without one
	st  *schedule.State   // the state the witness reaches, once replayed in full
}

// taskRole is what the i-th task of a finding does: for a race, "writer"
// when its writes overlap the other task's accesses and "reader"
// otherwise.
func taskRole(p *schedule.Program, f *Finding, i int) string {
	switch f.Code {
	case CodeRaceRAW, CodeRaceWAR, CodeRaceWAW, CodeRaceUnsynchronized:
		if len(f.Tasks) != 2 {
			return "access"
		}
		if writesOver(p, f.Tasks[i], f.Tasks[1-i]) {
			return "writer"
		}
		return "reader"
	case CodeReadonlyWrite:
		return "writer"
	case CodeUninitializedRead:
		return "reader"
	case CodeRaceScope, CodeOutOfBounds:
		return "access"
	case CodeCounterOverflow:
		return "signal"
	}
	if fam := Family(f.Code); fam == "deadlock" || fam == CodeOccupancy {
		return "stuck"
	}
	return ""
}

// writesOver reports whether a write of task a overlaps an access of task
// b, decided exactly by [schedule.Conflict] on the two footprints.
func writesOver(p *schedule.Program, a, b int) bool {
	q := *p
	q.Tasks = []schedule.Task{{Writes: p.Tasks[a].Writes}, {Reads: p.Tasks[b].Reads, Writes: p.Tasks[b].Writes}}
	return schedule.Conflict(&q, 0, 1)
}

// objectName names the sync object op touches, with its kind, or "".
func objectName(p *schedule.Program, op schedule.Op) string {
	switch op.Kind {
	case schedule.OpWait, schedule.OpSignal:
		return "counter " + p.Counters[op.Object].Name
	case schedule.OpArrive, schedule.OpAwait:
		return "barrier " + p.Barriers[op.Object].Name
	case schedule.OpAcquire, schedule.OpRelease:
		return "semaphore " + p.Semaphores[op.Object].Name
	}
	return ""
}

// objectValue is the value of op's object in s: a counter's value, a
// barrier's arrivals, a semaphore's tokens.
func objectValue(s *schedule.State, op schedule.Op) uint64 {
	switch op.Kind {
	case schedule.OpWait, schedule.OpSignal:
		return s.Counters[op.Object]
	case schedule.OpArrive, schedule.OpAwait:
		return s.Arrivals[op.Object]
	}
	return s.Tokens[op.Object]
}

// stepPath is the JSON path of operation s of thread th: its step's, or
// its task's for a body's Begin and End; "" without a locator.
func (a *annotator) stepPath(form *schedule.Form, th, s int) string {
	if a.loc == nil {
		return ""
	}
	task, after, j, ok := form.StepSource(a.p, th, s)
	switch {
	case !ok:
		return ""
	case j < 0:
		return a.loc.TaskPath(task)
	}
	return a.loc.StepPath(task, after, j)
}

// finding fills rf's locations and annotated witness from f.
func (a *annotator) finding(f *Finding, rf *ReportFinding) {
	p := a.p
	locs := map[Location]bool{}
	addLoc := func(l Location) {
		if l.Path != "" && !locs[l] {
			locs[l] = true
			rf.Locations = append(rf.Locations, l)
		}
	}
	for i, t := range f.Tasks {
		if t >= 0 && t < len(p.Tasks) && a.loc != nil {
			addLoc(Location{Path: a.loc.TaskPath(t), Task: p.Tasks[t].Name, Role: taskRole(p, f, i)})
		}
	}
	if dl, ok := a.loc.(schedule.DataLocator); ok {
		a.dataLocations(f, dl, addLoc)
	}
	if a.m == nil {
		return
	}
	m := a.m
	form := m.Form()
	events := make([]ReportEvent, len(f.Witness))
	ops := make([]schedule.Op, len(f.Witness)) // Task -1: the event names no op
	replayed := true
	overflowAt := -1
	for i, e := range f.Witness {
		ev := ReportEvent{Thread: e.Thread, Step: e.Step}
		th, s := int(e.Thread), int(e.Step)
		ops[i].Task = -1
		if th >= 0 && th < len(form.Threads) && s >= 0 && s < len(form.Threads[th].Ops) {
			op := form.Threads[th].Ops[s]
			ops[i] = op
			ev.ThreadName = form.ThreadName(p, th)
			ev.Task = p.Tasks[op.Task].Name
			op.Task = -1 // Describe then leaves the task out
			ev.Op = p.Describe(op)
			ev.Object = objectName(p, op)
			ev.Path = a.stepPath(form, th, s)
		}
		if replayed {
			over := ops[i].Kind == schedule.OpSignal && m.Overflowed[ops[i].Object]
			if m.Step(e) != nil {
				replayed = false
			} else {
				if ev.Object != "" {
					v := objectValue(&m.State, ops[i])
					ev.Value = &v
				}
				if ops[i].Kind == schedule.OpSignal && !over && m.Overflowed[ops[i].Object] {
					overflowAt = i // the last overflow: a counter's witness ends at its own
				}
			}
		}
		events[i] = ev
	}
	rf.Witness = events
	if replayed {
		a.st = &m.State
	}
	mark := func(i int, role string) {
		events[i].Marked = true
		if role != "" && events[i].Path != "" {
			addLoc(Location{Path: events[i].Path, Task: events[i].Task, Role: role})
		}
	}
	lastOf := func(keep func(i int) bool) int {
		for i := len(events) - 1; i >= 0; i-- {
			if keep(i) {
				return i
			}
		}
		return -1
	}
	switch fam := Family(f.Code); {
	case f.Code == CodeRaceScope:
		if !replayed {
			break
		}
		// Each task has reached its operation on the object: executed
		// it, or stands at it.
		for _, t := range f.Tasks {
			th := threadOf(form, p, t)
			if th < 0 {
				continue
			}
			if i := lastOf(func(i int) bool { return int(f.Witness[i].Thread) == th && int(ops[i].Task) == t }); i >= 0 {
				events[i].Marked = true
			}
			for _, s := range []int{int(m.Pos[th]), int(m.Pos[th]) - 1} {
				if s < 0 || s >= len(form.Threads[th].Ops) {
					continue
				}
				op := form.Threads[th].Ops[s]
				if int(op.Task) != t || (op.Kind != schedule.OpSignal && op.Kind != schedule.OpWait) {
					continue
				}
				role := "signal"
				if op.Kind == schedule.OpWait {
					role = "wait"
				}
				addLoc(Location{Path: a.stepPath(form, th, s), Task: p.Tasks[t].Name, Role: role})
				break
			}
		}
	case fam == "race" || f.Code == CodeUninitializedRead:
		for i, op := range ops {
			if op.Kind == schedule.OpBegin && slices.Contains(f.Tasks, int(op.Task)) {
				mark(i, "")
			}
		}
	case f.Code == CodeCounterOverflow:
		if overflowAt >= 0 {
			mark(overflowAt, "signal")
		}
	case fam == "deadlock" || f.Code == CodeOccupancy:
		if !replayed {
			break
		}
		for th := range form.Threads {
			if m.Finished(th) {
				continue
			}
			if i := lastOf(func(i int) bool { return int(f.Witness[i].Thread) == th }); i >= 0 {
				events[i].Marked = true
			}
			pos := int(m.Pos[th])
			blocked := form.Threads[th].Ops[pos]
			if obj := objectName(p, blocked); obj != "" {
				// The last update of what it waits for.
				if i := lastOf(func(i int) bool { return events[i].Object == obj }); i >= 0 {
					events[i].Marked = true
				}
			}
			task := blocked.Task
			addLoc(Location{Path: a.stepPath(form, th, pos), Task: p.Tasks[task].Name, Role: "stuck"})
		}
	}
}

// threadOf is the thread of form that runs task t, or -1.
func threadOf(form *schedule.Form, p *schedule.Program, t int) int {
	if w := p.Tasks[t].Worker; w != schedule.Dynamic {
		return int(w)
	}
	for th := form.Workers; th < len(form.Threads); th++ {
		if int(form.Threads[th].Task) == t {
			return th
		}
	}
	return -1
}

// dataLocations adds the buffers, accesses and launch a static finding
// is about, where the locator has paths for them.
func (a *annotator) dataLocations(f *Finding, dl schedule.DataLocator, add func(Location)) {
	p := a.p
	switch f.Code {
	case CodeOutOfBounds, CodeReadonlyWrite:
		if len(f.Tasks) == 0 {
			return
		}
		t := f.Tasks[0]
		for _, write := range []bool{false, true} {
			list := p.Tasks[t].Reads
			if write {
				list = p.Tasks[t].Writes
			}
			for k, acc := range list {
				b := p.Buffers[acc.Buffer]
				lo, hi := acc.Extent()
				switch {
				case f.Code == CodeOutOfBounds && (lo < 0 || hi < 0 || uint64(hi) > b.Size):
					add(Location{Path: dl.AccessPath(t, write, k), Task: p.Tasks[t].Name, Role: "access"})
				case f.Code == CodeReadonlyWrite && write && b.Kind.ReadOnly():
					add(Location{Path: dl.AccessPath(t, write, k), Task: p.Tasks[t].Name, Role: "writer"})
					add(Location{Path: dl.BufferPath(int(acc.Buffer)), Role: "buffer"})
				}
			}
		}
	case CodeOutputUnwritten:
		if bi, _, _, ok := unwrittenBuffer(p, f); ok {
			add(Location{Path: dl.BufferPath(bi), Role: "buffer"})
		}
	case CodeOccupancy:
		add(Location{Path: dl.LaunchPath(), Role: "launch"})
	}
}
