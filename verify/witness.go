package verify

import (
	"fmt"
	"slices"
	"strconv"
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
	// The expanded trace: the witness's ordinary steps, with each hold and
	// advance replaced by the steps it stands for, and for each step the
	// witness event it comes from.
	x, origin := f.Witness, []int(nil)
	if schedule.Expands(f.Witness) {
		x, origin = expand(m, f.Witness)
	}
	from := func(k int) int {
		if origin == nil {
			return k
		}
		return origin[k]
	}
	ops := make([]schedule.Op, len(x)) // Task -1: the event names no op
	objs := make([]int, len(x))        // objKey of the op's object, or -1
	vals := make([]uint64, len(x))
	replayed := true
	okUpTo := len(x)    // steps [0, okUpTo) replay
	var overflows []int // the steps that overflow a counter first
	for k, e := range x {
		th, st := int(e.Thread), int(e.Step)
		ops[k].Task, objs[k] = -1, -1
		if e.IsStep() && th < len(form.Threads) && st < len(form.Threads[th].Ops) {
			ops[k] = form.Threads[th].Ops[st]
			objs[k] = objKey(p, ops[k])
		}
		if replayed {
			over := ops[k].Kind == schedule.OpSignal && m.Overflowed[ops[k].Object]
			if m.Step(e) != nil {
				replayed, okUpTo = false, k
			} else {
				if objs[k] >= 0 {
					vals[k] = objectValue(&m.State, ops[k])
				}
				if ops[k].Kind == schedule.OpSignal && !over && m.Overflowed[ops[k].Object] {
					overflows = append(overflows, k)
				}
			}
		}
	}
	if replayed {
		a.st = &m.State
	}
	// step annotates step k of the expanded trace.
	step := func(k int) ReportEvent {
		e := x[k]
		ev := ReportEvent{Thread: e.Thread, Step: e.Step}
		if ops[k].Task < 0 {
			return ev
		}
		op := ops[k]
		th, st := int(e.Thread), int(e.Step)
		ev.ThreadName = form.ThreadName(p, th)
		ev.Task = p.Tasks[op.Task].Name
		op.Task = -1 // Describe then leaves the task out
		ev.Op = p.Describe(op)
		ev.Object = objectName(p, op)
		ev.Path = a.stepPath(form, th, st)
		if ev.Object != "" && k < okUpTo {
			v := vals[k]
			ev.Value = &v
		}
		return ev
	}
	marked := make([]bool, len(x))
	roles := make([]string, len(x))
	mark := func(k int, role string) {
		marked[k] = true
		if role != "" {
			roles[k] = role
		}
	}
	lastOf := func(keep func(k int) bool) int {
		for k := len(x) - 1; k >= 0; k-- {
			if keep(k) {
				return k
			}
		}
		return -1
	}
	heldMatter := map[int]bool{} // threads whose holds matter
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
			heldMatter[th] = true
			if k := lastOf(func(k int) bool { return int(x[k].Thread) == th && int(ops[k].Task) == t }); k >= 0 {
				mark(k, "")
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
		for k, op := range ops {
			if op.Kind == schedule.OpBegin && slices.Contains(f.Tasks, int(op.Task)) {
				mark(k, "")
			}
		}
		for _, t := range f.Tasks {
			if th := threadOf(form, p, t); th >= 0 {
				heldMatter[th] = true
			}
		}
	case f.Code == CodeCounterOverflow:
		// The finding's own overflow: the first by its task, else the
		// first of a counter its task signals, else the last (a
		// witness of ordinary steps ends at its counter's overflow).
		at := -1
		if len(f.Tasks) > 0 {
			t := f.Tasks[0]
			if i := slices.IndexFunc(overflows, func(k int) bool { return int(ops[k].Task) == t }); i >= 0 {
				at = overflows[i]
			} else if i := slices.IndexFunc(overflows, func(k int) bool { return signalsCounter(&p.Tasks[t], ops[k].Object) }); i >= 0 {
				at = overflows[i]
			}
		}
		if at < 0 && len(overflows) > 0 {
			at = overflows[len(overflows)-1]
		}
		if at >= 0 {
			mark(at, "signal")
		}
	case fam == "deadlock" || f.Code == CodeOccupancy:
		if !replayed {
			break
		}
		for th := range form.Threads {
			if m.Finished(th) {
				continue
			}
			if k := lastOf(func(k int) bool { return int(x[k].Thread) == th }); k >= 0 {
				mark(k, "")
			}
			pos := int(m.Pos[th])
			blocked := form.Threads[th].Ops[pos]
			if obj := objKey(p, blocked); obj >= 0 {
				// The last update of what it waits for.
				if k := lastOf(func(k int) bool { return objs[k] == obj }); k >= 0 {
					mark(k, "")
				}
			}
			task := blocked.Task
			addLoc(Location{Path: a.stepPath(form, th, pos), Task: p.Tasks[task].Name, Role: "stuck"})
		}
	}
	if origin == nil {
		events := make([]ReportEvent, len(x))
		for k := range x {
			events[k] = step(k)
			events[k].Marked = marked[k]
			if roles[k] != "" && events[k].Path != "" {
				addLoc(Location{Path: events[k].Path, Task: events[k].Task, Role: roles[k]})
			}
		}
		rf.Witness = events
		return
	}
	// A witness with macro events: each ordinary event as above, each
	// hold and advance described, an advance with the spans of the
	// threads it moves and the marked steps it runs.
	events := make([]ReportEvent, len(f.Witness))
	k := 0
	for i, e := range f.Witness {
		switch {
		case e.IsHold():
			events[i] = a.holdEvent(form, e)
			events[i].Marked = heldMatter[int(e.Thread)]
		case e.IsAdvance():
			ev := ReportEvent{Thread: e.Thread, Step: e.Step, Advance: true}
			spans := map[int32]int{}
			for ; k < len(x) && from(k) == i; k++ {
				th := x[k].Thread
				j, ok := spans[th]
				if !ok {
					j = len(ev.Spans)
					spans[th] = j
					ev.Spans = append(ev.Spans, ReportSpan{Thread: th, ThreadName: form.ThreadName(p, int(th)), From: x[k].Step})
				}
				ev.Spans[j].To = x[k].Step + 1
				ev.Executed++
				if marked[k] {
					in := step(k)
					in.Marked = true
					ev.Marks = append(ev.Marks, in)
					ev.Marked = true
					if roles[k] != "" && in.Path != "" {
						addLoc(Location{Path: in.Path, Task: in.Task, Role: roles[k]})
					}
				}
			}
			slices.SortFunc(ev.Spans, func(a, b ReportSpan) int { return int(a.Thread) - int(b.Thread) })
			ev.Op = fmt.Sprintf("advance: %s steps of %s threads", thousands(ev.Executed), thousands(len(ev.Spans)))
			events[i] = ev
			continue
		default:
			if k < len(x) && from(k) == i {
				events[i] = step(k)
				events[i].Marked = marked[k]
				if roles[k] != "" && events[i].Path != "" {
					addLoc(Location{Path: events[i].Path, Task: events[i].Task, Role: roles[k]})
				}
				k++
			} else {
				events[i] = ReportEvent{Thread: e.Thread, Step: e.Step}
			}
		}
		for k < len(x) && from(k) == i {
			k++
		}
	}
	rf.Witness = events
}

// expand replays a witness with macro events on a clone of m and returns
// its expanded trace, each step with the index of the witness event it
// comes from; a witness that stops replaying is expanded up to there.
func expand(m *schedule.Machine, w []schedule.Event) (x []schedule.Event, origin []int) {
	c := m.Clone()
	for i, e := range w {
		if c.Step(e) != nil {
			if e.IsStep() {
				// Kept, unreplayed, for the annotation.
				x = append(slices.Clone(c.Trace()), e)
				for len(origin) < len(x) {
					origin = append(origin, i)
				}
			}
			break
		}
		for n := len(c.Trace()); len(origin) < n; {
			origin = append(origin, i)
		}
	}
	if x == nil {
		x = c.Trace()
	}
	return x, origin
}

// holdEvent annotates a hold: the held thread and the step it stops
// before.
func (a *annotator) holdEvent(form *schedule.Form, e schedule.Event) ReportEvent {
	p := a.p
	ev := ReportEvent{Thread: e.Thread, Step: e.Step}
	th, at := int(e.Thread), e.HoldAt()
	if th >= len(form.Threads) {
		return ev
	}
	ev.ThreadName = form.ThreadName(p, th)
	ops := form.Threads[th].Ops
	if at >= len(ops) {
		ev.Op = "hold after its last step"
		return ev
	}
	op := ops[at]
	ev.Task = p.Tasks[op.Task].Name
	ev.Path = a.stepPath(form, th, at)
	op.Task = -1
	ev.Op = fmt.Sprintf("hold before step %d (%s)", at, p.Describe(op))
	return ev
}

// signalsCounter reports whether task t signals counter c.
func signalsCounter(t *schedule.Task, c int32) bool {
	for _, list := range [2][]schedule.Step{t.Before, t.After} {
		for _, s := range list {
			if s.Kind == schedule.Signal && s.Object == c {
				return true
			}
		}
	}
	return false
}

// objKey numbers the sync object op touches across kinds (counters,
// barriers, semaphores), or -1.
func objKey(p *schedule.Program, op schedule.Op) int {
	nc, nb := len(p.Counters), len(p.Barriers)
	switch op.Kind {
	case schedule.OpWait, schedule.OpSignal:
		return int(op.Object)
	case schedule.OpArrive, schedule.OpAwait:
		return nc + int(op.Object)
	case schedule.OpAcquire, schedule.OpRelease:
		return nc + nb + int(op.Object)
	}
	return -1
}

// thousands renders n with commas between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
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
