package mutate_test

import (
	"fmt"
	"os"

	"github.com/megaproof/megaproof/mutate"
	"github.com/megaproof/megaproof/schedule"
)

// Drop the consumer's wait from a producer/consumer handoff. The input is
// left as it was; the mutant's consumer no longer waits for the producer's
// signal (a race and an uninitialized read, which verify would report).
func Example() {
	b := schedule.NewBuilder("handoff", schedule.Launch{SMs: 2, PerSM: 1, Workers: 2})
	x := b.Buffer("x", schedule.KindScratch, 256)
	ready := b.Counter("ready")
	b.Task("produce").On(0).Write(x, 0, 256).Signal(ready, 1)
	b.Task("consume").On(1).Wait(ready, 1).Read(x, 0, 256)
	p, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}

	op, _ := mutate.Lookup("drop-wait")
	fmt.Println(op.Name, op.Expect, "sites:", op.Sites(p))
	q, err := op.Apply(p, 0, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("input waits:", len(p.Tasks[1].Before), "mutant waits:", len(q.Tasks[1].Before))
	schedule.Encode(os.Stdout, q)
	// Output:
	// drop-wait [race uninitialized-read] sites: 1
	// input waits: 1 mutant waits: 0
	// {
	//   "format": "megaproof/v1",
	//   "name": "handoff",
	//   "launch": {"sms":2,"blocks_per_sm":1,"workers":2},
	//   "buffers": [
	//     {"name":"x","kind":"scratch","size":256}
	//   ],
	//   "counters": [
	//     {"name":"ready"}
	//   ],
	//   "tasks": [
	//     {"name":"produce","worker":0,"writes":[{"buffer":"x","length":256}],"after":[{"signal":"ready"}]},
	//     {"name":"consume","worker":1,"reads":[{"buffer":"x","length":256}]}
	//   ]
	// }
}

// List every operator's sites in a program, then apply each at its first
// site: a mutation campaign in a few lines.
func ExampleOperators() {
	b := schedule.NewBuilder("tiles", schedule.Launch{SMs: 2, PerSM: 1, Workers: 2, Cooperative: true})
	y := b.Buffer("y", schedule.KindOutput, 128)
	done := b.Counter("done")
	b.Task("left").On(0).Write(y, 0, 64).Signal(done, 1)
	b.Task("right").On(1).Write(y, 64, 64).Signal(done, 1)
	b.Task("join").Wait(done, 2).Read(y, 0, 128)
	p, _ := b.Build()
	for _, op := range mutate.Operators() {
		n := op.Sites(p)
		if n == 0 {
			continue
		}
		if _, err := op.Apply(p, 0, 0); err != nil {
			fmt.Println(op.Name, err)
			continue
		}
		fmt.Printf("%s: %d\n", op.Name, n)
	}
	// Output:
	// drop-wait: 1
	// lower-threshold: 1
	// raise-threshold: 1
	// drop-signal: 2
	// duplicate-signal: 2
	// signal-early: 2
	// add-cycle: 2
	// relax-signal: 2
	// relax-wait: 1
	// narrow-scope: 3
	// narrow-shared-scope: 3
	// move-task: 3
	// exceed-capacity: 2
	// claim-before-ready: 1
	// nonzero-init: 1
	// counter-overflow: 1
	// shift-tile: 2
	// widen-oob: 3
	// drop-tile: 2
}
