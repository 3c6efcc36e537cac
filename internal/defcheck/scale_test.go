package defcheck_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/megaproof/megaproof/corpus"
	"github.com/megaproof/megaproof/internal/defcheck"
	"github.com/megaproof/megaproof/mutate"
)

// TestAtScaleLowerings holds CodesAtScale to CodesBudget on Llama-family
// lowerings of 1,000 tasks and more and on one mutant of each operator
// that applies (of every other under -short, on one lowering): the same
// codes wherever CodesBudget decides.
func TestAtScaleLowerings(t *testing.T) {
	recipes := []string{
		"llama:layers=12,hidden=256,inter=512,heads=4,kv=2,hd=64,vocab=256,sms=4,persm=1,strategy=round-robin,tile=32,pos=7,splits=1,coop=1",
		"llama:layers=12,hidden=256,inter=512,heads=4,kv=2,hd=64,vocab=256,sms=3,persm=1,strategy=barrier,tile=32,pos=3,splits=2,coop=1",
	}
	if testing.Short() {
		recipes = recipes[:1]
	}
	compared, decided := 0, 0
	ops := mutate.Operators()
	for _, r := range recipes {
		p, err := corpus.SeedProgram(r)
		if err != nil {
			t.Fatal(err)
		}
		for i, op := range ops {
			if testing.Short() && i%2 != 0 {
				continue
			}
			n := op.Sites(p)
			if n == 0 {
				continue
			}
			q, err := corpus.Mutant(r, op.Name, n/2, 3)
			if err != nil {
				continue // malformed
			}
			want, werr := defcheck.CodesBudget(q, 1<<28)
			got, gerr := defcheck.CodesAtScale(q, 1<<28)
			switch {
			case errors.Is(werr, defcheck.ErrBudget):
				if gerr == nil {
					decided++
				}
			case !errors.Is(gerr, werr) && !(werr == nil && gerr == nil), !slices.Equal(got, want):
				t.Errorf("%s on %s: CodesBudget %v (%v), CodesAtScale %v (%v)", op.Name, r, want, werr, got, gerr)
			default:
				compared++
			}
		}
	}
	t.Logf("%d mutants compared, %d decided only at scale", compared, decided)
	if compared < 8 {
		t.Errorf("only %d mutants compared", compared)
	}
}

// TestAtScaleHuge decides the 89,803-task llama-2-13b lowering (safe) and
// static faults in it within the default work budget of the corpus.
func TestAtScaleHuge(t *testing.T) {
	if testing.Short() {
		t.Skip("89,803 tasks: about 10 s a program")
	}
	const recipe = "llama-named:llama2-13b-h100-rr-t32"
	p, err := corpus.SeedProgram(recipe)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Tasks) < 70000 {
		t.Fatalf("%d tasks", len(p.Tasks))
	}
	if codes, err := defcheck.CodesAtScale(p, 1<<28); err != nil || len(codes) != 0 {
		t.Fatalf("seed: codes %v, err %v; want safe", codes, err)
	}
	q, err := corpus.Mutant(recipe, "write-readonly", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if codes, err := defcheck.CodesAtScale(q, 1<<28); err != nil || !slices.Contains(codes, "readonly-write") {
		t.Errorf("write-readonly mutant: codes %v, err %v; want readonly-write among them", codes, err)
	}
}
