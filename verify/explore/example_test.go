package explore_test

import (
	"context"
	"fmt"

	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify/explore"
)

// Two workers take two semaphores in opposite orders: the explorer finds
// the deadlock and a trace that reaches it.
func ExampleRun() {
	b := schedule.NewBuilder("locks", schedule.Launch{SMs: 2, PerSM: 1, Workers: 2, Cooperative: true})
	s1 := b.Semaphore("s1", 1)
	s2 := b.Semaphore("s2", 1)
	b.Task("a").On(0).Acquire(s1, 1).Acquire(s2, 1).Release(s2, 1).Release(s1, 1)
	b.Task("b").On(1).Acquire(s2, 1).Acquire(s1, 1).Release(s1, 1).Release(s2, 1)
	p, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := explore.Run(context.Background(), p, explore.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range r.Findings {
		fmt.Println(f.Code, f.Tasks, f.Trace)
		fmt.Println("replays:", schedule.CheckWitness(p, f.Code, f.Tasks, f.Trace) == nil)
	}
	fmt.Println("complete:", r.Complete)
	// Output:
	// deadlock.semaphore [0 1] [{0 0} {1 0}]
	// replays: true
	// complete: true
}
