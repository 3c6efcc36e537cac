package amk

import (
	"testing"

	"github.com/megaproof/megaproof/schedule"
)

func TestTileBytes(t *testing.T) {
	i4 := func(shape ...int64) layout {
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		return layout{bits: 4, shape: shape, numel: n}
	}
	f16 := func(shape ...int64) layout {
		l := i4(shape...)
		l.bits = 16
		return l
	}
	cases := []struct {
		name string
		got  schedule.Access
		want schedule.Access
	}{
		// I4 packs two elements per byte: columns [3, 7) are bits [12, 28),
		// bytes [1, 4).
		{"i4 odd columns", columns(i4(1, 16), 3, 4), schedule.Access{Offset: 1, Length: 3}},
		{"i4 even columns", columns(i4(1, 16), 4, 4), schedule.Access{Offset: 2, Length: 2}},
		// Rows of 16 elements are 8 bytes apart: a tile.
		{"i4 rows", columns(i4(3, 16), 3, 4), schedule.Access{Offset: 1, Length: 3, Rows: 3, Stride: 8}},
		// Rows of 5 elements do not start on byte boundaries: one span from
		// bit 4 (column 1 of row 0) to bit 52 (column 3 of row 2, exclusive).
		{"i4 unaligned rows", columns(i4(3, 5), 1, 2), schedule.Access{Offset: 0, Length: 7}},
		{"i4 negative column", columns(i4(1, 16), -1, 2), schedule.Access{Offset: -1, Length: 2}},
		{"i4 whole odd", whole(i4(3)), schedule.Access{Offset: 0, Length: 2}},
		{"f16 columns", columns(f16(2, 8), 2, 3), schedule.Access{Offset: 4, Length: 6, Rows: 2, Stride: 16}},
		{"f16 rank 1", columns(f16(8), 2, 3), schedule.Access{Offset: 4, Length: 6}},
		{"kv rank 2", seqRows(f16(10, 4), 3, 2), schedule.Access{Offset: 24, Length: 16}},
		{"kv rank 4, one batch entry", seqRows(f16(1, 10, 2, 2), 3, 1), schedule.Access{Offset: 24, Length: 8}},
		{"kv rank 4", seqRows(f16(3, 10, 2, 2), 3, 1), schedule.Access{Offset: 24, Length: 8, Rows: 3, Stride: 80}},
		// Saturation keeps huge footprints out of bounds and nonempty.
		{"large offset", seqRows(f16(1<<20, 1<<20), 1<<31-1, 1), schedule.Access{Offset: (1<<31 - 1) << 21, Length: 1 << 21}},
		{"saturated offset", seqRows(f16(1<<20, 1<<30), 1<<31-1, 1), schedule.Access{Offset: sat, Length: 1 << 31}},
		{"saturated i4", seqRows(i4(1<<20, 1<<30), 1<<31-1, 1), schedule.Access{Offset: sat >> 3, Length: 1 << 29}},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, c.got, c.want)
		}
	}
}

func TestSaturating(t *testing.T) {
	for _, c := range []struct{ a, b, want int64 }{
		{3, 4, 12}, {-3, 4, -12}, {1 << 40, 1 << 40, sat}, {-(1 << 40), 1 << 40, -sat}, {0, 1 << 62, 0},
		{1<<63 - 1, 2, sat}, {-1 << 63, 1, -sat},
	} {
		if got := satMul(c.a, c.b); got != c.want {
			t.Errorf("satMul(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
