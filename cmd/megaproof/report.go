package main

import (
	"bufio"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"os"
	"strconv"

	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify"
)

const reportDoc = `Verifies the schedule in FILE (- reads standard input; no FILE: the
embedded default schedule) and writes an HTML report of the verdict: one
self-contained file (inline CSS, script and SVG; it loads nothing from the
network) with the verdict, each finding with its locations and its fix, in
words and as a JSON Patch where the finding has one, a swimlane of the
finding's witness (one lane per thread of the trace, events in trace
order, the events that matter highlighted, each event's operation and sync
object value on hover), a table of the events, and the sync objects the
witness touches with their initial and final values.

The page draws only the witness's threads and a window of its events at a
time, so a report of a schedule with thousands of tasks and a long
witness opens at once; the report's data is one JSON object embedded in
the page (the verify --json report, with each finding's sync objects).

` + exitStatusDoc

//go:embed templates/report.html
var reportTemplateText string

var reportTemplate = template.Must(template.New("report").Parse(reportTemplateText))

// reportData is the JSON object a report page embeds.
type reportData struct {
	Report *verify.Report `json:"report"`
	// Tasks and Workers describe the program (0 when it was not read).
	Tasks   int `json:"tasks"`
	Workers int `json:"workers"`
	// Objects are, per finding, the sync objects its witness touches.
	Objects [][]reportObject `json:"objects"`
}

// reportObject is a sync object a witness touches: its initial value and
// its value after the witness's last event on it.
type reportObject struct {
	Name  string  `json:"name"`
	Init  *uint64 `json:"init,omitempty"`
	Final *uint64 `json:"final,omitempty"`
	// Events is the number of witness events on the object.
	Events int `json:"events"`
}

func runReport(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("report", "[flags] [FILE]", reportDoc, stderr)
	v := &verifier{stdin: stdin, stdout: stdout, stderr: stderr, maxBytes: defaultMaxBytes}
	out := fs.String("o", "-", "write the report to `FILE` (- for standard output)")
	fs.IntVar(&v.cfg.MaxStates, "max-states", verify.DefaultMaxStates, "the explorer's state `budget` on programs with semaphores; beyond it the verdict is inconclusive")
	fs.Var((*byteSize)(&v.maxBytes), "max-bytes", "the input size `limit`, in bytes (suffixes KiB, MiB, GiB)")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		if err.Error() == "flag: help requested" {
			return exitSafe
		}
		return exitInvalid
	}
	if len(files) > 1 {
		fs.Usage()
		return exitInvalid
	}
	if v.cfg.MaxStates < 1 {
		fmt.Fprintln(stderr, "megaproof report: --max-states must be positive")
		return exitInvalid
	}
	file := defaultFile
	if len(files) == 1 {
		file = files[0]
	}
	var p *schedule.Program
	r := v.guard(file, func() *verify.Report {
		if file == defaultFile {
			var err error
			if p, err = defaultProgram(); err != nil {
				rep := verify.InvalidReport(err)
				rep.File = file
				return rep
			}
			rep := v.verifyProgram(file, p, schedule.Paths{})
			rep.Format = formatMegaproof
			return rep
		}
		data, rep := v.read(file, nil)
		if rep != nil {
			return rep
		}
		q, format, err := decode(data, v.cfg)
		if err != nil {
			return v.verifyData(file, data) // the invalid report
		}
		p = q
		rep = v.verifyProgram(file, p, formatPaths(format, p))
		rep.Format = format
		return rep
	})
	data := newReportData(r, p)
	w := stdout
	var f *os.File
	if *out != "-" {
		if f, err = os.Create(*out); err != nil {
			fmt.Fprintf(stderr, "megaproof report: %v\n", err)
			return exitInvalid
		}
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	err = reportTemplate.Execute(bw, data)
	if err == nil {
		err = bw.Flush()
	}
	if f != nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "megaproof report: %v\n", err)
		return exitInvalid
	}
	return reportStatus(r)
}

// newReportData gathers what the page shows: the report, the program's
// size, and each finding's sync objects with their initial values (from
// p) and their values after the witness.
func newReportData(r *verify.Report, p *schedule.Program) *reportData {
	d := &reportData{Report: r, Objects: make([][]reportObject, len(r.Findings))}
	init := map[string]uint64{}
	if p != nil {
		d.Tasks, d.Workers = len(p.Tasks), p.Launch.Workers
		for _, c := range p.Counters {
			init["counter "+c.Name] = c.Init
		}
		for _, b := range p.Barriers {
			init["barrier "+b.Name] = 0
		}
		for _, s := range p.Semaphores {
			init["semaphore "+s.Name] = s.Tokens
		}
	}
	for k, f := range r.Findings {
		index := map[string]int{}
		objs := []reportObject{}
		var evs []verify.ReportEvent // the witness's steps, and those that matter in its advances
		for _, e := range f.Witness {
			evs = append(evs, e)
			evs = append(evs, e.Marks...)
		}
		for _, e := range evs {
			if e.Object == "" {
				continue
			}
			i, ok := index[e.Object]
			if !ok {
				i = len(objs)
				index[e.Object] = i
				o := reportObject{Name: e.Object}
				if v, ok := init[e.Object]; ok {
					o.Init = &v
				}
				objs = append(objs, o)
			}
			objs[i].Events++
			if e.Value != nil {
				v := *e.Value
				objs[i].Final = &v
			}
		}
		d.Objects[k] = objs
	}
	return d
}

// reportTitle is the page title.
func (d *reportData) Title() string {
	name := d.Report.Program
	if name == "" {
		name = d.Report.File
	}
	return "megaproof: " + name + ": " + d.Report.Verdict.String()
}

// Summary is the verdict line the page shows before its script runs.
func (d *reportData) Summary() string {
	n := len(d.Report.Findings)
	switch {
	case d.Report.Verdict == verify.Safe:
		return "safe: " + provedLine
	case n == 1:
		return d.Report.Verdict.String() + ": 1 finding"
	}
	return d.Report.Verdict.String() + ": " + strconv.Itoa(n) + " findings"
}
