package verify

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/megaproof/megaproof/schedule"
)

// Report is a [Result] rendered for readers outside Go: tasks are named,
// not numbered. It is exactly the object `megaproof verify --json` prints
// for each document, and `megaproof schema result` is its JSON Schema.
// Decoding that output into a Report gives the same values.
type Report struct {
	// File is the path the document was read from ("-" for standard
	// input); [Result.Report] leaves it empty.
	File string `json:"file"`
	// Format is the input format the document was read as
	// (schedule.Format, "amk" for AutoMegaKernel IR JSON, "mpk" for a
	// Mirage MPK task graph), when known.
	Format string `json:"format,omitempty"`
	// Program is the program's name, when it has one.
	Program string `json:"program,omitempty"`
	// Verdict is never the zero Verdict.
	Verdict Verdict `json:"verdict"`
	// Findings is empty exactly when Verdict is Safe; never nil in JSON.
	Findings []ReportFinding `json:"findings"`
	Stats    Stats           `json:"stats"`
}

// ReportFinding is a [Finding] with task names instead of indices.
type ReportFinding struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Path is the JSON path of an invalid.* finding.
	Path string `json:"path,omitempty"`
	// Tasks are the names of the tasks involved, primary first.
	Tasks []string `json:"tasks,omitempty"`
	// Related are detail lines ("waits on ...", "written by ...").
	Related []string `json:"related,omitempty"`
	// Fix suggests an edit that removes the finding, when one is evident.
	Fix string `json:"fix,omitempty"`
	// Witness is the finding's trace (see [Finding.Witness]), each event
	// annotated with its task and operation, and WitnessLength its number
	// of events.
	Witness       []ReportEvent `json:"witness,omitempty"`
	WitnessLength int           `json:"witness_length,omitempty"`
}

// ReportEvent is one event of a witness, a [schedule.Event] with what it
// does.
type ReportEvent struct {
	Thread int32 `json:"thread"`
	Step   int32 `json:"step"`
	// Task is the name of the task the step belongs to.
	Task string `json:"task,omitempty"`
	// Op describes the step: "wait ready >= 2", "signal ready += 1",
	// "begin" and "end" of the task's body, "acquire slots 1", ...
	Op string `json:"op,omitempty"`
}

// Events returns the witness as schedule events, for schedule.Replay and
// schedule.CheckWitness.
func (f *ReportFinding) Events() []schedule.Event {
	out := make([]schedule.Event, len(f.Witness))
	for i, e := range f.Witness {
		out[i] = schedule.Event{Thread: e.Thread, Step: e.Step}
	}
	return out
}

// Report renders r for p, the program it is the result of: each task index
// becomes the task's name (#N for an index p does not have, which only a
// Result of another program can hold). File and Format are left for the
// caller.
func (r *Result) Report(p *schedule.Program) *Report {
	rep := &Report{Verdict: r.Verdict, Stats: r.Stats, Findings: make([]ReportFinding, 0, len(r.Findings))}
	if p != nil {
		rep.Program = p.Name
	}
	var form *schedule.Form
	for _, f := range r.Findings {
		rf := ReportFinding{Code: f.Code, Message: f.Message, Path: f.Path, Related: f.Related, Fix: f.Fix, WitnessLength: len(f.Witness)}
		if len(f.Witness) > 0 {
			if form == nil && p != nil && p.Validate() == nil {
				form = schedule.Lower(p)
			}
			rf.Witness = annotate(p, form, f.Witness)
		}
		for _, t := range f.Tasks {
			name := fmt.Sprintf("#%d", t)
			if p != nil && t >= 0 && t < len(p.Tasks) {
				name = p.Tasks[t].Name
			}
			rf.Tasks = append(rf.Tasks, name)
		}
		rep.Findings = append(rep.Findings, rf)
	}
	return rep
}

// annotate names each event's task and operation; an event form does not
// have (only a Result of another program holds one) keeps its numbers only.
func annotate(p *schedule.Program, form *schedule.Form, w []schedule.Event) []ReportEvent {
	out := make([]ReportEvent, len(w))
	for i, e := range w {
		out[i] = ReportEvent{Thread: e.Thread, Step: e.Step}
		if form == nil || e.Thread < 0 || int(e.Thread) >= len(form.Threads) {
			continue
		}
		ops := form.Threads[e.Thread].Ops
		if e.Step < 0 || int(e.Step) >= len(ops) {
			continue
		}
		op := ops[e.Step]
		if op.Task >= 0 && int(op.Task) < len(p.Tasks) {
			out[i].Task = p.Tasks[op.Task].Name
		}
		op.Task = -1 // Describe then leaves the task out
		out[i].Op = p.Describe(op)
	}
	return out
}

// InvalidReport renders a decoding error as an [Invalid] report: one
// finding per diagnostic of a *[schedule.Error], or one invalid.syntax
// finding at $ for any other error.
func InvalidReport(err error) *Report {
	if err == nil {
		err = fmt.Errorf("invalid input")
	}
	return invalidResult(err).Report(nil)
}

// MarshalJSON keeps "findings" an array even when empty.
func (r *Report) MarshalJSON() ([]byte, error) {
	type plain Report
	q := plain(*r)
	if q.Findings == nil {
		q.Findings = []ReportFinding{}
	}
	return marshalPlain(q)
}

// marshalPlain encodes v without escaping <, > and & (messages quote
// thresholds such as "ready >= 2"); json.Marshal would escape them, and
// an encoder's SetEscapeHTML(false) cannot undo that inside MarshalJSON.
func marshalPlain(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
