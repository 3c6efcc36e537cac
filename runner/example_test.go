package runner_test

import (
	"fmt"

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
