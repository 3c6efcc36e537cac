package explore

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/internal/progen"
	"github.com/megaproof/megaproof/schedule"
	"pgregory.net/rapid"
)

// brute enumerates every interleaving of p (no reduction, no state
// hashing) with schedule.Replay as the semantics and judges each finding
// from its definition through schedule.CheckWitness. It returns the
// dynamic findings as "code[tasks]" strings (deadlocks and overflows by
// code only), or ok=false when p has too many interleavings.
//
// Replay applies residency and dispatch; the unbounded launch that
// classifies stuck states is Replay of unbounded(p).
func brute(p *schedule.Program, limit int) (out []string, ok bool) {
	f := schedule.Lower(p)
	nt := len(p.Tasks)
	races := map[[2]int]bool{}
	notMust := map[[2]int]bool{} // (a, b): b began once while a had not ended
	scope := map[[2]int]bool{}
	uninit := map[int]bool{}
	stuck := map[string]bool{} // codes of stuck states under residency and dispatch
	overflow := false
	pairs := scopePairs(f)
	nodes := 0
	explore := func(q *schedule.Program, judge bool) (anyStuck, ok bool) {
		stack := [][]schedule.Event{nil}
		for len(stack) > 0 {
			tr := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if nodes++; nodes > limit {
				return false, false
			}
			st, err := schedule.Replay(q, tr)
			if err != nil {
				panic(err)
			}
			if st.Stuck() {
				anyStuck = true
				if judge {
					stuck[refCode(q, f, st)] = true
				}
			}
			if judge {
				for _, pr := range pairs {
					if !scope[pr] && schedule.CheckWitness(q, CodeRaceScope, pr[:], tr) == nil {
						scope[pr] = true
					}
				}
			}
			if judge && len(tr) > 0 {
				last := tr[len(tr)-1]
				op := f.Threads[last.Thread].Ops[last.Step]
				if op.Kind == schedule.OpBegin {
					b := int(op.Task)
					for a := 0; a < nt; a++ {
						if _, ea := st.BodyEvents(a); a != b && ea < 0 {
							notMust[[2]int{a, b}] = true
						}
						if ba, _ := st.BodyEvents(a); a == b || ba < 0 {
							continue
						}
						if thread(f, a) != thread(f, b) && schedule.CheckWitness(q, "race", []int{a, b}, tr) == nil {
							races[[2]int{min(a, b), max(a, b)}] = true
						}
					}
					if schedule.CheckWitness(q, "uninitialized-read", []int{b}, tr) == nil {
						uninit[b] = true
					}
				}
				if slices.Contains(st.Overflowed, true) {
					overflow = true
				}
			}
			for th := range f.Threads {
				if st.Enabled(th) == nil {
					stack = append(stack, append(slices.Clone(tr), schedule.Event{Thread: int32(th), Step: st.Pos[th]}))
				}
			}
		}
		return anyStuck, true
	}
	mainStuck, ok := explore(p, true)
	if !ok {
		return nil, false
	}
	if mainStuck {
		ubStuck, ok := explore(unbounded(p), false)
		if !ok {
			return nil, false
		}
		if ubStuck {
			for k := range stuck {
				out = append(out, k)
			}
		} else {
			out = append(out, CodeOccupancy)
		}
	}
	for pr := range races {
		a, b := pr[0], pr[1]
		code := raceKind(p, a, b)
		if !notMust[[2]int{a, b}] || !notMust[[2]int{b, a}] {
			code = CodeRaceUnsynchronized
		}
		out = append(out, fmt.Sprintf("%s%v", code, []int{a, b}))
	}
	for pr := range scope {
		out = append(out, fmt.Sprintf("%s%v", CodeRaceScope, pr[:]))
	}
	for r := range uninit {
		out = append(out, fmt.Sprintf("%s%v", CodeUninitializedRead, []int{r}))
	}
	if overflow {
		out = append(out, CodeCounterOverflow)
	}
	sort.Strings(out)
	return out, true
}

// unbounded returns p's unbounded launch as a program: every worker
// resident, and every dynamic task pinned to a worker of its own (its
// thread keeps its index and operations in the normal form), so that
// Replay runs it with no residency and no claim rule.
func unbounded(p *schedule.Program) *schedule.Program {
	q := p.Clone()
	w := q.Launch.Workers
	for i := range q.Tasks {
		if !q.Tasks[i].Pinned() {
			q.Tasks[i].Worker = int32(w)
			w++
		}
	}
	q.Launch.Workers, q.Launch.SMs, q.Launch.PerSM, q.Launch.Cooperative = w, w, 1, true
	return q
}

// scopePairs lists the task pairs (lower first) that have operations of
// different threads on one counter or semaphore, one modifying it and one
// cta-scoped: the candidates of race.scope.
func scopePairs(f *schedule.Form) [][2]int {
	type use struct {
		th, task   int
		obj        int
		mod, local bool
	}
	var us []use
	for th, t := range f.Threads {
		for _, op := range t.Ops {
			u := use{th: th, task: int(op.Task), obj: int(op.Object), mod: op.Kind != schedule.OpWait, local: op.Scope == schedule.ScopeCTA}
			switch op.Kind {
			case schedule.OpWait, schedule.OpSignal:
			case schedule.OpAcquire, schedule.OpRelease:
				u.obj = -1 - u.obj
			default:
				continue
			}
			us = append(us, u)
		}
	}
	seen := map[[2]int]bool{}
	var out [][2]int
	for i, x := range us {
		for _, y := range us[i+1:] {
			if x.th != y.th && x.obj == y.obj && (x.mod || y.mod) && (x.local || y.local) {
				pr := [2]int{min(x.task, y.task), max(x.task, y.task)}
				if !seen[pr] {
					seen[pr] = true
					out = append(out, pr)
				}
			}
		}
	}
	return out
}

func thread(f *schedule.Form, task int) int {
	for th := range f.Threads {
		for _, op := range f.Threads[th].Ops {
			if op.Kind == schedule.OpBegin && int(op.Task) == task {
				return th
			}
		}
	}
	return -1
}

// refCode classifies a stuck state by docs/SEMANTICS.md's rule, in the
// order semaphore, barrier, unsatisfiable, cycle; an unclaimed dynamic
// task is stuck at the first operation of its guard that does not hold.
func refCode(p *schedule.Program, f *schedule.Form, st *schedule.State) string {
	sem, bar, unsat := false, false, false
	for th := range f.Threads {
		if st.Finished(th) || th < f.Workers && th >= st.Started {
			continue
		}
		op := f.Threads[th].Ops[st.Pos[th]]
		if th >= f.Workers && st.Pos[th] == 0 {
			// Unclaimed: stuck at the first guard operation that does not hold.
			for _, g := range f.Threads[th].Ops[:f.Threads[th].Guard()] {
				if g.Kind == schedule.OpWait && st.Counters[g.Object] < g.Value || g.Kind == schedule.OpAcquire && st.Tokens[g.Object] < g.Value {
					op = g
					break
				}
			}
		}
		switch op.Kind {
		case schedule.OpAcquire:
			sem = true
		case schedule.OpAwait:
			bar = true
		case schedule.OpWait:
			total := p.Counters[op.Object].Init
			for _, t := range f.Threads {
				for _, o := range t.Ops {
					if o.Kind == schedule.OpSignal && o.Object == op.Object {
						total += o.Value
					}
				}
			}
			if op.Value > total {
				unsat = true
			}
		}
	}
	switch {
	case sem:
		return CodeDeadlockSemaphore
	case bar:
		return CodeDeadlockBarrier
	case unsat:
		return CodeDeadlockUnsatisfiable
	}
	return CodeDeadlockCycle
}

// dynamic renders the explorer's non-static findings like brute does.
func dynamic(r *Result) []string {
	var out []string
	for _, f := range r.Findings {
		switch f.Code {
		case CodeOutOfBounds, CodeReadonlyWrite, CodeOutputUnwritten:
		case CodeOccupancy:
			if len(f.Trace) > 0 || len(f.Tasks) > 0 {
				out = append(out, f.Code)
			}
		case CodeDeadlockCycle, CodeDeadlockBarrier, CodeDeadlockSemaphore, CodeDeadlockUnsatisfiable:
			out = append(out, f.Code)
		case CodeCounterOverflow:
			if !slices.Contains(out, f.Code) {
				out = append(out, f.Code)
			}
		default:
			out = append(out, fmt.Sprintf("%s%v", f.Code, f.Tasks))
		}
	}
	sort.Strings(out)
	return out
}

var tiny = progen.Options{MaxThreads: 3, MaxSteps: 5, MaxTasks: 5, Semaphores: true, Barriers: true,
	Relaxed: true, Scopes: true, Dynamic: true, Aliasing: true, Residency: true, Blocking: true}

// TestAgainstBruteForce compares the explorer (reduced, hashed, own
// clocks) with a plain enumeration of every interleaving judged by
// schedule.Replay, on random tiny programs.
//
// At least half of the drawn programs must be small enough to compare,
// whatever number of programs rapid draws (-rapid.checks; a fifth of it
// under -short).
func TestAgainstBruteForce(t *testing.T) {
	drawn, compared := 0, 0
	tally := map[string]int{}
	rapid.Check(t, func(t *rapid.T) {
		p := progen.Program(tiny).Draw(t, "p")
		drawn++
		want, ok := brute(p, 200000)
		if !ok {
			return
		}
		compared++
		r, err := Run(context.Background(), p, Config{})
		if err != nil || !r.Complete {
			t.Fatalf("Run: complete %v, err %v", r.Complete, err)
		}
		for _, f := range r.Findings {
			if err := witness(p, f); err != nil {
				t.Fatalf("witness of %s %v rejected: %v\ntrace %v", f.Code, f.Tasks, err, f.Trace)
			}
		}
		if got := dynamic(r); !slices.Equal(got, want) {
			t.Fatalf("explorer %v\nbrute force %v", got, want)
		}
		for _, f := range want {
			code, _, _ := strings.Cut(f, "[")
			tally[code]++
		}
	})
	t.Logf("%d of %d programs compared; findings by code: %v", compared, drawn, tally)
	if drawn == 0 || 2*compared < drawn {
		t.Errorf("only %d of %d programs were small enough to compare; want at least half", compared, drawn)
	}
}

// TestWitnessesReplay confirms every witness of random Small programs.
func TestWitnessesReplay(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := progen.Program(progen.Small()).Draw(t, "p")
		r, err := Run(context.Background(), p, Config{MaxStates: 100000})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range r.Findings {
			if err := witness(p, f); err != nil {
				t.Fatalf("witness of %s %v rejected: %v\n%v", f.Code, f.Tasks, err, f.Trace)
			}
		}
	})
}
