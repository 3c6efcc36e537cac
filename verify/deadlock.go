package verify

import (
	"context"
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/megaproof/megaproof/schedule"
)

// checkProgress runs the program greedily under its residency rules. A run
// that stops with unfinished threads is a deadlock; when the same program
// completes with every worker resident it is an occupancy problem instead.
// It returns the engine after the real run, for the analyses that follow.
func (v *verifier) checkProgress() *engine {
	e, _ := v.checkProgressCtx(context.Background())
	return e
}

// checkProgressCtx is checkProgress under ctx: it returns ctx's error,
// and no findings, when ctx ends the greedy run.
func (v *verifier) checkProgressCtx(ctx context.Context) (*engine, error) {
	f := v.f
	e := newEngine(f, false)
	e.record = true
	e.trace = e.traceRoom()
	e.ctx = ctx
	e.reset()
	e.run()
	if e.cut {
		return nil, ctx.Err()
	}
	e.ctx = nil
	v.stats.Steps = len(f.kind) - f.checks
	var firstOver []int // per counter: trace length through its first overflowing add
	for c, o := range e.overflow {
		if o {
			if firstOver == nil {
				firstOver = overflowPrefixes(f, e.trace)
			}
			ctr := f.p.Counters[c]
			var fix, msg string
			if ctr.Width >= 64 {
				fix = "signal counter " + ctr.Name + " less, or start it lower (it is already 64 bits wide)"
				msg = "counter " + ctr.Name + "'s signals carry it past 2^64-1"
			} else {
				fix = "declare counter " + ctr.Name + " with width 64, or signal less"
				msg = newMsg().s("counter ").s(ctr.Name).s(" reaches ").u(e.val[c]).s(", beyond its ").u(uint64(ctr.Width)).s("-bit width").String()
			}
			var tasks []int // the task of the overflowing signal
			if n := firstOver[c]; n > 0 {
				if x := e.trace[n-1]; f.kind[x] == kAdd && int(f.obj[x]) == c {
					tasks = []int{int(f.task[x])}
				}
			}
			v.add(Finding{
				Code:    CodeCounterOverflow,
				Message: msg,
				Fix:     fix,
				Tasks:   tasks,
				// The run up to this counter's overflow: the run to its end
				// can overflow other counters first, and the witness (its
				// minimisation and location) is of the last overflow.
				Witness: f.events(e.trace[:firstOver[c]]),
			})
		}
	}
	stuck := e.stuck()
	if len(stuck) == 0 {
		// Every wait list is empty: the analyses that follow only read
		// the trace.
		e.heaps = nil
		return e, nil
	}
	witness := f.events(e.trace)
	if !e.resident {
		all := newEngine(f, false)
		defer all.release()
		all.resident = true
		all.ctx = ctx
		all.reset()
		all.run()
		if all.cut {
			return nil, ctx.Err()
		}
		if len(all.stuck()) == 0 {
			v.occupancy(e, witness)
			return e, nil
		}
		v.deadlocks(all, witness)
		return e, nil
	}
	v.deadlocks(e, witness)
	return e, nil
}

// occupancy reports a deadlock caused by residency, with the smallest
// number of co-resident workers that lets the program finish.
func (v *verifier) occupancy(stuckRun *engine, witness []schedule.Event) {
	f := v.f
	lo, hi := v.f.p.Launch.Capacity()+1, f.workers // hi always completes
	for lo < hi {
		mid := (lo + hi) / 2
		e := newEngine(f, false)
		e.capacity = mid
		e.reset()
		e.run()
		if len(e.stuck()) == 0 {
			hi = mid
		} else {
			lo = mid + 1
		}
		e.release()
	}
	var waiting []string
	for _, t := range stuckRun.stuck() {
		if int(t) >= f.workers || int(t) < stuckRun.started {
			waiting = append(waiting, v.appendOp(v.appendThread(newMsg(), t).s(" at "), stuckRun.pos[t]).String())
		}
	}
	l := f.p.Launch
	why := "resident workers wait on workers that cannot start"
	if f.threads() > f.workers {
		why = "resident workers, which stay resident until every dynamic task has ended, leave no slot for workers the program waits on"
	}
	v.add(Finding{
		Code:    CodeOccupancy,
		Message: newMsg().s("non-cooperative launch of ").i(int64(l.Workers)).s(" workers on ").s(targetName(l.Target)).s(" keeps ").i(int64(l.Capacity())).s(" co-resident (").i(int64(l.SMs)).s(" SMs × ").i(int64(l.PerSM)).s("); ").s(why).s("; the program needs at least ").i(int64(lo)).s(" co-resident workers").String(),
		Tasks:   nil,
		Related: capLines(waiting, "stuck: "),
		Fix:     newMsg().s("keep at least ").i(int64(lo)).s(" workers co-resident (fewer blocks' resources per SM, or a cooperative launch on a target that holds them), or place producers on lower-numbered workers than their waiters").String(),
		Witness: witness,
	})
}

func targetName(t string) string {
	if t == "" {
		return "the target"
	}
	return t
}

// deadlocks explains the stuck state of e: unsatisfiable waits, broken
// barriers, and wait-for cycles.
func (v *verifier) deadlocks(e *engine, witness []schedule.Event) {
	f := v.f
	stuck := e.stuck()
	found := false
	// Roots: waits no execution can satisfy.
	for _, t := range stuck {
		x := e.pos[t]
		if f.kind[x] != kWait || f.val[x] <= f.total[f.obj[x]] {
			continue
		}
		found = true
		o := f.obj[x]
		if sem := v.semaphoreOf(o); sem >= 0 {
			v.add(Finding{
				Code:    CodeDeadlockSemaphore,
				Message: v.appendOp(v.appendThread(newMsg(), t).s(": "), x).s(" is never granted: semaphore ").s(v.orig.Semaphores[sem].Name).s(" starts with ").u(v.orig.Semaphores[sem].Tokens).s(" tokens and its releases cannot cover its acquires").String(),
				Tasks:   []int{int(f.task[x])},
				Fix:     "release what is acquired from " + v.orig.Semaphores[sem].Name + ", or start it with more tokens",
				Witness: witness,
			})
			continue
		}
		if f.is(x, fBarrier) {
			b := o - int32(f.nc)
			v.add(Finding{
				Code:    barrierCode(),
				Message: v.appendOp(v.appendThread(newMsg(), t).s(": "), x).s(", but only ").u(f.total[o]).s(" arrivals exist in the whole program; ").s(v.barrierShape(b)).String(),
				Tasks:   []int{int(f.task[x])},
				Fix:     "make every participant of barrier " + f.p.Barriers[b].Name + " sync the same number of times, and parties equal the participants",
				Witness: witness,
			})
			continue
		}
		v.add(Finding{
			Code:    CodeDeadlockUnsatisfiable,
			Message: v.appendOp(v.appendThread(newMsg(), t).s(": "), x).s(" can never pass: counter ").s(f.p.Counters[o].Name).s(" starts at ").u(f.init[o]).s(" and all its signals add up to ").u(f.total[o]).String(),
			Tasks:   []int{int(f.task[x])},
			Related: v.producers(e, o),
			Fix:     newMsg().s("lower the threshold to ").u(f.total[o]).s(", or add the missing signals to ").s(f.p.Counters[o].Name).String(),
			Witness: witness,
		})
	}
	// Wait-for graph: thread -> object it waits on -> threads with an
	// unexecuted add on that object. Nodes are threads [0, T) and objects
	// [T, T+objects).
	T := int32(f.threads())
	isStuck := make([]bool, T)
	for _, t := range stuck {
		isStuck[t] = true
	}
	adj := make([][]int32, int(T)+len(f.init))
	for _, t := range stuck {
		x := e.pos[t]
		if f.kind[x] == kWait {
			adj[t] = append(adj[t], T+f.obj[x])
		}
		for y := x; y < f.start[t+1]; y++ {
			if f.kind[y] == kAdd {
				o := T + f.obj[y]
				if l := adj[o]; len(l) == 0 || l[len(l)-1] != t {
					adj[o] = append(adj[o], t)
				}
			}
		}
	}
	for _, comp := range sccs(adj) {
		cyc := cycleIn(adj, comp, T)
		if cyc == nil {
			continue
		}
		found = true
		var parts []string
		var tasks []int
		for _, t := range cyc {
			x := e.pos[t]
			parts = append(parts, v.appendOp(v.appendThread(newMsg(), t).s(" at "), x).String())
			tasks = append(tasks, int(f.task[x]))
		}
		code := CodeDeadlockCycle
		for _, t := range cyc {
			if f.is(e.pos[t], fBarrier) && f.kind[e.pos[t]] == kWait {
				code = barrierCode()
			}
			if f.kind[e.pos[t]] == kWait && v.semaphoreOf(f.obj[e.pos[t]]) >= 0 {
				code = CodeDeadlockSemaphore
			}
		}
		msg := "wait-for cycle: " + strings.Join(parts, " → waits for ") + " → waits for " + parts[0]
		if len(cyc) == 1 {
			msg = parts[0] + " waits for a signal that comes later in its own queue"
		}
		v.add(Finding{Code: code, Message: msg, Tasks: tasks, Witness: witness,
			Fix: "reorder the queues so every producer runs before its waiters, or wait on the right counter"})
	}
	if !found {
		var lines []string
		for _, t := range stuck {
			lines = append(lines, v.appendOp(v.appendThread(newMsg(), t).s(" at "), e.pos[t]).String())
		}
		v.add(Finding{Code: CodeDeadlockCycle, Message: "threads are stuck waiting on each other", Related: capLines(lines, ""), Witness: witness})
	}
}

// producers lists the unexecuted signals on object o in a stuck state.
func (v *verifier) producers(e *engine, o int32) []string {
	f := v.f
	var lines []string
	for t := 0; t < f.threads(); t++ {
		for y := e.pos[t]; y < f.start[t+1]; y++ {
			if f.kind[y] == kAdd && f.obj[y] == o {
				lines = append(lines, v.appendOp(v.appendThread(v.appendOp(newMsg().s("never runs: "), y).s(", behind "), int32(t)).s(" at "), e.pos[t]).String())
				break
			}
		}
	}
	return capLines(lines, "")
}

// barrierShape summarizes who takes part in barrier b and how often.
func (v *verifier) barrierShape(b int32) string {
	f := v.f
	o := int32(f.nc) + b
	counts := map[int32]int{}
	for x := range f.kind {
		if f.kind[x] == kAdd && f.obj[x] == o {
			counts[f.opThread[x]]++
		}
	}
	var per []string
	ths := make([]int32, 0, len(counts))
	for t := range counts {
		ths = append(ths, t)
	}
	slices.Sort(ths)
	for _, t := range ths {
		per = append(per, v.appendThread(newMsg(), t).s(" ×").i(int64(counts[t])).String())
	}
	if len(per) > 8 {
		per = append(per[:8], fmt.Sprintf("… %d more", len(ths)-8))
	}
	return newMsg().s("barrier ").s(f.p.Barriers[b].Name).s(" has ").i(int64(f.p.Barriers[b].Parties)).s(" parties and ").i(int64(len(ths))).s(" participants (").s(strings.Join(per, ", ")).s(")").String()
}

// sccs returns the strongly connected components of a graph (iterative
// Tarjan), each as a list of nodes.
func sccs(adj [][]int32) [][]int32 {
	n := len(adj)
	index := make([]int32, n)
	low := make([]int32, n)
	on := make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	var out [][]int32
	var st []int32
	type frame struct{ v, i int32 }
	var call []frame
	next := int32(0)
	for s := 0; s < n; s++ {
		if index[s] >= 0 || len(adj[s]) == 0 {
			continue
		}
		call = append(call[:0], frame{int32(s), 0})
		index[s], low[s] = next, next
		next++
		st = append(st, int32(s))
		on[s] = true
		for len(call) > 0 {
			fr := &call[len(call)-1]
			if int(fr.i) < len(adj[fr.v]) {
				w := adj[fr.v][fr.i]
				fr.i++
				if index[w] < 0 {
					index[w], low[w] = next, next
					next++
					st = append(st, w)
					on[w] = true
					call = append(call, frame{w, 0})
				} else if on[w] && index[w] < low[fr.v] {
					low[fr.v] = index[w]
				}
				continue
			}
			u := fr.v
			call = call[:len(call)-1]
			if len(call) > 0 {
				p := call[len(call)-1].v
				if low[u] < low[p] {
					low[p] = low[u]
				}
			}
			if low[u] == index[u] {
				var comp []int32
				for {
					w := st[len(st)-1]
					st = st[:len(st)-1]
					on[w] = false
					comp = append(comp, w)
					if w == u {
						break
					}
				}
				if len(comp) > 1 {
					out = append(out, comp)
				}
			}
		}
	}
	return out
}

// cycleIn finds a cycle through the smallest thread of a component and
// returns its threads in order, starting at that thread.
func cycleIn(adj [][]int32, comp []int32, T int32) []int32 {
	in := map[int32]bool{}
	start := int32(-1)
	for _, c := range comp {
		in[c] = true
		if c < T && (start < 0 || c < start) {
			start = c
		}
	}
	if start < 0 {
		return nil
	}
	// BFS from start back to start within the component.
	prev := map[int32]int32{}
	queue := []int32{start}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, w := range adj[u] {
			if !in[w] {
				continue
			}
			if w == start {
				var path []int32
				for x := u; ; x = prev[x] {
					if x < T {
						path = append(path, x)
					}
					if x == start {
						break
					}
				}
				slices.Reverse(path)
				return path
			}
			if _, ok := prev[w]; !ok {
				prev[w] = u
				queue = append(queue, w)
			}
		}
	}
	return nil
}

func capLines(lines []string, prefix string) []string {
	const max = 8
	var out []string
	for i, l := range lines {
		if i == max {
			out = append(out, fmt.Sprintf("… and %d more", len(lines)-max))
			break
		}
		out = append(out, prefix+l)
	}
	return out
}

// overflowPrefixes returns, per counter of f, the length of the shortest
// prefix of trace whose adds carry the counter past its width (len(trace)
// for a counter that never overflows).
func overflowPrefixes(f *form, trace []int32) []int {
	val := append([]uint64(nil), f.init[:f.nc]...)
	over := make([]bool, f.nc)
	out := make([]int, f.nc)
	for c := range out {
		out[c] = len(trace)
	}
	for i, x := range trace {
		o := f.obj[x]
		if f.kind[x] != kAdd || f.is(x, fBarrier) || int(o) >= f.nc || over[o] {
			continue
		}
		nv, carry := bits.Add64(val[o], f.val[x], 0)
		if carry != 0 {
			nv = ^uint64(0)
		}
		val[o] = nv
		if carry != 0 || pastMax(nv, f.p.Counters[o].Max()) {
			over[o] = true
			out[o] = i + 1
		}
	}
	return out
}
