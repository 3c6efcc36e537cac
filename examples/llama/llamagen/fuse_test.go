package llamagen

import (
	"context"
	"testing"

	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify"
)

// Fused schedules are verified safe for every strategy, have fewer tasks
// and fewer dependent stages per layer, and refuse what they cannot fuse.
func TestFuse(t *testing.T) {
	m, _ := LookupModel("smollm2-135m")
	m.Layers = 2
	tg := Target{Name: "toy", SMs: 16, PerSM: 1}
	for _, st := range []Strategy{RoundRobin, Dynamic, Barrier} {
		for _, splits := range []int{1, 3} {
			for _, numeric := range []bool{false, true} {
				base := Config{Model: m, Target: tg, Strategy: st, AutoTile: true, Splits: splits, Pos: 40, PosSet: true, MaxSeq: 64, Numeric: numeric}
				fused := base
				fused.Fuse = true
				p, err := Generate(base)
				if err != nil {
					t.Fatal(err)
				}
				q, err := Generate(fused)
				if err != nil {
					t.Fatal(err)
				}
				r, err := verify.Run(context.Background(), q, verify.Config{})
				if err != nil || r.Verdict != verify.Safe {
					t.Fatalf("%s: %v %v", q.Name, r.Verdict, err)
				}
				if len(q.Tasks) >= len(p.Tasks) {
					t.Errorf("%s: %d tasks, unfused %d", q.Name, len(q.Tasks), len(p.Tasks))
				}
				ops := map[string]int{}
				for _, tk := range q.Tasks {
					ops[tk.Op]++
				}
				for _, gone := range []string{"rmsnorm", "add", "silu_mul", "rope", "kv_append"} {
					if ops[gone] != 0 {
						t.Errorf("%s: %d %s tasks left", q.Name, ops[gone], gone)
					}
				}
				if want := m.Layers * m.KVHeads; ops["rope_append"] != want {
					t.Errorf("%s: %d rope_append tasks, want %d", q.Name, ops["rope_append"], want)
				}
				// The combine in the o tiles: no combine task is left, every
				// o tile combines, and the schedule is verified safe.
				fused.FuseCombine = true
				qc, err := Generate(fused)
				if err != nil {
					t.Fatal(err)
				}
				if r, err := verify.Run(context.Background(), qc, verify.Config{}); err != nil || r.Verdict != verify.Safe {
					t.Fatalf("%s: %v %v", qc.Name, r.Verdict, err)
				}
				cops := map[string]int{}
				for _, tk := range qc.Tasks {
					cops[tk.Op]++
				}
				if splits > 1 && (cops["attn_combine"] != 0 || cops["combine_gemv_add"] != ops["gemv_add"]/2 || cops["gemv_add"] != ops["gemv_add"]/2 ||
					len(qc.Tasks) != len(q.Tasks)-ops["attn_combine"]) {
					t.Errorf("%s: ops %v, without the combine in the o tiles %v", qc.Name, cops, ops)
				}
				if splits == 1 && len(qc.Tasks) != len(q.Tasks) {
					t.Errorf("%s: %d tasks at one split, %d without the combine in the o tiles", qc.Name, len(qc.Tasks), len(q.Tasks))
				}
			}
		}
	}
	if _, err := Generate(Config{Model: m, Target: tg, Fuse: true, Batch: 16}); err == nil {
		t.Error("batch 16 × hidden 576 fused: no error")
	}
	if _, err := Generate(Config{Model: m, Target: tg, Fuse: true, Pages: 2}); err == nil {
		t.Error("fused with pages: no error")
	}
	if _, err := Generate(Config{Model: m, Target: tg, FuseCombine: true, Splits: 2}); err == nil {
		t.Error("the combine in the o tiles without fused stages: no error")
	}
	if _, err := Generate(Config{Model: m, Target: tg, Fuse: true, FuseCombine: true, Splits: 128, Pos: 1000}); err == nil {
		t.Error("9 heads × 128 splits combined in the o tiles: no error")
	}
}

// Dropping a wait of a fused schedule is caught: the fused ops' footprints
// are what verify checks.
func TestFuseDroppedWait(t *testing.T) {
	m, _ := LookupModel("smollm2-135m")
	m.Layers = 1
	p, err := Generate(Config{Model: m, Target: Target{Name: "toy", SMs: 8, PerSM: 1}, AutoTile: true, Pos: 9, PosSet: true, MaxSeq: 16, Fuse: true})
	if err != nil {
		t.Fatal(err)
	}
	unsafeWithoutWaits(t, p, "L0.rope.g0", "L0.gu.t0", "L0.down.t0", "L0.o.t0")
	p, err = Generate(Config{Model: m, Target: Target{Name: "toy", SMs: 8, PerSM: 1}, AutoTile: true, Pos: 9, PosSet: true, MaxSeq: 16, Fuse: true, FuseCombine: true, Splits: 2})
	if err != nil {
		t.Fatal(err)
	}
	unsafeWithoutWaits(t, p, "L0.attn.h0.s1", "L0.o.t0", "L0.gu.t0")
}

// unsafeWithoutWaits requires p to be unsafe once any one of the named
// tasks loses its waits (its before-steps).
func unsafeWithoutWaits(t *testing.T, p *schedule.Program, names ...string) {
	t.Helper()
	for _, name := range names {
		q := p.Clone()
		found := false
		for i := range q.Tasks {
			if q.Tasks[i].Name == name {
				q.Tasks[i].Before = nil
				found = true
			}
		}
		if !found {
			t.Fatalf("no task %s", name)
		}
		r, err := verify.Run(context.Background(), q, verify.Config{})
		if err != nil || r.Verdict != verify.Unsafe {
			t.Errorf("%s without its waits: %v %v", name, r.Verdict, err)
		}
	}
}
