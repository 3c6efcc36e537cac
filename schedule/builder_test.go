package schedule_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/schedule"
)

type diag struct{ code, path string }

// builderDiags builds and returns the (code, path) of every diagnostic.
func builderDiags(t *testing.T, b *schedule.Builder) []diag {
	t.Helper()
	p, err := b.Build()
	if err == nil {
		t.Fatalf("Build succeeded: %+v", p)
	}
	var se *schedule.Error
	if !errors.As(err, &se) {
		t.Fatalf("Build error %T (%v); want *schedule.Error", err, err)
	}
	var out []diag
	for _, d := range se.Diagnostics {
		out = append(out, diag{d.Code, d.Path})
	}
	return out
}

func hasDiag(ds []diag, code, path string) bool {
	for _, d := range ds {
		if d.code == code && d.path == path {
			return true
		}
	}
	return false
}

// TestBuilderMisuse checks that every misuse is a diagnostic with a code
// and a path, reported together with Validate's findings, each once.
func TestBuilderMisuse(t *testing.T) {
	launch := schedule.Launch{SMs: 1, PerSM: 1, Workers: 2}
	tests := []struct {
		name   string
		build  func(b *schedule.Builder)
		want   []diag
		reason string
	}{
		{"duplicate", func(b *schedule.Builder) {
			b.Counter("c")
			b.Counter("c")
			b.Task("t")
		}, []diag{{schedule.CodeDuplicate, "$.counters[1].name"}}, "a name declared twice, at the second declaration"},
		{"worker", func(b *schedule.Builder) {
			b.Task("t").On(-2)
			b.Task("u").On(math.MaxInt32 + 1)
		}, []diag{{schedule.CodeWorker, "$.tasks[0].worker"}, {schedule.CodeWorker, "$.tasks[1].worker"}}, "no negative or truncated workers"},
		{"offset", func(b *schedule.Builder) {
			x := b.Buffer("x", schedule.KindScratch, 64)
			b.Task("t").Write(x, 0, 64).Read(x, math.MaxUint64, 1)
		}, []diag{{schedule.CodeSize, "$.tasks[0].reads[0].offset"}}, "an offset that would wrap to a negative one"},
		{"nil option", func(b *schedule.Builder) {
			c := b.Counter("c")
			b.Task("t").Signal(c, 1, nil)
		}, []diag{{schedule.CodeValue, "$.tasks[0].after[0]"}}, "a nil option is no option"},
		{"one pass", func(b *schedule.Builder) {
			c := b.Counter("c")
			b.Counter("c")
			b.Task("t").Wait(c, 0)
			b.Task("u").On(5)
		}, []diag{{schedule.CodeDuplicate, "$.counters[1].name"}, {schedule.CodeThreshold, "$.tasks[0].before[0].ge"}, {schedule.CodeWorker, "$.tasks[1].worker"}}, "misuse and structure together"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := schedule.NewBuilder(tt.name, launch)
			tt.build(b)
			got := builderDiags(t, b)
			for _, w := range tt.want {
				if !hasDiag(got, w.code, w.path) {
					t.Errorf("diagnostics %v lack %s at %s (%s)", got, w.code, w.path, tt.reason)
				}
			}
			seen := map[diag]bool{}
			for _, d := range got {
				if seen[d] {
					t.Errorf("%s at %s reported twice", d.code, d.path)
				}
				seen[d] = true
			}
		})
	}
}

// TestBuilderAfterBuild checks that Build hands the program over: later
// calls do not change it and a second Build fails.
func TestBuilderAfterBuild(t *testing.T) {
	b := schedule.NewBuilder("once", schedule.Launch{SMs: 1, PerSM: 1, Workers: 1})
	x := b.Buffer("x", schedule.KindScratch, 64)
	tb := b.Task("t").On(0).Write(x, 0, 64)
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	before, _ := schedule.Marshal(p)
	b.Task("late").Write(x, 0, 64)
	tb.Read(x, 0, 64)
	b.Counter("c")
	if after, _ := schedule.Marshal(p); string(after) != string(before) {
		t.Errorf("use after Build changed the program:\n%s\n%s", before, after)
	}
	got := builderDiags(t, b)
	if !hasDiag(got, schedule.CodeValue, "$.tasks") || !hasDiag(got, schedule.CodeValue, "$.tasks[0]") || !hasDiag(got, schedule.CodeValue, "$.counters") {
		t.Errorf("second Build: %v", got)
	}
}

// Params keep their keys sorted and once each through Set, Delete and
// SortParams; Validate rejects a repeated key of a list built by hand.
func TestParams(t *testing.T) {
	var ps schedule.Params
	for i, k := range []string{"n_off", "K", "pos", "N_tile", "K", "eps"} {
		ps.Set(k, int64(i))
	}
	want := schedule.Params{{Key: "K", Value: 4}, {Key: "N_tile", Value: 3}, {Key: "eps", Value: 5}, {Key: "n_off", Value: 0}, {Key: "pos", Value: 2}}
	if !slices.Equal(ps, want) {
		t.Fatalf("after Set: %v, want %v", ps, want)
	}
	if v, ok := ps.Get("pos"); !ok || v != 2 {
		t.Errorf("Get(pos) = %d, %v", v, ok)
	}
	if _, ok := ps.Get("missing"); ok {
		t.Error("Get(missing) found it")
	}
	ps.Delete("N_tile")
	ps.Delete("missing")
	if !slices.Equal(ps, slices.Delete(slices.Clone(want), 1, 2)) {
		t.Errorf("after Delete: %v", ps)
	}
	for _, n := range []int{0, 1, 5, 12, 13, 40} {
		var long schedule.Params
		for i := range n {
			long = append(long, schedule.Param{Key: fmt.Sprintf("k%d", (i*7919)%97), Value: int64(i)})
		}
		sorted := slices.Clone(long)
		slices.SortStableFunc(sorted, func(a, b schedule.Param) int { return strings.Compare(a.Key, b.Key) })
		schedule.SortParams(long)
		if !slices.Equal(long, sorted) {
			t.Errorf("SortParams of %d: %v, want %v", n, long, sorted)
		}
	}
	p := schedule.NewBuilder("params", schedule.Launch{SMs: 1, PerSM: 1, Workers: 1})
	p.Task("t").Op("gemv").Param("b", 1).Param("a", 2)
	prog, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	if got := prog.Tasks[0].Params; !slices.Equal(got, schedule.Params{{Key: "a", Value: 2}, {Key: "b", Value: 1}}) {
		t.Errorf("built: %v", got)
	}
	prog.Tasks[0].Params = schedule.Params{{Key: "b", Value: 1}, {Key: "a", Value: 2}}
	if err := prog.Validate(); err != nil {
		t.Errorf("unsorted but distinct keys: %v", err)
	}
	prog.Tasks[0].Params = append(prog.Tasks[0].Params, schedule.Param{Key: "b", Value: 3})
	err = prog.Validate()
	if err == nil || !strings.Contains(err.Error(), `$.tasks[0].params.b`) || !strings.Contains(err.Error(), `param "b" repeated`) {
		t.Errorf("repeated key: %v", err)
	}
}
