//go:build cgo

package runner

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/megaproof/megaproof/examples/llama/llamagen"
	"github.com/megaproof/megaproof/schedule"
)

// TestGPUNumericOps runs one task of every numeric op, drawn from llamagen
// programs of small models (head_dim 32, 64 and 128; batch 1, 2 and 3;
// split-KV; the lm head's fp32 tiles) plus a GEMV whose k is not a multiple
// of 8 (the scalar path), at block sizes 32 to MaxBlockThreads, and compares each
// output element with the CPU reference within the op's tolerance.
func TestGPUNumericOps(t *testing.T) {
	d := device(t)
	progs := numericPrograms(t)
	ops := map[string]int{}
	for _, p := range progs {
		src := sourceFor(p)
		want, err := ReferenceWith(p, Options{Init: src, Poison: 0xA5})
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		for _, threads := range []int{32, 128, 256, MaxBlockThreads} {
			out, err := d.Run(context.Background(), p, Options{Init: src, Poison: 0xA5, BlockThreads: threads})
			if err != nil {
				t.Fatalf("%s, %d threads: %v", p.Name, threads, err)
			}
			if err := compareOutputs(p, want, out.Buffers); err != nil {
				t.Errorf("%s, %d threads: %v", p.Name, threads, err)
			}
			ops[p.Tasks[0].Op]++
		}
	}
	for _, o := range numOps {
		if ops[o.name] == 0 {
			t.Errorf("op %s was not tested", o.name)
		}
	}
	t.Logf("%d one-task programs × 4 block sizes; runs per op: %v", len(progs), ops)
}

// llamaRef is scripts/gpu/llama_ref.py's ref.json.
type llamaRef struct {
	Model      string    `json:"model"`
	Seed       uint64    `json:"seed"`
	EmbedShift int       `json:"embed_shift"`
	HeadShift  int       `json:"head_shift"`
	HeadEmbed  bool      `json:"head_from_embed"`
	HeadRoll   int       `json:"head_roll"` // rows
	Untie      bool      `json:"untie"`
	First      int32     `json:"first"`
	Steps      int       `json:"steps"`
	Vocab      int       `json:"vocab"`
	TokensBF16 []int32   `json:"tokens_bf16"`
	TokensFP32 []int32   `json:"tokens_fp32"`
	Gaps       []float64 `json:"top2_gap_bf16"`
	Attn       string    `json:"attn_implementation"`
	NoiseAbs   float64   `json:"bf16_vs_fp32_max_abs"`
	NoiseRel   float64   `json:"bf16_vs_fp32_rel"`
	Torch      string    `json:"torch"`
	HF         string    `json:"transformers"`
}

func readF32(path string, n int) ([]float32, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) != 4*n {
		return nil, fmt.Errorf("%s: %d bytes, want %d", path, len(b), 4*n)
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out, nil
}

// DecodeResult is one configuration's outcome of TestGPULlamaDecode, as
// written to MEGAPROOF_OUT/decode-<model>-<strategy>.json.
type DecodeResult struct {
	Model, Strategy, Weights string
	// EmbedShift and HeadShift are the seeded init's scales (powers of
	// two on the embedding and the lm head; 0: standard deviation 0.018).
	EmbedShift, HeadShift int
	HeadFromEmbed         bool
	Tasks, Steps          int
	TokensMatch           bool
	FirstMismatch         int // -1 when all match
	Tokens, RefTokens     []int32
	// Logit errors over the steps before the first mismatch: max |ours −
	// ref| and that over max |ref|, against the bf16 and the fp32 model.
	BF16MaxAbs, BF16Rel, FP32MaxAbs, FP32Rel float64
	// Step0 errors (position 0) against both.
	Step0BF16MaxAbs, Step0FP32MaxAbs float64
	KernelMedianMS, StepMedianMS     float64
	PrepareSeconds                   float64
	// Teacher forcing (every step fed PyTorch bf16's token): steps whose
	// argmax equals PyTorch's, steps that differ only where PyTorch's own
	// choice is within this step's measured logit error (its logit for our
	// token is at most that far below its maximum: a tie at the
	// reference's precision), and the worst logit errors over all steps.
	ForcedEqual, ForcedTies, ForcedOther int
	ForcedBF16Rel, ForcedFP32Rel         float64
	// RefNoiseRel is PyTorch bf16's relative logit error against its fp32
	// (max over steps); the bounds derive from it (decodeBounds).
	RefNoiseRel, BoundBF16Rel, BoundFP32Rel float64
}

// Bounds of TestGPULlamaDecode on the largest logit error relative to the
// step's largest reference logit, in terms of N, the same figure for
// PyTorch's own bf16 logits against its fp32 logits (the error bf16
// storage costs): against fp32 at most 1.5·N + 0.01, against PyTorch bf16
// (two bf16 computations, each about N from fp32) at most 2·N + 0.01.
func decodeBounds(noiseRel float64) (bf16, fp32 float64) {
	return 2*noiseRel + 0.01, 1.5*noiseRel + 0.01
}

// TestGPULlamaDecode decodes MEGAPROOF_LLAMA_STEPS (default the
// reference's) tokens greedily from position 0 with llamagen programs of
// each model in MEGAPROOF_LLAMA_MODELS (default smollm2-135m) for the
// round-robin, split-KV (round-robin, 2 splits) and dynamic strategies,
// verified before they run, on weights from the seeded init (or the
// reference's model.safetensors), and compares tokens and logits with
// scripts/gpu/llama_ref.py's outputs in MEGAPROOF_LLAMA_REF.
func TestGPULlamaDecode(t *testing.T) {
	refDir := os.Getenv("MEGAPROOF_LLAMA_REF")
	if refDir == "" {
		t.Skip("MEGAPROOF_LLAMA_REF not set (run scripts/gpu/llama_ref.py first)")
	}
	d := device(t)
	models := strings.Split(envOr("MEGAPROOF_LLAMA_MODELS", "smollm2-135m"), ",")
	strategies := strings.Split(envOr("MEGAPROOF_LLAMA_STRATEGIES", "round-robin,split2,dynamic"), ",")
	outDir := os.Getenv("MEGAPROOF_OUT")
	for _, name := range models {
		t.Run(name, func(t *testing.T) {
			lr := openLlamaRef(t, refDir, name)
			ref, weights := lr.ref, lr.weights
			lb, err := readF32(filepath.Join(lr.dir, "logits_bf16.f32"), ref.Steps*ref.Vocab)
			if err != nil {
				t.Fatal(err)
			}
			lf, err := readF32(filepath.Join(lr.dir, "logits_fp32.f32"), ref.Steps*ref.Vocab)
			if err != nil {
				t.Fatal(err)
			}
			steps := ref.Steps
			for _, sname := range strategies {
				t.Run(sname, func(t *testing.T) {
					cfg, opt, err := lr.config(sname, 1)
					if err != nil {
						t.Fatal(err)
					}
					encs, heap, prep := decodePrograms(t, d, cfg, steps, opt)
					g := &Generation{Heap: heap, Program: func(pos int) (*Encoded, error) { return encs[pos], nil }, Opt: opt, KeepLogits: func(int) bool { return true }}
					res, err := g.Run(context.Background(), 0, steps, []int32{ref.First})
					if err != nil {
						t.Fatal(err)
					}
					r := DecodeResult{Model: name, Strategy: sname, Weights: weights, EmbedShift: ref.EmbedShift, HeadShift: ref.HeadShift, HeadFromEmbed: ref.HeadEmbed, Tasks: len(encs[steps-1].prog.Tasks), Steps: steps, FirstMismatch: -1, RefTokens: ref.TokensBF16[:steps], PrepareSeconds: prep.Seconds()}
					var kern, wall []float64
					for i, st := range res {
						r.Tokens = append(r.Tokens, st.Out[0])
						kern = append(kern, st.Kernel.Seconds()*1e3)
						wall = append(wall, st.Wall.Seconds()*1e3)
						if r.FirstMismatch >= 0 {
							continue
						}
						if st.Out[0] != ref.TokensBF16[i] {
							r.FirstMismatch = i
						}
						// Logits of step i: the inputs so far are the reference's.
						ab, mb := maxErr(st.Logits[0], lb[i*ref.Vocab:(i+1)*ref.Vocab])
						af, mf := maxErr(st.Logits[0], lf[i*ref.Vocab:(i+1)*ref.Vocab])
						if i == 0 {
							r.Step0BF16MaxAbs, r.Step0FP32MaxAbs = ab, af
						}
						r.BF16MaxAbs, r.FP32MaxAbs = max(r.BF16MaxAbs, ab), max(r.FP32MaxAbs, af)
						r.BF16Rel, r.FP32Rel = max(r.BF16Rel, ab/mb), max(r.FP32Rel, af/mf)
					}
					r.TokensMatch = r.FirstMismatch < 0
					r.KernelMedianMS, r.StepMedianMS = medianF(kern), medianF(wall)
					// Teacher forcing over all steps.
					g.Force = func(pos int, _ []int32) []int32 { return []int32{ref.TokensBF16[pos]} }
					forced, err := g.Run(context.Background(), 0, steps, []int32{ref.First})
					if err != nil {
						t.Fatal(err)
					}
					for i, st := range forced {
						rb := lb[i*ref.Vocab : (i+1)*ref.Vocab]
						ab, mb := maxErr(st.Logits[0], rb)
						_, mf := maxErr(st.Logits[0], lf[i*ref.Vocab:(i+1)*ref.Vocab])
						af, _ := maxErr(st.Logits[0], lf[i*ref.Vocab:(i+1)*ref.Vocab])
						r.ForcedBF16Rel, r.ForcedFP32Rel = max(r.ForcedBF16Rel, ab/mb), max(r.ForcedFP32Rel, af/mf)
						switch o := st.Out[0]; {
						case o == ref.TokensBF16[i]:
							r.ForcedEqual++
						case float64(rb[ref.TokensBF16[i]]-rb[o]) <= ab:
							r.ForcedTies++
						default:
							r.ForcedOther++
							t.Errorf("teacher-forced step %d: token %d, PyTorch %d, its logits %g vs %g (max error %g)", i, o, ref.TokensBF16[i], rb[o], rb[ref.TokensBF16[i]], ab)
						}
					}
					t.Logf("%s %s (%s weights, %d tasks): greedy tokens match %v (first mismatch %d); logits vs bf16 max abs %.4g (rel %.4g), vs fp32 %.4g (rel %.4g); step 0: %.4g / %.4g; kernel median %.3f ms, step %.3f ms; prepare %.1f s; teacher-forced: %d equal, %d ties, %d other, rel errors %.4g / %.4g",
						name, sname, weights, r.Tasks, r.TokensMatch, r.FirstMismatch, r.BF16MaxAbs, r.BF16Rel, r.FP32MaxAbs, r.FP32Rel, r.Step0BF16MaxAbs, r.Step0FP32MaxAbs, r.KernelMedianMS, r.StepMedianMS, r.PrepareSeconds, r.ForcedEqual, r.ForcedTies, r.ForcedOther, r.ForcedBF16Rel, r.ForcedFP32Rel)
					if !r.TokensMatch {
						i := r.FirstMismatch
						t.Logf("greedy token %d = %d, PyTorch bf16 %d (its top-2 gap there %.4g)", i, r.Tokens[i], ref.TokensBF16[i], ref.Gaps[i])
						if os.Getenv("MEGAPROOF_STRICT_TOKENS") != "" {
							t.Errorf("greedy tokens differ from PyTorch bf16's at step %d", i)
						}
					}
					r.RefNoiseRel = ref.NoiseRel
					r.BoundBF16Rel, r.BoundFP32Rel = decodeBounds(ref.NoiseRel)
					if max(r.BF16Rel, r.ForcedBF16Rel) > r.BoundBF16Rel || max(r.FP32Rel, r.ForcedFP32Rel) > r.BoundFP32Rel {
						t.Errorf("logit error above the bound: vs bf16 %.4g / %.4g > %.4g or vs fp32 %.4g / %.4g > %.4g (PyTorch bf16 vs fp32: %.4g)", r.BF16Rel, r.ForcedBF16Rel, r.BoundBF16Rel, r.FP32Rel, r.ForcedFP32Rel, r.BoundFP32Rel, ref.NoiseRel)
					}
					if outDir != "" {
						b, _ := json.MarshalIndent(r, "", " ")
						os.WriteFile(filepath.Join(outDir, fmt.Sprintf("decode-%s-%s-s%d%s%s.json", name, sname, ref.EmbedShift, map[bool]string{true: "h"}[ref.HeadEmbed], map[bool]string{true: fmt.Sprintf("r%d", ref.HeadRoll)}[ref.HeadRoll != 0])), b, 0o644)
					}
				})
			}
		})
	}
}

// batchRef is scripts/gpu/llama_ref.py's batch-B.json (--batches): greedy
// decoding of B sequences in one batch by the bf16 model, sequence r
// starting from token Firsts[r].
type batchRef struct {
	Batch  int         `json:"batch"`
	Firsts []int32     `json:"firsts"`
	Steps  int         `json:"steps"`
	Vocab  int         `json:"vocab"`
	Tokens [][]int32   `json:"tokens_bf16"`
	Gaps   [][]float64 `json:"top2_gap_bf16"`
}

// minGap is the smallest of the reference's top-2 gaps (0 when it has none).
func minGap(gaps [][]float64) float64 {
	m := math.Inf(1)
	for _, g := range gaps {
		for _, x := range g {
			m = min(m, x)
		}
	}
	if math.IsInf(m, 1) {
		return 0
	}
	return m
}

// BatchDecodeResult is one configuration's outcome of
// TestGPULlamaDecodeBatch, as written to
// MEGAPROOF_OUT/decode-batch-<model>-<strategy>-b<batch>.json.
type BatchDecodeResult struct {
	Model, Strategy, Weights string
	EmbedShift               int
	HeadFromEmbed            bool
	HeadRoll                 int // rows
	Batch, Tasks, Steps      int
	// First is sequence 0's token at position 0; sequence r starts from
	// First + 97 r (llama_ref.py --first, --batches) unless the reference
	// restarted it from another token (llama_ref.py --min-gap): Firsts
	// holds every sequence's start, RefMinGap the reference's smallest
	// top-2 gap over all sequences and steps.
	First     int32
	Firsts    []int32
	RefMinGap float64
	// TokensMatch: every sequence's greedy tokens equal PyTorch bf16's;
	// FirstMismatch per sequence (-1 when all match).
	TokensMatch   bool
	RowsMatching  int
	FirstMismatch []int
	// Logit errors of every sequence over its steps before its first
	// mismatch (as DecodeResult's), and under teacher forcing.
	BF16MaxAbs, BF16Rel, ForcedBF16Rel   float64
	ForcedEqual, ForcedTies, ForcedOther int
	BoundBF16Rel                         float64
	KernelMedianMS, StepMedianMS         float64
	PrepareSeconds                       float64
}

// TestGPULlamaDecodeBatch decodes B sequences at once (B in
// MEGAPROOF_LLAMA_BATCH, e.g. 4,16) for the models and strategies of
// TestGPULlamaDecode and compares every sequence's greedy tokens and logits
// with PyTorch's batched bf16 decoding (llama_ref.py --batches), and under
// teacher forcing. A strategy whose fused stages do not take the batch is
// skipped, as llamagen refuses it.
func TestGPULlamaDecodeBatch(t *testing.T) {
	refDir, batches := os.Getenv("MEGAPROOF_LLAMA_REF"), os.Getenv("MEGAPROOF_LLAMA_BATCH")
	if refDir == "" || batches == "" {
		t.Skip("MEGAPROOF_LLAMA_REF or MEGAPROOF_LLAMA_BATCH not set (run scripts/gpu/llama_ref.py --batches first)")
	}
	d := device(t)
	outDir := os.Getenv("MEGAPROOF_OUT")
	for _, name := range strings.Split(envOr("MEGAPROOF_LLAMA_MODELS", "smollm2-135m"), ",") {
		t.Run(name, func(t *testing.T) {
			lr := openLlamaRef(t, refDir, name)
			bound, _ := decodeBounds(lr.ref.NoiseRel)
			for _, batch := range envInts(t, "MEGAPROOF_LLAMA_BATCH", batches) {
				js, err := os.ReadFile(filepath.Join(lr.dir, fmt.Sprintf("batch-%d.json", batch)))
				if err != nil {
					t.Fatal(err)
				}
				var br batchRef
				if err := json.Unmarshal(js, &br); err != nil {
					t.Fatal(err)
				}
				if br.Batch != batch || len(br.Firsts) != batch || len(br.Tokens) != batch {
					t.Fatalf("batch-%d.json holds batch %d, %d firsts, %d sequences", batch, br.Batch, len(br.Firsts), len(br.Tokens))
				}
				lb, err := readF32(filepath.Join(lr.dir, fmt.Sprintf("logits_batch%d_bf16.f32", batch)), batch*br.Steps*br.Vocab)
				if err != nil {
					t.Fatal(err)
				}
				refLogits := func(b, i int) []float32 { o := (b*br.Steps + i) * br.Vocab; return lb[o : o+br.Vocab] }
				for _, sname := range strings.Split(envOr("MEGAPROOF_LLAMA_STRATEGIES", "round-robin,split2,dynamic"), ",") {
					t.Run(fmt.Sprintf("%s/b%d", sname, batch), func(t *testing.T) {
						cfg, opt, err := lr.config(sname, batch)
						if err != nil {
							t.Fatal(err)
						}
						if cfg.Fuse && batch*lr.model.Hidden > llamagen.FusedNormElems {
							t.Skipf("not fused at batch %d (batch × hidden %d > %d)", batch, batch*lr.model.Hidden, llamagen.FusedNormElems)
						}
						encs, heap, prep := decodePrograms(t, d, cfg, br.Steps, opt)
						g := &Generation{Heap: heap, Program: func(pos int) (*Encoded, error) { return encs[pos], nil }, Opt: opt, KeepLogits: func(int) bool { return true }}
						res, err := g.Run(context.Background(), 0, br.Steps, br.Firsts)
						if err != nil {
							t.Fatal(err)
						}
						r := BatchDecodeResult{Model: name, Strategy: sname, Weights: lr.weights, EmbedShift: lr.ref.EmbedShift, HeadFromEmbed: lr.ref.HeadEmbed, HeadRoll: lr.ref.HeadRoll,
							Batch: batch, Tasks: len(encs[br.Steps-1].prog.Tasks), Steps: br.Steps, First: br.Firsts[0], Firsts: br.Firsts, RefMinGap: minGap(br.Gaps), PrepareSeconds: prep.Seconds(), BoundBF16Rel: bound}
						var kern, wall []float64
						for _, st := range res {
							kern = append(kern, st.Kernel.Seconds()*1e3)
							wall = append(wall, st.Wall.Seconds()*1e3)
						}
						for b := 0; b < batch; b++ {
							first := -1
							for i, st := range res {
								if st.Out[b] != br.Tokens[b][i] {
									first = i
									break
								}
								ab, mb := maxErr(st.Logits[b], refLogits(b, i))
								r.BF16MaxAbs, r.BF16Rel = max(r.BF16MaxAbs, ab), max(r.BF16Rel, ab/mb)
							}
							r.FirstMismatch = append(r.FirstMismatch, first)
							if first < 0 {
								r.RowsMatching++
							} else {
								t.Logf("sequence %d: greedy token %d = %d, PyTorch bf16 %d (its top-2 gap there %.4g)", b, first, res[first].Out[b], br.Tokens[b][first], br.Gaps[b][first])
							}
						}
						r.TokensMatch = r.RowsMatching == batch
						r.KernelMedianMS, r.StepMedianMS = medianF(kern), medianF(wall)
						g.Force = func(pos int, _ []int32) []int32 {
							next := make([]int32, batch)
							for b := range next {
								next[b] = br.Tokens[b][pos]
							}
							return next
						}
						forced, err := g.Run(context.Background(), 0, br.Steps, br.Firsts)
						if err != nil {
							t.Fatal(err)
						}
						for i, st := range forced {
							for b := 0; b < batch; b++ {
								rb := refLogits(b, i)
								ab, mb := maxErr(st.Logits[b], rb)
								r.ForcedBF16Rel = max(r.ForcedBF16Rel, ab/mb)
								want := br.Tokens[b][i]
								switch o := st.Out[b]; {
								case o == want:
									r.ForcedEqual++
								case float64(rb[want]-rb[o]) <= ab:
									r.ForcedTies++
								default:
									r.ForcedOther++
									t.Errorf("teacher-forced sequence %d step %d: token %d, PyTorch %d, its logits %g vs %g (max error %g)", b, i, o, want, rb[o], rb[want], ab)
								}
							}
						}
						if max(r.BF16Rel, r.ForcedBF16Rel) > bound {
							t.Errorf("logit error above the bound: %.4g / %.4g > %.4g", r.BF16Rel, r.ForcedBF16Rel, bound)
						}
						if !r.TokensMatch && os.Getenv("MEGAPROOF_STRICT_TOKENS") != "" {
							t.Errorf("%d of %d sequences differ from PyTorch bf16's greedy tokens", batch-r.RowsMatching, batch)
						}
						t.Logf("%s %s batch %d (%s weights, %d tasks): %d/%d sequences' greedy tokens match (first mismatches %v); logits vs bf16 max abs %.4g (rel %.4g, forced %.4g, bound %.4g); teacher-forced: %d equal, %d ties, %d other; kernel median %.3f ms, step %.3f ms; prepare %.1f s",
							name, sname, batch, lr.weights, r.Tasks, r.RowsMatching, batch, r.FirstMismatch, r.BF16MaxAbs, r.BF16Rel, r.ForcedBF16Rel, bound, r.ForcedEqual, r.ForcedTies, r.ForcedOther, r.KernelMedianMS, r.StepMedianMS, r.PrepareSeconds)
						if outDir != "" {
							b, _ := json.MarshalIndent(r, "", " ")
							os.WriteFile(filepath.Join(outDir, fmt.Sprintf("decode-batch-%s-%s-b%d.json", name, sname, batch)), b, 0o644)
						}
					})
				}
			}
		})
	}
}

// envInts is the comma-separated integers of environment variable key, or
// of def when it is unset.
func envInts(t *testing.T, key, def string) []int {
	t.Helper()
	var out []int
	for _, f := range strings.Split(envOr(key, def), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		out = append(out, n)
	}
	return out
}

// openedRef is a model's reference from scripts/gpu/llama_ref.py with the
// weights it was computed on: the seeded init it names, or the directory's
// model.safetensors when there is one.
type openedRef struct {
	dir     string
	ref     llamaRef
	model   llamagen.Model
	tile    int
	tensors Tensors
	weights string // "seeded" or "safetensors"
}

// openLlamaRef reads DIR/MODEL/ref.json; the safetensors file, if any, is
// closed when t ends.
func openLlamaRef(t *testing.T, refDir, name string) *openedRef {
	t.Helper()
	dir := filepath.Join(refDir, name)
	js, err := os.ReadFile(filepath.Join(dir, "ref.json"))
	if err != nil {
		t.Fatal(err)
	}
	r := &openedRef{dir: dir, weights: "seeded"}
	if err := json.Unmarshal(js, &r.ref); err != nil {
		t.Fatal(err)
	}
	if r.model, err = llamagen.LookupModel(name); err != nil {
		t.Fatal(err)
	}
	ref, m := r.ref, r.model
	r.tile = 128
	if m.Hidden%128 != 0 {
		r.tile = 64
	}
	r.tile = tileOr(r.tile)
	r.tensors = SeededTensors{Seed: ref.Seed, Untied: !m.Tied || ref.Untie, EmbedShift: ref.EmbedShift, HeadShift: ref.HeadShift, HeadFromEmbed: ref.HeadEmbed, HeadRoll: ref.HeadRoll * m.Hidden}
	if st, err := OpenSafetensors(filepath.Join(dir, "model.safetensors")); err == nil {
		t.Cleanup(func() { st.Close() })
		r.tensors, r.weights = st, "safetensors"
	}
	return r
}

// config is the decode tests' llamagen configuration of strategy sname and
// batch, on the reference's weights.
func (r *openedRef) config(sname string, batch int) (llamagen.Config, Options, error) {
	h200, _ := llamagen.LookupTarget("h200")
	cfg := llamagen.Config{Model: r.model, Target: h200, Tile: r.tile, MaxSeq: 1024, PosSet: true, Numeric: true, Batch: batch}
	if err := strategyConfig(&cfg, sname); err != nil {
		return cfg, Options{}, err
	}
	cfg.AutoTile = autoTile()
	opt := Options{Init: LlamaSource(r.tensors), BlockThreads: blockThreads(), Timeout: 5 * time.Second, PrefetchBytes: prefetchBytes()}
	return cfg, opt, nil
}

// decodePrograms generates, verifies and encodes the programs of positions
// 0..steps-1 and loads them into a new resident heap (closed when t ends).
func decodePrograms(t *testing.T, d *Device, cfg llamagen.Config, steps int, opt Options) ([]*Encoded, *Resident, time.Duration) {
	t.Helper()
	t0 := time.Now()
	encs, err := prepareSteps(cfg, steps, opt)
	if err != nil {
		t.Fatal(err)
	}
	prep := time.Since(t0)
	heap, err := d.NewResident(encs[0], opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { heap.Close() })
	for _, e := range encs {
		if err := heap.Load(e, opt); err != nil {
			t.Fatal(err)
		}
	}
	return encs, heap, prep
}

// strategyConfig sets the strategy that name gives: round-robin, dynamic,
// barrier, splitN (round-robin with N-way split-KV attention) or splitNcM
// (at most N chunks of at least M rows: llamagen's SplitChunk), each
// optionally prefixed "fused-" (llamagen's Fuse; "fused" alone is
// fused-round-robin) or "fusedc-" (Fuse and FuseCombine: the split-KV
// combine in the o tiles), the whole optionally prefixed "rows-"
// (llamagen's RowAttention).
func strategyConfig(cfg *llamagen.Config, name string) error {
	if rest, ok := strings.CutPrefix(name, "rows-"); ok {
		cfg.RowAttention, name = true, rest
	}
	if name == "fused" {
		name = "fused-round-robin"
	}
	if rest, ok := strings.CutPrefix(name, "fused-"); ok {
		cfg.Fuse, name = true, rest
	} else if rest, ok := strings.CutPrefix(name, "fusedc-"); ok {
		cfg.Fuse, cfg.FuseCombine, name = true, true, rest
	}
	switch {
	case name == "round-robin":
		cfg.Strategy = llamagen.RoundRobin
	case name == "dynamic":
		cfg.Strategy = llamagen.Dynamic
	case name == "barrier":
		cfg.Strategy = llamagen.Barrier
	case strings.HasPrefix(name, "split"):
		// splitN, or splitNcM: at most N chunks of at least M rows.
		ns, cs, _ := strings.Cut(name[len("split"):], "c")
		n, err := strconv.Atoi(ns)
		if err != nil || n < 2 {
			return fmt.Errorf("strategy %q", name)
		}
		cfg.Strategy, cfg.Splits = llamagen.RoundRobin, n
		if cs != "" {
			if cfg.SplitChunk, err = strconv.Atoi(cs); err != nil || cfg.SplitChunk < 1 {
				return fmt.Errorf("strategy %q", name)
			}
		}
	default:
		return fmt.Errorf("strategy %q", name)
	}
	return nil
}

// autoTile reports whether MEGAPROOF_TILE is "auto" (the default):
// llamagen's AutoTile; a number sets the fixed tile instead (tileOr).
func autoTile() bool { return envOr("MEGAPROOF_TILE", "auto") == "auto" }

// tileOr is MEGAPROOF_TILE when it is a number, else def.
func tileOr(def int) int {
	if n, err := strconv.Atoi(os.Getenv("MEGAPROOF_TILE")); err == nil && n > 0 {
		return n
	}
	return def
}

// prefetchBytes is MEGAPROOF_PREFETCH in bytes (1: DefaultPrefetchBytes;
// unset, 0 or negative: off, the runner's default).
func prefetchBytes() int {
	n, _ := strconv.Atoi(os.Getenv("MEGAPROOF_PREFETCH"))
	if n == 1 {
		return DefaultPrefetchBytes
	}
	return n
}

// blockThreads is MEGAPROOF_BLOCK or 512: threads per interpreter block of
// the decode tests and benchmarks.
func blockThreads() int {
	n, err := strconv.Atoi(os.Getenv("MEGAPROOF_BLOCK"))
	if err != nil || n <= 0 {
		return 512
	}
	return n
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// prepareSteps generates, verifies and encodes the programs of positions
// from..n-1 (from: 0 unless given), in parallel.
func prepareSteps(cfg llamagen.Config, n int, opt Options, from ...int) ([]*Encoded, error) {
	encs := make([]*Encoded, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	lo := 0
	if len(from) > 0 {
		lo = from[0]
	}
	for pos := lo; pos < n; pos++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			c := cfg
			c.Pos = pos
			p, err := llamagen.Generate(c)
			if err == nil {
				encs[pos], err = Prepare(context.Background(), p, opt)
			}
			errs[pos] = err
		}()
	}
	wg.Wait()
	for pos, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("position %d: %w", pos, err)
		}
	}
	return encs, nil
}

func maxErr(got, want []float32) (maxAbs, maxRef float64) {
	for i := range want {
		maxAbs = max(maxAbs, math.Abs(float64(got[i]-want[i])))
		maxRef = max(maxRef, math.Abs(float64(want[i])))
	}
	return maxAbs, max(maxRef, 1e-30)
}

func medianF(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// BenchResult is one configuration of TestGPULlamaBench, written to
// MEGAPROOF_OUT/bench-<model>-<strategy>-b<batch>-p<pos>.json.
type BenchResult struct {
	Model, Strategy   string
	Tile              string // "auto" (llamagen's AutoTile) or the fixed tile
	PrefetchBytes     int    // the L2 prefetch budget (0: off)
	Threads           int    // threads per block
	Batch, Pos, Tasks int
	Steps             int     // timed steps (positions Pos+2 ...)
	ColdMS            float64 // the first step on a fresh program (its tables uploaded), wall
	WarmMS            float64 // the second step, wall
	MedianMS, P10MS   float64 // per-token wall time inside the generation loop
	P90MS, MaxMS      float64
	KernelMedianMS    float64
	PrepareSeconds    float64 // generate + verify + encode of all steps' programs
	VerifyMS          float64 // verify.Run of the first step's program alone
	LoadSeconds       float64 // upload of every step's tables before the loop
	ResidentSeconds   float64 // weight init and upload
	// NopKernelMS is the kernel median of the same programs with every
	// body replaced by nop (synchronization and dispatch alone), when
	// MEGAPROOF_BENCH_NOP is set.
	NopKernelMS         float64
	VerifiedBeforeTimed bool
}

// TestGPULlamaBench times greedy decoding inside the generation loop (token
// upload, the verified program's kernel, next-token download per step) at
// positions MEGAPROOF_BENCH_POS (default 128,1024,4096) and batches
// MEGAPROOF_BENCH_BATCH (default 1) for MEGAPROOF_LLAMA_MODELS and
// MEGAPROOF_LLAMA_STRATEGIES, on the seeded weights, with the KV cache
// rows below the position as the heap holds them (zeros; timing does not
// depend on the values). Correctness of the same kernel, model and
// strategy is TestGPULlamaDecode's. Opt-in: MEGAPROOF_BENCH_LLAMA=1.
func TestGPULlamaBench(t *testing.T) {
	if os.Getenv("MEGAPROOF_BENCH_LLAMA") == "" {
		t.Skip("MEGAPROOF_BENCH_LLAMA not set")
	}
	d := device(t)
	h200, _ := llamagen.LookupTarget("h200")
	outDir := os.Getenv("MEGAPROOF_OUT")
	const timed = 32
	for _, name := range strings.Split(envOr("MEGAPROOF_LLAMA_MODELS", "smollm2-135m"), ",") {
		m, err := llamagen.LookupModel(name)
		if err != nil {
			t.Fatal(err)
		}
		tile := 128
		if m.Hidden%128 != 0 {
			tile = 64
		}
		tile = tileOr(tile)
		for _, sname := range strings.Split(envOr("MEGAPROOF_LLAMA_STRATEGIES", "round-robin"), ",") {
			for _, batch := range envInts(t, "MEGAPROOF_BENCH_BATCH", "1") {
				cfg := llamagen.Config{Model: m, Target: h200, Tile: tile, AutoTile: autoTile(), MaxSeq: 8192, PosSet: true, Numeric: true, Batch: batch}
				if err := strategyConfig(&cfg, sname); err != nil {
					t.Fatal(err)
				}
				if cfg.Fuse && batch*m.Hidden > llamagen.FusedNormElems {
					t.Logf("%s %s batch %d: not fused (batch × hidden %d > %d)", name, sname, batch, batch*m.Hidden, llamagen.FusedNormElems)
					continue
				}
				opt := Options{Init: LlamaSource(SeededTensors{Seed: 1, Untied: !m.Tied}), BlockThreads: blockThreads(), Timeout: 5 * time.Second, PrefetchBytes: prefetchBytes()}
				var heap *Resident
				var resident time.Duration
				for _, pos := range envInts(t, "MEGAPROOF_BENCH_POS", "128,1024,4096") {
					t0 := time.Now()
					encs := make([]*Encoded, timed+2)
					c := cfg
					c.Pos = pos
					all, err := prepareSteps(c, pos+timed+2, opt, pos)
					if err != nil {
						t.Fatal(err)
					}
					copy(encs, all[pos:])
					prep := time.Since(t0)
					tv := time.Now()
					if err := gate(context.Background(), encs[0].prog, opt); err != nil {
						t.Fatal(err)
					}
					verifyMS := time.Since(tv).Seconds() * 1e3
					if heap == nil {
						t1 := time.Now()
						if heap, err = d.NewResident(encs[0], opt); err != nil {
							t.Fatal(err)
						}
						resident = time.Since(t1)
						defer heap.Close()
					}
					tl := time.Now()
					for _, e := range encs {
						if err := heap.Load(e, opt); err != nil {
							t.Fatal(err)
						}
					}
					load := time.Since(tl)
					g := &Generation{Heap: heap, Program: func(p int) (*Encoded, error) { return encs[p-pos], nil }, Opt: opt}
					first := make([]int32, batch)
					for b := range first {
						first[b] = int32(1 + b)
					}
					res, err := g.Run(context.Background(), pos, timed+2, first)
					if err != nil {
						t.Fatal(err)
					}
					var wall, kern []float64
					for _, st := range res[2:] {
						wall = append(wall, st.Wall.Seconds()*1e3)
						kern = append(kern, st.Kernel.Seconds()*1e3)
					}
					sort.Float64s(wall)
					tileName := strconv.Itoa(tile)
					if cfg.AutoTile {
						tileName = "auto"
					}
					r := BenchResult{Model: name, Strategy: sname, Tile: tileName, PrefetchBytes: opt.prefetch(), Threads: opt.threads(), VerifyMS: verifyMS, LoadSeconds: load.Seconds(),
						Batch: batch, Pos: pos, Tasks: len(encs[0].prog.Tasks), Steps: timed,
						ColdMS: res[0].Wall.Seconds() * 1e3, WarmMS: res[1].Wall.Seconds() * 1e3,
						MedianMS: wall[len(wall)/2], P10MS: wall[len(wall)/10], P90MS: wall[len(wall)*9/10], MaxMS: wall[len(wall)-1],
						KernelMedianMS: medianF(kern), PrepareSeconds: prep.Seconds(), ResidentSeconds: resident.Seconds(), VerifiedBeforeTimed: true}
					if os.Getenv("MEGAPROOF_BENCH_NOP") != "" {
						// The same schedules with empty bodies: what
						// synchronization and dispatch cost alone.
						var nk []float64
						nopt := opt
						nopt.Body = "nop"
						for i := 0; i < 10; i++ {
							ne, err := Prepare(context.Background(), encs[2+i].prog, nopt)
							if err != nil {
								t.Fatal(err)
							}
							out, err := heap.Run(ne, nopt)
							if err != nil {
								t.Fatal(err)
							}
							heap.Forget(ne)
							nk = append(nk, out.Kernel.Seconds()*1e3)
						}
						r.NopKernelMS = medianF(nk)
					}
					t.Logf("%s %s tile %s prefetch %d b%d p%d (%d tasks): per token median %.3f ms [p10 %.3f, p90 %.3f, max %.3f], kernel %.3f ms (nop bodies %.3f); cold %.3f ms, warm %.3f ms; prepare %.1f s, verify %.0f ms, load %.2f s",
						name, sname, r.Tile, r.PrefetchBytes, batch, pos, r.Tasks, r.MedianMS, r.P10MS, r.P90MS, r.MaxMS, r.KernelMedianMS, r.NopKernelMS, r.ColdMS, r.WarmMS, r.PrepareSeconds, r.VerifyMS, r.LoadSeconds)
					for _, e := range encs {
						heap.Forget(e)
					}
					if outDir != "" {
						b, _ := json.MarshalIndent(r, "", " ")
						os.WriteFile(filepath.Join(outDir, fmt.Sprintf("bench-%s-%s-t%s-f%d-b%d-p%d.json", name, sname, r.Tile, r.PrefetchBytes, batch, pos)), b, 0o644)
					}
				}
			}
		}
	}
}

// ProfileKind is one op kind's line of TestGPULlamaProfile: how long its
// bodies took, at what rate they read their weights and state, how long
// their workers waited before them, and how much of each layer's critical
// path it holds.
type ProfileKind struct {
	Kind                  string
	Tasks                 int
	BodyMeanUS, BodyMaxUS float64
	BodySumUS             float64
	WaitMeanUS            float64
	ReadBytesMean         float64 // declared reads of weights and state (an embed declares its whole table)
	GBPerSecond           float64 // mean read bytes over mean body time
	CriticalMeanUS        float64 // per layer: end of the kind's last task minus end of the previous kind's
}

// ProfileResult is one configuration of TestGPULlamaProfile.
type ProfileResult struct {
	Model, Strategy, Tile string
	PrefetchBytes         int
	Pos, Tasks            int
	KernelMS              float64
	BusyFraction          float64 // body time over workers × kernel time
	Kinds                 []ProfileKind
}

var taskKindRE = regexp.MustCompile(`^(?:L\d+\.)?(.*?)(?:\.[thg]\d+)?(?:\.s\d+)?(?:\.b\d+)?$`)

// TestGPULlamaProfile traces one decode step (Options.Trace) at position
// MEGAPROOF_BENCH_POS (default 1024) for MEGAPROOF_LLAMA_MODELS and
// MEGAPROOF_LLAMA_STRATEGIES after two untraced warm-up steps, and reports
// per op kind the body times, the read rate, the waits and the share of
// each layer's critical path. Opt-in: MEGAPROOF_PROFILE=1.
func TestGPULlamaProfile(t *testing.T) {
	if os.Getenv("MEGAPROOF_PROFILE") == "" {
		t.Skip("MEGAPROOF_PROFILE not set")
	}
	d := device(t)
	h200, _ := llamagen.LookupTarget("h200")
	outDir := os.Getenv("MEGAPROOF_OUT")
	pos, _ := strconv.Atoi(envOr("MEGAPROOF_BENCH_POS", "1024"))
	for _, name := range strings.Split(envOr("MEGAPROOF_LLAMA_MODELS", "smollm2-135m"), ",") {
		m, err := llamagen.LookupModel(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, sname := range strings.Split(envOr("MEGAPROOF_LLAMA_STRATEGIES", "round-robin"), ",") {
			cfg := llamagen.Config{Model: m, Target: h200, Tile: tileOr(128), AutoTile: autoTile(), MaxSeq: 8192, PosSet: true, Numeric: true, Batch: 1, Pos: pos}
			if err := strategyConfig(&cfg, sname); err != nil {
				t.Fatal(err)
			}
			opt := Options{Init: LlamaSource(SeededTensors{Seed: 1, Untied: !m.Tied}), BlockThreads: blockThreads(), Timeout: 5 * time.Second, PrefetchBytes: prefetchBytes()}
			all, err := prepareSteps(cfg, pos+3, opt, pos)
			if err != nil {
				t.Fatal(err)
			}
			heap, err := d.NewResident(all[pos], opt)
			if err != nil {
				t.Fatal(err)
			}
			g := &Generation{Heap: heap, Program: func(p int) (*Encoded, error) { return all[p], nil }, Opt: opt}
			if _, err := g.Run(context.Background(), pos, 2, []int32{1}); err != nil {
				t.Fatal(err)
			}
			topt := opt
			topt.Trace = true
			e := all[pos+2]
			out, err := heap.Run(e, topt)
			heap.Close()
			if err != nil {
				t.Fatal(err)
			}
			r := profile(e, out)
			r.Model, r.Strategy, r.Tile, r.Pos, r.PrefetchBytes = name, sname, envOr("MEGAPROOF_TILE", "auto"), pos, opt.prefetch()
			t.Logf("%s %s tile %s prefetch %d p%d: %d tasks, kernel %.3f ms (traced), workers busy %.0f%%", name, sname, r.Tile, r.PrefetchBytes, pos, r.Tasks, r.KernelMS, 100*r.BusyFraction)
			for _, k := range r.Kinds {
				t.Logf("  %-8s %5d tasks  body mean %7.2f µs max %7.2f  sum %8.0f µs  wait mean %6.2f µs  read %8.0f B at %6.1f GB/s  critical %6.2f µs/layer",
					k.Kind, k.Tasks, k.BodyMeanUS, k.BodyMaxUS, k.BodySumUS, k.WaitMeanUS, k.ReadBytesMean, k.GBPerSecond, k.CriticalMeanUS)
			}
			if outDir != "" {
				b, _ := json.MarshalIndent(r, "", " ")
				os.WriteFile(filepath.Join(outDir, fmt.Sprintf("profile-%s-%s-f%d-p%d.json", name, sname, r.PrefetchBytes, pos)), b, 0o644)
			}
		}
	}
}

// profile aggregates a traced run by op kind.
func profile(e *Encoded, out *Outcome) ProfileResult {
	p := e.prog
	r := ProfileResult{Tasks: len(p.Tasks), KernelMS: out.Kernel.Seconds() * 1e3}
	type agg struct {
		n                     int
		sum, max, wait, bytes float64
		crit                  float64
		layers                int
	}
	aggs := map[string]*agg{}
	var order []string
	layerEnd := map[int]map[string]int64{} // layer -> kind -> last end
	var busy float64
	var t0, t1 int64 = math.MaxInt64, 0
	for i, tt := range out.Trace {
		if tt.Worker < 0 {
			continue
		}
		task := &p.Tasks[i]
		kind := taskKindRE.FindStringSubmatch(task.Name)[1]
		a := aggs[kind]
		if a == nil {
			a = &agg{}
			aggs[kind] = a
			order = append(order, kind)
		}
		body := float64(tt.End-tt.Start) / 1e3
		a.n++
		a.sum += body
		a.max = max(a.max, body)
		// A task with no sync steps before its body (the first of a
		// queue) has no wait stamp.
		wait := tt.Start
		if tt.Wait > 0 && tt.Wait <= tt.Start {
			wait = tt.Wait
		}
		a.wait += float64(tt.Start-wait) / 1e3
		for _, rd := range task.Reads {
			k := p.Buffers[rd.Buffer].Kind
			if k == schedule.KindWeight || k == schedule.KindState {
				a.bytes += float64(rd.Length * rd.RowCount())
			}
		}
		busy += body
		t0, t1 = min(t0, wait), max(t1, tt.End)
		layer := -1
		if strings.HasPrefix(task.Name, "L") {
			fmt.Sscanf(task.Name, "L%d.", &layer)
		}
		if layerEnd[layer] == nil {
			layerEnd[layer] = map[string]int64{}
		}
		layerEnd[layer][kind] = max(layerEnd[layer][kind], tt.End)
	}
	// Critical path per layer: kinds ordered by their last end; each
	// holds the time from the previous kind's last end to its own.
	for l, ends := range layerEnd {
		if l < 0 {
			continue
		}
		ks := make([]string, 0, len(ends))
		for k := range ends {
			ks = append(ks, k)
		}
		sort.Slice(ks, func(i, j int) bool { return ends[ks[i]] < ends[ks[j]] })
		prev := int64(0)
		if pe, ok := layerEnd[l-1]; ok {
			for _, v := range pe {
				prev = max(prev, v)
			}
		} else if pe, ok := layerEnd[-1]; ok {
			prev = pe["embed"]
		}
		for _, k := range ks {
			if prev > 0 {
				// A kind whose last task ends before the previous layer's
				// last end overlaps that layer and holds none of the path.
				aggs[k].crit += float64(max(ends[k]-prev, 0)) / 1e3
				aggs[k].layers++
			}
			prev = max(prev, ends[k])
		}
	}
	for _, k := range order {
		a := aggs[k]
		pk := ProfileKind{Kind: k, Tasks: a.n, BodyMeanUS: a.sum / float64(a.n), BodyMaxUS: a.max, BodySumUS: a.sum,
			WaitMeanUS: a.wait / float64(a.n), ReadBytesMean: a.bytes / float64(a.n)}
		if pk.BodyMeanUS > 0 {
			pk.GBPerSecond = pk.ReadBytesMean / (pk.BodyMeanUS * 1e3)
		}
		if a.layers > 0 {
			pk.CriticalMeanUS = a.crit / float64(a.layers)
		}
		r.Kinds = append(r.Kinds, pk)
	}
	if t1 > t0 {
		r.BusyFraction = busy * 1e3 / (float64(e.Workers) * float64(t1-t0))
	}
	return r
}
