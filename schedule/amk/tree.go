package amk

import (
	"fmt"
	"github.com/megaproof/megaproof/internal/jsontree"
	"strconv"

	"github.com/megaproof/megaproof/schedule"
)

// node is one parsed JSON value. Objects keep their keys in document order.
type node = jsontree.Node

// maxDepth bounds nesting so hostile input cannot exhaust the stack.
const maxDepth = 128

// parse reads exactly one JSON value. Duplicate keys are rejected: AMK's
// Python reader silently keeps the last one, which makes such a file mean
// two different things to two readers.
func parse(data []byte) (*node, *schedule.Diagnostic) {
	n, err := jsontree.Parse(data, maxDepth)
	if err != nil {
		code := schedule.CodeSyntax
		if err.Duplicate {
			code = schedule.CodeDuplicate
		}
		return nil, &schedule.Diagnostic{Code: code, Path: err.Path, Message: err.Message}
	}
	return n, nil
}

// field returns the value of key in object n, or nil.
func field(n *node, key string) *node {
	for i, k := range n.Keys {
		if k == key {
			return n.Vals[i]
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
	if n.Kind != 'o' {
		r.add(schedule.CodeType, path, "want an object, have %s", jsontree.KindNames[n.Kind])
		return false
	}
	return true
}

// required returns the field key of object n, reporting it when missing.
func (r *reader) required(n *node, path, key string) *node {
	v := field(n, key)
	if v == nil {
		r.add(schedule.CodeMissing, path+"."+key, "required field %q is missing", key)
	}
	return v
}

// optional returns the field key of object n, or nil when it is absent or
// null.
func optional(n *node, key string) *node {
	v := field(n, key)
	if v == nil || v.Kind == 'z' {
		return nil
	}
	return v
}

func (r *reader) array(n *node, path string) ([]*node, bool) {
	if n.Kind != 'a' {
		r.add(schedule.CodeType, path, "want an array, have %s", jsontree.KindNames[n.Kind])
		return nil, false
	}
	return n.Vals, true
}

func (r *reader) str(n *node, path string) (string, bool) {
	if n.Kind != 's' {
		r.add(schedule.CodeType, path, "want a string, have %s", jsontree.KindNames[n.Kind])
		return "", false
	}
	return n.Str, true
}

func (r *reader) boolean(n *node, path string) (bool, bool) {
	if n.Kind != 'b' {
		r.add(schedule.CodeType, path, "want a boolean, have %s", jsontree.KindNames[n.Kind])
		return false, false
	}
	return n.B, true
}

// integer reads a JSON integer that fits in an int64. A fraction or an
// exponent is a type error (AMK's validator wants Python ints); an integer
// beyond int64 is a size error.
func (r *reader) integer(n *node, path string) (int64, bool) {
	if n.Kind != 'n' {
		r.add(schedule.CodeType, path, "want an integer, have %s", jsontree.KindNames[n.Kind])
		return 0, false
	}
	v, err := strconv.ParseInt(n.Str, 10, 64)
	if err != nil {
		if jsontree.IsInteger(n.Str) {
			r.add(schedule.CodeSize, path, "integer %s overflows 64 bits", n.Str)
		} else {
			r.add(schedule.CodeType, path, "want an integer, have %s", n.Str)
		}
		return 0, false
	}
	return v, true
}
