package amk

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/megaproof/megaproof/schedule"
)

// TestTopoOrder checks topoOrder against Kahn's algorithm over the edge
// list as AMK's MegakernelProgram builds it, on random programs (one
// out_counter a task, repeated waits, counters without producers, cycles).
func TestTopoOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 7))
	for g := 0; g < 2000; g++ {
		n, nc := 1+r.IntN(12), 1+r.IntN(6)
		p := &schedule.Program{Counters: make([]schedule.Counter, nc)}
		ids := make([]int64, n)
		for i, v := range r.Perm(3 * n)[:n] {
			ids[i] = int64(v)
		}
		for i := 0; i < n; i++ {
			tk := schedule.Task{After: []schedule.Step{{Kind: schedule.Signal, Object: int32(r.IntN(nc)), Value: 1}}}
			for range r.IntN(3) {
				tk.Before = append(tk.Before, schedule.Step{Kind: schedule.Wait, Object: int32(r.IntN(nc)), Value: 1})
			}
			p.Tasks = append(p.Tasks, tk)
		}
		got, gotOK := topoOrder(p, ids)
		want, wantOK := naiveTopo(p, ids)
		if gotOK != wantOK || (gotOK && !slices.Equal(got, want)) {
			t.Fatalf("program %d: order %v %v, want %v %v", g, got, gotOK, want, wantOK)
		}
	}
}

func naiveTopo(p *schedule.Program, ids []int64) ([]int, bool) {
	n := len(p.Tasks)
	type edge struct{ a, b int }
	var edges []edge
	for b := range p.Tasks {
		for _, w := range p.Tasks[b].Before {
			for a := range p.Tasks {
				if p.Tasks[a].After[0].Object == w.Object {
					edges = append(edges, edge{a, b})
				}
			}
		}
	}
	slices.SortFunc(edges, func(x, y edge) int {
		if c := cmp.Compare(ids[x.a], ids[y.a]); c != 0 {
			return c
		}
		return cmp.Compare(ids[x.b], ids[y.b])
	})
	edges = slices.Compact(edges)
	succ, indeg := make([][]int, n), make([]int, n)
	for _, e := range edges {
		succ[e.a] = append(succ[e.a], e.b)
		indeg[e.b]++
	}
	var ready []int
	for i := range n {
		if indeg[i] == 0 {
			ready = append(ready, i)
		}
	}
	slices.SortFunc(ready, func(x, y int) int { return cmp.Compare(ids[x], ids[y]) })
	for k := 0; k < len(ready); k++ {
		for _, b := range succ[ready[k]] {
			if indeg[b]--; indeg[b] == 0 {
				ready = append(ready, b)
			}
		}
	}
	return ready, len(ready) == n
}
