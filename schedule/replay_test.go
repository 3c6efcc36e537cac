package schedule_test

import (
	"strings"
	"testing"

	"github.com/megaproof/megaproof/schedule"
)

// ev is shorthand for an event.
func ev(thread, step int32) schedule.Event { return schedule.Event{Thread: thread, Step: step} }

// run returns the events that execute thread th's steps [from, to).
func run(th int32, from, to int32) []schedule.Event {
	var out []schedule.Event
	for s := from; s < to; s++ {
		out = append(out, ev(th, s))
	}
	return out
}

// cat concatenates traces.
func cat(traces ...[]schedule.Event) []schedule.Event {
	var out []schedule.Event
	for _, t := range traces {
		out = append(out, t...)
	}
	return out
}

func TestReplayRefusals(t *testing.T) {
	coop := handoff(t, true)
	// Non-cooperative, one resident slot: worker 1 starts only once worker 0 finishes.
	b := schedule.NewBuilder("one-slot", schedule.Launch{SMs: 1, PerSM: 1, Workers: 2})
	c := b.Counter("c")
	b.Task("first").On(0).Signal(c, 1)
	b.Task("second").On(1).Wait(c, 1)
	oneSlot := mustBuild(t, b)

	tests := []struct {
		name   string
		p      *schedule.Program
		trace  []schedule.Event
		want   string // substring of the error; "" means accepted
		reason string
	}{
		{"wait-not-enabled", coop, []schedule.Event{ev(1, 0)}, "event 0 (thread 1, step 0): worker 1: counter ready is 0, below 1", "the consumer cannot pass its wait first"},
		{"wrong-step", coop, []schedule.Event{ev(0, 1)}, "event 0 (thread 0, step 1): worker 0 is at step 0, not 1", "events name the thread's next step exactly"},
		{"skipped-step", coop, []schedule.Event{ev(0, 0), ev(0, 2)}, "event 1 (thread 0, step 2): worker 0 is at step 1, not 2", "steps cannot be skipped"},
		{"finished", coop, cat(run(0, 0, 3), []schedule.Event{ev(0, 3)}), "event 3 (thread 0, step 3): worker 0 has finished", "a finished thread has no next step"},
		{"unknown-thread", coop, []schedule.Event{ev(5, 0)}, "no thread 5 (have 2)", "only lowered threads exist"},
		{"negative-thread", coop, []schedule.Event{ev(-2, 0)}, "event 0 (malformed event {thread -2, step 0}): not an event", "thread ids are non-negative, -1 only in an advance"},
		{"not-resident", oneSlot, []schedule.Event{ev(1, 0)}, "worker 1 is not resident: 1 of 1 slots are held by workers that have not exited", "non-cooperative launches start workers as slots free"},
		{"resident-after-finish", oneSlot, cat(run(0, 0, 3), run(1, 0, 3)), "", "worker 1 starts once worker 0 finishes"},
		{"cooperative-all-resident", coop, cat(run(0, 0, 3), run(1, 0, 3)), "", "the handoff completes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := schedule.Replay(tt.p, tt.trace)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Replay: %v (%s)", err, tt.reason)
				}
				if !st.AllFinished() || st.Stuck() {
					t.Errorf("AllFinished = %v, Stuck = %v; want a finished run", st.AllFinished(), st.Stuck())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Replay error = %v; want it to contain %q (%s)", err, tt.want, tt.reason)
			}
			if st == nil {
				t.Fatal("Replay returned no state with its error")
			}
			if n := len(st.Trace()); n >= len(tt.trace) {
				t.Errorf("state executed %d events; the refused one must not count", n)
			}
		})
	}
}

func TestResidencyStart(t *testing.T) {
	// Three workers, capacity 2: worker 2 starts when either of 0, 1 finishes;
	// an empty worker finishes as soon as it starts.
	b := schedule.NewBuilder("res", schedule.Launch{SMs: 2, PerSM: 1, Workers: 4})
	c := b.Counter("c")
	b.Task("a").On(0).Signal(c, 1)
	b.Task("b").On(1).Wait(c, 1)
	b.Task("d").On(3).Wait(c, 1)
	p := mustBuild(t, b)
	m, err := schedule.NewMachine(p)
	if err != nil {
		t.Fatal(err)
	}
	if m.Started != 2 {
		t.Fatalf("Started = %d at the initial state; want 2", m.Started)
	}
	for _, e := range run(0, 0, 3) {
		if err := m.Step(e); err != nil {
			t.Fatal(err)
		}
	}
	// Worker 0 finished: worker 2 (empty) starts and finishes, so worker 3 starts too.
	if m.Started != 4 {
		t.Fatalf("Started = %d after worker 0 finished; want 4 (empty worker 2 frees its slot)", m.Started)
	}
	if err := m.Enabled(3); err != nil {
		t.Fatalf("worker 3: %v", err)
	}
}

func TestBarrierGenerations(t *testing.T) {
	b := schedule.NewBuilder("bar", schedule.Launch{SMs: 2, PerSM: 1, Workers: 2, Cooperative: true})
	g := b.Barrier("g", 2)
	b.Task("a0").On(0).Sync(g)
	b.Task("b0").On(1).Sync(g)
	b.Task("a1").On(0).Sync(g)
	b.Task("b1").On(1).Arrive(g)
	p := mustBuild(t, b)
	f := schedule.Lower(p)
	// Worker 0: arrive, await 2, begin, end, arrive, await 4, begin, end.
	w0 := f.Threads[0].Ops
	if len(w0) != 8 || w0[1].Kind != schedule.OpAwait || w0[1].Value != 2 || w0[5].Kind != schedule.OpAwait || w0[5].Value != 4 {
		t.Fatalf("worker 0 lowered to %+v; want awaits of generation 1 (2) and 2 (4)", w0)
	}
	// Worker 1: arrive, await 2, begin, end, begin, end, arrive (no await).
	w1 := f.Threads[1].Ops
	if len(w1) != 7 || w1[6].Kind != schedule.OpArrive {
		t.Fatalf("worker 1 lowered to %+v; want its arrive after b1's body", w1)
	}

	_, err := schedule.Replay(p, []schedule.Event{ev(0, 0), ev(0, 1)})
	if err == nil || !strings.Contains(err.Error(), "barrier g has 1 arrivals, below 2") {
		t.Fatalf("await before the second arrival: %v", err)
	}
	trace := cat(run(0, 0, 1), run(1, 0, 1), run(0, 1, 5), []schedule.Event{ev(0, 5)})
	if _, err := schedule.Replay(p, trace); err == nil || !strings.Contains(err.Error(), "3 arrivals, below 4") {
		t.Fatalf("generation 2 before worker 1's second arrival: %v", err)
	}
	trace = cat(run(0, 0, 1), run(1, 0, 1), run(0, 1, 5), run(1, 1, 7), run(0, 5, 8))
	st, err := schedule.Replay(p, trace)
	if err != nil {
		t.Fatal(err)
	}
	if st.Arrivals[g] != 4 || !st.AllFinished() {
		t.Fatalf("arrivals %d, finished %v; want 4, true", st.Arrivals[g], st.AllFinished())
	}
	// b1's body happens before a1's: b1 ends, then worker 1 arrives, and a1's await reads it.
	_, endB1 := st.BodyEvents(3)
	beginA1, _ := st.BodyEvents(2)
	if !st.HappensBefore(endB1, beginA1) {
		t.Error("the arrive after b1 does not order b1 before a1")
	}
	// In that trace worker 1's first await came after worker 0's second
	// arrival (after a0), and an await synchronizes with every arrival before
	// it: a0 happens before b0.
	_, ea0 := st.BodyEvents(0)
	bb0, _ := st.BodyEvents(1)
	if !st.HappensBefore(ea0, bb0) {
		t.Error("an await does not synchronize with a later generation's arrival before it")
	}
	// Both awaits before any second-generation arrival: a0 and b0 unordered.
	st, err = schedule.Replay(p, cat(run(0, 0, 1), run(1, 0, 1), run(0, 1, 4), run(1, 1, 4)))
	if err != nil {
		t.Fatal(err)
	}
	ba0, ea0 := st.BodyEvents(0)
	bb0, eb0 := st.BodyEvents(1)
	if st.HappensBefore(ea0, bb0) || st.HappensBefore(eb0, ba0) {
		t.Error("bodies of one generation are ordered")
	}
}

func TestSemaphore(t *testing.T) {
	build := func(scope schedule.Scope) *schedule.Program {
		p := &schedule.Program{
			Launch:     schedule.Launch{SMs: 1, PerSM: 1, Workers: 1},
			Semaphores: []schedule.Semaphore{{Name: "slot", Tokens: 1}},
			Tasks: []schedule.Task{
				{Name: "u", Worker: schedule.Dynamic, Before: []schedule.Step{{Kind: schedule.Acquire, Value: 1}}, After: []schedule.Step{{Kind: schedule.Release, Value: 1, Scope: scope}}},
				{Name: "v", Worker: schedule.Dynamic, Before: []schedule.Step{{Kind: schedule.Acquire, Value: 1}}, After: []schedule.Step{{Kind: schedule.Release, Value: 1}}},
			},
		}
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := build(schedule.ScopeGPU)
	// Thread 0 is the empty worker; threads 1 and 2 are the dynamic tasks u and v.
	_, err := schedule.Replay(p, []schedule.Event{ev(1, 0), ev(2, 0)})
	if err == nil || !strings.Contains(err.Error(), `task "v" cannot be claimed: its guard does not hold`) {
		t.Fatalf("second acquire: %v", err)
	}
	trace := cat(run(1, 0, 4), run(2, 0, 2))
	st, err := schedule.Replay(p, trace)
	if err != nil {
		t.Fatal(err)
	}
	if st.Tokens[0] != 0 {
		t.Errorf("tokens %d; want 0 while v holds the slot", st.Tokens[0])
	}
	_, endU := st.BodyEvents(0)
	beginV, _ := st.BodyEvents(1)
	if !st.HappensBefore(endU, beginV) {
		t.Error("release (gpu) → acquire does not order u before v")
	}
	st, err = schedule.Replay(build(schedule.ScopeCTA), trace)
	if err != nil {
		t.Fatal(err)
	}
	_, endU = st.BodyEvents(0)
	beginV, _ = st.BodyEvents(1)
	if st.HappensBefore(endU, beginV) {
		t.Error("a cta-scoped release orders two dynamic tasks")
	}
}

// hbCase builds producer (worker 0: body, after-steps) and consumer
// (worker 1: before-steps, body) and replays the whole handoff.
func hbCase(t *testing.T, produce func(*schedule.TaskBuilder, schedule.CounterRef), consume func(*schedule.TaskBuilder, schedule.CounterRef)) *schedule.State {
	t.Helper()
	b := schedule.NewBuilder("hb", schedule.Launch{SMs: 2, PerSM: 1, Workers: 2, Cooperative: true})
	c := b.Counter("c")
	produce(b.Task("produce").On(0), c)
	consume(b.Task("consume").On(1), c)
	p := mustBuild(t, b)
	f := schedule.Lower(p)
	trace := cat(run(0, 0, int32(len(f.Threads[0].Ops))), run(1, 0, int32(len(f.Threads[1].Ops))))
	st, err := schedule.Replay(p, trace)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestHappensBefore(t *testing.T) {
	signal := func(opts ...schedule.StepOption) func(*schedule.TaskBuilder, schedule.CounterRef) {
		return func(tb *schedule.TaskBuilder, c schedule.CounterRef) { tb.Signal(c, 1, opts...) }
	}
	wait := func(opts ...schedule.StepOption) func(*schedule.TaskBuilder, schedule.CounterRef) {
		return func(tb *schedule.TaskBuilder, c schedule.CounterRef) { tb.Wait(c, 1, opts...) }
	}
	tests := []struct {
		name    string
		produce func(*schedule.TaskBuilder, schedule.CounterRef)
		consume func(*schedule.TaskBuilder, schedule.CounterRef)
		hb      bool
		reason  string
	}{
		{"release-acquire", signal(), wait(), true, "the default orders"},
		{"sys-scope", signal(schedule.WithScope(schedule.ScopeSys)), wait(schedule.WithScope(schedule.ScopeSys)), true, "sys includes gpu"},
		{"relaxed-signal", signal(schedule.Relaxed()), wait(), false, "a relaxed signal releases nothing"},
		{"fence-then-relaxed-signal", func(tb *schedule.TaskBuilder, c schedule.CounterRef) {
			tb.FenceAfter(schedule.ScopeGPU).Signal(c, 1, schedule.Relaxed())
		}, wait(), true, "the fence is the release point"},
		{"relaxed-signal-then-fence", func(tb *schedule.TaskBuilder, c schedule.CounterRef) {
			tb.Signal(c, 1, schedule.Relaxed()).FenceAfter(schedule.ScopeGPU)
		}, wait(), false, "a fence after the signal is too late"},
		{"cta-fence-relaxed-signal", func(tb *schedule.TaskBuilder, c schedule.CounterRef) {
			tb.FenceAfter(schedule.ScopeCTA).Signal(c, 1, schedule.Relaxed())
		}, wait(), false, "a cta fence does not reach another worker"},
		{"relaxed-wait", signal(), wait(schedule.Relaxed()), false, "a relaxed wait acquires nothing"},
		{"relaxed-wait-then-fence", signal(), func(tb *schedule.TaskBuilder, c schedule.CounterRef) {
			tb.Wait(c, 1, schedule.Relaxed()).FenceBefore(schedule.ScopeGPU)
		}, true, "the fence completes the relaxed wait"},
		{"cta-signal", signal(schedule.WithScope(schedule.ScopeCTA)), wait(), false, "cta scope does not order two workers"},
		{"cta-wait", signal(), wait(schedule.WithScope(schedule.ScopeCTA)), false, "cta scope does not order two workers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := hbCase(t, tt.produce, tt.consume)
			_, endP := st.BodyEvents(0)
			beginC, _ := st.BodyEvents(1)
			if got := st.HappensBefore(endP, beginC); got != tt.hb {
				t.Errorf("End(produce) HB Begin(consume) = %v; want %v (%s)", got, tt.hb, tt.reason)
			}
			if st.HappensBefore(beginC, endP) {
				t.Error("happens-before points backwards in the trace")
			}
		})
	}
}

func TestHappensBeforeRelaxedWaitFence(t *testing.T) {
	// HB starts at the fence, not at the relaxed wait.
	st := hbCase(t,
		func(tb *schedule.TaskBuilder, c schedule.CounterRef) { tb.Signal(c, 1) },
		func(tb *schedule.TaskBuilder, c schedule.CounterRef) {
			tb.Wait(c, 1, schedule.Relaxed()).FenceBefore(schedule.ScopeGPU)
		})
	// Trace: 0 begin, 1 end, 2 signal (worker 0); 3 wait, 4 fence, 5 begin, 6 end (worker 1).
	_, endP := st.BodyEvents(0)
	if endP != 1 {
		t.Fatalf("End(produce) at %d; want 1", endP)
	}
	if st.HappensBefore(endP, 3) {
		t.Error("the relaxed wait itself is ordered after the producer")
	}
	if !st.HappensBefore(endP, 4) || !st.HappensBefore(endP, 5) {
		t.Error("the fence and the body after it are not ordered after the producer")
	}
	if !st.HappensBefore(0, 1) || st.HappensBefore(1, 1) || st.HappensBefore(-1, 2) || st.HappensBefore(0, 99) {
		t.Error("program order or the bounds of HappensBefore are wrong")
	}
	past := st.Past(5)
	if !past(2) || past(5) || past(6) {
		t.Error("Past(5) disagrees with HappensBefore")
	}
}

func TestReleaseSequence(t *testing.T) {
	// Two producers add to c; a consumer waiting for c >= 1 synchronizes with
	// every release signal before its read, not only the first.
	b := schedule.NewBuilder("seq", schedule.Launch{SMs: 3, PerSM: 1, Workers: 3, Cooperative: true})
	c := b.Counter("c")
	b.Task("p0").On(0).Signal(c, 1)
	b.Task("p1").On(1).Signal(c, 1)
	b.Task("q").On(2).Wait(c, 1)
	p := mustBuild(t, b)
	st, err := schedule.Replay(p, cat(run(0, 0, 3), run(1, 0, 3), run(2, 0, 3)))
	if err != nil {
		t.Fatal(err)
	}
	bq, _ := st.BodyEvents(2)
	for task := range 2 {
		if _, e := st.BodyEvents(task); !st.HappensBefore(e, bq) {
			t.Errorf("p%d's body does not happen before q's", task)
		}
	}
	// With q reading after p0 only, p1 is not ordered before q.
	st, err = schedule.Replay(p, cat(run(0, 0, 3), run(2, 0, 3), run(1, 0, 3)))
	if err != nil {
		t.Fatal(err)
	}
	bq, _ = st.BodyEvents(2)
	if _, e := st.BodyEvents(1); st.HappensBefore(e, bq) {
		t.Error("p1 happens before q although q read before p1 signalled")
	}
}

func TestCheckWitness(t *testing.T) {
	// Deadlock: consume waits for 2 but only one signal exists.
	dl := handoff(t, true)
	dl.Tasks[1].Before[0].Value = 2
	// Race: two dynamic writers of x with no synchronization.
	rb := schedule.NewBuilder("race", schedule.Launch{SMs: 1, PerSM: 1, Workers: 1})
	x := rb.Buffer("x", schedule.KindScratch, 64)
	y := rb.Buffer("y", schedule.KindScratch, 64)
	rb.Task("w0").Write(x, 0, 32)
	rb.Task("w1").Write(x, 16, 32)
	rb.Task("w2").Write(y, 0, 64)
	race := mustBuild(t, rb)
	// Relaxed handoff: must-precede, but no HB.
	relaxed := handoff(t, true)
	relaxed.Tasks[0].After[0].Relaxed = true
	// Uninitialized read through an alias: w writes page-alias a, r reads b.
	ub := schedule.NewBuilder("alias", schedule.Launch{SMs: 2, PerSM: 1, Workers: 2, Cooperative: true})
	page := ub.Arena("page", 64)
	a := ub.BufferIn("a", schedule.KindScratch, 64, page, 0)
	bb := ub.BufferIn("b", schedule.KindScratch, 64, page, 0)
	ready := ub.Counter("ready")
	ub.Task("w").On(0).Write(a, 0, 64).Signal(ready, 1)
	ub.Task("r").On(1).Wait(ready, 1).Read(bb, 0, 64)
	alias := mustBuild(t, ub)
	// Overflow: a 32-bit counter at its maximum gets one more.
	ob := schedule.NewBuilder("ovf", schedule.Launch{SMs: 1, PerSM: 1, Workers: 1})
	oc := ob.CounterInit("c", 1<<32-1, 32)
	ob.Task("t").On(0).Signal(oc, 1)
	ob.Task("u").On(0).Signal(ob.Counter("d"), 1) // d never overflows
	ovf := mustBuild(t, ob)
	// Occupancy: cooperative launch beyond capacity (static), and a
	// non-cooperative one where worker 0 waits for worker 1, which cannot start.
	over := handoff(t, true)
	over.Launch.SMs = 1
	nb := schedule.NewBuilder("occ", schedule.Launch{SMs: 1, PerSM: 1, Workers: 2})
	nc := nb.Counter("c")
	nb.Task("early").On(0)
	nb.Task("waiter").On(0).Wait(nc, 1)
	nb.Task("producer").On(1).Signal(nc, 1)
	occ := mustBuild(t, nb)
	sb := schedule.NewBuilder("occ-start", schedule.Launch{SMs: 1, PerSM: 1, Workers: 2})
	sc := sb.Counter("c")
	sb.Task("waiter").On(0).Wait(sc, 1)
	sb.Task("producer").On(1).Signal(sc, 1)
	occStart := mustBuild(t, sb)

	full := cat(run(0, 0, 3), run(1, 0, 3))
	tests := []struct {
		name   string
		p      *schedule.Program
		code   string
		tasks  []int
		trace  []schedule.Event
		want   string // "" means the witness holds
		reason string
	}{
		{"deadlock", dl, "deadlock.unsatisfiable", []int{1}, run(0, 0, 3), "", "the consumer is stuck at c >= 2"},
		{"deadlock-not-stuck", dl, "deadlock.cycle", []int{1}, run(0, 0, 2), "does not end in a deadlock", "worker 0 can still signal"},
		{"deadlock-bad-trace", dl, "deadlock.cycle", []int{1}, []schedule.Event{ev(1, 0)}, "below 2", "replay refusals propagate"},
		{"occupancy-static", over, "occupancy", nil, nil, "", "cooperative launch of 2 workers on capacity 1"},
		{"occupancy-static-fits", handoff(t, true), "occupancy", nil, nil, "does not end in a deadlock", "the launch fits and the empty trace is not stuck"},
		{"occupancy-empty-trace", occStart, "occupancy", []int{0}, nil, "", "worker 0 is stuck at the initial state and worker 1 never starts"},
		{"occupancy-trace", occ, "occupancy", []int{1}, run(0, 0, 2), "", "worker 0 holds the only slot waiting for worker 1"},
		{"race", race, "race.waw", []int{0, 1}, cat(run(1, 0, 1), run(2, 0, 1)), "", "both bodies begun, unordered"},
		{"race-one-begun", race, "race.waw", []int{0, 1}, run(1, 0, 1), "does not begin both bodies", "w1 never began"},
		{"race-no-conflict", race, "race.waw", []int{0, 2}, cat(run(1, 0, 1), run(3, 0, 1)), "do not conflict", "x and y are disjoint"},
		{"race-one-task", race, "race.raw", []int{0}, nil, "names two tasks", "a race has two sides"},
		{"race-ordered", handoff(t, true), "race.raw", []int{0, 1}, full, "one body happens before the other", "the handoff synchronizes"},
		{"race-unsynchronized", relaxed, "race.unsynchronized", []int{0, 1}, full, "", "the relaxed signal gives no HB"},
		{"uninit-synchronized", handoff(t, true), "uninitialized-read", []int{1}, full, "every byte the reader reads is written before it", "the producer's write happens before"},
		{"uninit-alias", alias, "uninitialized-read", []int{1}, full, "", "a write through an alias does not initialize b"},
		{"uninit-not-begun", alias, "uninitialized-read", []int{1}, run(0, 0, 3), "does not begin the reader", "r never began"},
		{"uninit-no-reader", alias, "uninitialized-read", nil, nil, "names the reader", "the reader is required"},
		{"overflow", ovf, "counter-overflow", nil, run(0, 0, 3), "", "2^32-1 + 1 overflows 32 bits"},
		{"no-overflow", ovf, "counter-overflow", nil, run(0, 0, 2), "no counter overflowed", "the signal has not run"},
		{"overflow-signaller", ovf, "counter-overflow", []int{0}, run(0, 0, 3), "", "t signals c, which overflowed"},
		{"overflow-other-counter", ovf, "counter-overflow", []int{1}, run(0, 0, 6), `no counter that task "u" signals overflowed`, "d, u's counter, stays within its width"},
		{"out-of-bounds", race, "out-of-bounds", []int{0}, nil, "", "static: no trace"},
		{"readonly-write", race, "readonly-write", []int{0}, nil, "", "static: no trace"},
		{"output-unwritten", race, "output-unwritten", nil, nil, "", "static: no trace"},
		{"static-with-trace", race, "out-of-bounds", []int{0}, run(1, 0, 1), "static and takes no trace", "a static finding cannot carry a trace"},
		{"bad-task", race, "race.waw", []int{0, 7}, nil, "witness names task 7 of 3", "task indices are checked first"},
		{"unknown-code", race, "nonsense", nil, nil, `no witness check for code "nonsense"`, "codes are closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := schedule.CheckWitness(tt.p, tt.code, tt.tasks, tt.trace)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("CheckWitness(%s) = %v; want it to hold (%s)", tt.code, err, tt.reason)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("CheckWitness(%s) = %v; want an error containing %q (%s)", tt.code, err, tt.want, tt.reason)
			}
		})
	}
}

func TestLowerAndDescribe(t *testing.T) {
	p := handoff(t, true)
	p.Tasks = append(p.Tasks, schedule.Task{Name: "dyn", Worker: schedule.Dynamic, After: []schedule.Step{{Kind: schedule.Fence, Scope: schedule.ScopeSys}}})
	f := schedule.Lower(p)
	if len(f.Threads) != 3 || f.Threads[2].Task != 2 || f.Threads[2].Worker != schedule.Dynamic {
		t.Fatalf("threads %+v; want two workers and one dynamic thread for task 2", f.Threads)
	}
	if got := f.ThreadName(p, 1); got != "worker 1" {
		t.Errorf("ThreadName(1) = %q", got)
	}
	if got := f.ThreadName(p, 2); got != `task "dyn"` {
		t.Errorf("ThreadName(2) = %q", got)
	}
	want := []string{`wait ready >= 1 (task "consume")`, `begin (task "consume")`, `end (task "consume")`}
	for i, op := range f.Threads[1].Ops {
		if got := p.Describe(op); got != want[i] {
			t.Errorf("Describe(op %d) = %q; want %q", i, got, want[i])
		}
	}
	if got := p.Describe(f.Threads[2].Ops[2]); got != `fence sys (task "dyn")` {
		t.Errorf("Describe(fence) = %q", got)
	}
}
