package llamagen_test

import (
	"context"
	"fmt"

	"github.com/megaproof/megaproof/examples/llama/llamagen"
	"github.com/megaproof/megaproof/verify"
)

// Generate a decode step of SmolLM2-135M for an L4 with split-KV attention
// and dynamic dispatch.
func ExampleGenerate() {
	m, _ := llamagen.LookupModel("smollm2-135m")
	t, _ := llamagen.LookupTarget("l4")
	p, err := llamagen.Generate(llamagen.Config{Model: m, Target: t, Strategy: llamagen.Dynamic, Tile: 128, Splits: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Name)
	fmt.Println(len(p.Tasks), "tasks,", p.Launch.Workers, "workers")
	// Output:
	// smollm2-135m/l4/dynamic/t128/b1/p511/split2
	// 3147 tasks, 116 workers
}

// Make a one-edit unsafe twin of a schedule.
func ExampleTwin() {
	p, _ := llamagen.Default()
	q, err := llamagen.Twin(p, llamagen.RaiseThreshold)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range q.Tasks {
		a, b := p.Tasks[i].Before, q.Tasks[i].Before
		if len(a) > 0 && a[0] != b[0] {
			fmt.Printf("%s waits on %s >= %d, was %d\n", q.Tasks[i].Name, q.Counters[b[0].Object].Name, b[0].Value, a[0].Value)
		}
	}
	fmt.Println(llamagen.RaiseThreshold.Codes())
	// Output:
	// L7.o.t0 waits on L7.att >= 33, was 32
	// [deadlock.unsatisfiable]
}

// Verify the default schedule and a twin with a dropped wait.
func ExampleDefault() {
	p, err := llamagen.Default()
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := verify.Run(context.Background(), p, verify.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Name, len(p.Tasks), r.Verdict)

	q, _ := llamagen.Twin(p, llamagen.DropWait)
	r, _ = verify.Run(context.Background(), q, verify.Config{})
	f := r.Findings[0]
	fmt.Println(r.Verdict, f.Code, q.Tasks[f.Tasks[0]].Name, q.Tasks[f.Tasks[1]].Name)
	// Output:
	// llama-3.2-1b/h200/round-robin/t256/b1/p511 3320 safe
	// unsafe race.raw L7.o.t0 L7.attn.h0
}
