package main

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// span is where a JSON value lies in a document: bytes [start, end).
// exact is false when the path did not resolve in full and the span is
// its deepest ancestor that did (a missing field's object, say).
type span struct {
	start, end int
	// member is where the value's member name starts when its parent is
	// an object (its opening quote), -1 otherwise.
	member int
	exact  bool
}

// locatePaths finds the value at each JSON path of paths in data, in one
// pass over the bytes. Paths are the readers' own: "$", member steps
// ".name" and index steps "[3]", as in "$.tasks[12].before[0]". A member
// name may itself hold '.', '[' or any other byte: the walk compares whole
// child paths, built the way the readers build them, so such a name is
// still found. A path that does not resolve maps to its deepest ancestor
// that does; a path that is not under "$", or a document that is not JSON
// at its root, maps to nothing. Only subtrees on the way to a wanted path
// are entered, everything else is skipped byte by byte, so the work is
// linear in len(data) and independent of how many paths are asked for
// along one branch.
func locatePaths(data []byte, paths []string) map[string]span {
	wanted := map[string]bool{}
	prefix := map[string]bool{}
	for _, p := range paths {
		if !strings.HasPrefix(p, "$") {
			continue
		}
		wanted[p] = true
		for i := 1; i < len(p); i++ {
			if p[i] == '.' || p[i] == '[' {
				prefix[p[:i]] = true
			}
		}
		prefix[p] = true
	}
	found := map[string]span{}
	if len(wanted) == 0 {
		return found
	}
	l := &locator{data: data, prefix: prefix, found: found}
	i := l.ws(0)
	if len(data) >= 3 && data[0] == 0xef && data[1] == 0xbb && data[2] == 0xbf {
		i = l.ws(3)
	}
	if i < len(data) {
		l.value(i, "$")
	}
	out := map[string]span{}
	for p := range wanted {
		for q := p; ; {
			if s, ok := found[q]; ok {
				s.exact = q == p
				out[p] = s
				break
			}
			k := parentPath(q)
			if k < 0 {
				break
			}
			q = q[:k]
		}
	}
	return out
}

// parentPath returns the length of the longest proper prefix of path that
// ends before a '.' or '[' (the parent, when no member name holds those
// bytes), or -1 for "$".
func parentPath(path string) int {
	for i := len(path) - 1; i > 0; i-- {
		if path[i] == '.' || path[i] == '[' {
			return i
		}
	}
	return -1
}

// locator is one pass of locatePaths.
type locator struct {
	data   []byte
	prefix map[string]bool // paths on the way to a wanted one
	found  map[string]span
}

func (l *locator) ws(i int) int {
	for i < len(l.data) {
		switch l.data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// value records the value starting at i under path when path is on the
// way to a wanted one, descends into it if so, and returns its end.
// Recursion follows wanted paths only, so its depth is bounded by the
// paths asked for, not by the document's nesting.
func (l *locator) value(i int, path string) int {
	if !l.prefix[path] {
		return l.skip(i)
	}
	var end int
	switch l.data[i] {
	case '{':
		end = l.object(i, path)
	case '[':
		end = l.array(i, path)
	default:
		end = l.skip(i)
	}
	l.found[path] = span{start: i, end: end, member: -1}
	return end
}

func (l *locator) object(i int, path string) int {
	i = l.ws(i + 1)
	for i < len(l.data) && l.data[i] != '}' {
		if l.data[i] != '"' {
			return l.skip(i)
		}
		kstart, kend := i, l.skipString(i)
		key := l.key(i, kend)
		i = l.ws(kend)
		if i >= len(l.data) || l.data[i] != ':' {
			return i
		}
		i = l.ws(i + 1)
		if i >= len(l.data) {
			return i
		}
		child := path + "." + key
		i = l.ws(l.value(i, child))
		if s, ok := l.found[child]; ok && s.member < 0 {
			s.member = kstart
			l.found[child] = s
		}
		if i < len(l.data) && l.data[i] == ',' {
			i = l.ws(i + 1)
		}
	}
	return min(i+1, len(l.data))
}

func (l *locator) array(i int, path string) int {
	i = l.ws(i + 1)
	for n := 0; i < len(l.data) && l.data[i] != ']'; n++ {
		i = l.ws(l.value(i, path+"["+strconv.Itoa(n)+"]"))
		if i < len(l.data) && l.data[i] == ',' {
			i = l.ws(i + 1)
		} else if i < len(l.data) && l.data[i] != ']' {
			return i
		}
	}
	return min(i+1, len(l.data))
}

// key decodes the JSON string data[i:end) (quotes included).
func (l *locator) key(i, end int) string {
	raw := l.data[i:end]
	if len(raw) >= 2 && !strings.ContainsRune(string(raw[1:len(raw)-1]), '\\') {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return string(raw)
	}
	return s
}

// skipString returns the end of the string starting at i (its quote).
func (l *locator) skipString(i int) int {
	for j := i + 1; j < len(l.data); j++ {
		switch l.data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(l.data)
}

// skip returns the end of the value starting at i, without looking inside
// it beyond bracket depth and strings.
func (l *locator) skip(i int) int {
	switch l.data[i] {
	case '"':
		return l.skipString(i)
	case '{', '[':
		depth := 0
		for j := i; j < len(l.data); j++ {
			switch l.data[j] {
			case '"':
				j = l.skipString(j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(l.data)
	}
	j := i
	for j < len(l.data) {
		switch l.data[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return max(j, i+1)
		}
		j++
	}
	return j
}

// position is a 1-based line and column (in Unicode code points) of a
// byte offset.
type position struct{ line, col int }

// positions maps each byte offset of offs into data to its line and
// column, in one pass over data up to the largest offset. An offset inside
// a multi-byte character counts from that character.
func positions(data []byte, offs []int) map[int]position {
	sorted := append([]int(nil), offs...)
	sort.Ints(sorted)
	out := make(map[int]position, len(sorted))
	line, col, i := 1, 1, 0
	for _, off := range sorted {
		for ; i < off && i < len(data); i++ {
			switch b := data[i]; {
			case b == '\n':
				line, col = line+1, 1
			case !utf8.RuneStart(data[i]) && i > 0:
			default:
				col++
			}
		}
		out[off] = position{line, col}
	}
	return out
}
