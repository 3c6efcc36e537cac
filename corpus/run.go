package corpus

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/megaproof/megaproof/mutate"
	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify"
)

// Outcome kinds of [Check], from best to worst.
const (
	OutcomeOK               = "ok"                // the checker agrees with the oracle: verdict, codes, locations, witnesses
	OutcomeLocationMismatch = "location-mismatch" // same codes, but a finding that must name a mutated task does not
	OutcomeCodeMismatch     = "code-mismatch"     // both unsafe, the codes differ within the families
	OutcomeFamilyMismatch   = "family-mismatch"   // both unsafe, different families
	OutcomeFalseAccept      = "false-accept"      // oracle unsafe, checker safe
	OutcomeFalseReject      = "false-reject"      // oracle safe, checker unsafe
	OutcomeInconclusive     = "inconclusive"      // the checker hit a bound
	OutcomeDisputed         = "disputed"          // the oracles disagreed when the corpus was generated
	OutcomeDrift            = "drift"             // the recipe no longer builds the hashed mutant
	OutcomeWitness          = "witness"           // a witness the checker gave is rejected by schedule.CheckWitness
	OutcomeError            = "error"             // the recipe or the checker failed
)

// Outcome is the result of checking one entry.
type Outcome struct {
	Entry Entry
	// Kind is one of the Outcome constants.
	Kind string
	// Verdict, Codes and Families are what the checker reported (Verdict
	// is "malformed" when the operator still produces a malformed mutant).
	Verdict  string
	Codes    []string
	Families []string
	// Tasks is the number of tasks of the mutant (0 when it was not built).
	Tasks int
	// Detail explains a Kind other than OutcomeOK.
	Detail string
}

// Checker decides a program, as verify.Run does: the verdict and the
// findings with their codes, tasks and witnesses. A corpus can be run
// against any Checker (see [CheckWith] and [RunWith]).
type Checker func(ctx context.Context, p *schedule.Program) (*verify.Result, error)

// VerifyChecker returns verify.Run with cfg as a [Checker]: the default.
func VerifyChecker(cfg verify.Config) Checker {
	return func(ctx context.Context, p *schedule.Program) (*verify.Result, error) {
		return verify.Run(ctx, p, cfg)
	}
}

// Check rebuilds e's mutant, checks its content hash and compares verify's
// verdict, finding codes and locations with the golden ones, replaying
// every witness through schedule.CheckWitness.
func Check(ctx context.Context, e Entry) Outcome { return CheckConfig(ctx, e, verify.Config{}) }

// CheckConfig is [Check] with a verify configuration.
func CheckConfig(ctx context.Context, e Entry, cfg verify.Config) Outcome {
	return CheckWith(ctx, e, VerifyChecker(cfg))
}

// CheckWith is [Check] against any checker.
func CheckWith(ctx context.Context, e Entry, check Checker) Outcome {
	o := Outcome{Entry: e}
	if e.Verdict == VerdictDisputed {
		o.Kind, o.Detail = OutcomeDisputed, "the oracles "+e.Oracle+" disagreed on this mutant; fix the oracle that is wrong and run `go generate ./corpus`"
		return o
	}
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
	o.Tasks = len(q.Tasks)
	h, err := Hash(q)
	if err != nil {
		o.Kind, o.Detail = OutcomeError, err.Error()
		return o
	}
	if h != e.Hash {
		o.Kind, o.Detail = OutcomeDrift, fmt.Sprintf("mutant hash %s, golden %s: the seed or the operator changed; run `go generate ./corpus`", h, e.Hash)
		return o
	}
	r, err := check(ctx, q)
	if err == nil && r == nil {
		err = errors.New("no result")
	}
	if err != nil {
		o.Kind, o.Detail = OutcomeError, "checker: "+err.Error()
		return o
	}
	o.Verdict = r.Verdict.String()
	// An unsafe verdict may carry an inconclusive finding (a bound hit
	// after the faults were found): it names no fault and has no witness.
	findings := slices.DeleteFunc(slices.Clone(r.Findings), func(f verify.Finding) bool { return f.Code == verify.CodeInconclusive })
	for _, f := range findings {
		o.Codes = append(o.Codes, f.Code)
	}
	slices.Sort(o.Codes)
	o.Codes = slices.Compact(o.Codes)
	o.Families = FamiliesOf(o.Codes)
	switch {
	case r.Verdict == verify.Inconclusive:
		o.Kind, o.Detail = OutcomeInconclusive, "the checker was inconclusive"
		return o
	case r.Verdict != verify.Safe && r.Verdict != verify.Unsafe:
		o.Kind, o.Detail = OutcomeError, "checker verdict "+o.Verdict
		return o
	case r.Verdict == verify.Safe && len(r.Findings) > 0, r.Verdict == verify.Unsafe && len(findings) == 0:
		o.Kind, o.Detail = OutcomeError, fmt.Sprintf("checker verdict %s with %d findings", o.Verdict, len(r.Findings))
		return o
	}
	// Every unsafe verdict's witnesses replay (static findings take none);
	// findings sharing one witness (the advance of one stuck state) are
	// judged on one replay of it.
	reached := map[string]*schedule.State{}
	for i, f := range findings {
		var err error
		k := schedule.TraceKey(f.Witness)
		if st := reached[k]; st != nil && len(f.Witness) > 0 {
			err = st.Exhibits(f.Code, f.Tasks)
		} else if err = schedule.CheckWitness(q, f.Code, f.Tasks, f.Witness); err == nil && len(f.Witness) > 0 && len(f.Witness) <= 64 && len(reached) < 32 {
			if st, rerr := schedule.Replay(q, f.Witness); rerr == nil {
				reached[k] = st
			}
		}
		if err != nil {
			o.Kind, o.Detail = OutcomeWitness, fmt.Sprintf("finding %d (%s %v): witness rejected: %v", i, f.Code, f.Tasks, err)
			return o
		}
	}
	switch {
	case e.Verdict == VerdictUnsafe && r.Verdict == verify.Safe:
		o.Kind = OutcomeFalseAccept
	case e.Verdict == VerdictSafe && r.Verdict == verify.Unsafe:
		o.Kind = OutcomeFalseReject
	case !slices.Equal(o.Families, e.Families):
		o.Kind = OutcomeFamilyMismatch
	case !CodesMatch(e.Codes, o.Codes) && !mixedDeadlock(q, e.Codes, o.Codes, findings):
		o.Kind = OutcomeCodeMismatch
	default:
		if d := locationMismatch(e, findings); d != "" {
			o.Kind, o.Detail = OutcomeLocationMismatch, d
			return o
		}
		o.Kind = OutcomeOK
	}
	if o.Kind != OutcomeOK {
		o.Detail = fmt.Sprintf("%s says %s %v, the checker says %s %v", e.Oracle, e.Verdict, e.Codes, o.Verdict, o.Codes)
	}
	return o
}

// deadlockRank orders the deadlock codes as docs/SEMANTICS.md codes a
// stuck state: a thread at an acquire first, then at an await, then at an
// unsatisfiable wait, else a cycle.
var deadlockRank = map[string]int{
	verify.CodeDeadlockSemaphore:     4,
	verify.CodeDeadlockBarrier:       3,
	verify.CodeDeadlockUnsatisfiable: 2,
	verify.CodeDeadlockCycle:         1,
}

// CodesMatch reports whether a checker's codes (sorted, distinct) match an
// oracle's. Outside the deadlock family the sets must be equal. In it, the
// oracle codes a stuck state by its highest-ranked stuck thread (see
// docs/SEMANTICS.md: an acquire, an await, an unsatisfiable wait, else a
// cycle), while a checker may explain a mixed stuck state by several
// codes: it must report every deadlock code of the oracle, and any other
// deadlock code it reports must rank below the oracle's highest one (a
// barrier deadlock reported as deadlock.cycle alone does not match).
func CodesMatch(oracle, checker []string) bool {
	var od, cd, on, cn []string
	for _, c := range oracle {
		if _, ok := deadlockRank[c]; ok {
			od = append(od, c)
		} else {
			on = append(on, c)
		}
	}
	for _, c := range checker {
		if _, ok := deadlockRank[c]; ok {
			cd = append(cd, c)
		} else {
			cn = append(cn, c)
		}
	}
	if !slices.Equal(on, cn) {
		return false
	}
	top := 0
	for _, c := range od {
		if !slices.Contains(cd, c) {
			return false
		}
		top = max(top, deadlockRank[c])
	}
	for _, c := range cd {
		if !slices.Contains(od, c) && deadlockRank[c] >= top {
			return false
		}
	}
	return true
}

// mixedDeadlock reports whether the codes differ in the deadlock family
// alone and the checker's deadlock witness, replayed by schedule.Replay,
// ends in a mixed stuck state: stuck threads of at least two kinds (at an
// acquire, at an await, at a wait beyond its counter's total, at another
// wait; an unclaimed dynamic task counts at the first guard operation that
// does not hold). docs/SEMANTICS.md makes deadlock codes a family-level
// contract there, so the codes are compared by family only (as they
// already are). A pure stuck state keeps the exact rule of CodesMatch.
func mixedDeadlock(p *schedule.Program, oracle, checker []string, findings []verify.Finding) bool {
	notDeadlock := func(c string) bool { _, ok := deadlockRank[c]; return !ok }
	if !slices.Equal(slices.DeleteFunc(slices.Clone(oracle), func(c string) bool { return !notDeadlock(c) }),
		slices.DeleteFunc(slices.Clone(checker), func(c string) bool { return !notDeadlock(c) })) {
		return false
	}
	for _, f := range findings {
		if notDeadlock(f.Code) || len(f.Witness) == 0 {
			continue
		}
		st, err := schedule.Replay(p, f.Witness)
		if err != nil || !st.Stuck() {
			return false
		}
		return len(stuckKinds(p, st)) > 1
	}
	return false
}

// stuckKinds returns the kinds of the stuck threads of a stuck state (see
// mixedDeadlock), by docs/SEMANTICS.md's coding of a stuck thread.
func stuckKinds(p *schedule.Program, st *schedule.State) map[string]bool {
	f := schedule.Lower(p)
	total := make([]uint64, len(p.Counters))
	for i, c := range p.Counters {
		total[i] = c.Init
	}
	for _, th := range f.Threads {
		for _, op := range th.Ops {
			if op.Kind == schedule.OpSignal {
				if total[op.Object]+op.Value < total[op.Object] {
					total[op.Object] = ^uint64(0) // saturates, as the counter's total does
				} else {
					total[op.Object] += op.Value
				}
			}
		}
	}
	kinds := map[string]bool{}
	for t, th := range f.Threads {
		if st.Finished(t) || t < f.Workers && t >= st.Started {
			continue
		}
		op := th.Ops[st.Pos[t]]
		if t >= f.Workers && st.Pos[t] == 0 {
			for _, g := range th.Ops[:th.Guard()] {
				if g.Kind == schedule.OpWait && st.Counters[g.Object] < g.Value || g.Kind == schedule.OpAcquire && st.Tokens[g.Object] < g.Value {
					op = g
					break
				}
			}
		}
		switch {
		case op.Kind == schedule.OpAcquire:
			kinds[verify.CodeDeadlockSemaphore] = true
		case op.Kind == schedule.OpAwait:
			kinds[verify.CodeDeadlockBarrier] = true
		case op.Kind == schedule.OpWait && op.Value > total[op.Object]:
			kinds[verify.CodeDeadlockUnsatisfiable] = true
		case op.Kind == schedule.OpWait:
			kinds[verify.CodeDeadlockCycle] = true
		}
	}
	return kinds
}

// locationMismatch returns why findings fail e's locations, or "": every
// finding whose code the operator locates (mutate.Operator.Locates) must
// name one of e.Tasks.
func locationMismatch(e Entry, findings []verify.Finding) string {
	if len(e.Tasks) == 0 {
		return ""
	}
	op, ok := mutate.Lookup(e.Operator)
	if !ok {
		return ""
	}
	for _, f := range findings {
		if !slices.Contains(op.Locates, f.Code) {
			continue
		}
		if !slices.ContainsFunc(f.Tasks, func(t int) bool { return slices.Contains(e.Tasks, t) }) {
			return fmt.Sprintf("%s finding names tasks %v, none of the mutated tasks %v", f.Code, f.Tasks, e.Tasks)
		}
	}
	return ""
}

// ClassCounts are the counts of one class (mutation operator) or one seed
// family.
type ClassCounts struct {
	Faulty    int     `json:"faulty"`    // entries the oracle labelled unsafe
	Safe      int     `json:"safe"`      // safe controls
	Malformed int     `json:"malformed"` // mutants that fail validation
	Detected  int     `json:"detected"`  // faulty entries the checker called unsafe
	Recall    float64 `json:"recall"`    // Detected / Faulty (1 when Faulty is 0)
}

// Summary is the outcome of [Run]: a confusion matrix of the checker
// against the oracles' labels, and counts per class and seed family.
type Summary struct {
	Entries   int `json:"entries"`
	Faulty    int `json:"faulty"`
	Safe      int `json:"safe"`
	Malformed int `json:"malformed"`
	// Seeds counts the seed entries (operator SeedOperator), UnsafeSeeds
	// those an oracle labelled unsafe and UndecidedSeeds those no oracle
	// decided; seed entries are not counted as faulty or safe.
	Seeds          int `json:"seeds"`
	UnsafeSeeds    int `json:"unsafe_seeds"`
	UndecidedSeeds int `json:"undecided_seeds"`
	// LargeFaulty counts the faulty entries of at least LargeTasks tasks.
	LargeFaulty int `json:"large_faulty"`
	// TruePositives are faulty entries the checker calls unsafe;
	// TrueNegatives safe controls it calls safe.
	TruePositives int `json:"true_positives"`
	TrueNegatives int `json:"true_negatives"`
	// FalseAccepts are faulty entries the checker calls safe; FalseRejects
	// safe controls and seeds it calls unsafe.
	FalseAccepts int `json:"false_accepts"`
	FalseRejects int `json:"false_rejects"`
	// FamilyMismatches are unsafe entries whose finding families differ,
	// CodeMismatches those whose families agree but codes do not (see
	// CodesMatch), LocationMismatches those whose codes agree but a
	// finding that must name a mutated task does not.
	FamilyMismatches   int `json:"family_mismatches"`
	CodeMismatches     int `json:"code_mismatches"`
	LocationMismatches int `json:"location_mismatches"`
	// WitnessFailures count checker witnesses schedule.CheckWitness
	// rejects; OracleDisagreements entries whose oracles disagreed when
	// the corpus was generated.
	WitnessFailures     int `json:"witness_failures"`
	OracleDisagreements int `json:"oracle_disagreements"`
	// Inconclusive, Drift and Errors count entries the checker could not
	// decide, entries whose recipe no longer rebuilds the hashed mutant,
	// and failures.
	Inconclusive int `json:"inconclusive"`
	Drift        int `json:"drift"`
	Errors       int `json:"errors"`
	// LabelledBy counts the labelled entries (seeds included) per oracle;
	// an entry two oracles agreed on counts for both.
	LabelledBy map[string]int `json:"labelled_by"`
	// Classes maps each operator name to its counts.
	Classes map[string]ClassCounts `json:"classes"`
	// BySeedFamily maps each seed family (the seed id's prefix: llama,
	// proto, progen, ...) to the counts of its mutants.
	BySeedFamily map[string]ClassCounts `json:"by_seed_family"`
	// Failures lists every outcome other than OutcomeOK, in entry order.
	Failures []Outcome `json:"-"`
}

// OK reports whether the corpus passed: no false accept or reject, no
// family, code or location mismatch, no rejected witness, no oracle
// disagreement, nothing inconclusive, drifted or failed.
func (s *Summary) OK() bool { return len(s.Failures) == 0 }

// SeedFamily is the family of a seed id: its prefix before the last "-".
func SeedFamily(seedID string) string {
	if i := strings.LastIndexByte(seedID, '-'); i > 0 {
		return seedID[:i]
	}
	return seedID
}

func countIn(m map[string]ClassCounts, key string, e Entry, detected bool) {
	c := m[key]
	switch e.Verdict {
	case VerdictUnsafe:
		c.Faulty++
		if detected {
			c.Detected++
		}
	case VerdictSafe:
		c.Safe++
	case VerdictMalformed:
		c.Malformed++
	}
	c.Recall = 1
	if c.Faulty > 0 {
		c.Recall = float64(c.Detected) / float64(c.Faulty)
	}
	m[key] = c
}

// Add counts one outcome.
func (s *Summary) Add(o Outcome) {
	if s.Classes == nil {
		s.Classes = map[string]ClassCounts{}
	}
	if s.BySeedFamily == nil {
		s.BySeedFamily = map[string]ClassCounts{}
	}
	if s.LabelledBy == nil {
		s.LabelledBy = map[string]int{}
	}
	s.Entries++
	e := o.Entry
	if e.Oracle != "" && e.Verdict != VerdictDisputed {
		for k := range strings.SplitSeq(e.Oracle, "+") {
			s.LabelledBy[k]++
		}
	}
	detected := o.Verdict == verify.Unsafe.String()
	if e.Operator == SeedOperator {
		s.Seeds++
		switch e.Verdict {
		case VerdictUnsafe:
			s.UnsafeSeeds++
		case VerdictUndecided:
			s.UndecidedSeeds++
		}
	} else {
		countIn(s.Classes, e.Operator, e, detected)
		countIn(s.BySeedFamily, SeedFamily(e.Seed), e, detected)
		switch e.Verdict {
		case VerdictUnsafe:
			s.Faulty++
			if e.Size >= LargeTasks {
				s.LargeFaulty++
			}
			if detected {
				s.TruePositives++
			}
		case VerdictSafe:
			s.Safe++
			if o.Verdict == verify.Safe.String() {
				s.TrueNegatives++
			}
		case VerdictMalformed:
			s.Malformed++
		}
	}
	switch o.Kind {
	case OutcomeOK:
		return
	case OutcomeFalseAccept:
		s.FalseAccepts++
	case OutcomeFalseReject:
		s.FalseRejects++
	case OutcomeFamilyMismatch:
		s.FamilyMismatches++
	case OutcomeCodeMismatch:
		s.CodeMismatches++
	case OutcomeLocationMismatch:
		s.LocationMismatches++
	case OutcomeWitness:
		s.WitnessFailures++
	case OutcomeDisputed:
		s.OracleDisagreements++
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
	return RunWith(ctx, entries, VerifyChecker(verify.Config{}), progress)
}

// RunWith is [RunEntries] against any checker.
func RunWith(ctx context.Context, entries []Entry, check Checker, progress func(done, total int)) (*Summary, error) {
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
				outcomes[i] = CheckWith(ctx, entries[i], check)
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
	s := &Summary{Classes: map[string]ClassCounts{}, BySeedFamily: map[string]ClassCounts{}, LabelledBy: map[string]int{}}
	for _, o := range outcomes {
		s.Add(o)
	}
	return s, nil
}
