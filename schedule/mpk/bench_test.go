package mpk_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/schedule/mpk"
	"github.com/megaproof/megaproof/verify"
)

// transformer builds an MPK graph shaped like MPK's Qwen3-8B decode step
// (36 layers, hidden 4096, 32 query and 8 KV heads of 128, intermediate
// 12288, vocabulary 151552): per layer an RMS norm, the fused QKV
// projection in 32-column tiles, attention per query head, the output
// projection with the residual, a second norm, the fused gate/up
// projection, SiLU·mul and the down projection with the residual. The
// residual edges are stripped (their layers are reachable through the
// norms, all-to-all events), and gate/up → SiLU is partitioned (192
// events of two producers each).
func transformer(layers int) (*mpk.Graph, error) {
	const bf16 = mpk.DTBF16
	const hidden, qkv, inter, vocab = 4096, 6144, 12288, 151552
	op := func(t string, d int) mpk.Operand { return mpk.Operand{Tensor: t, Dim: d} }
	ops := func(o ...mpk.Operand) []mpk.Operand { return o }
	b := mpk.NewBuilder()
	b.Tensor("tokens", mpk.DTInt64, 1, 1)
	b.Tensor("embed", bf16, vocab, hidden)
	b.Tensor("x0", bf16, 1, hidden)
	b.Layer(mpk.TaskEmbedding, 1, ops(op("tokens", mpk.Whole), op("embed", mpk.Whole)), ops(op("x0", mpk.Whole)))
	for l := range layers {
		p := func(s string) string { return fmt.Sprintf("l%d.%s", l, s) }
		x, next := fmt.Sprintf("x%d", l), fmt.Sprintf("x%d", l+1)
		b.Tensor(p("norm1.w"), bf16, 1, hidden)
		b.Tensor(p("n1"), bf16, 1, hidden)
		b.Tensor(p("qkv.w"), bf16, qkv, hidden)
		b.Tensor(p("qkv"), bf16, 1, qkv)
		b.Tensor(p("kcache"), bf16, 8, 4096, 128)
		b.Tensor(p("vcache"), bf16, 8, 4096, 128)
		b.Tensor(p("attn"), bf16, 1, hidden)
		b.Tensor(p("o.w"), bf16, hidden, hidden)
		b.Tensor(p("h"), bf16, 1, hidden)
		b.Tensor(p("norm2.w"), bf16, 1, hidden)
		b.Tensor(p("n2"), bf16, 1, hidden)
		b.Tensor(p("gate_up.w"), bf16, 2*inter, hidden)
		b.Tensor(p("gate_up"), bf16, 1, 2*inter)
		b.Tensor(p("act"), bf16, 1, inter)
		b.Tensor(p("down.w"), bf16, hidden, inter)
		b.Tensor(next, bf16, 1, hidden)
		b.Layer(mpk.TaskRMSNorm, 1, ops(op(x, mpk.Whole), op(p("norm1.w"), mpk.Whole)), ops(op(p("n1"), mpk.Whole)))
		b.Layer(mpk.TaskLinear, 192, ops(op(p("n1"), mpk.Whole), op(p("qkv.w"), 0)), ops(op(p("qkv"), 1)))
		b.Layer(130, 32, ops(op(p("qkv"), mpk.Whole), op(p("kcache"), mpk.Whole), op(p("vcache"), mpk.Whole)), ops(op(p("attn"), 1)))
		b.Layer(mpk.TaskLinearWithResidual, 128, ops(op(p("attn"), mpk.Whole), op(p("o.w"), 0), op(x, 1)), ops(op(p("h"), 1)))
		b.Layer(mpk.TaskRMSNorm, 1, ops(op(p("h"), mpk.Whole), op(p("norm2.w"), mpk.Whole)), ops(op(p("n2"), mpk.Whole)))
		b.Layer(mpk.TaskLinear, 384, ops(op(p("n2"), mpk.Whole), op(p("gate_up.w"), 0)), ops(op(p("gate_up"), 1)))
		b.Layer(mpk.TaskSiLUMul, 192, ops(op(p("gate_up"), 1)), ops(op(p("act"), 1)))
		b.Layer(mpk.TaskLinearWithResidual, 128, ops(op(p("act"), mpk.Whole), op(p("down.w"), 0), op(p("h"), 1)), ops(op(next, 1)))
	}
	x := fmt.Sprintf("x%d", layers)
	b.Tensor("norm.w", bf16, 1, hidden)
	b.Tensor("nf", bf16, 1, hidden)
	b.Tensor("lm_head.w", bf16, vocab, hidden)
	b.Tensor("logits", bf16, 1, vocab)
	b.Layer(mpk.TaskRMSNorm, 1, ops(op(x, mpk.Whole), op("norm.w", mpk.Whole)), ops(op("nf", mpk.Whole)))
	b.Layer(mpk.TaskLinear, 128, ops(op("nf", mpk.Whole), op("lm_head.w", 0)), ops(op("logits", 1)))
	return b.Graph()
}

var writeGraph = flag.String("mpk.write", "", "write BenchmarkVerify's Qwen3-8B-shaped MPK graph to this `file`")

// BenchmarkVerify reads a Qwen3-8B-shaped MPK file (MPK's own layout) from
// disk and verifies it over the default two iterations: reading the file,
// parsing, mapping and every check.
func BenchmarkVerify(b *testing.B) {
	g, err := transformer(36)
	if err != nil {
		b.Fatal(err)
	}
	file := *writeGraph
	if file == "" {
		file = filepath.Join(b.TempDir(), "task_graph_rank0.json")
	}
	if err := os.WriteFile(file, mpk.Marshal(g), 0o644); err != nil {
		b.Fatal(err)
	}
	var tasks, size int
	for b.Loop() {
		data, err := os.ReadFile(file)
		if err != nil {
			b.Fatal(err)
		}
		size = len(data)
		p, err := mpk.Unmarshal(data)
		if err != nil {
			b.Fatal(err)
		}
		res, err := verify.Run(context.Background(), p, verify.Config{})
		if err != nil {
			b.Fatal(err)
		}
		if res.Verdict != verify.Safe {
			b.Fatalf("verdict %v: %v", res.Verdict, res.Findings[0].Message)
		}
		tasks = len(p.Tasks)
	}
	b.ReportMetric(float64(len(g.Tasks)), "mpk-tasks")
	b.ReportMetric(float64(len(g.Events)), "mpk-events")
	b.ReportMetric(float64(tasks), "program-tasks")
	b.ReportMetric(float64(size)/(1<<20), "file-MiB")
}

// BenchmarkParse reads the same file into a Graph only.
func BenchmarkParse(b *testing.B) {
	g, err := transformer(36)
	if err != nil {
		b.Fatal(err)
	}
	data := mpk.Marshal(g)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := mpk.Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompactOverflowWitness judges the counter-overflow witness of
// example 1 unrolled over 4,300 iterations (30,228 tasks; its queue
// counters overflow) in two forms that reach the same state: the steps
// one by one (about 224,000 events, as verify wrote it before witnesses
// had macro events) and one advance. It reports each form's JSON size;
// the two variants alternate within one run.
func BenchmarkCompactOverflowWitness(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "ex1_reduce_edge.json"))
	if err != nil {
		b.Fatal(err)
	}
	p, err := mpk.Options{Iterations: 4300}.Unmarshal(data)
	if err != nil {
		b.Fatal(err)
	}
	r, err := verify.Run(context.Background(), p, verify.Config{})
	if err != nil {
		b.Fatal(err)
	}
	var f *verify.Finding
	for i := range r.Findings {
		if r.Findings[i].Code == verify.CodeCounterOverflow {
			f = &r.Findings[i]
			break
		}
	}
	if f == nil || !slices.Equal(f.Witness, []schedule.Event{schedule.Advance()}) {
		b.Fatalf("want a counter-overflow witness of one advance: %+v", f)
	}
	st, err := schedule.Replay(p, f.Witness)
	if err != nil {
		b.Fatal(err)
	}
	forms := map[string][]schedule.Event{"steps": st.Trace(), "compact": f.Witness}
	for _, name := range []string{"steps", "compact"} {
		w := forms[name]
		b.Run(name, func(b *testing.B) {
			js, err := json.Marshal(w)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if err := schedule.CheckWitness(p, f.Code, f.Tasks, w); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(w)), "events")
			b.ReportMetric(float64(len(js)), "json-bytes")
		})
	}
}
