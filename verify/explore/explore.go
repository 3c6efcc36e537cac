package explore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/megaproof/megaproof/internal/geom"
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

// CodeRaceScope is the finding of two threads' operations on one counter or
// semaphore, one cta-scoped, that no happens-before orders.
const CodeRaceScope = "race.scope"

// Config tunes [Run]. The zero value works.
type Config struct {
	// MaxStates bounds the states visited by all explorations of one Run
	// together; 0 means DefaultMaxStates.
	MaxStates int
	// MaxMemory bounds the bytes the explorations hold at once (visited
	// states, the search path and the findings' traces; see the package
	// documentation, section Memory); 0 means DefaultMaxMemory.
	MaxMemory int64
}

// Finding is one violation of docs/SEMANTICS.md.
type Finding struct {
	// Code is one of the Code constants.
	Code string
	// Tasks are the task indices involved: the two tasks of a race or a
	// race.scope (lower index first), the reader of an uninitialized read,
	// the stuck tasks of a deadlock or occupancy, the signalling task of an
	// overflow, the offending task of a static finding (none for
	// output-unwritten and a cooperative launch beyond capacity).
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
	// PeakMemory is the most bytes the explorations held at once, as
	// counted against Config.MaxMemory.
	PeakMemory int64
	// Complete is false when a bound (Limit) ended the explorations first;
	// the findings are then true but possibly not all of them.
	Complete bool
	// Limit is the bound that left the result incomplete, LimitNone when
	// Complete.
	Limit Limit
	// Reason says in words why the result is incomplete ("" when
	// Complete), e.g. "the memory budget of 512 MiB ran out after 48213
	// states".
	Reason string
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
	if cfg.MaxMemory <= 0 {
		cfg.MaxMemory = DefaultMaxMemory
	}
	b := newBudget(ctx, cfg)
	res := &Result{Complete: true}
	var refused string
	res.Findings, refused = staticFindings(p)
	threads := p.Launch.Workers
	for i := range p.Tasks {
		if !p.Tasks[i].Pinned() {
			threads++
		}
	}
	objs := len(p.Counters) + len(p.Barriers) + len(p.Semaphores)
	if threads > maxKey || threads*(3*threads+objs) > maxKey {
		// Far beyond any state budget; checked before building the model,
		// whose conflict table is quadratic in tasks.
		res.Complete, res.Limit = false, LimitSize
		res.Reason = fmt.Sprintf("the program was not explored: with %d threads its state key would take %d ints, above the explorer's bound of %d",
			threads, int64(threads)+int64(threads)*(3*int64(threads)+int64(objs)), maxKey)
		sortFindings(res.Findings)
		return res, nil
	}
	m := newModel(p)
	if refused == "" {
		refused = m.refused
	}
	if refused != "" {
		res.Complete, res.Limit, res.Reason = false, LimitSize, refused
		sortFindings(res.Findings)
		return res, nil
	}
	md := mode{resid: !p.Launch.Cooperative && p.Launch.Workers > p.Launch.Capacity(), dispatch: m.dyn > 0}

	// The main exploration: the executions of docs/SEMANTICS.md (residency
	// and dispatch), with happens-before clocks.
	m.setup(md)
	main := newSearch(m, true, md, nil, b)
	complete := main.run()

	// A deadlock reachable under residency and dispatch is a deadlock.*
	// finding when one is also reachable in the unbounded launch, and
	// occupancy otherwise.
	if r := main.out.anyStuck; r != nil {
		unbounded, decided := true, true
		if md.resid || md.dispatch {
			unbounded, decided = false, false
			if complete {
				m.setup(mode{})
				ub := newSearch(m, false, mode{}, nil, b)
				ub.firstStuck = true
				decided = ub.run()
				unbounded = ub.out.anyStuck != nil
				complete = decided
			}
		}
		switch {
		case decided && unbounded:
			for code, r := range main.out.stuck {
				res.Findings = append(res.Findings, Finding{Code: code, Tasks: r.tasks, Trace: r.trace,
					Message: "deadlock: " + describeStuck(m, r.tasks)})
			}
		case decided:
			msg := shortfall(m, md, r) + "; in the unbounded launch (every worker resident, every dynamic task on a worker of its own) it cannot deadlock"
			if n := minWorkers(ctx, p, cfg, b.used, b.maxMem-b.mem); n > 0 {
				msg += fmt.Sprintf("; %d co-resident workers avoid it", n)
			}
			res.Findings = append(res.Findings, Finding{Code: CodeOccupancy, Tasks: r.tasks, Trace: r.trace, Message: msg})
		}
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
	for _, pr := range main.out.scopeOrder {
		r := main.out.scope[pr]
		res.Findings = append(res.Findings, Finding{Code: CodeRaceScope, Tasks: []int{int(pr[0]), int(pr[1])}, Trace: r.trace,
			Message: describeScope(m, r.x, r.y)})
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
			m.setup(md)
			fs := newSearch(m, false, md, limit, b)
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
	res.PeakMemory = b.peak
	res.Complete = complete && !b.stopped()
	if !res.Complete {
		res.Limit, res.Reason = b.limit, b.reason()
	}
	sortFindings(res.Findings)
	return res, b.ctxErr
}

// describeScope says which operations race on which object, and the fix.
func describeScope(m *model, x, y int32) string {
	p := m.p
	ox := m.ops[m.opTh[x]][x-m.opBase[m.opTh[x]]]
	oy := m.ops[m.opTh[y]][y-m.opBase[m.opTh[y]]]
	var obj string
	if ox.Kind == schedule.OpAcquire || ox.Kind == schedule.OpRelease {
		obj = fmt.Sprintf("semaphore %q", p.Semaphores[ox.Object].Name)
	} else {
		obj = fmt.Sprintf("counter %q", p.Counters[ox.Object].Name)
	}
	fix := ox
	if ox.Scope != schedule.ScopeCTA {
		fix = oy
	}
	return fmt.Sprintf("%s and %s touch %s from different threads, one at cta scope, and neither happens before the other reaches its operation; make %s gpu-scoped",
		p.Describe(ox), p.Describe(oy), obj, p.Describe(fix))
}

// shortfall says why a stuck state of the main exploration is an
// occupancy problem: workers that cannot start, or dynamic tasks that are
// ready while no worker is free.
func shortfall(m *model, md mode, r *stuckRec) string {
	p := m.p
	pos := r.pos
	dynLeft := false
	for t := m.W; t < m.T; t++ {
		dynLeft = dynLeft || pos[t] < m.lens[t]
	}
	started := m.W
	if md.resid {
		started = min(m.W, m.cap)
		if !dynLeft {
			F := int32(0)
			for w := 0; w < m.W; w++ {
				if m.nonEmpty[w] && pos[w] >= m.lens[w] {
					F++
				}
			}
			started = 0
			for started < m.W && F >= m.theta[started] {
				started++
			}
		}
	}
	var parts []string
	if started < m.W {
		why := "workers that have not finished"
		if dynLeft {
			why = "workers that cannot exit before every dynamic task has ended"
		}
		parts = append(parts, fmt.Sprintf("workers %d..%d cannot start: the %d resident slots are held by %s", started, m.W-1, m.cap, why))
	}
	var ready, held []string
	for t := m.W; t < m.T; t++ {
		name := fmt.Sprintf("%q", p.Tasks[m.f.Threads[t].Task].Name)
		switch {
		case pos[t] == 0:
			ok := true
			for i := range m.guard[t] {
				ok = ok && m.holdsAt(r.vals, &m.ops[t][i])
			}
			if ok {
				ready = append(ready, name)
			}
		case !m.simple[t] && pos[t] < m.lens[t]:
			held = append(held, name)
		}
	}
	if len(ready) > 0 {
		s := fmt.Sprintf("dynamic task %s is ready but no worker is free", list(ready))
		if len(held) > 0 {
			s += fmt.Sprintf(" (dynamic task %s hold workers while they wait)", list(held))
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		parts = append(parts, fmt.Sprintf("with %d workers resident at a time, %s", min(m.W, m.cap), describeStuck(m, r.tasks)))
	} else {
		parts = append(parts, describeStuck(m, r.tasks))
	}
	return strings.Join(parts, "; ")
}

func list(names []string) string {
	if len(names) > 4 {
		return strings.Join(names[:4], ", ") + fmt.Sprintf(" and %d more", len(names)-4)
	}
	return strings.Join(names, ", ")
}

// minWorkers looks for the fewest co-resident workers, above the launch's,
// with which p cannot stall, trying up to 8 more within a small share of
// the state budget (used: the states the main explorations took) and
// within mem bytes (what the findings so far leave of the memory budget).
// It returns 0 when that is not cheap to find.
func minWorkers(ctx context.Context, p *schedule.Program, cfg Config, used int, mem int64) int {
	room := min(cfg.MaxStates/4, 4*used+4096)
	resident := p.Launch.Workers
	if !p.Launch.Cooperative {
		resident = min(resident, p.Launch.Capacity())
	}
	for n := resident + 1; n <= resident+8 && room > 0; n++ {
		q := p.Clone()
		q.Launch.PerSM = 1
		q.Launch.SMs = n
		q.Launch.Workers = max(n, p.Launch.Workers)
		b := newBudget(ctx, Config{MaxStates: room, MaxMemory: mem})
		m := newModel(q)
		md := mode{resid: !q.Launch.Cooperative && q.Launch.Workers > q.Launch.Capacity(), dispatch: m.dyn > 0}
		m.setup(md)
		s := newSearch(m, false, md, nil, b)
		s.firstStuck = true
		if !s.run() {
			return 0
		}
		if s.out.anyStuck == nil {
			return n
		}
		room -= b.used
	}
	return 0
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
		kx, rx := arenaRect(p, x)
		for _, y := range ys {
			if ky, ry := arenaRect(p, y); kx == ky && geom.Overlap(rx, ry) {
				return true
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
func staticFindings(p *schedule.Program) (fs []Finding, refused string) {
	if p.Launch.Cooperative && p.Launch.Workers > p.Launch.Capacity() {
		fs = append(fs, Finding{Code: CodeOccupancy, Message: fmt.Sprintf("cooperative launch of %d workers exceeds the %d the target keeps co-resident", p.Launch.Workers, p.Launch.Capacity())})
	}
	outCover := make([][]geom.Rect, len(p.Buffers))
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
				outCover[a.Buffer] = append(outCover[a.Buffer], bufferRect(a))
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
		_, found, ok := geom.Uncovered([]geom.Rect{geom.Strided(geom.Pos(0, 0), bf.Size, 1, 0)}, outCover[i], geomBudget)
		switch {
		case !ok && refused == "":
			refused = coverageRefused(fmt.Sprintf("of output buffer %q its writes cover", bf.Name))
		case found:
			fs = append(fs, Finding{Code: CodeOutputUnwritten, Message: fmt.Sprintf("bytes of output buffer %q are never written", bf.Name)})
		}
	}
	return fs, refused
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
