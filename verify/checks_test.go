package verify

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/schedule"
)

func TestChecksAreValid(t *testing.T) {
	if err := validateChecks(Checks()); err != nil {
		t.Fatal(err)
	}
	noop := func(*verifier, context.Context) error { return nil }
	a := &Check{Name: "a", Doc: "a", Codes: []string{"x"}, run: noop}
	for _, c := range []struct {
		reason string
		checks []*Check
		want   string
	}{
		{"duplicate names", []*Check{a, {Name: "a", Doc: "b", Codes: []string{"x"}, run: noop}}, "duplicate check name"},
		{"missing doc", []*Check{{Name: "b", Codes: []string{"x"}, run: noop}}, "has no doc"},
		{"no codes", []*Check{{Name: "b", Doc: "b", run: noop}}, "reports no codes"},
		{"requirement after its user", []*Check{{Name: "b", Doc: "b", Codes: []string{"x"}, Requires: []*Check{a}, run: noop}, a}, "not before it"},
		{"cannot run", []*Check{{Name: "b", Doc: "b", Codes: []string{"x"}}}, "cannot run"},
	} {
		err := validateChecks(c.checks)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.reason, err, c.want)
		}
	}
}

func TestSelectedChecks(t *testing.T) {
	// A racy handoff that also writes a weight buffer.
	b := two()
	x := b.Buffer("x", schedule.KindState, 64)
	w := b.Buffer("w", schedule.KindWeight, 64)
	b.Task("write").On(0).Write(x, 0, 64).Write(w, 0, 64)
	b.Task("read").On(1).Read(x, 0, 64)
	p := mustBuild(b)
	for _, c := range []struct {
		checks []*Check
		want   []string
	}{
		{nil, []string{CodeRaceRAW, CodeReadonlyWrite}},
		{[]*Check{Static}, []string{CodeReadonlyWrite}},
		{[]*Check{Races}, []string{CodeRaceRAW}},
		{[]*Check{Progress}, nil},
	} {
		r, err := Run(context.Background(), p, Config{Checks: c.checks, Sanity: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := codes(r); strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("checks %v: codes %v, want %v", c.checks, got, c.want)
		}
	}
	if _, err := Run(context.Background(), p, Config{Checks: []*Check{{Name: "mine"}}}); err == nil {
		t.Error("an unknown check was accepted")
	}
}

// Proof clocks join a partial wait whose earlier adds are each necessary
// when every later add on its counter waits for the threshold first (an
// epoch counter shared by two phases), and only then.
func TestPrefixJoin(t *testing.T) {
	build := func(secondPhaseWaits bool) *schedule.Program {
		b := schedule.NewBuilder("epoch", launch(3))
		c := b.Counter("c")
		x := b.Buffer("x", schedule.KindState, 8)
		b.Task("p1").On(0).Write(x, 0, 4).Signal(c, 1)
		b.Task("p2").On(1).Write(x, 4, 4).Signal(c, 1)
		b.Task("r").On(2).Wait(c, 2).Read(x, 0, 8)
		q := b.Task("q").On(0)
		if secondPhaseWaits {
			q.Wait(c, 2)
		}
		q.Signal(c, 1)
		return mustBuild(b)
	}
	for _, c := range []struct {
		later bool
		want  bool
	}{{true, true}, {false, false}} {
		p := build(c.later)
		v := &verifier{f: lowerForm(p)}
		e := v.checkProgress()
		v.f.linkPoints()
		conflictsOfAll(v)
		var qs []query
		for i, pi := range v.slab {
			a, b := int32(pi.key>>32), int32(pi.key&0xffffffff)
			if p.Tasks[b].Name == "r" {
				qs = append(qs, query{at: v.f.body[a], late: b, pair: int32(i)})
			}
		}
		proven := make([]bool, len(qs))
		proveOrdered(v.f, e.trace, false, qs, proven)
		for i, ok := range proven {
			if ok != c.want {
				t.Errorf("later add waits first: %v; pair %x proven %v, want %v", c.later, v.slab[qs[i].pair].key, ok, c.want)
			}
		}
		if len(qs) != 2 {
			t.Fatalf("%d pairs with the reader, want 2", len(qs))
		}
	}
}

// A layered program of dynamic tasks (one thread each, far more threads
// than clock components for threads would allow) verifies safe, and
// dropping one wait makes it race.
func TestDynamicLayered(t *testing.T) {
	build := func(drop bool) *schedule.Program {
		const width, layers, tile = 40, 60, 16
		b := schedule.NewBuilder("dynamic", schedule.Launch{SMs: 132, PerSM: 1, Workers: 132, Cooperative: true})
		var prev schedule.BufferRef
		var done schedule.CounterRef
		for l := 0; l < layers; l++ {
			buf := b.Buffer(fmt.Sprintf("act%d", l), schedule.KindState, width*tile)
			c := b.Counter(fmt.Sprintf("layer%d", l))
			for j := 0; j < width; j++ {
				tk := b.Task(fmt.Sprintf("l%d.t%d", l, j))
				if l > 0 {
					if !(drop && l == layers/2 && j == 3) {
						tk.Wait(done, width)
					}
					tk.Read(prev, 0, width*tile)
				}
				tk.Write(buf, uint64(j*tile), tile).Signal(c, 1)
			}
			prev, done = buf, c
		}
		return mustBuild(b)
	}
	for _, c := range []struct {
		drop bool
		want []string
	}{{false, nil}, {true, []string{CodeRaceRAW}}} {
		r, err := Run(context.Background(), build(c.drop), Config{Sanity: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := codes(r); strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("drop %v: codes %v, want %v", c.drop, got, c.want)
		}
	}
}
