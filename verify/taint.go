package verify

// The taint game decides happens-before exactly when some dependencies do
// not synchronize (relaxed or cta-scoped operations, or a worker that can
// only start once another has finished).
//
// Given source bodies, a step is tainted in an execution when some source
// happens before it. A target body that can execute untainted is not
// ordered after any source. Taint flows along program order and through
// synchronizes-with: an acquire wait (or the fence after a relaxed wait) is
// tainted once any releasing add with a tainted release point has executed
// on its object before it ("the object is poisoned"). Executing everything
// else as early as possible never hurts: clean adds only enable, tainted
// non-releasing adds carry no order, and waits only get worse by waiting.
// The single choice is when to poison each object. Poisoning an object that
// no untainted thread will ever acquire again is free; otherwise the game
// branches over the objects it could poison next, except where every edge
// synchronizes: there every add releases, so poisoning only enables
// tainted steps, and the game is one withhold-run of the sources.

const maxGameLeaves = 64

// syncingLeaf ends a game where every edge synchronizes at its first
// branch point; tests compare both ways.
var syncingLeaf = true

type game struct {
	f        *form
	resident bool
	capacity int

	pos       []int32
	taintAt   []int32 // per thread: op index from which it is tainted
	pendFence []bool  // per thread: a relaxed wait observed a poisoned object
	val       []uint64
	poisoned  []bool
	relevant  []int32 // per object: unexecuted acquiring waits in untainted threads
	heaps     [][]waitEntry
	held      [][]int32 // per object: threads stopped at a poisoning add
	ready     []int32
	started   int
	finished  int
	dynLeft   int    // dynamic threads that have not finished (workers stay resident meanwhile)
	source    []bool // per task
	trace     []int32
	// srcOp, when ≥ 0, is a source operation (tainting its thread from it
	// on) instead of or beside source bodies; targetOp, when ≥ 0, is a
	// target operation: clean(-1, trace) is called when it executes
	// untainted.
	srcOp, targetOp int32
	// work counts the operations executed and copied by the game and its
	// branches together (shared by clones).
	work *int64
}

const untainted = int32(1<<31 - 1)

// acquiring reports whether wait x can synchronize (itself or via a fence).
func (f *form) acquiring(x int32) bool { return f.kind[x] == kWait && f.link[x] >= 0 }

func newGame(f *form, sources []int32) *game {
	n := f.threads()
	g := &game{
		f:         f,
		pos:       make([]int32, n),
		taintAt:   make([]int32, n),
		pendFence: make([]bool, n),
		val:       append([]uint64(nil), f.init...),
		poisoned:  make([]bool, len(f.init)),
		relevant:  make([]int32, len(f.init)),
		heaps:     make([][]waitEntry, len(f.init)),
		held:      make([][]int32, len(f.init)),
		source:    make([]bool, len(f.p.Tasks)),
		srcOp:     -1,
		targetOp:  -1,
		work:      new(int64),
	}
	p := f.p
	g.resident = p.Launch.Cooperative || capacity(p.Launch) >= p.Launch.Workers || residencyIgnored()
	g.capacity = capacity(p.Launch)
	for _, s := range sources {
		g.source[s] = true
	}
	for x := range f.kind {
		if f.acquiring(int32(x)) {
			g.relevant[f.obj[x]]++
		}
	}
	for t := n - 1; t >= 0; t-- {
		g.pos[t] = f.start[t]
		g.taintAt[t] = untainted
		if t >= f.workers || g.resident {
			g.ready = append(g.ready, int32(t))
		}
	}
	g.dynLeft = n - f.workers
	if g.resident {
		g.started = f.workers
	} else {
		g.startWorkers()
	}
	return g
}

func (g *game) clone() *game {
	c := *g
	c.pos = append([]int32(nil), g.pos...)
	c.taintAt = append([]int32(nil), g.taintAt...)
	c.pendFence = append([]bool(nil), g.pendFence...)
	c.val = append([]uint64(nil), g.val...)
	c.poisoned = append([]bool(nil), g.poisoned...)
	c.relevant = append([]int32(nil), g.relevant...)
	c.heaps = make([][]waitEntry, len(g.heaps))
	for i, h := range g.heaps {
		c.heaps[i] = append([]waitEntry(nil), h...)
	}
	c.held = make([][]int32, len(g.held))
	for i, h := range g.held {
		c.held[i] = append([]int32(nil), h...)
	}
	c.ready = append([]int32(nil), g.ready...)
	c.trace = append([]int32(nil), g.trace...)
	*g.work += int64(len(g.trace) + len(g.pos) + len(g.val))
	return &c
}

// exited is the number of started workers that have left their slot: a
// worker exits once its thread has finished and every dynamic task has
// ended.
func (g *game) exited() int {
	if g.dynLeft > 0 {
		return 0
	}
	return g.finished
}

func (g *game) startWorkers() {
	f := g.f
	for g.started < f.workers && g.started-g.exited() < g.capacity {
		w := g.started
		g.started++
		if f.start[w] == f.start[w+1] {
			g.finished++
		} else {
			g.ready = append(g.ready, int32(w))
		}
	}
}

// taint marks thread t tainted from op x on (x is executing now and has
// been accounted for by the caller).
func (g *game) taint(t int, x int32) {
	if g.taintAt[t] <= x {
		return
	}
	g.taintAt[t] = x
	f := g.f
	for y := x + 1; y < f.start[t+1]; y++ {
		if f.acquiring(y) {
			g.relevant[f.obj[y]]--
		}
	}
}

// play runs the game to the end, calling clean(task, trace) for every
// target body that executes untainted, and returns false if it gave up
// after too many branches.
func (g *game) play(isTarget []bool, clean func(task int32, trace []int32) bool) bool {
	leaves := 0
	var rec func(g *game) bool
	rec = func(g *game) bool {
		for {
			if !g.runClean(isTarget, clean) {
				return true // the caller has all it wants
			}
			var cands []int32
			free := int32(-1)
			for o, h := range g.held {
				if len(h) == 0 {
					continue
				}
				if g.relevant[o] == 0 {
					free = int32(o)
					break
				}
				cands = append(cands, int32(o))
			}
			if free >= 0 {
				g.poison(free)
				continue
			}
			if len(cands) == 0 || (g.f.syncing && syncingLeaf) {
				// With every edge synchronizing (and every worker
				// resident), what poisoning an object that an untainted
				// thread still acquires enables is tainted: its
				// acquirers, and through their adds what they enable
				// (a guard's pre-check, which synchronizes nothing,
				// only lets its thread reach the guard's own wait on
				// the same object). Everything enabled without
				// poisoning has run: no target runs untainted past here.
				leaves++
				return true
			}
			if len(cands) == 1 {
				g.poison(cands[0])
				continue
			}
			for _, o := range cands {
				if leaves >= maxGameLeaves {
					return false
				}
				c := g.clone()
				c.poison(o)
				if !rec(c) {
					return false
				}
			}
			return true
		}
	}
	return rec(g)
}

func (g *game) poison(o int32) {
	g.poisoned[o] = true
	g.ready = append(g.ready, g.held[o]...)
	g.held[o] = g.held[o][:0]
}

// runClean executes every operation that is enabled and not held. It
// returns false when clean asks to stop.
func (g *game) runClean(isTarget []bool, clean func(int32, []int32) bool) bool {
	f := g.f
	for len(g.ready) > 0 {
		t := int(g.ready[len(g.ready)-1])
		g.ready = g.ready[:len(g.ready)-1]
		if t < f.workers && t >= g.started {
			continue
		}
		end := f.start[t+1]
		x := g.pos[t]
	loop:
		for x < end {
			o := f.obj[x]
			if x == g.srcOp && f.kind[x] == kAdd {
				g.taint(t, x) // its own release is tainted
			}
			switch f.kind[x] {
			case kWait:
				if g.val[o] < f.val[x] {
					g.pos[t] = x
					g.pushWait(o, waitEntry{f.val[x], int32(t)})
					break loop
				}
				if f.acquiring(x) && g.taintAt[t] > x {
					g.relevant[o]--
				}
				if g.poisoned[o] {
					if f.link[x] == x {
						g.taint(t, x)
					} else if f.link[x] >= 0 {
						g.pendFence[t] = true
					}
				}
			case kAdd:
				tainted := f.link[x] >= 0 && f.link[x] >= g.taintAt[t]
				if tainted && !g.poisoned[o] {
					g.pos[t] = x
					g.held[o] = append(g.held[o], int32(t))
					break loop
				}
				g.val[o] = satAdd(g.val[o], f.val[x])
				h := g.heaps[o]
				for len(h) > 0 && h[0].need <= g.val[o] {
					g.ready = append(g.ready, h[0].th)
					h = popHeap(h)
				}
				g.heaps[o] = h
			case kFence:
				if f.is(x, fCross) && g.pendFence[t] {
					g.taint(t, x)
				}
			case kBody:
				tk := f.task[x]
				if g.source[tk] {
					g.taint(t, x)
				}
			}
			if x == g.srcOp {
				g.taint(t, x)
			}
			g.trace = append(g.trace, x)
			*g.work++
			if x == g.targetOp && g.taintAt[t] > x {
				g.targetOp = -1
				if !clean(-1, g.trace) {
					return false
				}
			}
			if f.kind[x] == kBody && isTarget[f.task[x]] && g.taintAt[t] > x {
				isTarget[f.task[x]] = false
				if !clean(f.task[x], g.trace) {
					return false
				}
			}
			x++
		}
		if x == end {
			moved := g.pos[t] != x
			g.pos[t] = x
			if moved && !g.resident {
				if t < f.workers {
					g.finished++
				} else {
					g.dynLeft--
				}
				g.startWorkers()
			}
		}
	}
	return true
}

func (g *game) pushWait(o int32, w waitEntry) { g.heaps[o] = pushHeap(g.heaps[o], w) }
