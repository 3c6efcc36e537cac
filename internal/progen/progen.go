package progen

import (
	"fmt"
	"slices"

	"github.com/megaproof/megaproof/schedule"
	"pgregory.net/rapid"
)

// Options bounds and shapes the generated programs.
type Options struct {
	// MaxThreads bounds the threads of the normal form: workers plus
	// dynamic tasks.
	MaxThreads int
	// MaxSteps bounds the operations of one thread in normal form (each
	// task costs two for its body, a barrier sync two).
	MaxSteps int
	// Semaphores, Barriers, Relaxed (relaxed orders and fences), Scopes (cta
	// and sys), Dynamic (unpinned tasks), Aliasing (arenas) and Residency
	// (non-cooperative launches with small capacity, and cooperative ones
	// beyond it) switch parts of the model on. Semaphores have one to
	// three tokens; a task acquires and releases one or two of them (or
	// only releases, or only acquires), so pools of several acquiring
	// threads, multi-token acquires, releases from many threads and
	// dynamic tasks with an acquire in their guard all occur.
	Semaphores, Barriers, Relaxed, Scopes, Dynamic, Aliasing, Residency bool
	// Blocking gives some dynamic tasks steps that block after their
	// guard, so that they hold the worker that claims them: a barrier
	// sync shared by several dynamic tasks, or a wait after the body. It
	// draws after everything else, so a program drawn with it differs from
	// the one drawn without it only by those steps.
	Blocking bool
	// Phases reuses the barrier of the workers' first tasks for a second
	// generation: the last task of each participating worker syncs it
	// again (after its body, or before it), or only arrives (an
	// arrive-only participant), or skips it (a participant one episode
	// short). Like Blocking it draws after everything else, so a program
	// drawn with it differs from the one drawn without it only by those
	// steps.
	Phases bool
	// MaxTasks bounds the tasks of a program.
	MaxTasks int
}

// Small returns options for explorer-sized programs: up to 6 threads of 8
// steps with every feature on.
func Small() Options {
	return Options{MaxThreads: 6, MaxSteps: 8, Semaphores: true, Barriers: true, Relaxed: true,
		Scopes: true, Dynamic: true, Aliasing: true, Residency: true, Blocking: true, MaxTasks: 12}
}

// Medium returns options for programs of up to about 200 tasks without
// semaphores, for comparing a fast checker with a slow definitional one.
func Medium() Options {
	return Options{MaxThreads: 48, MaxSteps: 40, Barriers: true, Relaxed: true,
		Scopes: true, Dynamic: true, Aliasing: true, Residency: true, MaxTasks: 200}
}

// Spec types: the drawn shape of a program, before thresholds and limits
// are resolved. Every list is drawn with rapid.SliceOfN so rapid shrinks
// it, and every choice shrinks toward its safest, simplest value.
type bufSpec struct {
	kind  schedule.BufferKind
	size  uint64
	arena int // -1 none, else 0 or 1 (with Aliasing)
	off   uint64
}

type accSpec struct {
	buf  int    // index modulo the buffers
	off  uint64 // 8-byte slots
	len  uint64 // 8-byte slots, 0 = to the end of the buffer
	rows uint64 // 0 = 1-D
	ro   bool   // may target a read-only buffer (a write) or an uninitialized one (a read)
}

type waitSpec struct {
	ctr     int
	mode    int    // 0 all signals before this task, 1 part of them, 2 any threshold
	q       uint64 // picks the threshold for modes 1 and 2
	relaxed bool
	scope   schedule.Scope
}

type sigSpec struct {
	ctr     int
	amount  uint64
	relaxed bool
	scope   schedule.Scope
}

type semSpec struct {
	sem      int
	n        uint64
	noAcq    bool // release only
	noRel    bool // acquire only
	relScope schedule.Scope
}

type taskSpec struct {
	ordered bool // waits for every earlier signal on counter 0 and signals it
	worker  int
	dyn     bool
	waits   []waitSpec
	sigs    []sigSpec
	sems    []semSpec
	fenceB  int // 0 none, else scope+1
	fenceA  int
	reads   []accSpec
	writes  []accSpec
}

var kinds = []schedule.BufferKind{schedule.KindState, schedule.KindScratch, schedule.KindInput, schedule.KindWeight, schedule.KindOutput}

// Program returns a generator of valid programs shaped by o.
func Program(o Options) *rapid.Generator[*schedule.Program] {
	o = o.norm()
	return rapid.Custom(func(t *rapid.T) *schedule.Program { return draw(t, o) })
}

func (o Options) norm() Options {
	o.MaxThreads = max(o.MaxThreads, 1)
	o.MaxSteps = max(o.MaxSteps, 2)
	o.MaxTasks = max(o.MaxTasks, 1)
	return o
}

func percent(t *rapid.T, label string) int { return rapid.IntRange(0, 99).Draw(t, label) }

func scope(t *rapid.T, o Options, label string) schedule.Scope {
	if !o.Scopes {
		return schedule.ScopeGPU
	}
	switch p := percent(t, label); {
	case p < 85:
		return schedule.ScopeGPU
	case p < 93:
		return schedule.ScopeSys
	}
	return schedule.ScopeCTA
}

func draw(t *rapid.T, o Options) *schedule.Program {
	maxWorkers := max(1, o.MaxThreads)
	workers := rapid.IntRange(1, maxWorkers).Draw(t, "workers")
	launch := schedule.Launch{Target: "gen", SMs: workers, PerSM: 1, Workers: workers, Cooperative: true}
	if o.Residency {
		switch p := percent(t, "residency"); {
		case p < 70:
		case p < 95:
			launch.Cooperative = false
			launch.SMs = rapid.IntRange(1, workers).Draw(t, "sms")
		default:
			launch.SMs = rapid.IntRange(1, workers).Draw(t, "sms")
		}
	}

	nArenas := 0
	if o.Aliasing {
		nArenas = rapid.IntRange(0, 2).Draw(t, "arenas")
	}
	bufs := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) bufSpec {
		b := bufSpec{arena: -1}
		b.kind = kinds[rapid.IntRange(0, len(kinds)-1).Draw(t, "kind")]
		b.size = 8 * uint64(rapid.IntRange(1, 8).Draw(t, "slots"))
		if nArenas > 0 && rapid.IntRange(0, 2).Draw(t, "in-arena") == 2 {
			b.arena = rapid.IntRange(0, nArenas-1).Draw(t, "arena")
			b.off = 8 * uint64(rapid.IntRange(0, 4).Draw(t, "arena-off"))
		}
		return b
	}), 1, 4).Draw(t, "buffers")

	// How many tasks join the total order on counter 0: the main knob of
	// the safe/unsafe mix. It shrinks toward fully ordered.
	orderPct := rapid.SampledFrom([]int{100, 95, 80, 50, 0}).Draw(t, "ordered")
	nCounters := rapid.IntRange(1, 3).Draw(t, "counters")
	counters := make([]schedule.Counter, nCounters)
	for i := range counters {
		counters[i] = schedule.Counter{Name: fmt.Sprintf("c%d", i), Width: 32}
		switch p := percent(t, "counter-init"); {
		case p < 80:
		case p < 97:
			counters[i].Init = uint64(rapid.IntRange(1, 2).Draw(t, "init"))
		default:
			if i > 0 { // counter 0 carries the ordering chain
				counters[i].Init = 1<<32 - 2
			}
		}
	}
	nSems := 0
	if o.Semaphores {
		nSems = rapid.IntRange(0, 2).Draw(t, "semaphores")
	}
	sems := make([]schedule.Semaphore, nSems)
	for i := range sems {
		sems[i] = schedule.Semaphore{Name: fmt.Sprintf("s%d", i), Tokens: uint64(rapid.IntRange(1, 3).Draw(t, "tokens"))}
	}

	acc := rapid.Custom(func(t *rapid.T) accSpec {
		a := accSpec{buf: rapid.IntRange(0, 3).Draw(t, "buf")}
		a.off = uint64(rapid.IntRange(0, 7).Draw(t, "off"))
		a.len = uint64(rapid.IntRange(0, 4).Draw(t, "len"))
		if percent(t, "tile") >= 85 {
			a.rows = uint64(rapid.IntRange(2, 3).Draw(t, "rows"))
		}
		a.ro = percent(t, "any-buffer") >= 90
		return a
	})
	taskGen := rapid.Custom(func(t *rapid.T) taskSpec {
		ts := taskSpec{worker: rapid.IntRange(0, workers-1).Draw(t, "worker")}
		ts.ordered = percent(t, "task-ordered") < orderPct
		if o.Dynamic {
			ts.dyn = percent(t, "dynamic") >= 75
		}
		if nCounters > 0 {
			ts.waits = rapid.SliceOfN(rapid.Custom(func(t *rapid.T) waitSpec {
				w := waitSpec{ctr: rapid.IntRange(0, nCounters-1).Draw(t, "ctr")}
				switch p := percent(t, "wait-mode"); {
				case p < 65:
				case p < 88:
					w.mode = 1
				default:
					w.mode = 2
				}
				w.q = uint64(rapid.IntRange(0, 7).Draw(t, "q"))
				w.relaxed = o.Relaxed && percent(t, "relaxed-wait") >= 85
				w.scope = scope(t, o, "wait-scope")
				return w
			}), 0, 2).Draw(t, "waits")
			ts.sigs = rapid.SliceOfN(rapid.Custom(func(t *rapid.T) sigSpec {
				s := sigSpec{ctr: rapid.IntRange(0, nCounters-1).Draw(t, "ctr"), amount: 1}
				if percent(t, "amount") >= 85 {
					s.amount = 2
				}
				s.relaxed = o.Relaxed && percent(t, "relaxed-signal") >= 85
				s.scope = scope(t, o, "signal-scope")
				return s
			}), 0, 2).Draw(t, "signals")
		}
		if nSems > 0 {
			ts.sems = rapid.SliceOfN(rapid.Custom(func(t *rapid.T) semSpec {
				s := semSpec{sem: rapid.IntRange(0, nSems-1).Draw(t, "sem"), n: 1}
				if percent(t, "sem-tokens") >= 80 {
					s.n = 2 // several tokens per acquire and release
				}
				switch p := percent(t, "sem-shape"); {
				case p < 75:
				case p < 87:
					s.noAcq = true
				default:
					s.noRel = true
				}
				s.relScope = scope(t, o, "sem-scope")
				return s
			}), 0, 1).Draw(t, "sems")
		}
		if o.Relaxed {
			if percent(t, "fence-before") >= 85 {
				ts.fenceB = int(scope(t, o, "fence-scope")) + 1
			}
			if percent(t, "fence-after") >= 85 {
				ts.fenceA = int(scope(t, o, "fence-scope")) + 1
			}
		}
		ts.reads = rapid.SliceOfN(acc, 0, 2).Draw(t, "reads")
		ts.writes = rapid.SliceOfN(acc, 0, 2).Draw(t, "writes")
		return ts
	})
	// rapid keeps slices short; large option sets draw their length.
	minTasks := 1
	if o.MaxTasks > 20 {
		minTasks = rapid.IntRange(1, o.MaxTasks).Draw(t, "min-tasks")
	}
	tasks := rapid.SliceOfN(taskGen, minTasks, o.MaxTasks).Draw(t, "tasks")
	oob := percent(t, "out-of-bounds") >= 97
	fillOutputs := percent(t, "fill-outputs") < 85

	type barSpec struct {
		mask  uint64
		wrong int
	}
	var bars []barSpec
	if o.Barriers && workers > 1 && percent(t, "barrier") >= 75 {
		b := barSpec{mask: uint64(rapid.IntRange(3, 1<<min(workers, 16)-1).Draw(t, "participants"))}
		if percent(t, "barrier-wrong") >= 80 {
			b.wrong = 1
		}
		bars = append(bars, b)
	}
	p := assemble(o, launch, nArenas, bufs, counters, sems, tasks, oob, fillOutputs, func(w int) (int, bool) {
		// Which barrier the first task of worker w syncs on, and its parties.
		for i, b := range bars {
			if w < 64 && b.mask&(1<<w) != 0 {
				return i, true
			}
		}
		return 0, false
	}, func(i int, participants int) int {
		return max(1, participants+bars[i].wrong)
	}, len(bars))
	if o.Blocking && o.Dynamic {
		block(t, o, p)
	}
	if o.Phases {
		phases(t, o, p)
	}
	return p
}

// phases gives the barrier the first tasks sync (p's first barrier, when
// some worker's first task syncs one) a second generation on the last
// task of each participating worker: a sync after its body or before it,
// an arrive after it, or nothing. A worker whose thread has no room for
// the steps within o.MaxSteps keeps one generation.
func phases(t *rapid.T, o Options, p *schedule.Program) {
	if len(p.Barriers) == 0 {
		return
	}
	w := p.Launch.Workers
	steps, last, part := make([]int, w), make([]int, w), make([]bool, w)
	for i := range last {
		last[i] = -1
	}
	for i := range p.Tasks {
		tk := &p.Tasks[i]
		if !tk.Pinned() {
			continue
		}
		steps[tk.Worker] += opCount(tk)
		last[tk.Worker] = i
		part[tk.Worker] = part[tk.Worker] || slices.ContainsFunc(tk.Before, func(s schedule.Step) bool { return s.Kind == schedule.Sync && s.Object == 0 })
	}
	for k := range w {
		if !part[k] {
			continue
		}
		kind := percent(t, "phase-kind")
		tk := &p.Tasks[last[k]]
		switch {
		case kind < 55 && steps[k]+2 <= o.MaxSteps:
			tk.After = append(tk.After, schedule.Step{Kind: schedule.Sync})
		case kind < 70 && steps[k]+2 <= o.MaxSteps:
			tk.Before = append(tk.Before, schedule.Step{Kind: schedule.Sync})
		case kind < 88 && steps[k]+1 <= o.MaxSteps:
			tk.After = append(tk.After, schedule.Step{Kind: schedule.Arrive})
		}
	}
}

// blockSpec is one blocking step given to a dynamic task.
type blockSpec struct {
	task  int  // which dynamic task, modulo their number
	sync  bool // a sync on the dynamic tasks' barrier, else a wait after the body
	ctr   int  // the wait's counter, modulo the counters
	q     uint64
	wrong bool // the barrier gets one party too many
	scope schedule.Scope
}

// block gives some dynamic tasks of p steps that block after their guard:
// a sync on one barrier shared by the tasks that sync it (as many parties
// as syncs, or one more), or a wait after the body for part or all of its
// counter's signals. Steps beyond o.MaxSteps are dropped.
func block(t *rapid.T, o Options, p *schedule.Program) {
	specs := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) blockSpec {
		b := blockSpec{task: rapid.IntRange(0, 11).Draw(t, "block-task")}
		b.sync = percent(t, "block-kind") < 50
		b.ctr = rapid.IntRange(0, 2).Draw(t, "block-ctr")
		b.q = uint64(rapid.IntRange(0, 7).Draw(t, "block-q"))
		b.wrong = percent(t, "block-wrong") >= 80
		b.scope = scope(t, o, "block-scope")
		return b
	}), 0, 3).Draw(t, "blocking")
	var dyn []int
	for i := range p.Tasks {
		if !p.Tasks[i].Pinned() {
			dyn = append(dyn, i)
		}
	}
	if len(dyn) == 0 || len(specs) == 0 {
		return
	}
	total := make([]uint64, len(p.Counters))
	for c, k := range p.Counters {
		total[c] = k.Init
	}
	for i := range p.Tasks {
		for _, s := range p.Tasks[i].After {
			if s.Kind == schedule.Signal {
				total[s.Object] += s.Value
			}
		}
	}
	syncs, wrong := 0, false
	bar := int32(len(p.Barriers))
	for _, b := range specs {
		tk := &p.Tasks[dyn[b.task%len(dyn)]]
		if b.sync {
			if opCount(tk)+2 > o.MaxSteps || slices.ContainsFunc(tk.Before, func(s schedule.Step) bool { return s.Kind == schedule.Sync && s.Object == bar }) {
				continue
			}
			tk.Before = append(tk.Before, schedule.Step{Kind: schedule.Sync, Object: bar})
			syncs++
			wrong = wrong || b.wrong
			continue
		}
		c := b.ctr % len(p.Counters)
		if opCount(tk)+1 > o.MaxSteps || total[c] == 0 {
			continue
		}
		k := min(1+b.q%total[c], p.Counters[c].Max())
		tk.After = append(tk.After, schedule.Step{Kind: schedule.Wait, Object: int32(c), Value: k, Scope: b.scope})
	}
	if syncs > 0 {
		parties := syncs
		if wrong {
			parties++
		}
		p.Barriers = append(p.Barriers, schedule.Barrier{Name: fmt.Sprintf("bar%d", bar), Parties: parties})
	}
}

// assemble turns the drawn specs into a valid program within o's limits.
func assemble(o Options, launch schedule.Launch, nArenas int, bufs []bufSpec, counters []schedule.Counter,
	sems []schedule.Semaphore, tasks []taskSpec, oob, fillOutputs bool, barOf func(int) (int, bool), parties func(int, int) int, nBars int) *schedule.Program {
	p := &schedule.Program{Name: "gen", Launch: launch, Counters: counters, Semaphores: sems}
	for i := 0; i < nArenas; i++ {
		p.Arenas = append(p.Arenas, schedule.Arena{Name: fmt.Sprintf("a%d", i), Size: 128})
	}
	for i, b := range bufs {
		bf := schedule.Buffer{Name: fmt.Sprintf("b%d", i), Kind: b.kind, Size: b.size, Arena: schedule.NoArena}
		if b.arena >= 0 {
			bf.Arena = int32(b.arena)
			bf.Offset = b.off
		}
		p.Buffers = append(p.Buffers, bf)
	}

	// Threads: dynamic tasks beyond the thread limit are pinned instead.
	threads := launch.Workers
	steps := make([]int, launch.Workers) // per worker: operations so far
	firstOf := make([]int, launch.Workers)
	for i := range firstOf {
		firstOf[i] = -1
	}
	before := make([]uint64, len(counters)) // per counter: init + signals of earlier tasks
	total := make([]uint64, len(counters))
	for c := range counters {
		before[c] = counters[c].Init
		total[c] = counters[c].Init
	}
	for _, ts := range tasks {
		for _, s := range ts.sigs {
			total[s.ctr] += s.amount
		}
		if ts.ordered {
			total[0]++
		}
	}
	for _, ts := range tasks {
		if len(p.Tasks) >= o.MaxTasks {
			break
		}
		i := len(p.Tasks)
		tk := schedule.Task{Name: fmt.Sprintf("t%d", i), Op: "op", Worker: int32(ts.worker)}
		budget := o.MaxSteps - 2
		if ts.dyn && threads < o.MaxThreads {
			tk.Worker = schedule.Dynamic
		} else {
			budget -= steps[ts.worker]
		}
		if budget < 0 {
			continue
		}
		syncBar, hasBar := -1, false
		if tk.Worker != schedule.Dynamic && firstOf[ts.worker] < 0 && budget >= 2 {
			if b, ok := barOf(ts.worker); ok {
				syncBar, hasBar = b, true
			}
		}
		if hasBar {
			tk.Before = append(tk.Before, schedule.Step{Kind: schedule.Sync, Object: int32(syncBar)})
			budget -= 2
		}
		take := func(s schedule.Step, after bool) {
			if budget <= 0 {
				return
			}
			budget--
			if after {
				tk.After = append(tk.After, s)
			} else {
				tk.Before = append(tk.Before, s)
			}
		}
		if ts.ordered && before[0] > 0 {
			take(schedule.Step{Kind: schedule.Wait, Object: 0, Value: min(before[0], counters[0].Max())}, false)
		}
		var orderSig bool
		if ts.ordered {
			orderSig = budget > 0
			budget--
		}
		for _, w := range ts.waits {
			var k uint64
			switch w.mode {
			case 0:
				k = before[w.ctr]
			case 1:
				if before[w.ctr] > 0 {
					k = 1 + w.q%before[w.ctr]
				}
			default:
				k = 1 + w.q%(total[w.ctr]+2)
			}
			k = min(k, counters[w.ctr].Max())
			if k == 0 {
				continue
			}
			take(schedule.Step{Kind: schedule.Wait, Object: int32(w.ctr), Value: k, Relaxed: w.relaxed, Scope: w.scope}, false)
		}
		for _, s := range ts.sems {
			if !s.noAcq {
				take(schedule.Step{Kind: schedule.Acquire, Object: int32(s.sem), Value: s.n, Scope: s.relScope}, false)
			}
		}
		if ts.fenceB > 0 {
			take(schedule.Step{Kind: schedule.Fence, Scope: schedule.Scope(ts.fenceB - 1)}, false)
		}
		if ts.fenceA > 0 {
			take(schedule.Step{Kind: schedule.Fence, Scope: schedule.Scope(ts.fenceA - 1)}, true)
		}
		for _, s := range ts.sems {
			if !s.noRel {
				take(schedule.Step{Kind: schedule.Release, Object: int32(s.sem), Value: s.n, Scope: s.relScope}, true)
			}
		}
		for _, s := range ts.sigs {
			n := len(tk.After)
			take(schedule.Step{Kind: schedule.Signal, Object: int32(s.ctr), Value: s.amount, Relaxed: s.relaxed, Scope: s.scope}, true)
			if len(tk.After) > n {
				before[s.ctr] += s.amount
			}
		}
		if orderSig {
			budget++
			take(schedule.Step{Kind: schedule.Signal, Object: 0, Value: 1}, true)
			before[0]++
		}
		for _, a := range ts.reads {
			if acc, ok := access(p, a, false); ok {
				tk.Reads = append(tk.Reads, acc)
			}
		}
		for _, a := range ts.writes {
			if acc, ok := access(p, a, true); ok {
				tk.Writes = append(tk.Writes, acc)
			}
		}
		if tk.Worker == schedule.Dynamic {
			threads++
		} else {
			steps[ts.worker] += opCount(&tk)
			if firstOf[ts.worker] < 0 {
				firstOf[ts.worker] = i
			}
		}
		p.Tasks = append(p.Tasks, tk)
	}
	if oob {
		for i := range p.Tasks {
			if ws := p.Tasks[i].Writes; len(ws) > 0 {
				ws[0].Offset += int64(p.Buffers[ws[0].Buffer].Size)
				break
			}
		}
	}
	if fillOutputs && len(p.Tasks) > 0 {
		// The last task writes what no task writes of each output buffer.
		last := &p.Tasks[len(p.Tasks)-1]
		for bi, b := range p.Buffers {
			if b.Kind != schedule.KindOutput {
				continue
			}
			for off := uint64(0); off < b.Size; off += 8 {
				if !written(p, int32(bi), int64(off)) {
					last.Writes = append(last.Writes, schedule.Access{Buffer: int32(bi), Offset: int64(off), Length: 8})
				}
			}
		}
	}
	// Barriers: parties from the workers whose first task syncs.
	count := make([]int, nBars)
	for _, f := range firstOf {
		if f < 0 {
			continue
		}
		for _, s := range p.Tasks[f].Before {
			if s.Kind == schedule.Sync {
				count[s.Object]++
			}
		}
	}
	for i := 0; i < nBars; i++ {
		p.Barriers = append(p.Barriers, schedule.Barrier{Name: fmt.Sprintf("bar%d", i), Parties: parties(i, count[i])})
	}
	return p
}

// access resolves an access spec against the program's buffers. Unless
// a.ro, a write goes to a writable buffer and a read mostly to an
// initialized one; ok is false when there is none.
func access(p *schedule.Program, a accSpec, write bool) (schedule.Access, bool) {
	bi := a.buf % len(p.Buffers)
	if !a.ro {
		found := false
		for k := 0; k < len(p.Buffers) && !found; k++ {
			j := (a.buf + k) % len(p.Buffers)
			kind := p.Buffers[j].Kind
			if write && !kind.ReadOnly() || !write && kind.Initialized() {
				bi, found = j, true
			}
		}
		if !found && write {
			return schedule.Access{}, false
		}
	}
	size := p.Buffers[bi].Size
	slots := size / 8
	off := (a.off % slots) * 8
	n := a.len * 8
	if n == 0 || off+n > size {
		n = size - off
	}
	acc := schedule.Access{Buffer: int32(bi), Offset: int64(off), Length: n}
	if rows := min(a.rows, size/16); rows >= 2 {
		// A 2-D tile: rows of one slot, stride two slots (a column slice).
		acc = schedule.Access{Buffer: int32(bi), Offset: int64(off % 16), Length: 8, Rows: rows, Stride: 16}
	}
	return acc, true
}

// opCount is the number of normal-form operations of a task.
func opCount(t *schedule.Task) int {
	n := 2 + len(t.Before) + len(t.After)
	for _, s := range t.Before {
		if s.Kind == schedule.Sync {
			n++
		}
	}
	for _, s := range t.After {
		if s.Kind == schedule.Sync {
			n++
		}
	}
	return n
}

// written reports whether some task writes byte off of buffer b.
func written(p *schedule.Program, b int32, off int64) bool {
	for i := range p.Tasks {
		for _, w := range p.Tasks[i].Writes {
			if w.Buffer != b {
				continue
			}
			for lo, hi := range w.Spans() {
				if lo <= off && off < hi {
					return true
				}
			}
		}
	}
	return false
}
