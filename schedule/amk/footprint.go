package amk

import "github.com/megaproof/megaproof/schedule"

// dtypeBits is the width in bits of an element of each AMK DType, by its
// serialized name, as AMK's GPU loader stores it: the itemsize of the torch
// dtype of its table (F32, F16, BF16, I32, I8, U8, BOOL), and float32 for
// F8E4M3 and F8E5M2, which the table lacks. I4 is 4 here: see [storageBits].
var dtypeBits = map[string]int64{
	"F32": 32, "F16": 16, "BF16": 16, "F8E4M3": 32, "F8E5M2": 32,
	"I32": 32, "I8": 8, "I4": 4, "U8": 8, "BOOL": 8,
}

// storageBits is the element width in bits of a buffer of dtype width
// bits (from [dtypeBits]) and kind as AMK's loader allocates it: an I4
// weight (WEIGHT or CONST) is bound as the quantizer packs it, two
// elements a byte; any other I4 buffer is a float32 one (the loader's
// table lacks I4).
func storageBits(bits int64, kind schedule.BufferKind) int64 {
	if bits == 4 && kind != schedule.KindWeight {
		return 32
	}
	return bits
}

// storageSize is the size in bytes of a buffer of numel elements of the
// given shape and storage width bits: a packed I4 weight in rows of
// ceil(last axis / 2) bytes, as the quantizer writes them.
func storageSize(bits int64, shape []int64, numel int64) uint64 {
	if bits != 4 || len(shape) == 0 {
		return uint64(ceilDiv8(numel * bits))
	}
	last := shape[len(shape)-1]
	return uint64(numel / last * ((last + 1) / 2))
}

// tooLarge reports whether a buffer of numel elements of the given shape
// and storage width bits exceeds maxBufferBytes (the first test keeps the
// second's product inside int64).
func tooLarge(bits int64, shape []int64, numel int64) bool {
	return numel > maxBufferBytes*8/bits || storageSize(bits, shape, numel) > maxBufferBytes
}

// kinds maps AMK BufferKind names to megaproof buffer kinds.
var kinds = map[string]schedule.BufferKind{
	"WEIGHT":     schedule.KindWeight,
	"CONST":      schedule.KindWeight,
	"IO_INPUT":   schedule.KindInput,
	"IO_OUTPUT":  schedule.KindOutput,
	"ACTIVATION": schedule.KindScratch,
	"KV_CACHE":   schedule.KindState,
}

// memSpaces are AMK's MemSpace names. They do not affect the mapping (AMK's
// loader puts every buffer in global memory); they are only checked.
var memSpaces = map[string]bool{"HBM": true, "GLOBAL_SCRATCH": true, "SMEM": true, "REGISTER": true}

// opList are AMK's InstructionKind names (IR 0.2, NOP..FUSED).
var opList = []string{
	"NOP", "COPY", "EMBED", "RMSNORM", "LAYERNORM",
	"GEMV_TILE", "GEMM_TILE", "ATTENTION_TILE", "ROPE",
	"SILU_MUL", "GELU", "ADD", "MUL", "DEQUANT",
	"SOFTMAX", "ALLREDUCE_SHARD", "KV_APPEND", "SAMPLE_ARGMAX",
	"ATTENTION_COMBINE", "FUSED",
}

// ops is the set of opList.
var ops = func() map[string]bool {
	m := map[string]bool{}
	for _, op := range opList {
		m[op] = true
	}
	return m
}()

// maxBufferBytes bounds one AMK buffer. It keeps every bit count of a
// footprint inside int64 (2^56 bytes is 64 PiB, far beyond any GPU).
const maxBufferBytes = 1 << 56

// sat is the magnitude at which footprint offsets and lengths saturate. A
// saturated quantity is still far outside any buffer (buffers are at most
// 2^56 bytes), so the access stays out of bounds, which is what it was.
const sat = 1 << 60

// satMul multiplies, saturating at ±sat.
func satMul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	neg := (a < 0) != (b < 0)
	ua, ub := mag(a), mag(b)
	if ua > sat || ub > sat || ua > sat/ub {
		if neg {
			return -sat
		}
		return sat
	}
	v := int64(ua * ub)
	if neg {
		return -v
	}
	return v
}

// satAdd adds two values of magnitude at most sat, saturating at ±sat.
func satAdd(a, b int64) int64 {
	v := a + b
	switch {
	case v > sat:
		return sat
	case v < -sat:
		return -sat
	}
	return v
}

// mag is |a|, exact even for math.MinInt64.
func mag(a int64) uint64 {
	if a < 0 {
		return uint64(-(a + 1)) + 1
	}
	return uint64(a)
}

// floorDiv8 and ceilDiv8 divide by 8 rounding toward -inf and +inf.
func floorDiv8(v int64) int64 { return v >> 3 }
func ceilDiv8(v int64) int64  { return (v + 7) >> 3 }

// layout is what the mapper needs of a buffer: its index, element width and
// shape.
type layout struct {
	index int32
	bits  int64
	shape []int64
	numel int64
}

// tile returns the byte footprint of rows runs of n elements, the first
// starting at element off (which may be negative or beyond the buffer) and
// each next one stride elements further. Packed sub-byte types are
// byte-precise: a run covers every byte holding one of its elements. When
// the row stride of a packed type is not a whole number of bytes, the
// footprint is the single byte span from the first run's first byte to the
// last run's last byte (an over-approximation, documented in doc.go).
func tile(b layout, off, n, rows, stride int64) schedule.Access {
	a := schedule.Access{Buffer: b.index}
	if b.bits%8 == 0 {
		eb := b.bits / 8
		a.Offset = satMul(off, eb)
		a.Length = uint64(satMul(n, eb))
		if rows > 1 {
			a.Rows, a.Stride = uint64(rows), uint64(satMul(stride, eb))
		}
		return a
	}
	startBit := satMul(off, b.bits)
	lead := startBit & 7 // bit position of the first element in its byte
	if off >= sat/b.bits || off <= -sat/b.bits {
		lead = 0 // saturated: the access is out of bounds anyway
	}
	a.Offset = floorDiv8(startBit)
	if rows > 1 && satMul(stride, b.bits)%8 == 0 {
		a.Length = uint64(ceilDiv8(satAdd(lead, satMul(n, b.bits))))
		a.Rows, a.Stride = uint64(rows), uint64(satMul(stride, b.bits)/8)
		return a
	}
	span := n
	if rows > 1 {
		span = satAdd(satMul(rows-1, stride), n)
	}
	a.Length = uint64(ceilDiv8(satAdd(lead, satMul(span, b.bits))))
	return a
}

// whole is the footprint of the entire buffer.
func whole(b layout) schedule.Access { return tile(b, 0, b.numel, 1, 0) }

// columns is the footprint of a GEMV/GEMM tile: columns [nOff, nOff+nTile)
// of the last axis, in every row (every index of the leading axes).
func columns(b layout, nOff, nTile int64) schedule.Access {
	last := int64(1)
	if len(b.shape) > 0 {
		last = b.shape[len(b.shape)-1]
	}
	rows := b.numel / last
	return tile(b, nOff, nTile, rows, last)
}

// tileColumns is the footprint of a GEMV/GEMM tile's columns [nOff,
// nOff+nTile) of its output b as AMK's kernel indexes it, [M, N] by the
// first two axes: columns of a matrix; of a vector or scalar (whose
// padded shape and strides are 0 past its rank) element 0, which every
// column is stored to; of a rank-3 or higher output, columns stride[1]
// elements apart in rows stride[0] apart, each row's columns as one span
// (the elements between them included: an over-approximation).
func tileColumns(b layout, nOff, nTile int64) schedule.Access {
	switch {
	case len(b.shape) == 2:
		return columns(b, nOff, nTile)
	case len(b.shape) < 2:
		return elems(b, 0, 1, 1, 0)
	}
	s1 := int64(1)
	for _, d := range b.shape[2:] {
		s1 = satMul(s1, d)
	}
	s0 := satMul(b.shape[1], s1)
	rows := b.numel / b.shape[1]
	return elems(b, satMul(nOff, s1), satAdd(satMul(nTile-1, s1), 1), rows, s0)
}

// seqRows is the footprint of sequence rows [start, start+count) of a KV
// cache: axis 0 of a cache of rank 3 or less ([max_seq, n_kv, head_dim]),
// axis 1 of a rank-4 batched one ([B, max_seq, n_kv, head_dim]), one run per
// batch entry.
func seqRows(b layout, start, count int64) schedule.Access {
	if len(b.shape) == 4 {
		row := b.shape[2] * b.shape[3]
		return tile(b, satMul(start, row), satMul(count, row), b.shape[0], b.shape[1]*row)
	}
	row := int64(1)
	for _, d := range b.shape[min(1, len(b.shape)):] {
		row *= d
	}
	return tile(b, satMul(start, row), satMul(count, row), 1, 0)
}

// floatWidth is the bytes an element of b takes in AMK's generic element
// loops (amk_load_f and amk_store_f): 2 for F16 and BF16, 4 (a float) for
// every other dtype whatever its width, while the loader sizes a buffer
// by its dtype's width.
func floatWidth(b layout) int64 {
	if b.bits == 16 {
		return 2
	}
	return 4
}

// elems is the footprint of rows runs of n elements of b, the first from
// element off on and each next one stride elements further, as AMK's
// generic element loops access them (floatWidth).
func elems(b layout, off, n, rows, stride int64) schedule.Access {
	if rows > 1 && n >= stride { // rows that touch or overlap: one run
		n, rows = satAdd(satMul(rows-1, stride), n), 1
	}
	w := floatWidth(b)
	a := schedule.Access{Buffer: b.index, Offset: satMul(off, w), Length: uint64(satMul(n, w))}
	if rows > 1 {
		a.Rows, a.Stride = uint64(rows), uint64(satMul(stride, w))
	}
	return a
}

// bytesAt is the footprint of n bytes of b from byte off on, for kernels
// that address a buffer by bytes (or by a width of their own) rather than
// by its dtype.
func bytesAt(b layout, off, n int64) schedule.Access {
	return schedule.Access{Buffer: b.index, Offset: off, Length: uint64(n)}
}

// appendRun is the footprint of KV_APPEND on a cache of rank 3 or less: n
// consecutive elements from sequence row pos on (AMK's kernel copies all of
// new_kv there, one row or several).
func appendRun(b layout, pos, n int64) schedule.Access {
	row := b.numel
	if len(b.shape) > 0 {
		row = b.numel / b.shape[0]
	}
	return elems(b, satMul(pos, row), n, 1, 0)
}

// appendRows is the footprint of KV_APPEND on a rank-4 batched cache
// [B, max_seq, n_kv, head_dim]: sequence row pos of every batch entry.
func appendRows(b layout, pos int64) schedule.Access {
	row := b.shape[2] * b.shape[3]
	return elems(b, satMul(pos, row), row, b.shape[0], b.shape[1]*row)
}
