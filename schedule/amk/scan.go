package amk

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/megaproof/megaproof/schedule"
)

// parseFast builds the same tree as parseValue for input that json.Valid
// accepts, several times faster than json.Decoder's token API. It reports
// only what json.Valid cannot: duplicate keys and excessive nesting.
type scanner struct {
	data []byte
	pos  int
}

func parseFast(data []byte) (*node, *schedule.Diagnostic) {
	s := &scanner{data: data}
	return s.value(nil, 0)
}

// seg is one step of a JSON path, built as a chain so that the path string
// is formatted only for a diagnostic.
type seg struct {
	parent *seg
	key    string
	index  int // for an array element; key is "" then
	elem   bool
}

func (p *seg) String() string {
	if p == nil {
		return "$"
	}
	if p.elem {
		return fmt.Sprintf("%s[%d]", p.parent, p.index)
	}
	return p.parent.String() + "." + p.key
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

func (s *scanner) value(path *seg, depth int) (*node, *schedule.Diagnostic) {
	if depth > maxDepth {
		return nil, &schedule.Diagnostic{Code: schedule.CodeSyntax, Path: path.String(), Message: fmt.Sprintf("nesting deeper than %d", maxDepth)}
	}
	s.ws()
	switch c := s.data[s.pos]; c {
	case '{':
		s.pos++
		n := &node{kind: 'o'}
		var seen map[string]bool // beyond a few keys, a set finds duplicates
		s.ws()
		if s.data[s.pos] == '}' {
			s.pos++
			return n, nil
		}
		for {
			s.ws()
			key := s.string()
			kp := &seg{parent: path, key: key}
			dup := false
			if seen != nil {
				dup = seen[key]
				seen[key] = true
			} else {
				for _, k := range n.keys {
					dup = dup || k == key
				}
				if len(n.keys) == 16 {
					seen = make(map[string]bool, 32)
					for _, k := range n.keys {
						seen[k] = true
					}
					seen[key] = true
				}
			}
			if dup {
				return nil, &schedule.Diagnostic{Code: schedule.CodeDuplicate, Path: kp.String(), Message: fmt.Sprintf("key %q appears twice", key)}
			}
			s.ws()
			s.pos++ // ':'
			v, d := s.value(kp, depth+1)
			if d != nil {
				return nil, d
			}
			n.keys = append(n.keys, key)
			n.vals = append(n.vals, v)
			s.ws()
			c := s.data[s.pos]
			s.pos++
			if c == '}' {
				return n, nil
			}
		}
	case '[':
		s.pos++
		n := &node{kind: 'a'}
		s.ws()
		if s.data[s.pos] == ']' {
			s.pos++
			return n, nil
		}
		for i := 0; ; i++ {
			v, d := s.value(&seg{parent: path, index: i, elem: true}, depth+1)
			if d != nil {
				return nil, d
			}
			n.vals = append(n.vals, v)
			s.ws()
			c := s.data[s.pos]
			s.pos++
			if c == ']' {
				return n, nil
			}
		}
	case '"':
		return &node{kind: 's', str: s.string()}, nil
	case 't':
		s.pos += 4
		return &node{kind: 'b', b: true}, nil
	case 'f':
		s.pos += 5
		return &node{kind: 'b'}, nil
	case 'n':
		s.pos += 4
		return &node{kind: 'z'}, nil
	default:
		start := s.pos
		for s.pos < len(s.data) {
			switch s.data[s.pos] {
			case ',', ']', '}', ' ', '\t', '\n', '\r':
				return &node{kind: 'n', str: string(s.data[start:s.pos])}, nil
			}
			s.pos++
		}
		return &node{kind: 'n', str: string(s.data[start:s.pos])}, nil
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
