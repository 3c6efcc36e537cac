package verify

import (
	"context"
	"slices"

	"github.com/megaproof/megaproof/internal/geom"
	"github.com/megaproof/megaproof/schedule"
)

// Writer-before-reader order for the uninitialized-read check.
//
// When the race analysis did not decide every conflicting pair (it stops
// at the first chunk of pairs with a race), the pairs the check needs —
// a task that writes scratch or output bytes, a later task that reads
// them — are decided here, all at once, before any taint game: the proof
// clocks (and composed clocks where some edge does not synchronize) prove
// most of them in one pass over the greedy run, and withhold-run sweeps
// decide the rest, one sweep per writer thread. With every edge
// synchronizing the sweep is exact both ways (a reader that runs while the
// writer's thread is held before the writer's body is not ordered after
// it); otherwise it runs the synchronizing relaxation, which proves a pair
// when the reader cannot run, and leaves the other pairs to the game. A
// pair ordered here is ordered by happens-before in every execution, so
// the cell it covers is initialized; a pair left open keeps its writer in
// the cell's writer set, as before. Without the pre-pass a reader of a
// residual that a hundred tiles update plays a hundred games, each a full
// run of the program that may branch to the game's limit.

// usePreorder enables the pre-pass; tests compare both ways.
var usePreorder = true

// preorderChecked, when set (by tests), is called with every pair the
// pre-pass proved ordered.
var preorderChecked func(v *verifier, writer, reader int32)

// readOrder holds the writer-before-reader pairs decided ahead of the
// uninitialized-read games, sorted by key reader<<32 | writer.
type readOrder struct {
	keys    []uint64
	ordered []bool // per key: the writer happens before the reader
}

// orderedBefore reports whether the pre-pass proved w before r; false
// when it did not decide the pair or found it unordered.
func (ro *readOrder) orderedBefore(w, r int32) bool {
	if ro == nil {
		return false
	}
	i, ok := slices.BinarySearch(ro.keys, uint64(r)<<32|uint64(w))
	return ok && ro.ordered[i]
}

// preorderReads decides the writer-before-reader pairs of the
// uninitialized-read check that decided(w, r) leaves open: every write
// piece that overlaps a piece of a read of a buffer needing init, by a
// task on another thread whose body ran before the reader's in the greedy
// run. Collecting them spends the check's own budget of near-piece steps
// (work); pairs past it are left to the games.
func (v *verifier) preorderReads(ctx context.Context, run *engine, writes []bufferWrites, needs func(int32) bool, rect func(schedule.Access) geom.Rect, decided func(w, r int32) bool, work int64) (*readOrder, error) {
	f := v.f
	p := f.p
	when := v.when
	stamp := make([]int32, len(p.Tasks)) // per writer: 1 + the last reader it was queried for
	var qs []query
	var near []wpiece
	var pieces []geom.Piece
collect:
	for r := range p.Tasks {
		if when[r] < 0 {
			continue
		}
		if r%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		for _, a := range p.Tasks[r].Reads {
			bw := &writes[a.Buffer]
			if !needs(a.Buffer) || !bw.ok {
				continue
			}
			pieces = bw.g.Pieces(pieces[:0], rect(a))
			for _, t := range pieces {
				near = bw.near(near[:0], t, int32(r))
				if work -= int64(len(near)) + 1; work < 0 {
					break collect
				}
				for _, w := range near {
					if f.taskTh[w.task] == f.taskTh[r] || when[w.task] > when[r] || decided(w.task, int32(r)) {
						continue
					}
					if stamp[w.task] == int32(r)+1 {
						continue
					}
					stamp[w.task] = int32(r) + 1
					qs = append(qs, query{at: f.body[w.task], late: int32(r), pair: -1})
				}
			}
		}
	}
	key := func(q query) uint64 { return uint64(q.late)<<32 | uint64(f.task[q.at]) }
	slices.SortFunc(qs, func(a, b query) int { return cmpU64(key(a), key(b)) })
	ro := &readOrder{keys: make([]uint64, len(qs)), ordered: make([]bool, len(qs))}
	for i := range qs {
		qs[i].pair = int32(i)
		ro.keys[i] = key(qs[i])
	}
	if len(qs) == 0 {
		return ro, nil
	}
	proven := make([]bool, len(qs))
	proveOrderedCtx(ctx, f, run.trace, !f.syncing, qs, proven)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !f.syncing {
		var rest []query
		var at []int
		for i, q := range qs {
			if !proven[i] {
				rest = append(rest, q)
				at = append(at, i)
			}
		}
		if len(rest) > 0 {
			ok := make([]bool, len(rest))
			if v.proveHB(run, rest, ok) {
				for j, i := range at {
					proven[i] = ok[j]
				}
			}
		}
	}
	todo := map[int32][]query{}
	for i, q := range qs {
		if proven[i] {
			ro.ordered[i] = true
			continue
		}
		u := f.opThread[q.at]
		todo[u] = append(todo[u], q)
	}
	e := newEngine(f, !f.syncing)
	err := sweepAll(ctx, e, todo, func(q query, executed func(int32) bool) {
		if !executed(f.body[q.late]) {
			ro.ordered[q.pair] = true
		}
	})
	e.release()
	if err != nil {
		return nil, err
	}
	if preorderChecked != nil {
		for i, q := range qs {
			if ro.ordered[i] {
				preorderChecked(v, f.task[q.at], q.late)
			}
		}
	}
	return ro, nil
}
