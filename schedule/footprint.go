package schedule

import "github.com/megaproof/megaproof/internal/geom"

// footprintBudget bounds the pieces and the work of one coverage question
// of the witness checks (see internal/geom); a question that needs more is
// an error, not a verdict.
const footprintBudget = 1 << 24

// arenaRect is an access's footprint in its arena's address space: the
// arena index (or -1-buffer for a buffer without arena) and the rectangle.
func arenaRect(p *Program, a Access) (int32, geom.Rect) {
	b := &p.Buffers[a.Buffer]
	if b.Arena == NoArena {
		return -1 - a.Buffer, geom.Strided(geom.Pos(0, a.Offset), a.Length, a.Rows, a.Stride)
	}
	return b.Arena, geom.Strided(geom.Pos(b.Offset, a.Offset), a.Length, a.Rows, a.Stride)
}

// bufferRect is an access's footprint in its buffer's own byte numbering.
func bufferRect(a Access) geom.Rect {
	return geom.Strided(geom.Pos(0, a.Offset), a.Length, a.Rows, a.Stride)
}
