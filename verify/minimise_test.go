package verify

import (
	"context"
	"slices"
	"testing"

	"github.com/megaproof/megaproof/examples/llama/llamagen"
	"github.com/megaproof/megaproof/internal/progen"
	"github.com/megaproof/megaproof/schedule"
)

// On the 5,805-task Llama-3.2-1B schedule (128-column tiles) with the
// first wait of one task removed, the race's witness is its causal cone:
// a few dozen events where the greedy run's trace had hundreds.
func TestMinimiseLlamaDroppedWait(t *testing.T) {
	cfg := llamagen.DefaultConfig()
	cfg.Tile = 128
	p, err := llamagen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Tasks) != 5805 {
		t.Fatalf("%d tasks, want 5805", len(p.Tasks))
	}
	for _, c := range []struct {
		task string
		max  int // the events the cone needs, counted by hand
	}{
		// L0.rope.g0 (worker 26) reads the q tiles of workers 2 and 3:
		// embed, norm1, one q tile, then the rope task's other wait (k).
		{"L0.rope.g0", 30},
		// L0.o.t0 reads the 32 attention heads' output; the race with
		// head 0 needs head 0's cone: embed, norm1, q.t0, q.t1, k.t0,
		// v.t0, rope.g0, kv.g0, attn.h0 and o.t0's begin (37 events);
		// heads of other groups take other tiles (39).
		{"L0.o.t0", 39},
	} {
		q := p.Clone()
		i := slices.IndexFunc(q.Tasks, func(t schedule.Task) bool { return t.Name == c.task })
		q.Tasks[i].Before = q.Tasks[i].Before[1:]
		r, err := Run(context.Background(), q, Config{Sanity: true})
		if err != nil {
			t.Fatal(err)
		}
		races := 0
		for _, f := range r.Findings {
			if Family(f.Code) != "race" {
				continue
			}
			races++
			if len(f.Witness) > c.max {
				t.Errorf("%s: %s %v: witness of %d events, want at most %d", c.task, f.Code, f.Tasks, len(f.Witness), c.max)
			}
			if err := schedule.CheckWitness(q, f.Code, f.Tasks, f.Witness); err != nil {
				t.Errorf("%s: %s: %v", c.task, f.Code, err)
			}
		}
		if races == 0 {
			t.Errorf("%s: no race found: %+v", c.task, r.Findings)
		}
	}
}

// On random programs, every minimised witness is accepted, no longer than
// the analysis' own, and, where minimisation trims (deadlocks, race.scope,
// and programs whose dispatch depends on threads finishing), locally
// minimal: leaving out any thread's last event makes the judge refuse it.
func TestMinimiseRandomPrograms(t *testing.T) {
	gen := progen.Program(progen.Small())
	n := 1500
	if testing.Short() {
		n = 300
	}
	trimmed, coned, compacted := 0, 0, 0
	keepRawWitnesses = true
	defer func() { keepRawWitnesses = false }()
	for i := 0; i < n; i++ {
		p := gen.Example(i)
		r, err := Run(context.Background(), p, Config{})
		if err != nil {
			t.Fatal(err)
		}
		m, err := schedule.NewMachine(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range r.Findings {
			if len(f.Witness) == 0 || staticFinding(p, &f) {
				continue
			}
			z := &minimiser{ctx: context.Background(), base: m}
			w := z.minimise(f.Code, f.Tasks, f.Witness)
			if len(w) > len(f.Witness) {
				t.Fatalf("seed %d: %s: minimised %d events to %d", i, f.Code, len(f.Witness), len(w))
			}
			if err := schedule.CheckWitness(p, f.Code, f.Tasks, w); err != nil {
				if schedule.CheckWitness(p, f.Code, f.Tasks, f.Witness) != nil {
					continue // the analysis' own witness is refused: kept as it is
				}
				t.Fatalf("seed %d: %s %v: minimised witness refused: %v", i, f.Code, f.Tasks, err)
			}
			if schedule.Expands(w) {
				compacted++ // TestCompactWitnesses checks these
				continue
			}
			if z.cone(f.Witness) != nil {
				coned++
				continue
			}
			if z.spent() {
				continue
			}
			trimmed++
			for _, th := range threadsByLast(w) {
				k := lastOfThread(w, th)
				c := slices.Delete(slices.Clone(w), k, k+1)
				if schedule.CheckWitness(p, f.Code, f.Tasks, c) == nil {
					t.Fatalf("seed %d: %s: event %d of %d (thread %d) can be left out", i, f.Code, k, len(w), th)
				}
			}
		}
	}
	if trimmed < 20 || coned < 20 {
		t.Errorf("%d witnesses trimmed and %d reduced to cones: too few to test", trimmed, coned)
	}
	t.Logf("%d witnesses trimmed, %d reduced to cones, %d compact", trimmed, coned, compacted)
}

// With every witness offered in compact form, every witness Run returns
// on random programs (semaphores, dynamic tasks that hold workers and
// residency included) is accepted by the judge, no longer than the
// analysis' own, and compact ones occur for every family, in programs with
// semaphores and with dynamic tasks too.
func TestCompactWitnesses(t *testing.T) {
	gen := progen.Program(progen.Small())
	n := 1200
	if testing.Short() {
		n = 300
	}
	defer func(c int) { compactOver = c }(compactOver)
	byFamily := map[string]int{}
	sem, dyn := 0, 0
	for i := 0; i < n; i++ {
		p := gen.Example(i)
		keepRawWitnesses = true
		plain, err := Run(context.Background(), p, Config{})
		keepRawWitnesses = false
		if err != nil {
			t.Fatal(err)
		}
		compactOver = 0
		r, err := Run(context.Background(), p, Config{Sanity: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Findings) != len(plain.Findings) {
			t.Fatalf("seed %d: %d findings with compact witnesses, %d without", i, len(r.Findings), len(plain.Findings))
		}
		for k, f := range r.Findings {
			if !f.HasWitness() {
				continue
			}
			if err := schedule.CheckWitness(p, f.Code, f.Tasks, f.Witness); err != nil {
				if schedule.CheckWitness(p, f.Code, f.Tasks, plain.Findings[k].Witness) != nil {
					continue // the analysis' own witness is refused: kept as it is
				}
				t.Fatalf("seed %d: %s %v: compact witness %v refused: %v", i, f.Code, f.Tasks, f.Witness, err)
			}
			if len(f.Witness) > len(plain.Findings[k].Witness) {
				t.Fatalf("seed %d: %s: compact witness of %d events, the analysis' own of %d", i, f.Code, len(f.Witness), len(plain.Findings[k].Witness))
			}
			if !schedule.Expands(f.Witness) {
				continue
			}
			byFamily[Family(f.Code)]++
			if len(p.Semaphores) > 0 {
				sem++
			}
			if slices.ContainsFunc(p.Tasks, func(t schedule.Task) bool { return t.Worker == schedule.Dynamic }) {
				dyn++
			}
		}
	}
	for _, fam := range []string{"race", "deadlock", CodeUninitializedRead} {
		if byFamily[fam] < 5 {
			t.Errorf("%d compact %s witnesses: too few to test", byFamily[fam], fam)
		}
	}
	if sem < 5 || dyn < 5 {
		t.Errorf("%d compact witnesses in programs with semaphores, %d with dynamic tasks: too few", sem, dyn)
	}
	t.Logf("compact witnesses by family %v; %d with semaphores, %d with dynamic tasks", byFamily, sem, dyn)
}

// BenchmarkMinimise times Run on the 5,805-task Llama schedule with one
// wait removed, with the analyses' own witnesses (raw) and minimised: an
// early task (L0.rope.g0, 3 findings, cones of 13 to 15 events where the
// greedy run's traces have 113 to 321) and a late one (L9.add2, 17
// findings whose cones are nearly the whole run, about 12,500 events).
// The two variants alternate within one benchmark run.
func BenchmarkMinimise(b *testing.B) {
	cfg := llamagen.DefaultConfig()
	cfg.Tile = 128
	p, err := llamagen.Generate(cfg)
	if err != nil {
		b.Fatal(err)
	}
	for _, task := range []string{"L0.rope.g0", "L9.add2"} {
		q := p.Clone()
		i := slices.IndexFunc(q.Tasks, func(t schedule.Task) bool { return t.Name == task })
		q.Tasks[i].Before = q.Tasks[i].Before[1:]
		// The minimisation alone, on the analyses' own witnesses.
		b.Run(task+"/minimise-only", func(b *testing.B) {
			keepRawWitnesses = true
			r, err := Run(context.Background(), q, Config{})
			keepRawWitnesses = false
			if err != nil {
				b.Fatal(err)
			}
			m, err := schedule.NewMachine(q)
			if err != nil {
				b.Fatal(err)
			}
			events := 0
			for b.Loop() {
				z := &minimiser{ctx: context.Background(), base: m}
				events = 0
				for _, f := range r.Findings {
					if len(f.Witness) > 0 {
						events += len(z.minimise(f.Code, f.Tasks, f.Witness))
					}
				}
			}
			b.ReportMetric(float64(events), "witness-events")
		})
		for _, raw := range []bool{true, false} {
			name := "minimised"
			if raw {
				name = "raw"
			}
			b.Run(task+"/"+name, func(b *testing.B) {
				keepRawWitnesses = raw
				defer func() { keepRawWitnesses = false }()
				events := 0
				for b.Loop() {
					r, err := Run(context.Background(), q, Config{})
					if err != nil || r.Verdict != Unsafe {
						b.Fatal(err, r.Verdict)
					}
					events = 0
					for _, f := range r.Findings {
						events += len(f.Witness)
					}
				}
				b.ReportMetric(float64(events), "witness-events")
			})
		}
	}
}

// On the 5,805-task Llama schedule with page reuse and epoch counters
// (llama32-1b-h200-epoch-pages2), removing L9.gate.t21's first wait lets
// it add to a counter shared across layers, so L8.silu.t21 can begin
// before L8.gate.t21 signals: an uninitialized read whose writer has to
// end without signalling. Its compact witness holds the writer right
// after its body; without that candidate it was a cone of 12,351 events.
func TestCompactUninitializedReadEpoch(t *testing.T) {
	var cfg llamagen.Config
	for _, nc := range llamagen.Configs() {
		if nc.Name == "llama32-1b-h200-epoch-pages2" {
			cfg = nc.Config
		}
	}
	p, err := llamagen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(p.Tasks, func(t schedule.Task) bool { return t.Name == "L9.gate.t21" })
	if len(p.Tasks) != 5805 || i < 0 {
		t.Fatalf("%d tasks, L9.gate.t21 at %d", len(p.Tasks), i)
	}
	p.Tasks[i].Before = p.Tasks[i].Before[1:]
	r, err := Run(context.Background(), p, Config{})
	if err != nil {
		t.Fatal(err)
	}
	silu := false
	for _, f := range r.Findings {
		if len(f.Witness) > 30 {
			t.Errorf("%s %v: witness of %d events, want at most 30", f.Code, f.Tasks, len(f.Witness))
		}
		if err := schedule.CheckWitness(p, f.Code, f.Tasks, f.Witness); err != nil {
			t.Errorf("%s: %v", f.Code, err)
		}
		if f.Code == CodeUninitializedRead && p.Tasks[f.Tasks[0]].Name == "L8.silu.t21" {
			silu = true
		}
	}
	if !silu {
		t.Errorf("no uninitialized read by L8.silu.t21 among %d findings", len(r.Findings))
	}
}
