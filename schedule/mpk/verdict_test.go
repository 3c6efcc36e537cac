package mpk_test

import (
	"testing"

	"github.com/megaproof/megaproof/schedule/mpk"
)

func TestExamplesQuick(t *testing.T) {
	for _, f := range []string{"ex1_reduce_edge.json", "ex2_chain_partitioned.json", "ex3_fork_interleaved.json", "ex4_stripped_residual_hazard.json"} {
		p, res := run(t, read(t, f), mpk.Options{})
		t.Logf("%s: %d tasks %v", f, len(p.Tasks), res.Verdict)
		for _, fd := range res.Findings {
			var names []string
			for _, i := range fd.Tasks {
				names = append(names, p.Tasks[i].Name)
			}
			t.Logf("  %s %s %v", fd.Code, fd.Message, names)
		}
	}
}
