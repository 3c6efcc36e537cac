package mpk

import (
	"slices"

	"github.com/megaproof/megaproof/schedule"
)

// appendFootprint appends the exact byte footprint of tile x (element
// size es, in buffer buf) to accs: the union over every index vector i of
// the es bytes at offset + es·Σ i_d·strides[d]. It is one access when the
// layout allows — a contiguous run, or rows of one run at a regular
// stride (a 2-D tile of a row-major matrix) — and one such access per
// index of the remaining outer dimensions otherwise. It reports false,
// appending nothing usable, beyond maxRuns accesses.
//
// Dimensions of extent 1 and of stride 0 add no bytes. The rest, by
// increasing stride, fold into the run while a dimension's byte stride is
// at most the run's length (the shifted copies then overlap or touch, so
// the union stays one run); the next dimension gives the rows; further
// dimensions continue the rows while each one's stride is the rows'
// whole extent, and are enumerated beyond that.
func appendFootprint(accs []schedule.Access, buf int32, x *Tensor, es int64) ([]schedule.Access, bool) {
	type dim struct{ n, b int64 } // extent, byte stride
	var ds [MaxDims]dim
	k := 0
	for d, n := range x.Dims {
		if b := x.Strides[d] * es; n > 1 && b > 0 {
			ds[k] = dim{n, b}
			k++
		}
	}
	dims := ds[:k]
	slices.SortStableFunc(dims, func(a, b dim) int {
		switch {
		case a.b < b.b:
			return -1
		case a.b > b.b:
			return 1
		}
		return 0
	})
	run := es
	for len(dims) > 0 && dims[0].b <= run {
		run += (dims[0].n - 1) * dims[0].b
		dims = dims[1:]
	}
	a := schedule.Access{Buffer: buf, Offset: x.Offset, Length: uint64(run)}
	if len(dims) == 0 {
		return append(accs, a), true
	}
	rows, stride := dims[0].n, dims[0].b
	dims = dims[1:]
	for len(dims) > 0 && dims[0].b == rows*stride {
		rows *= dims[0].n
		dims = dims[1:]
	}
	a.Rows, a.Stride = uint64(rows), uint64(stride)
	count := int64(1)
	for _, d := range dims {
		count *= d.n
		if count > maxRuns {
			return accs, false
		}
	}
	// Enumerate the outer index vectors, innermost fastest.
	var idx [MaxDims]int64
	for {
		off := x.Offset
		for j, d := range dims {
			off += idx[j] * d.b
		}
		b := a
		b.Offset = off
		accs = append(accs, b)
		j := 0
		for ; j < len(dims); j++ {
			idx[j]++
			if idx[j] < dims[j].n {
				break
			}
			idx[j] = 0
		}
		if j == len(dims) {
			return accs, true
		}
	}
}
