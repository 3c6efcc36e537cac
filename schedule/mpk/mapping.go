package mpk

import (
	"strconv"

	"github.com/megaproof/megaproof/schedule"
)

// Map maps a parsed MPK graph to a [schedule.Program]: K iterations of
// every task with its dependent-event wait and trigger-event signal, the
// BEGIN/END structure between them, the dispatch of tasks to workers and
// the queue capacities, as the package documentation describes. Invalid
// values yield a *[schedule.Error] of invalid.* diagnostics with JSON
// paths into the MPK document.
func (o Options) Map(g *Graph) (*schedule.Program, error) {
	o, c, err := o.checked(g)
	if err != nil {
		return nil, err
	}
	return o.mapChecked(g, c)
}

// checked returns o with its defaults set and g checked, or the options'
// or the graph's diagnostics.
func (o Options) checked(g *Graph) (Options, *checked, error) {
	o, err := o.withDefaults()
	if err != nil {
		return o, nil, err
	}
	c, err := check(g)
	return o, c, err
}

// mapChecked maps a checked graph with options that have their defaults.
func (o Options) mapChecked(g *Graph, c *checked) (*schedule.Program, error) {
	n, k := len(g.Tasks), o.Iterations
	total := k*(n-1) + o.Workers
	if o.Residency == Exclusive {
		total += o.Schedulers*(k+1) + k
	}
	if total > schedule.MaxTasks {
		var d diags
		d.add(schedule.CodeLimit, "$.all_tasks", "%d tasks over %d iterations make %d program tasks, beyond megaproof's limit of %d", n, k, total, schedule.MaxTasks)
		return nil, d.err()
	}
	m := &mapper{o: o, c: c, g: g}
	m.build(total)
	p := m.p
	// A safety net: everything Validate checks should have been reported
	// above with an MPK path.
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

type mapper struct {
	o Options
	c *checked
	g *Graph
	p *schedule.Program

	lo, hi []int   // workers [lo[s], hi[s]) of scheduler s
	owner  []int   // the scheduler of each worker
	cursor []int   // each scheduler's round-robin cursor
	sched  []int32 // the scheduler of each position (by (p-2) mod W)
	steps  []schedule.Step
	name   []byte
}

// counter declares a counter beyond the events.
func (m *mapper) counter(name string, init uint64, width uint8) int32 {
	m.p.Counters = append(m.p.Counters, schedule.Counter{Name: name, Init: init, Width: width})
	return int32(len(m.p.Counters) - 1)
}

// queueCounter encodes a queue of capacity cap: its value starts at
// 2^32 - cap, so that it overflows its 32 bits exactly when cap entries
// are outstanding at once.
func (m *mapper) queueCounter(name string, cap int) int32 {
	return m.counter(name, 1<<32-uint64(cap), 32)
}

func (m *mapper) build(total int) {
	o, c, g := m.o, m.c, m.g
	W, S, K := o.Workers, o.Schedulers, o.Iterations
	n, nev := len(g.Tasks), len(g.Events)
	end := int32(nev - 1)
	ntEnd := uint64(g.Events[end].NumTriggers)
	exclusive := o.Residency == Exclusive && o.Dispatch == Static
	dynamic := o.Dispatch == Dynamic

	p := &schedule.Program{Name: "mpk task graph"}
	if len(o.History) > 0 {
		// Name the history given, so a report says which one it shows.
		b := []byte(p.Name + " (")
		for i, e := range o.History {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = append(b, "END("...)
			b = strconv.AppendInt(b, int64(i+1), 10)
			b = append(b, ") to scheduler "...)
			b = strconv.AppendInt(b, int64(e), 10)
		}
		p.Name = string(append(b, ')'))
	}
	m.p = p
	p.Launch = schedule.Launch{Target: o.Target, SMs: o.SMs, PerSM: 1, Workers: W}
	base := 0 // launch index of MPK worker 0
	if exclusive {
		p.Launch.Workers = S + W
		base = S
	}

	// Buffers, one per tensor name, in first-use order.
	m.buffers()

	// Counters: one per event (MPK's u64 counters, zeroed at launch).
	p.Counters = make([]schedule.Counter, nev, nev+W*K+2*S+1)
	for e := range p.Counters {
		p.Counters[e] = schedule.Counter{Name: "e" + strconv.Itoa(e), Width: 64}
	}

	positions := m.layout()
	// A scheduler that dispatches nothing is never waited for, so its
	// cursor in the broadcast queue can lag every iteration behind.
	lagging := make([]int32, S)
	for s := range S {
		lagging[s] = -1
		if positions[s] == 0 {
			lagging[s] = m.queueCounter("bqueue.s"+strconv.Itoa(s), o.SchedulerQueueLen)
		}
	}

	var dispatch, terminate []int32
	var begin int32
	if exclusive {
		dispatch, terminate = make([]int32, S), make([]int32, S)
		for s := range S {
			dispatch[s] = m.counter("dispatch.s"+strconv.Itoa(s), 0, 32)
			terminate[s] = m.counter("terminate.s"+strconv.Itoa(s), 0, 32)
		}
		begin = m.counter("begin", 0, 32)
	}

	p.Tasks = make([]schedule.Task, 0, total)
	worker := make([]int, n)          // this iteration's worker of each position
	count := make([]int, W)           // this iteration's queue entries per worker
	gated := make([]int, W)           // the iteration whose gate each worker has passed
	queue := make([]int32, max(W, S)) // this iteration's queue counter per worker (per scheduler, dynamic)
	endWorker := 0                    // the worker of the last END trigger
	ceil := (W + S - 1) / S           // get_rand_sched_id's divisor
	for k := 1; k <= K; k++ {
		uk := uint64(k)
		// BEGIN(k) goes to the cursor worker of the scheduler that
		// received END(k-1): scheduler 0 (seeded) for the first.
		e := 0
		switch {
		case k-2 >= 0 && k-2 < len(o.History):
			e = o.History[k-2]
		case k > 1:
			e = min(endWorker/ceil, S-1)
		}
		b := m.next(e)
		for w := range count {
			count[w] = 0
		}
		count[b]++
		for pos := 2; pos < n; pos++ {
			w := m.next(int(m.sched[pos]))
			worker[pos] = w
			count[w]++
		}
		if c.endLeaf >= 0 {
			endWorker = worker[c.endLeaf]
		}

		// Queue counters for this iteration.
		if dynamic {
			// Any cursor: the fullest worker of scheduler s holds
			// floor(positions/workers) entries plus BEGIN's.
			for s := range S {
				if m.hi[s] > m.lo[s] {
					queue[s] = m.queueCounter("queue.s"+strconv.Itoa(s)+".i"+strconv.Itoa(k), o.WorkerQueueLen)
				}
			}
		} else {
			for w := range W {
				queue[w] = -1
				if count[w] > 0 {
					queue[w] = m.queueCounter("queue.w"+strconv.Itoa(w)+".i"+strconv.Itoa(k), o.WorkerQueueLen)
				}
			}
		}

		if exclusive {
			// The scheduler that received END(k-1) pushes BEGIN(k).
			t := schedule.Task{Name: "s" + strconv.Itoa(e) + ".begin@" + strconv.Itoa(k), Op: "SCHEDULER", Worker: int32(e)}
			if k > 1 {
				t.Before = m.wait(end, ntEnd*(uk-1), schedule.ScopeGPU)
			}
			t.After = append(m.signal(begin, 1), m.signal(queue[b], 1)...)
			p.Tasks = append(p.Tasks, t)
			for s := range S {
				t := schedule.Task{Name: "s" + strconv.Itoa(s) + ".dispatch@" + strconv.Itoa(k), Op: "SCHEDULER", Worker: int32(s)}
				t.Before = m.wait(1, uk, schedule.ScopeGPU)
				if m.hi[s] > m.lo[s] {
					t.After = m.signal(dispatch[s], 1)
					for w := m.lo[s]; w < m.hi[s]; w++ {
						if n := count[w] - b2i(w == b); n > 0 {
							t.After = append(t.After, m.signal(queue[w], uint64(n))...)
						}
					}
				}
				p.Tasks = append(p.Tasks, t)
			}
		}

		// BEGIN(k).
		t := schedule.Task{Name: m.taskName(1, k), Op: "BEGIN_TASK_GRAPH", Worker: int32(base + b)}
		switch {
		case exclusive:
			t.Before = m.wait(begin, uk, schedule.ScopeGPU)
		case k > 1:
			t.Before = m.wait(end, ntEnd*(uk-1), schedule.ScopeGPU)
		}
		if dynamic {
			t.Worker = schedule.Dynamic
		}
		after := m.signal(1, 1)
		for s := range S {
			if lagging[s] >= 0 {
				after = append(after, m.signal(lagging[s], 1)...)
			}
		}
		switch {
		case dynamic:
			for s := range S {
				if m.hi[s] > m.lo[s] {
					after = append(after, m.signal(queue[s], uint64(positions[s]/(m.hi[s]-m.lo[s])+1))...)
				}
			}
		case !exclusive:
			for w := range W {
				if count[w] > 0 {
					after = append(after, m.signal(queue[w], uint64(count[w]))...)
				}
			}
		}
		t.After = after
		p.Tasks = append(p.Tasks, t)

		// The tasks of iteration k, in position order (each worker's
		// queue order).
		for pos := 2; pos < n; pos++ {
			gt := &g.Tasks[pos]
			t := schedule.Task{Name: m.taskName(pos, k), Op: TaskTypeName(gt.Type), Reads: c.reads[pos], Writes: c.writes[pos]}
			var before []schedule.Step
			w := worker[pos]
			switch {
			case dynamic:
				t.Worker = schedule.Dynamic
				before = m.wait(1, uk, schedule.ScopeGPU)
			case gated[w] < k:
				// The worker's first task of the iteration: its
				// scheduler dispatches it once the launch event fires.
				t.Worker = int32(base + w)
				gated[w] = k
				if exclusive {
					before = m.wait(dispatch[m.owner[w]], uk, schedule.ScopeGPU)
				} else {
					before = m.wait(1, uk, schedule.ScopeGPU)
				}
			default:
				t.Worker = int32(base + w)
			}
			if d := c.dep[pos]; d >= 0 && g.Events[d].NumTriggers > 0 {
				before = append(before, m.wait(d, uint64(g.Events[d].NumTriggers)*uk, schedule.ScopeSys)...)
			}
			t.Before = before
			if tr := c.trig[pos]; tr >= 0 {
				t.After = m.signal(tr, 1)
			}
			p.Tasks = append(p.Tasks, t)
		}
	}

	if dynamic {
		return
	}
	if exclusive {
		for s := range S {
			t := schedule.Task{Name: "s" + strconv.Itoa(s) + ".end", Op: "SCHEDULER", Worker: int32(s)}
			t.Before = m.wait(end, ntEnd*uint64(K), schedule.ScopeGPU)
			if m.hi[s] > m.lo[s] {
				t.After = m.signal(terminate[s], 1)
			}
			p.Tasks = append(p.Tasks, t)
		}
	}
	// Every worker runs until TERMINATE, pushed once the last iteration's
	// END has fired.
	for w := range W {
		t := schedule.Task{Name: "w" + strconv.Itoa(w) + ".TERMINATE", Op: "TERMINATE", Worker: int32(base + w)}
		if exclusive {
			t.Before = m.wait(terminate[m.owner[w]], 1, schedule.ScopeGPU)
		} else {
			t.Before = m.wait(end, ntEnd*uint64(K), schedule.ScopeGPU)
		}
		p.Tasks = append(p.Tasks, t)
	}
}

// layout computes the schedulers' workers (get_first_last_ids, an even
// split with the first W mod S schedulers one worker larger), the
// scheduler of each position and the cursors' start, and returns the
// positions each scheduler dispatches per iteration.
func (m *mapper) layout() []int {
	W, S, n := m.o.Workers, m.o.Schedulers, len(m.g.Tasks)
	m.lo, m.hi, m.cursor = make([]int, S), make([]int, S), make([]int, S)
	m.owner = make([]int, W)
	for s := range S {
		m.lo[s] = s*(W/S) + min(s, W%S)
		m.hi[s] = m.lo[s] + W/S
		if s < W%S {
			m.hi[s]++
		}
		m.cursor[s] = m.lo[s]
		for w := m.lo[s]; w < m.hi[s]; w++ {
			m.owner[w] = s
		}
	}
	positions := make([]int, S)
	m.sched = make([]int32, n)
	for pos := 2; pos < n; pos++ {
		s := m.owner[(pos-2)%W]
		m.sched[pos] = int32(s)
		positions[s]++
	}
	return positions
}

// next returns scheduler s's cursor worker and advances the cursor.
func (m *mapper) next(s int) int {
	w := m.cursor[s]
	m.cursor[s]++
	if m.cursor[s] == m.hi[s] {
		m.cursor[s] = m.lo[s]
	}
	return w
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// wait returns one acquire wait, carved from a shared slab.
func (m *mapper) wait(c int32, k uint64, scope schedule.Scope) []schedule.Step {
	return m.step(schedule.Step{Kind: schedule.Wait, Object: c, Value: k, Scope: scope})
}

// signal returns one release signal at gpu scope (atom.add.release.gpu).
func (m *mapper) signal(c int32, n uint64) []schedule.Step {
	return m.step(schedule.Step{Kind: schedule.Signal, Object: c, Value: n})
}

func (m *mapper) step(s schedule.Step) []schedule.Step {
	if cap(m.steps)-len(m.steps) < 1 {
		m.steps = make([]schedule.Step, 0, 8192)
	}
	m.steps = append(m.steps, s)
	i := len(m.steps)
	return m.steps[i-1 : i : i]
}

// taskName is "t<pos>.<TYPE>@<k>", e.g. "t6.LINEAR@1".
func (m *mapper) taskName(pos, k int) string {
	b := append(m.name[:0], 't')
	b = strconv.AppendInt(b, int64(pos), 10)
	b = append(b, '.')
	b = append(b, TaskTypeName(m.g.Tasks[pos].Type)...)
	b = append(b, '@')
	b = strconv.AppendInt(b, int64(k), 10)
	m.name = b
	return string(b)
}

// buffers declares one buffer per tensor name: its size the end of its
// farthest tile, input when no task writes it and state otherwise, placed
// in an arena when the options say so.
func (m *mapper) buffers() {
	c, p := m.c, m.p
	p.Buffers = make([]schedule.Buffer, len(c.bufNames))
	arenas := map[string]int32{}
	for i, name := range c.bufNames {
		b := schedule.Buffer{Name: name, Kind: schedule.KindInput, Size: uint64(max(1, c.maxEnd[i])), Arena: schedule.NoArena}
		if c.written[i] {
			b.Kind = schedule.KindState
		}
		if ti, ok := m.o.Tensors[name]; ok {
			if ti.Size != 0 {
				b.Size = ti.Size
			}
			if ti.Kind != 0 {
				b.Kind = ti.Kind
			}
			if ti.Arena != "" {
				a, ok := arenas[ti.Arena]
				if !ok {
					a = int32(len(p.Arenas))
					arenas[ti.Arena] = a
					p.Arenas = append(p.Arenas, schedule.Arena{Name: ti.Arena})
				}
				b.Arena, b.Offset = a, ti.Offset
				p.Arenas[a].Size = max(p.Arenas[a].Size, ti.Offset+b.Size)
			}
		}
		p.Buffers[i] = b
	}
}
