package verify

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/megaproof/megaproof/schedule"
)

// Conflict kinds between two tasks (lo < hi by task index).
const (
	confWAW    = 1 << iota // both write overlapping bytes
	confLoW                // lo writes bytes hi reads
	confHiW                // hi writes bytes lo reads
	hbUnknown  = 0
	hbOrdered  = 1 // the earlier body happens before the later in every execution
	hbRace     = 2 // some execution orders neither
	hbUnsynced = 3 // the earlier must execute first, but some execution has no HB
)

// span is an item of the conflict sweep: rows [rlo, rhi) and, within each,
// columns [lo, hi) of an arena's grid (plain byte ranges are row 0).
type span struct {
	lo, hi   int64
	rlo, rhi int64
	key      int32 // the arena's dense key (see grid)
	task     int32
	write    bool
}

type pairInfo struct {
	key    uint64 // lo task << 32 | hi task
	conf   uint8
	result uint8
	first  int32 // the task whose body ran first in the greedy run
}

// grid is how the conflict analyses see arena bytes: per arena (or buffer
// without one, by dense key), whether a task that ran writes it, and the row
// stride it is swept with.
//
// An arena is swept as a grid of rows of `stride` bytes when all its 2-D
// accesses share that stride and stay within their rows: a 2-D tile is then
// one item (a row range and a column range) instead of one span per row,
// and two items overlap exactly when both ranges do. Other arenas are swept
// as plain byte ranges (one row of infinite width).
type grid struct {
	p       *schedule.Program
	key     []int32 // per buffer: dense key of its arena
	base    []int64 // per buffer: its offset in the arena
	written []bool  // per key
	stride  []int64 // per key: row width, or ≤ 0 for plain byte ranges
	uses    []int32 // per key: accesses of tasks that ran (meaningful where written)
}

func newGrid(p *schedule.Program, ran func(task int32) bool) (*grid, int) {
	g := &grid{p: p, key: make([]int32, len(p.Buffers)), base: make([]int64, len(p.Buffers))}
	for b := range p.Buffers {
		arena, base, _ := schedule.ArenaSpan(p, int32(b), 0, 0)
		g.key[b], g.base[b] = arena, base
		if arena < 0 {
			g.key[b] = int32(len(p.Arenas)) + (-1 - arena)
		}
	}
	n := len(p.Arenas) + len(p.Buffers)
	g.written, g.stride, g.uses = make([]bool, n), make([]int64, n), make([]int32, n)
	accesses := 0
	for i := range p.Tasks {
		if !ran(int32(i)) {
			continue
		}
		t := &p.Tasks[i]
		accesses += len(t.Reads) + len(t.Writes)
		for k, list := range [2][]schedule.Access{t.Reads, t.Writes} {
			for _, a := range list {
				d := g.key[a.Buffer]
				if k == 1 {
					g.written[d] = true
				}
				g.uses[d]++
				abs := g.base[a.Buffer] + a.Offset
				switch {
				case g.stride[d] < 0:
				case abs < 0:
					g.stride[d] = -1
				case a.Rows > 1:
					S := int64(a.Stride)
					if g.stride[d] != 0 && g.stride[d] != S || abs%S+int64(a.Length) > S {
						g.stride[d] = -1
					} else {
						g.stride[d] = S
					}
				}
			}
		}
	}
	return g, accesses
}

// item is a piece of an access to a written arena: rows [rlo, rhi) and,
// within each, columns [lo, hi).
type item struct{ rlo, rhi, lo, hi int64 }

// appendItems appends the items of an access to a written arena.
func (g *grid) appendItems(dst []item, a schedule.Access) []item {
	base := g.base[a.Buffer]
	S := g.stride[g.key[a.Buffer]]
	if S <= 0 {
		for lo, hi := range a.Spans() {
			dst = append(dst, item{0, 1, base + lo, base + hi})
		}
		return dst
	}
	abs := base + a.Offset
	if a.Rows > 1 {
		return append(dst, item{abs / S, abs/S + int64(a.Rows), abs % S, abs%S + int64(a.Length)})
	}
	// A byte range: its first partial row, its full rows, its last
	// partial row.
	lo, hi := abs, abs+int64(a.Length)
	r0, r1 := lo/S, (hi-1)/S
	if r0 == r1 {
		return append(dst, item{r0, r0 + 1, lo % S, (hi-1)%S + 1})
	}
	dst = append(dst, item{r0, r0 + 1, lo % S, S})
	if r1 > r0+1 {
		dst = append(dst, item{r0 + 1, r1, 0, S})
	}
	return append(dst, item{r1, r1 + 1, 0, (hi-1)%S + 1})
}

// conflicts enumerates pairs of tasks on different threads whose accesses
// overlap in arena bytes with at least one write, by a sweep over items
// sorted by offset in each arena.
func (v *verifier) conflicts(g *grid, ran func(task int32) bool) {
	f := v.f
	p := f.p
	var spans []span
	var items []item
	for i := range p.Tasks {
		if !ran(int32(i)) {
			continue
		}
		t := &p.Tasks[i]
		for k, list := range [2][]schedule.Access{t.Reads, t.Writes} {
			for _, a := range list {
				d := g.key[a.Buffer]
				if !g.written[d] {
					continue
				}
				items = g.appendItems(items[:0], a)
				for _, it := range items {
					spans = append(spans, span{key: d, rlo: it.rlo, rhi: it.rhi, lo: it.lo, hi: it.hi, task: int32(i), write: k == 1})
				}
			}
		}
	}
	// Group by arena with a counting sort, then sort each group by offset.
	start := make([]int, len(g.written)+1)
	for _, sp := range spans {
		start[sp.key+1]++
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	grouped := make([]span, len(spans))
	fill := append([]int(nil), start...)
	for _, sp := range spans {
		d := sp.key
		grouped[fill[d]] = sp
		fill[d]++
	}
	spans = grouped
	for g := 0; g+1 < len(start); g++ {
		part := spans[start[g]:start[g+1]]
		slices.SortFunc(part, func(a, b span) int { return cmp64(a.lo, b.lo) })
	}
	// Overlaps are noted as they are found, then sorted and merged into one
	// record per task pair.
	var notes []pairInfo
	note := func(o, s span) {
		if f.taskTh[o.task] == f.taskTh[s.task] {
			return
		}
		lo, hi := o, s
		if lo.task > hi.task {
			lo, hi = hi, lo
		}
		var conf uint8
		switch {
		case lo.write && hi.write:
			conf = confWAW
		case lo.write:
			conf = confLoW
		default:
			conf = confHiW
		}
		notes = append(notes, pairInfo{key: uint64(lo.task)<<32 | uint64(hi.task), conf: conf})
	}
	// Spans still open at the sweep position, writes and reads apart: reads
	// only meet writes. Expired spans are dropped while scanning.
	var writes, reads []int
	scan := func(active []int, s span) []int {
		keep := active[:0]
		for _, j := range active {
			o := spans[j]
			if o.key != s.key || o.hi <= s.lo {
				continue
			}
			keep = append(keep, j)
			if o.rlo < s.rhi && s.rlo < o.rhi {
				note(o, s)
			}
		}
		return keep
	}
	for i, s := range spans {
		writes = scan(writes, s)
		if s.write {
			reads = scan(reads, s)
			writes = append(writes, i)
		} else {
			reads = append(reads, i)
		}
	}
	v.indexPairs(notes)
}

// indexPairs sorts and merges notes into v.slab, one record per task pair,
// and lists each task's pairs for lookups by task.
func (v *verifier) indexPairs(notes []pairInfo) {
	p := v.f.p
	slices.SortFunc(notes, func(a, b pairInfo) int { return cmpU64(a.key, b.key) })
	v.slab = v.slab[:0]
	for _, n := range notes {
		if k := len(v.slab); k > 0 && v.slab[k-1].key == n.key {
			v.slab[k-1].conf |= n.conf
			continue
		}
		v.slab = append(v.slab, n)
	}
	v.adjStart = make([]int32, len(p.Tasks)+1)
	for _, pi := range v.slab {
		v.adjStart[pi.key>>32+1]++
		v.adjStart[pi.key&0xffffffff+1]++
	}
	for i := 1; i < len(v.adjStart); i++ {
		v.adjStart[i] += v.adjStart[i-1]
	}
	v.adj = make([]int32, v.adjStart[len(p.Tasks)])
	next := append([]int32(nil), v.adjStart[:len(p.Tasks)]...)
	for i, pi := range v.slab {
		for _, t := range [2]uint64{pi.key >> 32, pi.key & 0xffffffff} {
			v.adj[next[t]] = int32(i)
			next[t]++
		}
	}
}

func cmp64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// pair returns the conflict record of a task pair key, or nil.
func (v *verifier) pair(k uint64) *pairInfo {
	lo, hi := k>>32, k&0xffffffff
	list := v.adj[v.adjStart[lo]:v.adjStart[lo+1]]
	if other := v.adj[v.adjStart[hi]:v.adjStart[hi+1]]; len(other) < len(list) {
		list = other
	}
	for _, i := range list {
		if v.slab[i].key == k {
			return &v.slab[i]
		}
	}
	return nil
}

type query struct {
	at   int32 // body op of the earlier task
	late int32 // the later task
	pair int32 // the pair's index in v.slab
}

// checkRaces orders every conflicting pair. The shadow pass proves most
// programs race-free by checking each access against the last write and
// the reads since of its bytes; a program it does not prove gets every
// conflicting pair ordered (see orderPairs) and its races reported.
func (v *verifier) checkRaces(ctx context.Context, run *engine) error {
	f := v.f
	when := make([]int32, len(f.p.Tasks))
	for i := range when {
		when[i] = -1
	}
	for i, x := range run.trace {
		if f.kind[x] == kBody {
			when[f.task[x]] = int32(i)
		}
	}
	v.when = when
	ran := func(t int32) bool { return when[t] >= 0 }
	g, accesses := v.pregrid, v.preAccesses
	if g == nil || slices.Contains(when, -1) {
		g, accesses = newGrid(f.p, ran)
	}
	v.pregrid = nil
	v.stats.Accesses = accesses
	if useShadow {
		ok, err := v.shadowRaces(ctx, run, g, accesses)
		if err != nil || ok {
			return err
		}
	}
	v.conflicts(g, ran)
	v.stats.Pairs = len(v.slab)
	if err := v.orderPairs(ctx, run, false); err != nil {
		return err
	}
	v.reportRaces()
	return nil
}

// shadowRaces tries the shadow pass, and decides the pairs of adjacent
// accesses its clocks could not prove with the exact pairwise machinery.
// It reports whether every conflicting pair is then ordered.
func (v *verifier) shadowRaces(ctx context.Context, run *engine, g *grid, accesses int) (bool, error) {
	complete, initialized, unproven, err := v.shadowOrder(ctx, run, g, accesses)
	if err != nil || !complete {
		return false, err
	}
	ordered := true
	if len(unproven) > 0 {
		// Every pair of adjacent accesses ordered still orders every
		// conflicting pair; anything else is left to the full analysis,
		// which reports it.
		undecided := len(v.undecided)
		v.slab = unproven // each pair once: noted at its later task's body
		// The first race ends the attempt.
		sub, stop := context.WithCancel(ctx)
		defer stop()
		v.onRace = stop
		err := v.orderPairs(sub, run, true)
		v.onRace = nil
		if err != nil {
			if ctx.Err() != nil {
				return false, ctx.Err()
			}
			ordered = false // a race: stopped
		}
		for _, pi := range v.slab {
			if pi.result != hbOrdered {
				ordered = false
			}
		}
		v.stats.Pairs += len(v.slab)
		v.slab, v.adjStart, v.adj, v.unsynced = nil, nil, nil, nil
		if len(v.undecided) > undecided {
			ordered = false
			v.undecided = v.undecided[:undecided]
		}
		if !ordered {
			return false, nil
		}
	}
	v.shadowed, v.initialized = true, initialized
	return true, nil
}

// orderPairs decides the order of every pair of v.slab: proof clocks
// first, then withhold-run sweeps, composed clocks, sweeps of the
// synchronizing relaxation and the taint game. unproven says the shadow
// pass's clocks (happens-before clocks, or execution-order clocks when
// every edge synchronizes) already failed on every pair.
func (v *verifier) orderPairs(ctx context.Context, run *engine, unproven bool) error {
	f := v.f
	when := v.when
	// One query per pair, from the body that ran first in the greedy run.
	all := make([]query, 0, len(v.slab))
	for i := range v.slab {
		pi := &v.slab[i]
		k := pi.key
		a, b := int32(k>>32), int32(k&0xffffffff)
		if when[b] < when[a] {
			a, b = b, a
		}
		pi.first = a
		all = append(all, query{f.body[a], b, int32(i)})
	}
	// Clocks prove most pairs ordered in one pass; withhold-run sweeps
	// decide the rest exactly.
	execProven := make([]bool, len(all))
	if !unproven || !f.syncing {
		proveOrdered(f, run.trace, false, all, execProven)
	}
	hbProven := execProven
	if !f.syncing {
		hbProven = make([]bool, len(all))
		if !unproven {
			proveOrdered(f, run.trace, true, all, hbProven)
		}
	}
	execTodo := map[int32][]query{}
	hbTodo := map[int32][]query{}
	for i, q := range all {
		u := f.opThread[q.at]
		switch {
		case hbProven[i]:
			v.slab[q.pair].result = hbOrdered
		case execProven[i]:
			hbTodo[u] = append(hbTodo[u], q)
		default:
			execTodo[u] = append(execTodo[u], q)
		}
	}
	exec := newEngine(f, false)
	sweeps := func(todo map[int32][]query, ask func(query, func(int32) bool)) error {
		if useCheckpoints && exec.resident {
			return checkpointSweeps(ctx, f, run.trace, todo, ask)
		}
		return sweepAll(ctx, exec, todo, ask)
	}
	err := sweeps(execTodo, func(q query, executed func(int32) bool) {
		switch {
		case executed(f.body[q.late]):
			v.slab[q.pair].result = hbRace
			if v.onRace != nil {
				v.onRace()
			}
		case f.syncing:
			v.slab[q.pair].result = hbOrdered
		default:
			u := f.opThread[q.at]
			hbTodo[u] = append(hbTodo[u], q)
		}
	})
	if err != nil {
		return err
	}
	if len(hbTodo) > 0 {
		// Composed clocks: synchronization along must-precede edges.
		var qs []query
		for _, u := range sortedThreads(hbTodo) {
			qs = append(qs, hbTodo[u]...)
		}
		proven := make([]bool, len(qs))
		if v.proveHB(run, qs, proven) {
			hbTodo = map[int32][]query{}
			for i, q := range qs {
				if proven[i] {
					v.slab[q.pair].result = hbOrdered
				} else {
					u := f.opThread[q.at]
					hbTodo[u] = append(hbTodo[u], q)
				}
			}
		}
	}
	unsure := map[int32][]query{} // source task -> pairs the relaxation cannot order
	if len(hbTodo) > 0 {
		err := sweepAll(ctx, newEngine(f, true), hbTodo, func(q query, executed func(int32) bool) {
			if executed(f.body[q.late]) {
				src := f.task[q.at]
				unsure[src] = append(unsure[src], q)
			} else {
				v.slab[q.pair].result = hbOrdered
			}
		})
		if err != nil {
			return err
		}
	}
	// The taint game decides the pairs the relaxation could not order.
	srcs := make([]int32, 0, len(unsure))
	for s := range unsure {
		srcs = append(srcs, s)
	}
	slices.Sort(srcs)
	v.stats.Games = len(srcs)
	for _, s := range srcs {
		if err := ctx.Err(); err != nil {
			return err
		}
		qs := unsure[s]
		isTarget := make([]bool, len(f.p.Tasks))
		left := 0
		for _, q := range qs {
			isTarget[q.late] = true
			left++
		}
		witness := map[int32][]int32{}
		g := newGame(f, []int32{s})
		complete := g.play(isTarget, func(task int32, trace []int32) bool {
			witness[task] = trace[:len(trace):len(trace)] // a prefix of the game's trace, which only grows
			left--
			return left > 0
		})
		for _, q := range qs {
			pi := &v.slab[q.pair]
			if tr, ok := witness[q.late]; ok {
				pi.result = hbUnsynced
				v.unsynced = append(v.unsynced, unsyncedPair{pi.key, tr})
			} else if complete {
				pi.result = hbOrdered
			} else {
				v.inconclusive(fmt.Sprintf("the happens-before game between tasks %q and %q branched more than %d times", f.p.Tasks[s].Name, f.p.Tasks[q.late].Name, maxGameLeaves))
			}
		}
	}
	return nil
}

func sortedThreads(m map[int32][]query) []int32 {
	out := make([]int32, 0, len(m))
	for t := range m {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

type unsyncedPair struct {
	key   uint64
	trace []int32
}

// sweepAll sweeps every thread that has queries, in thread order, with its
// queries in op order.
func sweepAll(ctx context.Context, e *engine, todo map[int32][]query, ask func(query, func(int32) bool)) error {
	for _, u := range sortedThreads(todo) {
		if err := ctx.Err(); err != nil {
			return err
		}
		qs := todo[u]
		slices.SortFunc(qs, func(a, b query) int { return int(a.at - b.at) })
		sweep(e, int(u), qs, ask)
	}
	return nil
}

// sweep runs withhold-runs for thread u: before each query's op, with u
// frozen there, ask about the other task.
func sweep(e *engine, u int, qs []query, ask func(query, func(int32) bool)) {
	if len(qs) == 0 {
		return
	}
	f := e.f
	e.reset()
	e.freeze(u, f.start[u])
	e.run()
	for _, q := range qs {
		if e.limit[u] != q.at {
			e.thaw(u, q.at)
			e.run()
		}
		ask(q, e.executed)
	}
}

const maxFindingsPerCode = 16

// unsyncFix names what would give happens-before between a's body and b's:
// the relaxed or cta-scoped steps after a's body in its thread and before
// b's body in its thread, or the worker start order of a limited launch.
func (v *verifier) unsyncFix(a, b int32) string {
	f := v.f
	var fixes []string
	seen := map[string]bool{}
	note := func(s string) {
		if !seen[s] {
			seen[s] = true
			fixes = append(fixes, s)
		}
	}
	ta, tb := f.taskTh[a], f.taskTh[b]
	for x := f.body[a] + 1; x < f.start[ta+1]; x++ {
		if f.kind[x] != kAdd || f.is(x, fBarrier) {
			continue
		}
		if !f.is(x, fCross) {
			note(fmt.Sprintf("widen %s to gpu scope", v.describe(x)))
		} else if f.link[x] < 0 {
			note(fmt.Sprintf("make %s a release (or put a gpu fence before it)", v.describe(x)))
		}
	}
	for x := f.start[tb]; x < f.body[b]; x++ {
		if f.kind[x] != kWait || f.is(x, fBarrier) {
			continue
		}
		if !f.is(x, fCross) {
			note(fmt.Sprintf("widen %s to gpu scope", v.describe(x)))
		} else if f.link[x] < 0 {
			note(fmt.Sprintf("make %s an acquire (or put a gpu fence after it)", v.describe(x)))
		}
	}
	if !f.syncing && !f.p.Launch.Cooperative && f.p.Launch.Capacity() < f.p.Launch.Workers {
		note("do not rely on the order in which workers start: wait on a release signal, or launch cooperatively")
	}
	if len(fixes) == 0 {
		return "use release signals and acquire waits at gpu scope on the path between them"
	}
	return strings.Join(fixes, "; ")
}

func (v *verifier) reportRaces() {
	f := v.f
	p := f.p
	exec := newEngine(f, false)
	counts := map[string]int{}
	unsynced := map[uint64][]int32{}
	for _, u := range v.unsynced {
		unsynced[u.key] = u.trace
	}
	for i := range v.slab {
		pi := &v.slab[i]
		k := pi.key
		if pi.result != hbRace && pi.result != hbUnsynced {
			continue
		}
		lo, hi := int32(k>>32), int32(k&0xffffffff)
		a, b := pi.first, lo
		if a == lo {
			b = hi
		}
		code := CodeRaceUnsynchronized
		if pi.result == hbRace {
			switch {
			case pi.conf&confWAW != 0:
				code = CodeRaceWAW
			case pi.conf&confLoW != 0:
				code = CodeRaceRAW
			default:
				code = CodeRaceWAR
			}
		}
		counts[code]++
		if counts[code] > maxFindingsPerCode {
			continue
		}
		ta, tb := &p.Tasks[a], &p.Tasks[b]
		fnd := Finding{Code: code, Tasks: []int{int(a), int(b)}}
		if pi.result == hbRace {
			fnd.Message = fmt.Sprintf("tasks %q (%s) and %q (%s) access overlapping bytes and neither must finish before the other starts", ta.Name, v.threadName(f.taskTh[a]), tb.Name, v.threadName(f.taskTh[b]))
			fnd.Fix = fmt.Sprintf("make %q wait for a signal that %q sends after its body", tb.Name, ta.Name)
			exec.reset()
			exec.record = true
			exec.freeze(int(f.taskTh[a]), f.body[a])
			exec.freeze(int(f.taskTh[b]), f.body[b])
			exec.run()
			fnd.Witness = f.events(exec.trace, f.body[a], f.body[b])
			exec.record = false
		} else {
			fnd.Message = fmt.Sprintf("task %q always runs after %q, but nothing orders its memory accesses after %q's: the synchronization between them is relaxed, cta-scoped, or only the order in which workers start", tb.Name, ta.Name, ta.Name)
			fnd.Fix = v.unsyncFix(a, b)
			fnd.Witness = f.events(unsynced[k])
		}
		v.add(fnd)
	}
	for code, n := range counts {
		if n > maxFindingsPerCode {
			v.truncated = append(v.truncated, fmt.Sprintf("%s: %d task pairs, %d reported", code, n, maxFindingsPerCode))
		}
	}
	slices.Sort(v.truncated)
}

// checkUninitialized finds reads of scratch and output bytes that some
// execution reaches before any same-buffer write that happens before them.
func (v *verifier) checkUninitialized(ctx context.Context, run *engine) error {
	if v.initialized {
		return nil // the shadow pass proved every read covered
	}
	f := v.f
	p := f.p
	when := v.when
	type wspan struct {
		lo, hi int64
		task   int32
	}
	writes := make([][]wspan, len(p.Buffers))
	for i := range p.Tasks {
		if when[i] < 0 {
			continue
		}
		for _, a := range p.Tasks[i].Writes {
			k := p.Buffers[a.Buffer].Kind
			if k != schedule.KindScratch && k != schedule.KindOutput {
				continue
			}
			for lo, hi := range a.Spans() {
				writes[a.Buffer] = append(writes[a.Buffer], wspan{lo, hi, int32(i)})
			}
		}
	}
	longest := make([]int64, len(p.Buffers)) // per buffer: the longest write span
	for b := range writes {
		slices.SortFunc(writes[b], func(x, y wspan) int { return cmp64(x.lo, y.lo) })
		for _, w := range writes[b] {
			longest[b] = max(longest[b], w.hi-w.lo)
		}
	}
	hbMust := func(w, r int32) bool {
		if f.taskTh[w] == f.taskTh[r] {
			return f.body[w] < f.body[r]
		}
		if v.shadowed {
			// Every conflicting pair is ordered as it ran.
			return when[w] < when[r]
		}
		lo, hi := min(w, r), max(w, r)
		pi := v.pair(uint64(lo)<<32 | uint64(hi))
		return pi != nil && pi.first == w && pi.result == hbOrdered
	}
	reported := 0
	for r := range p.Tasks {
		if reported > maxFindingsPerCode {
			break // enough to say there are more than are reported
		}
		if when[r] < 0 {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		found := false
		for _, a := range p.Tasks[r].Reads {
			k := p.Buffers[a.Buffer].Kind
			if found || (k != schedule.KindScratch && k != schedule.KindOutput) {
				continue
			}
			for lo, hi := range a.Spans() {
				if found {
					break
				}
				ws := writes[a.Buffer]
				from, _ := slices.BinarySearchFunc(ws, lo-longest[a.Buffer], func(w wspan, x int64) int { return cmp64(w.lo, x) })
				// Fast path: writers ordered before the read cover it.
				reach := lo
				for _, w := range ws[from:] {
					if w.lo > reach {
						break
					}
					if w.hi > reach && w.task != int32(r) && hbMust(w.task, int32(r)) {
						if reach = w.hi; reach >= hi {
							break
						}
					}
				}
				if reach >= hi {
					continue
				}
				// Elementary segments of [lo, hi) by the writers covering them.
				var cover []wspan
				for _, w := range ws[from:] {
					if w.lo >= hi {
						break
					}
					if w.hi > lo && w.task != int32(r) {
						cover = append(cover, w)
					}
				}
				cuts := []int64{lo, hi}
				for _, w := range cover {
					if w.lo > lo {
						cuts = append(cuts, w.lo)
					}
					if w.hi < hi {
						cuts = append(cuts, w.hi)
					}
				}
				slices.Sort(cuts)
				cuts = slices.Compact(cuts)
				for ci := 0; ci+1 < len(cuts) && !found; ci++ {
					s0, s1 := cuts[ci], cuts[ci+1]
					var srcs []int32
					ok := false
					for _, w := range cover {
						if w.lo <= s0 && w.hi >= s1 {
							if hbMust(w.task, int32(r)) {
								ok = true
								break
							}
							srcs = append(srcs, w.task)
						}
					}
					if ok {
						continue
					}
					var trace []int32
					if len(srcs) == 0 {
						for _, x := range run.trace {
							trace = append(trace, x)
							if x == f.body[r] {
								break
							}
						}
					} else {
						slices.Sort(srcs)
						srcs = slices.Compact(srcs)
						isTarget := make([]bool, len(p.Tasks))
						isTarget[r] = true
						g := newGame(f, srcs)
						complete := g.play(isTarget, func(_ int32, tr []int32) bool {
							trace = tr[:len(tr):len(tr)]
							return false
						})
						if trace == nil {
							if !complete {
								v.inconclusive(fmt.Sprintf("the happens-before game for the read of task %q branched more than %d times", p.Tasks[r].Name, maxGameLeaves))
							}
							continue
						}
					}
					found = true
					reported++
					if reported > maxFindingsPerCode {
						continue
					}
					buf := p.Buffers[a.Buffer]
					msg := fmt.Sprintf("task %q reads bytes [%d, %d) of %s %s", p.Tasks[r].Name, s0, s1, buf.Kind, buf.Name)
					if len(srcs) == 0 {
						msg += ", which no other task writes"
					} else {
						msg += fmt.Sprintf(", and none of the %d tasks that write them is ordered before it", len(srcs))
					}
					v.add(Finding{Code: CodeUninitializedRead, Message: msg, Tasks: []int{r}, Witness: f.events(trace)})
				}
			}
		}
	}
	if reported > maxFindingsPerCode {
		v.truncated = append(v.truncated, fmt.Sprintf("%s: more than %d readers, %d reported", CodeUninitializedRead, maxFindingsPerCode, maxFindingsPerCode))
	}
	return nil
}
