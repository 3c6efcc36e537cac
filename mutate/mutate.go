package mutate

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/megaproof/megaproof/schedule"
)

// Operator injects one fault class into a program. It is a declared value:
// [Operators] lists every operator once, validated (unique names, non-empty
// documentation). Operators hold no state and are safe for concurrent use.
type Operator struct {
	// Name is stable and unique, e.g. "drop-wait"; corpus recipes refer to it.
	Name string
	// Class describes the fault class the operator injects.
	Class string
	// Source names where the fault was seen: F-numbers and AutoMegaKernel
	// validator gaps of docs/FAULTS.md.
	Source string
	// Expect lists the finding families or codes the fault usually causes,
	// or "safe" for an operator whose mutants are equivalent to their input
	// in the model (such a mutant keeps its input's verdict and codes).
	// It is documentation only: a mutant may well be safe (for example when
	// the dropped wait was redundant), and the corpus labels mutants with
	// oracles, never with these expectations.
	Expect []string
	// Sites returns the number of places in p where the operator applies.
	// Sites are numbered 0..Sites(p)-1 in a deterministic order.
	Sites func(p *schedule.Program) int
	// Locates lists finding codes that the fault can only raise on the
	// tasks it changes: applied to a program without findings, every
	// finding of one of these codes names (in its tasks) a task of
	// [Changed] of the program and the mutant. Empty when the class implies
	// no location (the operator changes synchronization that orders tasks
	// it does not touch, or program-wide state).
	Locates []string
	// Apply returns a deep copy of p with the fault injected at site. The
	// result depends only on (p, site, seed); p is never modified. It returns
	// a structurally valid program, or an error wrapping [ErrSite] when the
	// site does not exist or does not apply, or an error when p is invalid.
	Apply func(p *schedule.Program, site int, seed uint64) (*schedule.Program, error)
}

// ErrSite is wrapped by errors of [Operator.Apply] when the requested site
// does not exist in the program or the operator cannot apply there.
var ErrSite = errors.New("mutate: site not applicable")

// maxExtent bounds every byte quantity of a valid program (see
// schedule.Program.Validate).
const maxExtent = 1 << 62

// applyFunc mutates q, a private deep copy of a valid program, at site.
type applyFunc func(q *schedule.Program, site int, r *rng) error

// newOp wraps a site counter and an in-place mutation into an [Operator]
// whose Apply checks the site, works on a clone and validates the result.
func newOp(name, class, source string, expect []string, sites func(*schedule.Program) int, apply applyFunc) *Operator {
	op := &Operator{Name: name, Class: class, Source: source, Expect: expect}
	op.Sites = func(p *schedule.Program) int {
		if p == nil {
			return 0
		}
		return sites(p)
	}
	op.Apply = func(p *schedule.Program, site int, seed uint64) (*schedule.Program, error) {
		if p == nil {
			return nil, errors.New("mutate: nil program")
		}
		if err := p.Validate(); err != nil {
			return nil, fmt.Errorf("mutate: %s: input program is invalid: %w", name, err)
		}
		if n := sites(p); site < 0 || site >= n {
			return nil, fmt.Errorf("%w: %s has %d sites, no site %d", ErrSite, name, n, site)
		}
		q := Clone(p)
		if err := apply(q, site, newRNG(seed)); err != nil {
			return nil, fmt.Errorf("mutate: %s at site %d: %w", name, site, err)
		}
		if err := q.Validate(); err != nil {
			return nil, fmt.Errorf("%w: %s at site %d would produce an invalid program: %v", ErrSite, name, site, err)
		}
		return q, nil
	}
	return op
}

// notApplicable returns an error wrapping [ErrSite].
func notApplicable(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrSite}, args...)...)
}

var operators = sync.OnceValue(func() []*Operator {
	ops := []*Operator{
		// Counter waits and signals.
		dropWait(),
		lowerThreshold(),
		raiseThreshold(),
		reusePhaseThreshold(),
		dropSignal(),
		duplicateSignal(),
		signalEarly(),
		waitWrongCounter(),
		waitOwnSignal(),
		addCycle(),
		// Memory order and scope.
		relaxSignal(),
		relaxWait(),
		dropFence(),
		narrowScope(),
		moveAcquire(),
		narrowSysScope(),
		narrowSharedScope(),
		// Placement, queues and residency.
		swapQueueOrder(),
		moveTask(),
		exceedCapacity(),
		claimBeforeReady(),
		holdWorkers(),
		// Barriers and semaphores.
		dropBarrierStep(),
		barrierPartiesUp(),
		barrierPartiesDown(),
		mergeBarriers(),
		dropRelease(),
		swapAcquireOrder(),
		skipAcquire(),
		// Counter state.
		nonzeroInit(),
		counterOverflow(),
		// Footprints and buffers.
		shiftTile(),
		widenOOB(),
		kvBeyondCache(),
		dropTile(),
		aliasEarly(),
		writeReadonly(),
	}
	setLocates(ops)
	if err := validateOperators(ops); err != nil {
		panic(err) // a static table: a bug here is caught by every test run
	}
	return ops
})

func validateOperators(ops []*Operator) error {
	seen := make(map[string]bool, len(ops))
	for i, op := range ops {
		switch {
		case op == nil:
			return fmt.Errorf("mutate: operator %d is nil", i)
		case op.Name == "" || op.Class == "" || op.Source == "" || len(op.Expect) == 0:
			return fmt.Errorf("mutate: operator %d (%q) lacks a name, class, source or expectation", i, op.Name)
		case op.Sites == nil || op.Apply == nil:
			return fmt.Errorf("mutate: operator %q lacks Sites or Apply", op.Name)
		case seen[op.Name]:
			return fmt.Errorf("mutate: duplicate operator name %q", op.Name)
		}
		seen[op.Name] = true
	}
	return nil
}

// Operators returns every operator in a stable order. The operators are
// shared; callers must not modify them.
func Operators() []*Operator { return slices.Clone(operators()) }

// Lookup returns the operator with the given name.
func Lookup(name string) (*Operator, bool) {
	for _, op := range operators() {
		if op.Name == name {
			return op, true
		}
	}
	return nil, false
}

// Clone returns a deep copy of p: no slice or map of the copy is shared
// with p. Nil slices and maps stay nil.
func Clone(p *schedule.Program) *schedule.Program { return p.Clone() }

// rng is a splitmix64 generator: tiny, deterministic and portable.
type rng struct{ s uint64 }

func newRNG(seed uint64) *rng { return &rng{s: seed} }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// below returns a value in [0, n); n must be positive.
func (r *rng) below(n uint64) uint64 {
	if n == 0 {
		return 0
	}
	return r.next() % n
}

// intn returns an int in [0, n); n must be positive.
func (r *rng) intn(n int) int { return int(r.below(uint64(n))) }

// satAdd adds without wrapping past the largest uint64.
func satAdd(a, b uint64) uint64 {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
}
