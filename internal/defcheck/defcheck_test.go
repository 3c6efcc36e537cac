package defcheck

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/internal/progen"
	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify/explore"
	"pgregory.net/rapid"
)

// The definitional checker labels every documented code example with that
// code, and with that code's family (semaphore programs are out of its
// scope).
func TestCodeExamples(t *testing.T) {
	files, err := filepath.Glob("../../verify/testdata/codes/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, file := range files {
		code := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(code, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			p, err := schedule.Unmarshal(data)
			if err != nil {
				t.Fatal(err)
			}
			fams, err := Families(p)
			if code == "deadlock.semaphore" {
				if !errors.Is(err, ErrSemaphores) {
					t.Fatalf("err %v, want ErrSemaphores", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			family, _, _ := strings.Cut(code, ".")
			if !slices.Equal(fams, []string{family}) {
				t.Errorf("families %v, want [%s]", fams, family)
			}
			if codes, err := Codes(p); err != nil || !slices.Equal(codes, []string{code}) {
				t.Errorf("codes %v (%v), want [%s]", codes, err, code)
			}
			// A budget of one unit of work is too small for any program.
			if _, err := CodesBudget(p, 1); !errors.Is(err, ErrBudget) {
				t.Errorf("CodesBudget(1): err %v, want ErrBudget", err)
			}
		})
	}
}

// A handoff is safe exactly when the reader waits for the writer's release.
func TestHandoff(t *testing.T) {
	for _, c := range []struct {
		reason string
		wait   bool
		opts   []schedule.StepOption
		want   []string
	}{
		{"release then acquire", true, nil, nil},
		{"no wait", false, nil, []string{"race"}},
		{"relaxed signal", true, []schedule.StepOption{schedule.Relaxed()}, []string{"race"}},
		{"cta-scoped signal", true, []schedule.StepOption{schedule.WithScope(schedule.ScopeCTA)}, []string{"race"}},
	} {
		b := schedule.NewBuilder("h", schedule.Launch{SMs: 2, PerSM: 1, Workers: 2, Cooperative: true})
		x := b.Buffer("x", schedule.KindState, 8)
		ready := b.Counter("ready")
		b.Task("w").On(0).Write(x, 0, 8).Signal(ready, 1, c.opts...)
		r := b.Task("r").On(1).Read(x, 0, 8)
		if c.wait {
			r.Wait(ready, 1)
		}
		p, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		fams, err := Families(p)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(fams, c.want) {
			t.Errorf("%s: families %v, want %v", c.reason, fams, c.want)
		}
	}
}

// dispatch programs of docs/SEMANTICS.md (dispatch, exit, race.scope) and
// the families the checker gives them, or the error saying it does not
// decide them.
func TestDispatchAndScope(t *testing.T) {
	coop := func(w int) schedule.Launch {
		return schedule.Launch{SMs: w, PerSM: 1, Workers: w, Cooperative: true}
	}
	barrierPool := func(workers int) *schedule.Builder {
		b := schedule.NewBuilder("pool", coop(workers))
		br := b.Barrier("b", 3)
		for i := 0; i < 3; i++ {
			b.Task("d" + string(rune('0'+i))).Sync(br)
		}
		return b
	}
	for _, c := range []struct {
		reason string
		prog   func() *schedule.Builder
		want   []string
		err    error
	}{
		{"a cta-scoped wait on a counter another worker signals", func() *schedule.Builder {
			b := schedule.NewBuilder("cta", coop(2))
			ct := b.Counter("c")
			b.Task("producer").On(0).Signal(ct, 1)
			b.Task("consumer").On(1).Wait(ct, 1, schedule.WithScope(schedule.ScopeCTA))
			return b
		}, []string{"race"}, nil},
		{"the same on one worker", func() *schedule.Builder {
			b := schedule.NewBuilder("cta", coop(2))
			ct := b.Counter("c")
			b.Task("producer").On(0).Signal(ct, 1)
			b.Task("consumer").On(0).Wait(ct, 1, schedule.WithScope(schedule.ScopeCTA))
			return b
		}, nil, nil},
		{"a gpu handoff orders the cta signal before the wait", func() *schedule.Builder {
			b := schedule.NewBuilder("cta", coop(2))
			ct, d := b.Counter("c"), b.Counter("d")
			b.Task("producer").On(0).Signal(ct, 1, schedule.WithScope(schedule.ScopeCTA)).Signal(d, 1)
			b.Task("consumer").On(1).Wait(d, 1).Wait(ct, 1)
			return b
		}, nil, nil},
		{"a relaxed handoff does not", func() *schedule.Builder {
			b := schedule.NewBuilder("cta", coop(2))
			ct, d := b.Counter("c"), b.Counter("d")
			b.Task("producer").On(0).Signal(ct, 1, schedule.WithScope(schedule.ScopeCTA)).Signal(d, 1, schedule.Relaxed())
			b.Task("consumer").On(1).Wait(d, 1).Wait(ct, 1)
			return b
		}, []string{"race"}, nil},
		{"a dynamic task's cta signal against a static wait", func() *schedule.Builder {
			b := schedule.NewBuilder("cta", coop(1))
			ct := b.Counter("c")
			b.Task("consumer").On(0).Wait(ct, 1)
			b.Task("producer").Signal(ct, 1, schedule.WithScope(schedule.ScopeCTA))
			return b
		}, []string{"race"}, nil},
		{"three barrier tasks may hold both workers", func() *schedule.Builder { return barrierPool(2) }, nil, ErrDispatch},
		{"three barrier tasks and four empty workers", func() *schedule.Builder { return barrierPool(4) }, nil, nil},
		{"worker 0 cannot exit while the dynamic task waits, so worker 1 never starts", func() *schedule.Builder {
			b := schedule.NewBuilder("exit", schedule.Launch{SMs: 1, PerSM: 1, Workers: 2})
			ct := b.Counter("c")
			b.Task("signal").On(1).Signal(ct, 1)
			b.Task("wait").Wait(ct, 1)
			return b
		}, []string{"occupancy"}, nil},
		{"a spinning worker runs the simple task it waits for", func() *schedule.Builder {
			b := schedule.NewBuilder("simple", coop(1))
			ct := b.Counter("c")
			x := b.Buffer("x", schedule.KindScratch, 8)
			out := b.Buffer("out", schedule.KindOutput, 8)
			b.Task("consumer").On(0).Wait(ct, 1).Read(x, 0, 8).Write(out, 0, 8)
			b.Task("producer").Write(x, 0, 8).Signal(ct, 1)
			return b
		}, nil, nil},
		{"the claim waits for the whole guard, so its first wait sees the writer's release", func() *schedule.Builder { return guardOrder(false) }, nil, nil},
		{"pinned, the reader's first wait passes on c's initial value", func() *schedule.Builder { return guardOrder(true) }, []string{"race"}, nil},
	} {
		p, err := c.prog().Build()
		if err != nil {
			t.Fatal(err)
		}
		fams, err := Families(p)
		if !errors.Is(err, c.err) || err == nil && !slices.Equal(fams, c.want) {
			t.Errorf("%s: families %v, err %v; want %v, %v", c.reason, fams, err, c.want, c.err)
		}
	}
}

// guardOrder: a dynamic reader's guard waits for c (already 1) and then,
// relaxed, for d, which the writer signals after its release of c. Claimed
// only once d >= 1, its wait on c comes after the writer's release.
func guardOrder(pinned bool) *schedule.Builder {
	b := schedule.NewBuilder("guard-order", schedule.Launch{SMs: 2, PerSM: 1, Workers: 2, Cooperative: true})
	ct := b.CounterInit("c", 1, 32)
	d := b.Counter("d")
	x := b.Buffer("x", schedule.KindState, 8)
	b.Task("writer").On(0).Write(x, 0, 8).Signal(ct, 1).Signal(d, 1)
	r := b.Task("reader").Wait(ct, 1).Wait(d, 1, schedule.Relaxed()).Read(x, 0, 8)
	if pinned {
		r.On(1)
	}
	return b
}

// TestAgainstExplorer holds the checker to the explorer's codes on
// random Small programs that both decide.
func TestAgainstExplorer(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 300
	}
	g := progen.Program(progen.Small())
	compared := map[string]int{}
	for seed := 0; seed < n; seed++ {
		p := g.Example(seed)
		want, err := Codes(p)
		if err != nil {
			compared[err.Error()]++
			continue
		}
		r, err := explore.Run(context.Background(), p, explore.Config{MaxStates: 200000})
		if err != nil {
			t.Fatal(err)
		}
		if !r.Complete {
			compared["explorer incomplete"]++
			continue
		}
		var got []string
		for _, f := range r.Findings {
			got = append(got, f.Code)
		}
		slices.Sort(got)
		got = slices.Compact(got)
		if !slices.Equal(got, want) {
			js, _ := schedule.Marshal(p)
			t.Fatalf("seed %d: explorer %v, definitional checker %v\n%s\n%+v", seed, got, want, js, r.Findings)
		}
		compared["compared"]++
	}
	t.Logf("%v", compared)
}

// TestAtScaleAgrees holds CodesAtScale to CodesBudget on random Small and
// Medium programs: the same codes, or the same error, and never more work.
func TestAtScaleAgrees(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 60
	}
	compared := map[string]int{}
	for _, g := range []struct {
		name string
		gen  *rapid.Generator[*schedule.Program]
	}{{"small", progen.Program(progen.Small())}, {"medium", progen.Program(progen.Medium())}} {
		for seed := 0; seed < n; seed++ {
			p := g.gen.Example(seed)
			want, werr := CodesBudget(p, 1<<24)
			got, gerr := CodesAtScale(p, 1<<24)
			if errors.Is(werr, ErrBudget) && gerr == nil {
				compared["decided only at scale"]++
				continue
			}
			if !errors.Is(gerr, werr) && !(werr == nil && gerr == nil) || !slices.Equal(got, want) {
				js, _ := schedule.Marshal(p)
				t.Fatalf("%s seed %d: CodesBudget %v (%v), CodesAtScale %v (%v)\n%s", g.name, seed, want, werr, got, gerr, js)
			}
			compared[g.name]++
		}
	}
	t.Logf("%v", compared)
}
