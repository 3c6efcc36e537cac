package verify

import (
	"context"
	"maps"
	"slices"

	"github.com/megaproof/megaproof/schedule"
)

// Budget of the minimisation: trials (replays of a candidate trace) per
// witness, and events replayed over all trials of one [Run] (about 0.3 s
// on the machine of docs/PERFORMANCE.md). Past it the witness found so
// far, which the judge has accepted, is kept. A cone costs one pass over
// the witness it comes from and one replay of itself.
const (
	minimiseTrials = 4096
	minimiseSteps  = 1 << 21
)

// compactOver is the length past which a witness is offered in compact
// form (holds and advances, see [schedule.Advance]): up to it, a trace of
// ordinary steps reads better than the macros that stand for it. Tests
// lower it to put every witness through the compact candidates.
var compactOver = 24

// compactFirst is the length past which a witness is offered in compact
// form before its cone is computed.
const compactFirst = 1024

// keepRawWitnesses turns minimisation off, for tests that compare the
// analyses' own witnesses with their minimised forms.
var keepRawWitnesses = false

// finishWitnesses gives every finding of p that takes a trace a non-nil
// witness (the empty trace stays empty, never nil), and minimises each
// witness (see [minimise]). Findings without a witness cost nothing, so a
// safe program pays nothing. Once ctx is done, the witnesses left are kept
// as they are.
func (v *verifier) finishWitnesses(ctx context.Context, p *schedule.Program) error {
	var z *minimiser
	for i := range v.findings {
		f := &v.findings[i]
		if staticFinding(p, f) {
			continue
		}
		if f.Witness == nil {
			f.Witness = []schedule.Event{}
		}
		if len(f.Witness) == 0 || ctx.Err() != nil || keepRawWitnesses {
			continue
		}
		if z == nil {
			m, err := schedule.NewMachine(p)
			if err != nil {
				return nil // unreachable: Run verifies valid programs only
			}
			z = &minimiser{ctx: ctx, base: m}
		}
		f.Witness = z.minimise(f.Code, f.Tasks, f.Witness)
	}
	return nil
}

// minimiser shrinks one witness, judged by replaying candidates on clones
// of a machine at the initial state and asking the state they reach
// whether it exhibits the finding: the judgement of
// [schedule.CheckWitness], without validating and lowering the program
// again for every candidate.
type minimiser struct {
	ctx    context.Context
	base   *schedule.Machine
	code   string
	tasks  []int
	trials int // for this witness
	steps  int // for every witness of the run
	// reached holds the machines that short candidates (at most
	// [reachedEvents] events) reached, by their events, for every witness
	// of the run: the findings of one stuck state share their [advance],
	// and a replay is deterministic, so it is judged again without being
	// run again. A nil machine is a candidate that does not replay.
	reached map[string]*schedule.Machine
}

// reachedEvents and reachedMax bound [minimiser.reached]: candidates of at
// most that many events, at most that many of them per run.
const (
	reachedEvents = 16
	reachedMax    = 32
)

// spent reports whether the budget or ctx is exhausted.
func (z *minimiser) spent() bool {
	return z.trials >= minimiseTrials || z.steps >= minimiseSteps || z.ctx.Err() != nil
}

// accepts replays tr, expanding its macro events, and judges the state it
// reaches as [schedule.CheckWitness] does.
func (z *minimiser) accepts(tr []schedule.Event) bool {
	z.trials++
	if len(tr) > reachedEvents {
		m := z.replay(tr)
		return m != nil && z.judged(m)
	}
	k := schedule.TraceKey(tr)
	m, ok := z.reached[k]
	if !ok {
		m = z.replay(tr)
		if len(z.reached) < reachedMax {
			if z.reached == nil {
				z.reached = map[string]*schedule.Machine{}
			}
			z.reached[k] = m
		}
	}
	return m != nil && z.judged(m)
}

// judged reports whether the state machine m reached exhibits the finding.
func (z *minimiser) judged(m *schedule.Machine) bool { return m.Exhibits(z.code, z.tasks) == nil }

// replay runs tr on a clone of the initial machine and returns it, or nil
// when an event cannot run or a hold is left without its advance.
func (z *minimiser) replay(tr []schedule.Event) *schedule.Machine {
	m := z.base.Clone()
	defer func() { z.steps += len(m.Trace()) }()
	held := false
	for _, e := range tr {
		z.steps++
		if m.Step(e) != nil {
			return nil
		}
		held = m.HoldsPending() > 0
	}
	if held {
		return nil
	}
	return m
}

// minimise returns a witness of a finding no longer than w. For races,
// uninitialized reads and counter overflows, where dispatch does not
// depend on unrelated threads, it is the causal cone of the events the
// finding is about (see [minimiser.cone]): no event of it can be left out
// without disabling a later one, given the signals it chose. A deadlock's
// witness where enabled operations stay enabled (see
// [minimiser.monotone]) is kept: leaving out any thread's last event
// would let that thread move. Otherwise, while the budget lasts, the last
// event of any thread is left out as long as the judge still accepts; at
// the fixed point no thread's last event can be left out. A witness the judge does not accept is returned
// as it is; every witness returned is accepted.
//
// A witness still longer than [compactOver] events is then replaced by
// the first compact candidate ([minimiser.compact]) the judge accepts
// that is shorter; where the cone does not apply, the candidates are
// tried on the analysis' witness first, which spares the trimming, and
// so they are for a witness longer than [compactFirst] events, whose cone
// is rarely short. The candidates are outside the step budget: there are
// at most five, each one replay of the program.
func (z *minimiser) minimise(code string, tasks []int, w []schedule.Event) []schedule.Event {
	z.code, z.tasks, z.trials = code, tasks, 0
	if len(w) > compactFirst {
		if k := z.compact(w); k != nil {
			return k
		}
	}
	if z.spent() {
		return w
	}
	if c := z.cone(w); c != nil {
		if len(c) >= len(w) || !z.accepts(c) {
			c = w
		}
		if len(c) > compactOver {
			if k := z.compact(c); k != nil {
				return k
			}
		}
		return c
	}
	if len(w) > compactOver {
		if k := z.compact(w); k != nil {
			return k
		}
	}
	m := z.trimmed(w)
	if len(m) > compactOver && len(m) < len(w) {
		if k := z.compact(m); k != nil {
			return k
		}
	}
	return m
}

// trimmed is the minimisation of a witness whose cone does not apply: a
// monotone deadlock's witness as it is, otherwise [minimiser.trim].
func (z *minimiser) trimmed(w []schedule.Event) []schedule.Event {
	if fam := Family(z.code); (fam == "deadlock" || fam == CodeOccupancy) && z.monotone() {
		// Every event of a run is enabled when it comes and stays
		// enabled: left out, it would leave its thread able to move, so
		// no stuck state is shorter than the run that reached it.
		return w
	}
	if !z.accepts(w) {
		return w
	}
	return z.trim(w)
}

// trim leaves out threads' last events while the judge accepts: a whole
// thread's events at once first, then one event at a time from its end.
func (z *minimiser) trim(cur []schedule.Event) []schedule.Event {
	for changed := true; changed; {
		changed = false
		for _, th := range threadsByLast(cur) {
			if z.spent() {
				return cur
			}
			if c := without(cur, func(e schedule.Event) bool { return e.Thread == th }); len(c) < len(cur) && z.accepts(c) {
				cur, changed = c, true
				continue
			}
			for !z.spent() {
				i := lastOfThread(cur, th)
				if i < 0 {
					break
				}
				c := slices.Delete(slices.Clone(cur), i, i+1)
				if !z.accepts(c) {
					break
				}
				cur, changed = c, true
			}
		}
	}
	return cur
}

// lastOfThread is the index of thread th's last event in tr, or -1.
func lastOfThread(tr []schedule.Event, th int32) int {
	for i := len(tr) - 1; i >= 0; i-- {
		if tr[i].Thread == th {
			return i
		}
	}
	return -1
}

// threadsByLast lists the threads of tr, the one whose last event is
// latest first.
func threadsByLast(tr []schedule.Event) []int32 {
	seen := map[int32]bool{}
	var out []int32
	for i := len(tr) - 1; i >= 0; i-- {
		if th := tr[i].Thread; !seen[th] {
			seen[th] = true
			out = append(out, th)
		}
	}
	return out
}

// without returns tr less the events drop selects.
func without(tr []schedule.Event, drop func(schedule.Event) bool) []schedule.Event {
	out := make([]schedule.Event, 0, len(tr))
	for _, e := range tr {
		if !drop(e) {
			out = append(out, e)
		}
	}
	return out
}

// cone returns the events of w that the finding's own events need: the
// racing bodies' begins, the reader's begin, or the overflowing signal
// (with every earlier signal of its counter), closed under program order
// and, for each wait, barrier await or acquire kept (and each guard of a
// dynamic task kept, at its claim), the earliest earlier signals that
// reach its threshold, the earliest arrivals that complete its
// generation, or every earlier release of its semaphore. Dropping the
// other events only removes happens-before edges, so what the finding
// is about still holds; the judge confirms it. cone returns nil where it
// does not apply: other codes, and programs whose dispatch or residency
// depends on threads finishing (non-simple dynamic tasks, or more workers
// than a non-cooperative launch keeps resident).
func (z *minimiser) cone(w []schedule.Event) []schedule.Event {
	if !z.dispatchFree() {
		return nil
	}
	p, form := z.base.Program(), z.base.Form()
	op := func(i int) schedule.Op { return form.Threads[w[i].Thread].Ops[w[i].Step] }
	n := len(w)
	keep := make([]bool, n)
	var work []int
	need := func(i int) {
		if !keep[i] {
			keep[i] = true
			work = append(work, i)
		}
	}
	family := Family(z.code)
	switch {
	case z.code == CodeRaceScope:
		return nil
	case family == "race" || z.code == CodeUninitializedRead:
		want := z.tasks
		if z.code == CodeUninitializedRead {
			want = want[:min(1, len(want))]
		}
		for i := range w {
			if o := op(i); o.Kind == schedule.OpBegin && slices.Contains(want, int(o.Task)) {
				need(i)
			}
		}
	case z.code == CodeCounterOverflow:
		// The cone of the witness's last overflowing signal: a counter's
		// witness ends at its own overflow, and other counters may
		// overflow before it.
		at := -1
		m := z.base.Clone()
		for i, e := range w {
			o := op(i)
			before := o.Kind == schedule.OpSignal && m.Overflowed[o.Object]
			z.steps++
			if m.Step(e) != nil {
				return nil
			}
			if o.Kind == schedule.OpSignal && !before && m.Overflowed[o.Object] {
				at = i
			}
		}
		if at < 0 {
			return nil
		}
		c := op(at).Object
		for i := 0; i <= at; i++ {
			if o := op(i); o.Kind == schedule.OpSignal && o.Object == c {
				need(i)
			}
		}
	default:
		return nil
	}
	// Per object, the events that raise it, in trace order; per thread,
	// its events in program order.
	nc, nb := len(p.Counters), len(p.Barriers)
	raise := make([][]int, nc+nb+len(p.Semaphores))
	byThread := make([][]int, len(form.Threads))
	// Each thread's events, their places and the positions kept share one
	// slab: the threads' lists are carved at their lengths, counted first.
	ints := make([]int, 2*n+len(form.Threads))
	posInThread, slab, kept := ints[:n:n], ints[n:2*n:2*n], ints[2*n:] // kept: per thread, positions [0, kept) needed
	for _, e := range w {
		kept[e.Thread]++
	}
	for th, c := range kept {
		byThread[th], slab = slab[:0:c], slab[c:]
		kept[th] = 0
	}
	for i, e := range w {
		posInThread[i] = len(byThread[e.Thread])
		byThread[e.Thread] = append(byThread[e.Thread], i)
		switch o := op(i); o.Kind {
		case schedule.OpSignal:
			raise[o.Object] = append(raise[o.Object], i)
		case schedule.OpArrive:
			raise[nc+int(o.Object)] = append(raise[nc+int(o.Object)], i)
		case schedule.OpRelease:
			raise[nc+nb+int(o.Object)] = append(raise[nc+nb+int(o.Object)], i)
		}
	}
	enable := func(o schedule.Op, at int) {
		switch o.Kind {
		case schedule.OpWait:
			v := p.Counters[o.Object].Init
			for _, j := range raise[o.Object] {
				if j >= at || v >= o.Value {
					break
				}
				need(j)
				if v += op(j).Value; v < op(j).Value {
					v = ^uint64(0) // saturated, as the machine's counters
				}
			}
		case schedule.OpAwait:
			v := uint64(0)
			for _, j := range raise[nc+int(o.Object)] {
				if j >= at || v >= o.Value {
					break
				}
				need(j)
				v++
			}
		case schedule.OpAcquire:
			for _, j := range raise[nc+nb+int(o.Object)] {
				if j >= at {
					break
				}
				need(j)
			}
		}
	}
	for len(work) > 0 {
		i := work[len(work)-1]
		work = work[:len(work)-1]
		th := w[i].Thread
		for ; kept[th] < posInThread[i]; kept[th]++ {
			need(byThread[th][kept[th]])
		}
		enable(op(i), i)
		if int(th) >= form.Workers && w[i].Step == 0 {
			t := &form.Threads[th]
			for _, g := range t.Ops[:t.Guard()] {
				enable(g, i)
			}
		}
	}
	out := make([]schedule.Event, 0, n)
	for i, e := range w {
		if keep[i] {
			out = append(out, e)
		}
	}
	return out
}

// dispatchFree reports whether no thread's moving depends on others
// finishing: every worker is resident from the start and every dynamic
// task is simple (it holds no worker).
func (z *minimiser) dispatchFree() bool {
	p, form := z.base.Program(), z.base.Form()
	if l := p.Launch; !l.Cooperative && l.Workers > l.Capacity() {
		return false
	}
	for th := form.Workers; th < len(form.Threads); th++ {
		if !form.Threads[th].Simple() {
			return false
		}
	}
	return true
}

// monotone reports whether an operation once enabled stays enabled:
// dispatch does not depend on threads finishing and no semaphore takes
// tokens away (counters and barrier arrivals only grow).
func (z *minimiser) monotone() bool {
	return z.dispatchFree() && len(z.base.Program().Semaphores) == 0
}

// compact returns the first of the compact candidates for witness w of
// the finding (see [minimiser.candidates]) that is shorter than w and that
// the judge accepts, or nil.
func (z *minimiser) compact(w []schedule.Event) []schedule.Event {
	for _, cs := range [2]func([]schedule.Event) [][]schedule.Event{z.candidates, z.stateCandidates} {
		for _, c := range cs(w) {
			if z.ctx.Err() != nil {
				return nil
			}
			if len(c) < len(w) && z.accepts(c) {
				return c
			}
		}
	}
	return nil
}

// candidates lists compact witnesses for the finding, shortest first.
// Where enabled operations stay enabled ([minimiser.monotone]) the state
// an advance reaches under given holds is the greatest one reachable
// below them, so:
//   - a deadlock, an occupancy stall or a counter overflow is [advance];
//   - a race between bodies a and b holds both threads right after their
//     begins, then advances;
//   - an uninitialized read holds the reader right after its begin (and,
//     in one more candidate for each of its first two scratch or output
//     reads, the threads of the tasks that write bytes of that read, in
//     its buffer, right after their bodies: ended, but with no later step
//     that their End could happen before), then advances.
//
// Then, from the state w reaches ([minimiser.stateCandidates], built only
// when these fail), one that holds the threads of the finding's tasks
// where w leaves them, and one that holds every thread w moves or leaves
// unfinished where it leaves it. With semaphores or
// dispatch that depends on threads finishing the greedy order matters and
// any of them may fail; the judge decides each.
func (z *minimiser) candidates([]schedule.Event) [][]schedule.Event {
	p, form := z.base.Program(), z.base.Form()
	adv := schedule.Advance()
	var out [][]schedule.Event
	// afterBegin holds task t's thread right after its begin.
	afterBegin := func(hs map[int]int, t int) bool {
		th, b := bodyStep(form, p, t)
		if th < 0 {
			return false
		}
		if _, dup := hs[th]; dup {
			return false
		}
		hs[th] = b + 1
		return true
	}
	fam := Family(z.code)
	switch {
	case fam == "deadlock" || z.code == CodeOccupancy || z.code == CodeCounterOverflow:
		out = append(out, []schedule.Event{adv})
	case z.code == CodeRaceScope:
	case fam == "race":
		if hs := map[int]int{}; len(z.tasks) >= 2 && afterBegin(hs, z.tasks[0]) && afterBegin(hs, z.tasks[1]) {
			out = append(out, holds(hs))
		}
	case z.code == CodeUninitializedRead:
		if hs := map[int]int{}; len(z.tasks) >= 1 && afterBegin(hs, z.tasks[0]) {
			out = append(out, holds(hs))
			r := z.tasks[0]
			rth, _ := bodyStep(form, p, r)
			// Per read of a scratch or output buffer (the first two),
			// the tasks that write its bytes held right after their
			// bodies: ended, but with no later step that their End
			// could happen before.
			reads := 0
			for _, rd := range p.Tasks[r].Reads {
				if k := p.Buffers[rd.Buffer].Kind; k != schedule.KindScratch && k != schedule.KindOutput {
					continue
				}
				if reads++; reads > 2 {
					break
				}
				ws := maps.Clone(hs)
				for t := range p.Tasks {
					if t == r || !writesBytes(p, t, rd) {
						continue
					}
					th, b := bodyStep(form, p, t)
					if th < 0 || th == rth {
						continue
					}
					if at, ok := ws[th]; !ok || b+2 < at {
						ws[th] = b + 2
					}
					if len(ws) >= compactOver {
						break
					}
				}
				if len(ws) > 1 && len(ws) < compactOver {
					out = append(out, holds(ws))
				}
			}
		}
	}
	return out
}

// holds renders holds as events in thread order, then the advance.
func holds(hs map[int]int) []schedule.Event {
	ths := make([]int, 0, len(hs))
	for th := range hs {
		ths = append(ths, th)
	}
	slices.Sort(ths)
	c := make([]schedule.Event, 0, len(ths)+1)
	for _, th := range ths {
		c = append(c, schedule.Hold(th, hs[th]))
	}
	return append(c, schedule.Advance())
}

// stateCandidates are the compact candidates built from the state w
// reaches (see [minimiser.candidates]), which cost a replay of w: they are
// built only when the finding's own candidates all fail.
func (z *minimiser) stateCandidates(w []schedule.Event) [][]schedule.Event {
	p, form := z.base.Program(), z.base.Form()
	var out [][]schedule.Event
	m := z.base.Clone()
	for _, e := range w {
		z.steps++
		if m.Step(e) != nil {
			return out
		}
	}
	hs := map[int]int{}
	for _, t := range z.tasks {
		if th := threadOf(form, p, t); th >= 0 {
			hs[th] = int(m.Pos[th])
		}
	}
	if len(hs) > 0 {
		out = append(out, holds(hs))
	}
	moved := map[int]int{}
	for _, e := range w {
		if e.IsStep() {
			moved[int(e.Thread)] = int(m.Pos[e.Thread])
		}
	}
	for th := range form.Threads {
		if !m.Finished(th) {
			moved[th] = int(m.Pos[th])
		}
	}
	if len(moved) > 0 && len(moved) < compactOver {
		out = append(out, holds(moved))
	}
	return out
}

// writesBytes reports whether task w writes bytes that read rd reads, in
// its buffer: a write the judge counts as covering them
// (schedule.CheckWitness, uninitialized-read).
func writesBytes(p *schedule.Program, w int, rd schedule.Access) bool {
	for _, wr := range p.Tasks[w].Writes {
		if wr.Buffer != rd.Buffer {
			continue
		}
		q := *p
		q.Tasks = []schedule.Task{{Writes: []schedule.Access{wr}}, {Reads: []schedule.Access{rd}}}
		if schedule.Conflict(&q, 0, 1) {
			return true
		}
	}
	return false
}

// bodyStep is the thread of task t and the position of its body's begin
// in it, or -1, -1.
func bodyStep(form *schedule.Form, p *schedule.Program, t int) (th, begin int) {
	th = threadOf(form, p, t)
	if th < 0 {
		return -1, -1
	}
	for i, op := range form.Threads[th].Ops {
		if op.Kind == schedule.OpBegin && int(op.Task) == t {
			return th, i
		}
	}
	return -1, -1
}
