package corpus_test

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/megaproof/megaproof/corpus"
	"github.com/megaproof/megaproof/mutate"
	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify"
)

// A downstream corpus: one program of one's own as the seed, a few
// operators, labels from the oracles, and a run against one's own checker
// (here verify, counting what it decides).
func ExampleGenerate() {
	b := schedule.NewBuilder("handoff", schedule.Launch{SMs: 2, PerSM: 1, Workers: 2, Cooperative: true})
	in := b.Buffer("in", schedule.KindInput, 64)
	mid := b.Buffer("mid", schedule.KindScratch, 64)
	out := b.Buffer("out", schedule.KindOutput, 64)
	ready := b.Counter("ready")
	b.Task("produce").On(0).Read(in, 0, 64).Write(mid, 0, 64).Signal(ready, 1)
	b.Task("consume").On(1).Wait(ready, 1).Read(mid, 0, 64).Write(out, 0, 64)
	p, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	recipe, err := corpus.RegisterProgram("example-handoff", p)
	if err != nil {
		fmt.Println(err)
		return
	}
	var ops []*mutate.Operator
	for _, name := range []string{"drop-wait", "relax-signal", "widen-oob"} {
		op, _ := mutate.Lookup(name)
		ops = append(ops, op)
	}
	ctx := context.Background()
	entries, _, err := corpus.Generate(ctx, []corpus.Seed{{ID: "mine-000", Recipe: recipe}}, corpus.GenerateConfig{Operators: ops})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range entries {
		fmt.Println(e.Operator, e.Site, e.Verdict, e.Codes, e.Tasks, e.Oracle)
	}
	var decided atomic.Int64 // RunWith calls the checker from several goroutines
	mine := func(ctx context.Context, p *schedule.Program) (*verify.Result, error) {
		decided.Add(1)
		return verify.Run(ctx, p, verify.Config{})
	}
	s, err := corpus.RunWith(ctx, entries[:1], mine, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("seed ok:", s.OK(), "decided:", decided.Load())
	s, err = corpus.RunWith(ctx, entries, corpus.VerifyChecker(verify.Config{}), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("ok:", s.OK(), "faulty:", s.Faulty, "safe:", s.Safe, "seeds:", s.Seeds)
	// Output:
	// seed 0 safe [] [] explore+defcheck+brute
	// drop-wait 0 unsafe [race.raw uninitialized-read] [] explore
	// relax-signal 0 unsafe [race.unsynchronized uninitialized-read] [] explore
	// widen-oob 0 unsafe [out-of-bounds] [0] explore
	// widen-oob 1 unsafe [out-of-bounds] [0] explore
	// widen-oob 2 unsafe [out-of-bounds uninitialized-read] [1] explore
	// seed ok: true decided: 1
	// ok: true faulty: 5 safe: 0 seeds: 1
}
