package explore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/megaproof/megaproof/schedule"
)

// Finding codes, the stable codes of docs/SEMANTICS.md that the explorer
// reports.
const (
	CodeDeadlockUnsatisfiable = "deadlock.unsatisfiable"
	CodeDeadlockCycle         = "deadlock.cycle"
	CodeDeadlockBarrier       = "deadlock.barrier"
	CodeDeadlockSemaphore     = "deadlock.semaphore"
	CodeOccupancy             = "occupancy"
	CodeRaceRAW               = "race.raw"
	CodeRaceWAR               = "race.war"
	CodeRaceWAW               = "race.waw"
	CodeRaceUnsynchronized    = "race.unsynchronized"
	CodeUninitializedRead     = "uninitialized-read"
	CodeOutOfBounds           = "out-of-bounds"
	CodeReadonlyWrite         = "readonly-write"
	CodeOutputUnwritten       = "output-unwritten"
	CodeCounterOverflow       = "counter-overflow"
)

// DefaultMaxStates is the state budget when [Config].MaxStates is 0.
const DefaultMaxStates = 1 << 20

// Config tunes [Run]. The zero value works.
type Config struct {
	// MaxStates bounds the states visited by all explorations of one Run
	// together; 0 means DefaultMaxStates.
	MaxStates int
}

// Finding is one violation of docs/SEMANTICS.md.
type Finding struct {
	// Code is one of the Code constants.
	Code string
	// Tasks are the task indices involved: the two tasks of a race (lower
	// index first), the reader of an uninitialized read, the stuck tasks of
	// a deadlock, the signalling task of an overflow, the offending task of
	// a static finding (none for output-unwritten).
	Tasks []int
	// Trace is a witness for schedule.CheckWitness: events (indices into
	// schedule.Lower's threads and operations) from the initial state.
	// Static findings have none.
	Trace []schedule.Event
	// Message says what is wrong, for people.
	Message string
}

// Result is the outcome of [Run].
type Result struct {
	// Findings are sorted by code, then tasks, then message.
	Findings []Finding
	// States is the number of states visited, over all explorations.
	States int
	// Complete is false when the state budget ran out or ctx ended before
	// every exploration finished; the findings are then true but possibly
	// not all of them.
	Complete bool
}

// Run explores every interleaving of p's normal form (up to a
// partial-order reduction that preserves every finding) and returns the
// findings of docs/SEMANTICS.md with witnesses. It returns an error for an
// invalid program, and ctx's error, with the partial result, when ctx ends
// first.
func Run(ctx context.Context, p *schedule.Program, cfg Config) (*Result, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if cfg.MaxStates <= 0 {
		cfg.MaxStates = DefaultMaxStates
	}
	b := &budget{ctx: ctx, max: cfg.MaxStates}
	res := &Result{Complete: true}
	res.Findings = staticFindings(p)
	threads := p.Launch.Workers
	for i := range p.Tasks {
		if !p.Tasks[i].Pinned() {
			threads++
		}
	}
	objs := len(p.Counters) + len(p.Barriers) + len(p.Semaphores) + 1
	if threads > maxKey || threads*(3*threads+objs) > maxKey {
		// Far beyond any state budget; checked before building the model,
		// whose conflict table is quadratic in tasks.
		res.Complete = false
		sortFindings(res.Findings)
		return res, nil
	}
	m := newModel(p)
	limited := !p.Launch.Cooperative && p.Launch.Workers > p.Launch.Capacity()

	// The main exploration: the executions of docs/SEMANTICS.md (residency
	// applies to a non-cooperative launch), with happens-before clocks.
	m.setup(limited)
	main := newSearch(m, true, limited, nil, b)
	complete := main.run()

	// A deadlock reachable under residency is a deadlock.* finding when one
	// is also reachable with every worker resident, and occupancy otherwise.
	allStuck := main.out.stuck
	allComplete := complete
	if limited {
		allStuck, allComplete = nil, false
		if complete {
			m.setup(false)
			all := newSearch(m, false, false, nil, b)
			allComplete = all.run()
			complete = allComplete
			allStuck = all.out.stuck
		}
	}
	if limited && main.out.anyStuck == nil {
		// Deadlocks that only a launch with every worker resident reaches
		// cannot happen under this launch's residency.
		allStuck = nil
	}
	for code, r := range allStuck {
		tr := r.trace
		if limited {
			// Prefer a trace that also respects residency, so that Replay
			// (which applies it) accepts it.
			if mr, ok := main.out.stuck[code]; ok {
				tr = mr.trace
			} else if main.out.anyStuck != nil {
				tr = main.out.anyStuck.trace
			}
		}
		res.Findings = append(res.Findings, Finding{Code: code, Tasks: r.tasks, Trace: tr,
			Message: "deadlock: " + describeStuck(m, r.tasks)})
	}
	if limited && allComplete && len(allStuck) == 0 && main.out.anyStuck != nil {
		r := main.out.anyStuck
		res.Findings = append(res.Findings, Finding{Code: CodeOccupancy, Tasks: r.tasks, Trace: r.trace,
			Message: fmt.Sprintf("with %d workers resident at a time, %s; with all %d resident it cannot deadlock",
				p.Launch.Capacity(), describeStuck(m, r.tasks), p.Launch.Workers)})
	}

	for c, r := range main.out.overflow {
		res.Findings = append(res.Findings, Finding{Code: CodeCounterOverflow, Tasks: r.tasks, Trace: r.trace,
			Message: fmt.Sprintf("counter %q exceeds its %d-bit width after a signal of task %q",
				p.Counters[c].Name, p.Counters[c].Width, p.Tasks[r.tasks[0]].Name)})
	}
	for r, tr := range main.out.uninit {
		res.Findings = append(res.Findings, Finding{Code: CodeUninitializedRead, Tasks: []int{int(r)}, Trace: tr,
			Message: fmt.Sprintf("task %q can read bytes of a scratch or output buffer that no task's write happens before", p.Tasks[r].Name)})
	}

	// Races: "unsynchronized" when one body must execute before the other,
	// decided by freezing a thread before the earlier task's End and asking
	// whether the other Begin is still reachable.
	if len(main.out.raceOrder) > 0 {
		frozen := map[int32][]bool{} // task -> begun with its thread frozen before its End
		reach := func(a int32) ([]bool, bool) {
			if r, ok := frozen[a]; ok {
				return r, true
			}
			limit := slices.Clone(m.lens)
			limit[m.taskThread[a]] = m.taskEnd[a]
			m.setup(limited)
			fs := newSearch(m, false, limited, limit, b)
			if !fs.run() {
				complete = false
				return nil, false
			}
			frozen[a] = fs.out.begun
			return fs.out.begun, true
		}
		for _, pr := range main.out.raceOrder {
			a, c := pr[0], pr[1]
			must := false
			if r, ok := reach(a); ok && !r[c] {
				must = true
			} else if r, ok := reach(c); ok && !r[a] {
				must = true
			}
			code := raceKind(p, int(a), int(c))
			msg := fmt.Sprintf("tasks %q and %q access overlapping bytes (%s) and neither body happens before the other", p.Tasks[a].Name, p.Tasks[c].Name, strings.TrimPrefix(code, "race."))
			if must {
				code = CodeRaceUnsynchronized
				msg = fmt.Sprintf("tasks %q and %q access overlapping bytes; one always runs first but no happens-before edge orders them (relaxed order or narrow scope)", p.Tasks[a].Name, p.Tasks[c].Name)
			}
			res.Findings = append(res.Findings, Finding{Code: code, Tasks: []int{int(a), int(c)}, Trace: main.out.races[pr], Message: msg})
		}
	}
	res.States = b.used
	res.Complete = complete && !b.hit && b.ctxErr == nil
	sortFindings(res.Findings)
	return res, b.ctxErr
}

// raceKind names the race between tasks a < c that conflict: waw when both
// write overlapping bytes, raw when the earlier task writes what the later
// reads, war otherwise.
func raceKind(p *schedule.Program, a, c int) string {
	ta, tc := &p.Tasks[a], &p.Tasks[c]
	if overlap(p, ta.Writes, tc.Writes) {
		return CodeRaceWAW
	}
	if overlap(p, ta.Writes, tc.Reads) {
		return CodeRaceRAW
	}
	return CodeRaceWAR
}

func overlap(p *schedule.Program, xs, ys []schedule.Access) bool {
	for _, x := range xs {
		for _, y := range ys {
			for xl, xh := range x.Spans() {
				ax, xl, xh := schedule.ArenaSpan(p, x.Buffer, xl, xh)
				for yl, yh := range y.Spans() {
					ay, yl, yh := schedule.ArenaSpan(p, y.Buffer, yl, yh)
					if ax == ay && xl < yh && yl < xh {
						return true
					}
				}
			}
		}
	}
	return false
}

func describeStuck(m *model, tasks []int) string {
	var sb strings.Builder
	sb.WriteString("stuck at ")
	for i, tk := range tasks {
		if i > 0 {
			sb.WriteString(", ")
		}
		if i == 4 {
			fmt.Fprintf(&sb, "and %d more", len(tasks)-4)
			break
		}
		fmt.Fprintf(&sb, "task %q", m.p.Tasks[tk].Name)
	}
	if len(tasks) == 0 {
		sb.WriteString("no resident task (workers wait for residency)")
	}
	return sb.String()
}

// staticFindings reports out-of-bounds accesses, writes to read-only
// buffers, output bytes no write covers and a cooperative launch beyond
// capacity.
func staticFindings(p *schedule.Program) []Finding {
	var fs []Finding
	if p.Launch.Cooperative && p.Launch.Workers > p.Launch.Capacity() {
		fs = append(fs, Finding{Code: CodeOccupancy, Message: fmt.Sprintf("cooperative launch of %d workers exceeds the %d the target keeps co-resident", p.Launch.Workers, p.Launch.Capacity())})
	}
	outCover := make([][][2]int64, len(p.Buffers))
	for i := range p.Tasks {
		t := &p.Tasks[i]
		oob, ro := false, false
		for _, a := range t.Reads {
			oob = oob || outside(p, a)
		}
		for _, a := range t.Writes {
			oob = oob || outside(p, a)
			ro = ro || p.Buffers[a.Buffer].Kind.ReadOnly()
			if p.Buffers[a.Buffer].Kind == schedule.KindOutput {
				outCover[a.Buffer] = append(outCover[a.Buffer], spansOf(a)...)
			}
		}
		if oob {
			fs = append(fs, Finding{Code: CodeOutOfBounds, Tasks: []int{i}, Message: fmt.Sprintf("task %q accesses bytes outside a buffer", t.Name)})
		}
		if ro {
			fs = append(fs, Finding{Code: CodeReadonlyWrite, Tasks: []int{i}, Message: fmt.Sprintf("task %q writes a read-only buffer", t.Name)})
		}
	}
	for i, bf := range p.Buffers {
		if bf.Kind != schedule.KindOutput {
			continue
		}
		c := outCover[i]
		slices.SortFunc(c, func(x, y [2]int64) int { return cmpInt(x[0], y[0]) })
		if !covered(c, 0, int64(bf.Size)) {
			fs = append(fs, Finding{Code: CodeOutputUnwritten, Message: fmt.Sprintf("bytes of output buffer %q are never written", bf.Name)})
		}
	}
	return fs
}

func outside(p *schedule.Program, a schedule.Access) bool {
	lo, hi := a.Extent()
	return lo < 0 || hi > int64(p.Buffers[a.Buffer].Size)
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func sortFindings(fs []Finding) {
	slices.SortFunc(fs, func(x, y Finding) int {
		if c := strings.Compare(x.Code, y.Code); c != 0 {
			return c
		}
		if c := slices.Compare(x.Tasks, y.Tasks); c != 0 {
			return c
		}
		return strings.Compare(x.Message, y.Message)
	})
}
