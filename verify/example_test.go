package verify_test

import (
	"context"
	"fmt"

	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify"
)

// A consumer that forgets to wait for its producer races with it; the
// witness replays to a state where both bodies run at once.
func ExampleRun() {
	b := schedule.NewBuilder("handoff", schedule.Launch{Target: "H200", SMs: 132, PerSM: 1, Workers: 2, Cooperative: true})
	x := b.Buffer("x", schedule.KindState, 256)
	ready := b.Counter("ready")
	b.Task("produce").On(0).Write(x, 0, 256).Signal(ready, 1)
	b.Task("consume").On(1).Read(x, 0, 256) // no Wait(ready, 1)
	p, _ := b.Build()

	r, _ := verify.Run(context.Background(), p, verify.Config{})
	fmt.Println(r.Verdict)
	for _, f := range r.Findings {
		fmt.Println(f.Code, f.Tasks)
		st, err := schedule.Replay(p, f.Witness)
		fmt.Println("replays:", err == nil, "in flight:", st.InFlight)
	}
	// Output:
	// unsafe
	// race.raw [0 1]
	// replays: true in flight: [true true]
}

// Program is the one-line gate.
func ExampleProgram() {
	b := schedule.NewBuilder("handoff", schedule.Launch{SMs: 2, PerSM: 1, Workers: 2, Cooperative: true})
	x := b.Buffer("x", schedule.KindScratch, 256)
	ready := b.Counter("ready")
	b.Task("produce").On(0).Write(x, 0, 256).Signal(ready, 1)
	b.Task("consume").On(1).Wait(ready, 1).Read(x, 0, 256)
	p, _ := b.Build()
	fmt.Println(verify.Program(p))
	// Output:
	// <nil>
}
