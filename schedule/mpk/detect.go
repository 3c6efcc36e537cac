package mpk

import "github.com/megaproof/megaproof/internal/jsontree"

// Detect reports whether data looks like an MPK task-graph file rather
// than megaproof's or AutoMegaKernel's JSON: a top-level object with MPK's
// two mandatory keys, "all_events" and "all_tasks". It reads top-level keys
// only, skipping their values without parsing them, and stops at the first
// key of another format ("format", "launch", "ir_version", "abi_version",
// "tasks", "buffers", "counters"). A document that ends or breaks before
// its object does is taken as MPK once one of the two keys was seen, so
// that [Unmarshal] reports the problem. Detect validates nothing and never
// panics.
func Detect(data []byte) bool {
	s := &direct{d: data}
	if !s.lit('{') {
		return false
	}
	var events, tasks bool
	for {
		key, ok := s.str()
		if !ok && s.i < len(s.d) && s.d[s.i] >= 0x20 && s.d[s.i] != '"' {
			// An escape or a non-ASCII byte in a key: decode the keys.
			return detectKeys(data)
		}
		if !ok || !s.lit(':') {
			return events || tasks
		}
		if topKey(key, &events, &tasks) {
			return false
		}
		if events && tasks {
			return true
		}
		if !s.skip() {
			return events || tasks
		}
		if !s.lit(',') {
			return false
		}
	}
}

// topKey records a top-level key: MPK's "all_events" or "all_tasks" in
// events or tasks; it reports whether the key belongs to another format.
func topKey(key []byte, events, tasks *bool) (foreign bool) {
	switch string(key) {
	case "all_events":
		*events = true
	case "all_tasks":
		*tasks = true
	case "format", "launch", "ir_version", "abi_version", "tasks", "buffers", "counters":
		return true
	}
	return false
}

// detectKeys decides as Detect does, with every key decoded (an escape
// such as \u0061ll_tasks is all_tasks): Detect's way when a key has an
// escape or a non-ASCII byte.
func detectKeys(data []byte) bool {
	s := jsontree.NewScanner(data, 0, maxDepth)
	var events, tasks bool
	if s.Peek() != 'o' {
		return false
	}
	s.Object()
	for {
		key, ok := s.Key()
		if !ok {
			key = s.Member() // a key followed by a syntax error still decides
		}
		if topKey(key, &events, &tasks) {
			return false
		}
		if events && tasks {
			return true
		}
		if !ok {
			return events || tasks
		}
		s.Skip()
		if s.Err() != nil {
			return events || tasks
		}
	}
}

// skip passes over one JSON value without checking it: a string, or up
// to the bracket that closes the one it starts with, or a literal.
func (s *direct) skip() bool {
	s.ws()
	depth := 0
	for s.i < len(s.d) {
		switch c := s.d[s.i]; c {
		case '"':
			s.i++
			for s.i < len(s.d) && s.d[s.i] != '"' {
				if s.d[s.i] == '\\' {
					s.i++
				}
				s.i++
			}
			if s.i >= len(s.d) {
				return false
			}
			s.i++
			if depth == 0 {
				return true
			}
		case '{', '[':
			depth++
			s.i++
		case '}', ']':
			if depth == 0 {
				return true // the end of an empty value: let the caller fail
			}
			depth--
			s.i++
			if depth == 0 {
				return true
			}
		case ',':
			if depth == 0 {
				return true
			}
			s.i++
		default:
			s.i++
		}
	}
	return false
}
