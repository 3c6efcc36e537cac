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

// ReportFinding is a [Finding] with task names instead of indices, the
// JSON paths of what it involves, and its witness annotated.
type ReportFinding struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Path is the JSON path of an invalid.* finding.
	Path string `json:"path,omitempty"`
	// Tasks are the names of the tasks involved, primary first.
	Tasks []string `json:"tasks,omitempty"`
	// Locations are the JSON paths, in the input document's own format,
	// of the tasks and steps involved: each task of Tasks, the step each
	// stuck thread stands at, the overflowing signal, the steps of a
	// race.scope pair; the path of an invalid.* finding; for a
	// megaproof/v1 document ([schedule.DataLocator]) also the accesses,
	// buffers and launch of static and occupancy findings.
	Locations []Location `json:"locations,omitempty"`
	// Related are detail lines ("waits on ...", "written by ...").
	Related []string `json:"related,omitempty"`
	// Fix suggests an edit that removes the finding, when one is evident.
	Fix string `json:"fix,omitempty"`
	// Patch is Fix as RFC 6902 JSON Patch operations on the input
	// document, where the finding names a fix, the fix is a definite edit
	// in the document's format and the format is megaproof/v1, AMK IR or
	// MPK (see docs/SEMANTICS.md, "Fixes as patches"). Applying
	// it removes the finding on the code examples; verify the result, as
	// an edit may change what else the program does.
	Patch []PatchOp `json:"patch,omitempty"`
	// Witness is the finding's trace (see [Finding.Witness]), each event
	// annotated, and WitnessLength its number of events. A finding with a
	// witness has a non-nil Witness, empty for the empty trace (a state
	// stuck from the start): in JSON "witness": [] and "witness_length":
	// 0. A static finding has none: Witness is nil and both keys are left
	// out.
	Witness       []ReportEvent `json:"witness,omitempty"`
	WitnessLength int           `json:"witness_length,omitempty"`
}

// HasWitness reports whether the finding carries a witness, possibly the
// empty trace.
func (f *ReportFinding) HasWitness() bool { return f.Witness != nil }

// Location is one place in the input document that a finding involves.
type Location struct {
	// Path is a JSON path into the input document: "$.tasks[12]",
	// "$.tasks[12].before[0]" (megaproof/v1), "$.tasks[3].waits[1]"
	// (AMK).
	Path string `json:"path"`
	// Task is the name of the task at or around Path (none for a buffer
	// or the launch).
	Task string `json:"task,omitempty"`
	// Role says what the place does in the finding: "writer" (of bytes
	// the other task accesses), "reader", "access", "buffer", "launch",
	// "stuck" (a
	// task or the step a stuck thread stands at), "signal", "wait",
	// "invalid".
	Role string `json:"role,omitempty"`
}

// ReportEvent is one event of a witness, a [schedule.Event] with what it
// does and the state it leaves. Thread and Step are the event's own
// fields, so a hold or an advance (see [schedule.Advance]) keeps its Go
// encoding there; in JSON an event takes the form of its
// [schedule.Event]: "thread" and "step", "hold" and "at", or
// "advance": true, followed by the annotations.
type ReportEvent struct {
	Thread int32 `json:"thread"`
	Step   int32 `json:"step"`
	// Advance is set for an advance event (its JSON form
	// {"advance":true,...}).
	Advance bool `json:"advance,omitempty"`
	// ThreadName names the thread as [schedule.Form.ThreadName] does:
	// "worker 3", or `task "x"` for a dynamic task's thread.
	ThreadName string `json:"thread_name,omitempty"`
	// Task is the name of the task the step belongs to.
	Task string `json:"task,omitempty"`
	// Op describes the step: "wait ready >= 2", "signal ready += 1",
	// "begin" and "end" of the task's body, "acquire slots 1", ...
	Op string `json:"op,omitempty"`
	// Object is the sync object the step touches, with its kind:
	// "counter ready", "barrier layer", "semaphore slots"; empty for
	// fences and bodies.
	Object string `json:"object,omitempty"`
	// Value is Object's value right after the event, in a replay of the
	// witness with [schedule.Machine]: a counter's value, a barrier's
	// arrivals, a semaphore's tokens. It is present when Object is and
	// the witness replays up to the event (always, for a witness of
	// [Run] on the same program).
	Value *uint64 `json:"value,omitempty"`
	// Marked flags the events that matter: the bodies that race or read
	// uninitialized bytes begin, the last step of each stuck thread and
	// the last update of the object it waits on, the signal that
	// overflows, the last steps of a race.scope pair.
	Marked bool `json:"marked,omitempty"`
	// Path is the JSON path of the step in the input document: the
	// task's for its body's begin and end; for a hold, the path of the
	// step it holds its thread before.
	Path string `json:"path,omitempty"`
	// Executed is the number of steps an advance runs, Spans the steps
	// [From, To) it runs of each thread it moves, in thread order, and
	// Marks the steps among them that matter, annotated (the advance is
	// then Marked). A hold is Marked when it holds a thread of the
	// finding's tasks; its Op names the step it stops before.
	Executed int           `json:"executed,omitempty"`
	Spans    []ReportSpan  `json:"spans,omitempty"`
	Marks    []ReportEvent `json:"marks,omitempty"`
}

// ReportSpan is the part of one thread that an advance runs: its steps
// from From up to, not including, To.
type ReportSpan struct {
	Thread     int32  `json:"thread"`
	ThreadName string `json:"thread_name,omitempty"`
	From       int32  `json:"from"`
	To         int32  `json:"to"`
}

// Event is the [schedule.Event] the report event stands for.
func (e *ReportEvent) Event() schedule.Event {
	return schedule.Event{Thread: e.Thread, Step: e.Step}
}

// reportEventJSON is ReportEvent's JSON form: the keys of one of the
// three event forms, then the annotations.
type reportEventJSON struct {
	Thread     *int32        `json:"thread,omitempty"`
	Step       *int32        `json:"step,omitempty"`
	Hold       *int32        `json:"hold,omitempty"`
	At         *int32        `json:"at,omitempty"`
	Advance    bool          `json:"advance,omitempty"`
	ThreadName string        `json:"thread_name,omitempty"`
	Task       string        `json:"task,omitempty"`
	Op         string        `json:"op,omitempty"`
	Object     string        `json:"object,omitempty"`
	Value      *uint64       `json:"value,omitempty"`
	Marked     bool          `json:"marked,omitempty"`
	Path       string        `json:"path,omitempty"`
	Executed   int           `json:"executed,omitempty"`
	Spans      []ReportSpan  `json:"spans,omitempty"`
	Marks      []ReportEvent `json:"marks,omitempty"`
}

// MarshalJSON writes the event in the JSON form of its schedule.Event,
// then its annotations.
func (e ReportEvent) MarshalJSON() ([]byte, error) {
	q := reportEventJSON{ThreadName: e.ThreadName, Task: e.Task, Op: e.Op, Object: e.Object, Value: e.Value,
		Marked: e.Marked, Path: e.Path, Executed: e.Executed, Spans: e.Spans, Marks: e.Marks}
	switch ev := e.Event(); {
	case ev.IsStep():
		q.Thread, q.Step = &e.Thread, &e.Step
	case ev.IsHold():
		at := int32(ev.HoldAt())
		q.Hold, q.At = &e.Thread, &at
	case ev.IsAdvance():
		q.Advance = true
	default:
		return nil, fmt.Errorf("verify: report event {thread %d, step %d} is malformed", ev.Thread, ev.Step)
	}
	return marshalPlain(q)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (e *ReportEvent) UnmarshalJSON(data []byte) error {
	var q reportEventJSON
	if err := json.Unmarshal(data, &q); err != nil {
		return err
	}
	*e = ReportEvent{ThreadName: q.ThreadName, Task: q.Task, Op: q.Op, Object: q.Object, Value: q.Value,
		Marked: q.Marked, Path: q.Path, Executed: q.Executed, Spans: q.Spans, Marks: q.Marks}
	switch {
	case q.Thread != nil && q.Step != nil && q.Hold == nil && q.At == nil && !q.Advance:
		e.Thread, e.Step = *q.Thread, *q.Step
	case q.Hold != nil && q.At != nil && q.Thread == nil && q.Step == nil && !q.Advance:
		ev := schedule.Hold(int(*q.Hold), int(*q.At))
		e.Thread, e.Step = ev.Thread, ev.Step
	case q.Advance && q.Thread == nil && q.Step == nil && q.Hold == nil && q.At == nil:
		ev := schedule.Advance()
		e.Thread, e.Step, e.Advance = ev.Thread, ev.Step, true
	default:
		return fmt.Errorf("verify: a report event has the keys of one of a step, a hold or an advance: %s", data)
	}
	return nil
}

// MarshalJSON writes "witness" and "witness_length" exactly when the
// finding has a witness, the empty one included.
func (f ReportFinding) MarshalJSON() ([]byte, error) {
	type plain ReportFinding
	q := struct {
		plain
		Witness       json.RawMessage `json:"witness,omitempty"`
		WitnessLength *int            `json:"witness_length,omitempty"`
	}{plain: plain(f)}
	if f.Witness != nil {
		w, err := marshalPlain(f.Witness)
		if err != nil {
			return nil, err
		}
		n := len(f.Witness)
		q.Witness, q.WitnessLength = w, &n
	}
	return marshalPlain(q)
}

// Events returns the witness as schedule events, for schedule.Replay and
// schedule.CheckWitness; nil for a finding without one.
func (f *ReportFinding) Events() []schedule.Event {
	if f.Witness == nil {
		return nil
	}
	out := make([]schedule.Event, len(f.Witness))
	for i := range f.Witness {
		out[i] = f.Witness[i].Event()
	}
	return out
}

// Report renders r for p, the program it is the result of, located in
// p's megaproof/v1 form ([schedule.Paths]); see [Result.ReportAt].
func (r *Result) Report(p *schedule.Program) *Report {
	return r.ReportAt(p, schedule.Paths{})
}

// ReportAt renders r for p, the program it is the result of, with the
// JSON paths of loc (the input document's format; nil: none): each task
// index becomes the task's name (#N for an index p does not have, which
// only a Result of another program can hold), each witness is replayed to
// annotate its events, and each finding gets its locations and, for a
// megaproof/v1 document ([schedule.Paths]), an AMK one (amk.Paths) or an
// MPK one (mpk.Paths), its patch. File and Format
// are left for the caller.
func (r *Result) ReportAt(p *schedule.Program, loc schedule.Locator) *Report {
	rep := &Report{Verdict: r.Verdict, Stats: r.Stats, Findings: make([]ReportFinding, 0, len(r.Findings))}
	if p != nil {
		rep.Program = p.Name
	}
	var base *schedule.Machine
	if p != nil && len(r.Findings) > 0 && r.Verdict != Invalid {
		base, _ = schedule.NewMachine(p) // nil for an invalid program
	}
	for i := range r.Findings {
		f := &r.Findings[i]
		rf := ReportFinding{Code: f.Code, Message: f.Message, Path: f.Path, Related: f.Related, Fix: f.Fix}
		for _, t := range f.Tasks {
			name := fmt.Sprintf("#%d", t)
			if p != nil && t >= 0 && t < len(p.Tasks) {
				name = p.Tasks[t].Name
			}
			rf.Tasks = append(rf.Tasks, name)
		}
		if f.Path != "" {
			rf.Locations = append(rf.Locations, Location{Path: f.Path, Role: "invalid"})
		}
		if base != nil {
			a := annotator{p: p, loc: loc}
			if f.Witness != nil {
				a.m = base.Clone()
			}
			a.finding(f, &rf)
			if f.Fix != "" {
				rf.Patch = patchAt(p, f, a.st, loc)
			}
		}
		if f.Witness != nil && rf.Witness == nil {
			rf.Witness = bare(f.Witness)
		}
		rf.WitnessLength = len(rf.Witness)
		rep.Findings = append(rep.Findings, rf)
	}
	return rep
}

// bare renders events without annotations (a Result of another program).
func bare(w []schedule.Event) []ReportEvent {
	out := make([]ReportEvent, len(w))
	for i, e := range w {
		out[i] = ReportEvent{Thread: e.Thread, Step: e.Step, Advance: e.IsAdvance()}
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
