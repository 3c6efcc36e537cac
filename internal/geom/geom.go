package geom

import (
	"cmp"
	"math/bits"
	"slices"
)

// bias is subtracted from a region's placement so that positions fill the
// int64 range: a byte number in [-2^62, 2^63) of a region placed at up to
// 2^62, and its exclusive end, become a position in [-2^63, 2^63).
const bias = 1 << 62

// Pos is the position of byte off of a region placed at base (an arena
// offset, or 0 for a buffer's own numbering). base must be at most 2^62
// and off within [-2^62, 2^62].
func Pos(base uint64, off int64) int64 { return int64(base) - bias + off }

// Byte is the byte number that position x names in a region placed at
// base: the inverse of [Pos], for messages.
func Byte(base uint64, x int64) int64 { return x - (int64(base) - bias) }

// Rect is the set of positions Off + r·Stride + c for r in [0, Rows) and c
// in [0, Len). Normalized (as [Strided] returns it): Len and Rows are at
// least 1, a one-row rectangle has Stride equal to Len, and a rectangle of
// several rows has Len < Stride (its rows neither touch nor overlap).
type Rect struct {
	Off, Len, Rows, Stride int64
}

// Strided is the normalized rectangle of rows rows (0 means 1) of length
// bytes, stride bytes apart, the first at position pos. length must be at
// least 1, and (rows-1)·stride + length at most 2^62.
func Strided(pos int64, length, rows, stride uint64) Rect {
	if rows <= 1 || length >= stride {
		n := length
		if rows > 1 {
			n = (rows-1)*stride + length
		}
		return Rect{Off: pos, Len: int64(n), Rows: 1, Stride: int64(n)}
	}
	return Rect{Off: pos, Len: int64(length), Rows: int64(rows), Stride: int64(stride)}
}

// End is the exclusive end of the rectangle's extent.
func (r Rect) End() int64 { return r.Off + (r.Rows-1)*r.Stride + r.Len }

// Contains reports whether position x is a byte of the rectangle.
func (r Rect) Contains(x int64) bool {
	if x < r.Off || x >= r.End() {
		return false
	}
	return (x-r.Off)%r.Stride < r.Len
}

// NextCovered returns the first position at or after x that the
// rectangle contains, and false if there is none.
func (r Rect) NextCovered(x int64) (int64, bool) {
	switch {
	case x < r.Off:
		return r.Off, true
	case x >= r.End():
		return 0, false
	}
	d := x - r.Off
	if d%r.Stride < r.Len {
		return x, true
	}
	if q := d / r.Stride; q+1 < r.Rows {
		return r.Off + (q+1)*r.Stride, true
	}
	return 0, false
}

// UncoveredUntil returns the end of the run of positions from x that no
// rectangle of covers contains, at most end: the first position at or
// after x that one contains, or end. x itself must be uncovered for the
// run to be one.
func UncoveredUntil(covers []Rect, x, end int64) int64 {
	for _, r := range covers {
		if y, ok := r.NextCovered(x); ok && y < end {
			end = y
		}
	}
	return end
}

// Overlap reports whether two rectangles share a byte. Two rows overlap
// exactly when one starts inside the other, so the question is whether
// some row of one starts inside a row of the other: a count of residues,
// by a floor sum.
func Overlap(a, b Rect) bool {
	if a.End() <= b.Off || b.End() <= a.Off {
		return false
	}
	return startsIn(a, b) || startsIn(b, a)
}

// startsIn reports whether some row of a starts inside a row of b. The
// extents overlap, so the two offsets are less than 2^62 apart.
func startsIn(a, b Rect) bool {
	d := a.Off - b.Off
	s1, s2 := uint64(a.Stride), uint64(b.Stride)
	top := uint64(b.Rows) * s2 // row i of a must start in [b.Off, b.Off+top)
	// i0: the first row of a starting at or after b.Off.
	var i0 uint64
	if d < 0 {
		i0 = ceilDiv(uint64(-d), s1)
	}
	// i1: the first row of a starting at or after b.Off + top.
	var i1 uint64
	switch {
	case d < 0:
		i1 = ceilDiv(top+uint64(-d), s1)
	case uint64(d) < top:
		i1 = ceilDiv(top-uint64(d), s1)
	}
	i1 = min(i1, uint64(a.Rows))
	if i0 >= i1 {
		return false
	}
	// Row i0 starts at b.Off + x0, with 0 <= x0 < top.
	var x0 uint64
	if d < 0 {
		x0 = i0*s1 - uint64(-d)
	} else {
		x0 = uint64(d) + i0*s1
	}
	return countMod(i1-i0, s2, s1%s2, x0%s2, 0, uint64(b.Len)) > 0
}

func ceilDiv(a, b uint64) uint64 { return a/b + min(a%b, 1) }

// countMod counts i in [0, n) with (a·i + b) mod m in [lo, hi), for
// a, b < m and lo < hi <= m: the difference of two floor sums, since
// floor((a·i+b-lo)/m) - floor((a·i+b)/m) + 1 is 1 exactly when the residue
// is at least lo. The sums are taken modulo 2^64; the count fits.
func countMod(n, m, a, b, lo, hi uint64) uint64 {
	return floorSum(n, m, a, b+m-lo) - floorSum(n, m, a, b+m-hi)
}

// floorSum is the sum of floor((a·i + b)/m) for i in [0, n), modulo 2^64
// (the Euclid-like recursion of AtCoder Library's floor_sum_unsigned, with
// the 128-bit products it needs).
func floorSum(n, m, a, b uint64) uint64 {
	var ans uint64
	for {
		if a >= m {
			ans += tri(n) * (a / m)
			a %= m
		}
		if b >= m {
			ans += n * (b / m)
			b %= m
		}
		hi, lo := bits.Mul64(a, n)
		var c uint64
		lo, c = bits.Add64(lo, b, 0)
		hi += c
		if hi == 0 && lo < m {
			return ans
		}
		// a·n + b < m·(n+1): the quotient fits and hi < m.
		n, b = bits.Div64(hi, lo, m)
		m, a = a, m
	}
}

// tri is n(n-1)/2 modulo 2^64.
func tri(n uint64) uint64 {
	if n%2 == 0 {
		return n / 2 * (n - 1)
	}
	return (n - 1) / 2 * n
}

// Grid sees positions as rows of W bytes: position x is row floor(x/W),
// column x mod W. W = 0 is the plain grid: one row, whose columns are the
// positions themselves.
type Grid struct{ W int64 }

// Piece is a set of positions of a grid: rows [R0, R1) and, within each,
// columns [C0, C1). In the plain grid R0 = 0 and R1 = 1.
type Piece struct{ R0, R1, C0, C1 int64 }

// Overlaps reports whether two pieces of one grid share a position.
func (p Piece) Overlaps(q Piece) bool {
	return p.R0 < q.R1 && q.R0 < p.R1 && p.C0 < q.C1 && q.C0 < p.C1
}

// Span is the range of positions [Lo, Hi).
type Span struct{ Lo, Hi int64 }

// First is the range of positions of the piece's first row.
func (g Grid) First(p Piece) Span {
	if g.W == 0 {
		return Span{p.C0, p.C1}
	}
	return Span{p.R0*g.W + p.C0, p.R0*g.W + p.C1}
}

func floorDiv(x, w int64) int64 {
	q := x / w
	if x%w < 0 {
		q--
	}
	return q
}

func floorMod(x, w int64) int64 {
	m := x % w
	if m < 0 {
		m += w
	}
	return m
}

// Pieces appends the pieces of r to dst: disjoint, and together exactly
// the bytes of r.
func (g Grid) Pieces(dst []Piece, r Rect) []Piece {
	W := g.W
	switch {
	case r.Rows == 1:
		return g.span(dst, r.Off, r.Off+r.Len)
	case W > 0 && W%r.Stride == 0:
		m := W / r.Stride
		for j := int64(0); j < min(r.Rows, m); j++ {
			n := (r.Rows - j + m - 1) / m // rows r ≡ j (mod m)
			start := r.Off + j*r.Stride
			q, c := floorDiv(start, W), floorMod(start, W)
			if c+r.Len <= W {
				dst = append(dst, Piece{q, q + n, c, c + r.Len})
			} else {
				dst = append(dst, Piece{q, q + n, c, W}, Piece{q + 1, q + 1 + n, 0, c + r.Len - W})
			}
		}
		return dst
	}
	for i := int64(0); i < r.Rows; i++ {
		lo := r.Off + i*r.Stride
		dst = g.span(dst, lo, lo+r.Len)
	}
	return dst
}

// span appends the pieces of the positions [lo, hi): a partial first row,
// the full rows, a partial last row.
func (g Grid) span(dst []Piece, lo, hi int64) []Piece {
	W := g.W
	if W == 0 {
		return append(dst, Piece{0, 1, lo, hi})
	}
	q0, c0 := floorDiv(lo, W), floorMod(lo, W)
	q1, c1 := floorDiv(hi-1, W), floorMod(hi-1, W)+1
	if q0 == q1 {
		return append(dst, Piece{q0, q0 + 1, c0, c1})
	}
	mid0, mid1 := q0+1, q1 // full rows
	if c0 == 0 {
		mid0 = q0
	} else {
		dst = append(dst, Piece{q0, q0 + 1, c0, W})
	}
	if c1 == W {
		mid1 = q1 + 1
	}
	if mid0 < mid1 {
		dst = append(dst, Piece{mid0, mid1, 0, W})
	}
	if c1 != W {
		dst = append(dst, Piece{q1, q1 + 1, 0, c1})
	}
	return dst
}

// Count is the number of pieces [Grid.Pieces] gives r, or an upper bound
// of it, saturating at 2^62.
func (g Grid) Count(r Rect) int64 {
	const most = 1 << 62
	W := g.W
	switch {
	case W == 0:
		return r.Rows
	case r.Rows == 1:
		return 3
	case W%r.Stride == 0:
		return 2 * min(r.Rows, W/r.Stride)
	}
	if r.Rows > most/3 {
		return most
	}
	return 3 * r.Rows
}

// maxCandidates bounds the strides a [Chooser] tries.
const maxCandidates = 16

// maxStrides bounds the distinct strides a [Chooser] weighs; rectangles
// of further strides are cut into their rows.
const maxStrides = 64

// Choose picks a grid for rects (see [Chooser]) and reports whether their
// pieces fit in budget.
func Choose(rects []Rect, budget int64) (Grid, bool) {
	var c Chooser
	for _, r := range rects {
		c.Note(r)
	}
	c.Plan()
	for _, r := range rects {
		c.Count(r)
	}
	return c.Best(budget)
}

// Chooser picks a grid for rectangles seen one at a time, in two passes,
// without keeping them: [Chooser.Note] each, [Chooser.Plan], then
// [Chooser.Count] each again. The grid is the plain one, or the one of the
// least common multiples of the first k strides (by decreasing total rows,
// at most 16 of them) that makes the fewest pieces; a rectangle whose
// stride does not divide it is cut into its rows. The zero value is ready.
type Chooser struct {
	strides []strideWeight
	grids   []Grid
	costs   []int64
}

type strideWeight struct{ s, rows int64 }

// Note weighs r's stride (first pass).
func (c *Chooser) Note(r Rect) {
	if r.Rows <= 1 {
		return
	}
	for i := range c.strides {
		if c.strides[i].s == r.Stride {
			c.strides[i].rows = min(c.strides[i].rows+r.Rows, 1<<62)
			return
		}
	}
	if len(c.strides) < maxStrides {
		c.strides = append(c.strides, strideWeight{r.Stride, r.Rows})
	}
}

// Plan lists the grids to try (between the passes).
func (c *Chooser) Plan() {
	slices.SortFunc(c.strides, func(a, b strideWeight) int {
		if a.rows != b.rows {
			return cmp.Compare(b.rows, a.rows)
		}
		return cmp.Compare(a.s, b.s)
	})
	c.grids = append(c.grids[:0], Grid{})
	var w int64
	for _, sw := range c.strides[:min(len(c.strides), maxCandidates)] {
		if next, ok := lcm(w, sw.s); ok && next != w {
			w = next
			c.grids = append(c.grids, Grid{w})
		}
	}
	c.costs = make([]int64, len(c.grids))
}

// Count adds r's pieces in every grid tried (second pass).
func (c *Chooser) Count(r Rect) {
	for i, g := range c.grids {
		c.costs[i] = min(c.costs[i]+g.Count(r), 1<<62)
	}
}

// Best is the grid of fewest pieces, and whether they fit in budget.
func (c *Chooser) Best(budget int64) (Grid, bool) {
	if len(c.grids) == 0 {
		return Grid{}, budget >= 0
	}
	k := 0
	for i, n := range c.costs {
		if n < c.costs[k] {
			k = i
		}
	}
	return c.grids[k], c.costs[k] <= budget
}

// Pieces is the number of pieces of the best grid (after the second pass).
func (c *Chooser) Pieces() int64 {
	if len(c.costs) == 0 {
		return 0
	}
	return slices.Min(c.costs)
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// lcm is the least common multiple of w (0 for none yet) and s, if it is
// at most 2^62.
func lcm(w, s int64) (int64, bool) {
	if w == 0 {
		return s, true
	}
	a := w / gcd(w, s)
	if a > (1<<62)/s {
		return 0, false
	}
	return a * s, true
}

// Cells splits piece t by the set of groups of the pieces cands (of the
// same grid; gids[i] is the group of cands[i]) that cover its positions:
// row bands where the set of covering pieces is constant, then column
// segments within each band, found by a sweep over the pieces' column
// ends. It calls visit with each cell and the sorted distinct groups
// covering it (empty for bytes nothing covers; visit must not keep the
// slice), until visit returns false. The work it does (pieces, their ends,
// cells and the sizes of their sets) is taken from *work; it returns false
// if that ran out.
func Cells(t Piece, cands []Piece, gids []int32, work *int64, visit func(set []int32, cell Piece) bool) bool {
	type gp struct {
		p Piece
		g int32
	}
	if *work -= int64(len(cands)) + 1; *work < 0 {
		return false
	}
	var cs []gp
	rows := []int64{t.R0, t.R1}
	for i, c := range cands {
		c = Piece{max(c.R0, t.R0), min(c.R1, t.R1), max(c.C0, t.C0), min(c.C1, t.C1)}
		if c.R0 >= c.R1 || c.C0 >= c.C1 {
			continue
		}
		cs = append(cs, gp{c, gids[i]})
		rows = append(rows, c.R0, c.R1)
	}
	slices.Sort(rows)
	rows = slices.Compact(rows)
	slices.SortFunc(cs, func(a, b gp) int { return cmp.Compare(a.p.R0, b.p.R0) })
	type end struct {
		at  int64
		g   int32
		add bool
	}
	var active []gp
	var ends []end
	var set []int32
	count := map[int32]int{}
	next := 0
	for k := 0; k+1 < len(rows); k++ {
		lo, hi := rows[k], rows[k+1]
		keep := active[:0]
		for _, a := range active {
			if a.p.R1 > lo {
				keep = append(keep, a)
			}
		}
		active = keep
		for next < len(cs) && cs[next].p.R0 <= lo {
			active = append(active, cs[next])
			next++
		}
		ends = ends[:0]
		for _, a := range active {
			ends = append(ends, end{a.p.C0, a.g, true}, end{a.p.C1, a.g, false})
		}
		slices.SortFunc(ends, func(a, b end) int { return cmp.Compare(a.at, b.at) })
		if *work -= int64(len(ends)) + 1; *work < 0 {
			return false
		}
		clear(count)
		set = set[:0]
		at := t.C0
		for e := 0; ; {
			x := t.C1
			if e < len(ends) {
				x = ends[e].at
			}
			if x > at {
				if *work -= int64(len(set)) + 1; *work < 0 {
					return false
				}
				if !visit(set, Piece{lo, hi, at, x}) {
					return true
				}
				at = x
			}
			if e == len(ends) {
				break
			}
			for ; e < len(ends) && ends[e].at == x; e++ {
				g := ends[e].g
				if ends[e].add {
					if count[g]++; count[g] == 1 {
						i, _ := slices.BinarySearch(set, g)
						set = slices.Insert(set, i, g)
					}
				} else if count[g]--; count[g] == 0 {
					i, _ := slices.BinarySearch(set, g)
					set = slices.Delete(set, i, i+1)
				}
			}
		}
	}
	return true
}

// Partition splits the bytes of target by the set of groups covering
// them: it calls visit once for each distinct set (sorted group indices;
// empty for bytes no group covers) with a range of positions covered by
// exactly that set, until visit returns false. budget bounds both the
// pieces of the grid it chooses and its work; it returns false if the
// question needs more.
func Partition(target []Rect, groups [][]Rect, budget int64, visit func(set []int32, at Span) bool) bool {
	all := slices.Clone(target)
	for _, g := range groups {
		all = append(all, g...)
	}
	g, ok := Choose(all, budget)
	if !ok {
		return false
	}
	var tp, cands []Piece
	var gids []int32
	for _, r := range target {
		tp = g.Pieces(tp, r)
	}
	for i, rs := range groups {
		for _, r := range rs {
			n := len(cands)
			cands = g.Pieces(cands, r)
			for range len(cands) - n {
				gids = append(gids, int32(i))
			}
		}
	}
	work := budget
	seen := map[string]bool{}
	var key []byte
	var near []Piece
	var nearG []int32
	stop := false
	for _, t := range tp {
		near, nearG = near[:0], nearG[:0]
		if work -= int64(len(cands)); work < 0 {
			return false
		}
		for i, c := range cands {
			if c.Overlaps(t) {
				near = append(near, c)
				nearG = append(nearG, gids[i])
			}
		}
		ok := Cells(t, near, nearG, &work, func(set []int32, cell Piece) bool {
			key = key[:0]
			for _, s := range set {
				key = append(key, byte(s), byte(s>>8), byte(s>>16), byte(s>>24))
			}
			if seen[string(key)] {
				return true
			}
			seen[string(key)] = true
			if !visit(set, g.First(cell)) {
				stop = true
				return false
			}
			return true
		})
		if !ok {
			return false
		}
		if stop {
			return true
		}
	}
	return true
}

// Uncovered returns a range of positions of target that no rectangle of
// covers contains, with found false if there is none. ok is false if the
// question needs more than budget (see [Partition]).
func Uncovered(target []Rect, covers []Rect, budget int64) (gap Span, found, ok bool) {
	ok = Partition(target, [][]Rect{covers}, budget, func(set []int32, at Span) bool {
		if len(set) == 0 {
			gap, found = at, true
			return false
		}
		return true
	})
	return gap, found && ok, ok
}
