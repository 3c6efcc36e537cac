package verify

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify/explore"
)

// verifier holds one analysis in progress.
type verifier struct {
	f          *form
	orig       *schedule.Program // the program as given (f.p may be its counter form)
	semOf      []int32           // per counter of f.p from len(orig.Counters) on: the semaphore it stands for
	pooled     bool              // pool semaphores were dropped from f.p
	optimistic string            // why dispatch may restrict executions, when the confluent analyses ran anyway (see transientDynamic)
	exploreWhy string            // why the explorer decides the program, when it does
	bgPanic    any               // a panic of the background static checks, raised by joinStatic
	cfg        Config
	findings   []Finding
	stats      Stats
	undecided  []string

	run         *engine    // the greedy run under the launch's residency
	explored    bool       // the explorer decided the execution-dependent checks
	when        []int32    // per task: position of its body in the greedy run, or -1
	slab        []pairInfo // conflicting task pairs, by key
	adjStart    []int32    // per task: its pairs are slab[adj[adjStart[t]:adjStart[t+1]]]
	adj         []int32
	unsynced    []unsyncedPair
	pregrid     *grid // the arena grid of every task, computed beside the greedy run
	preAccesses int
	onRace      func() // called when a pair is found racing
	shadowed    bool   // the shadow pass proved every conflicting pair ordered
	initialized bool   // ... and every read of scratch and output bytes covered
	truncated   []string
	gameSteps   int64 // operations the taint games executed and copied, all branches together
}

func (v *verifier) add(f Finding) { v.findings = append(v.findings, f) }

func (v *verifier) inconclusive(why string) { v.undecided = append(v.undecided, why) }

func (v *verifier) threadName(t int32) string { return v.appendThread(newMsg(), t).String() }

// appendThread appends the name of thread t: "worker 3" or
// `dynamic task "t"`.
func (v *verifier) appendThread(m msg, t int32) msg {
	f := v.f
	if int(t) < f.workers {
		return m.s("worker ").i(int64(t))
	}
	return m.s("dynamic task ").q(f.p.Tasks[f.task[f.start[t]]].Name)
}

// describe renders op x, e.g. `wait c >= 4 (task "t")`.
func (v *verifier) describe(x int32) string { return v.appendOp(newMsg(), x).String() }

// appendOp appends the rendering of op x (see describe).
func (v *verifier) appendOp(m msg, x int32) msg {
	f := v.f
	p := f.p
	task := func(m msg) msg { return m.s(" (task ").q(p.Tasks[f.task[x]].Name).s(")") }
	mods := func(m msg) msg {
		if f.is(x, fRelaxed) {
			m = m.s(" relaxed")
		}
		if !f.is(x, fCross) && !f.is(x, fCheck) {
			m = m.s(" cta-scoped")
		}
		return m
	}
	o := f.obj[x]
	if sem := v.semaphoreOf(o); sem >= 0 && (f.kind[x] == kWait || f.kind[x] == kAdd) {
		if s, ok := v.origStep(x); ok {
			var k schedule.OpKind
			switch s.Kind {
			case schedule.Acquire:
				k = schedule.OpAcquire
			case schedule.Release:
				k = schedule.OpRelease
			}
			return m.s(v.orig.Describe(schedule.Op{Kind: k, Object: sem, Value: s.Value, Scope: s.Scope, Task: f.task[x]}))
		}
	}
	switch f.kind[x] {
	case kWait:
		if f.is(x, fBarrier) {
			return task(m.s("barrier ").s(p.Barriers[o-int32(f.nc)].Name).s(" (needs ").u(f.val[x]).s(" arrivals)"))
		}
		return task(mods(m.s("wait ").s(p.Counters[o].Name).s(" >= ").u(f.val[x])))
	case kAdd:
		if f.is(x, fBarrier) {
			return task(m.s("arrive at ").s(p.Barriers[o-int32(f.nc)].Name))
		}
		return task(mods(m.s("signal ").s(p.Counters[o].Name).s(" += ").u(f.val[x])))
	case kBody:
		return task(m.s("body"))
	case kFence:
		return task(mods(m.s("fence")))
	case kAcquire:
		return task(m.s("acquire ").s(p.Semaphores[o].Name).s(" ").u(f.val[x]))
	case kRelease:
		return task(m.s("release ").s(p.Semaphores[o].Name).s(" ").u(f.val[x]))
	}
	return m.s("?")
}

func run(ctx context.Context, p *schedule.Program, cfg Config) (*Result, error) {
	checks, report, err := selected(cfg)
	if err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return invalidResult(err), nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	v, err := analyze(ctx, p, cfg, checks, "")
	if err != nil {
		return nil, err
	}
	if (v.pooled || v.optimistic != "") && (len(v.findings) > 0 || len(v.undecided) > 0) {
		// Dropped pool semaphores may be what orders or frees the
		// program, and workers held by claimed tasks may keep what is
		// found from happening: the explorer decides the original.
		why := "pool semaphores may order or free what the analysis without them finds"
		if v.optimistic != "" {
			why = v.optimistic
		}
		v.release()
		if v, err = analyze(ctx, p, cfg, checks, why); err != nil {
			return nil, err
		}
	}
	kept := v.findings[:0]
	for _, f := range v.findings {
		if report[f.Code] {
			kept = append(kept, f)
		}
	}
	v.findings = kept
	if err := v.finishWitnesses(ctx, p); err != nil {
		return nil, err
	}
	r := v.result()
	if cfg.Sanity {
		if err := v.f.check(); err != nil {
			return nil, err
		}
		if err := sanity(p, r); err != nil {
			return nil, err
		}
	}
	v.release()
	return r, nil
}

// release hands back the form and the engine the analysis kept; nothing
// the result holds refers to them.
func (v *verifier) release() {
	v.run.release()
	v.f.release()
	v.run, v.f = nil, nil
}

// analyze lowers p and runs the checks: on a counter form of its
// semaphores where one exists (see semaphore.go), with the confluent
// analyses where dispatch allows, and otherwise, or when explore names why,
// with the explorer.
func analyze(ctx context.Context, p *schedule.Program, cfg Config, checks []*Check, explore string) (*verifier, error) {
	v := &verifier{orig: p, cfg: cfg}
	lowered := p
	if explore == "" && len(p.Semaphores) > 0 {
		if p2, semOf, pooled, ok := reduceSemaphores(p); ok {
			lowered, v.semOf, v.pooled = p2, semOf, pooled
		}
	}
	v.f = lowerForm(lowered)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	v.stats = Stats{Tasks: len(p.Tasks), Threads: v.f.threads(), Steps: len(v.f.kind) - v.f.checks, Engine: "greedy"}
	switch {
	case explore != "":
		v.exploreWhy = explore
	case !v.f.semaphore:
		// Dispatch limits and undecided cta-scoped pairs need the explorer;
		// it decides every execution-dependent check at once.
		why := v.f.dispatchLimited(nonSimpleDynamic(p), 0)
		if why != "" {
			// Claimed tasks that cannot stay blocked restrict the executions
			// but not the stuck states: a safe verdict stands (see
			// transientDynamic); anything else goes to the explorer.
			if blocking, transient := transientDynamic(p); transient > 0 && v.f.dispatchLimited(blocking, transient) == "" {
				v.optimistic, why = why, ""
			}
		}
		if why == "" && slices.Contains(checks, Races) {
			undecided, err := v.scopeRaces(ctx)
			if err != nil {
				return nil, err
			}
			if undecided {
				why = "the ordering of cta-scoped steps on counters other workers use is decided by the explorer"
			}
		}
		if why != "" {
			v.findings, v.truncated = v.findings[:0], nil
			v.exploreWhy = why
		}
	}
	if v.exploreWhy != "" {
		v.pooled, v.optimistic = false, ""
	}
	// On large programs the static checks and the arena grid are computed
	// beside the greedy run; static findings keep their place.
	var bg chan []Finding
	staticAt := 0
	for _, c := range checks {
		if c == Races && bg != nil {
			v.joinStatic(bg, staticAt)
			bg = nil
		}
		switch {
		case c == Static && len(p.Tasks) >= backgroundTasks:
			// The goroutine has a channel of its own: were it to capture
			// bg, every call would keep bg on the heap.
			ch := make(chan []Finding, 1)
			bg, staticAt = ch, len(v.findings)
			races := slices.Contains(checks, Races) && !v.f.semaphore && v.exploreWhy == ""
			go func() {
				var static []Finding
				// A panic here would end the process, out of every caller's
				// reach: it is carried to joinStatic and raised there.
				defer func() {
					v.bgPanic = recover()
					ch <- static
				}()
				if races {
					v.pregrid, v.preAccesses = newGrid(p, func(int32) bool { return true })
				}
				static = staticFindings(p)
			}()
			continue
		case c == Static:
		case v.f.semaphore || v.exploreWhy != "":
			// Semaphores break confluence, and so do claims that compete
			// for workers: the explorer decides every execution-dependent
			// check at once.
			if !v.explored {
				v.explored = true
				if err := v.explore(ctx); err != nil {
					return nil, err
				}
			}
			continue
		}
		if err := c.run(v, ctx); err != nil {
			return nil, err
		}
	}
	if bg != nil {
		v.joinStatic(bg, staticAt)
	}
	return v, nil
}

// backgroundTasks is the size from which static checks run beside the
// greedy run; tests lower it.
var backgroundTasks = 1 << 14

// joinStatic waits for the static findings computed in the background and
// puts them where the static check would have added them.
func (v *verifier) joinStatic(bg chan []Finding, at int) {
	static := largeStatic(v.f.p, <-bg)
	if v.bgPanic != nil {
		panic(v.bgPanic)
	}
	v.addStatic(at, static)
}

func (v *verifier) result() *Result {
	r := &Result{Findings: v.findings, Stats: v.stats}
	slices.SortStableFunc(r.Findings, func(a, b Finding) int {
		if c := strings.Compare(a.Code, b.Code); c != 0 {
			return c
		}
		return slices.Compare(a.Tasks, b.Tasks)
	})
	switch {
	case len(r.Findings) > 0:
		r.Verdict = Unsafe
		for _, t := range v.truncated {
			r.Findings[len(r.Findings)-1].Related = append(r.Findings[len(r.Findings)-1].Related, "truncated: "+t)
		}
		if len(v.undecided) > 0 {
			// Unsafe for sure, but other findings may be missing.
			r.Findings = append(r.Findings, Finding{Code: CodeInconclusive, Message: "not every question was decided: " + v.undecided[0], Related: capLines(v.undecided[1:], "")})
		}
	case len(v.undecided) > 0:
		r.Verdict = Inconclusive
		r.Findings = []Finding{{Code: CodeInconclusive, Message: v.undecided[0], Related: capLines(v.undecided[1:], "")}}
	default:
		r.Verdict = Safe
	}
	return r
}

// sanity replays every witness and checks internal invariants.
func sanity(p *schedule.Program, r *Result) error {
	// Findings with the same short witness (the [advance] of one stuck
	// state) are judged on one replay of it: a replay is deterministic.
	reached := map[string]*schedule.State{}
	for _, f := range r.Findings {
		if f.Code == CodeInconclusive {
			continue
		}
		var err error
		if st, ok := reached[schedule.TraceKey(f.Witness)]; ok && len(f.Witness) > 0 && len(f.Witness) <= reachedEvents {
			err = st.Exhibits(f.Code, f.Tasks)
		} else if err = schedule.CheckWitness(p, f.Code, f.Tasks, f.Witness); err == nil && len(f.Witness) > 0 && len(f.Witness) <= reachedEvents && len(reached) < reachedMax {
			if st, rerr := schedule.Replay(p, f.Witness); rerr == nil {
				reached[schedule.TraceKey(f.Witness)] = st
			}
		}
		if err != nil {
			return fmt.Errorf("verify: sanity: witness of %s (tasks %v) does not replay: %w", f.Code, f.Tasks, err)
		}
	}
	return nil
}

// invalidResult turns a structural error into an Invalid result.
func invalidResult(err error) *Result {
	r := &Result{Verdict: Invalid}
	var se *schedule.Error
	if errors.As(err, &se) {
		for _, d := range se.Diagnostics {
			r.Findings = append(r.Findings, Finding{Code: d.Code, Path: d.Path, Message: d.Message})
		}
	} else {
		r.Findings = append(r.Findings, Finding{Code: schedule.CodeSyntax, Path: "$", Message: err.Error()})
	}
	return r
}

// explore decides programs with semaphores with the explicit-state
// explorer, which is exact within the state budget.
func (v *verifier) explore(ctx context.Context) error {
	max := v.cfg.MaxStates
	if max <= 0 {
		max = DefaultMaxStates
	}
	res, err := explore.Run(ctx, v.orig, explore.Config{MaxStates: max})
	if err != nil {
		return err
	}
	v.stats.Engine = "explore"
	v.stats.States = res.States
	for _, f := range res.Findings {
		switch {
		case f.Code == CodeOutOfBounds, f.Code == CodeReadonlyWrite, f.Code == CodeOutputUnwritten,
			f.Code == CodeOccupancy && len(f.Trace) == 0 && len(f.Tasks) == 0 && v.orig.Launch.Cooperative:
			continue // static findings, already reported by checkStatic
		}
		g := Finding{Code: f.Code, Message: f.Message, Tasks: f.Tasks, Witness: f.Trace}
		if f.Code == CodeDeadlockSemaphore && lockOrderPatch(v.orig, f.Tasks) != nil {
			g.Fix = "acquire the semaphores in one order in every task: here, each stuck task's acquires in the order the semaphores are declared"
		}
		v.add(g)
	}
	if !res.Complete && len(v.findings) == 0 && v.exploreWhy != "" && v.f.threads() > v.f.workers {
		// Too large for the explorer: an adversarial dispatch may still
		// exhibit a stall, with a witness.
		trace, stuck, err := v.dispatchStall(ctx)
		if err != nil {
			return err
		}
		if len(stuck) > 0 {
			v.add(v.stallFinding(trace, stuck))
		}
	}
	if !res.Complete {
		why := "semaphores are decided by the explorer"
		if v.exploreWhy != "" {
			why = v.exploreWhy
		}
		reason := res.Reason
		if reason == "" {
			reason = fmt.Sprintf("its budget of %d states ran out after %d states (Config.MaxStates)", max, res.States)
		}
		v.inconclusive(fmt.Sprintf("%s, and the explorer stopped: %s", why, reason))
	}
	return nil
}
