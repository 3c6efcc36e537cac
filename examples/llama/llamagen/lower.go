package llamagen

import (
	"cmp"
	"container/heap"
	"fmt"
	"slices"

	"github.com/megaproof/megaproof/schedule"
)

// lower emits the task graph into the builder for the configured strategy.
func (g *gen) lower() {
	order, worker := g.place()
	b := g.b
	c := g.cfg

	// Counters: one per group, or one per kind with layer-scaled bases.
	counter := make([]schedule.CounterRef, len(g.groups))
	base := make([]uint64, len(g.groups))
	made := make([]bool, len(g.groups))
	byKind := map[string]schedule.CounterRef{}
	sums := map[string]uint64{}
	for i, gr := range g.groups {
		if c.Epoch {
			base[i] = sums[gr.kind]
			sums[gr.kind] += gr.total
		}
	}
	ref := func(i int32) schedule.CounterRef {
		if !made[i] {
			made[i] = true
			gr := g.groups[i]
			if !c.Epoch {
				counter[i] = b.Counter(gr.name)
			} else if r, ok := byKind[gr.kind]; ok {
				counter[i] = r
			} else {
				counter[i] = b.Counter(gr.kind)
				byKind[gr.kind] = counter[i]
			}
		}
		return counter[i]
	}
	var credit []schedule.CounterRef
	for s := range c.Pages {
		credit = append(credit, b.Counter(fmt.Sprintf("credit.s%d", s)))
	}

	// Barriers: one per layer (and one for the head and tail stages); the
	// boundary before stage k belongs to the layer of stage k.
	var stageBarrier []schedule.BarrierRef
	if c.Strategy == Barrier {
		stageLayer := make([]int, g.stage+1)
		for i := range g.nodes {
			stageLayer[g.nodes[i].stage] = g.nodes[i].layer
		}
		bars := map[int]schedule.BarrierRef{}
		stageBarrier = make([]schedule.BarrierRef, g.stage+1)
		for k, l := range stageLayer {
			if k == 0 {
				continue
			}
			r, ok := bars[l]
			if !ok {
				name := "grid.final"
				if l >= 0 {
					name = fmt.Sprintf("grid.L%d", l)
				}
				r = b.Barrier(name, c.Workers)
				bars[l] = r
			}
			stageBarrier[k] = r
		}
	}
	synced := make([]int, c.Workers) // stages each worker has passed
	last := make([]*schedule.TaskBuilder, c.Workers)

	for _, i := range order {
		n := &g.nodes[i]
		t := b.Task(n.name).Op(n.op)
		if n.layer >= 0 {
			t.Param("layer", int64(n.layer))
		}
		for _, p := range n.params {
			t.Param(p.key, p.v)
		}
		if w := worker[i]; w >= 0 {
			t.On(w)
			last[w] = t
			if c.Strategy == Barrier {
				for k := synced[w] + 1; k <= n.stage; k++ {
					t.Sync(stageBarrier[k])
				}
				synced[w] = n.stage
			}
		}
		if c.Strategy != Barrier {
			for _, nd := range n.needs {
				t.Wait(ref(nd.g), base[nd.g]+nd.n)
			}
		}
		if n.slot && c.Pages > 0 && n.layer >= c.Pages {
			t.Wait(credit[n.layer%c.Pages], uint64(n.layer/c.Pages))
		}
		for _, a := range n.reads {
			t.ReadTile(a.buf, a.off, a.length, a.rows, a.stride)
		}
		for _, a := range n.writes {
			t.WriteTile(a.buf, a.off, a.length, a.rows, a.stride)
		}
		if c.Strategy != Barrier {
			for _, s := range n.signals {
				t.Signal(ref(s), 1)
			}
		}
		if n.release && c.Pages > 0 {
			t.Signal(credit[n.layer%c.Pages], 1)
		}
	}
	if c.Strategy == Barrier {
		// Every worker takes part in every generation: the rest of the
		// boundaries follow its last task, and an idle worker gets a task
		// that only synchronizes.
		for w := range c.Workers {
			t := last[w]
			if t == nil {
				t = b.Task(fmt.Sprintf("idle.w%d", w)).Op("noop").On(w)
			}
			for k := synced[w] + 1; k <= g.stage; k++ {
				if last[w] == nil {
					t.Sync(stageBarrier[k])
				} else {
					t.SyncAfter(stageBarrier[k])
				}
			}
		}
	}
}

// place returns the emission order of the nodes and each node's worker
// (-1 for dynamic). The order is topological: stages in increasing order.
func (g *gen) place() (order []int, worker []int) {
	c := g.cfg
	worker = make([]int, len(g.nodes))
	order = make([]int, 0, len(g.nodes))
	switch c.Strategy {
	case Dynamic:
		for i := range g.nodes {
			order = append(order, i)
			worker[i] = -1
		}
	case RoundRobin:
		for i := range g.nodes {
			order = append(order, i)
			worker[i] = i % c.Workers
		}
	case Balanced, Barrier:
		// LPT per stage: longest task first onto the least-loaded worker.
		// With barriers every stage starts from empty workers.
		loads := make(loadHeap, c.Workers)
		for w := range loads {
			loads[w] = load{w: w}
		}
		for lo := 0; lo < len(g.nodes); {
			hi := lo
			for hi < len(g.nodes) && g.nodes[hi].stage == g.nodes[lo].stage {
				hi++
			}
			stage := make([]int, 0, hi-lo)
			for i := lo; i < hi; i++ {
				stage = append(stage, i)
			}
			slices.SortStableFunc(stage, func(a, b int) int { return cmp.Compare(g.nodes[b].cost, g.nodes[a].cost) })
			if c.Strategy == Barrier {
				for w := range loads {
					loads[w] = load{w: w}
				}
			}
			for _, i := range stage {
				worker[i] = loads[0].w
				loads[0].cost += g.nodes[i].cost
				heap.Fix(&loads, 0)
				order = append(order, i)
			}
			lo = hi
		}
	}
	return order, worker
}

type load struct {
	cost uint64
	w    int
}

// loadHeap is a min-heap of worker loads, ties broken by worker index so
// placement is deterministic.
type loadHeap []load

func (h loadHeap) Len() int { return len(h) }
func (h loadHeap) Less(i, j int) bool {
	if h[i].cost != h[j].cost {
		return h[i].cost < h[j].cost
	}
	return h[i].w < h[j].w
}
func (h loadHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *loadHeap) Push(x any)   { *h = append(*h, x.(load)) }
func (h *loadHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
