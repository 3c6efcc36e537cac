package runner

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/examples/llama/llamagen"
	"github.com/megaproof/megaproof/schedule"
)

// tinyModel is a Llama small enough for the CPU reference: GQA with two
// query heads per kv head, head_dim 32 (the device's minimum).
var tinyModel = llamagen.Model{Name: "tiny", Hidden: 64, Intermediate: 96, Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 32, Vocab: 200, Eps: 1e-5, Theta: 10000}

func tinyConfig(s llamagen.Strategy, splits, pos, batch int) llamagen.Config {
	return llamagen.Config{Model: tinyModel, Target: llamagen.Target{Name: "toy", SMs: 4, PerSM: 1}, Strategy: s,
		Tile: 24, Splits: splits, Pos: pos, PosSet: true, MaxSeq: 16, Batch: batch, Numeric: true}
}

// naive is an independent dense implementation of one decode step of the
// tiny model with the rounding points the numeric ops document.
type naive struct {
	m      llamagen.Model
	w      map[string][]float32
	rope   []byte
	kc, vc [][][]float32 // per layer, per position: kv_heads·head_dim values
}

func newNaive(t *testing.T, m llamagen.Model, ts Tensors, maxSeq int) *naive {
	n := &naive{m: m, w: map[string][]float32{}, rope: RoPETable(maxSeq, m.HeadDim, m.Theta)}
	get := func(name string, size int) {
		b, err := ts.Tensor(name, size)
		if err != nil {
			t.Fatal(err)
		}
		v := make([]float32, size)
		for i := range v {
			v[i] = ldBF(b, uint64(2*i))
		}
		n.w[name] = v
	}
	H, I, qw, kvw := m.Hidden, m.Intermediate, m.Heads*m.HeadDim, m.KVHeads*m.HeadDim
	get("model.embed_tokens.weight", m.Vocab*H)
	get("model.norm.weight", H)
	lm := "lm_head.weight"
	if !ts.Has(lm) {
		lm = "model.embed_tokens.weight"
	}
	n.w["lm"] = nil
	get(lm, m.Vocab*H)
	n.w["lm"] = n.w[lm]
	for l := 0; l < m.Layers; l++ {
		p := "model.layers." + itoa(l) + "."
		get(p+"input_layernorm.weight", H)
		get(p+"post_attention_layernorm.weight", H)
		get(p+"self_attn.q_proj.weight", qw*H)
		get(p+"self_attn.k_proj.weight", kvw*H)
		get(p+"self_attn.v_proj.weight", kvw*H)
		get(p+"self_attn.o_proj.weight", H*qw)
		get(p+"mlp.gate_proj.weight", I*H)
		get(p+"mlp.up_proj.weight", I*H)
		get(p+"mlp.down_proj.weight", H*I)
	}
	n.kc, n.vc = make([][][]float32, m.Layers), make([][][]float32, m.Layers)
	return n
}

func itoa(i int) string { return strconv.Itoa(i) }

func (n *naive) matvec(w []float32, x []float32, out int) []float32 {
	k := len(x)
	y := make([]float32, out)
	for j := range y {
		var s float32
		for i := 0; i < k; i++ {
			s += x[i] * w[j*k+i]
		}
		y[j] = s
	}
	return y
}

func bfv(v []float32) []float32 {
	for i := range v {
		v[i] = rbf(v[i])
	}
	return v
}

func (n *naive) norm(x, w []float32) []float32 {
	var s float32
	for _, v := range x {
		s += v * v
	}
	inv := rsqrtf(s/float32(len(x)) + float32(float64(int64(math.Round(n.m.Eps*1e9)))*1e-9))
	y := make([]float32, len(x))
	for i := range x {
		y[i] = rbf(w[i] * rbf(x[i]*inv))
	}
	return y
}

func (n *naive) rot(x []float32, pos int) {
	D := n.m.HeadDim
	h := D / 2
	for i := 0; i < h; i++ {
		c, s := ldBF(n.rope, uint64(2*(pos*D+i))), ldBF(n.rope, uint64(2*(pos*D+h+i)))
		x0, x1 := x[i], x[i+h]
		x[i], x[i+h] = rbf(rbf(x0*c)-rbf(x1*s)), rbf(rbf(x1*c)+rbf(x0*s))
	}
}

// step decodes token tok at position pos and returns the logits.
func (n *naive) step(tok, pos int) []float32 {
	m, w := n.m, n.w
	H, D := m.Hidden, m.HeadDim
	rep := m.Heads / m.KVHeads
	x := append([]float32(nil), w["model.embed_tokens.weight"][tok*H:(tok+1)*H]...)
	for l := 0; l < m.Layers; l++ {
		p := "model.layers." + itoa(l) + "."
		h := n.norm(x, w[p+"input_layernorm.weight"])
		q := bfv(n.matvec(w[p+"self_attn.q_proj.weight"], h, m.Heads*D))
		k := bfv(n.matvec(w[p+"self_attn.k_proj.weight"], h, m.KVHeads*D))
		v := bfv(n.matvec(w[p+"self_attn.v_proj.weight"], h, m.KVHeads*D))
		for hd := 0; hd < m.Heads; hd++ {
			n.rot(q[hd*D:(hd+1)*D], pos)
		}
		for hd := 0; hd < m.KVHeads; hd++ {
			n.rot(k[hd*D:(hd+1)*D], pos)
		}
		n.kc[l] = append(n.kc[l][:pos], k)
		n.vc[l] = append(n.vc[l][:pos], v)
		att := make([]float32, m.Heads*D)
		scale := float32(float64(int64(math.Round(1e9/math.Sqrt(float64(D))))) * 1e-9)
		for hd := 0; hd < m.Heads; hd++ {
			kh := hd / rep
			s := make([]float32, pos+1)
			mx := float32(math.Inf(-1))
			for j := 0; j <= pos; j++ {
				var d float32
				for i := 0; i < D; i++ {
					d += q[hd*D+i] * n.kc[l][j][kh*D+i]
				}
				s[j] = d * scale
				mx = max(mx, s[j])
			}
			o := make([]float32, D)
			var sum float32
			for j := 0; j <= pos; j++ {
				pj := expf(s[j] - mx)
				sum += pj
				for i := 0; i < D; i++ {
					o[i] += pj * n.vc[l][j][kh*D+i]
				}
			}
			for i := 0; i < D; i++ {
				att[hd*D+i] = rbf(o[i] / sum)
			}
		}
		o := bfv(n.matvec(w[p+"self_attn.o_proj.weight"], att, H))
		xm := make([]float32, H)
		for i := range xm {
			xm[i] = rbf(x[i] + o[i])
		}
		h2 := n.norm(xm, w[p+"post_attention_layernorm.weight"])
		g := bfv(n.matvec(w[p+"mlp.gate_proj.weight"], h2, m.Intermediate))
		u := bfv(n.matvec(w[p+"mlp.up_proj.weight"], h2, m.Intermediate))
		a := make([]float32, m.Intermediate)
		for i := range a {
			a[i] = rbf(rbf(g[i]/(1+expf(-g[i]))) * u[i])
		}
		d := bfv(n.matvec(w[p+"mlp.down_proj.weight"], a, H))
		for i := range x {
			x[i] = rbf(xm[i] + d[i])
		}
	}
	hf := n.norm(x, w["model.norm.weight"])
	return bfv(n.matvec(w["lm"], hf, m.Vocab))
}

func argmaxF(v []float32) int32 {
	best := 0
	for i := range v {
		if v[i] > v[best] {
			best = i
		}
	}
	return int32(best)
}

// generation decodes n steps from position 0 of cfg on a host heap.
func hostGeneration(t *testing.T, cfg llamagen.Config, ts Tensors, n int, first []int32) []Step {
	t.Helper()
	ctx := context.Background()
	opt := Options{Init: LlamaSource(ts)}
	progs := map[int]*Encoded{}
	prog := func(pos int) (*Encoded, error) {
		if e := progs[pos]; e != nil {
			return e, nil
		}
		c := cfg
		c.Pos = pos
		p, err := llamagen.Generate(c)
		if err != nil {
			return nil, err
		}
		e, err := Prepare(ctx, p, opt)
		progs[pos] = e
		return e, err
	}
	e0, err := prog(0)
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHostHeap(e0, opt)
	if err != nil {
		t.Fatal(err)
	}
	g := &Generation{Heap: h, Program: prog, Opt: opt, KeepLogits: func(int) bool { return true }}
	steps, err := g.Run(ctx, 0, n, first)
	if err != nil {
		t.Fatal(err)
	}
	return steps
}

// A tiny model decoded from position 0 by the composition of numeric ops
// (every strategy, split-KV included) gives the naive implementation's
// logits and tokens: the params, footprints and buffer layout of llamagen
// and the op references fit together.
func TestLlamaDecodeCPU(t *testing.T) {
	ts := SeededTensors{Seed: 3, Untied: true}
	const n = 6
	nv := newNaive(t, tinyModel, ts, 16)
	var want []int32
	var wantLogits [][]float32
	tok := int32(7)
	for pos := 0; pos < n; pos++ {
		lg := nv.step(int(tok), pos)
		wantLogits = append(wantLogits, lg)
		tok = argmaxF(lg)
		want = append(want, tok)
	}
	distinct := map[int32]bool{}
	for _, x := range want {
		distinct[x] = true
	}
	t.Logf("naive tokens %v", want)
	for _, tc := range []struct {
		name   string
		cfg    llamagen.Config
		exact  bool
		relTol float64
	}{
		{"round-robin", tinyConfig(llamagen.RoundRobin, 1, 0, 1), true, 0},
		{"dynamic", tinyConfig(llamagen.Dynamic, 1, 0, 1), true, 0},
		{"barrier", tinyConfig(llamagen.Barrier, 1, 0, 1), true, 0},
		{"split2", tinyConfig(llamagen.RoundRobin, 2, 0, 1), false, 1.0 / 64},
		// Splits clipped to the window at positions 0-2 on one heap.
		{"split4", tinyConfig(llamagen.RoundRobin, 4, 0, 1), false, 1.0 / 64},
		{"split4-chunk2", func() llamagen.Config {
			c := tinyConfig(llamagen.RoundRobin, 4, 0, 1)
			c.SplitChunk = 2
			return c
		}(), false, 1.0 / 64},
		{"autotile", func() llamagen.Config {
			c := tinyConfig(llamagen.RoundRobin, 1, 0, 1)
			c.AutoTile = true
			return c
		}(), true, 0},
		// Fused stages compute the same numbers as the unfused ops.
		{"fused", fused(tinyConfig(llamagen.RoundRobin, 1, 0, 1)), true, 0},
		{"fused-dynamic", fused(tinyConfig(llamagen.Dynamic, 1, 0, 1)), true, 0},
		{"fused-barrier", fused(tinyConfig(llamagen.Barrier, 1, 0, 1)), true, 0},
		{"fused-split2", fused(tinyConfig(llamagen.RoundRobin, 2, 0, 1)), false, 1.0 / 64},
		{"fusedc-split2", fusedCombine(tinyConfig(llamagen.RoundRobin, 2, 0, 1)), false, 1.0 / 64},
		{"fusedc-split4-chunk2", func() llamagen.Config {
			c := fusedCombine(tinyConfig(llamagen.Dynamic, 4, 0, 1))
			c.SplitChunk = 2
			return c
		}(), false, 1.0 / 64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			steps := hostGeneration(t, tc.cfg, ts, n, []int32{7})
			for i, st := range steps {
				if st.Out[0] != want[i] {
					t.Errorf("position %d: token %d, want %d", i, st.Out[0], want[i])
				}
				worst := 0.0
				for j, v := range st.Logits[0] {
					d := math.Abs(float64(v - wantLogits[i][j]))
					if tc.exact && d != 0 {
						t.Fatalf("position %d logit %d = %g, want %g exactly", i, j, v, wantLogits[i][j])
					}
					worst = max(worst, d/(1e-3+math.Abs(float64(wantLogits[i][j]))))
				}
				if worst > tc.relTol {
					t.Errorf("position %d: logits relative error %.3g > %.3g", i, worst, tc.relTol)
				}
			}
		})
	}
	// Batch 2: both sequences decode independently and agree with batch 1,
	// fused or not.
	var want2 []int32
	nv2 := newNaive(t, tinyModel, ts, 16)
	tok = 11
	for pos := 0; pos < n; pos++ {
		tok = argmaxF(nv2.step(int(tok), pos))
		want2 = append(want2, tok)
	}
	for _, cfg := range []llamagen.Config{tinyConfig(llamagen.RoundRobin, 1, 0, 2), fused(tinyConfig(llamagen.RoundRobin, 1, 0, 2))} {
		steps := hostGeneration(t, cfg, ts, n, []int32{7, 11})
		for i, st := range steps {
			if st.Out[0] != want[i] || st.Out[1] != want2[i] {
				t.Errorf("%s, position %d: tokens %v, want [%d %d]", cfg.Name(), i, st.Out, want[i], want2[i])
			}
		}
	}
	// Attention per sequence computes what one task per head over the
	// batch computes, bit for bit, split or not, fused or not, on every
	// strategy.
	for _, cfg := range []llamagen.Config{
		tinyConfig(llamagen.RoundRobin, 1, 0, 2), tinyConfig(llamagen.RoundRobin, 2, 0, 2), tinyConfig(llamagen.Dynamic, 2, 0, 2),
		tinyConfig(llamagen.Barrier, 1, 0, 2), fused(tinyConfig(llamagen.RoundRobin, 2, 0, 2)),
	} {
		rows := cfg
		rows.RowAttention = true
		want := hostGeneration(t, cfg, ts, n, []int32{7, 11})
		got := hostGeneration(t, rows, ts, n, []int32{7, 11})
		for i := range got {
			for b := range 2 {
				if got[i].Out[b] != want[i].Out[b] {
					t.Errorf("%s, position %d, sequence %d: token %d, one task per head %d", rows.Name(), i, b, got[i].Out[b], want[i].Out[b])
				}
				for j, v := range got[i].Logits[b] {
					if v != want[i].Logits[b][j] {
						t.Fatalf("%s, position %d, sequence %d: logit %d = %g, one task per head %g", rows.Name(), i, b, j, v, want[i].Logits[b][j])
					}
				}
			}
		}
	}
}

// fused is cfg with llamagen's fused stages.
func fused(cfg llamagen.Config) llamagen.Config {
	cfg.Fuse = true
	return cfg
}

// fusedCombine is cfg with llamagen's fused stages and the split-KV
// combine in the o tiles.
func fusedCombine(cfg llamagen.Config) llamagen.Config {
	cfg.Fuse, cfg.FuseCombine = true, true
	return cfg
}

// The combine in the o tiles computes what the combine tasks and the o
// tiles compute, bit for bit: at every position (the window clipped to
// fewer splits at the first ones), on every strategy, at batch 1 and 2,
// with attention per sequence or not.
func TestFuseCombineExact(t *testing.T) {
	ts := SeededTensors{Seed: 5, Untied: true}
	const n = 12
	for _, cfg := range []llamagen.Config{
		fused(tinyConfig(llamagen.RoundRobin, 2, 0, 1)), fused(tinyConfig(llamagen.Dynamic, 3, 0, 2)),
		fused(tinyConfig(llamagen.Barrier, 4, 0, 1)),
		func() llamagen.Config {
			c := fused(tinyConfig(llamagen.RoundRobin, 2, 0, 2))
			c.RowAttention = true
			return c
		}(),
	} {
		fc := cfg
		fc.FuseCombine = true
		first := []int32{7, 11}[:cfg.Batch]
		want := hostGeneration(t, cfg, ts, n, first)
		got := hostGeneration(t, fc, ts, n, first)
		for i := range got {
			for b := range cfg.Batch {
				for j, v := range got[i].Logits[b] {
					if v != want[i].Logits[b][j] {
						t.Fatalf("%s, position %d, sequence %d: logit %d = %g, with combine tasks %g", fc.Name(), i, b, j, v, want[i].Logits[b][j])
					}
				}
			}
		}
	}
}

// Encode refuses numeric tasks whose params, footprints and buffer sizes
// disagree, naming the task.
func TestNumericRefusals(t *testing.T) {
	base := encodable(t, tinyConfig(llamagen.RoundRobin, 2, 5, 2))
	task := func(p *schedule.Program, name string) *schedule.Task {
		for i := range p.Tasks {
			if p.Tasks[i].Name == name {
				return &p.Tasks[i]
			}
		}
		t.Fatalf("no task %q", name)
		return nil
	}
	fusedBase := encodable(t, fused(tinyConfig(llamagen.RoundRobin, 2, 5, 2)))
	refusals(t, fusedBase, []refusal{
		{"fused norm weight", `task "L0.q.t0" (op norm_gemv): read 2 (buffer "w.L0.wq"): row length`, func(p *schedule.Program) {
			tk := task(p, "L0.q.t0")
			tk.Reads[2] = tk.Reads[1]
		}},
		{"fused residual columns", `task "L1.o.t1" (op gemv_add): read 2 (buffer "L0.x"): offset`, func(p *schedule.Program) { task(p, "L1.o.t1").Reads[2].Offset = 0 }},
		{"gate and up weights", `task "L0.gu.t1" (op norm_gate_up): read 2 (buffer "w.L0.wup"): offset`, func(p *schedule.Program) { task(p, "L0.gu.t1").Reads[2].Offset = 0 }},
		{"rope append cache row", `task "L0.rope.g1" (op rope_append): write 1 (buffer "L0.kcache"): offset`, func(p *schedule.Program) { task(p, "L0.rope.g1").Params.Set("pos", 4) }},
	})
	// The shared-memory bound of a fused norm, which llamagen does not
	// exceed.
	if llamagen.FusedNormElems != MaxNormElems {
		t.Fatalf("llamagen.FusedNormElems %d, runner.MaxNormElems %d", llamagen.FusedNormElems, MaxNormElems)
	}
	if llamagen.FusedCombineRows != MaxCombineRows {
		t.Fatalf("llamagen.FusedCombineRows %d, runner.MaxCombineRows %d", llamagen.FusedCombineRows, MaxCombineRows)
	}
	const k = MaxNormElems + 8
	b := schedule.NewBuilder("norm-gemv-k", schedule.Launch{SMs: 1, PerSM: 1, Workers: 1})
	x, w, nw, y := b.Buffer("x", schedule.KindInput, 2*k), b.Buffer("w", schedule.KindInput, 2*k*4), b.Buffer("nw", schedule.KindInput, 2*k), b.Buffer("y", schedule.KindScratch, 8)
	b.Task("g").On(0).Op("norm_gemv").Param("n_off", 0).Param("n", 4).Param("k", k).Param("eps_e9", 10000).Read(x, 0, 2*k).Read(w, 0, 2*k*4).Read(nw, 0, 2*k).Write(y, 0, 8)
	if _, err := Encode(must(b.Build())); err == nil || !strings.Contains(err.Error(), "more than the 8192 a fused norm holds") {
		t.Errorf("norm_gemv over %d inputs: err = %v", k, err)
	}
	refusals(t, base, []refusal{
		{"missing eps", `task "L0.norm1" (op rmsnorm): param "eps_e9" is missing`, func(p *schedule.Program) { task(p, "L0.norm1").Params.Delete("eps_e9") }},
		{"gemv tile offset", `task "L1.q.t1" (op gemv): read 1 (buffer "w.L1.wq"): offset`, func(p *schedule.Program) { task(p, "L1.q.t1").Params.Set("n_off", 0) }},
		{"gemv k", `task "L0.down.t0" (op gemv)`, func(p *schedule.Program) { task(p, "L0.down.t0").Params.Set("k", 64) }},
		{"batch", `task "L0.silu.t0" (op silu_mul)`, func(p *schedule.Program) { task(p, "L0.silu.t0").Params.Set("batch", 1) }},
		{"head dim", `head_dim 48: the device code needs a multiple of 32`, func(p *schedule.Program) {
			task(p, "L0.attn.h1.s0").Params.Set("head_dim", 48)
		}},
		{"window", `task "L0.attn.h1.s1" (op attn_partial): read 1 (buffer "L0.kcache"): offset`, func(p *schedule.Program) {
			ps := &task(p, "L0.attn.h1.s1").Params
			v, _ := ps.Get("kv_start")
			ps.Set("kv_start", v+1)
		}},
		{"kv pos", `task "L0.kv.g1" (op kv_append): write 0 (buffer "L0.kcache"): offset`, func(p *schedule.Program) { task(p, "L0.kv.g1").Params.Set("pos", 4) }},
		{"argmax vocab", `task "argmax" (op argmax)`, func(p *schedule.Program) { task(p, "argmax").Params.Set("vocab", 100) }},
		{"embed table size", `task "embed" (op embed): read 1 (buffer "w.embed")`, func(p *schedule.Program) { task(p, "embed").Params.Set("vocab", 199) }},
		{"out elem", `param "out_elem" = 3`, func(p *schedule.Program) { task(p, "lm.t0").Params.Set("out_elem", 3) }},
		{"accesses", `task "L0.add1" (op add): 1 reads and 1 writes, want 2 and 1`, func(p *schedule.Program) { tk := task(p, "L0.add1"); tk.Reads = tk.Reads[:1] }},
	})
	rows := tinyConfig(llamagen.RoundRobin, 2, 5, 2)
	rows.RowAttention = true
	rowsBase := encodable(t, rows)
	refusals(t, rowsBase, []refusal{
		{"row outside the batch", `task "L0.attn.h1.s0.b1" (op attn_partial): row 2 outside batch 2`, func(p *schedule.Program) { task(p, "L0.attn.h1.s0.b1").Params.Set("row", 2) }},
		{"rows past the batch", `task "L0.combine.h0.b1" (op attn_combine): rows [1, 3) outside batch 2`, func(p *schedule.Program) { task(p, "L0.combine.h0.b1").Params.Set("rows", 2) }},
		{"row not where the accesses start", `task "L0.attn.h1.s1.b1" (op attn_partial): read 0 (buffer "L0.qr"): offset`, func(p *schedule.Program) { task(p, "L0.attn.h1.s1.b1").Params.Set("row", 0) }},
		{"cache plane of another sequence", `task "L1.attn.h0.s0.b0" (op attn_partial): read 1 (buffer "L1.kcache"): offset`, func(p *schedule.Program) {
			tk := task(p, "L1.attn.h0.s0.b0")
			tk.Reads[1] = task(p, "L1.attn.h0.s0.b1").Reads[1]
		}},
	})
}

// encodable returns a generator of fresh copies of cfg's program, once
// Encode has accepted the program unmodified.
func encodable(t *testing.T, cfg llamagen.Config) func() *schedule.Program {
	t.Helper()
	gen := func() *schedule.Program {
		p, err := llamagen.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if _, err := Encode(gen()); err != nil {
		t.Fatalf("%s, unmodified: %v", cfg.Name(), err)
	}
	return gen
}

// refusal is an edit of a program that Encode must refuse with an error
// containing want.
type refusal struct {
	name, want string
	edit       func(p *schedule.Program)
}

// refusals applies each edit to a fresh program from base and requires
// Encode to refuse it as the case says.
func refusals(t *testing.T, base func() *schedule.Program, cases []refusal) {
	t.Helper()
	for _, tc := range cases {
		p := base()
		tc.edit(p)
		_, err := Encode(p)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}

// The seeded initialization's first values, which scripts/gpu/llama_ref.py
// reproduces and checks against the same constants.
func TestSeededTensorsGolden(t *testing.T) {
	s := SeededTensors{Seed: 1}
	for _, tc := range []struct {
		name string
		want []uint16
	}{
		{"model.layers.0.self_attn.q_proj.weight", seededGolden[0]},
		{"model.norm.weight", seededGolden[1]},
	} {
		b, _ := s.Tensor(tc.name, 4)
		for i, w := range tc.want {
			if got := binary.LittleEndian.Uint16(b[2*i:]); got != w {
				t.Errorf("%s[%d] = %#04x, want %#04x", tc.name, i, got, w)
			}
		}
	}
}

// EmbedShift scales the embedding by an exact power of two (the bf16
// exponent moves, the mantissa stays), HeadShift the lm head, and
// HeadFromEmbed gives the lm head the embedding's bytes; other tensors
// keep their bytes.
func TestSeededTensorsScale(t *testing.T) {
	base := SeededTensors{Seed: 1, Untied: true}
	scaled := SeededTensors{Seed: 1, Untied: true, EmbedShift: 4, HeadShift: 2}
	const n = 4096
	for _, tc := range []struct {
		name  string
		shift int
	}{{"model.embed_tokens.weight", 4}, {"lm_head.weight", 2}, {"model.layers.0.mlp.up_proj.weight", 0}, {"model.norm.weight", 0}} {
		b0, _ := base.Tensor(tc.name, n)
		b1, _ := scaled.Tensor(tc.name, n)
		for i := 0; i < n; i++ {
			x, y := binary.LittleEndian.Uint16(b0[2*i:]), binary.LittleEndian.Uint16(b1[2*i:])
			want := x
			if x&0x7fff != 0 {
				want = x + uint16(tc.shift)<<7
			}
			if y != want {
				t.Fatalf("%s[%d]: %#04x scaled by 2^%d is %#04x, want %#04x", tc.name, i, x, tc.shift, y, want)
			}
		}
	}
	tied := SeededTensors{Seed: 1, Untied: true, EmbedShift: 3, HeadFromEmbed: true}
	e, _ := tied.Tensor("model.embed_tokens.weight", n)
	h, _ := tied.Tensor("lm_head.weight", n)
	if string(e) != string(h) {
		t.Error("HeadFromEmbed: lm_head differs from the embedding")
	}
	// HeadRoll r: lm_head element i is embedding element (i + r) mod n,
	// negative rolls included.
	for _, r := range []int{64, n - 1, -64, 3 * n} {
		rolled := tied
		rolled.HeadRoll = r
		hr, _ := rolled.Tensor("lm_head.weight", n)
		for i := 0; i < n; i++ {
			j := ((i+r)%n + n) % n
			if hr[2*i] != e[2*j] || hr[2*i+1] != e[2*j+1] {
				t.Fatalf("HeadRoll %d: element %d is not embedding element %d", r, i, j)
			}
		}
	}
}

// seededGolden are the bf16 bits of SeededTensors{Seed: 1}'s first four
// elements of a q projection and a norm weight (also in llama_ref.py).
var seededGolden = [2][]uint16{{0xbc42, 0xbc73, 0x3c81, 0xbc04}, {0x3f68, 0x3f83, 0x3f85, 0x3f8c}}

func TestSafetensors(t *testing.T) {
	dir := t.TempDir()
	// A BF16 file through WriteSafetensors.
	vals := []float32{1, -2.5, 0.1, 3e-3}
	bf := make([]byte, 8)
	for i, v := range vals {
		stBF(bf, uint64(2*i), v)
	}
	var buf bytes.Buffer
	if err := WriteSafetensors(&buf, map[string][]byte{"a": bf}, map[string][]int64{"a": {2, 2}}); err != nil {
		t.Fatal(err)
	}
	s, err := ReadSafetensors(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Tensor("a", 4)
	if err != nil || !bytes.Equal(got, bf) {
		t.Fatalf("bf16 tensor: %x, %v", got, err)
	}
	if _, err := s.Tensor("a", 5); err == nil {
		t.Error("wrong element count accepted")
	}
	// F32 and F16 tensors, converted to bf16.
	f32 := make([]byte, 16)
	f16 := make([]byte, 8)
	for i, v := range vals {
		binary.LittleEndian.PutUint32(f32[4*i:], math.Float32bits(v))
	}
	for i, h := range []uint16{0x3c00, 0xc100, 0x2e66, 0x1a24} { // 1, -2.5, 0.0999756, 0.00299835 as IEEE halves
		binary.LittleEndian.PutUint16(f16[2*i:], h)
	}
	hdr := `{"f":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"h":{"dtype":"F16","shape":[4],"data_offsets":[16,24]},"i":{"dtype":"I64","shape":[1],"data_offsets":[24,32]},"__metadata__":{"format":"pt"}}`
	img := make([]byte, 8)
	binary.LittleEndian.PutUint64(img, uint64(len(hdr)))
	img = append(append(append(append(img, hdr...), f32...), f16...), make([]byte, 8)...)
	path := filepath.Join(dir, "m.safetensors")
	if err := os.WriteFile(path, img, 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := OpenSafetensors(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n := st.Names(); len(n) != 3 || n[0] != "f" {
		t.Errorf("names %v", n)
	}
	gf, err := st.Tensor("f", 4)
	if err != nil || !bytes.Equal(gf, bf) {
		t.Errorf("f32 → bf16: %x, %v, want %x", gf, err, bf)
	}
	gh, err := st.Tensor("h", 4)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vals {
		if g := ldBF(gh, uint64(2*i)); math.Abs(float64(g-v)) > math.Abs(float64(v))/128 {
			t.Errorf("f16 → bf16 element %d = %g, want about %g", i, g, v)
		}
	}
	if _, err := st.Tensor("i", 1); err == nil || !strings.Contains(err.Error(), "dtype I64") {
		t.Errorf("I64: err = %v", err)
	}
	// Malformed headers.
	for _, bad := range []string{
		`{"x":{"dtype":"F32","shape":[4],"data_offsets":[0,12]}}`,
		`{"x":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}}`,
		`{"x":{"dtype":"F32","shape":[-4],"data_offsets":[0,16]}}`,
		`{"x":`,
	} {
		im := make([]byte, 8)
		binary.LittleEndian.PutUint64(im, uint64(len(bad)))
		im = append(append(im, bad...), make([]byte, 16)...)
		if _, err := ReadSafetensors(bytes.NewReader(im), int64(len(im))); err == nil {
			t.Errorf("header %s accepted", bad)
		}
	}
	if _, err := ReadSafetensors(bytes.NewReader([]byte{255, 255, 0, 0, 0, 0, 0, 0}), 8); err == nil {
		t.Error("header longer than the file accepted")
	}
}

// A heap filled from a safetensors file written from the seeded tensors
// equals the heap filled from the seeded tensors themselves.
func TestLlamaSourceSafetensors(t *testing.T) {
	p, err := llamagen.Generate(tinyConfig(llamagen.RoundRobin, 1, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	e, err := Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	ts := SeededTensors{Seed: 9} // tied: no lm_head in the file
	tensors, shapes := map[string][]byte{}, map[string][]int64{}
	for _, b := range p.Buffers {
		name, ok := HFName(b.Name)
		if !ok || !ts.Has(name) {
			continue
		}
		tensors[name], _ = ts.Tensor(name, int(b.Size/2))
		shapes[name] = []int64{int64(b.Size / 2)}
	}
	path := filepath.Join(t.TempDir(), "tiny.safetensors")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteSafetensors(f, tensors, shapes); err != nil {
		t.Fatal(err)
	}
	f.Close()
	st, err := OpenSafetensors(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a, err := e.ImageFrom(0, LlamaSource(ts))
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.ImageFrom(0, LlamaSource(st))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("heaps differ")
	}
	bufs := e.Buffers(a)
	if !bytes.Equal(bufs["w.lm_head"], bufs["w.embed"]) {
		t.Error("tied lm_head is not the embedding")
	}
	if !bytes.Equal(bufs["w.rope"], RoPETable(16, tinyModel.HeadDim, tinyModel.Theta)) {
		t.Error("rotary table")
	}
	// A file missing a layer's tensor is refused, naming it.
	delete(tensors, "model.layers.1.mlp.up_proj.weight")
	var buf bytes.Buffer
	WriteSafetensors(&buf, tensors, shapes)
	st2, _ := ReadSafetensors(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if _, err := e.ImageFrom(0, LlamaSource(st2)); err == nil || !strings.Contains(err.Error(), "model.layers.1.mlp.up_proj.weight") {
		t.Errorf("missing tensor: err = %v", err)
	}
}
