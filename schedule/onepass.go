package schedule

import (
	"errors"
	"strings"
)

// withValidate completes a reader's diagnostics with the structural
// problems [Program.Validate] finds in the partly read program, so that a
// document's problems are reported in one pass: a value of the wrong type
// and an unrelated task pinned to a worker the launch does not have come
// together, not one after the fix of the other.
//
// A Validate diagnostic is left out when it may only follow from what the
// reader already reported: when its path and a reported one lie one inside
// the other ($.buffers[0] and $.buffers[0].size), when it is a worker
// check and the launch was reported, a threshold check and a counter was,
// or an arena placement and an arena was.
func withValidate(list []Diagnostic, p *Program) []Diagnostic {
	var se *Error
	if p == nil || !errors.As(p.Validate(), &se) {
		return list
	}
	reported := func(prefix string) bool {
		for _, d := range list {
			if d.Path == "$" || pathWithin(d.Path, prefix) {
				return true
			}
		}
		return false
	}
	n := len(list)
	for _, d := range se.Diagnostics {
		if len(list) >= maxDiagnostics {
			break
		}
		follows := false
		for _, r := range list[:n] {
			if pathWithin(d.Path, r.Path) || pathWithin(r.Path, d.Path) {
				follows = true
				break
			}
		}
		switch {
		case follows:
		case d.Code == CodeWorker && reported("$.launch"):
		case d.Code == CodeThreshold && reported("$.counters"):
		case strings.HasPrefix(d.Path, "$.buffers[") && (strings.HasSuffix(d.Path, ".offset") || strings.HasSuffix(d.Path, ".arena")) && reported("$.arenas"):
		default:
			list = append(list, d)
		}
	}
	return list
}

// pathWithin reports whether JSON path p is within path q: equal to it, or
// a member or element of it ($.a.b and $.a[0] are within $.a; $.ab is not).
func pathWithin(p, q string) bool {
	if !strings.HasPrefix(p, q) {
		return false
	}
	if len(p) == len(q) {
		return true
	}
	c := p[len(q)]
	return c == '.' || c == '['
}
