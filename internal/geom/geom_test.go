package geom

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// smallRect draws a normalized rectangle whose bytes lie in [0, 64).
func smallRect(t *rapid.T, label string) Rect {
	rows := rapid.Uint64Range(0, 6).Draw(t, label+".rows")
	length := rapid.Uint64Range(1, 8).Draw(t, label+".length")
	var stride uint64
	if rows > 1 {
		stride = rapid.Uint64Range(1, 9).Draw(t, label+".stride")
	}
	n := uint64(1)
	if rows > 1 {
		n = rows
	}
	extent := length
	if rows > 1 {
		extent = (rows-1)*stride + length
	}
	off := rapid.Int64Range(-4, 64-int64(extent)).Draw(t, label+".offset")
	return Strided(off, length, n, stride)
}

// bytesOf enumerates a rectangle's positions: the definition, row by row.
func bytesOf(r Rect) map[int64]bool {
	out := map[int64]bool{}
	for i := int64(0); i < r.Rows; i++ {
		for c := int64(0); c < r.Len; c++ {
			out[r.Off+i*r.Stride+c] = true
		}
	}
	return out
}

func TestStridedNormalizes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := smallRect(t, "r")
		if r.Len < 1 || r.Rows < 1 || (r.Rows == 1 && r.Stride != r.Len) || (r.Rows > 1 && r.Len >= r.Stride) {
			t.Fatalf("not normalized: %+v", r)
		}
		b := bytesOf(r)
		for x := int64(-8); x < 80; x++ {
			if r.Contains(x) != b[x] {
				t.Fatalf("%+v: Contains(%d) = %v", r, x, r.Contains(x))
			}
		}
	})
	// Touching rows are one row: 4 rows of 3 bytes, 3 apart.
	if r := Strided(10, 3, 4, 3); r != (Rect{10, 12, 1, 12}) {
		t.Fatalf("got %+v", r)
	}
}

// Overlap agrees with byte enumeration.
func TestOverlapBruteForce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b := smallRect(t, "a"), smallRect(t, "b")
		ba, bb := bytesOf(a), bytesOf(b)
		want := false
		for x := range ba {
			if bb[x] {
				want = true
			}
		}
		if got := Overlap(a, b); got != want {
			t.Fatalf("Overlap(%+v, %+v) = %v, bytes say %v", a, b, got, want)
		}
	})
}

// rowsOverlap decides overlap by visiting the rows of a, each against b by
// division: a reference that works at any coordinates when a has few rows.
func rowsOverlap(a, b Rect) bool {
	for i := int64(0); i < a.Rows; i++ {
		lo, hi := a.Off+i*a.Stride, a.Off+i*a.Stride+a.Len
		// rows j of b with b.Off + j·S < hi and b.Off + j·S + L > lo
		jmax := floorDiv(hi-1-b.Off, b.Stride) // last row starting before hi
		jmin := floorDiv(lo-b.Off-b.Len, b.Stride) + 1
		jmin, jmax = max(jmin, 0), min(jmax, b.Rows-1)
		if jmin <= jmax {
			return true
		}
	}
	return false
}

// At coordinates near the limits of valid programs (positions spread over
// the whole int64 range, strides up to 2^62) Overlap agrees with the
// row-by-row reference, which needs no floor sums.
func TestOverlapLarge(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		big := func(label string, rows int64) Rect {
			r := rapid.Int64Range(1, rows).Draw(t, label+".rows")
			stride := rapid.Int64Range(2, 1<<62/max(r, 1)).Draw(t, label+".stride")
			length := rapid.Int64Range(1, stride-1).Draw(t, label+".length")
			extent := (r-1)*stride + length
			off := rapid.Int64Range(math.MinInt64, math.MaxInt64-extent).Draw(t, label+".offset")
			return Strided(off, uint64(length), uint64(r), uint64(stride))
		}
		a := big("a", 200)
		b := big("b", 1<<40)
		// Put b near a half of the time, so that overlaps happen.
		if rapid.Bool().Draw(t, "near") {
			shift := rapid.Int64Range(-1<<20, 1<<20).Draw(t, "shift")
			if off := a.Off + shift; off <= math.MaxInt64-(b.End()-b.Off) && (shift >= 0 || a.Off >= math.MinInt64-shift) {
				b.Off = off
			}
		}
		if got, want := Overlap(a, b), rowsOverlap(a, b); got != want {
			t.Fatalf("Overlap(%+v, %+v) = %v, rows say %v", a, b, got, want)
		}
		if got, want := Overlap(b, a), rowsOverlap(a, b); got != want {
			t.Fatalf("Overlap(%+v, %+v) = %v, rows say %v", b, a, got, want)
		}
	})
}

func TestFloorSum(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.Uint64Range(0, 50).Draw(t, "n")
		m := rapid.Uint64Range(1, 50).Draw(t, "m")
		a := rapid.Uint64Range(0, 200).Draw(t, "a")
		b := rapid.Uint64Range(0, 200).Draw(t, "b")
		var want uint64
		for i := uint64(0); i < n; i++ {
			want += (a*i + b) / m
		}
		if got := floorSum(n, m, a, b); got != want {
			t.Fatalf("floorSum(%d, %d, %d, %d) = %d, want %d", n, m, a, b, got, want)
		}
	})
	// A row count at the limit: 2^62 rows of stride 3 starting at residue 1
	// modulo 4 have residues 1, 0, 3, 2, ... each a quarter of the time.
	if got := countMod(1<<62, 4, 3, 1, 0, 1); got != 1<<60 {
		t.Fatalf("countMod = %d, want 2^60", got)
	}
}

// Pieces are disjoint and hold exactly the rectangle's bytes, in any grid.
func TestPieces(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := smallRect(t, "r")
		g := Grid{rapid.SampledFrom([]int64{0, 1, 2, 3, 4, 6, 7, 12, 24, 100}).Draw(t, "W")}
		ps := g.Pieces(nil, r)
		if n := g.Count(r); int64(len(ps)) > n {
			t.Fatalf("%d pieces, Count says at most %d", len(ps), n)
		}
		got := map[int64]int{}
		for _, p := range ps {
			if p.R0 >= p.R1 || p.C0 >= p.C1 || (g.W == 0 && (p.R0 != 0 || p.R1 != 1)) || (g.W > 0 && (p.C0 < 0 || p.C1 > g.W)) {
				t.Fatalf("bad piece %+v in grid %d", p, g.W)
			}
			for row := p.R0; row < p.R1; row++ {
				for c := p.C0; c < p.C1; c++ {
					got[row*g.W+c]++
				}
			}
		}
		want := bytesOf(r)
		for x, n := range got {
			if n != 1 || !want[x] {
				t.Fatalf("%+v in grid %d: position %d covered %d times (in rect: %v); pieces %v", r, g.W, x, n, want[x], ps)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("%+v in grid %d: %d positions, want %d", r, g.W, len(got), len(want))
		}
	})
}

// Partition reports exactly the distinct covering sets that byte
// enumeration finds, each with a range covered by exactly that set.
func TestPartitionBruteForce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		target := []Rect{smallRect(t, "t0")}
		if rapid.Bool().Draw(t, "two targets") {
			target = append(target, smallRect(t, "t1"))
		}
		ng := rapid.IntRange(0, 4).Draw(t, "groups")
		groups := make([][]Rect, ng)
		for i := range groups {
			for k := range rapid.IntRange(1, 3).Draw(t, fmt.Sprintf("g%d.n", i)) {
				groups[i] = append(groups[i], smallRect(t, fmt.Sprintf("g%d.%d", i, k)))
			}
		}
		setAt := func(x int64) string {
			var s []int32
			for i, g := range groups {
				for _, r := range g {
					if r.Contains(x) {
						s = append(s, int32(i))
						break
					}
				}
			}
			return fmt.Sprint(s)
		}
		want := map[string]bool{}
		for _, r := range target {
			for x := range bytesOf(r) {
				want[setAt(x)] = true
			}
		}
		got := map[string]bool{}
		ok := Partition(target, groups, 1<<20, func(set []int32, at Span) bool {
			k := fmt.Sprint(slices.Clone(set))
			if set == nil || len(set) == 0 {
				k = fmt.Sprint([]int32(nil))
			}
			if got[k] {
				t.Fatalf("set %s reported twice", k)
			}
			got[k] = true
			if at.Lo >= at.Hi {
				t.Fatalf("empty range for %s", k)
			}
			for x := at.Lo; x < at.Hi; x++ {
				in := false
				for _, r := range target {
					in = in || r.Contains(x)
				}
				if !in || setAt(x) != k {
					t.Fatalf("position %d reported with set %s: in target %v, covered by %s", x, k, in, setAt(x))
				}
			}
			return true
		})
		if !ok {
			t.Fatal("budget ran out on a small question")
		}
		if len(got) != len(want) {
			t.Fatalf("sets %v, want %v", got, want)
		}
		for k := range want {
			if !got[k] {
				t.Fatalf("set %s missing: got %v", k, got)
			}
		}
		// Uncovered is the empty set's report.
		var covers []Rect
		for _, g := range groups {
			covers = append(covers, g...)
		}
		gap, found, ok := Uncovered(target, covers, 1<<20)
		if !ok || found != want["[]"] {
			t.Fatalf("Uncovered found %v (ok %v), want %v", found, ok, want["[]"])
		}
		if found {
			for x := gap.Lo; x < gap.Hi; x++ {
				for _, c := range covers {
					if c.Contains(x) {
						t.Fatalf("gap %v contains covered position %d", gap, x)
					}
				}
			}
		}
	})
}

// The reproducers' geometry costs a few pieces, whatever the rows.
func TestHugeRowsFewPieces(t *testing.T) {
	n := uint64(100_000_000)
	a := Strided(Pos(0, 0), 1, n, 2)
	b := Strided(Pos(0, 1), 1, n, 4)
	c := Strided(Pos(0, 0), 1, n, 3)
	if Overlap(a, b) {
		t.Fatal("even bytes and bytes 1 mod 4 overlap")
	}
	if !Overlap(a, c) || !Overlap(b, c) {
		t.Fatal("multiples of 3 meet even bytes and bytes 1 mod 4")
	}
	g, ok := Choose([]Rect{a, b, c}, 64)
	if !ok || g.W != 12 {
		t.Fatalf("grid %+v ok %v, want the 12-byte grid", g, ok)
	}
	out := Strided(Pos(0, 0), 3*n, 1, 0)
	gap, found, ok := Uncovered([]Rect{out}, []Rect{a, c}, 1<<10)
	if !ok || !found || Byte(0, gap.Lo) != 1 {
		t.Fatalf("gap %v found %v ok %v, want byte 1 unwritten", gap, found, ok)
	}
	full := Strided(Pos(0, 0), 1, n, 1)
	if _, found, ok := Uncovered([]Rect{Strided(Pos(0, 0), n, 1, 0)}, []Rect{full}, 16); !ok || found {
		t.Fatalf("a stride-1 write of every byte leaves a gap (found %v, ok %v)", found, ok)
	}
	// Large coprime strides with many rows need more pieces than a small
	// budget: the question is refused, not answered wrongly.
	p := Strided(Pos(0, 0), 1, 1<<30, 1_000_003)
	q := Strided(Pos(0, 0), 1, 1<<30, 999_983)
	if _, _, ok := Uncovered([]Rect{p}, []Rect{q}, 1<<20); ok {
		t.Fatal("expected the budget to refuse")
	}
}

// NextCovered and UncoveredUntil agree with byte enumeration.
func TestNextCoveredBruteForce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 3).Draw(t, "n")
		covers := make([]Rect, n)
		for i := range covers {
			covers[i] = smallRect(t, fmt.Sprint("r", i))
		}
		x := rapid.Int64Range(-8, 72).Draw(t, "x")
		end := rapid.Int64Range(x, 80).Draw(t, "end")
		for i, r := range covers {
			want, found := int64(0), false
			for y := x; y < r.End()+1 && !found; y++ {
				if r.Contains(y) {
					want, found = y, true
				}
			}
			if got, ok := r.NextCovered(x); ok != found || got != want {
				t.Fatalf("rect %d %+v: NextCovered(%d) = %d, %v; bytes say %d, %v", i, r, x, got, ok, want, found)
			}
		}
		want := x
		for want < end && !slices.ContainsFunc(covers, func(r Rect) bool { return r.Contains(want) }) {
			want++
		}
		if got := UncoveredUntil(covers, x, end); got != want {
			t.Fatalf("UncoveredUntil(%+v, %d, %d) = %d, bytes say %d", covers, x, end, got, want)
		}
	})
}
