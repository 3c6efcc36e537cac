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
	for _, f := range r.Findings {
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
		if len(f.Witness) > 0 {
			fmt.Fprintf(&sb, "      witness: %d events (replay with --json)\n", len(f.Witness))
		}
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
