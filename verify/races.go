package verify

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/megaproof/megaproof/internal/faults"
	"github.com/megaproof/megaproof/internal/geom"
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
// columns [lo, hi) of an arena's grid (see grid), of access ai of the
// task's reads or writes.
type span struct {
	lo, hi   int64
	rlo, rhi int64
	key      int32 // the arena's dense key (see grid)
	task     int32
	ai       int32
	write    bool
}

type pairInfo struct {
	key    uint64 // lo task << 32 | hi task
	conf   uint8
	result uint8
	first  int32 // the task whose body ran first in the greedy run
}

// grid is how the conflict analyses see arena bytes: per arena (or buffer
// without one, by dense key), whether a task that ran writes it, and the
// grid its accesses are swept in (see internal/geom).
//
// An arena is swept as a grid of rows of W bytes, W a common multiple of
// the strides of its 2-D accesses (or the plain grid of byte ranges): an
// access is then a few items (a row range and a column range each), one
// per residue of its rows modulo W/stride, and two items overlap exactly
// when both ranges do. The pieces of every arena together stay within
// gridBudget; an arena whose geometry needs more is swept by extents
// (approx), and its accesses are compared by arithmetic, rectangle
// against rectangle.
type grid struct {
	p       *schedule.Program
	key     []int32  // per buffer: dense key of its arena
	base    []uint64 // per buffer: its offset in the arena
	written []bool   // per key
	geo     []geom.Grid
	approx  []bool  // per key: swept by extents
	uses    []int32 // per key: accesses of tasks that ran (meaningful where written)
}

// gridBudget bounds the items of every arena's grid together, for a
// program of the given number of accesses; tests shrink it.
var gridBudget = func(accesses int) int64 { return 16*int64(accesses) + 1<<20 }

// chooserLists holds newGrid's per-arena chooser lists between grids,
// empty: only the list is reused, each chooser starts empty.
var chooserLists = sync.Pool{New: func() any { return new([]geom.Chooser) }}

func newGrid(p *schedule.Program, ran func(task int32) bool) (*grid, int) {
	n := len(p.Arenas) + len(p.Buffers)
	ints, flags := make([]int32, len(p.Buffers)+n), make([]bool, 2*n)
	g := &grid{p: p, key: ints[:len(p.Buffers):len(p.Buffers)], base: make([]uint64, len(p.Buffers))}
	for b := range p.Buffers {
		buf := &p.Buffers[b]
		if buf.Arena == schedule.NoArena {
			g.key[b] = int32(len(p.Arenas) + b)
		} else {
			g.key[b], g.base[b] = buf.Arena, buf.Offset
		}
	}
	g.written, g.geo, g.approx, g.uses = flags[:n:n], make([]geom.Grid, n), flags[n:], ints[len(p.Buffers):]
	var choosers []geom.Chooser
	if n <= smallObjects {
		choosers = make([]geom.Chooser, n)
	} else {
		cp := chooserLists.Get().(*[]geom.Chooser)
		if cap(*cp) < n {
			*cp = make([]geom.Chooser, n)
		}
		choosers = (*cp)[:n]
		defer func() {
			clear(choosers) // the list keeps nothing of this grid's choosers
			chooserLists.Put(cp)
		}()
	}
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
				if a.Rows > 1 {
					choosers[d].Note(g.rect(a))
				}
			}
		}
	}
	for d := range choosers {
		if g.written[d] {
			choosers[d].Plan()
		}
	}
	for i := range p.Tasks {
		if !ran(int32(i)) {
			continue
		}
		t := &p.Tasks[i]
		for _, list := range [2][]schedule.Access{t.Reads, t.Writes} {
			for _, a := range list {
				if d := g.key[a.Buffer]; g.written[d] {
					choosers[d].Count(g.rect(a))
				}
			}
		}
	}
	left := cellBudget(accesses)
	for d := range choosers {
		if !g.written[d] {
			continue
		}
		w, ok := choosers[d].Best(left)
		if ok {
			g.geo[d] = w
			left -= choosers[d].Pieces()
		} else {
			g.approx[d] = true
			left -= int64(g.uses[d])
		}
	}
	return g, accesses
}

// rect is an access's rectangle in its arena.
func (g *grid) rect(a schedule.Access) geom.Rect {
	return geom.Strided(geom.Pos(g.base[a.Buffer], a.Offset), a.Length, a.Rows, a.Stride)
}

// item is a piece of an access to a written arena: rows [R0, R1) and,
// within each, columns [C0, C1) of the arena's grid.
type item = geom.Piece

// appendItems appends the items of an access to a written arena: its
// pieces, or its extent in an arena swept by extents.
func (g *grid) appendItems(dst []item, a schedule.Access) []item {
	r := g.rect(a)
	d := g.key[a.Buffer]
	if g.approx[d] {
		return append(dst, item{R0: 0, R1: 1, C0: r.Off, C1: r.End()})
	}
	return g.geo[d].Pieces(dst, r)
}

// access is task t's access ai among its writes or reads.
func access(p *schedule.Program, t, ai int32, write bool) schedule.Access {
	if write {
		return p.Tasks[t].Writes[ai]
	}
	return p.Tasks[t].Reads[ai]
}

// conflictOf is the conflict between tasks lo < hi (confWAW, confLoW,
// confHiW bits), decided rectangle against rectangle.
func (g *grid) conflictOf(lo, hi int32) uint8 {
	p := g.p
	meet := func(xs, ys []schedule.Access) bool {
		for _, x := range xs {
			for _, y := range ys {
				if g.key[x.Buffer] == g.key[y.Buffer] && rectsMeet(g.rect(x), g.rect(y)) {
					return true
				}
			}
		}
		return false
	}
	tl, th := &p.Tasks[lo], &p.Tasks[hi]
	var c uint8
	if meet(tl.Writes, th.Writes) {
		c |= confWAW
	}
	if meet(tl.Writes, th.Reads) {
		c |= confLoW
	}
	if meet(tl.Reads, th.Writes) {
		c |= confHiW
	}
	return c
}

// maxNotes bounds the overlaps the conflict sweep notes before the pairs
// they name are decided (a chunk); tests shrink it.
var maxNotes = 1 << 18

// conflictSweep enumerates pairs of tasks on different threads whose
// accesses overlap in arena bytes with at least one write, by a sweep over
// items sorted by column in each arena, a chunk of notes at a time.
type conflictSweep struct {
	v      *verifier
	g      *grid
	spans  []span
	at     int   // the next span to visit
	writes []int // spans still open at the sweep position, writes and reads apart
	reads  []int
	work   int
}

func (v *verifier) newConflictSweep(g *grid, ran func(task int32) bool) *conflictSweep {
	p := v.f.p
	var spans []span
	var items []item
	for i := range p.Tasks {
		if !ran(int32(i)) {
			continue
		}
		t := &p.Tasks[i]
		for k, list := range [2][]schedule.Access{t.Reads, t.Writes} {
			for ai, a := range list {
				d := g.key[a.Buffer]
				if !g.written[d] {
					continue
				}
				items = g.appendItems(items[:0], a)
				for _, it := range items {
					spans = append(spans, span{key: d, rlo: it.R0, rhi: it.R1, lo: it.C0, hi: it.C1, task: int32(i), ai: int32(ai), write: k == 1})
				}
			}
		}
	}
	// Group by arena with a counting sort, then sort each group by column.
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
		slices.SortFunc(part, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	}
	return &conflictSweep{v: v, g: g, spans: spans}
}

// next appends the overlaps of the next spans to notes until more than
// maxNotes are noted or the sweep is done. Overlaps are noted as they are
// found (one task pair may be noted several times, in one chunk or in
// several).
func (cs *conflictSweep) next(ctx context.Context, notes []pairInfo) ([]pairInfo, bool, error) {
	f := cs.v.f
	g := cs.g
	spans := cs.spans
	note := func(o, s span) {
		if f.taskTh[o.task] == f.taskTh[s.task] {
			return
		}
		if g.approx[s.key] && !rectsMeet(g.rect(access(g.p, o.task, o.ai, o.write)), g.rect(access(g.p, s.task, s.ai, s.write))) {
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
		if n := len(notes); n > 0 && notes[n-1].key == uint64(lo.task)<<32|uint64(hi.task) {
			notes[n-1].conf |= conf
			return
		}
		notes = append(notes, pairInfo{key: uint64(lo.task)<<32 | uint64(hi.task), conf: conf})
	}
	// Reads only meet writes. Expired spans are dropped while scanning.
	scan := func(active []int, s span) []int {
		cs.work += len(active)
		keep := active[:0]
		for _, j := range active {
			o := spans[j]
			if o.key != s.key || !spansTouch(o.hi, s.lo) {
				continue
			}
			keep = append(keep, j)
			if spansMeet(o, s) {
				note(o, s)
			}
		}
		return keep
	}
	for ; cs.at < len(spans); cs.at++ {
		if cs.work >= 1<<16 {
			cs.work = 0
			if err := ctx.Err(); err != nil {
				return notes, false, err
			}
		}
		if len(notes) > maxNotes {
			return notes, false, nil
		}
		s := spans[cs.at]
		cs.writes = scan(cs.writes, s)
		if s.write {
			cs.reads = scan(cs.reads, s)
			cs.writes = append(cs.writes, cs.at)
		} else {
			cs.reads = append(cs.reads, cs.at)
		}
	}
	return notes, true, nil
}

// conflicts puts every conflicting pair in v.slab at once, however many
// there are (for tests).
func (v *verifier) conflicts(g *grid, ran func(task int32) bool) {
	sw := v.newConflictSweep(g, ran)
	var notes []pairInfo
	for done := false; !done; {
		notes, done, _ = sw.next(context.Background(), notes)
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
// the reads since of its bytes; a program it does not prove gets its
// conflicting pairs ordered (see orderPairs) a chunk of maxNotes at a
// time, and the races of the first chunk that has any reported. A racing
// pair of adjacent accesses that the shadow pass found joins the first
// chunk, so that chunk has a race: the pairs are never all materialized,
// and past the first chunk with a race they are not decided (the result
// says so).
func (v *verifier) checkRaces(ctx context.Context, run *engine) error {
	if err := ctx.Err(); err != nil {
		return err
	}
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
	if useShadow && accesslessShortcut && f.workers <= maxClockThreads && v.pregrid == nil && accessless(f.p, ran) {
		// No task that ran accesses memory: the shadow pass would visit
		// every body and check nothing, proving the program race-free and
		// every read initialized with no pair checked. Its clocks exist
		// for at most maxClockThreads workers, as here.
		v.stats.Accesses, v.stats.Pairs = 0, 0
		v.shadowed, v.initialized = true, true
		return nil
	}
	g, accesses := v.pregrid, v.preAccesses
	if g == nil || slices.Contains(when, -1) {
		g, accesses = newGrid(f.p, ran)
	}
	v.pregrid = nil
	v.stats.Accesses = accesses
	var seeds []pairInfo
	if useShadow {
		ok, racing, err := v.shadowRaces(ctx, run, g, accesses)
		if err != nil || ok {
			return err
		}
		for _, pi := range racing {
			if c := g.conflictOf(int32(pi.key>>32), int32(pi.key&0xffffffff)); c != 0 {
				seeds = append(seeds, pairInfo{key: pi.key, conf: c})
			}
		}
	}
	sw := v.newConflictSweep(g, ran)
	var notes []pairInfo
	decided, cut := 0, 0
	for {
		notes, done, err := sw.next(ctx, append(notes[:0], seeds...))
		if err != nil {
			return err
		}
		seeds = nil
		v.indexPairs(notes)
		decided += len(v.slab)
		v.stats.Pairs = decided
		if err := v.orderPairs(ctx, run, false); err != nil {
			return err
		}
		if done {
			break
		}
		if slices.ContainsFunc(v.slab, func(pi pairInfo) bool { return pi.result == hbRace || pi.result == hbUnsynced }) {
			cut = decided
			break
		}
	}
	v.reportRaces(cut)
	return nil
}

// accesslessShortcut lets checkRaces decide a program whose tasks that ran
// access no memory without the shadow pass; tests turn it off to compare.
var accesslessShortcut = true

// accessless reports whether no task that ran reads or writes memory.
func accessless(p *schedule.Program, ran func(task int32) bool) bool {
	for i := range p.Tasks {
		if t := &p.Tasks[i]; ran(int32(i)) && len(t.Reads)+len(t.Writes) > 0 {
			return false
		}
	}
	return true
}

// shadowRaces tries the shadow pass, and decides the pairs of adjacent
// accesses its clocks could not prove with the exact pairwise machinery.
// It reports whether every conflicting pair is then ordered, and the
// adjacent pairs it found unordered (which race, if their tasks conflict:
// an arena swept by extents makes the pass see more bytes than accessed).
func (v *verifier) shadowRaces(ctx context.Context, run *engine, g *grid, accesses int) (bool, []pairInfo, error) {
	complete, initialized, unproven, err := v.shadowOrder(ctx, run, g, accesses)
	if err != nil || !complete {
		return false, nil, err
	}
	var racing []pairInfo
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
		ordered := true
		if err != nil {
			if ctx.Err() != nil {
				return false, nil, ctx.Err()
			}
			ordered = false // a race: stopped
		}
		for _, pi := range v.slab {
			switch pi.result {
			case hbOrdered:
			case hbRace, hbUnsynced:
				racing = append(racing, pi)
				ordered = false
			default:
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
			return false, racing, nil
		}
	}
	v.shadowed, v.initialized = true, initialized
	return true, nil, nil
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
		proveOrderedCtx(ctx, f, run.trace, false, all, execProven)
	}
	hbProven := execProven
	if !f.syncing {
		hbProven = make([]bool, len(all))
		if !unproven {
			proveOrderedCtx(ctx, f, run.trace, true, all, hbProven)
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
	sweeps := func(todo map[int32][]query, ask func(query, func(int32) bool)) error {
		if len(todo) == 0 {
			return nil
		}
		exec := newEngine(f, false)
		defer exec.release()
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
		rel := newEngine(f, true)
		err := sweepAll(ctx, rel, hbTodo, func(q query, executed func(int32) bool) {
			if executed(f.body[q.late]) {
				src := f.task[q.at]
				unsure[src] = append(unsure[src], q)
			} else {
				v.slab[q.pair].result = hbOrdered
			}
		})
		rel.release()
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
	v.stats.Games += len(srcs)
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
		v.gameSteps += *g.work
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
			note(v.appendOp(newMsg().s("widen "), x).s(" to gpu scope").String())
		} else if f.link[x] < 0 {
			note(v.appendOp(newMsg().s("make "), x).s(" a release (or put a gpu fence before it)").String())
		}
	}
	for x := f.start[tb]; x < f.body[b]; x++ {
		if f.kind[x] != kWait || f.is(x, fBarrier) {
			continue
		}
		if !f.is(x, fCross) {
			note(v.appendOp(newMsg().s("widen "), x).s(" to gpu scope").String())
		} else if f.link[x] < 0 {
			note(v.appendOp(newMsg().s("make "), x).s(" an acquire (or put a gpu fence after it)").String())
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

// reportRaces reports the racing pairs of v.slab, at most
// maxFindingsPerCode per code, and counts the rest. cut, when not 0, is the
// number of conflicting pairs decided before the analysis stopped at a
// chunk with races: the counts are then lower bounds.
func (v *verifier) reportRaces(cut int) {
	f := v.f
	p := f.p
	exec := newEngine(f, false)
	defer exec.release()
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
			fnd.Message = v.appendThread(v.appendThread(newMsg().s("tasks ").q(ta.Name).s(" ("), f.taskTh[a]).s(") and ").q(tb.Name).s(" ("), f.taskTh[b]).s(") access overlapping bytes and neither must finish before the other starts").String()
			fnd.Fix = newMsg().s("make ").q(tb.Name).s(" wait for a signal that ").q(ta.Name).s(" sends after its body").String()
			exec.reset()
			exec.record = true
			exec.freeze(int(f.taskTh[a]), f.body[a])
			exec.freeze(int(f.taskTh[b]), f.body[b])
			exec.run()
			fnd.Witness = f.events(exec.trace, f.body[a], f.body[b])
			exec.record = false
		} else {
			fnd.Message = newMsg().s("task ").q(tb.Name).s(" always runs after ").q(ta.Name).s(", but nothing orders its memory accesses after ").q(ta.Name).s("'s: the synchronization between them is relaxed, cta-scoped, or only the order in which workers start").String()
			fnd.Fix = v.unsyncFix(a, b)
			fnd.Witness = f.events(unsynced[k])
		}
		v.add(fnd)
	}
	for code, n := range counts {
		switch {
		case cut > 0:
			v.truncated = append(v.truncated, fmt.Sprintf("%s: at least %d task pairs, %d reported (the race analysis stopped after deciding %d conflicting pairs)", code, n, min(n, maxFindingsPerCode), cut))
		case n > maxFindingsPerCode:
			v.truncated = append(v.truncated, fmt.Sprintf("%s: %d task pairs, %d reported", code, n, maxFindingsPerCode))
		}
	}
	slices.Sort(v.truncated)
}

// uninitBudget bounds the work of splitting reads into cells in the
// uninitialized-read check, and cellBudget the pieces of the buffers'
// grids, for a program of the given number of accesses.
var (
	uninitBudget = func(accesses int) int64 { return 64*int64(accesses) + 1<<24 }
	cellBudget   = func(accesses int) int64 { return 16*int64(accesses) + 1<<20 }
)

// wpiece is a piece of a write to a buffer, in the buffer's own byte
// numbering, and the task that writes it.
type wpiece struct {
	geom.Piece
	task int32
}

// bufferWrites are the write pieces of one buffer, sorted by first column,
// in the grid of its reads and writes.
type bufferWrites struct {
	g      geom.Grid
	ok     bool // the grid fits the budget
	pieces []wpiece
	widest int64 // the most columns of a piece
}

// near appends to dst the write pieces of tasks other than r that overlap
// piece t.
func (bw *bufferWrites) near(dst []wpiece, t geom.Piece, r int32) []wpiece {
	ps := bw.pieces
	from, _ := slices.BinarySearchFunc(ps, t.C0-bw.widest, func(w wpiece, c int64) int { return cmp.Compare(w.C0, c) })
	for _, w := range ps[from:] {
		if w.C0 >= t.C1 {
			break
		}
		if w.task != r && w.Overlaps(t) {
			dst = append(dst, w)
		}
	}
	return dst
}

// checkUninitialized finds reads of scratch and output bytes that some
// execution reaches before any same-buffer write that happens before them.
// Each read is split into cells by the set of writes covering them (see
// internal/geom): a cell covered by a write ordered before the read is
// initialized; any other is decided by the happens-before game against
// its writers, once per distinct set of writers.
func (v *verifier) checkUninitialized(ctx context.Context, run *engine) error {
	if v.initialized || faults.On(faults.UninitSkipped) {
		return nil // the shadow pass proved every read covered
	}
	f := v.f
	p := f.p
	when := v.when
	needs := func(b int32) bool { return needsInit(p.Buffers[b].Kind) }
	rect := func(a schedule.Access) geom.Rect {
		return geom.Strided(geom.Pos(0, a.Offset), a.Length, a.Rows, a.Stride)
	}
	// The buffers read, their grids, and their writes' pieces.
	read := make([]bool, len(p.Buffers))
	for i := range p.Tasks {
		if when[i] < 0 {
			continue
		}
		for _, a := range p.Tasks[i].Reads {
			if needs(a.Buffer) {
				read[a.Buffer] = true
			}
		}
	}
	choosers := make([]geom.Chooser, len(p.Buffers))
	accesses := 0
	for pass := 0; pass < 2; pass++ {
		for i := range p.Tasks {
			if when[i] < 0 {
				continue
			}
			for _, list := range [2][]schedule.Access{p.Tasks[i].Reads, p.Tasks[i].Writes} {
				for _, a := range list {
					if !read[a.Buffer] {
						continue
					}
					if pass == 0 {
						accesses++
						choosers[a.Buffer].Note(rect(a))
					} else {
						choosers[a.Buffer].Count(rect(a))
					}
				}
			}
		}
		if pass == 0 {
			for b := range choosers {
				if read[b] {
					choosers[b].Plan()
				}
			}
		}
	}
	budget := uninitBudget(accesses)
	left := cellBudget(accesses)
	writes := make([]bufferWrites, len(p.Buffers))
	for b := range writes {
		if !read[b] {
			continue
		}
		g, ok := choosers[b].Best(left)
		writes[b] = bufferWrites{g: g, ok: ok}
		if !ok {
			buf := p.Buffers[b]
			v.inconclusive(fmt.Sprintf("the reads of %s %s are not decided: the strides of its accesses need more than %d pieces", buf.Kind, buf.Name, left))
			continue
		}
		left -= choosers[b].Pieces()
	}
	var pieces []geom.Piece
	for i := range p.Tasks {
		if when[i] < 0 {
			continue
		}
		for _, a := range p.Tasks[i].Writes {
			bw := &writes[a.Buffer]
			if !read[a.Buffer] || !bw.ok {
				continue
			}
			pieces = bw.g.Pieces(pieces[:0], rect(a))
			for _, pc := range pieces {
				bw.pieces = append(bw.pieces, wpiece{pc, int32(i)})
				bw.widest = max(bw.widest, pc.C1-pc.C0)
			}
		}
	}
	for b := range writes {
		slices.SortFunc(writes[b].pieces, func(x, y wpiece) int { return cmp.Compare(x.C0, y.C0) })
	}
	// decided reports whether the race analysis decided the pair of w and
	// r, and whether it found w happening before r.
	decided := func(w, r int32) (known, ordered bool) {
		lo, hi := min(w, r), max(w, r)
		pi := v.pair(uint64(lo)<<32 | uint64(hi))
		if pi == nil || pi.result == hbUnknown {
			return false, false
		}
		return true, pi.first == w && pi.result == hbOrdered
	}
	var ro *readOrder
	if !v.shadowed && usePreorder {
		var err error
		ro, err = v.preorderReads(ctx, run, writes, needs, rect, func(w, r int32) bool {
			known, _ := decided(w, r)
			return known
		}, budget)
		if err != nil {
			return err
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
		if known, ordered := decided(w, r); known {
			return ordered
		}
		return ro.orderedBefore(w, r)
	}
	work := budget
	reported := 0
	var near []wpiece
	var cands []geom.Piece
	var gids []int32
	var key []byte
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
		tried := map[string]bool{}
		for _, a := range p.Tasks[r].Reads {
			bw := &writes[a.Buffer]
			if found || !needs(a.Buffer) || !bw.ok {
				continue
			}
			for _, t := range bw.g.Pieces(nil, rect(a)) {
				if found {
					break
				}
				near = bw.near(near[:0], t, int32(r))
				if work -= int64(len(near)); work < 0 {
					break
				}
				cands, gids = cands[:0], gids[:0]
				for _, w := range near {
					cands = append(cands, w.Piece)
					if hbMust(w.task, int32(r)) {
						gids = append(gids, 0) // ordered: its bytes are initialized
					} else {
						gids = append(gids, w.task+1)
					}
				}
				var err error
				ok := geom.Cells(t, cands, gids, &work, func(set []int32, cell geom.Piece) bool {
					if len(set) > 0 && set[0] == 0 {
						return true
					}
					key = key[:0]
					for _, s := range set {
						key = append(key, byte(s), byte(s>>8), byte(s>>16), byte(s>>24))
					}
					if tried[string(key)] {
						return true
					}
					tried[string(key)] = true
					if err = ctx.Err(); err != nil {
						return false
					}
					srcs := make([]int32, len(set))
					for k, s := range set {
						srcs[k] = s - 1
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
						isTarget := make([]bool, len(p.Tasks))
						isTarget[r] = true
						g := newGame(f, srcs)
						v.stats.Games++
						complete := g.play(isTarget, func(_ int32, tr []int32) bool {
							trace = tr[:len(tr):len(tr)]
							return false
						})
						v.gameSteps += *g.work
						if trace == nil {
							if !complete {
								v.inconclusive(fmt.Sprintf("the happens-before game for the read of task %q branched more than %d times", p.Tasks[r].Name, maxGameLeaves))
							}
							return true
						}
					}
					found = true
					reported++
					if reported > maxFindingsPerCode {
						return false
					}
					buf := p.Buffers[a.Buffer]
					at := bw.g.First(cell)
					m := newMsg().s("task ").q(p.Tasks[r].Name).s(" reads bytes [").i(geom.Byte(0, at.Lo)).s(", ").i(geom.Byte(0, at.Hi)).s(") of ").s(buf.Kind.String()).s(" ").s(buf.Name)
					if len(srcs) == 0 {
						m = m.s(", which no other task writes")
					} else {
						m = m.s(", and none of the ").i(int64(len(srcs))).s(" tasks that write them is ordered before it")
					}
					msg := m.String()
					v.add(Finding{Code: CodeUninitializedRead, Message: msg, Tasks: []int{r}, Fix: uninitFix(p, r, srcs, a.Buffer), Witness: f.events(trace)})
					return false
				})
				if err != nil {
					return err
				}
				if !ok {
					work = -1
					break
				}
			}
			if work < 0 {
				break
			}
		}
		if work < 0 {
			v.inconclusive(fmt.Sprintf("the uninitialized-read check stopped at task %q: splitting reads by the writes that cover them took more than %d steps", p.Tasks[r].Name, budget))
			break
		}
	}
	if reported > maxFindingsPerCode {
		v.truncated = append(v.truncated, fmt.Sprintf("%s: more than %d readers, %d reported", CodeUninitializedRead, maxFindingsPerCode, maxFindingsPerCode))
	}
	return nil
}
