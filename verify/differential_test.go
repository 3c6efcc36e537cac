package verify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/internal/brute"
	"github.com/megaproof/megaproof/internal/defcheck"
	"github.com/megaproof/megaproof/internal/progen"
	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify/explore"
	"pgregory.net/rapid"
)

var diffPrograms = flag.Int("differential.programs", 10000, "fixed-seed programs TestDifferential checks (rapid adds -rapid.checks more)")

const diffMaxStates = 200000

// diffBruteStates bounds the brute-force oracle's states per program.
const diffBruteStates = 2000

// explorerFamilies runs the explorer and returns its families, or ok=false
// when the budget ran out.
func explorerFamilies(p *schedule.Program) ([]string, []explore.Finding, bool) {
	r, err := explore.Run(context.Background(), p, explore.Config{MaxStates: diffMaxStates})
	if err != nil || !r.Complete {
		return nil, nil, false
	}
	var out []string
	for _, f := range r.Findings {
		out = append(out, Family(f.Code))
	}
	slices.Sort(out)
	return slices.Compact(out), r.Findings, true
}

// disagreement checks one program against the three tiers and returns a
// description of the first disagreement, or "".
func disagreement(p *schedule.Program, tally map[string]int) (string, error) {
	res, err := Run(context.Background(), p, Config{Sanity: true, MaxStates: diffMaxStates})
	if err != nil {
		return "", err
	}
	got := families(res)
	tally[res.Verdict.String()]++
	if len(p.Semaphores) > 0 {
		tally["semaphore programs, engine "+res.Stats.Engine]++
	}
	for _, f := range got {
		tally["family "+f]++
	}
	if res.Verdict == Inconclusive {
		return "", nil
	}
	want, efs, ok := explorerFamilies(p)
	if ok {
		tally["explorer compared"]++
	}
	if ok && !slices.Equal(got, want) {
		return fmt.Sprintf("verify %v, explorer %v (explorer findings %v)", got, want, efs), nil
	}
	for _, f := range efs {
		if f.Code == CodeOccupancy && len(f.Trace) == 0 && p.Launch.Cooperative {
			continue
		}
		if err := schedule.CheckWitness(p, f.Code, f.Tasks, f.Trace); err != nil && f.Trace != nil {
			return fmt.Sprintf("explorer witness of %s %v does not replay: %v", f.Code, f.Tasks, err), nil
		}
	}
	bf, err := brute.Families(p, brute.Config{MaxStates: diffBruteStates})
	switch {
	case errors.Is(err, brute.ErrBudget):
	case err != nil:
		return "", err
	case !slices.Equal(got, bf):
		return fmt.Sprintf("verify %v, brute-force enumeration %v", got, bf), nil
	default:
		tally["brute compared"]++
		if len(p.Semaphores) > 0 {
			tally["semaphore programs, brute compared"]++
		}
	}
	def, err := defcheck.Families(p)
	switch {
	case errors.Is(err, defcheck.ErrSemaphores), errors.Is(err, defcheck.ErrDispatch), errors.Is(err, defcheck.ErrBudget):
	case err != nil:
		return "", err
	case !slices.Equal(got, def):
		return fmt.Sprintf("verify %v, definitional checker %v", got, def), nil
	default:
		tally["defcheck compared"]++
	}
	return "", nil
}

// TestDifferential holds verify, the definitional checker and the
// explorer to the same verdicts and finding families on random programs
// covering the whole model, and replays every witness (Config.Sanity).
func TestDifferential(t *testing.T) {
	n := *diffPrograms
	if testing.Short() {
		n /= 10
	}
	gen := progen.Program(progen.Small())
	bad := 0
	tally := map[string]int{}
	for i := 0; i < n; i++ {
		p := gen.Example(i)
		d, err := disagreement(p, tally)
		if err != nil {
			t.Fatalf("seed %d: %v", i, err)
		}
		if d != "" {
			bad++
			js, _ := schedule.Marshal(p)
			persist(t, js)
			t.Errorf("seed %d: %s\n%s", i, d, js)
			if bad >= 5 {
				t.FailNow()
			}
		}
	}
	// rapid's own programs, shrunk and saved under testdata/rapid on failure.
	checks := 0
	rapid.Check(t, func(rt *rapid.T) {
		checks++
		p := gen.Draw(rt, "program")
		d, err := disagreement(p, tally)
		if err != nil {
			rt.Fatal(err)
		}
		if d != "" {
			js, _ := schedule.Marshal(p)
			persist(t, js)
			rt.Fatalf("%s\n%s", d, strings.TrimSpace(string(js)))
		}
	})
	t.Logf("tally: %v", tally)
	fmt.Printf("differential: %d programs, %d disagreements\n", n+checks, bad)
}

// persist saves a program that made the tiers disagree under
// testdata/rapid/differential, where TestDifferentialRegressions replays it
// on every run. (rapid shrinks its own failures before they get here.)
func persist(t *testing.T, js []byte) {
	sum := sha256.Sum256(js)
	name := filepath.Join("testdata", "rapid", "differential", hex.EncodeToString(sum[:8])+".json")
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err == nil {
		if err := os.WriteFile(name, js, 0o644); err == nil {
			t.Logf("saved %s", name)
		}
	}
}

// TestDifferentialRegressions replays every program that once made the
// tiers disagree.
func TestDifferentialRegressions(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "rapid", "differential", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no regression programs found")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			p, err := schedule.Unmarshal(data)
			if err != nil {
				t.Fatal(err)
			}
			d, err := disagreement(p, map[string]int{})
			if err != nil {
				t.Fatal(err)
			}
			if d != "" {
				t.Error(d)
			}
		})
	}
}

// With almost no clock components for dynamic threads, the proof clocks
// must degrade to fewer proofs, never to wrong ones.
func TestDifferentialFewChains(t *testing.T) {
	defer func(n int) { maxDynamicChains = n }(maxDynamicChains)
	maxDynamicChains = 1
	gen := progen.Program(progen.Small())
	for i := 0; i < 2000; i++ {
		p := gen.Example(100000 + i)
		d, err := disagreement(p, map[string]int{})
		if err != nil {
			t.Fatal(err)
		}
		if d != "" {
			js, _ := schedule.Marshal(p)
			t.Fatalf("seed %d: %s\n%s", 100000+i, d, js)
		}
	}
	medium := progen.Program(progen.Medium())
	for i := 0; i < 40; i++ {
		p := medium.Example(i)
		res, err := Run(context.Background(), p, Config{Sanity: true})
		if err != nil {
			t.Fatal(err)
		}
		def, err := defcheck.Families(p)
		if err != nil || res.Verdict == Inconclusive {
			continue
		}
		if got := families(res); !slices.Equal(got, def) {
			t.Fatalf("medium seed %d: verify %v, definitional checker %v", i, got, def)
		}
	}
}

// TestDifferentialMedium compares verify with the definitional checker on
// larger programs than the explorer can take.
func TestDifferentialMedium(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 30
	}
	gen := progen.Program(progen.Medium())
	for i := 0; i < n; i++ {
		p := gen.Example(i)
		res, err := Run(context.Background(), p, Config{Sanity: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict == Inconclusive {
			continue
		}
		def, err := defcheck.Families(p)
		if errors.Is(err, defcheck.ErrBudget) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := families(res); !slices.Equal(got, def) {
			js, _ := schedule.Marshal(p)
			t.Fatalf("seed %d: verify %v, definitional checker %v\n%s", i, got, def, js)
		}
	}
}

// The conflict sweep (byte ranges, or row and column ranges of tiles) finds
// exactly the task pairs schedule.Conflict finds byte by byte.
func TestConflictSweep(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		p := progen.Program(progen.Medium()).Draw(rt, "program")
		v := &verifier{f: lowerForm(p)}
		conflictsOfAll(v)
		for a := range p.Tasks {
			for b := a + 1; b < len(p.Tasks); b++ {
				found := v.pair(uint64(a)<<32|uint64(b)) != nil
				want := v.f.taskTh[a] != v.f.taskTh[b] && schedule.Conflict(p, a, b)
				if found != want {
					rt.Fatalf("tasks %d and %d: sweep %v, byte-exact %v", a, b, found, want)
				}
			}
		}
	})
}

// Tiles of a row-major matrix: column slices never conflict, a row-spanning
// byte range meets exactly the tiles it crosses.
func TestConflictTiles(t *testing.T) {
	b := schedule.NewBuilder("tiles", launch(4))
	m := b.Buffer("m", schedule.KindScratch, 8*100)
	b.Task("a").On(0).WriteTile(m, 0, 40, 8, 100)  // columns [0,40) of rows 0..7
	b.Task("b").On(1).WriteTile(m, 40, 60, 8, 100) // columns [40,100)
	b.Task("c").On(2).Read(m, 350, 100)            // row 3 from column 50 to row 4 column 50
	b.Task("d").On(3).Read(m, 720, 10)             // row 7, columns [20,30)
	p := mustBuild(b)
	v := &verifier{f: lowerForm(p)}
	conflictsOfAll(v)
	for _, c := range []struct {
		a, b int
		want bool
	}{{0, 1, false}, {0, 2, true}, {1, 2, true}, {0, 3, true}, {1, 3, false}, {2, 3, false}} {
		found := v.pair(uint64(c.a)<<32|uint64(c.b)) != nil
		if found != c.want || found != schedule.Conflict(p, c.a, c.b) {
			t.Errorf("tasks %d,%d: sweep %v, want %v", c.a, c.b, found, c.want)
		}
	}
}

// conflictsOfAll enumerates the conflicting pairs of every task.
func conflictsOfAll(v *verifier) {
	all := func(int32) bool { return true }
	g, _ := newGrid(v.f.p, all)
	v.conflicts(g, all)
}

// TestDifferentialPhases holds verify to the oracles on programs whose
// barrier is reused for a second generation, synced after or before the
// last body or only arrived at by some participants (progen's Phases).
func TestDifferentialPhases(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 300
	}
	o := progen.Small()
	o.Phases = true
	gen := progen.Program(o)
	tally := map[string]int{}
	for i := 0; i < n; i++ {
		p := gen.Example(200000 + i)
		d, err := disagreement(p, tally)
		if err != nil {
			t.Fatalf("seed %d: %v", 200000+i, err)
		}
		if d != "" {
			js, _ := schedule.Marshal(p)
			persist(t, js)
			t.Fatalf("seed %d: %s\n%s", 200000+i, d, js)
		}
	}
	t.Logf("tally: %v", tally)
}
