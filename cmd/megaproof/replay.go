package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/schedule/mpk"
	"github.com/megaproof/megaproof/verify"
)

const replayDoc = `Verifies FILE (as verify does; - reads standard input) and replays the
witness of one finding step by step: each event with its thread, task,
operation, the value of the sync object it touches right after it, and its
JSON path in FILE; events that matter are marked *. Then it says where
each unfinished thread stands and whether schedule.CheckWitness confirms
the witness.

A compact witness holds threads before given steps and advances: an
advance runs every thread greedily until none can move (see
docs/SEMANTICS.md, "Compact witnesses"). Replay prints it with the steps
that matter among those it runs, and where the threads stand after it;
--expand prints every step it runs instead.

--finding N picks the N-th finding of verify's report (from 1); the
default is the first finding with a witness. --json prints one JSON object
(the finding as verify --json reports it, its index, and the judgement).

Exit status: 0 the witness is confirmed (a static finding, which has none,
is confirmed by its code alone), 1 it is not (a bug to report), 2 invalid
input or usage (no such finding, a safe program: nothing to replay), 3 the
finding is inconclusive.`

// replayReport is the JSON object replay --json prints.
type replayReport struct {
	File   string `json:"file"`
	Format string `json:"format,omitempty"`
	// Index is the finding's place in verify's report, from 1.
	Index   int                  `json:"index"`
	Finding verify.ReportFinding `json:"finding"`
	// Confirmed says whether schedule.CheckWitness accepts the witness;
	// Error is why not.
	Confirmed bool   `json:"confirmed"`
	Error     string `json:"error,omitempty"`
	// Expanded is, with --expand, the witness with its holds and
	// advances replaced by the steps they stand for, annotated.
	Expanded []verify.ReportEvent `json:"expanded,omitempty"`
}

func runReplay(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("replay", "[flags] FILE", replayDoc, stderr)
	v := &verifier{stdin: stdin, stdout: stdout, stderr: stderr, maxBytes: defaultMaxBytes}
	n := fs.Int("finding", 0, "replay the `N`-th finding (from 1; default: the first with a witness)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	expand := fs.Bool("expand", false, "print the steps each advance of the witness runs, one by one")
	fs.IntVar(&v.cfg.MaxStates, "max-states", verify.DefaultMaxStates, "the explorer's state `budget`, as for verify")
	fs.Var((*byteSize)(&v.maxBytes), "max-bytes", "the input size `limit`, in bytes (suffixes KiB, MiB, GiB)")
	fs.IntVar(&mpkIterations, "iterations", mpk.DefaultIterations, "consecutive iterations of an MPK task graph, as for verify")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return exitInvalid
	}
	if mpkIterations < 1 || mpkIterations > mpk.MaxIterations {
		fmt.Fprintf(stderr, "megaproof replay: --iterations must be between 1 and %d\n", mpk.MaxIterations)
		return exitInvalid
	}
	if len(files) != 1 || *n < 0 {
		fs.Usage()
		return exitInvalid
	}
	file := files[0]
	data, bad := v.read(file, nil)
	if bad != nil {
		return v.replayFailed(bad)
	}
	p, format, err := decode(data, v.cfg)
	if err != nil {
		r := verify.InvalidReport(err)
		r.File = file
		return v.replayFailed(r)
	}
	res, err := runProgram(context.Background(), p, v.cfg)
	if err != nil {
		fmt.Fprintf(stderr, "megaproof replay: %s: the verifier stopped: %v\n", clean(file), err)
		return exitInconclusive
	}
	rep := res.ReportAt(p, formatPaths(format, p))
	rep.File, rep.Format = file, format
	if rep.Verdict == verify.Safe {
		fmt.Fprintf(stderr, "megaproof replay: %s: safe: no finding to replay\n", clean(file))
		return exitInvalid
	}
	i := *n - 1
	if *n == 0 {
		i = 0
		for k, f := range rep.Findings {
			if f.HasWitness() {
				i = k
				break
			}
		}
	}
	if i >= len(rep.Findings) {
		fmt.Fprintf(stderr, "megaproof replay: %s has %d findings, not %d\n", clean(file), len(rep.Findings), *n)
		return exitInvalid
	}
	f := rep.Findings[i]
	out := replayReport{File: file, Format: format, Index: i + 1, Finding: f}
	status := exitSafe
	if f.Code == verify.CodeInconclusive {
		out.Error = "an inconclusive finding has no witness"
		status = exitInconclusive
	} else if err := schedule.CheckWitness(p, f.Code, res.Findings[i].Tasks, f.Events()); err != nil {
		out.Error = err.Error()
		status = exitUnsafe
	} else {
		out.Confirmed = true
	}
	var st *schedule.State
	if f.HasWitness() {
		st, _ = schedule.Replay(p, f.Events())
	}
	if *expand && st != nil && schedule.Expands(f.Events()) {
		// The expanded trace, annotated as a witness of ordinary steps.
		x := *res
		x.Findings = slices.Clone(res.Findings)
		x.Findings[i].Witness = st.Trace()
		out.Expanded = x.ReportAt(p, formatPaths(format, p)).Findings[i].Witness
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(out); err != nil {
			fmt.Fprintf(stderr, "megaproof: %v\n", err)
			return exitInternal
		}
		return status
	}
	writeReplay(stdout, p, st, &out)
	return status
}

// replayFailed prints the report of a document that cannot be replayed
// (unreadable or invalid) as verify would, and returns its status.
func (v *verifier) replayFailed(r *verify.Report) int {
	writeText(v.stderr, r, false)
	return exitInvalid
}

// writeReplay prints a replay for people: the finding, every event of its
// witness, where unfinished threads stand, and the judgement.
func writeReplay(w io.Writer, p *schedule.Program, st *schedule.State, r *replayReport) {
	var sb strings.Builder
	f := &r.Finding
	fmt.Fprintf(&sb, "%s: finding %d: %s: %s\n", clean(r.File), r.Index, clean(f.Code), clean(f.Message))
	writeLocations(&sb, f.Locations)
	switch {
	case !f.HasWitness():
		fmt.Fprintf(&sb, "  no witness: the finding is static (it needs no execution)\n")
	case len(f.Witness) == 0:
		fmt.Fprintf(&sb, "  witness: the empty trace: the initial state is already stuck\n")
	default:
		fmt.Fprintf(&sb, "  witness: %s (* marks the ones that matter):\n", plural(len(f.Witness), "event"))
		for i, e := range f.Witness {
			line := eventLine(i, e)
			if e.Path != "" {
				line += "   " + clean(e.Path)
			}
			fmt.Fprintf(&sb, "    %s\n", line)
			if e.Advance && r.Expanded == nil {
				for _, m := range e.Marks {
					line := markLine(m)
					if m.Path != "" {
						line += "   " + clean(m.Path)
					}
					fmt.Fprintf(&sb, "           %s\n", line)
				}
			}
		}
	}
	if r.Expanded != nil {
		fmt.Fprintf(&sb, "  expanded: %d steps (* marks the ones that matter):\n", len(r.Expanded))
		for i, e := range r.Expanded {
			line := eventLine(i, e)
			if e.Path != "" {
				line += "   " + clean(e.Path)
			}
			fmt.Fprintf(&sb, "    %s\n", line)
		}
	}
	if st != nil {
		writeStanding(&sb, p, st, f)
	}
	if r.Confirmed {
		fmt.Fprintf(&sb, "confirmed: schedule.CheckWitness accepts the witness of %s\n", clean(f.Code))
	} else {
		fmt.Fprintf(&sb, "not confirmed: %s\n", clean(r.Error))
	}
	io.WriteString(w, sb.String())
}

// writeStanding prints where the unfinished threads stand after the
// witness: all of them for a finding that ends stuck, those the witness
// moves otherwise; at most 16.
func writeStanding(sb *strings.Builder, p *schedule.Program, st *schedule.State, f *verify.ReportFinding) {
	form := st.Form()
	fam := verify.Family(f.Code)
	stuck := fam == "deadlock" || fam == verify.CodeOccupancy
	moved := map[int]bool{}
	for _, e := range f.Witness {
		for _, sp := range e.Spans {
			moved[int(sp.Thread)] = true
		}
		if !e.Advance {
			moved[int(e.Event().Thread)] = true
		}
	}
	// The threads of the steps that matter first.
	key := map[int]bool{}
	for _, e := range f.Witness {
		if e.Marked && !e.Advance {
			key[int(e.Event().Thread)] = true
		}
		for _, m := range e.Marks {
			key[int(m.Thread)] = true
		}
	}
	order := make([]int, 0, len(form.Threads))
	for th := range form.Threads {
		if key[th] {
			order = append(order, th)
		}
	}
	for th := range form.Threads {
		if !key[th] {
			order = append(order, th)
		}
	}
	var lines []string
	for _, th := range order {
		if st.Finished(th) || (!stuck && !moved[th]) || (stuck && th >= form.Workers && st.Pos[th] == 0 && st.Enabled(th) == nil) {
			continue
		}
		op := form.Threads[th].Ops[st.Pos[th]]
		var line string
		if op.Kind == schedule.OpEnd {
			line = fmt.Sprintf("%s in the body of task %q", form.ThreadName(p, th), p.Tasks[op.Task].Name)
		} else {
			line = fmt.Sprintf("%s at %s", form.ThreadName(p, th), p.Describe(op))
		}
		if err := st.Enabled(th); err != nil {
			line += ": blocked"
			if _, why, ok := strings.Cut(err.Error(), ": "); ok {
				line += " (" + why + ")"
			}
		}
		lines = append(lines, clean(line))
	}
	if len(lines) == 0 {
		return
	}
	what := "stand"
	if stuck {
		what = "are unfinished"
	}
	fmt.Fprintf(sb, "  then %d threads %s:\n", len(lines), what)
	const most = 16
	for k, l := range lines {
		if k == most {
			fmt.Fprintf(sb, "    ... and %d more\n", len(lines)-most)
			break
		}
		fmt.Fprintf(sb, "    %s\n", l)
	}
}
