package corpus

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/megaproof/megaproof/verify"
)

// Outcome kinds of [Check], from best to worst.
const (
	OutcomeOK             = "ok"              // verify agrees with the oracle, families included
	OutcomeFamilyMismatch = "family-mismatch" // both unsafe, different families
	OutcomeFalseAccept    = "false-accept"    // oracle unsafe, verify safe
	OutcomeFalseReject    = "false-reject"    // oracle safe, verify unsafe
	OutcomeInconclusive   = "inconclusive"    // verify hit a bound
	OutcomeDrift          = "drift"           // the recipe no longer builds the hashed mutant
	OutcomeError          = "error"           // the recipe or verify failed
)

// Outcome is the result of checking one entry against verify.
type Outcome struct {
	Entry Entry
	// Kind is one of the Outcome constants.
	Kind string
	// Verdict and Families are what verify reported (Verdict is
	// "malformed" when the operator still produces a malformed mutant).
	Verdict  string
	Families []string
	// Detail explains a Kind other than OutcomeOK.
	Detail string
}

// Check rebuilds e's mutant, checks its content hash and compares verify's
// verdict and finding families with the golden ones.
func Check(ctx context.Context, e Entry) Outcome { return CheckConfig(ctx, e, verify.Config{}) }

// CheckConfig is [Check] with a verify configuration; with Sanity set it
// also replays every witness verify gives (an error outcome if one fails).
func CheckConfig(ctx context.Context, e Entry, cfg verify.Config) Outcome {
	o := Outcome{Entry: e}
	q, err := Mutant(e.Recipe, e.Operator, e.Site, e.MSeed)
	if e.Verdict == VerdictMalformed {
		if errors.Is(err, ErrMalformed) {
			o.Kind, o.Verdict = OutcomeOK, VerdictMalformed
			return o
		}
		o.Kind, o.Detail = OutcomeDrift, fmt.Sprintf("expected a malformed mutant, got error %v; run `go generate ./corpus`", err)
		return o
	}
	if err != nil {
		o.Kind, o.Detail = OutcomeDrift, fmt.Sprintf("recipe no longer applies: %v; run `go generate ./corpus`", err)
		return o
	}
	h, err := Hash(q)
	if err != nil {
		o.Kind, o.Detail = OutcomeError, err.Error()
		return o
	}
	if h != e.Hash {
		o.Kind, o.Detail = OutcomeDrift, fmt.Sprintf("mutant hash %s, golden %s: the seed or the operator changed; run `go generate ./corpus`", h, e.Hash)
		return o
	}
	r, err := verify.Run(ctx, q, cfg)
	if err != nil {
		o.Kind, o.Detail = OutcomeError, "verify: "+err.Error()
		return o
	}
	o.Verdict = r.Verdict.String()
	set := map[string]bool{}
	for _, f := range r.Findings {
		set[verify.Family(f.Code)] = true
	}
	for k := range set {
		o.Families = append(o.Families, k)
	}
	sort.Strings(o.Families)
	switch {
	case r.Verdict == verify.Inconclusive:
		o.Kind, o.Detail = OutcomeInconclusive, "verify was inconclusive"
	case r.Verdict != verify.Safe && r.Verdict != verify.Unsafe:
		o.Kind, o.Detail = OutcomeError, "verify verdict "+o.Verdict
	case e.Verdict == VerdictUnsafe && r.Verdict == verify.Safe:
		o.Kind = OutcomeFalseAccept
	case e.Verdict == VerdictSafe && r.Verdict == verify.Unsafe:
		o.Kind = OutcomeFalseReject
	case !slices.Equal(o.Families, e.Families):
		o.Kind = OutcomeFamilyMismatch
	default:
		o.Kind = OutcomeOK
	}
	if o.Kind == OutcomeFalseAccept || o.Kind == OutcomeFalseReject || o.Kind == OutcomeFamilyMismatch {
		o.Detail = fmt.Sprintf("%s says %s %v, verify says %s %v", e.Oracle, e.Verdict, e.Families, o.Verdict, o.Families)
	}
	return o
}

// ClassCounts are the counts of one class (mutation operator).
type ClassCounts struct {
	Faulty    int     `json:"faulty"`    // entries the oracle labelled unsafe
	Safe      int     `json:"safe"`      // safe controls
	Malformed int     `json:"malformed"` // mutants that fail validation
	Detected  int     `json:"detected"`  // faulty entries verify called unsafe
	Recall    float64 `json:"recall"`    // Detected / Faulty (1 when Faulty is 0)
}

// Summary is the outcome of [Run]: a confusion matrix of verify against
// the oracles' labels, and counts per class.
type Summary struct {
	Entries   int `json:"entries"`
	Faulty    int `json:"faulty"`
	Safe      int `json:"safe"`
	Malformed int `json:"malformed"`
	// TruePositives are faulty entries verify calls unsafe; TrueNegatives
	// safe controls verify calls safe.
	TruePositives int `json:"true_positives"`
	TrueNegatives int `json:"true_negatives"`
	// FalseAccepts are faulty entries verify calls safe; FalseRejects safe
	// controls verify calls unsafe.
	FalseAccepts int `json:"false_accepts"`
	FalseRejects int `json:"false_rejects"`
	// FamilyMismatches are unsafe entries whose finding families differ.
	FamilyMismatches int `json:"family_mismatches"`
	// Inconclusive, Drift and Errors count entries verify could not decide,
	// entries whose recipe no longer rebuilds the hashed mutant, and
	// failures.
	Inconclusive int `json:"inconclusive"`
	Drift        int `json:"drift"`
	Errors       int `json:"errors"`
	// Classes maps each operator name to its counts.
	Classes map[string]ClassCounts `json:"classes"`
	// Failures lists every outcome other than OutcomeOK, in entry order.
	Failures []Outcome `json:"-"`
}

// OK reports whether the corpus passed: no false accept or reject, no
// family mismatch, nothing inconclusive, drifted or failed.
func (s *Summary) OK() bool { return len(s.Failures) == 0 }

// Add counts one outcome.
func (s *Summary) Add(o Outcome) {
	if s.Classes == nil {
		s.Classes = map[string]ClassCounts{}
	}
	s.Entries++
	c := s.Classes[o.Entry.Operator]
	switch o.Entry.Verdict {
	case VerdictUnsafe:
		s.Faulty++
		c.Faulty++
		if o.Verdict == verify.Unsafe.String() {
			s.TruePositives++
			c.Detected++
		}
	case VerdictSafe:
		s.Safe++
		c.Safe++
		if o.Verdict == verify.Safe.String() {
			s.TrueNegatives++
		}
	case VerdictMalformed:
		s.Malformed++
		c.Malformed++
	}
	c.Recall = 1
	if c.Faulty > 0 {
		c.Recall = float64(c.Detected) / float64(c.Faulty)
	}
	s.Classes[o.Entry.Operator] = c
	switch o.Kind {
	case OutcomeOK:
		return
	case OutcomeFalseAccept:
		s.FalseAccepts++
	case OutcomeFalseReject:
		s.FalseRejects++
	case OutcomeFamilyMismatch:
		s.FamilyMismatches++
	case OutcomeInconclusive:
		s.Inconclusive++
	case OutcomeDrift:
		s.Drift++
	default:
		s.Errors++
	}
	s.Failures = append(s.Failures, o)
}

// Run checks every entry of the corpus with verify, on GOMAXPROCS
// goroutines, calling progress (if not nil) after each entry from one
// goroutine at a time. It returns ctx's error when ctx ends first.
func Run(ctx context.Context, progress func(done, total int)) (*Summary, error) {
	entries, err := loadEntries()
	if err != nil {
		return nil, err
	}
	return RunEntries(ctx, entries, progress)
}

// RunEntries is [Run] over the given entries.
func RunEntries(ctx context.Context, entries []Entry, progress func(done, total int)) (*Summary, error) {
	outcomes := make([]Outcome, len(entries))
	var next atomic.Int64
	var mu sync.Mutex
	done := 0
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(1, len(entries))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(entries) {
					return
				}
				outcomes[i] = Check(ctx, entries[i])
				mu.Lock()
				done++
				if progress != nil {
					progress(done, len(entries))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := &Summary{Classes: map[string]ClassCounts{}}
	for _, o := range outcomes {
		s.Add(o)
	}
	return s, nil
}
