package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/megaproof/megaproof/examples/llama/llamagen"
	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/schedule/amk"
	"github.com/megaproof/megaproof/schedule/mpk"
	"github.com/megaproof/megaproof/verify"
)

// defaultFile is the name reports give the embedded default schedule.
const defaultFile = "(default)"

// Input formats a report names.
const (
	formatMegaproof = schedule.Format
	formatAMK       = "amk"
	formatMPK       = "mpk"
)

// mpkIterations is the number of iterations an MPK task graph is unrolled
// for (verify -iterations).
var mpkIterations = mpk.DefaultIterations

// report is the JSON object verify --json prints per file; its schema is
// schema/result.schema.json.
type report struct {
	File     string          `json:"file"`
	Format   string          `json:"format,omitempty"`
	Program  string          `json:"program,omitempty"`
	Verdict  verify.Verdict  `json:"verdict"`
	Findings []reportFinding `json:"findings"`
	Stats    verify.Stats    `json:"stats"`
}

// reportFinding is verify.Finding with task names instead of indices.
type reportFinding struct {
	Code          string           `json:"code"`
	Message       string           `json:"message"`
	Path          string           `json:"path,omitempty"`
	Tasks         []string         `json:"tasks,omitempty"`
	Related       []string         `json:"related,omitempty"`
	Fix           string           `json:"fix,omitempty"`
	Witness       []schedule.Event `json:"witness,omitempty"`
	WitnessLength int              `json:"witness_length,omitempty"`
}

func runVerify(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	jsonOut := fs.Bool("json", false, "print one JSON object per file")
	fs.IntVar(&mpkIterations, "iterations", mpk.DefaultIterations, "consecutive iterations of an MPK task graph to verify")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: megaproof verify [--json] [FILE...]")
		fs.PrintDefaults()
	}
	files, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitSafe
		}
		return exitInvalid
	}
	var reports []*report
	status := exitSafe
	if len(files) == 0 {
		reports = append(reports, verifyDefault())
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintf(stderr, "megaproof: %v\n", err)
			status = worse(status, exitInvalid)
			continue
		}
		reports = append(reports, verifyData(f, data))
	}
	for _, r := range reports {
		status = worse(status, exitStatus(r.Verdict))
		if *jsonOut {
			if err := writeJSON(stdout, r); err != nil {
				fmt.Fprintf(stderr, "megaproof: %v\n", err)
				return exitInvalid
			}
		} else {
			writeText(stdout, r)
		}
	}
	return status
}

// parseInterspersed parses flags that may appear before, between or after
// file arguments and returns the files.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return files, nil
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// exitStatus maps a verdict to its exit status.
func exitStatus(v verify.Verdict) int {
	switch v {
	case verify.Safe:
		return exitSafe
	case verify.Unsafe:
		return exitUnsafe
	case verify.Inconclusive:
		return exitInconclusive
	}
	return exitInvalid
}

// worse combines exit statuses: unsafe beats invalid, which beats
// inconclusive, which beats safe.
func worse(a, b int) int {
	rank := func(s int) int {
		switch s {
		case exitUnsafe:
			return 3
		case exitInvalid:
			return 2
		case exitInconclusive:
			return 1
		}
		return 0
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// decode reads a program in either input format, detected from content.
func decode(data []byte) (*schedule.Program, string, error) {
	if mpk.Detect(data) {
		p, err := mpk.Options{Iterations: mpkIterations}.Unmarshal(data)
		return p, formatMPK, err
	}
	if amk.Detect(data) {
		p, err := amk.Unmarshal(data)
		return p, formatAMK, err
	}
	p, err := schedule.Unmarshal(data)
	return p, formatMegaproof, err
}

// verifyData decodes and verifies one file's contents.
func verifyData(file string, data []byte) *report {
	p, format, err := decode(data)
	if err != nil {
		r := invalidReport(file, err)
		if c := r.Findings[0].Code; c != schedule.CodeSyntax && c != schedule.CodeFormat {
			r.Format = format // recognized, though malformed
		}
		return r
	}
	r := verifyProgram(file, p)
	r.Format = format
	return r
}

// verifyDefault verifies the embedded default schedule.
func verifyDefault() *report {
	p, err := defaultProgram()
	if err != nil {
		return invalidReport(defaultFile, err)
	}
	r := verifyProgram(defaultFile, p)
	r.Format = formatMegaproof
	return r
}

// defaultProgram is the schedule verify checks when given no file: the
// Llama-3.2-1B decode step on an H200 from package llamagen.
func defaultProgram() (*schedule.Program, error) {
	return llamagen.Default()
}

// verifyProgram runs the verifier on a decoded program. A verifier error
// (it has no bound to report) makes the report inconclusive, never safe.
func verifyProgram(file string, p *schedule.Program) *report {
	res, err := verify.Run(context.Background(), p, verify.Config{})
	if err != nil {
		return &report{
			File: file, Program: p.Name, Verdict: verify.Inconclusive,
			Findings: []reportFinding{{Code: verify.CodeInconclusive, Message: "the verifier stopped: " + err.Error()}},
		}
	}
	return newReport(file, p, res)
}

// newReport renders a result, naming tasks instead of numbering them.
func newReport(file string, p *schedule.Program, res *verify.Result) *report {
	r := &report{File: file, Program: p.Name, Verdict: res.Verdict, Stats: res.Stats, Findings: []reportFinding{}}
	for _, f := range res.Findings {
		rf := reportFinding{Code: f.Code, Message: f.Message, Path: f.Path, Related: f.Related, Fix: f.Fix, Witness: f.Witness, WitnessLength: len(f.Witness)}
		for _, t := range f.Tasks {
			name := fmt.Sprintf("#%d", t)
			if t >= 0 && t < len(p.Tasks) {
				name = p.Tasks[t].Name
			}
			rf.Tasks = append(rf.Tasks, name)
		}
		r.Findings = append(r.Findings, rf)
	}
	return r
}

// invalidReport turns a decoding error into an invalid verdict with one
// finding per diagnostic.
func invalidReport(file string, err error) *report {
	r := &report{File: file, Verdict: verify.Invalid, Findings: []reportFinding{}}
	var se *schedule.Error
	if errors.As(err, &se) {
		for _, d := range se.Diagnostics {
			r.Findings = append(r.Findings, reportFinding{Code: d.Code, Message: d.Message, Path: d.Path})
		}
	}
	if len(r.Findings) == 0 {
		r.Findings = append(r.Findings, reportFinding{Code: schedule.CodeSyntax, Message: err.Error(), Path: "$"})
	}
	return r
}

// writeJSON writes a report as one line of JSON, without escaping <, > and
// & (messages quote thresholds such as "ready >= 2").
func writeJSON(w io.Writer, r *report) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// writeText renders a report for people: a verdict line, then one line per
// finding with its details indented beneath.
func writeText(w io.Writer, r *report) {
	head := r.File
	if r.Program != "" && r.Program != r.File {
		head += " (" + r.Program + ")"
	}
	switch r.Verdict {
	case verify.Safe:
		s := r.Stats
		fmt.Fprintf(w, "%s: safe: %d tasks, %d threads, %d steps, %d accesses, %d conflicting pairs ordered", head, s.Tasks, s.Threads, s.Steps, s.Accesses, s.Pairs)
		if s.Engine != "" {
			fmt.Fprintf(w, " [%s]", s.Engine)
		}
		fmt.Fprintln(w)
		return
	default:
		n := len(r.Findings)
		plural := "s"
		if n == 1 {
			plural = ""
		}
		fmt.Fprintf(w, "%s: %s: %d finding%s\n", head, r.Verdict, n, plural)
	}
	for _, f := range r.Findings {
		loc := ""
		if f.Path != "" {
			loc = " at " + f.Path
		}
		fmt.Fprintf(w, "  %s%s: %s\n", f.Code, loc, f.Message)
		if len(f.Tasks) > 0 {
			fmt.Fprintf(w, "      tasks: %s\n", strings.Join(f.Tasks, ", "))
		}
		for _, rel := range f.Related {
			fmt.Fprintf(w, "      %s\n", rel)
		}
		if f.Fix != "" {
			fmt.Fprintf(w, "      fix: %s\n", f.Fix)
		}
		if len(f.Witness) > 0 {
			fmt.Fprintf(w, "      witness: %d events (replay with --json)\n", len(f.Witness))
		}
	}
}
