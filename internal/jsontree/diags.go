package jsontree

import (
	"fmt"
	"slices"
)

// Diag is one problem a reader found: a code, a JSON path and a message.
type Diag struct {
	Code, Path, Message string
}

// MaxDiags caps the diagnostics a document yields.
const MaxDiags = 50

// Diags collects a reader's diagnostics in the order a reader that walks
// the whole document in a fixed order would produce them, whatever order
// they are found in: by rank (the part of the document: a reader numbers
// its parts in the order it reports them), then by element index within
// a rank. Elements are added in increasing order, except those read late
// (after elements with larger indices; [Diags.Late]).
type Diags struct {
	Rank  int  // the part being read
	Elem  int  // the index of the element being read within the part
	Late  bool // the element is read after elements with larger indices
	lists [][]indexed
	lateN []int
	added int // diagnostics added, kept or not
}

type indexed struct {
	elem int
	d    Diag
}

// Add adds a diagnostic at the current rank and element.
func (ds *Diags) Add(code, path, format string, args ...any) {
	ds.added++
	for len(ds.lists) <= ds.Rank {
		ds.lists = append(ds.lists, nil)
		ds.lateN = append(ds.lateN, 0)
	}
	l := ds.lists[ds.Rank]
	if ds.Late {
		if ds.lateN[ds.Rank] >= MaxDiags {
			return
		}
		ds.lateN[ds.Rank]++
	} else if len(l)-ds.lateN[ds.Rank] >= MaxDiags {
		return
	}
	ds.lists[ds.Rank] = append(l, indexed{ds.Elem, Diag{code, path, fmt.Sprintf(format, args...)}})
}

// Added counts the diagnostics added so far, including those beyond the
// cap.
func (ds *Diags) Added() int { return ds.added }

// Mark is a point to go back to with [Diags.Undo].
type Mark struct{ rank, n, lateN, added int }

// Mark returns the current point of the current rank.
func (ds *Diags) Mark() Mark {
	m := Mark{rank: ds.Rank, added: ds.added}
	if ds.Rank < len(ds.lists) {
		m.n, m.lateN = len(ds.lists[ds.Rank]), ds.lateN[ds.Rank]
	}
	return m
}

// Undo drops what was added to the mark's rank since the mark.
func (ds *Diags) Undo(m Mark) {
	if m.rank < len(ds.lists) {
		ds.lists[m.rank] = ds.lists[m.rank][:m.n]
		ds.lateN[m.rank] = m.lateN
	}
	ds.added = m.added
}

// Clear drops every diagnostic of rank r.
func (ds *Diags) Clear(r int) {
	if r < len(ds.lists) {
		ds.lists[r], ds.lateN[r] = nil, 0
	}
}

// List returns the first MaxDiags diagnostics of ranks below upTo (all
// ranks: upTo < 0), in order.
func (ds *Diags) List(upTo int) []Diag {
	var out []Diag
	for r, l := range ds.lists {
		if upTo >= 0 && r >= upTo {
			break
		}
		if ds.lateN[r] > 0 {
			slices.SortStableFunc(l, func(a, b indexed) int { return a.elem - b.elem })
		}
		for _, x := range l {
			if len(out) == MaxDiags {
				return out
			}
			out = append(out, x.d)
		}
	}
	return out
}
