package verify

import (
	"encoding/json"
	"fmt"

	"github.com/megaproof/megaproof/schedule"
)

// Verdict is the outcome of verification.
type Verdict uint8

// Verdicts.
const (
	Safe         Verdict = iota // no finding, and the decision is complete
	Unsafe                      // at least one finding, each with a witness where it has one
	Invalid                     // the input is malformed
	Inconclusive                // a bound was hit before a decision
)

var verdictNames = [...]string{Safe: "safe", Unsafe: "unsafe", Invalid: "invalid", Inconclusive: "inconclusive"}

func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return fmt.Sprintf("Verdict(%d)", uint8(v))
}

// MarshalText renders the verdict as its name.
func (v Verdict) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

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
	// Tasks are the indices of the tasks involved, primary first.
	Tasks []int `json:"tasks,omitempty"`
	// Related are indented detail lines ("waits on ...", "written by ...").
	Related []string `json:"related,omitempty"`
	// Fix suggests an edit that removes the finding, when one is evident.
	Fix string `json:"fix,omitempty"`
	// Witness is a trace from the initial state that exhibits the finding;
	// schedule.Replay confirms it (see schedule.CheckWitness). Static
	// findings have none.
	Witness []schedule.Event `json:"witness,omitempty"`
}

// Stats describes the work an analysis did.
type Stats struct {
	Tasks    int `json:"tasks"`
	Threads  int `json:"threads"`
	Steps    int `json:"steps"`
	Accesses int `json:"accesses"`
	// Pairs counts the pairs of tasks on different threads with
	// conflicting accesses that the analysis ordered directly. When the
	// shadow pass proves a program, that is each access against the last
	// writer and the readers since of its bytes, and every other
	// conflicting pair is ordered through them; otherwise it is every
	// conflicting pair.
	Pairs  int    `json:"conflict_pairs"`
	States int    `json:"explored_states,omitempty"`
	Games  int    `json:"taint_games,omitempty"`
	Engine string `json:"engine"`
}

// Result is the outcome of [Run].
type Result struct {
	Verdict  Verdict   `json:"verdict"`
	Findings []Finding `json:"findings"`
	Stats    Stats     `json:"stats"`
}

// Err returns nil for a safe result and an error naming the first finding
// otherwise.
func (r *Result) Err() error {
	if r.Verdict == Safe {
		return nil
	}
	if len(r.Findings) == 0 {
		return fmt.Errorf("megaproof: %s", r.Verdict)
	}
	f := r.Findings[0]
	more := ""
	if n := len(r.Findings) - 1; n > 0 {
		more = fmt.Sprintf(" (and %d more findings)", n)
	}
	return fmt.Errorf("megaproof: %s: %s: %s%s", r.Verdict, f.Code, f.Message, more)
}

// MarshalJSON keeps "findings" an array even when empty.
func (r *Result) MarshalJSON() ([]byte, error) {
	type plain Result
	q := plain(*r)
	if q.Findings == nil {
		q.Findings = []Finding{}
	}
	return json.Marshal(q)
}
