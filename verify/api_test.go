package verify

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/megaproof/megaproof/schedule"
)

// apiProgram is a producer and a consumer on two workers; wait selects
// whether the consumer waits (safe) or not (a race and an uninitialized
// read).
func apiProgram(t *testing.T, wait bool) *schedule.Program {
	t.Helper()
	b := schedule.NewBuilder("handoff", schedule.Launch{SMs: 2, PerSM: 1, Workers: 2, Cooperative: true})
	x := b.Buffer("x", schedule.KindScratch, 256)
	ready := b.Counter("ready")
	b.Task("produce").On(0).Write(x, 0, 256).Signal(ready, 1)
	c := b.Task("consume").On(1)
	if wait {
		c.Wait(ready, 1)
	}
	c.Read(x, 0, 256)
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestZeroVerdict(t *testing.T) {
	var v Verdict
	if v == Safe {
		t.Fatal("the zero Verdict is Safe")
	}
	if _, err := v.MarshalText(); err == nil {
		t.Error("the zero Verdict marshals")
	}
	if _, err := json.Marshal(&Result{}); err == nil {
		t.Error("a Result with the zero Verdict marshals")
	}
	if err := (&Result{}).Err(); err == nil {
		t.Error("a Result with the zero Verdict has no error")
	}
	for _, v := range []Verdict{Safe, Unsafe, Invalid, Inconclusive} {
		b, err := v.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Verdict
		if err := back.UnmarshalText(b); err != nil || back != v {
			t.Errorf("%s round-trips to %s (%v)", v, back, err)
		}
	}
	var back Verdict
	if err := back.UnmarshalText([]byte("maybe")); err == nil {
		t.Error("an unknown verdict name parses")
	}
}

func TestProgramError(t *testing.T) {
	if err := Program(apiProgram(t, true)); err != nil {
		t.Fatalf("safe program: %v", err)
	}
	err := Program(apiProgram(t, false))
	var ve *Error
	if !errors.As(err, &ve) {
		t.Fatalf("Program returned %T (%v); want *Error", err, err)
	}
	if ve.Result.Verdict != Unsafe || len(ve.Result.Findings) == 0 || ve.Result.Findings[0].Code != CodeRaceRAW {
		t.Errorf("result %+v", ve.Result)
	}
	if !strings.Contains(err.Error(), "unsafe: race.raw") {
		t.Errorf("message %q", err)
	}
	var se *schedule.Error
	if errors.As(err, &se) {
		t.Errorf("an unsafe result unwraps to a schedule.Error: %v", se)
	}

	bad := apiProgram(t, true)
	bad.Tasks[1].Before[0].Value = 0
	bad.Buffers[0].Size = 0
	err = Program(bad)
	if !errors.As(err, &ve) || ve.Result.Verdict != Invalid {
		t.Fatalf("invalid program: %v", err)
	}
	if !errors.As(err, &se) {
		t.Fatalf("an invalid result does not unwrap to a schedule.Error: %v", err)
	}
	want := bad.Validate().(*schedule.Error).Diagnostics
	if d := cmp.Diff(want, se.Diagnostics); d != "" {
		t.Errorf("diagnostics differ from Validate's (-want +got):\n%s", d)
	}
}

// TestReport checks that Report names tasks and that the Go JSON of a
// Result never uses "tasks" for indices.
func TestReport(t *testing.T) {
	p := apiProgram(t, false)
	r, err := Run(context.Background(), p, Config{Sanity: true})
	if err != nil {
		t.Fatal(err)
	}
	rep := r.Report(p)
	if rep.Verdict != Unsafe || rep.Program != "handoff" || len(rep.Findings) != len(r.Findings) {
		t.Fatalf("report %+v", rep)
	}
	for i, f := range rep.Findings {
		g := r.Findings[i]
		if f.Code != g.Code || len(f.Tasks) != len(g.Tasks) || f.WitnessLength != len(g.Witness) {
			t.Errorf("finding %d: %+v from %+v", i, f, g)
		}
		for j, name := range f.Tasks {
			if name != p.Tasks[g.Tasks[j]].Name {
				t.Errorf("finding %d task %d: %q, want %q", i, j, name, p.Tasks[g.Tasks[j]].Name)
			}
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"tasks":[`) || !strings.Contains(string(b), `"task_indices":[`) {
		t.Errorf("Result JSON uses \"tasks\" for indices: %s", b)
	}
	b, err = json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(rep, &back); d != "" {
		t.Errorf("Report does not round-trip through JSON (-want +got):\n%s", d)
	}
	if b, _ := json.Marshal(&Report{Verdict: Safe}); !strings.Contains(string(b), `"findings":[]`) {
		t.Errorf("empty findings are not an array: %s", b)
	}
	if rep := InvalidReport(errors.New("boom")); rep.Verdict != Invalid || len(rep.Findings) != 1 || rep.Findings[0].Code != schedule.CodeSyntax {
		t.Errorf("InvalidReport = %+v", rep)
	}
}

// TestConcurrentRuns verifies one Program from many goroutines at once; run
// under -race it checks the documented contract that Run only reads p.
func TestConcurrentRuns(t *testing.T) {
	progs := []*schedule.Program{apiProgram(t, true), apiProgram(t, false), examplePrograms(t)}
	for _, p := range progs {
		want, err := Run(context.Background(), p, Config{})
		if err != nil {
			t.Fatal(err)
		}
		before, _ := schedule.Marshal(p)
		var wg sync.WaitGroup
		results := make([]*Result, 8)
		for i := range results {
			wg.Go(func() {
				r, err := Run(context.Background(), p, Config{Sanity: i%2 == 0})
				if err != nil {
					t.Error(err)
				}
				results[i] = r
				_ = Program(p)
			})
		}
		wg.Wait()
		for i, r := range results {
			if d := cmp.Diff(want, r); d != "" {
				t.Errorf("%s: run %d differs (-want +got):\n%s", p.Name, i, d)
			}
		}
		if after, _ := schedule.Marshal(p); string(after) != string(before) {
			t.Errorf("%s: verification modified the program", p.Name)
		}
	}
}

// examplePrograms is a program with a semaphore (decided by the explorer)
// and a dynamic task.
func examplePrograms(t *testing.T) *schedule.Program {
	t.Helper()
	b := schedule.NewBuilder("ring", schedule.Launch{SMs: 2, PerSM: 1, Workers: 2, Cooperative: true})
	x := b.Buffer("x", schedule.KindState, 64)
	s := b.Semaphore("slot", 1)
	b.Task("a").On(0).Acquire(s, 1).Write(x, 0, 64).Release(s, 1)
	b.Task("b").On(1).Acquire(s, 1).Write(x, 0, 64).Release(s, 1)
	b.Task("c").Acquire(s, 1).Read(x, 0, 64).Release(s, 1)
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Results outlive the runs after them: the engines, forms and clock passes
// that one run hands back are taken by the next ones, and nothing a result
// holds may be among them. Every example of testdata/codes is verified and
// its result written out at once; then all of them are verified again in
// the other order, twice at once, and every first result must still write
// out the same, as must a fresh run's.
func TestResultsOutliveRuns(t *testing.T) {
	files, err := filepath.Glob("testdata/codes/*.json")
	if err != nil || len(files) == 0 {
		t.Fatal("no examples", err)
	}
	var progs []*schedule.Program
	for _, f := range files {
		progs = append(progs, readProgram(t, f))
	}
	run := func(p *schedule.Program) *Result {
		r, err := Run(context.Background(), p, Config{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	text := func(r *Result) string {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	first := make([]*Result, len(progs))
	want := make([]string, len(progs))
	for i, p := range progs {
		first[i] = run(p)
		want[i] = text(first[i])
	}
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for i := len(progs) - 1; i >= 0; i-- {
				Run(context.Background(), progs[i], Config{})
			}
		})
	}
	wg.Wait()
	for i, p := range progs {
		if got := text(first[i]); got != want[i] {
			t.Errorf("%s: a result changed after later runs:\n got %s\nwant %s", p.Name, got, want[i])
		}
		if got := text(run(p)); got != want[i] {
			t.Errorf("%s: a fresh run differs from the first:\n got %s\nwant %s", p.Name, got, want[i])
		}
	}
}

// readProgram reads and decodes the megaproof/v1 document file.
func readProgram(t *testing.T, file string) *schedule.Program {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	p, err := schedule.Unmarshal(data)
	if err != nil {
		t.Fatal(file, err)
	}
	return p
}
