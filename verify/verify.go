package verify

import (
	"context"

	"github.com/megaproof/megaproof/schedule"
)

// Config tunes [Run]. The zero value checks everything with default bounds.
type Config struct {
	// MaxStates bounds the explorer on programs with semaphores; 0 means
	// DefaultMaxStates. Beyond it the verdict is Inconclusive.
	MaxStates int
	// Sanity checks internal invariants and replays every witness before
	// returning; tests turn it on.
	Sanity bool
	// Checks selects the analyses to run (with the ones they require) and
	// whose findings to report; nil means every check of Checks().
	Checks []*Check
}

// DefaultMaxStates is the explorer's state budget when Config.MaxStates is 0.
const DefaultMaxStates = 1 << 20

// Program verifies p with the default configuration and returns nil if it
// is safe. Otherwise it returns an [*Error] carrying the [Result] (unsafe,
// invalid or inconclusive), whose message names the first finding:
//
//	var ve *verify.Error
//	if errors.As(err, &ve) {
//		for _, f := range ve.Result.Findings { ... }
//	}
func Program(p *schedule.Program) error {
	r, err := Run(context.Background(), p, Config{})
	if err != nil {
		return err
	}
	return r.Err()
}

// Run decides whether p can deadlock, race, read uninitialized memory or
// break a memory-safety rule, and returns the verdict with its findings.
// A malformed p is not an error: the result is [Invalid] with one
// invalid.* finding per problem.
//
// The error is non-nil, and the result nil, when ctx is done before the
// decision (ctx.Err()), when cfg.Checks holds a check that is not one of
// [Checks], or, with cfg.Sanity, when an internal invariant or
// a witness replay fails.
//
// Run only reads p and keeps no reference to it: any number of goroutines
// may verify the same Program at once, as long as none modifies it
// meanwhile. The Result shares no memory with p.
func Run(ctx context.Context, p *schedule.Program, cfg Config) (*Result, error) {
	return run(ctx, p, cfg)
}
