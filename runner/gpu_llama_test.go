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
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/megaproof/megaproof/examples/llama/llamagen"
)

// TestGPUNumericOps runs one task of every numeric op, drawn from llamagen
// programs of small models (head_dim 32, 64 and 128; batch 1, 2 and 3;
// split-KV; the lm head's fp32 tiles) plus a GEMV whose k is not a multiple
// of 8 (the scalar path), at block sizes 32 to 1024, and compares each
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
		for _, threads := range []int{32, 128, 256, 1024} {
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
	First      int32     `json:"first"`
	Steps      int       `json:"steps"`
	Vocab      int       `json:"vocab"`
	TokensBF16 []int32   `json:"tokens_bf16"`
	TokensFP32 []int32   `json:"tokens_fp32"`
	Gaps       []float64 `json:"top2_gap_bf16"`
	Attn       string    `json:"attn_implementation"`
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
	Tasks, Steps             int
	TokensMatch              bool
	FirstMismatch            int // -1 when all match
	Tokens, RefTokens        []int32
	// Logit errors over the steps before the first mismatch: max |ours −
	// ref| and that over max |ref|, against the bf16 and the fp32 model.
	BF16MaxAbs, BF16Rel, FP32MaxAbs, FP32Rel float64
	// Step0 errors (position 0) against both.
	Step0BF16MaxAbs, Step0FP32MaxAbs float64
	KernelMedianMS, StepMedianMS     float64
	PrepareSeconds                   float64
}

// Bounds of TestGPULlamaDecode: the largest logit error, relative to the
// largest reference logit of the step, against Hugging Face in bf16 and
// in fp32.
const (
	boundRelBF16 = 0.03
	boundRelFP32 = 0.05
)

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
			dir := filepath.Join(refDir, name)
			js, err := os.ReadFile(filepath.Join(dir, "ref.json"))
			if err != nil {
				t.Fatal(err)
			}
			var ref llamaRef
			if err := json.Unmarshal(js, &ref); err != nil {
				t.Fatal(err)
			}
			lb, err := readF32(filepath.Join(dir, "logits_bf16.f32"), ref.Steps*ref.Vocab)
			if err != nil {
				t.Fatal(err)
			}
			lf, err := readF32(filepath.Join(dir, "logits_fp32.f32"), ref.Steps*ref.Vocab)
			if err != nil {
				t.Fatal(err)
			}
			m, err := llamagen.LookupModel(name)
			if err != nil {
				t.Fatal(err)
			}
			h200, _ := llamagen.LookupTarget("h200")
			tile := 128
			if m.Hidden%128 != 0 {
				tile = 64
			}
			var ts Tensors = SeededTensors{Seed: ref.Seed, Untied: !m.Tied}
			weights := "seeded"
			if st, err := OpenSafetensors(filepath.Join(dir, "model.safetensors")); err == nil {
				defer st.Close()
				ts, weights = st, "safetensors"
			}
			steps := ref.Steps
			for _, sname := range strategies {
				t.Run(sname, func(t *testing.T) {
					cfg := llamagen.Config{Model: m, Target: h200, Tile: tile, MaxSeq: 1024, PosSet: true, Numeric: true}
					switch sname {
					case "round-robin":
						cfg.Strategy = llamagen.RoundRobin
					case "split2":
						cfg.Strategy, cfg.Splits = llamagen.RoundRobin, 2
					case "dynamic":
						cfg.Strategy = llamagen.Dynamic
					case "barrier":
						cfg.Strategy = llamagen.Barrier
					default:
						t.Fatalf("strategy %q", sname)
					}
					opt := Options{Init: LlamaSource(ts), BlockThreads: 256, Timeout: 5 * time.Second}
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
					defer heap.Close()
					g := &Generation{Heap: heap, Program: func(pos int) (*Encoded, error) { return encs[pos], nil }, Opt: opt, KeepLogits: func(int) bool { return true }}
					res, err := g.Run(context.Background(), 0, steps, []int32{ref.First})
					if err != nil {
						t.Fatal(err)
					}
					r := DecodeResult{Model: name, Strategy: sname, Weights: weights, Tasks: len(encs[steps-1].prog.Tasks), Steps: steps, FirstMismatch: -1, RefTokens: ref.TokensBF16[:steps], PrepareSeconds: prep.Seconds()}
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
					t.Logf("%s %s (%s weights, %d tasks): tokens match %v (first mismatch %d); logits vs bf16 max abs %.4g (rel %.4g), vs fp32 %.4g (rel %.4g); step 0: %.4g / %.4g; kernel median %.3f ms, step %.3f ms; prepare %.1f s",
						name, sname, weights, r.Tasks, r.TokensMatch, r.FirstMismatch, r.BF16MaxAbs, r.BF16Rel, r.FP32MaxAbs, r.FP32Rel, r.Step0BF16MaxAbs, r.Step0FP32MaxAbs, r.KernelMedianMS, r.StepMedianMS, r.PrepareSeconds)
					if !r.TokensMatch {
						i := r.FirstMismatch
						t.Errorf("token %d = %d, PyTorch bf16 %d (its top-2 gap there %.4g); ours %v, want %v", i, r.Tokens[i], ref.TokensBF16[i], ref.Gaps[i], r.Tokens, r.RefTokens)
					}
					if r.BF16Rel > boundRelBF16 || r.FP32Rel > boundRelFP32 {
						t.Errorf("logit error above the bound: vs bf16 %.4g > %g or vs fp32 %.4g > %g", r.BF16Rel, boundRelBF16, r.FP32Rel, boundRelFP32)
					}
					if outDir != "" {
						b, _ := json.MarshalIndent(r, "", " ")
						os.WriteFile(filepath.Join(outDir, fmt.Sprintf("decode-%s-%s.json", name, sname)), b, 0o644)
					}
				})
			}
		})
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// prepareSteps generates, verifies and encodes the programs of positions
// 0..n-1, in parallel.
func prepareSteps(cfg llamagen.Config, n int, opt Options) ([]*Encoded, error) {
	encs := make([]*Encoded, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for pos := 0; pos < n; pos++ {
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
