package verify_test

import (
	"context"
	"fmt"

	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify"
)

// A report locates each finding in the program's megaproof/v1 form,
// annotates its minimised witness (the events that matter marked, each
// sync object's value after the event) and gives the fix as a JSON Patch.
func ExampleResult_ReportAt() {
	b := schedule.NewBuilder("handoff", schedule.Launch{SMs: 2, PerSM: 1, Workers: 2, Cooperative: true})
	x := b.Buffer("x", schedule.KindState, 256)
	ready := b.Counter("ready")
	b.Task("produce").On(0).Write(x, 0, 256).Signal(ready, 1)
	b.Task("consume").On(1).Read(x, 0, 256) // no Wait(ready, 1)
	p, _ := b.Build()

	r, _ := verify.Run(context.Background(), p, verify.Config{})
	f := r.Report(p).Findings[0]
	fmt.Println(f.Code)
	for _, l := range f.Locations {
		fmt.Println("at", l.Path, l.Role, l.Task)
	}
	for _, e := range f.Witness {
		mark := " "
		if e.Marked {
			mark = "*"
		}
		fmt.Println(mark, e.ThreadName, e.Task, e.Op, e.Path)
	}
	for _, op := range f.Patch {
		fmt.Println("patch", op.Op, op.Path, string(op.Value))
	}
	// Output:
	// race.raw
	// at $.tasks[0] writer produce
	// at $.tasks[1] reader consume
	// * worker 0 produce begin $.tasks[0]
	// * worker 1 consume begin $.tasks[1]
	// patch add /counters/- {"name":"produce.done"}
	// patch add /tasks/0/after/- {"signal":"produce.done"}
	// patch add /tasks/1/before [{"ge":1,"wait":"produce.done"}]
}
