package mpk_test

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/megaproof/megaproof/schedule/mpk"
)

// examples builds the four hand-derived example graphs of testdata with the
// Builder, from the layers they were derived from (MPK's register_mugraph
// at de8745d).
func examples() map[string]*mpk.Builder {
	op := func(t string, d int) mpk.Operand { return mpk.Operand{Tensor: t, Dim: d} }
	ops := func(o ...mpk.Operand) []mpk.Operand { return o }
	const bf16 = mpk.DTBF16
	out := map[string]*mpk.Builder{}

	b := mpk.NewBuilder()
	b.Tensor("x", bf16, 1, 1024)
	b.Tensor("w1", bf16, 512, 1024)
	b.Tensor("y", bf16, 1, 512)
	b.Tensor("w2", bf16, 256, 512)
	b.Tensor("z", bf16, 1, 256)
	b.Layer(mpk.TaskLinear, 4, ops(op("x", mpk.Whole), op("w1", 0)), ops(op("y", 1)))
	b.Layer(mpk.TaskLinear, 2, ops(op("y", mpk.Whole), op("w2", 0)), ops(op("z", 1)))
	out["ex1_reduce_edge.json"] = b

	b = mpk.NewBuilder()
	b.Tensor("in", bf16, 1, 512)
	b.Tensor("y", bf16, 1, 512)
	b.Tensor("z", bf16, 1, 256)
	b.Tensor("w3", bf16, 256, 256)
	b.Tensor("out", bf16, 1, 256)
	b.Layer(mpk.TaskIdentity, 4, ops(op("in", 1)), ops(op("y", 1)))
	b.Layer(mpk.TaskSiLUMul, 2, ops(op("y", 1)), ops(op("z", 1)))
	b.Layer(mpk.TaskLinear, 2, ops(op("z", mpk.Whole), op("w3", 0)), ops(op("out", 1)))
	out["ex2_chain_partitioned.json"] = b

	b = mpk.NewBuilder()
	for _, t := range []string{"in", "y", "q", "r"} {
		b.Tensor(t, bf16, 1, 256)
	}
	b.Layer(mpk.TaskIdentity, 2, ops(op("in", 1)), ops(op("y", 1)))
	b.Layer(mpk.TaskIdentity, 2, ops(op("y", 1)), ops(op("q", 1)))
	b.Layer(mpk.TaskIdentity, 2, ops(op("y", 1)), ops(op("r", 1)))
	out["ex3_fork_interleaved.json"] = b

	b = mpk.NewBuilder()
	for _, t := range []string{"in", "y", "z", "out"} {
		b.Tensor(t, bf16, 1, 256)
	}
	b.Tensor("w", bf16, 256, 256)
	b.Layer(mpk.TaskIdentity, 2, ops(op("in", 1)), ops(op("y", 1)))
	b.Layer(mpk.TaskIdentity, 2, ops(op("y", 1)), ops(op("z", 1)))
	b.Layer(mpk.TaskLinearWithResidual, 2, ops(op("y", mpk.Whole), op("w", 0), op("z", 1)), ops(op("out", 1)))
	out["ex4_stripped_residual_hazard.json"] = b
	return out
}

// TestBuilderExamples rebuilds the four hand-derived examples from
// their layers: the files come out byte for byte.
func TestBuilderExamples(t *testing.T) {
	for name, b := range examples() {
		t.Run(name, func(t *testing.T) {
			g, err := b.Graph()
			if err != nil {
				t.Fatal(err)
			}
			want := read(t, name)
			if got := mpk.Marshal(g); !bytes.Equal(got, want) {
				wg, _ := mpk.Parse(want)
				t.Errorf("built graph differs from %s:\n%s", name, cmp.Diff(wg, g))
			}
		})
	}
}
