package runner_test

import (
	"context"
	"fmt"

	"github.com/megaproof/megaproof/examples/llama/llamagen"
	"github.com/megaproof/megaproof/runner"
	"github.com/megaproof/megaproof/schedule"
)

// The CPU reference gives the bytes a GPU run must reproduce.
func ExampleReference() {
	b := schedule.NewBuilder("handoff", schedule.Launch{SMs: 132, PerSM: 1, Workers: 2, Cooperative: true})
	x := b.Buffer("x", schedule.KindScratch, 4)
	y := b.Buffer("y", schedule.KindOutput, 4)
	ready := b.Counter("ready")
	b.Task("produce").On(0).Op("fill").Param("seed", 1).Write(x, 0, 4).Signal(ready, 1)
	b.Task("consume").On(1).Op("scale").Param("k", 1).Param("c", 1).Wait(ready, 1).Read(x, 0, 4).Write(y, 0, 4)
	p, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	bufs, err := runner.Reference(p)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("x % x\ny % x\n", bufs["x"], bufs["y"])
	// Output:
	// x b7 6b 90 64
	// y b8 6c 91 65
}

// Greedy decoding of a tiny Llama-shaped model with verified llamagen
// programs, on a host heap (the CPU reference; a device's Resident heap
// runs the same loop).
func ExampleGeneration() {
	m := llamagen.Model{Name: "tiny", Hidden: 64, Intermediate: 96, Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 32, Vocab: 200, Eps: 1e-5, Theta: 10000}
	cfg := llamagen.Config{Model: m, Target: llamagen.Target{Name: "toy", SMs: 4, PerSM: 1}, Tile: 32, MaxSeq: 16, PosSet: true, Numeric: true}
	opt := runner.Options{Init: runner.LlamaSource(runner.SeededTensors{Seed: 3, Untied: true})}
	prog := func(pos int) (*runner.Encoded, error) {
		c := cfg
		c.Pos = pos
		p, err := llamagen.Generate(c)
		if err != nil {
			return nil, err
		}
		return runner.Prepare(context.Background(), p, opt) // refuses programs verify does not call safe
	}
	e0, err := prog(0)
	if err != nil {
		fmt.Println(err)
		return
	}
	heap, err := runner.NewHostHeap(e0, opt)
	if err != nil {
		fmt.Println(err)
		return
	}
	g := &runner.Generation{Heap: heap, Program: prog, Opt: opt}
	steps, err := g.Run(context.Background(), 0, 4, []int32{7})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range steps {
		fmt.Printf("position %d: %d -> %d\n", s.Pos, s.In[0], s.Out[0])
	}
	// Output:
	// position 0: 7 -> 147
	// position 1: 147 -> 83
	// position 2: 83 -> 26
	// position 3: 26 -> 125
}
