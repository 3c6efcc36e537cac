package brute

import (
	"errors"
	"slices"

	"github.com/megaproof/megaproof/schedule"
)

// ErrBudget is returned when a program has more distinct states than the
// budget allows.
var ErrBudget = errors.New("brute: state budget exceeded")

// DefaultMaxStates is the budget of distinct states when Config.MaxStates
// is zero.
const DefaultMaxStates = 200000

// Config bounds the search.
type Config struct {
	MaxStates int
}

// Families returns the sorted finding families (the part of a code before
// the dot: "deadlock", "occupancy", "race", "uninitialized-read",
// "counter-overflow", "out-of-bounds", "readonly-write",
// "output-unwritten") that p exhibits, or ErrBudget.
func Families(p *schedule.Program, cfg Config) ([]string, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	max := cfg.MaxStates
	if max <= 0 {
		max = DefaultMaxStates
	}
	fam := map[string]bool{}
	static(p, fam)
	stuck, err := search(p, max, fam)
	if err != nil {
		return nil, err
	}
	if stuck {
		// A deadlock of the launch is a deadlock when the unbounded launch
		// (every worker resident, every dynamic task a thread of its own)
		// deadlocks too, and an occupancy problem otherwise.
		u, err := search(unbounded(p), max, nil)
		if err != nil {
			return nil, err
		}
		if u {
			fam["deadlock"] = true
		} else {
			fam["occupancy"] = true
		}
	}
	var out []string
	for f := range fam {
		out = append(out, f)
	}
	slices.Sort(out)
	return out, nil
}

// unbounded returns p with every worker resident from the start and every
// dynamic task pinned to a worker of its own: no residency, no dispatch.
func unbounded(p *schedule.Program) *schedule.Program {
	q := p.Clone()
	q.Launch.Cooperative = true
	for i := range q.Tasks {
		if !q.Tasks[i].Pinned() {
			q.Tasks[i].Worker = int32(q.Launch.Workers)
			q.Launch.Workers++
		}
	}
	q.Launch.SMs = max(q.Launch.SMs, q.Launch.Workers)
	return q
}

// search explores every reachable state of p and records, in fam (when
// not nil), the families found along the way. It reports whether some
// reachable state is stuck.
func search(p *schedule.Program, max int, fam map[string]bool) (stuck bool, err error) {
	m, err := schedule.NewMachine(p)
	if err != nil {
		return false, err
	}
	f := m.Form()
	seen := map[string]bool{m.Key(): true}
	work := []*schedule.Machine{m}
	scoped := scopePairs(p, f)
	if fam != nil {
		scopeRace(p, m, scoped, fam)
	}
	for len(work) > 0 {
		m := work[len(work)-1]
		work = work[:len(work)-1]
		moved := false
		for th := range f.Threads {
			if m.Enabled(th) != nil {
				continue
			}
			moved = true
			c := m.Clone()
			ev := schedule.Event{Thread: int32(th), Step: c.Pos[th]}
			if err := c.Step(ev); err != nil {
				return false, err
			}
			key := c.Key()
			if seen[key] {
				continue
			}
			if len(seen) >= max {
				return false, ErrBudget
			}
			seen[key] = true
			if fam != nil {
				judge(p, f, c, ev, scoped, fam)
			}
			work = append(work, c)
		}
		if !moved && !m.AllFinished() {
			stuck = true
		}
	}
	return stuck, nil
}

// judge records the families the state after event ev exhibits.
func judge(p *schedule.Program, f *schedule.Form, m *schedule.Machine, ev schedule.Event, scoped [][2]int, fam map[string]bool) {
	if slices.Contains(m.Overflowed, true) {
		fam["counter-overflow"] = true
	}
	op := f.Threads[ev.Thread].Ops[ev.Step]
	trace := m.Trace()
	if op.Kind == schedule.OpBegin {
		b := int(op.Task)
		bb, _ := m.BodyEvents(b)
		for a := range p.Tasks {
			if a == b || sameThread(p, a, b) || !schedule.Conflict(p, a, b) {
				continue
			}
			ba, ea := m.BodyEvents(a)
			if ba < 0 {
				continue
			}
			if ea < 0 || !m.HappensBefore(ea, bb) {
				fam["race"] = true
			}
		}
		if readsUninitializable(p, b) && schedule.CheckWitness(p, "uninitialized-read", []int{b}, trace) == nil {
			fam["uninitialized-read"] = true
		}
	}
	scopeRace(p, m, scoped, fam)
}

// scopeRace records a race when two operations of a scoped pair are
// reached unordered in m's state.
func scopeRace(p *schedule.Program, m *schedule.Machine, scoped [][2]int, fam map[string]bool) {
	if fam["race"] {
		return
	}
	for _, pr := range scoped {
		if schedule.CheckWitness(p, "race.scope", []int{pr[0], pr[1]}, m.Trace()) == nil {
			fam["race"] = true
			return
		}
	}
}

func sameThread(p *schedule.Program, a, b int) bool {
	wa, wb := p.Tasks[a].Worker, p.Tasks[b].Worker
	return wa != schedule.Dynamic && wa == wb
}

// readsUninitializable reports whether task t reads a scratch or output
// buffer.
func readsUninitializable(p *schedule.Program, t int) bool {
	for _, r := range p.Tasks[t].Reads {
		if k := p.Buffers[r.Buffer].Kind; k == schedule.KindScratch || k == schedule.KindOutput {
			return true
		}
	}
	return false
}

// scopePairs lists the task pairs on different threads with operations on
// one counter or semaphore of which one is cta-scoped and one modifies it:
// the pairs race.scope can relate.
func scopePairs(p *schedule.Program, f *schedule.Form) [][2]int {
	type opRef struct {
		task int
		th   int
		op   schedule.Op
	}
	var ops []opRef
	for th, t := range f.Threads {
		for _, op := range t.Ops {
			switch op.Kind {
			case schedule.OpWait, schedule.OpSignal, schedule.OpAcquire, schedule.OpRelease:
				ops = append(ops, opRef{int(op.Task), th, op})
			}
		}
	}
	seen := map[[2]int]bool{}
	var out [][2]int
	for i, x := range ops {
		for _, y := range ops[i+1:] {
			if x.th == y.th {
				continue
			}
			semX := x.op.Kind == schedule.OpAcquire || x.op.Kind == schedule.OpRelease
			semY := y.op.Kind == schedule.OpAcquire || y.op.Kind == schedule.OpRelease
			if semX != semY || x.op.Object != y.op.Object {
				continue
			}
			if x.op.Kind == schedule.OpWait && y.op.Kind == schedule.OpWait {
				continue
			}
			if x.op.Scope != schedule.ScopeCTA && y.op.Scope != schedule.ScopeCTA {
				continue
			}
			k := [2]int{min(x.task, y.task), max(x.task, y.task)}
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out
}

// static records the families that need no execution.
func static(p *schedule.Program, fam map[string]bool) {
	l := p.Launch
	if l.Cooperative && l.Workers > l.Capacity() {
		fam["occupancy"] = true
	}
	written := map[int32][][2]int64{}
	for i := range p.Tasks {
		t := &p.Tasks[i]
		for k, list := range [2][]schedule.Access{t.Reads, t.Writes} {
			for _, a := range list {
				b := p.Buffers[a.Buffer]
				lo, hi := a.Extent()
				if lo < 0 || hi > int64(b.Size) {
					fam["out-of-bounds"] = true
				}
				if k == 1 {
					if b.Kind.ReadOnly() {
						fam["readonly-write"] = true
					}
					for slo, shi := range a.Spans() {
						written[a.Buffer] = append(written[a.Buffer], [2]int64{slo, shi})
					}
				}
			}
		}
	}
	for i, b := range p.Buffers {
		if b.Kind != schedule.KindOutput {
			continue
		}
		spans := written[int32(i)]
		slices.SortFunc(spans, func(x, y [2]int64) int { return int(x[0] - y[0]) })
		at := int64(0)
		for _, s := range spans {
			if s[0] > at {
				break
			}
			at = max(at, s[1])
		}
		if at < int64(b.Size) {
			fam["output-unwritten"] = true
		}
	}
}
