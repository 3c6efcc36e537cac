// Package geom decides questions about strided byte footprints by
// arithmetic, never by visiting their rows: whether two footprints share a
// byte, and which sets of footprints cover which bytes of another. Work and
// memory depend on the number of footprints, never on their rows or sizes.
//
// # Positions
//
// A footprint lives in one address space (an arena, or a buffer's own byte
// numbering). Its bytes are named by positions: [Pos] shifts a region's
// byte numbers by a fixed bias so that every byte a valid program can name
// (offsets and extents up to 2^62, regions placed at up to 2^62) and every
// exclusive end fit in an int64.
//
// # Rectangles
//
// A [Rect] is Rows rows of Len bytes, the first at Off and each next one
// Stride further: the footprint of a 2-D tile. [Strided] normalizes one:
// rows that touch or overlap become one contiguous row. [Overlap] decides
// whether two rectangles share a byte with a floor sum (a Euclid-like
// recursion), so two strides of any size cost O(log) steps.
//
// # Grids and pieces
//
// Sweeps and coverage questions see an address space as a [Grid] of rows of
// W bytes. A rectangle whose stride divides W is a few [Piece]s there (one
// row range and one column range each), one per residue of its rows modulo
// W/stride, split where it wraps a grid row. [Choose] picks W for a set of
// rectangles within a budget of pieces, as the least common multiple of the
// strides that make the fewest pieces; rectangles of other strides are cut
// into their rows. Two pieces share a byte exactly when their row ranges and
// their column ranges intersect.
//
// # Coverage
//
// [Partition] splits the bytes of some rectangles by the set of groups of
// other rectangles that cover them: row bands where the set of covering
// pieces is constant, then column segments within each band. It reports each
// distinct set once, with a byte range covered by exactly that set, and
// stops at a budget of work. Coverage by a union of rectangles of arbitrary
// strides includes the simultaneous-incongruences problem, which is
// NP-complete, so no exact method is polynomial in every case; the budget
// bounds the rare geometry (large coprime strides with many rows) that needs
// more pieces, and callers then report the question undecided.
package geom
