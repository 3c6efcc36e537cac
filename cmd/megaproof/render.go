package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/megaproof/megaproof/verify"
)

// provedLine is what a safe verdict says was proved.
const provedLine = "no deadlock, race, uninitialized read or out-of-bounds access is possible"

// clean makes text from an input document safe to print on one line of a
// terminal: every rune that is not printable (newlines, other control
// characters, bidi and other format controls) and every invalid byte is
// replaced by its Go escape (\n, \u202e, \xff). Printable text, quotes
// and backslashes included, is kept as it is.
func clean(s string) string {
	ok := true
	for _, r := range s {
		if r == utf8.RuneError || !strconv.IsPrint(r) || unicode.Is(unicode.Bidi_Control, r) {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&sb, `\x%02x`, s[i])
		case strconv.IsPrint(r) && !unicode.Is(unicode.Bidi_Control, r):
			sb.WriteString(s[i : i+size])
		default:
			q := strconv.QuoteRuneToASCII(r)
			sb.WriteString(q[1 : len(q)-1])
		}
		i += size
	}
	return sb.String()
}

// quoteName renders a name from an input document Go-quoted ("up.0"), so
// that no name can break a line or pose as another part of the output.
func quoteName(s string) string { return strconv.Quote(s) }

// writeJSON writes a report as one line of JSON, without escaping <, > and
// & (messages quote thresholds such as "ready >= 2").
func writeJSON(w io.Writer, r *verify.Report) error {
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return err
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// writeText renders a report for people: a verdict line, then one line per
// finding with its details indented beneath; with verbose, what the
// analysis covered. Names are quoted and every other text from the input
// is cleaned, so each printed line is one line of the report. It writes
// the report with one Write.
func writeText(w io.Writer, r *verify.Report, verbose bool) error {
	var sb strings.Builder
	head := clean(r.File)
	if r.Program != "" && r.Program != r.File {
		head += " (program " + quoteName(r.Program) + ")"
	}
	n := len(r.Findings)
	switch {
	case r.Verdict == verify.Safe:
		fmt.Fprintf(&sb, "%s: safe: %s\n", head, provedLine)
	case n == 1:
		fmt.Fprintf(&sb, "%s: %s: 1 finding\n", head, r.Verdict)
	default:
		fmt.Fprintf(&sb, "%s: %s: %d findings\n", head, r.Verdict, n)
	}
	for i, f := range r.Findings {
		loc := ""
		if f.Path != "" {
			loc = " at " + clean(f.Path)
		}
		fmt.Fprintf(&sb, "  %s%s: %s\n", clean(f.Code), loc, clean(f.Message))
		if len(f.Tasks) > 0 {
			names := make([]string, len(f.Tasks))
			for i, t := range f.Tasks {
				names[i] = quoteName(t)
			}
			fmt.Fprintf(&sb, "      tasks: %s\n", strings.Join(names, ", "))
		}
		for _, rel := range f.Related {
			fmt.Fprintf(&sb, "      %s\n", clean(rel))
		}
		if f.Fix != "" {
			fmt.Fprintf(&sb, "      fix: %s\n", clean(f.Fix))
		}
		writeLocations(&sb, f.Locations)
		writeWitness(&sb, r.File, i, &f)
	}
	if verbose && r.Stats.Tasks > 0 {
		s := r.Stats
		fmt.Fprintf(&sb, "  analysed %d tasks as %d threads (one per static worker, one per dynamic task): %d steps, %d accesses, %d conflicting pairs ordered", s.Tasks, s.Threads, s.Steps, s.Accesses, s.Pairs)
		if s.States > 0 {
			fmt.Fprintf(&sb, ", %d states explored", s.States)
		}
		if s.Games > 0 {
			fmt.Fprintf(&sb, ", %d taint games", s.Games)
		}
		fmt.Fprintf(&sb, "; engine %s\n", clean(s.Engine))
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// writeLocations prints where in the document a finding is, on one line:
// each path with its role and task.
func writeLocations(sb *strings.Builder, locs []verify.Location) {
	var parts []string
	for _, l := range locs {
		if l.Role == "invalid" {
			continue // the finding's own line has the path
		}
		part := clean(l.Path)
		switch {
		case l.Role != "" && l.Task != "":
			part += " (" + clean(l.Role) + " " + quoteName(l.Task) + ")"
		case l.Role != "":
			part += " (" + clean(l.Role) + ")"
		}
		parts = append(parts, part)
	}
	if len(parts) > 0 {
		fmt.Fprintf(sb, "      at: %s\n", strings.Join(parts, ", "))
	}
}

// shortTrace is the longest witness the text output prints whole; a
// longer one is shown as its marked events with witnessContext events
// before each.
const (
	shortTrace     = 12
	witnessContext = 1
)

// writeWitness prints finding n's witness: every event when it is short,
// otherwise the marked ones with a little context, and how to see all.
func writeWitness(sb *strings.Builder, file string, n int, f *verify.ReportFinding) {
	if !f.HasWitness() {
		return
	}
	if len(f.Witness) == 0 {
		fmt.Fprintf(sb, "      witness: the initial state, no event (stuck from the start)\n")
		return
	}
	show := make([]bool, len(f.Witness))
	short := len(f.Witness) <= shortTrace
	for i, e := range f.Witness {
		if short || e.Marked {
			for j := max(0, i-witnessContext); j <= i; j++ {
				show[j] = true
			}
		}
	}
	how := ""
	if !short {
		how = fmt.Sprintf(", marked ones shown; all with megaproof replay %s --finding %d", replayArg(file), n+1)
	}
	fmt.Fprintf(sb, "      witness: %s (* marks the ones that matter%s):\n", plural(len(f.Witness), "event"), how)
	gap := false
	for i, e := range f.Witness {
		if !show[i] {
			gap = true
			continue
		}
		if gap {
			fmt.Fprintf(sb, "          ...\n")
			gap = false
		}
		fmt.Fprintf(sb, "        %s\n", eventLine(i, e))
		writeMarks(sb, "        ", e)
	}
	if gap {
		fmt.Fprintf(sb, "          ...\n")
	}
}

// writeMarks prints, under an advance, the steps that matter among those
// it runs, at most 16.
func writeMarks(sb *strings.Builder, indent string, e verify.ReportEvent) {
	const most = 16
	for k, m := range e.Marks {
		if k == most {
			fmt.Fprintf(sb, "%s       ... and %d more\n", indent, len(e.Marks)-most)
			break
		}
		fmt.Fprintf(sb, "%s       %s\n", indent, markLine(m))
	}
}

// markLine renders a step an advance runs: thread, task, the step's
// place in its thread, operation, and the object's value after it.
func markLine(e verify.ReportEvent) string {
	return "↳ " + eventText(e, fmt.Sprintf(" step %d", e.Step))
}

// eventLine renders one event: mark, number (from 1), thread, task,
// operation, and the object's value after it. An advance is its
// operation alone.
func eventLine(i int, e verify.ReportEvent) string {
	mark := " "
	if e.Marked {
		mark = "*"
	}
	if e.Advance {
		return fmt.Sprintf("%s %3d  %s", mark, i+1, firstNonEmpty(clean(e.Op), "advance"))
	}
	return fmt.Sprintf("%s %3d  %s", mark, i+1, eventText(e, ""))
}

// eventText renders an event's thread, task (then at), operation and
// value.
func eventText(e verify.ReportEvent, at string) string {
	who := clean(e.ThreadName)
	if who == "" {
		who = fmt.Sprintf("thread %d", e.Thread)
	}
	line := who
	if e.Task != "" && !strings.HasPrefix(e.ThreadName, "task ") {
		line += " " + quoteName(e.Task)
	}
	op := clean(e.Op)
	if op == "" {
		op = fmt.Sprintf("step %d", e.Step)
	}
	line += at + ": " + op
	if e.Value != nil {
		line += fmt.Sprintf(" → %s = %d", clean(e.Object), *e.Value)
	}
	return line
}

// replayArg is the file argument a replay command line names.
func replayArg(file string) string {
	if file == "" || file == defaultFile {
		return "-"
	}
	return clean(file)
}

// plural renders a count of things: "1 event", "3 events".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}
