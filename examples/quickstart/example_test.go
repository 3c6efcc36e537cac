package quickstart_test

import (
	"context"
	"fmt"

	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify"
)

// build makes a three-task pipeline on three workers: load writes x, scale
// waits for it and writes y, store waits for scale and writes the output.
// With wait false, scale does not wait for load.
func build(wait bool) (*schedule.Program, error) {
	b := schedule.NewBuilder("quickstart", schedule.Launch{Target: "H200", SMs: 132, PerSM: 1, Workers: 3})
	in := b.Buffer("in", schedule.KindInput, 1024)
	x := b.Buffer("x", schedule.KindScratch, 1024)
	y := b.Buffer("y", schedule.KindScratch, 1024)
	out := b.Buffer("out", schedule.KindOutput, 1024)
	loaded, scaled := b.Counter("loaded"), b.Counter("scaled")

	b.Task("load").On(0).Op("copy").Read(in, 0, 1024).Write(x, 0, 1024).Signal(loaded, 1)
	scale := b.Task("scale").On(1).Op("scale")
	if wait {
		scale.Wait(loaded, 1)
	}
	scale.Read(x, 0, 1024).Write(y, 0, 1024).Signal(scaled, 1)
	b.Task("store").On(2).Op("copy").Wait(scaled, 1).Read(y, 0, 1024).Write(out, 0, 1024)
	return b.Build()
}

// Verify a correct schedule, then one with a dropped wait, and print the
// first finding with the interleaving that exhibits it.
func Example() {
	good, err := build(true)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("good:", verify.Program(good))

	bad, err := build(false)
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := verify.Run(context.Background(), bad, verify.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("bad:", r.Verdict)
	f := r.Findings[0]
	fmt.Println(f.Code+":", f.Message)
	form := schedule.Lower(bad)
	for _, ev := range f.Witness {
		op := form.Threads[ev.Thread].Ops[ev.Step]
		fmt.Printf("  %s: %s\n", form.ThreadName(bad, int(ev.Thread)), bad.Describe(op))
	}
	fmt.Println("replays:", schedule.CheckWitness(bad, f.Code, f.Tasks, f.Witness) == nil)
	// Output:
	// good: <nil>
	// bad: unsafe
	// race.raw: tasks "load" (worker 0) and "scale" (worker 1) access overlapping bytes and neither must finish before the other starts
	//   worker 0: begin (task "load")
	//   worker 1: begin (task "scale")
	// replays: true
}
