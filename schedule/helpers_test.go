package schedule_test

import (
	"testing"

	"github.com/megaproof/megaproof/schedule"
)

// handoff builds the two-worker producer/consumer program: "produce" on
// worker 0 writes x and signals ready; "consume" on worker 1 waits for
// ready, reads x and writes y.
func handoff(t testing.TB, cooperative bool) *schedule.Program {
	t.Helper()
	b := schedule.NewBuilder("handoff", schedule.Launch{Target: "H200", SMs: 132, PerSM: 1, Workers: 2, Cooperative: cooperative})
	x := b.Buffer("x", schedule.KindScratch, 256)
	y := b.Buffer("y", schedule.KindOutput, 256)
	ready := b.Counter("ready")
	b.Task("produce").On(0).Op("fill").Write(x, 0, 256).Signal(ready, 1)
	b.Task("consume").On(1).Op("copy").Wait(ready, 1).Read(x, 0, 256).Write(y, 0, 256)
	return mustBuild(t, b)
}

func mustBuild(t testing.TB, b *schedule.Builder) *schedule.Program {
	t.Helper()
	p, err := b.Build()
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return p
}
