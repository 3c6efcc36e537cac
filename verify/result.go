package verify

import (
	"fmt"

	"github.com/megaproof/megaproof/schedule"
)

// Verdict is the outcome of verification.
//
// The zero Verdict is no verdict at all: it is not [Safe], so a gate that
// compares against Safe fails closed on a Result it never filled in, and it
// has no JSON form ([Verdict.MarshalText] refuses it).
type Verdict uint8

// Verdicts.
const (
	Safe         Verdict = iota + 1 // no finding, and the decision is complete
	Unsafe                          // at least one finding, each with a witness where it has one
	Invalid                         // the input is malformed
	Inconclusive                    // a bound was hit before a decision
)

var verdictNames = [...]string{Safe: "safe", Unsafe: "unsafe", Invalid: "invalid", Inconclusive: "inconclusive"}

// String returns the verdict's name ("safe", "unsafe", "invalid",
// "inconclusive"), or Verdict(N) for a value that is none of them, the
// zero Verdict included.
func (v Verdict) String() string {
	if int(v) < len(verdictNames) && verdictNames[v] != "" {
		return verdictNames[v]
	}
	return fmt.Sprintf("Verdict(%d)", uint8(v))
}

// MarshalText renders the verdict as its name. It fails for the zero
// Verdict and any other value without a name, so an unset verdict never
// reaches a JSON consumer.
func (v Verdict) MarshalText() ([]byte, error) {
	if int(v) >= len(verdictNames) || verdictNames[v] == "" {
		return nil, fmt.Errorf("verify: %s has no name", v)
	}
	return []byte(verdictNames[v]), nil
}

// UnmarshalText parses a verdict's name, as megaproof verify --json
// prints it.
func (v *Verdict) UnmarshalText(b []byte) error {
	for i, name := range verdictNames {
		if name != "" && name == string(b) {
			*v = Verdict(i)
			return nil
		}
	}
	return fmt.Errorf("verify: unknown verdict %q", b)
}

// Stable finding codes. The part before the first dot is the family. The
// list is append-only; invalid.* codes are in package schedule.
const (
	CodeDeadlockUnsatisfiable = "deadlock.unsatisfiable"
	CodeDeadlockCycle         = "deadlock.cycle"
	CodeDeadlockBarrier       = "deadlock.barrier"
	CodeDeadlockSemaphore     = "deadlock.semaphore"
	CodeOccupancy             = "occupancy"
	CodeRaceRAW               = "race.raw"
	CodeRaceWAR               = "race.war"
	CodeRaceWAW               = "race.waw"
	CodeRaceUnsynchronized    = "race.unsynchronized"
	CodeRaceScope             = "race.scope"
	CodeUninitializedRead     = "uninitialized-read"
	CodeOutOfBounds           = "out-of-bounds"
	CodeReadonlyWrite         = "readonly-write"
	CodeOutputUnwritten       = "output-unwritten"
	CodeCounterOverflow       = "counter-overflow"
	CodeInconclusive          = "inconclusive"
)

// Family returns the part of a code before its first dot.
func Family(code string) string {
	for i := 0; i < len(code); i++ {
		if code[i] == '.' {
			return code[:i]
		}
	}
	return code
}

// Finding is one reason a program is unsafe, invalid or undecided.
type Finding struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Path is the JSON path of an invalid.* finding.
	Path string `json:"path,omitempty"`
	// Tasks are the indices in Program.Tasks of the tasks involved,
	// primary first. In JSON they are "task_indices"; [Report] names
	// them under "tasks".
	Tasks []int `json:"task_indices,omitempty"`
	// Related are indented detail lines ("waits on ...", "written by ...").
	Related []string `json:"related,omitempty"`
	// Fix suggests an edit that removes the finding, when one is evident.
	Fix string `json:"fix,omitempty"`
	// Witness is a trace from the initial state that exhibits the finding;
	// schedule.Replay confirms it (see schedule.CheckWitness). [Run]
	// minimises it (see docs/SEMANTICS.md, "Witnesses"); a long one may be
	// compact, holds and advances that schedule.Replay expands into steps
	// (schedule.Hold, schedule.Advance). A finding with a
	// witness has a non-nil Witness, empty for the empty trace (a state
	// stuck from the start: deadlock.cycle, non-cooperative occupancy);
	// in JSON "witness": []. Static findings (out-of-bounds,
	// readonly-write, output-unwritten, cooperative occupancy,
	// inconclusive, invalid.*) have none: Witness is nil and the key is
	// left out. [Finding.HasWitness] tells them apart.
	Witness []schedule.Event `json:"witness,omitempty"`
}

// HasWitness reports whether the finding carries a witness, possibly the
// empty trace.
func (f *Finding) HasWitness() bool { return f.Witness != nil }

// MarshalJSON writes "witness" exactly when the finding has a witness,
// as [] for the empty trace.
func (f Finding) MarshalJSON() ([]byte, error) {
	type plain Finding
	q := struct {
		plain
		Witness *[]schedule.Event `json:"witness,omitempty"`
	}{plain: plain(f)}
	if f.Witness != nil {
		q.Witness = &f.Witness
	}
	return marshalPlain(q)
}

// Stats describes the work an analysis did.
type Stats struct {
	// Tasks is the number of tasks of the program.
	Tasks int `json:"tasks"`
	// Threads is the number of threads of its normal form: one per
	// static worker, one per dynamic task.
	Threads int `json:"threads"`
	// Steps counts the operations of all threads: waits, signals,
	// barrier and semaphore steps, fences and task bodies.
	Steps int `json:"steps"`
	// Accesses counts the reads and writes analysed.
	Accesses int `json:"accesses"`
	// Pairs counts the pairs of tasks on different threads with
	// conflicting accesses that the analysis ordered directly. When the
	// shadow pass proves a program, that is each access against the last
	// writer and the readers since of its bytes, and every other
	// conflicting pair is ordered through them; otherwise it is every
	// conflicting pair.
	Pairs int `json:"conflict_pairs"`
	// States is the number of states the explorer visited (programs
	// with semaphores).
	States int `json:"explored_states,omitempty"`
	// Games is the number of taint games played: one per task whose
	// pairs relaxed or narrow-scoped synchronization left open, and one
	// per set of writers the uninitialized-read check could not order
	// before a read.
	Games int `json:"taint_games,omitempty"`
	// Engine names the decision procedure that produced the verdict:
	// "greedy" (the confluent analyses) or "explore" (the explicit-state
	// explorer, for programs with semaphores).
	Engine string `json:"engine"`
}

// Result is the outcome of [Run].
type Result struct {
	Verdict  Verdict   `json:"verdict"`
	Findings []Finding `json:"findings"`
	Stats    Stats     `json:"stats"`
}

// Err returns nil for a safe result and an [*Error] carrying r otherwise
// (the zero Verdict included).
func (r *Result) Err() error {
	if r.Verdict == Safe {
		return nil
	}
	return &Error{Result: r}
}

// Error is the error of a program that is not proven safe: unsafe,
// invalid or inconclusive. [Program] and [Result.Err] return it; reach it
// with errors.As to read the verdict, the findings and their witnesses.
//
// For an invalid program it also unwraps to a *[schedule.Error] with one
// diagnostic per invalid.* finding, so errors.As finds the same type that
// [schedule.Program.Validate] returns.
type Error struct {
	Result *Result
}

// Error names the verdict and the first finding.
func (e *Error) Error() string {
	r := e.Result
	if r == nil {
		return "megaproof: no result"
	}
	if len(r.Findings) == 0 {
		return fmt.Sprintf("megaproof: %s", r.Verdict)
	}
	f := r.Findings[0]
	more := ""
	if n := len(r.Findings) - 1; n > 0 {
		more = fmt.Sprintf(" (and %d more findings)", n)
	}
	return fmt.Sprintf("megaproof: %s: %s: %s%s", r.Verdict, f.Code, f.Message, more)
}

// Unwrap returns the structural errors of an invalid program as a
// *[schedule.Error], and nil for any other verdict.
func (e *Error) Unwrap() error {
	if e.Result == nil || e.Result.Verdict != Invalid {
		return nil
	}
	se := &schedule.Error{}
	for _, f := range e.Result.Findings {
		se.Diagnostics = append(se.Diagnostics, schedule.Diagnostic{Code: f.Code, Path: f.Path, Message: f.Message})
	}
	if len(se.Diagnostics) == 0 {
		return nil
	}
	return se
}

// MarshalJSON keeps "findings" an array even when empty.
func (r *Result) MarshalJSON() ([]byte, error) {
	type plain Result
	q := plain(*r)
	if q.Findings == nil {
		q.Findings = []Finding{}
	}
	return marshalPlain(q)
}
