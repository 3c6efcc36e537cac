package verify

import (
	"context"
	"errors"

	"github.com/megaproof/megaproof/schedule"
)

func run(ctx context.Context, p *schedule.Program, cfg Config) (*Result, error) {
	if err := p.Validate(); err != nil {
		return invalidResult(err), nil
	}
	return nil, errors.New("verify: analyses not yet available")
}

// invalidResult turns a structural error into an Invalid result.
func invalidResult(err error) *Result {
	r := &Result{Verdict: Invalid}
	var se *schedule.Error
	if errors.As(err, &se) {
		for _, d := range se.Diagnostics {
			r.Findings = append(r.Findings, Finding{Code: d.Code, Path: d.Path, Message: d.Message})
		}
	} else {
		r.Findings = append(r.Findings, Finding{Code: schedule.CodeSyntax, Path: "$", Message: err.Error()})
	}
	return r
}
