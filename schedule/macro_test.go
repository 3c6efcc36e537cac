package schedule_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/internal/progen"
	"github.com/megaproof/megaproof/schedule"
	"pgregory.net/rapid"
)

func TestMacroEventForms(t *testing.T) {
	h, a, s := schedule.Hold(3, 5), schedule.Advance(), ev(3, 5)
	if !h.IsHold() || h.IsStep() || h.IsAdvance() || h.HoldAt() != 5 || h.Thread != 3 {
		t.Errorf("Hold(3, 5) = %+v: IsHold %v, HoldAt %d", h, h.IsHold(), h.HoldAt())
	}
	if !a.IsAdvance() || a.IsHold() || a.IsStep() {
		t.Errorf("Advance() = %+v", a)
	}
	if !s.IsStep() || s.IsHold() || s.IsAdvance() {
		t.Errorf("step %+v", s)
	}
	if h := schedule.Hold(0, 0); !h.IsHold() || h.HoldAt() != 0 {
		t.Errorf("Hold(0, 0) = %+v", h)
	}
	got, err := json.Marshal([]schedule.Event{s, h, a, schedule.Hold(0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	const want = `[{"thread":3,"step":5},{"hold":3,"at":5},{"advance":true},{"hold":0,"at":0}]`
	if string(got) != want {
		t.Errorf("JSON = %s; want %s", got, want)
	}
	var back []schedule.Event
	if err := json.Unmarshal(got, &back); err != nil || !slices.Equal(back, []schedule.Event{s, h, a, schedule.Hold(0, 0)}) {
		t.Errorf("round trip = %+v, %v", back, err)
	}
	for _, bad := range []schedule.Event{{Thread: -2}, {Thread: -1, Step: 4}, {Thread: -7, Step: -3}} {
		if _, err := json.Marshal(bad); err == nil {
			t.Errorf("Marshal(%+v) succeeded; want a malformed event refused", bad)
		}
	}
}

func TestEventJSONRefusals(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"thread":1}`, `a step has both "thread" and "step"`},
		{`{"step":1}`, `a step has both "thread" and "step"`},
		{`{"hold":1}`, `a hold has both "hold" and "at"`},
		{`{"at":1}`, `a hold has both "hold" and "at"`},
		{`{"advance":false}`, `"advance" must be true`},
		{`{"thread":1,"step":2,"advance":true}`, `mixes the keys`},
		{`{"hold":1,"at":2,"step":0}`, `mixes the keys`},
		{`{"thread":-1,"step":0}`, `"thread" is negative (-1)`},
		{`{"thread":0,"step":-3}`, `"step" is negative (-3)`},
		{`{"hold":-1,"at":0}`, `"hold" is negative`},
		{`{"hold":1,"at":-1}`, `"at" is negative`},
		{`{"thread":1,"step":99999999999}`, `"step" is too large`},
		{`{"thread":1.5,"step":0}`, `"thread" is not an integer`},
		{`{"thread":"1","step":0}`, `"thread" is not an integer`},
		{`{"advance":1}`, `"advance" is not a boolean`},
		{`{"thread":1,"step":0,"extra":1}`, `unknown field "extra"`},
		{`{}`, `no "thread" and "step"`},
		{`null`, `null is not an event`},
		{`[1,2]`, `event: json: cannot unmarshal array`},
	}
	for _, tt := range tests {
		var e schedule.Event
		err := json.Unmarshal([]byte(tt.in), &e)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Unmarshal(%s) = %v; want an error containing %q", tt.in, err, tt.want)
		}
	}
}

func TestMacroReplayRefusals(t *testing.T) {
	coop := handoff(t, true) // worker 0: begin, end, signal; worker 1: wait, begin, end
	tests := []struct {
		name  string
		trace []schedule.Event
		want  string // substring of the error; "" means accepted
	}{
		{"hold-past-end", []schedule.Event{schedule.Hold(0, 4), schedule.Advance()}, "event 0 (hold thread 0 at step 4): worker 0 has 3 steps: it cannot be held before step 4"},
		{"hold-behind", cat(run(0, 0, 2), []schedule.Event{schedule.Hold(0, 1), schedule.Advance()}), "event 2 (hold thread 0 at step 1): worker 0 is at step 2, past step 1 it would be held before"},
		{"hold-twice", []schedule.Event{schedule.Hold(1, 1), schedule.Hold(1, 2), schedule.Advance()}, "event 1 (hold thread 1 at step 2): worker 1 is held already (before step 1) in this advance"},
		{"hold-unknown-thread", []schedule.Event{schedule.Hold(9, 0), schedule.Advance()}, "no thread 9 (have 2)"},
		{"hold-dangling", []schedule.Event{schedule.Advance(), schedule.Hold(0, 3)}, "event 1 (hold thread 0 at step 3): no advance follows the hold"},
		{"held-step", []schedule.Event{schedule.Hold(0, 1), ev(0, 0), ev(0, 1)}, "event 2 (thread 0, step 1): worker 0 is held before step 1 until the next advance"},
		{"advance-malformed", []schedule.Event{{Thread: -1, Step: 2}}, "event 0 (malformed event {thread -1, step 2}): not an event"},
		{"advance-all", []schedule.Event{schedule.Advance()}, ""},
		{"advance-twice", []schedule.Event{schedule.Advance(), schedule.Advance()}, ""},
		{"hold-then-finish", []schedule.Event{schedule.Hold(0, 1), schedule.Advance(), schedule.Advance()}, ""},
		{"hold-at-end", []schedule.Event{schedule.Hold(0, 3), schedule.Hold(1, 0), schedule.Advance(), schedule.Advance()}, ""},
		{"steps-after-advance", []schedule.Event{schedule.Hold(1, 1), schedule.Advance(), ev(1, 1), ev(1, 2)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := schedule.Replay(coop, tt.trace)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Replay: %v", err)
				}
				if !st.AllFinished() {
					t.Errorf("positions %v; want a finished run", st.Pos)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Replay error = %v; want it to contain %q", err, tt.want)
			}
		})
	}
	// A hold stops its thread exactly there, and the advance leaves the
	// rest of the program as far as it can go.
	st, err := schedule.Replay(coop, []schedule.Event{schedule.Hold(0, 1), schedule.Advance()})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(st.Pos, []int32{1, 0}) || st.HoldsPending() != 0 || st.Held(0) != -1 {
		t.Errorf("after hold(0, 1), advance: positions %v, holds pending %d; want [1 0], 0", st.Pos, st.HoldsPending())
	}
	if want := []schedule.Event{ev(0, 0)}; !slices.Equal(st.Trace(), want) {
		t.Errorf("trace %v; want %v", st.Trace(), want)
	}
}

// greedy is the advance as docs/SEMANTICS.md words it, step by step: the
// lowest-numbered thread that can move runs until it cannot, until no
// thread can move.
func greedy(m *schedule.Machine, holds []int) {
	can := func(th int) bool {
		return !m.Finished(th) && (holds[th] < 0 || int(m.Pos[th]) < holds[th]) && m.Enabled(th) == nil
	}
	for {
		th := -1
		for i := range holds {
			if can(i) {
				th = i
				break
			}
		}
		if th < 0 {
			return
		}
		for can(th) {
			if err := m.Step(schedule.Event{Thread: int32(th), Step: m.Pos[th]}); err != nil {
				panic(err)
			}
		}
	}
}

// TestAdvanceIsGreedy holds the worklist advance to the definition over
// random programs with every feature (semaphores, dynamic tasks that hold
// workers, residency): the same steps in the same order, after a random
// prefix and with random holds.
func TestAdvanceIsGreedy(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := progen.Program(progen.Small()).Draw(t, "program")
		m, err := schedule.NewMachine(p)
		if err != nil {
			t.Fatal(err)
		}
		f := m.Form()
		// A random prefix of ordinary steps.
		for k := rapid.IntRange(0, 12).Draw(t, "prefix"); k > 0; k-- {
			var en []int
			for th := range f.Threads {
				if m.Enabled(th) == nil {
					en = append(en, th)
				}
			}
			if len(en) == 0 {
				break
			}
			th := en[rapid.IntRange(0, len(en)-1).Draw(t, "thread")]
			if err := m.Step(schedule.Event{Thread: int32(th), Step: m.Pos[th]}); err != nil {
				t.Fatal(err)
			}
		}
		ref := m.Clone()
		holds := make([]int, len(f.Threads))
		var evs []schedule.Event
		for th := range holds {
			holds[th] = -1
			if rapid.IntRange(0, 3).Draw(t, "held") == 0 {
				holds[th] = rapid.IntRange(int(m.Pos[th]), len(f.Threads[th].Ops)).Draw(t, "at")
				evs = append(evs, schedule.Hold(th, holds[th]))
			}
		}
		before := len(m.Trace())
		for _, e := range evs {
			if err := m.Step(e); err != nil {
				t.Fatal(err)
			}
		}
		if err := m.Step(schedule.Advance()); err != nil {
			t.Fatal(err)
		}
		greedy(ref, holds)
		if got, want := m.Trace()[before:], ref.Trace()[before:]; !slices.Equal(got, want) {
			t.Fatalf("advance ran %v;\ngreedy definition runs %v", got, want)
		}
		if m.Key() != ref.Key() || m.Stuck() != ref.Stuck() {
			t.Fatalf("states differ after the advance")
		}
		// Nothing can move past its hold, and without holds an advance
		// leaves no thread able to move.
		if err := m.Step(schedule.Advance()); err != nil {
			t.Fatal(err)
		}
		for th := range f.Threads {
			if m.Enabled(th) == nil {
				t.Fatalf("%s can move after an advance without holds", f.ThreadName(p, th))
			}
		}
	})
}

// The judge decides a compact witness on its expansion: holds that keep
// a body from beginning, an advance that orders the two bodies, or held
// threads standing for a deadlock are refused with what fails, as a
// witness of steps would be.
func TestCheckWitnessCompact(t *testing.T) {
	p := handoff(t, true) // produce (worker 0) writes x, signals; consume (worker 1) waits, reads x
	tests := []struct {
		code  string
		tasks []int
		trace []schedule.Event
		want  string // "" accepted
	}{
		{"race.raw", []int{0, 1}, []schedule.Event{schedule.Advance()}, "one body happens before the other"},
		{"race.raw", []int{0, 1}, []schedule.Event{schedule.Hold(0, 1), schedule.Advance()}, "the trace does not begin both bodies"},
		{"race.raw", []int{0, 1}, []schedule.Event{schedule.Hold(0, 1), schedule.Hold(0, 2), schedule.Advance()}, "is held already"},
		// A hold cannot fake a deadlock: it ends with its advance.
		{"deadlock.unsatisfiable", nil, []schedule.Event{schedule.Hold(0, 2), schedule.Advance()}, "the trace does not end in a deadlock"},
		{"deadlock.unsatisfiable", nil, []schedule.Event{schedule.Advance()}, "the trace does not end in a deadlock"},
		{"deadlock.unsatisfiable", nil, []schedule.Event{schedule.Hold(0, 2), schedule.Advance(), schedule.Hold(1, 1)}, "no advance follows the hold"},
	}
	for _, tt := range tests {
		err := schedule.CheckWitness(p, tt.code, tt.tasks, tt.trace)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s %v: %v", tt.code, tt.trace, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s %v: %v; want an error containing %q", tt.code, tt.trace, err, tt.want)
		}
	}
	var w []schedule.Event
	if err := json.Unmarshal([]byte(`[{"hold":0,"at":1},{"advance":true,"thread":1}]`), &w); err == nil || !strings.Contains(err.Error(), "mixes the keys") {
		t.Errorf("a witness with a mixed event decodes: %v, %v", w, err)
	}
}
