package amk

import (
	"github.com/megaproof/megaproof/internal/jsontree"

	"github.com/megaproof/megaproof/schedule"
)

// node is one parsed JSON value. Objects keep their keys in document order.
type node = jsontree.Node

// maxDepth bounds nesting so hostile input cannot exhaust the stack.
const maxDepth = 128

// fatal turns a scanner error (syntax, a duplicate key, the input limit)
// into the error the reader returns. AMK's Python reader silently keeps the
// last of two equal keys, which makes such a file mean two different things
// to two readers, so a duplicate key is an error here.
func fatal(e *jsontree.Error) error {
	if e.Kind == jsontree.IO {
		return e.Err
	}
	code := schedule.CodeSyntax
	switch e.Kind {
	case jsontree.Duplicate:
		code = schedule.CodeDuplicate
	case jsontree.Limit:
		code = schedule.CodeLimit
	}
	return &schedule.Error{Diagnostics: []schedule.Diagnostic{{Code: code, Path: e.Path, Message: e.Message}}}
}

// diagError turns collected diagnostics into an error (nil without any).
func diagError(list []jsontree.Diag) error {
	if len(list) == 0 {
		return nil
	}
	ds := make([]schedule.Diagnostic, len(list))
	for i, d := range list {
		ds[i] = schedule.Diagnostic{Code: d.Code, Path: d.Path, Message: d.Message}
	}
	return &schedule.Error{Diagnostics: ds}
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

// reader converts parsed values and collects diagnostics. In quiet mode it
// only notes that something is wrong (the direct reader then reads the
// element again, loudly).
type reader struct {
	ds     *jsontree.Diags
	quiet  bool
	failed bool
}

func (r *reader) add(code, path, format string, args ...any) {
	if r.quiet {
		r.failed = true
		return
	}
	r.ds.Add(code, path, format, args...)
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

// integer reads a JSON integer that fits in an int64.
func (r *reader) integer(n *node, path string) (int64, bool) {
	if n.Kind != 'n' {
		r.add(schedule.CodeType, path, "want an integer, have %s", jsontree.KindNames[n.Kind])
		return 0, false
	}
	return r.integerLit([]byte(n.Str), path)
}

// integerLit reads a number literal as an integer that fits in an int64.
// A value with a fraction is a type error (AMK's validator wants integers);
// an integral one written with a fraction or an exponent (512.0 from
// Python's /) counts, as in JSON Schema. An integer beyond int64 is a size
// error.
func (r *reader) integerLit(lit []byte, path string) (int64, bool) {
	if v, ok := jsontree.Int64(lit); ok {
		return v, true
	}
	if _, _, st := jsontree.ParseInteger(lit); st == jsontree.IntFraction {
		r.add(schedule.CodeType, path, "want an integer, have %s", lit)
	} else {
		r.add(schedule.CodeSize, path, "integer %s overflows 64 bits", lit)
	}
	return 0, false
}
