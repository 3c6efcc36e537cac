package amk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/megaproof/megaproof/schedule"
)

// node is one parsed JSON value. Objects keep their keys in document order.
type node struct {
	kind byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	keys []string
	vals []*node
	str  string // string value, or a number's literal text
	b    bool
}

// maxDepth bounds nesting so hostile input cannot exhaust the stack.
const maxDepth = 128

var kindNames = map[byte]string{'o': "an object", 'a': "an array", 's': "a string", 'n': "a number", 'b': "a boolean", 'z': "null"}

// parse reads exactly one JSON value. Duplicate keys are rejected: AMK's
// Python reader silently keeps the last one, which makes such a file mean
// two different things to two readers.
func parse(data []byte) (*node, *schedule.Diagnostic) {
	if json.Valid(data) {
		return parseFast(data)
	}
	return parseSlow(data)
}

// parseSlow parses with json.Decoder's token API, which locates syntax
// errors; it is used only for input that json.Valid rejects.
func parseSlow(data []byte) (*node, *schedule.Diagnostic) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	root, d := parseValue(dec, "$", 0)
	if d != nil {
		return nil, d
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &schedule.Diagnostic{Code: schedule.CodeSyntax, Path: "$", Message: "trailing data after the JSON value"}
	}
	return root, nil
}

func syntaxErr(dec *json.Decoder, path string, err error) *schedule.Diagnostic {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return &schedule.Diagnostic{Code: schedule.CodeSyntax, Path: path, Message: fmt.Sprintf("%v (at byte %d)", err, dec.InputOffset())}
}

func parseValue(dec *json.Decoder, path string, depth int) (*node, *schedule.Diagnostic) {
	if depth > maxDepth {
		return nil, &schedule.Diagnostic{Code: schedule.CodeSyntax, Path: path, Message: fmt.Sprintf("nesting deeper than %d", maxDepth)}
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, syntaxErr(dec, path, err)
	}
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{':
			n := &node{kind: 'o'}
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, syntaxErr(dec, path, err)
				}
				key, ok := kt.(string)
				if !ok {
					return nil, &schedule.Diagnostic{Code: schedule.CodeSyntax, Path: path, Message: "object key is not a string"}
				}
				kp := path + "." + key
				if seen[key] {
					return nil, &schedule.Diagnostic{Code: schedule.CodeDuplicate, Path: kp, Message: fmt.Sprintf("key %q appears twice", key)}
				}
				seen[key] = true
				val, d := parseValue(dec, kp, depth+1)
				if d != nil {
					return nil, d
				}
				n.keys = append(n.keys, key)
				n.vals = append(n.vals, val)
			}
			if _, err := dec.Token(); err != nil {
				return nil, syntaxErr(dec, path, err)
			}
			return n, nil
		case '[':
			n := &node{kind: 'a'}
			for i := 0; dec.More(); i++ {
				val, d := parseValue(dec, fmt.Sprintf("%s[%d]", path, i), depth+1)
				if d != nil {
					return nil, d
				}
				n.vals = append(n.vals, val)
			}
			if _, err := dec.Token(); err != nil {
				return nil, syntaxErr(dec, path, err)
			}
			return n, nil
		}
	case string:
		return &node{kind: 's', str: v}, nil
	case json.Number:
		return &node{kind: 'n', str: string(v)}, nil
	case bool:
		return &node{kind: 'b', b: v}, nil
	case nil:
		return &node{kind: 'z'}, nil
	}
	return nil, &schedule.Diagnostic{Code: schedule.CodeSyntax, Path: path, Message: fmt.Sprintf("unexpected token %v", tok)}
}

// field returns the value of key in object n, or nil.
func (n *node) field(key string) *node {
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// maxDiagnostics caps the diagnostics one input can produce.
const maxDiagnostics = 50

// reader converts parsed values and collects diagnostics.
type reader struct {
	list []schedule.Diagnostic
}

func (r *reader) add(code, path, format string, args ...any) {
	if len(r.list) < maxDiagnostics {
		r.list = append(r.list, schedule.Diagnostic{Code: code, Path: path, Message: fmt.Sprintf(format, args...)})
	}
}

func (r *reader) err() error {
	if len(r.list) == 0 {
		return nil
	}
	return &schedule.Error{Diagnostics: r.list}
}

// object checks that n is an object. Unknown keys are allowed: AMK's format
// is additive, and its own reader ignores keys it does not know.
func (r *reader) object(n *node, path string) bool {
	if n.kind != 'o' {
		r.add(schedule.CodeType, path, "want an object, have %s", kindNames[n.kind])
		return false
	}
	return true
}

// required returns the field key of object n, reporting it when missing.
func (r *reader) required(n *node, path, key string) *node {
	v := n.field(key)
	if v == nil {
		r.add(schedule.CodeMissing, path+"."+key, "required field %q is missing", key)
	}
	return v
}

// optional returns the field key of object n, or nil when it is absent or
// null.
func optional(n *node, key string) *node {
	v := n.field(key)
	if v == nil || v.kind == 'z' {
		return nil
	}
	return v
}

func (r *reader) array(n *node, path string) ([]*node, bool) {
	if n.kind != 'a' {
		r.add(schedule.CodeType, path, "want an array, have %s", kindNames[n.kind])
		return nil, false
	}
	return n.vals, true
}

func (r *reader) str(n *node, path string) (string, bool) {
	if n.kind != 's' {
		r.add(schedule.CodeType, path, "want a string, have %s", kindNames[n.kind])
		return "", false
	}
	return n.str, true
}

func (r *reader) boolean(n *node, path string) (bool, bool) {
	if n.kind != 'b' {
		r.add(schedule.CodeType, path, "want a boolean, have %s", kindNames[n.kind])
		return false, false
	}
	return n.b, true
}

// integer reads a JSON integer that fits in an int64. A fraction or an
// exponent is a type error (AMK's validator wants Python ints); an integer
// beyond int64 is a size error.
func (r *reader) integer(n *node, path string) (int64, bool) {
	if n.kind != 'n' {
		r.add(schedule.CodeType, path, "want an integer, have %s", kindNames[n.kind])
		return 0, false
	}
	v, err := strconv.ParseInt(n.str, 10, 64)
	if err != nil {
		if isInteger(n.str) {
			r.add(schedule.CodeSize, path, "integer %s overflows 64 bits", n.str)
		} else {
			r.add(schedule.CodeType, path, "want an integer, have %s", n.str)
		}
		return 0, false
	}
	return v, true
}

func isInteger(s string) bool {
	if s != "" && s[0] == '-' {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
