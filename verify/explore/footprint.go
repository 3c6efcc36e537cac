package explore

import (
	"fmt"

	"github.com/megaproof/megaproof/internal/geom"
	"github.com/megaproof/megaproof/schedule"
)

// Footprints are rectangles (internal/geom): overlap is decided by
// arithmetic and coverage by the sets of writes covering each region of a
// read, never row by row. A coverage question that needs more than
// geomBudget pieces refuses the program (the result is incomplete, with
// LimitSize and the reason).

// geomBudget bounds the pieces and work of one coverage question.
const geomBudget = 1 << 22

// arenaRect is an access's footprint in its arena's address space: the
// arena index (or -1-buffer for a buffer without arena) and the rectangle.
func arenaRect(p *schedule.Program, a schedule.Access) (int32, geom.Rect) {
	b := &p.Buffers[a.Buffer]
	if b.Arena == schedule.NoArena {
		return -1 - a.Buffer, bufferRect(a)
	}
	return b.Arena, geom.Strided(geom.Pos(b.Offset, a.Offset), a.Length, a.Rows, a.Stride)
}

// bufferRect is an access's footprint in its buffer's own byte numbering.
func bufferRect(a schedule.Access) geom.Rect {
	return geom.Strided(geom.Pos(0, a.Offset), a.Length, a.Rows, a.Stride)
}

// outside reports whether an access has a byte outside its buffer: rows
// only grow, so the first and last bytes are the extremes.
func outside(p *schedule.Program, a schedule.Access) bool {
	r := bufferRect(a)
	lo, hi := geom.Byte(0, r.Off), geom.Byte(0, r.End())
	return lo < 0 || hi < 0 || uint64(hi) > p.Buffers[a.Buffer].Size
}

// readCells is the check of task r's read rd: the read is split into the
// distinct sets of other tasks' same-buffer writes covering its bytes,
// numbered 0..n-1, so that the read is the cell range [0, n) and each
// writer the cells of the sets it belongs to; the read is covered at a
// point exactly when the writers ended by then cover [0, n). ok is false
// if the question needs more than geomBudget.
func readCells(p *schedule.Program, r int, rd schedule.Access) (rc readCheck, ok bool) {
	var writers []int32
	var groups [][]geom.Rect
	for w := range p.Tasks {
		if w == r {
			continue
		}
		var rs []geom.Rect
		for _, wr := range p.Tasks[w].Writes {
			if wr.Buffer == rd.Buffer {
				rs = append(rs, bufferRect(wr))
			}
		}
		if len(rs) > 0 {
			writers = append(writers, int32(w))
			groups = append(groups, rs)
		}
	}
	cells := map[int32][][2]int64{} // writer group -> its cells
	n := int64(0)
	ok = geom.Partition([]geom.Rect{bufferRect(rd)}, groups, geomBudget, func(set []int32, _ geom.Span) bool {
		for _, g := range set {
			cells[g] = append(cells[g], [2]int64{n, n + 1})
		}
		n++
		return true
	})
	rc.spans = [][2]int64{{0, n}}
	for g, w := range writers {
		if cs := cells[int32(g)]; len(cs) > 0 {
			rc.writers = append(rc.writers, w)
			rc.wspans = append(rc.wspans, cs)
		}
	}
	return rc, ok
}

// coverageRefused says why a coverage question refused the program.
func coverageRefused(what string) string {
	return fmt.Sprintf("the program was not explored: deciding which bytes %s needs more than %d pieces", what, geomBudget)
}
