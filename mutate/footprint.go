package mutate

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/megaproof/megaproof/schedule"
)

// Footprint operators change byte accesses and buffer placement only. Task
// Params (op operands such as AMK's n_off or pos) are opaque to megaproof
// and are left as they were, so a mutant's footprint and its Params may
// disagree; runners that derive addresses from Params execute the original
// footprint.

// lastRowStart is the offset of the access's last row (rows are at most
// 2^62 bytes apart in a valid program, so this does not overflow).
func lastRowStart(a schedule.Access) int64 {
	return a.Offset + int64((a.RowCount()-1)*a.Stride)
}

// shiftTile moves one write so that it overlaps a write of another task to
// the same buffer: its offset becomes the other write's offset plus a
// seed-chosen amount smaller than both lengths (plus zero when that would
// cross the buffer's end). The other write is seed-chosen.
//
// Class: overlapping tiles — a tiling parameter off by a tile (n_off) makes
// two writers' footprints overlap and leaves a hole where the tile used to
// be. Source: AutoMegaKernel §2.3 oob_tile_write and its lack of footprint
// checks (rows/column slices per op). Expect: race (race.waw),
// output-unwritten, uninitialized-read; safe only if the two writers are
// ordered and the hole is covered by others. Not applicable when the write
// already sits at that offset.
func shiftTile() *Operator {
	// multi[b] says whether at least two distinct tasks write buffer b.
	multi := func(p *schedule.Program) []bool {
		first := make([]int, len(p.Buffers))
		for i := range first {
			first[i] = -1
		}
		m := make([]bool, len(p.Buffers))
		for ti := range p.Tasks {
			for _, a := range p.Tasks[ti].Writes {
				if a.Buffer < 0 || int(a.Buffer) >= len(p.Buffers) {
					continue
				}
				switch first[a.Buffer] {
				case -1:
					first[a.Buffer] = ti
				case ti:
				default:
					m[a.Buffer] = true
				}
			}
		}
		return m
	}
	pred := func(p *schedule.Program) accessPred {
		m := multi(p)
		return func(_ *schedule.Program, ref accessRef, a schedule.Access) bool {
			return ref.write && a.Buffer >= 0 && int(a.Buffer) < len(m) && m[a.Buffer]
		}
	}
	return newOp("shift-tile",
		"overlapping tiles: a write shifted onto another task's write",
		"AMK §2.3 oob_tile_write / no footprint checks",
		[]string{"race.waw", "output-unwritten", "uninitialized-read"},
		func(p *schedule.Program) int { return countAccesses(p, pred(p)) },
		func(q *schedule.Program, site int, r *rng) error {
			ref, ok := nthAccess(q, pred(q), site)
			if !ok {
				return notApplicable("no access site %d", site)
			}
			a := ref.access(q)
			var others []schedule.Access
			for ti := range q.Tasks {
				if ti == ref.task {
					continue
				}
				for _, o := range q.Tasks[ti].Writes {
					if o.Buffer == a.Buffer {
						others = append(others, o)
					}
				}
			}
			// Try the seed-chosen partner first, then the others; for each, the
			// seed-chosen offset inside it, its start, and one byte either side
			// of its start. Prefer an offset that keeps the write in bounds.
			size := int64(q.Buffers[a.Buffer].Size)
			inBounds := func(off int64) bool {
				moved := *a
				moved.Offset = off
				return off >= 0 && lastRowStart(moved)+int64(a.Length) <= size
			}
			d := int64(r.below(a.Length))
			start := r.intn(len(others))
			fallback, haveFallback := int64(0), false
			for k := range others {
				o := others[(start+k)%len(others)]
				m := int64(min(a.Length, o.Length))
				for _, off := range []int64{o.Offset + d%m, o.Offset, o.Offset + 1, o.Offset - 1} {
					// Row 0 of the moved write must overlap row 0 of o.
					if off == a.Offset || off < -maxExtent || off > maxExtent ||
						off+int64(a.Length) <= o.Offset || off >= o.Offset+int64(o.Length) {
						continue
					}
					if inBounds(off) {
						a.Offset = off
						return nil
					}
					if !haveFallback {
						fallback, haveFallback = off, true
					}
				}
			}
			if !haveFallback {
				return notApplicable("write already at offset %d", a.Offset)
			}
			a.Offset = fallback
			return nil
		})
}

// widenOOB lengthens one access (every row of a tile) so its last row
// crosses the end of its buffer by a seed-chosen 1..length bytes.
//
// Class: out-of-bounds tile. Source: AutoMegaKernel §2.3 oob_tile_write
// (gate tile n_off+64: no bound check of n_off+N_tile), AMK HARDENING
// backlog (semantic param bounds). Expect: out-of-bounds; also race when
// the spill reaches another buffer of the same arena.
func widenOOB() *Operator {
	return accessOp("widen-oob",
		"out-of-bounds tile: an access widened past its buffer's end",
		"AMK §2.3 oob_tile_write; AMK HARDENING param bounds",
		[]string{"out-of-bounds"},
		func(p *schedule.Program, _ accessRef, a schedule.Access) bool {
			return a.Buffer >= 0 && int(a.Buffer) < len(p.Buffers)
		},
		func(q *schedule.Program, ref accessRef, r *rng) error {
			a := ref.access(q)
			size := q.Buffers[a.Buffer].Size
			start := lastRowStart(*a)
			spill := 1 + r.below(a.Length)
			var n uint64
			switch {
			case start < 0:
				n = size + uint64(-start) + spill
			case uint64(start)+a.Length <= size:
				n = size - uint64(start) + spill
			default:
				n = a.Length + spill
			}
			if n > maxExtent || (a.Rows > 1 && (a.Rows-1)*a.Stride > maxExtent-n) {
				return notApplicable("widened access would exceed 2^62 bytes")
			}
			a.Length = n
			return nil
		})
}

// kvBeyondCache shifts one access of a state buffer (a KV cache) by whole
// positions (its own length) until it crosses the buffer's end, plus a
// seed-chosen 0..3 further positions.
//
// Class: KV position beyond the cache (pos ≥ max_seq). Source:
// AutoMegaKernel §2.3 kv_pos_beyond_max_seq (no pos < max_seq check,
// HARDENING backlog) and its persistent kernel's unchecked per-step
// `pos`/`kv_len` patch (no base_pos+K ≤ max_seq guard). Expect:
// out-of-bounds.
func kvBeyondCache() *Operator {
	return accessOp("kv-beyond-cache",
		"KV position beyond the cache: a state-buffer access shifted past its end",
		"AMK §2.3 kv_pos_beyond_max_seq; AMK persistent pos patch",
		[]string{"out-of-bounds"},
		func(p *schedule.Program, _ accessRef, a schedule.Access) bool {
			return bufferKind(p, a.Buffer) == schedule.KindState
		},
		func(q *schedule.Program, ref accessRef, r *rng) error {
			a := ref.access(q)
			size := int64(q.Buffers[a.Buffer].Size)
			step := a.Length
			hi := lastRowStart(*a) + int64(a.Length)
			m := uint64(1)
			if hi <= size {
				m = uint64(size-hi)/step + 1
			}
			m += r.below(4)
			h, shift := bits.Mul64(m, step)
			if h != 0 || shift > maxExtent || a.Offset+int64(shift) > maxExtent {
				return notApplicable("shifted access would exceed 2^62 bytes")
			}
			a.Offset += int64(shift)
			return nil
		})
}

// dropTile removes one write to an output or scratch buffer, leaving its
// task (and its signals) in place.
//
// Class: coverage hole — a tile of an output or activation is never
// written, yet its consumers are released. Source: AutoMegaKernel §2.3
// missing_tile_coverage (gate tile deleted, join 4→3: no coverage check,
// silent wrong logits from the zeroed arena). Expect: output-unwritten,
// uninitialized-read; safe when another write covers the same bytes.
func dropTile() *Operator {
	return accessOp("drop-tile",
		"coverage hole: one write to an output or scratch buffer removed",
		"AMK §2.3 missing_tile_coverage",
		[]string{"output-unwritten", "uninitialized-read"},
		func(p *schedule.Program, ref accessRef, a schedule.Access) bool {
			k := bufferKind(p, a.Buffer)
			return ref.write && (k == schedule.KindOutput || k == schedule.KindScratch)
		},
		func(q *schedule.Program, ref accessRef, _ *rng) error {
			l := ref.list(q)
			*l = slices.Delete(*l, ref.idx, ref.idx+1)
			return nil
		})
}

// aliasEarly places one scratch buffer at the arena position of another,
// seed-chosen, writable buffer (scratch, output or state), so both share
// bytes. When the partner has no arena, a new arena holding both at offset
// 0 is created; when the moved buffer does not fit the partner's arena, the
// arena grows.
//
// The partner is seed-chosen among the (up to) four writable buffers whose
// first access is nearest, in task-list order, to the moved buffer's: real
// page reuse hands a page to a buffer of a nearby layer or step, and a far
// partner's lifetime is usually ordered anyway (a safe mutant).
//
// Class: page reused too early — a scratch page is handed to a new buffer
// while the old contents are still being read or written (WAR/WAW on
// reuse). Source: AutoMegaKernel §2.3 pages_unchecked_large_model (q and k
// on one page; page check gated off), F17 (slot reuse not ordered after
// the previous epoch's readers), F11, Hazy pages. Expect: race (race.war,
// race.waw, race.raw), uninitialized-read (aliasing writes do not
// initialize); safe when the lifetimes are ordered.
func aliasEarly() *Operator {
	writable := func(k schedule.BufferKind) bool {
		return k == schedule.KindScratch || k == schedule.KindOutput || k == schedule.KindState
	}
	sites := func(p *schedule.Program) []int {
		n := 0
		for _, b := range p.Buffers {
			if writable(b.Kind) {
				n++
			}
		}
		if n < 2 {
			return nil
		}
		var bs []int
		for i, b := range p.Buffers {
			if b.Kind == schedule.KindScratch {
				bs = append(bs, i)
			}
		}
		return bs
	}
	return newOp("alias-early",
		"early page reuse: a scratch buffer placed on another buffer's arena slot",
		"AMK §2.3 pages_unchecked_large_model; F17, F11",
		[]string{"race", "uninitialized-read"},
		func(p *schedule.Program) int { return len(sites(p)) },
		func(q *schedule.Program, site int, r *rng) error {
			ai := sites(q)[site]
			a := &q.Buffers[ai]
			var cands []int
			for i, b := range q.Buffers {
				if i != ai && writable(b.Kind) && (b.Arena == schedule.NoArena || b.Arena != a.Arena || b.Offset != a.Offset) {
					cands = append(cands, i)
				}
			}
			if len(cands) == 0 {
				return notApplicable("every writable buffer already shares %q's slot", a.Name)
			}
			// Prefer partners in use at about the same time: sort by the
			// distance between the buffers' first accesses in task-list order
			// and pick among the nearest few.
			first := firstAccess(q)
			dist := func(i int) int { return abs(first[i] - first[ai]) }
			slices.SortStableFunc(cands, func(x, y int) int { return dist(x) - dist(y) })
			b := &q.Buffers[cands[r.intn(min(len(cands), aliasWindow))]]
			if b.Arena == schedule.NoArena {
				b.Arena = int32(len(q.Arenas))
				b.Offset = 0
				q.Arenas = append(q.Arenas, schedule.Arena{Name: freshArenaName(q), Size: max(a.Size, b.Size)})
			} else if need := b.Offset + a.Size; need > q.Arenas[b.Arena].Size {
				if b.Offset > maxExtent || need > maxExtent {
					return notApplicable("arena %q cannot grow to %d bytes", q.Arenas[b.Arena].Name, need)
				}
				q.Arenas[b.Arena].Size = need
			}
			a.Arena, a.Offset = b.Arena, b.Offset
			return nil
		})
}

// freshArenaName returns an arena name p does not use yet.
func freshArenaName(p *schedule.Program) string {
	used := make(map[string]bool, len(p.Arenas))
	for _, a := range p.Arenas {
		used[a.Name] = true
	}
	name := "mutate.alias"
	for i := 1; used[name]; i++ {
		name = fmt.Sprintf("mutate.alias.%d", i)
	}
	return name
}

// writeReadonly makes one read of an input or weight buffer also a write of
// the same bytes.
//
// Class: write to a read-only buffer. Source: AutoMegaKernel §2.3
// write_to_weight (read-only kinds skipped by kind; nothing forbids writing
// them). Expect: readonly-write; also race with the buffer's other readers.
func writeReadonly() *Operator {
	return accessOp("write-readonly",
		"read-only write: a read of an input or weight buffer also writes it",
		"AMK §2.3 write_to_weight",
		[]string{"readonly-write", "race"},
		func(p *schedule.Program, ref accessRef, a schedule.Access) bool {
			return !ref.write && bufferKind(p, a.Buffer).ReadOnly()
		},
		func(q *schedule.Program, ref accessRef, _ *rng) error {
			t := &q.Tasks[ref.task]
			t.Writes = append(t.Writes, *ref.access(q))
			return nil
		})
}

// aliasWindow is how many nearest partners alias-early chooses among.
const aliasWindow = 4

// firstAccess returns, per buffer, the index of the first task that reads
// or writes it, or len(p.Tasks) when none does.
func firstAccess(p *schedule.Program) []int {
	first := make([]int, len(p.Buffers))
	for i := range first {
		first[i] = len(p.Tasks)
	}
	for ti := len(p.Tasks) - 1; ti >= 0; ti-- {
		t := &p.Tasks[ti]
		for _, l := range [][]schedule.Access{t.Reads, t.Writes} {
			for _, a := range l {
				if a.Buffer >= 0 && int(a.Buffer) < len(first) {
					first[a.Buffer] = ti
				}
			}
		}
	}
	return first
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
