package schedule_test

import (
	"strings"
	"testing"

	"github.com/megaproof/megaproof/schedule"
)

const barrierPool = `{"format": "megaproof/v1", "name": "dynamic-barrier-pool", "launch": {"sms": 2, "workers": 2, "cooperative": true},
 "barriers": [{"name": "b", "parties": 3}],
 "tasks": [{"name": "d0", "before": [{"sync": "b"}]}, {"name": "d1", "before": [{"sync": "b"}]},
           {"name": "d2", "before": [{"sync": "b"}]}]}`

const ctaAcross = `{"format": "megaproof/v1", "name": "cta-wait-across-workers", "launch": {"sms": 4, "workers": 2, "cooperative": true},
 "counters": [{"name": "c"}],
 "tasks": [
  {"name": "producer", "worker": 0, "after": [{"signal": "c"}]},
  {"name": "consumer", "worker": 1, "before": [{"wait": "c", "ge": 1, "scope": "cta"}]}]}`

func decode(t *testing.T, doc string) *schedule.Program {
	t.Helper()
	p, err := schedule.Unmarshal([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDispatchHoldsWorkers(t *testing.T) {
	p := decode(t, barrierPool)
	// Threads 0 and 1 are the empty workers; 2, 3, 4 the dynamic tasks.
	st, err := schedule.Replay(p, []schedule.Event{ev(2, 0), ev(3, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if !st.Stuck() {
		t.Fatal("two tasks waiting at the barrier hold both workers; the third cannot be claimed, yet the state is not stuck")
	}
	if err := st.Enabled(4); err == nil || !strings.Contains(err.Error(), "no worker is free") {
		t.Errorf("claim of d2: %v; want no worker free", err)
	}
	if err := schedule.CheckWitness(p, "occupancy", nil, []schedule.Event{ev(2, 0), ev(3, 0)}); err != nil {
		t.Errorf("occupancy witness: %v", err)
	}
	// With three workers every task is claimed and the barrier opens.
	p.Launch.Workers = 3
	trace := cat(run(3, 0, 1), run(4, 0, 1), run(5, 0, 1), run(3, 1, 4), run(4, 1, 4), run(5, 1, 4))
	st, err = schedule.Replay(p, trace)
	if err != nil {
		t.Fatal(err)
	}
	if !st.AllFinished() {
		t.Error("three workers: not every task finished")
	}
}

func TestDispatchSimpleTasksNeedNoFreeWorker(t *testing.T) {
	// Worker 0 spins on c, which only the dynamic task signals: a spinning
	// worker runs ready simple tasks.
	b := schedule.NewBuilder("helper", schedule.Launch{SMs: 1, PerSM: 1, Workers: 1, Cooperative: true})
	c := b.Counter("c")
	b.Task("static").On(0).Wait(c, 1)
	b.Task("dyn").Signal(c, 1)
	p := mustBuild(t, b)
	st, err := schedule.Replay(p, cat(run(1, 0, 3), run(0, 0, 3)))
	if err != nil {
		t.Fatal(err)
	}
	if !st.AllFinished() {
		t.Error("not finished")
	}
	// A non-simple task (a barrier await after its guard) needs a finished
	// worker, and there is none.
	b = schedule.NewBuilder("no-helper", schedule.Launch{SMs: 1, PerSM: 1, Workers: 1, Cooperative: true})
	c = b.Counter("c")
	one := b.Barrier("one", 1)
	b.Task("static").On(0).Wait(c, 1)
	b.Task("dyn").Signal(c, 1)
	b.Task("dyn2").Sync(one).Signal(c, 1)
	p = mustBuild(t, b)
	st, err = schedule.Replay(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Enabled(2); err == nil || !strings.Contains(err.Error(), "no worker is free") {
		t.Errorf("non-simple claim by a spinning worker: %v; want refused", err)
	}
	if err := st.Enabled(1); err != nil {
		t.Errorf("simple claim by a spinning worker: %v", err)
	}
}

func TestDispatchGuard(t *testing.T) {
	// A task is claimed only once its whole guard holds.
	b := schedule.NewBuilder("guard", schedule.Launch{SMs: 2, PerSM: 1, Workers: 2, Cooperative: true})
	c, d := b.Counter("c"), b.Counter("d")
	b.Task("sc").On(0).Signal(c, 1)
	b.Task("sd").On(1).Wait(c, 1).Signal(d, 1)
	b.Task("dyn").Wait(c, 1).Wait(d, 1)
	p := mustBuild(t, b)
	_, err := schedule.Replay(p, cat(run(0, 0, 3), run(2, 0, 1)))
	if err == nil || !strings.Contains(err.Error(), "its guard does not hold") {
		t.Fatalf("claim with half the guard: %v", err)
	}
	if _, err := schedule.Replay(p, cat(run(0, 0, 3), run(1, 0, 4), run(2, 0, 4))); err != nil {
		t.Fatal(err)
	}
}

func TestWorkerExit(t *testing.T) {
	// One resident slot: the empty worker 0 stays resident while the
	// dynamic task remains, so worker 1, its producer, never starts.
	b := schedule.NewBuilder("exit", schedule.Launch{SMs: 1, PerSM: 1, Workers: 2})
	c := b.Counter("c")
	b.Task("producer").On(1).Signal(c, 1)
	b.Task("dyn").Wait(c, 1)
	p := mustBuild(t, b)
	st, err := schedule.Replay(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Stuck() {
		t.Error("worker 1 started although worker 0 has not exited")
	}
	// Without the dynamic task worker 0 exits at once.
	p.Tasks = p.Tasks[:1]
	st, err = schedule.Replay(p, run(1, 0, 3))
	if err != nil {
		t.Fatal(err)
	}
	if !st.AllFinished() {
		t.Error("not finished")
	}
}

func TestScopeRaceWitness(t *testing.T) {
	p := decode(t, ctaAcross)
	// Worker 1 spins at its cta wait from the start; worker 0 reaches its
	// signal after its body.
	if err := schedule.CheckWitness(p, "race.scope", []int{0, 1}, run(0, 0, 2)); err != nil {
		t.Errorf("witness: %v", err)
	}
	if err := schedule.CheckWitness(p, "race.scope", []int{0, 1}, nil); err == nil {
		t.Error("the signal is not reached yet, but the witness holds")
	}
	// Executed both ways round: still unordered.
	if err := schedule.CheckWitness(p, "race.scope", []int{0, 1}, cat(run(0, 0, 3), run(1, 0, 3))); err != nil {
		t.Errorf("witness after both ran: %v", err)
	}
	// The same-worker twin runs on one thread.
	twin := decode(t, strings.Replace(ctaAcross, `"worker": 1`, `"worker": 0`, 1))
	if err := schedule.CheckWitness(twin, "race.scope", []int{0, 1}, run(0, 0, 3)); err == nil {
		t.Error("same-worker twin: witness holds")
	}
	// A gpu wait after a gpu handoff orders the pair: the cta signal happens
	// before the reaching of the wait.
	b := schedule.NewBuilder("ordered", schedule.Launch{SMs: 2, PerSM: 1, Workers: 2, Cooperative: true})
	c, d := b.Counter("c"), b.Counter("d")
	b.Task("p").On(0).Signal(c, 1, schedule.WithScope(schedule.ScopeCTA)).Signal(d, 1)
	b.Task("q").On(1).Wait(d, 1).Wait(c, 1)
	ordered := mustBuild(t, b)
	if err := schedule.CheckWitness(ordered, "race.scope", []int{0, 1}, cat(run(0, 0, 4), run(1, 0, 2))); err == nil {
		t.Error("ordered pair: witness holds")
	}
}

func TestReplayRefusesInvalidPrograms(t *testing.T) {
	if _, err := schedule.Replay(nil, nil); err == nil {
		t.Error("Replay(nil): no error")
	}
	if err := schedule.CheckWitness(nil, "race.raw", []int{0, 1}, nil); err == nil {
		t.Error("CheckWitness(nil): no error")
	}
	// A task pinned to a worker the launch lacks, and a step naming a
	// counter that does not exist: errors, not panics.
	bad := &schedule.Program{
		Launch:   schedule.Launch{SMs: 1, PerSM: 1, Workers: 1},
		Counters: []schedule.Counter{{Name: "c", Width: 32}},
		Tasks: []schedule.Task{
			{Name: "a", Worker: 3},
			{Name: "b", Worker: schedule.Dynamic, Before: []schedule.Step{{Kind: schedule.Wait, Object: 7, Value: 1}}},
		},
	}
	if _, err := schedule.Replay(bad, []schedule.Event{ev(0, 0)}); err == nil {
		t.Error("Replay of an invalid program: no error")
	}
	if _, err := schedule.NewMachine(bad); err == nil {
		t.Error("NewMachine of an invalid program: no error")
	}
	if err := schedule.CheckWitness(bad, "deadlock.cycle", nil, nil); err == nil {
		t.Error("CheckWitness of an invalid program: no error")
	}
}
