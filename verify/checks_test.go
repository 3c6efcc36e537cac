package verify

import (
	"context"
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
