package verify_test

import (
	"errors"
	"fmt"

	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify"
)

// Program's error carries the whole result: errors.As reaches the findings
// and their witnesses.
func ExampleError() {
	b := schedule.NewBuilder("handoff", schedule.Launch{SMs: 2, PerSM: 1, Workers: 2, Cooperative: true})
	x := b.Buffer("x", schedule.KindState, 256)
	ready := b.Counter("ready")
	b.Task("produce").On(0).Write(x, 0, 256).Signal(ready, 1)
	b.Task("consume").On(1).Read(x, 0, 256) // no Wait(ready, 1)
	p, _ := b.Build()

	var ve *verify.Error
	if err := verify.Program(p); errors.As(err, &ve) {
		rep := ve.Result.Report(p)
		fmt.Println(rep.Verdict)
		for _, f := range rep.Findings {
			fmt.Println(f.Code, f.Tasks, f.WitnessLength > 0)
		}
	}
	// Output:
	// unsafe
	// race.raw [produce consume] true
}
