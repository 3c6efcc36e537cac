// Package jsontree parses one JSON document into a tree that keeps object
// keys in document order, for the strict readers of the schedule formats:
// they report unknown fields, wrong types and missing keys with the JSON
// path of each, which encoding/json's struct decoding cannot.
//
// Parse rejects duplicate keys (a file that means two different things to
// two readers) and nesting beyond a bound (so hostile input cannot exhaust
// the stack). A document json.Valid accepts is read directly, several times
// faster than through json.Decoder's tokens; any other goes through the
// tokens, which locate the syntax error. Both ways give the same tree or
// the same error (FuzzParse).
package jsontree

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"
)

// Node is one parsed JSON value.
type Node struct {
	Kind byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	Keys []string
	Vals []*Node
	Str  string // string value, or a number's literal text
	B    bool
}

// KindNames names each Kind for messages: "an object", "a number", ...
var KindNames = map[byte]string{'o': "an object", 'a': "an array", 's': "a string", 'n': "a number", 'b': "a boolean", 'z': "null"}

// IsInteger reports whether a number's literal text is written as an
// integer (an optional minus and digits only), whatever its size.
func IsInteger(lit string) bool {
	if lit != "" && lit[0] == '-' {
		lit = lit[1:]
	}
	if lit == "" {
		return false
	}
	for _, c := range lit {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Error is why a document is not one JSON value the readers accept.
type Error struct {
	Duplicate bool   // a key appears twice in an object (else: a syntax error)
	Path      string // where, as a JSON path ($.tasks[3].name)
	Message   string
}

// Parse reads exactly one JSON value nested at most maxDepth deep.
func Parse(data []byte, maxDepth int) (*Node, *Error) {
	if json.Valid(data) {
		return parseFast(data, maxDepth)
	}
	return parseTokens(data, maxDepth)
}

// path is one step of a JSON path, built as a chain so that the path
// string is formatted only for an error.
type path struct {
	parent *path
	key    string
	index  int // for an array element; key is "" then
	elem   bool
}

func (p *path) String() string {
	if p == nil {
		return "$"
	}
	if p.elem {
		return fmt.Sprintf("%s[%d]", p.parent, p.index)
	}
	return p.parent.String() + "." + p.key
}

func tooDeep(at *path, maxDepth int) *Error {
	return &Error{Path: at.String(), Message: fmt.Sprintf("nesting deeper than %d", maxDepth)}
}

func duplicate(at *path, key string) *Error {
	return &Error{Duplicate: true, Path: at.String(), Message: fmt.Sprintf("key %q appears twice", key)}
}

// keySet finds duplicate keys of an object: by a scan while the object is
// small, by a set beyond.
type keySet struct{ seen map[string]bool }

func (s *keySet) add(keys []string, key string) (dup bool) {
	if s.seen != nil {
		dup = s.seen[key]
		s.seen[key] = true
		return dup
	}
	for _, k := range keys {
		dup = dup || k == key
	}
	if len(keys) == 16 {
		s.seen = make(map[string]bool, 32)
		for _, k := range keys {
			s.seen[k] = true
		}
		s.seen[key] = true
	}
	return dup
}

// scanner reads a document json.Valid accepted.
type scanner struct {
	data     []byte
	pos      int
	maxDepth int
}

func parseFast(data []byte, maxDepth int) (*Node, *Error) {
	s := &scanner{data: data, maxDepth: maxDepth}
	return s.value(nil, 0)
}

func (s *scanner) ws() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

func (s *scanner) value(at *path, depth int) (*Node, *Error) {
	if depth > s.maxDepth {
		return nil, tooDeep(at, s.maxDepth)
	}
	s.ws()
	switch c := s.data[s.pos]; c {
	case '{':
		s.pos++
		n := &Node{Kind: 'o'}
		var keys keySet
		s.ws()
		if s.data[s.pos] == '}' {
			s.pos++
			return n, nil
		}
		for {
			s.ws()
			key := s.string()
			kp := &path{parent: at, key: key}
			if keys.add(n.Keys, key) {
				return nil, duplicate(kp, key)
			}
			s.ws()
			s.pos++ // ':'
			v, err := s.value(kp, depth+1)
			if err != nil {
				return nil, err
			}
			n.Keys = append(n.Keys, key)
			n.Vals = append(n.Vals, v)
			s.ws()
			c := s.data[s.pos]
			s.pos++
			if c == '}' {
				return n, nil
			}
		}
	case '[':
		s.pos++
		n := &Node{Kind: 'a'}
		s.ws()
		if s.data[s.pos] == ']' {
			s.pos++
			return n, nil
		}
		for i := 0; ; i++ {
			v, err := s.value(&path{parent: at, index: i, elem: true}, depth+1)
			if err != nil {
				return nil, err
			}
			n.Vals = append(n.Vals, v)
			s.ws()
			c := s.data[s.pos]
			s.pos++
			if c == ']' {
				return n, nil
			}
		}
	case '"':
		return &Node{Kind: 's', Str: s.string()}, nil
	case 't':
		s.pos += 4
		return &Node{Kind: 'b', B: true}, nil
	case 'f':
		s.pos += 5
		return &Node{Kind: 'b'}, nil
	case 'n':
		s.pos += 4
		return &Node{Kind: 'z'}, nil
	default:
		start := s.pos
		for s.pos < len(s.data) {
			switch s.data[s.pos] {
			case ',', ']', '}', ' ', '\t', '\n', '\r':
				return &Node{Kind: 'n', Str: string(s.data[start:s.pos])}, nil
			}
			s.pos++
		}
		return &Node{Kind: 'n', Str: string(s.data[start:s.pos])}, nil
	}
}

// string reads a string token at s.pos. Strings without escapes and with
// valid UTF-8 are taken as they are; others go through encoding/json so
// escapes and invalid bytes decode exactly as json.Decoder decodes them.
func (s *scanner) string() string {
	start := s.pos
	s.pos++
	plain := true
	for {
		c := s.data[s.pos]
		if c == '"' {
			break
		}
		if c == '\\' {
			plain = false
			s.pos++
		} else if c >= utf8.RuneSelf {
			plain = false
		}
		s.pos++
	}
	s.pos++
	raw := s.data[start:s.pos]
	if plain {
		return string(raw[1 : len(raw)-1])
	}
	var out string
	if err := json.Unmarshal(raw, &out); err != nil {
		return string(raw[1 : len(raw)-1]) // unreachable for json.Valid input
	}
	return out
}

// parseTokens parses with json.Decoder's token API, which locates syntax
// errors.
func parseTokens(data []byte, maxDepth int) (*Node, *Error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	root, e := tokenValue(dec, nil, 0, maxDepth)
	if e != nil {
		return nil, e
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &Error{Path: "$", Message: "trailing data after the JSON value"}
	}
	return root, nil
}

func syntaxErr(dec *json.Decoder, at *path, err error) *Error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return &Error{Path: at.String(), Message: fmt.Sprintf("%v (at byte %d)", err, dec.InputOffset())}
}

func tokenValue(dec *json.Decoder, at *path, depth, maxDepth int) (*Node, *Error) {
	if depth > maxDepth {
		return nil, tooDeep(at, maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, syntaxErr(dec, at, err)
	}
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{':
			n := &Node{Kind: 'o'}
			var keys keySet
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, syntaxErr(dec, at, err)
				}
				key, ok := kt.(string)
				if !ok {
					return nil, &Error{Path: at.String(), Message: "object key is not a string"}
				}
				kp := &path{parent: at, key: key}
				if keys.add(n.Keys, key) {
					return nil, duplicate(kp, key)
				}
				val, e := tokenValue(dec, kp, depth+1, maxDepth)
				if e != nil {
					return nil, e
				}
				n.Keys = append(n.Keys, key)
				n.Vals = append(n.Vals, val)
			}
			if _, err := dec.Token(); err != nil {
				return nil, syntaxErr(dec, at, err)
			}
			return n, nil
		case '[':
			n := &Node{Kind: 'a'}
			for i := 0; dec.More(); i++ {
				val, e := tokenValue(dec, &path{parent: at, index: i, elem: true}, depth+1, maxDepth)
				if e != nil {
					return nil, e
				}
				n.Vals = append(n.Vals, val)
			}
			if _, err := dec.Token(); err != nil {
				return nil, syntaxErr(dec, at, err)
			}
			return n, nil
		}
	case string:
		return &Node{Kind: 's', Str: v}, nil
	case json.Number:
		return &Node{Kind: 'n', Str: string(v)}, nil
	case bool:
		return &Node{Kind: 'b', B: v}, nil
	case nil:
		return &Node{Kind: 'z'}, nil
	}
	return nil, &Error{Path: at.String(), Message: fmt.Sprintf("unexpected token %v", tok)}
}
