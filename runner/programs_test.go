package runner

import (
	"fmt"
	"math/rand/v2"

	"github.com/megaproof/megaproof/schedule"
)

// handoff: worker 0 fills x and signals; worker 1 waits and copies x to y.
func progHandoff() *schedule.Program {
	b := schedule.NewBuilder("handoff", schedule.Launch{Target: "H200", SMs: 132, PerSM: 1, Workers: 2, Cooperative: true})
	x := b.Buffer("x", schedule.KindScratch, 256)
	y := b.Buffer("y", schedule.KindOutput, 256)
	ready := b.Counter("ready")
	b.Task("produce").On(0).Op("fill").Param("seed", 7).Write(x, 0, 256).Signal(ready, 1)
	b.Task("consume").On(1).Op("copy").Wait(ready, 1).Read(x, 0, 256).Write(y, 0, 256)
	return must(b.Build())
}

func must(p *schedule.Program, err error) *schedule.Program {
	if err != nil {
		panic(err) // test helper: programs below are built by hand
	}
	return p
}

// layered describes a random layered program.
type layered struct {
	name      string
	workers   int
	layers    int
	width     int    // tasks per layer
	tile      uint64 // bytes per task tile (columns)
	rows      uint64 // rows of each layer matrix (2-D tiles when > 1)
	sync      string // "join" (layer counter), "deps" (per-task counters), "barrier"
	dynamic   float64
	seed      uint64
	coop      bool
	maxReads  int
	semaphore bool // guard each layer with a semaphore of width tokens (acquire 1 / release 1)
}

// build makes the program. Layer l writes matrix Ll (rows × width·tile,
// task j writes column tile j); its tasks read 1..maxReads tiles of layer
// l-1 (layer 0 reads the input). The last layer writes the output.
func (c layered) build() *schedule.Program {
	r := rand.New(rand.NewPCG(c.seed, 99))
	b := schedule.NewBuilder(c.name, schedule.Launch{Target: "H200", SMs: 132, PerSM: 1, Workers: c.workers, Cooperative: c.coop})
	rows := max(c.rows, 1)
	rowBytes := uint64(c.width) * c.tile
	in := b.Buffer("in", schedule.KindInput, rows*rowBytes)
	bufs := make([]schedule.BufferRef, c.layers)
	for l := range bufs {
		kind := schedule.KindScratch
		if l == c.layers-1 {
			kind = schedule.KindOutput
		}
		bufs[l] = b.Buffer(fmt.Sprintf("L%d", l), kind, rows*rowBytes)
	}
	var layerCtr []schedule.CounterRef
	var taskCtr [][]schedule.CounterRef
	var bar schedule.BarrierRef
	var sem schedule.SemaphoreRef
	if c.semaphore {
		sem = b.Semaphore("slots", uint64(max(1, c.width/2)))
	}
	switch c.sync {
	case "join":
		for l := 0; l < c.layers; l++ {
			layerCtr = append(layerCtr, b.Counter(fmt.Sprintf("done%d", l)))
		}
	case "deps":
		for l := 0; l < c.layers; l++ {
			var cs []schedule.CounterRef
			for j := 0; j < c.width; j++ {
				cs = append(cs, b.Counter(fmt.Sprintf("c%d_%d", l, j)))
			}
			taskCtr = append(taskCtr, cs)
		}
	case "barrier":
		bar = b.Barrier("layer", c.workers)
	}
	ops := []string{"mix", "mix", "add8", "copy", "scale"}
	for l := 0; l < c.layers; l++ {
		for j := 0; j < c.width; j++ {
			t := b.Task(fmt.Sprintf("t%d_%d", l, j))
			dyn := c.sync != "barrier" && r.Float64() < c.dynamic
			if !dyn {
				t.On((l*c.width + j) % c.workers)
			}
			src := in
			if l > 0 {
				src = bufs[l-1]
			}
			op := ops[r.IntN(len(ops))]
			if l == 0 && r.IntN(3) == 0 {
				op = "fill"
			}
			t.Op(op).Param("seed", int64(r.Uint32())).Param("k", int64(r.IntN(7)+1))
			if op != "fill" {
				n := 1 + r.IntN(max(1, c.maxReads))
				for k := 0; k < n; k++ {
					sj := r.IntN(c.width)
					if l > 0 {
						switch c.sync {
						case "join":
							if k == 0 {
								t.Wait(layerCtr[l-1], uint64(c.width))
							}
						case "deps":
							t.Wait(taskCtr[l-1][sj], 1)
						}
					}
					t.ReadTile(src, uint64(sj)*c.tile, c.tile, rows, rowBytes)
				}
			}
			if c.semaphore {
				t.Acquire(sem, 1)
			}
			t.WriteTile(bufs[l], uint64(j)*c.tile, c.tile, rows, rowBytes)
			if c.semaphore {
				t.Release(sem, 1)
			}
			switch c.sync {
			case "join":
				t.Signal(layerCtr[l], 1)
			case "deps":
				t.Signal(taskCtr[l][j], 1)
			}
		}
		if c.sync == "barrier" && l < c.layers-1 {
			for w := 0; w < c.workers; w++ {
				b.Task(fmt.Sprintf("bar%d_%d", l, w)).On(w).Sync(bar)
			}
		}
	}
	return must(b.Build())
}

// safePrograms returns the safe test programs: hand-made ones and random
// layered ones of every sync style, one of them over 10^4 tasks.
func safePrograms(short bool) []*schedule.Program {
	ps := []*schedule.Program{progHandoff(), progArena(), progFence(), progChain(64, 8), progFan(256, 16)}
	syncs := []string{"join", "deps", "barrier"}
	for i := 0; i < 45; i++ {
		c := layered{
			name:     fmt.Sprintf("rand%02d", i),
			workers:  1 + (i*7)%24,
			layers:   2 + i%5,
			width:    1 + (i*5)%12,
			tile:     []uint64{1, 16, 64, 200}[i%4],
			rows:     []uint64{1, 1, 3}[i%3],
			sync:     syncs[i%3],
			dynamic:  []float64{0, 0.3, 1}[(i/3)%3],
			seed:     uint64(i),
			coop:     i%2 == 0,
			maxReads: 1 + i%3,
		}
		if c.sync == "barrier" {
			c.dynamic = 0
		}
		ps = append(ps, c.build())
	}
	big := layered{name: "big", workers: 132, layers: 80, width: 128, tile: 32, rows: 1, sync: "deps", seed: 7, coop: true, maxReads: 3, dynamic: 0.2}
	if short {
		big.layers = 4
	}
	ps = append(ps, big.build())
	return ps
}

// progArena: two scratch buffers share one arena page, reused after a wait.
func progArena() *schedule.Program {
	b := schedule.NewBuilder("arena", schedule.Launch{SMs: 132, PerSM: 1, Workers: 2, Cooperative: true})
	page := b.Arena("page", 512)
	a := b.BufferIn("a", schedule.KindScratch, 512, page, 0)
	bb := b.BufferIn("b", schedule.KindScratch, 256, page, 128)
	in := b.Buffer("in", schedule.KindInput, 512)
	out := b.Buffer("out", schedule.KindOutput, 1024)
	c1, c2, c3 := b.Counter("c1"), b.Counter("c2"), b.Counter("c3")
	b.Task("w1").On(0).Op("scale").Read(in, 0, 512).Write(a, 0, 512).Signal(c1, 1)
	b.Task("r1").On(1).Op("mix").Wait(c1, 1).Read(a, 0, 512).Write(out, 0, 512).Signal(c2, 1)
	b.Task("w2").On(0).Op("fill").Wait(c2, 1).Write(bb, 0, 256).Signal(c3, 1)
	b.Task("r2").On(1).Op("add8").Wait(c3, 1).Read(bb, 0, 256).Read(in, 7, 100).Write(out, 512, 512)
	return must(b.Build())
}

// progFence: relaxed signal after a fence, relaxed wait followed by a fence.
func progFence() *schedule.Program {
	b := schedule.NewBuilder("fence", schedule.Launch{SMs: 132, PerSM: 1, Workers: 2, Cooperative: true})
	x := b.Buffer("x", schedule.KindScratch, 300)
	y := b.Buffer("y", schedule.KindOutput, 300)
	c := b.Counter("c")
	b.Task("p").On(0).Op("fill").Write(x, 0, 300).FenceAfter(schedule.ScopeGPU).Signal(c, 1, schedule.Relaxed())
	b.Task("q").On(1).Op("mix").Wait(c, 1, schedule.Relaxed()).FenceBefore(schedule.ScopeGPU).Read(x, 0, 300).Write(y, 0, 300)
	return must(b.Build())
}

// progChain: n tasks, each reading the previous one's tile, placed round
// robin over w workers, linked by one counter.
func progChain(n, w int) *schedule.Program {
	b := schedule.NewBuilder(fmt.Sprintf("chain%d", n), schedule.Launch{SMs: 132, PerSM: 1, Workers: w, Cooperative: true})
	const tile = 64
	x := b.Buffer("x", schedule.KindOutput, uint64(n)*tile)
	in := b.Buffer("in", schedule.KindInput, tile)
	c := b.Counter("step")
	for i := 0; i < n; i++ {
		t := b.Task(fmt.Sprintf("t%d", i)).On(i % w).Op("mix")
		if i == 0 {
			t.Read(in, 0, tile)
		} else {
			t.Wait(c, uint64(i)).Read(x, uint64(i-1)*tile, tile)
		}
		t.Write(x, uint64(i)*tile, tile).Signal(c, 1)
	}
	return must(b.Build())
}

// progFan: n independent tiny tasks over w workers.
func progFan(n, w int) *schedule.Program {
	b := schedule.NewBuilder(fmt.Sprintf("fan%d", n), schedule.Launch{SMs: 132, PerSM: 1, Workers: w, Cooperative: true})
	const tile = 64
	x := b.Buffer("x", schedule.KindOutput, uint64(n)*tile)
	in := b.Buffer("in", schedule.KindInput, tile)
	for i := 0; i < n; i++ {
		b.Task(fmt.Sprintf("t%d", i)).On(i%w).Op("mix").Read(in, 0, tile).Write(x, uint64(i)*tile, tile)
	}
	return must(b.Build())
}
