package llamagen

import (
	"context"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify"
)

// Attention per sequence is verified safe on every strategy, split or not,
// fused or not; it has a task per sequence where the default has one per
// head; and the same program at batch 1 is the default one.
func TestRowAttention(t *testing.T) {
	m, _ := LookupModel("smollm2-135m")
	m.Layers = 2
	tg := Target{Name: "toy", SMs: 16, PerSM: 1}
	const B = 3
	for _, st := range []Strategy{RoundRobin, Dynamic, Barrier} {
		for _, splits := range []int{1, 3} {
			for _, fuse := range []bool{false, true} {
				base := Config{Model: m, Target: tg, Strategy: st, AutoTile: true, Splits: splits, Pos: 40, PosSet: true, MaxSeq: 64, Numeric: true, Batch: B, Fuse: fuse}
				rows := base
				rows.RowAttention = true
				p, err := Generate(base)
				if err != nil {
					t.Fatal(err)
				}
				q, err := Generate(rows)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasSuffix(q.Name, "/rows") {
					t.Errorf("name %q", q.Name)
				}
				r, err := verify.Run(context.Background(), q, verify.Config{})
				if err != nil || r.Verdict != verify.Safe {
					t.Fatalf("%s: %v %v", q.Name, r.Verdict, err)
				}
				po, qo := opCounts(p), opCounts(q)
				for _, op := range []string{"attention", "attn_partial", "attn_combine"} {
					if qo[op] != B*po[op] {
						t.Errorf("%s: %d %s tasks, want %d × %d", q.Name, qo[op], op, B, po[op])
					}
				}
				if len(q.Tasks)-len(p.Tasks) != (B-1)*(po["attention"]+po["attn_partial"]+po["attn_combine"]) {
					t.Errorf("%s: %d tasks, default %d", q.Name, len(q.Tasks), len(p.Tasks))
				}
				one, two := base, rows
				one.Batch, two.Batch = 1, 1
				a, _ := Generate(one)
				b, _ := Generate(two)
				if a.Name != b.Name || len(a.Tasks) != len(b.Tasks) {
					t.Errorf("batch 1: %s (%d tasks) and %s (%d tasks)", a.Name, len(a.Tasks), b.Name, len(b.Tasks))
				}
			}
		}
	}
}

// Dropping the wait of one sequence's attention chunk, or of the o tile on
// all of them, is caught.
func TestRowAttentionDroppedWait(t *testing.T) {
	m, _ := LookupModel("smollm2-135m")
	m.Layers = 1
	p, err := Generate(Config{Model: m, Target: Target{Name: "toy", SMs: 8, PerSM: 1}, AutoTile: true, Pos: 9, PosSet: true, MaxSeq: 16, Batch: 2, Splits: 2, RowAttention: true})
	if err != nil {
		t.Fatal(err)
	}
	unsafeWithoutWaits(t, p, "L0.attn.h0.s1.b1", "L0.combine.h2.b0", "L0.o.t0")
}

// opCounts counts p's tasks per op.
func opCounts(p *schedule.Program) map[string]int {
	n := map[string]int{}
	for _, tk := range p.Tasks {
		n[tk.Op]++
	}
	return n
}
