package mutate_test

import (
	"slices"
	"testing"

	"github.com/megaproof/megaproof/mutate"
)

// TestChanged: every site of an operator that locates codes changes
// exactly one task, and Changed names it; unchanged programs have none.
func TestChanged(t *testing.T) {
	p := pipeline(t)
	if got := mutate.Changed(p, p.Clone()); got != nil {
		t.Errorf("Changed of a clone = %v, want none", got)
	}
	located := 0
	for _, op := range mutate.Operators() {
		if len(op.Locates) == 0 {
			continue
		}
		located++
		if !slices.IsSorted(op.Locates) {
			t.Errorf("%s: Locates %v not sorted", op.Name, op.Locates)
		}
		for site := range op.Sites(p) {
			q, err := op.Apply(p, site, 3)
			if err != nil {
				continue
			}
			if got := mutate.Changed(p, q); len(got) != 1 {
				t.Errorf("%s at site %d: Changed = %v, want one task", op.Name, site, got)
			}
		}
	}
	if located < 5 {
		t.Errorf("%d operators locate codes, want at least 5", located)
	}
	q := p.Clone()
	q.Tasks = q.Tasks[:len(q.Tasks)-1]
	if got := mutate.Changed(p, q); got != nil {
		t.Errorf("Changed with a task removed = %v, want nil", got)
	}
}
