package mpk

import (
	"fmt"
	"testing"

	"github.com/megaproof/megaproof/schedule"
)

// bytesOf enumerates a tile's bytes by definition: the es bytes of every
// element offset + es·Σ i_d·strides[d].
func bytesOf(x *Tensor, es int64) map[int64]bool {
	out := map[int64]bool{}
	idx := make([]int64, len(x.Dims))
	for {
		off := x.Offset
		for d := range idx {
			off += idx[d] * x.Strides[d] * es
		}
		for b := range es {
			out[off+b] = true
		}
		d := len(idx) - 1
		for ; d >= 0; d-- {
			idx[d]++
			if idx[d] < x.Dims[d] {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			return out
		}
	}
}

func accessBytes(as []schedule.Access) map[int64]bool {
	out := map[int64]bool{}
	for _, a := range as {
		for r := range int64(a.RowCount()) {
			for b := range int64(a.Length) {
				out[a.Offset+r*int64(a.Stride)+b] = true
			}
		}
	}
	return out
}

// TestFootprint checks the accesses of tiles against their bytes by
// definition, and that the layouts MPK writes map to one access.
func TestFootprint(t *testing.T) {
	cases := []struct {
		dims, strides []int64
		es, offset    int64
		want          string // the accesses, when fixed
	}{
		{[]int64{1, 128}, []int64{512, 1}, 2, 256, "[{0 256 256 0 0}]"},
		{[]int64{128, 1024}, []int64{1024, 1}, 2, 0, "[{0 0 262144 0 0}]"},
		{[]int64{128, 64}, []int64{1024, 1}, 2, 128, "[{0 128 128 128 2048}]"},
		{[]int64{128}, []int64{512}, 2, 0, "[{0 0 2 128 1024}]"},
		{[]int64{2, 4, 8}, []int64{32, 8, 1}, 4, 0, "[{0 0 256 0 0}]"},
		{[]int64{2, 4, 8}, []int64{64, 16, 1}, 1, 0, "[{0 0 8 8 16}]"},
		{[]int64{2, 4, 8}, []int64{100, 10, 1}, 2, 6, "[{0 6 16 4 20} {0 206 16 4 20}]"},
		{[]int64{3, 8}, []int64{0, 1}, 2, 0, "[{0 0 16 0 0}]"},
		{[]int64{2, 3}, []int64{1, 2}, 1, 0, "[{0 0 6 0 0}]"},
		{[]int64{8, 1}, []int64{1, 8}, 2, 0, "[{0 0 16 0 0}]"},
		{[]int64{}, []int64{}, 8, 40, "[{0 40 8 0 0}]"},
		{[]int64{4, 8}, []int64{1, 4}, 2, 0, "[{0 0 64 0 0}]"}, // transposed view, rows overlap into one run
		{[]int64{3, 5, 7}, []int64{1, 50, 7}, 2, -4, ""},
		{[]int64{2, 3, 4, 5}, []int64{200, 1, 60, 13}, 4, 0, ""},
		{[]int64{6, 2, 3}, []int64{7, 3, 1}, 1, 0, ""},
	}
	for _, c := range cases {
		x := &Tensor{Dims: c.dims, Strides: c.strides, Offset: c.offset}
		as, ok := appendFootprint(nil, 0, x, c.es)
		if !ok {
			t.Errorf("%v/%v: refused", c.dims, c.strides)
			continue
		}
		if got := fmt.Sprint(as); c.want != "" && got != c.want {
			t.Errorf("%v/%v: accesses %s, want %s", c.dims, c.strides, got, c.want)
		}
		want, got := bytesOf(x, c.es), accessBytes(as)
		if len(want) != len(got) {
			t.Errorf("%v/%v: %d bytes, want %d", c.dims, c.strides, len(got), len(want))
		}
		for b := range want {
			if !got[b] {
				t.Errorf("%v/%v: byte %d missing", c.dims, c.strides, b)
				break
			}
		}
	}
}

// FuzzFootprint checks random tiles against their bytes by definition.
func FuzzFootprint(f *testing.F) {
	f.Add(uint8(2), int64(3), int64(4), int64(1), int64(8), int64(0), int64(1), uint8(2), int64(5))
	f.Fuzz(func(t *testing.T, rank uint8, d0, d1, d2, s0, s1, s2 int64, es uint8, off int64) {
		clamp := func(v, lo, hi int64) int64 { return lo + (v%(hi-lo+1)+(hi-lo+1))%(hi-lo+1) }
		r := int(rank % 4)
		dims := []int64{clamp(d0, 1, 6), clamp(d1, 1, 6), clamp(d2, 1, 6)}[:r]
		strides := []int64{clamp(s0, 0, 40), clamp(s1, 0, 40), clamp(s2, 0, 40)}[:r]
		x := &Tensor{Dims: dims, Strides: strides, Offset: clamp(off, -50, 50)}
		e := []int64{1, 2, 4, 8}[es%4]
		as, ok := appendFootprint(nil, 0, x, e)
		if !ok {
			t.Fatal("refused")
		}
		want, got := bytesOf(x, e), accessBytes(as)
		if len(want) != len(got) {
			t.Fatalf("%v/%v es %d: %d bytes %v, want %d", dims, strides, e, len(got), as, len(want))
		}
		for b := range want {
			if !got[b] {
				t.Fatalf("%v/%v: byte %d missing from %v", dims, strides, b, as)
			}
		}
	})
}
