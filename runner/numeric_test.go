package runner

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/examples/llama/llamagen"
	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify"
)

// randomSource fills a one-task program's input buffers with values the
// op reads: bf16 in [−2, 2) (rotary tables: [−1, 1)), fp32 partials,
// log-sum-exps and logits (with ties), valid token ids.
type randomSource struct {
	seed  uint64
	vocab int
}

func (s randomSource) Fill(p *schedule.Program, buf int, dst []byte) error {
	b := p.Buffers[buf]
	r := rand.New(rand.NewPCG(s.seed, uint64(buf)))
	switch {
	case b.Name == "token":
		for i := 0; i+4 <= len(dst); i += 4 {
			binary.LittleEndian.PutUint32(dst[i:], uint32(r.IntN(s.vocab)))
		}
	case b.Name == "lm.best": // (logit, index) pairs with ties and NaN tiles
		for i := 0; i+8 <= len(dst); i += 8 {
			stF32(dst, uint64(i), float32(r.IntN(40))/4)
			idx := int32(r.IntN(s.vocab))
			if r.IntN(8) == 0 {
				idx = -1
			}
			stU32(dst, uint64(i+4), uint32(idx))
		}
	case strings.HasSuffix(b.Name, ".part") || strings.HasSuffix(b.Name, ".lse") || b.Name == "logits":
		for i := 0; i+4 <= len(dst); i += 4 {
			v := float32(r.NormFloat64() * 3)
			if b.Name == "logits" {
				v = float32(r.IntN(2000)) / 64 // many exact ties
			}
			stF32(dst, uint64(i), v)
		}
	default:
		amp := 2.0
		if b.Name == "w.rope" {
			amp = 1
		}
		for i := 0; i+2 <= len(dst); i += 2 {
			stBF(dst, uint64(i), float32((r.Float64()*2-1)*amp))
		}
	}
	return nil
}

// oneTask is a program holding only task t of p: its reads become inputs,
// its writes scratch (partly written), its synchronization is dropped.
func oneTask(p *schedule.Program, t *schedule.Task) *schedule.Program {
	q := &schedule.Program{Name: p.Name + "/" + t.Name, Launch: schedule.Launch{SMs: 1, PerSM: 1, Workers: 1, Target: "one"}}
	idx := map[int32]int32{}
	add := func(a schedule.Access, kind schedule.BufferKind) schedule.Access {
		j, ok := idx[a.Buffer]
		if !ok {
			b := p.Buffers[a.Buffer]
			j = int32(len(q.Buffers))
			idx[a.Buffer] = j
			q.Buffers = append(q.Buffers, schedule.Buffer{Name: b.Name, Kind: kind, Size: b.Size, Arena: schedule.NoArena})
		}
		a.Buffer = j
		return a
	}
	nt := schedule.Task{Name: t.Name, Op: t.Op, Params: t.Params, Worker: 0}
	for _, a := range t.Reads {
		nt.Reads = append(nt.Reads, add(a, schedule.KindInput))
	}
	for _, a := range t.Writes {
		nt.Writes = append(nt.Writes, add(a, schedule.KindScratch))
	}
	q.Tasks = []schedule.Task{nt}
	return q
}

// compareOutputs checks every written element of the single task of p
// against the CPU reference with the op's tolerance.
func compareOutputs(p *schedule.Program, want, got map[string][]byte) error {
	t := &p.Tasks[0]
	o := numByName[t.Op]
	e, err := Encode(p)
	if err != nil {
		return err
	}
	kinds := o.kinds(&e.bodies[0].args)
	for wi, a := range t.Writes {
		name := p.Buffers[a.Buffer].Name
		w, g := want[name], got[name]
		k := kinds[wi]
		for r := uint64(0); r < a.RowCount(); r++ {
			lo := uint64(a.Offset) + r*a.Stride
			if k == elemPair {
				// The tile's best pair, exactly, of the device's own logits.
				a0 := t.Writes[0]
				lg := got[p.Buffers[a0.Buffer].Name]
				v, i := bestLogit(lg, uint64(a0.Offset)+r*a0.Stride, a0.Length/4)
				if i >= 0 {
					off, _ := t.Params.Get("n_off")
					i += off
				}
				if gv, gi := ldF32(g, lo), int64(int32(ldU32(g, lo+4))); gi != i || (i >= 0 && gv != v) {
					return fmt.Errorf("%s: write %d (%s) row %d: pair (%g, %d), the logits' best is (%g, %d)", t.Name, wi, name, r, gv, gi, v, i)
				}
				continue
			}
			for off := lo; off < lo+a.Length; off += k.size() {
				var rv, gv float64
				switch k {
				case elemBF16:
					rv, gv = float64(ldBF(w, off)), float64(ldBF(g, off))
				case elemF32:
					rv, gv = float64(ldF32(w, off)), float64(ldF32(g, off))
				case elemI32:
					rv, gv = float64(int32(ldU32(w, off))), float64(int32(ldU32(g, off)))
				}
				if !o.tol.Allows(rv, gv) {
					return fmt.Errorf("%s: write %d (%s) byte %d: got %g, want %g (tolerance %+v)", t.Name, wi, name, off, gv, rv, o.tol)
				}
			}
		}
	}
	return nil
}

// numericPrograms are one-task programs of every numeric op, drawn from
// llamagen programs of small models (head_dim 32, 64 and 128; batch 1, 2
// and 3; split-KV; fused stages; the lm head's fp32 tiles), plus a GEMV whose k is not a
// multiple of 8 (the device's scalar path).
func numericPrograms(t *testing.T) []*schedule.Program {
	t.Helper()
	models := []struct {
		m     llamagen.Model
		batch int
		split int
	}{
		{tinyModel, 2, 2},
		{llamagen.Model{Name: "small64", Hidden: 192, Intermediate: 320, Layers: 1, Heads: 6, KVHeads: 2, HeadDim: 64, Vocab: 3000, Eps: 1e-6, Theta: 500000}, 1, 3},
		{llamagen.Model{Name: "small128", Hidden: 256, Intermediate: 512, Layers: 1, Heads: 4, KVHeads: 1, HeadDim: 128, Vocab: 1000, Eps: 1e-5, Theta: 100000}, 3, 1},
	}
	var progs []*schedule.Program
	for _, mc := range models {
		for _, split := range []int{1, mc.split, -mc.split} { // negative: the combine in the o tiles
			cfg := llamagen.Config{Model: mc.m, Target: llamagen.Target{Name: "toy", SMs: 4, PerSM: 1}, Tile: 40,
				Batch: mc.batch, Splits: max(split, -split), Pos: 37, PosSet: true, MaxSeq: 64, Numeric: true, Fuse: split != 1, FuseCombine: split < 0}
			p, err := llamagen.Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for i := range p.Tasks {
				tk := &p.Tasks[i]
				key := tk.Op
				if strings.HasPrefix(tk.Name, "lm.") {
					key = "lm." + tk.Op
				}
				if numByName[tk.Op] == nil || seen[key] {
					continue
				}
				seen[key] = true
				progs = append(progs, oneTask(p, tk))
			}
		}
	}
	// Attention per sequence (llamagen's RowAttention): the tasks of
	// sequence 1, whose accesses start at row 1 of their buffers.
	for _, split := range []int{1, 2} {
		p, err := llamagen.Generate(llamagen.Config{Model: tinyModel, Target: llamagen.Target{Name: "toy", SMs: 4, PerSM: 1}, Tile: 40,
			Batch: 2, Splits: split, Pos: 37, PosSet: true, MaxSeq: 64, Numeric: true, RowAttention: true})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for i := range p.Tasks {
			tk := &p.Tasks[i]
			if strings.HasSuffix(tk.Name, ".b1") && !seen[tk.Op] {
				seen[tk.Op] = true
				progs = append(progs, oneTask(p, tk))
			}
		}
	}
	// GEMV with k = 100 (no 16-byte vectors) and an odd tile.
	b := schedule.NewBuilder("gemv-k100", schedule.Launch{SMs: 1, PerSM: 1, Workers: 1})
	x := b.Buffer("x", schedule.KindInput, 200)
	w := b.Buffer("w", schedule.KindInput, 2*100*13)
	y := b.Buffer("y", schedule.KindScratch, 2*13)
	b.Task("g").On(0).Op("gemv").Param("n_off", 3).Param("n", 7).Param("k", 100).Param("out", 13).Read(x, 0, 200).Read(w, 600, 1400).Write(y, 6, 14)
	progs = append(progs, must(b.Build()))

	return progs
}

// sourceFor is the random source of a one-task program (token ids below
// its model's vocabulary).
func sourceFor(p *schedule.Program) randomSource {
	src := randomSource{seed: 42, vocab: 1000}
	if strings.Contains(p.Name, "small64") {
		src.vocab = 3000
	} else if strings.Contains(p.Name, "tiny") {
		src.vocab = 200
	}
	return src
}

// The one-task programs of the device test are valid, verified safe, and
// their CPU references run; compareOutputs accepts the reference itself
// and rejects it with one element moved past the tolerance.
func TestNumericPrograms(t *testing.T) {
	progs := numericPrograms(t)
	ops := map[string]bool{}
	for _, p := range progs {
		r, err := verify.Run(context.Background(), p, verify.Config{})
		if err != nil || r.Verdict != verify.Safe {
			t.Fatalf("%s: %v %v", p.Name, r, err)
		}
		want, err := ReferenceWith(p, Options{Init: sourceFor(p), Poison: 0xA5})
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		if err := compareOutputs(p, want, want); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
		tk := &p.Tasks[0]
		ops[tk.Op] = true
		a := tk.Writes[0]
		name := p.Buffers[a.Buffer].Name
		bad := map[string][]byte{}
		for k, v := range want {
			bad[k] = append([]byte(nil), v...)
		}
		e, _ := Encode(p)
		off := uint64(a.Offset) + numByName[tk.Op].kinds(&e.bodies[0].args)[0].size() - 1
		bad[name][off] ^= 0x40 // an exponent bit of the first bf16 or fp32 element, or an int32's bit 30
		if err := compareOutputs(p, want, bad); err == nil {
			t.Errorf("%s: a changed output byte %d of %s passed", p.Name, off, name)
		}
	}
	for _, o := range numOps {
		if !ops[o.name] {
			t.Errorf("no program of op %s", o.name)
		}
	}
}
