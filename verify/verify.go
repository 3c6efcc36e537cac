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
// is safe, or an error naming the first finding.
func Program(p *schedule.Program) error {
	r, err := Run(context.Background(), p, Config{})
	if err != nil {
		return err
	}
	return r.Err()
}

// Run decides whether p can deadlock, race, read uninitialized memory or
// break a memory-safety rule, and returns the verdict with its findings.
// The error is non-nil only when ctx is done.
func Run(ctx context.Context, p *schedule.Program, cfg Config) (*Result, error) {
	return run(ctx, p, cfg)
}
