package verify

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/megaproof/megaproof/internal/progen"
	"github.com/megaproof/megaproof/schedule"
	"pgregory.net/rapid"
)

// The shadow pass only proves: whatever it proves ordered or covered, the
// pairwise analysis finds ordered or covered too, and verify's results are
// the same with and without it.
func TestShadowPass(t *testing.T) {
	var programs, ordered, adjacent, initialized int
	for _, gen := range []*rapid.Generator[*schedule.Program]{progen.Program(progen.Small()), progen.Program(progen.Medium())} {
		rapid.Check(t, func(rt *rapid.T) {
			p := gen.Draw(rt, "program")
			useShadow = false
			slow, err := Run(context.Background(), p, propertyConfig)
			useShadow = true
			if err != nil {
				rt.Fatal(err)
			}
			fast, err := Run(context.Background(), p, propertyConfig)
			if err != nil {
				rt.Fatal(err)
			}
			if !reflect.DeepEqual(slow.Findings, fast.Findings) || slow.Verdict != fast.Verdict {
				rt.Fatalf("verdict %v without the shadow pass, %v with; findings (-without +with):\n%s", slow.Verdict, fast.Verdict, cmp.Diff(slow.Findings, fast.Findings))
			}
			if p.Validate() != nil {
				return
			}
			v := &verifier{f: lowerForm(p)}
			if v.f.semaphore {
				return
			}
			programs++
			run := v.checkProgress()
			v.f.linkPoints()
			when := make([]int32, len(p.Tasks))
			for i := range when {
				when[i] = -1
			}
			for i, x := range run.trace {
				if v.f.kind[x] == kBody {
					when[v.f.task[x]] = int32(i)
				}
			}
			ran := func(t int32) bool { return when[t] >= 0 }
			v.when = when
			g, n := newGrid(p, ran)
			_, _, unproven, err := v.shadowOrder(context.Background(), run, g, n)
			if err != nil {
				rt.Fatal(err)
			}
			g, n = newGrid(p, ran)
			ok, _, err := v.shadowRaces(context.Background(), run, g, n)
			if err != nil {
				rt.Fatal(err)
			}
			if !ok {
				return
			}
			ordered++
			if len(unproven) > 0 {
				adjacent++
			}
			init := v.initialized
			if init {
				initialized++
			}
			for _, f := range slow.Findings {
				if strings.HasPrefix(f.Code, "race.") && f.Code != CodeRaceScope || init && f.Code == CodeUninitializedRead {
					rt.Fatalf("the shadow pass proved (ordered, covered) = (%v, %v), but the pairwise analysis finds %s: %s", ok, init, f.Code, f.Message)
				}
			}
		})
	}
	t.Logf("%d programs: the shadow pass proved %d ordered (%d after deciding adjacent pairs exactly), %d of them initialized too", programs, ordered, adjacent, initialized)
	if ordered == 0 || initialized == 0 {
		t.Fatal("the shadow pass proved nothing: the comparison is empty")
	}
}

// A pass that runs out of budget leaves the program to the pairwise
// analysis, with the same results.
func TestShadowBudget(t *testing.T) {
	defer func(b func(int) int) { shadowBudget = b }(shadowBudget)
	gen := progen.Program(progen.Small())
	for i := 0; i < 300; i++ {
		p := gen.Example(i)
		shadowBudget = func(int) int { return 1 << 30 }
		full, err := Run(context.Background(), p, Config{Sanity: true})
		if err != nil {
			t.Fatal(err)
		}
		shadowBudget = func(int) int { return 0 }
		starved, err := Run(context.Background(), p, Config{Sanity: true})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(full.Findings, starved.Findings); d != "" || full.Verdict != starved.Verdict {
			t.Fatalf("seed %d: verdict %v with the shadow pass, %v without budget (-with +without):\n%s", i, full.Verdict, starved.Verdict, d)
		}
	}
}

// countdown is a context that is canceled after n calls to Err.
type countdown struct {
	context.Context
	n int
}

func (c *countdown) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

// Run honors cancellation inside the analyses: a context canceled at any
// point gives context.Canceled or a complete result, never a partial one.
func TestCancel(t *testing.T) {
	p := layered(20000, 64, true)
	canceled := 0
	for n := 0; n < 12; n++ {
		r, err := Run(context.Background(), p, Config{})
		if err != nil || r.Verdict != Safe {
			t.Fatalf("uncanceled: %v %v", r, err)
		}
		r, err = Run(&countdown{context.Background(), n}, p, Config{})
		switch {
		case errors.Is(err, context.Canceled):
			canceled++
		case err != nil:
			t.Fatalf("n=%d: %v", n, err)
		case r.Verdict != Safe:
			t.Fatalf("n=%d: verdict %v", n, r.Verdict)
		}
	}
	t.Logf("%d of 12 canceled", canceled)
	if canceled < 2 {
		t.Fatalf("only %d of 12 cancellations were noticed", canceled)
	}
}

// propertyConfig is the configuration of the property tests that compare
// two settings of verify's own machinery: programs that go to the explorer
// do not use it, so a small state budget keeps them cheap (both runs stop
// at the same bound).
var propertyConfig = Config{Sanity: true, MaxStates: 2000}

// sameResults requires Run to give the same results on random small and
// medium programs under two settings of the package's switches; restore
// puts the defaults back. Stats are compared too when withStats is set.
func sameResults(t *testing.T, what string, settings [2]func(), restore func(), withStats bool) {
	defer restore()
	for _, gen := range []*rapid.Generator[*schedule.Program]{progen.Program(progen.Small()), progen.Program(progen.Medium())} {
		rapid.Check(t, func(rt *rapid.T) {
			p := gen.Draw(rt, "program")
			var res [2]*Result
			for i, set := range settings {
				set()
				r, err := Run(context.Background(), p, propertyConfig)
				if err != nil {
					rt.Fatal(err)
				}
				if !withStats {
					r.Stats = Stats{}
				}
				res[i] = r
			}
			// An edit script of long witnesses is costly: diff only what differs.
			if !reflect.DeepEqual(res[0], res[1]) {
				rt.Fatalf("%s (-first +second):\n%s", what, cmp.Diff(res[0], res[1]))
			}
		})
	}
}

// Static checks and the arena grid computed beside the greedy run give the
// same results as in sequence.
func TestBackgroundStatic(t *testing.T) {
	n := backgroundTasks
	sameResults(t, "sequential vs background",
		[2]func(){func() { backgroundTasks = 1 << 30 }, func() { backgroundTasks = 0 }},
		func() { backgroundTasks = n }, true)
}

// With every check of the shadow pass left to the exact decision of
// adjacent pairs, verify's results stay those of the pairwise analysis.
func TestShadowAdjacentPairs(t *testing.T) {
	sameResults(t, "pairwise vs through adjacent pairs",
		[2]func(){func() { useShadow = false }, func() { useShadow, shadowClocks = true, false }},
		func() { useShadow, shadowClocks = true, true }, false)
}

// Sweeps from checkpoints of the greedy run decide exactly what sweeps
// from the initial state decide.
func TestCheckpointSweeps(t *testing.T) {
	sameResults(t, "from the initial state vs from checkpoints",
		[2]func(){func() { useShadow, useCheckpoints = false, false }, func() { useShadow, useCheckpoints = false, true }},
		func() { useShadow, useCheckpoints = true, true }, true)
}

// A nil program is invalid, not a crash.
func TestNilProgram(t *testing.T) {
	r, err := Run(context.Background(), nil, Config{})
	if err != nil || r.Verdict != Invalid || len(r.Findings) != 1 || r.Findings[0].Code != schedule.CodeSyntax {
		t.Fatalf("got %+v, %v", r, err)
	}
}

// A partial wait that the clocks cannot join (a third producer could add
// to the counter, but only after the reader) leaves the reader's pairs to
// the exact decision of adjacent pairs, which orders them.
func TestShadowDecidesAdjacentPairs(t *testing.T) {
	b := schedule.NewBuilder("partial", launch(4))
	x := b.Buffer("x", schedule.KindScratch, 64)
	y := b.Buffer("y", schedule.KindScratch, 64)
	c := b.Counter("c")
	d := b.Counter("d")
	b.Task("p1").On(0).Write(x, 0, 32).Signal(c, 1)
	b.Task("p2").On(1).Write(x, 32, 32).Signal(c, 1)
	b.Task("r").On(2).Wait(c, 2).Read(x, 0, 64).Write(y, 0, 64).Signal(d, 1)
	b.Task("p3").On(3).Wait(d, 1).Read(y, 0, 64).Signal(c, 1)
	p := mustBuild(b)
	v := &verifier{f: lowerForm(p)}
	run := v.checkProgress()
	v.f.linkPoints()
	v.when = make([]int32, len(p.Tasks))
	for i, x := range run.trace {
		if v.f.kind[x] == kBody {
			v.when[v.f.task[x]] = int32(i)
		}
	}
	all := func(int32) bool { return true }
	g, n := newGrid(p, all)
	_, _, unproven, err := v.shadowOrder(context.Background(), run, g, n)
	if err != nil || len(unproven) == 0 {
		t.Fatalf("the clocks proved every check (%v): the test needs a partial wait they cannot join", err)
	}
	g, n = newGrid(p, all)
	ok, _, err := v.shadowRaces(context.Background(), run, g, n)
	if err != nil || !ok || !v.initialized {
		t.Fatalf("adjacent pairs decided: ordered %v, initialized %v, %v", ok, v.initialized, err)
	}
	r, err := Run(context.Background(), p, Config{Sanity: true})
	if err != nil || r.Verdict != Safe {
		t.Fatalf("%v %+v", err, r)
	}
}

// Past the reported findings, uninitialized reads are only counted as
// more, and the result says so.
func TestUninitializedTruncated(t *testing.T) {
	b := schedule.NewBuilder("many-readers", launch(4))
	x := b.Buffer("x", schedule.KindScratch, 64)
	for i := range 20 {
		b.Task(fmt.Sprintf("r%d", i)).On(i%4).Read(x, 0, 64)
	}
	r, err := Run(context.Background(), mustBuild(b), Config{Sanity: true})
	if err != nil {
		t.Fatal(err)
	}
	n, note := 0, ""
	for _, f := range r.Findings {
		if f.Code == CodeUninitializedRead {
			n++
		}
		for _, rel := range f.Related {
			if strings.HasPrefix(rel, "truncated: "+CodeUninitializedRead) {
				note = rel
			}
		}
	}
	if n != maxFindingsPerCode || note != "truncated: uninitialized-read: more than 16 readers, 16 reported" {
		t.Fatalf("%d findings, note %q", n, note)
	}
}

// A program whose tasks that ran access no memory is decided without the
// shadow pass, with the results, stats included, of the pass: on random
// programs, some stripped of every access and some not.
func TestAccesslessShortcut(t *testing.T) {
	defer func() { accesslessShortcut = true }()
	taken := 0
	for _, gen := range []*rapid.Generator[*schedule.Program]{progen.Program(progen.Small()), progen.Program(progen.Medium())} {
		rapid.Check(t, func(rt *rapid.T) {
			p := gen.Draw(rt, "program")
			if rapid.Bool().Draw(rt, "strip") {
				for i := range p.Tasks {
					p.Tasks[i].Reads, p.Tasks[i].Writes = nil, nil
				}
				taken++
			}
			var res [2]*Result
			for i, on := range []bool{false, true} {
				accesslessShortcut = on
				r, err := Run(context.Background(), p, propertyConfig)
				if err != nil {
					rt.Fatal(err)
				}
				res[i] = r
			}
			if !reflect.DeepEqual(res[0], res[1]) {
				rt.Fatalf("shadow pass vs shortcut (-first +second):\n%s", cmp.Diff(res[0], res[1]))
			}
		})
	}
	if taken == 0 {
		t.Fatal("no program without accesses was drawn")
	}
}
