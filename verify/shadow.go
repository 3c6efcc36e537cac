package verify

import (
	"context"
	"math"
	"slices"

	"github.com/megaproof/megaproof/schedule"
)

// The shadow pass: one walk over the greedy run, in its order, with the
// proof clocks, keeping for every byte of every written arena the last
// task that wrote it and the tasks that read it since. Each access is
// checked against that state only: a read against the last write, a write
// against the last write and the reads since. Must-happen-before is
// transitive and includes program order, so when every such check is
// proven, every pair of conflicting accesses is ordered: between two
// accesses of one byte, the writes in between form a chain of proven
// steps (a read dropped from a list was proven before the read that
// replaced it). The pass proves; it never refutes. The checks its clocks
// cannot prove are listed as pairs of adjacent accesses for the exact
// decision; if all of those are ordered, so is every conflicting pair.
//
// The same state decides most reads of scratch and output bytes: a byte
// whose last write was to the same buffer, proven before the read, is
// covered by a write that happens before it.
//
// Each arena is kept in the grid its accesses are swept in (see grid and
// internal/geom: a strided access is a few row-range × column-range items,
// whatever its rows) as row bands (split where an item's rows begin or
// end), each a sorted list of disjoint column segments; a band list and a
// segment list only split where accesses do, so the state stays as small
// as the pattern of accesses. An arena whose geometry needs more items than
// the grid's budget is seen by the accesses' extents: a superset of their
// bytes, so what the pass proves ordered still is, but it proves no read
// of that arena initialized.

// useShadow enables the shadow pass; tests turn it off to compare.
var useShadow = true

// shadowClocks lets the pass prove checks with its clocks; tests turn it
// off to send every check to the exact decision of adjacent pairs.
var shadowClocks = true

// shadowBudget bounds the segments the pass may touch and move before it
// leaves the program to the pairwise analysis: splitting segment lists in
// the middle is linear in their length, so adversarial access orders could
// otherwise make the pass quadratic. Tests shrink it.
var shadowBudget = func(accesses int) int { return 64*accesses + 1<<22 }

type segment struct {
	lo, hi int64
	writer int32 // the last task that wrote these bytes, or -1
	buf    int32 // the buffer it wrote them through
	reads  int32 // the readers since, a list in shadowArena.nodes, or -1
}

type band struct {
	rlo, rhi int64
	segs     []segment
}

type readNode struct{ task, next int32 }

type shadowArena struct {
	bands  []band
	nodes  []readNode // persistent lists: split segments share their tails
	bands0 [4]band    // the first room of bands, in the arena's own allocation
}

// shadowPass is the state of the pass over the greedy run.
type shadowPass struct {
	v         *verifier
	cp        *clockPass
	g         *grid
	arenas    []*shadowArena // per dense key, while some access is still to come
	task      int32          // the task whose body is being visited
	unproven  []pairInfo     // pairs of adjacent accesses the clocks could not prove
	uninit    bool           // some read of scratch or output bytes was not proven covered
	checks    int            // distinct pairs of tasks on different threads proven ordered
	checked   []int32        // per task: 1 + the last visited task it was checked against
	work      int            // segments touched and moved, against budget
	budget    int
	out       []segment      // scratch for the segments replacing a range
	items     []item         // scratch for an access's items
	spare     []*shadowArena // released arenas, for reuse
	spareSegs [][]segment    // released segment lists, for reuse

	// The first room of items, spare and spareSegs, in the pass's own
	// allocation: tiny programs are verified by the thousand.
	items0     [4]item
	spare0     [4]*shadowArena
	spareSegs0 [8][]segment
}

// shadowOrder runs the pass. complete is false when the pass stopped
// (work budget, ctx); otherwise every conflicting pair is ordered by
// happens-before if every pair of unproven is, and every read of scratch
// or output bytes is covered too if initialized (given the same).
func (v *verifier) shadowOrder(ctx context.Context, run *engine, g *grid, accesses int) (complete, initialized bool, unproven []pairInfo, err error) {
	f := v.f
	if err := ctx.Err(); err != nil {
		return false, false, nil, err
	}
	cp := newClockPassCtx(ctx, f, !f.syncing)
	if cp == nil {
		return false, false, nil, ctx.Err()
	}
	defer cp.release()
	sp := &shadowPass{v: v, cp: cp, g: g, arenas: make([]*shadowArena, len(g.written)),
		budget: shadowBudget(accesses), checked: make([]int32, len(f.p.Tasks))}
	sp.items, sp.spare, sp.spareSegs = sp.items0[:0], sp.spare0[:0], sp.spareSegs0[:0]
	p := f.p
	visited, nextCheck := 0, 1<<16
	cp.run(run.trace, func(b int32) bool {
		if visited++; visited%1024 == 1 || sp.work >= nextCheck {
			nextCheck = sp.work + 1<<16
			if ctx.Err() != nil {
				err = ctx.Err()
				return false
			}
		}
		sp.task = b
		t := &p.Tasks[b]
		for _, a := range t.Reads {
			sp.access(a, false)
		}
		for _, a := range t.Writes {
			sp.access(a, true)
		}
		return sp.work <= sp.budget
	})
	if err == nil {
		err = cp.err
	}
	if err != nil || sp.work > sp.budget {
		return false, false, nil, err
	}
	v.stats.Pairs = sp.checks
	return true, !sp.uninit, sp.unproven, nil
}

func needsInit(k schedule.BufferKind) bool {
	return k == schedule.KindScratch || k == schedule.KindOutput
}

func (sp *shadowPass) access(a schedule.Access, write bool) {
	g := sp.g
	d := g.key[a.Buffer]
	init := !write && needsInit(sp.v.f.p.Buffers[a.Buffer].Kind)
	if !g.written[d] {
		if init {
			sp.uninit = true // nothing writes the arena
		}
		return
	}
	sa := sp.arenas[d]
	if sa == nil {
		sa = sp.newArena()
		sp.arenas[d] = sa
	}
	if init && g.approx[d] {
		sp.uninit = true // the pass sees writes by their extents here
	}
	sp.items = g.appendItems(sp.items[:0], a)
	for _, it := range sp.items {
		if it.R0 >= it.R1 || it.C0 >= it.C1 {
			continue
		}
		i := sp.splitBand(sa, it.R0)
		j := sp.splitBand(sa, it.R1)
		for k := i; k < j; k++ {
			if write {
				sp.write(sa, &sa.bands[k], it.C0, it.C1, a.Buffer)
			} else {
				sp.read(sa, &sa.bands[k], it.C0, it.C1, a.Buffer, init)
			}
		}
	}
	if g.uses[d]--; g.uses[d] == 0 {
		// No access to come: the state's lists go to the next arena.
		sp.arenas[d] = nil
		for _, b := range sa.bands {
			sp.spareSegs = append(sp.spareSegs, b.segs[:0])
		}
		sa.bands, sa.nodes = sa.bands[:0], sa.nodes[:0]
		sp.spare = append(sp.spare, sa)
	}
}

// newArena returns the state of an arena nothing accessed yet: one band of
// every row, no segment.
func (sp *shadowPass) newArena() *shadowArena {
	var sa *shadowArena
	if n := len(sp.spare); n > 0 {
		sa = sp.spare[n-1]
		sp.spare = sp.spare[:n-1]
	} else {
		sa = &shadowArena{}
		sa.bands = sa.bands0[:0]
	}
	sa.bands = append(sa.bands, band{rlo: math.MinInt64, rhi: math.MaxInt64, segs: sp.segList()})
	return sa
}

// segList returns an empty segment list, reusing a released one.
func (sp *shadowPass) segList() []segment {
	if n := len(sp.spareSegs); n > 0 {
		l := sp.spareSegs[n-1]
		sp.spareSegs = sp.spareSegs[:n-1]
		return l
	}
	return nil
}

// splitBand makes r the start of a band and returns that band's index.
func (sp *shadowPass) splitBand(sa *shadowArena, r int64) int {
	// Binary search for the first band starting at or after r.
	lo, hi := 0, len(sa.bands)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if sa.bands[m].rlo < r {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(sa.bands) && sa.bands[lo].rlo == r {
		return lo
	}
	// Band lo-1 contains r.
	i := lo
	old := &sa.bands[i-1]
	nb := band{rlo: r, rhi: old.rhi, segs: append(sp.segList(), old.segs...)}
	old.rhi = r
	sp.work += len(old.segs) + len(sa.bands) - i
	sa.bands = slices.Insert(sa.bands, i, nb)
	return i
}

// before checks that task a's body happens before the visited task's:
// proven by the clocks, or noted for the exact analysis.
func (sp *shadowPass) before(a int32) {
	f := sp.v.f
	if a == sp.task || f.taskTh[a] == f.taskTh[sp.task] || sp.checked[a] == sp.task+1 {
		return
	}
	sp.checked[a] = sp.task + 1
	if shadowClocks && sp.cp.precedes(a) {
		sp.checks++
		return
	}
	lo, hi := min(a, sp.task), max(a, sp.task)
	sp.unproven = append(sp.unproven, pairInfo{key: uint64(lo)<<32 | uint64(hi)})
}

// overlapping returns the range [i, j) of segments that overlap [lo, hi).
func overlapping(segs []segment, lo, hi int64) (int, int) {
	i, j := 0, len(segs)
	for i < j {
		m := int(uint(i+j) >> 1)
		if segs[m].hi <= lo {
			i = m + 1
		} else {
			j = m
		}
	}
	j = i
	for j < len(segs) && segs[j].lo < hi {
		j++
	}
	return i, j
}

// replace puts sp.out in place of segments [i, j) of the band.
func (sp *shadowPass) replace(bd *band, i, j int) {
	if len(sp.out) != j-i {
		sp.work += len(bd.segs) - j
	}
	sp.work += len(sp.out)
	bd.segs = slices.Replace(bd.segs, i, j, sp.out...)
}

func (sp *shadowPass) read(sa *shadowArena, bd *band, lo, hi int64, buf int32, init bool) {
	i, j := overlapping(bd.segs, lo, hi)
	if i < j && bd.segs[i].lo == lo && bd.segs[j-1].hi == hi && contiguous(bd.segs[i:j]) {
		// The read covers whole segments: no segment changes but its
		// readers.
		for k := i; k < j; k++ {
			s := &bd.segs[k]
			if s.writer >= 0 && !shadowMisses(s, lo, hi) {
				sp.before(s.writer)
			}
			if init && (s.writer < 0 || s.buf != buf) {
				sp.uninit = true
			}
			s.reads = sp.push(sa, s.reads)
		}
		sp.work += j - i
		return
	}
	sp.out = sp.out[:0]
	cur := lo
	for _, s := range bd.segs[i:j] {
		if s.lo < lo {
			left := s
			left.hi = lo
			sp.out = append(sp.out, left)
		}
		if cur < s.lo {
			sp.gap(sa, cur, s.lo, init)
		}
		if s.writer >= 0 && !shadowMisses(&s, lo, hi) {
			sp.before(s.writer)
		}
		if init && (s.writer < 0 || s.buf != buf) {
			sp.uninit = true
		}
		mid := s
		mid.lo, mid.hi = max(s.lo, lo), min(s.hi, hi)
		mid.reads = sp.push(sa, s.reads)
		sp.out = append(sp.out, mid)
		if s.hi > hi {
			right := s
			right.lo = hi
			sp.out = append(sp.out, right)
		}
		cur = s.hi
	}
	if cur < hi {
		sp.gap(sa, cur, hi, init)
	}
	sp.replace(bd, i, j)
}

func contiguous(segs []segment) bool {
	for k := 1; k < len(segs); k++ {
		if segs[k].lo != segs[k-1].hi {
			return false
		}
	}
	return true
}

// gap records a read of bytes nothing accessed before.
func (sp *shadowPass) gap(sa *shadowArena, lo, hi int64, init bool) {
	if init {
		sp.uninit = true
	}
	sp.out = append(sp.out, segment{lo: lo, hi: hi, writer: -1, buf: -1, reads: sp.push(sa, -1)})
}

// push adds the visited task to a list of readers. A reader proven before
// it (the head, when it is of the same thread or its clock says so) is
// dropped: whatever is proven after the new reader is after it too.
func (sp *shadowPass) push(sa *shadowArena, head int32) int32 {
	next := head
	if head >= 0 {
		h := sa.nodes[head].task
		f := sp.v.f
		if h == sp.task || f.taskTh[h] == f.taskTh[sp.task] || sp.cp.precedes(h) {
			next = sa.nodes[head].next
		}
	}
	sa.nodes = append(sa.nodes, readNode{sp.task, next})
	return int32(len(sa.nodes) - 1)
}

func (sp *shadowPass) write(sa *shadowArena, bd *band, lo, hi int64, buf int32) {
	i, j := overlapping(bd.segs, lo, hi)
	sp.out = sp.out[:0]
	if i < j && bd.segs[i].lo < lo {
		left := bd.segs[i]
		left.hi = lo
		sp.out = append(sp.out, left)
	}
	sp.out = append(sp.out, segment{lo: lo, hi: hi, writer: sp.task, buf: buf, reads: -1})
	for _, s := range bd.segs[i:j] {
		if s.writer >= 0 && !shadowMisses(&s, lo, hi) {
			sp.before(s.writer)
		}
		for r := s.reads; r >= 0 && !shadowMisses(&s, lo, hi); r = sa.nodes[r].next {
			sp.work++
			sp.before(sa.nodes[r].task)
		}
	}
	if i < j && bd.segs[j-1].hi > hi {
		right := bd.segs[j-1]
		right.lo = hi
		sp.out = append(sp.out, right)
	}
	sp.replace(bd, i, j)
}
