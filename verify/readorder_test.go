package verify

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/megaproof/megaproof/examples/llama/llamagen"
	"github.com/megaproof/megaproof/internal/progen"
	"github.com/megaproof/megaproof/schedule"
	"pgregory.net/rapid"
)

// Deciding the uninitialized-read check's writer-before-reader pairs ahead
// of its games gives the results the games alone give. Chunks of two notes
// stop the race analysis early, so that it leaves pairs to the pre-pass.
func TestPreorderReadsSameResults(t *testing.T) {
	notes := maxNotes
	sameResults(t, "games only vs pre-pass",
		[2]func(){func() { usePreorder, maxNotes = false, 2 }, func() { usePreorder, maxNotes = true, 2 }},
		func() { usePreorder, maxNotes = true, notes }, false)
}

// Every writer-before-reader pair the pre-pass proves ordered is ordered
// by the taint game (the path it shortcuts): no execution runs the reader's body untainted by the
// writer's.
func TestPreorderReadsAgreesWithGame(t *testing.T) {
	notes := maxNotes
	maxNotes = 2 // the race analysis stops early and leaves pairs to the pre-pass
	defer func() { preorderChecked, maxNotes = nil, notes }()
	checked := 0
	for _, gen := range []*rapid.Generator[*schedule.Program]{progen.Program(progen.Small()), progen.Program(progen.Medium())} {
		rapid.Check(t, func(rt *rapid.T) {
			p := gen.Draw(rt, "program")
			preorderChecked = func(v *verifier, w, r int32) {
				isTarget := make([]bool, len(v.f.p.Tasks))
				isTarget[r] = true
				var trace []int32
				complete := newGame(v.f, []int32{w}).play(isTarget, func(_ int32, tr []int32) bool {
					trace = tr
					return false
				})
				if trace != nil {
					rt.Fatalf("the pre-pass proved %q before %q, but the game runs the reader untainted: %v", v.f.p.Tasks[w].Name, v.f.p.Tasks[r].Name, v.f.events(trace))
				}
				if complete {
					checked++
				}
			}
			if _, err := Run(context.Background(), p, propertyConfig); err != nil {
				rt.Fatal(err)
			}
		})
	}
	t.Logf("%d proven pairs confirmed by the game", checked)
	if checked == 0 {
		t.Fatal("no random program exercised the pre-pass")
	}
}

// The fused Llama-3.2-1B decode schedule with o-projection tile 0's data
// wait dropped (8,454 tasks): the race analysis stops at its first chunk
// of racing pairs, and the uninitialized-read check used to play a game
// for every residual tile against every reader (over 20,000 games, many
// branching to the game's limit, for minutes). The pre-pass leaves one
// game, for the reader that is not ordered.
func TestFusedDropWaitGames(t *testing.T) {
	m, _ := llamagen.LookupModel("llama-3.2-1b")
	tg, _ := llamagen.LookupTarget("h200")
	p, err := llamagen.Generate(llamagen.Config{Model: m, Target: tg, AutoTile: true, MaxSeq: 1024, PosSet: true, Numeric: true, Fuse: true})
	if err != nil {
		t.Fatal(err)
	}
	q, err := llamagen.Twin(p, llamagen.DropWait)
	if err != nil {
		t.Fatal(err)
	}
	checks, _, err := selected(Config{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := analyze(context.Background(), q, Config{}, checks, "")
	if err != nil {
		t.Fatal(err)
	}
	var dropped int = -1
	for i, tk := range q.Tasks {
		if tk.Name == "L7.o.t0" {
			dropped = i
		}
	}
	uninit, races := 0, 0
	for _, f := range v.findings {
		switch f.Code {
		case CodeUninitializedRead:
			uninit++
			if !slices.Equal(f.Tasks, []int{dropped}) {
				t.Errorf("uninitialized read of tasks %v, want [%d] (L7.o.t0)", f.Tasks, dropped)
			}
		case CodeRaceRAW:
			races++
			if !slices.Contains(f.Tasks, dropped) {
				t.Errorf("race between tasks %v, which do not include L7.o.t0", f.Tasks)
			}
		default:
			t.Errorf("unexpected finding %s: %s", f.Code, f.Message)
		}
	}
	if uninit != 1 || races != maxFindingsPerCode {
		t.Errorf("%d uninitialized reads and %d races reported, want 1 and %d", uninit, races, maxFindingsPerCode)
	}
	if len(v.undecided) > 0 {
		t.Errorf("undecided: %v", v.undecided)
	}
	// Work, not time: one game, within one run of the program's steps.
	t.Logf("%d taint games, %d game steps, %d program steps", v.stats.Games, v.gameSteps, v.stats.Steps)
	if v.stats.Games > 1 || v.gameSteps > int64(v.stats.Steps) {
		t.Errorf("%d taint games, %d game steps: want at most 1 game of at most %d steps", v.stats.Games, v.gameSteps, v.stats.Steps)
	}
}

// Ending a game at its first branch point where every edge synchronizes
// gives the results of the full game, on random programs and on random
// programs whose edges all synchronize (no relaxed or narrow-scoped steps,
// every worker resident), with the race analysis stopped early (chunks of
// two notes) so that the uninitialized-read check plays games.
func TestSyncingGameLeaf(t *testing.T) {
	notes := maxNotes
	defer func() { syncingLeaf, usePreorder, maxNotes = true, true, notes }()
	syncing := func(o progen.Options) progen.Options {
		o.Relaxed, o.Scopes, o.Residency, o.Semaphores = false, false, false, false
		return o
	}
	leaves := 0
	for _, o := range []progen.Options{progen.Small(), progen.Medium(), syncing(progen.Small()), syncing(progen.Medium())} {
		gen := progen.Program(o)
		rapid.Check(t, func(rt *rapid.T) {
			p := gen.Draw(rt, "program")
			var res [2]*Result
			for i, leaf := range []bool{false, true} {
				syncingLeaf, usePreorder, maxNotes = leaf, false, 2
				r, err := Run(context.Background(), p, propertyConfig)
				if err != nil {
					rt.Fatal(err)
				}
				r.Stats = Stats{}
				res[i] = r
			}
			if !reflect.DeepEqual(res[0], res[1]) {
				rt.Fatalf("branching vs one withhold-run (-first +second):\n%s", cmp.Diff(res[0], res[1]))
			}
			if f := lowerForm(p); !f.semaphore {
				if f.linkPoints(); f.syncing {
					leaves++
				}
			}
		})
	}
	t.Logf("%d programs where every edge synchronizes", leaves)
}

// BenchmarkDropWaitReads verifies a fused 8-layer Llama-3.2-1B twin on
// eight workers with o-projection tile 0's data wait dropped, the race
// analysis stopped at its first chunk of 1,024 notes so that the
// uninitialized-read check decides its own pairs: with the full games
// alone, with games that end at their first branch point (every edge
// synchronizes), and with the pre-pass.
func BenchmarkDropWaitReads(b *testing.B) {
	m, _ := llamagen.LookupModel("llama-3.2-1b")
	m.Layers = 8
	p, err := llamagen.Generate(llamagen.Config{Model: m, Target: llamagen.Target{Name: "toy", SMs: 8, PerSM: 1}, AutoTile: true, MaxSeq: 64, PosSet: true, Fuse: true})
	if err != nil {
		b.Fatal(err)
	}
	q, err := llamagen.Twin(p, llamagen.DropWait)
	if err != nil {
		b.Fatal(err)
	}
	notes := maxNotes
	defer func() { usePreorder, syncingLeaf, maxNotes = true, true, notes }()
	for _, c := range []struct {
		name      string
		pre, leaf bool
	}{{"games", false, false}, {"one-run-games", false, true}, {"pre-pass", true, true}} {
		b.Run(c.name, func(b *testing.B) {
			usePreorder, syncingLeaf, maxNotes = c.pre, c.leaf, 1<<10
			for b.Loop() {
				r, err := Run(context.Background(), q, Config{})
				if err != nil || r.Verdict != Unsafe {
					b.Fatal(r, err)
				}
			}
		})
	}
}
