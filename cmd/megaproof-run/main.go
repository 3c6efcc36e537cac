// Command megaproof-run generates a Llama decode schedule for every
// position, verifies each one, runs the verified megakernel on the GPU to
// decode greedily, checks the tokens against a reference and times every
// step inside the generation loop:
//
//	megaproof-run -model llama-3.2-1b -target h200 [-weights FILE] -tokens 64 [-ref DIR/MODEL/ref.json]
//
// With -batch B it decodes B sequences together, sequence r from token
// -first + 97 r (as scripts/gpu/llama_ref.py --batches does; -ref then
// names its batch-B.json); -rows gives each sequence its own attention
// tasks (llamagen's RowAttention), and -splits with -split-chunk picks
// split-KV attention of at most N chunks of at least M rows, so that every
// strategy of docs/GPU.md's decode matrix can be run (its fastest at batch
// 1: -fuse -splits 8 -split-chunk 256).
//
// Weights come from a Hugging Face safetensors file (-weights) or from the
// seeded initialization shared with scripts/gpu/llama_ref.py (-seed). A
// schedule that verify does not call safe is refused before anything runs
// (exit status 1); -fault injects one of llamagen's unsafe edits to show
// it. The exit status is 0 when every step ran (and the tokens equal the
// reference's, with -ref), 1 when a schedule was refused or the tokens
// differ, 2 on usage or setup errors.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/megaproof/megaproof/examples/llama/llamagen"
	"github.com/megaproof/megaproof/runner"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("megaproof-run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		model    = fs.String("model", "smollm2-135m", "model shape (llamagen)")
		target   = fs.String("target", "h200", "GPU the schedule is laid out for")
		strategy = fs.String("strategy", "round-robin", "round-robin, balanced, dynamic or barrier")
		splits   = fs.Int("splits", 1, "split-KV chunks per head")
		chunk    = fs.Int("split-chunk", 0, "with -splits N: at most N chunks of at least this many KV rows (llamagen's SplitChunk; 0: always N)")
		batch    = fs.Int("batch", 1, "sequences decoded together; sequence r starts from token -first + 97 r")
		rows     = fs.Bool("rows", false, "attention per sequence at -batch > 1 (llamagen's RowAttention)")
		fuse     = fs.Bool("fuse", false, "fused stages: norms, residual adds, SiLU and RoPE with the KV append inside the GEMVs and one task (llamagen's Fuse)")
		tile     = fs.Int("tile", 0, "output columns per GEMV tile (0: chosen per GEMV for the target, llamagen's AutoTile)")
		weights  = fs.String("weights", "", "Hugging Face safetensors `FILE` (default: the seeded init)")
		seed     = fs.Uint64("seed", 1, "seed of the seeded init")
		eshift   = fs.Int("embed-shift", 0, "seeded init: embedding scaled by 2^N (SeededTensors.EmbedShift)")
		hembed   = fs.Bool("head-from-embed", false, "seeded init: an untied lm head equal to the embedding")
		hroll    = fs.Int("head-roll", 0, "seeded init, with -head-from-embed: lm head row j is embedding row j+N (SeededTensors.HeadRoll)")
		untie    = fs.Bool("untie", false, "seeded init: an lm head separate from the embedding for a tied shape")
		tokens   = fs.Int("tokens", 64, "tokens to decode from position 0")
		first    = fs.Int("first", 1, "token id at position 0")
		ref      = fs.String("ref", "", "reference `ref.json` of scripts/gpu/llama_ref.py to compare the tokens with")
		threads  = fs.Int("threads", 512, "threads per interpreter block")
		fault    = fs.String("fault", "", "inject a llamagen fault (e.g. drop-wait) into every schedule: it must be refused")
	)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(format string, a ...any) int { fmt.Fprintf(stderr, "megaproof-run: "+format+"\n", a...); return 2 }
	m, err := llamagen.LookupModel(*model)
	if err != nil {
		return fail("%v", err)
	}
	tg, err := llamagen.LookupTarget(*target)
	if err != nil {
		return fail("%v", err)
	}
	st, err := llamagen.ParseStrategy(*strategy)
	if err != nil {
		return fail("%v", err)
	}
	if *tokens < 1 || *tokens >= 1024 {
		return fail("-tokens %d: want 1..1023", *tokens)
	}
	if *batch < 1 || *batch > 64 {
		return fail("-batch %d: want 1..64", *batch)
	}
	if *chunk < 0 {
		return fail("-split-chunk %d: want 0 or more", *chunk)
	}
	firsts := make([]int32, *batch)
	for r := range firsts {
		if firsts[r] = int32(*first + 97*r); *first < 0 || int(firsts[r]) >= m.Vocab {
			return fail("-first %d with -batch %d: sequence %d would start from token %d, outside the vocabulary of %d", *first, *batch, r, firsts[r], m.Vocab)
		}
	}
	var want [][]int32 // the reference's tokens, read before anything runs
	if *ref != "" {
		if want, err = readRef(*ref, firsts, *tokens); err != nil {
			return fail("%v", err)
		}
	}
	cfg := llamagen.Config{Model: m, Target: tg, Strategy: st, Splits: *splits, SplitChunk: *chunk, Tile: *tile, AutoTile: *tile == 0, MaxSeq: 1024, PosSet: true, Numeric: true, Fuse: *fuse,
		Batch: *batch, RowAttention: *rows}
	var ts runner.Tensors = runner.SeededTensors{Seed: *seed, Untied: !m.Tied || *untie, EmbedShift: *eshift, HeadFromEmbed: *hembed, HeadRoll: *hroll * m.Hidden}
	wname := fmt.Sprintf("seeded init (seed %d, embedding ×2^%d, lm head = embedding %v rolled %d rows, untied %v)", *seed, *eshift, *hembed, *hroll, !m.Tied || *untie)
	if *weights != "" {
		f, err := runner.OpenSafetensors(*weights)
		if err != nil {
			return fail("%v", err)
		}
		defer f.Close()
		ts, wname = f, *weights
	}
	opt := runner.Options{Init: runner.LlamaSource(ts), BlockThreads: *threads, Timeout: 10 * time.Second}
	var fl *llamagen.Fault
	for _, f := range llamagen.Faults() {
		if f.String() == *fault {
			fl = &f
		}
	}
	if *fault != "" && fl == nil {
		return fail("unknown fault %q", *fault)
	}

	// Generate and verify every step before anything runs.
	ctx := context.Background()
	t0 := time.Now()
	encs := make([]*runner.Encoded, *tokens)
	tasks := 0
	for pos := range encs {
		c := cfg
		c.Pos = pos
		p, err := llamagen.Generate(c)
		if err != nil {
			return fail("position %d: %v", pos, err)
		}
		if fl != nil {
			if p, err = llamagen.Twin(p, *fl); err != nil {
				return fail("position %d: %v", pos, err)
			}
		}
		tasks = max(tasks, len(p.Tasks))
		if encs[pos], err = runner.Prepare(ctx, p, opt); err != nil {
			if errors.Is(err, runner.ErrUnverified) {
				fmt.Fprintf(stderr, "megaproof-run: refused: the schedule of position %d (%s) is not verified safe: %v\n", pos, p.Name, err)
				return 1
			}
			return fail("position %d: %v", pos, err)
		}
	}
	prep := time.Since(t0)
	fmt.Fprintf(stdout, "model     %s (%d layers, hidden %d, vocab %d), weights %s\n", m.Name, m.Layers, m.Hidden, m.Vocab, wname)
	fmt.Fprintf(stdout, "schedule  %s, batch %d, up to %d tasks; %d positions generated and verified safe in %v\n", encs[0].Program().Name, *batch, tasks, len(encs), prep.Round(time.Millisecond))

	dev, err := runner.Open()
	if err != nil {
		return fail("%v", err)
	}
	defer dev.Close()
	info := dev.Info()
	t1 := time.Now()
	heap, err := dev.NewResident(encs[0], opt)
	if err != nil {
		return fail("%v", err)
	}
	defer heap.Close()
	up := time.Since(t1)
	t2 := time.Now()
	for _, e := range encs {
		if err := heap.Load(e, opt); err != nil {
			return fail("%v", err)
		}
	}
	fmt.Fprintf(stdout, "device    %s (%d SMs), driver %d; weights uploaded in %v, %d schedules' tables in %v\n", info.Name, info.SMs, info.Driver, up.Round(time.Millisecond), len(encs), time.Since(t2).Round(time.Millisecond))
	g := &runner.Generation{Heap: heap, Program: func(pos int) (*runner.Encoded, error) { return encs[pos], nil }, Opt: opt}
	steps, err := g.Run(ctx, 0, *tokens, firsts)
	if err != nil {
		return fail("%v", err)
	}
	out := make([][]int32, *batch) // out[r][i]: sequence r's token after step i
	var wall, kern []float64
	for _, s := range steps {
		for r := range out {
			out[r] = append(out[r], s.Out[r])
		}
		wall = append(wall, s.Wall.Seconds()*1e3)
		kern = append(kern, s.Kernel.Seconds()*1e3)
	}
	for r, o := range out {
		if *batch == 1 {
			fmt.Fprintf(stdout, "tokens    %v\n", o)
		} else {
			fmt.Fprintf(stdout, "tokens    sequence %d (from %d): %v\n", r, firsts[r], o)
		}
	}
	q := func(v []float64, f float64) float64 {
		s := append([]float64(nil), v...)
		sort.Float64s(s)
		return s[min(len(s)-1, int(f*float64(len(s))))]
	}
	warm := wall
	if len(warm) > 2 {
		warm = warm[2:]
	}
	fmt.Fprintf(stdout, "latency   per token in the loop (token upload, kernel, token download): first %.3f ms; then median %.3f ms, p10 %.3f, p90 %.3f, max %.3f; kernel median %.3f ms\n",
		wall[0], q(warm, 0.5), q(warm, 0.1), q(warm, 0.9), q(warm, 1), q(kern, 0.5))
	if want == nil {
		return 0
	}
	same, total, bad := 0, 0, 0
	for r, o := range out {
		firstDiff := -1
		for i := range o {
			if i < len(want[r]) && o[i] == want[r][i] {
				same++
			} else if firstDiff < 0 {
				firstDiff = i
			}
			total++
		}
		if firstDiff >= 0 {
			bad++
			fmt.Fprintf(stdout, "agreement sequence %d: first difference with PyTorch bf16 greedy at step %d\n", r, firstDiff)
		}
	}
	fmt.Fprintf(stdout, "agreement %d/%d tokens equal PyTorch bf16 greedy (%d of %d sequences exact)\n", same, total, len(out)-bad, len(out))
	if bad > 0 {
		return 1
	}
	return 0
}

// readRef reads the tokens of a reference of scripts/gpu/llama_ref.py, one
// list per sequence: ref.json (one sequence, from "first") at batch 1,
// batch-B.json (B sequences, from "firsts") otherwise. The reference must
// start from the same tokens and hold at least steps tokens per sequence.
func readRef(path string, firsts []int32, steps int) ([][]int32, error) {
	js, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r struct {
		Batch  int             `json:"batch"`
		First  *int32          `json:"first"`
		Firsts []int32         `json:"firsts"`
		Tokens json.RawMessage `json:"tokens_bf16"`
	}
	if err := json.Unmarshal(js, &r); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	var want [][]int32
	var from []int32
	if r.Batch == 0 {
		var t []int32
		if err := json.Unmarshal(r.Tokens, &t); err != nil || r.First == nil {
			return nil, fmt.Errorf("%s: not a reference of one sequence (tokens_bf16 a list, first a token)", path)
		}
		want, from = [][]int32{t}, []int32{*r.First}
	} else if err := json.Unmarshal(r.Tokens, &want); err != nil || len(want) != r.Batch || len(r.Firsts) != r.Batch {
		return nil, fmt.Errorf("%s: not a reference of %d sequences (tokens_bf16 a list per sequence, firsts a token per sequence)", path, r.Batch)
	} else {
		from = r.Firsts
	}
	if len(want) != len(firsts) {
		return nil, fmt.Errorf("%s holds %d sequences, the run decodes %d (-batch)", path, len(want), len(firsts))
	}
	for i := range firsts {
		if from[i] != firsts[i] {
			return nil, fmt.Errorf("%s: sequence %d starts from token %d, the run's from %d", path, i, from[i], firsts[i])
		}
		if len(want[i]) < steps {
			return nil, fmt.Errorf("%s: sequence %d holds %d tokens, the run decodes %d", path, i, len(want[i]), steps)
		}
	}
	return want, nil
}
