package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/internal/progen"
	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify"
)

// Codes whose findings name no definite edit on their examples: the fix
// depends on what the program means.
var noPatch = map[string]string{}

// Every documented fix of the code examples and of the README's racy
// example is also a JSON Patch: applied to the document (by the RFC 6902
// applier below), the program verifies safe: the finding is gone and no
// other appears.
func TestPatchesFixTheirExamples(t *testing.T) {
	files, _ := filepath.Glob("../../verify/testdata/codes/*.json")
	docs := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs[filepath.Base(f)] = b
	}
	// README: tiny-mlp with down.1's wait dropped.
	var mlp map[string]any
	b, err := os.ReadFile("testdata/default.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &mlp); err != nil {
		t.Fatal(err)
	}
	mlp["name"] = "tiny-mlp-racy"
	delete(mlp["tasks"].([]any)[3].(map[string]any), "before")
	docs["tiny-mlp-racy.json"], _ = json.Marshal(mlp)
	patched := 0
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			r := verifyBytes(t, doc)
			if r.Verdict != verify.Unsafe {
				t.Fatalf("verdict %s", r.Verdict)
			}
			for i, f := range r.Findings {
				if f.Fix == "" {
					continue
				}
				if len(f.Patch) == 0 {
					if noPatch[f.Code] == "" {
						t.Errorf("finding %d (%s) has the fix %q but no patch", i, f.Code, f.Fix)
					}
					continue
				}
				fixed, err := patchedDoc(doc, f.Patch)
				if err != nil {
					t.Fatalf("%s: patch %s: %v", f.Code, patchText(f.Patch), err)
				}
				after := verifyBytes(t, fixed)
				if after.Verdict != verify.Safe {
					t.Errorf("%s: after the patch %s the program is %s: %+v", f.Code, patchText(f.Patch), after.Verdict, after.Findings)
				}
				patched++
			}
		})
	}
	t.Logf("%d patches applied", patched)
	if patched < 16 {
		t.Errorf("%d patches applied, want every fix of the examples (at least 16)", patched)
	}
}

func patchText(ops []verify.PatchOp) string {
	b, _ := json.Marshal(ops)
	return string(b)
}

// verifyBytes runs verify --json on a document and decodes its report.
func verifyBytes(t *testing.T, doc []byte) verify.Report {
	t.Helper()
	_, out, errOut := runCLI(t, string(doc), "verify", "--json", "-")
	var r verify.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s%s", err, out, errOut)
	}
	return r
}

// patchedDoc applies ops to the JSON document doc, its numbers kept exact
// (json.Number), and returns the patched document.
func patchedDoc(doc []byte, ops []verify.PatchOp) ([]byte, error) {
	var v any
	if err := decodeNumbers(doc, &v); err != nil {
		return nil, err
	}
	v, err := applyJSONPatch(v, ops)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// applyJSONPatch applies RFC 6902 operations (add, remove, replace, move,
// copy, test) to a decoded JSON document, each on the result of the one
// before, and returns the new document.
func applyJSONPatch(doc any, ops []verify.PatchOp) (any, error) {
	for _, op := range ops {
		var val any
		if op.Op == "add" || op.Op == "replace" || op.Op == "test" {
			if op.Value == nil {
				return nil, fmt.Errorf("%s %s: no value", op.Op, op.Path)
			}
			if err := json.Unmarshal(op.Value, &val); err != nil {
				return nil, err
			}
		}
		var err error
		switch op.Op {
		case "add":
			doc, err = pointerSet(doc, op.Path, val, true)
		case "remove":
			doc, _, err = pointerRemove(doc, op.Path)
		case "replace":
			if doc, _, err = pointerRemove(doc, op.Path); err == nil {
				doc, err = pointerSet(doc, op.Path, val, true)
			}
		case "move", "copy":
			var moved any
			if op.Op == "move" {
				doc, moved, err = pointerRemove(doc, op.From)
			} else {
				moved, err = pointerGet(doc, op.From)
			}
			if err == nil {
				doc, err = pointerSet(doc, op.Path, moved, true)
			}
		case "test":
			var got any
			if got, err = pointerGet(doc, op.Path); err == nil {
				a, _ := json.Marshal(got)
				b, _ := json.Marshal(val)
				if string(a) != string(b) {
					err = fmt.Errorf("test %s: %s, not %s", op.Path, a, b)
				}
			}
		default:
			err = fmt.Errorf("unknown op %q", op.Op)
		}
		if err != nil {
			return nil, err
		}
	}
	return doc, nil
}

// tokens splits a JSON Pointer into its unescaped reference tokens.
func tokens(ptr string) ([]string, error) {
	if ptr == "" {
		return nil, nil
	}
	if ptr[0] != '/' {
		return nil, fmt.Errorf("pointer %q does not start with /", ptr)
	}
	parts := strings.Split(ptr[1:], "/")
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
	}
	return parts, nil
}

func index(tok string, n int, end bool) (int, error) {
	if end && tok == "-" {
		return n, nil
	}
	i, err := strconv.Atoi(tok)
	if err != nil || i < 0 || i > n || (!end && i == n) || (len(tok) > 1 && tok[0] == '0') {
		return 0, fmt.Errorf("bad array index %q (length %d)", tok, n)
	}
	return i, nil
}

func pointerGet(doc any, ptr string) (any, error) {
	toks, err := tokens(ptr)
	if err != nil {
		return nil, err
	}
	for _, tok := range toks {
		switch c := doc.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, fmt.Errorf("%s: no member %q", ptr, tok)
			}
			doc = v
		case []any:
			i, err := index(tok, len(c), false)
			if err != nil {
				return nil, err
			}
			doc = c[i]
		default:
			return nil, fmt.Errorf("%s: %q is not in a container", ptr, tok)
		}
	}
	return doc, nil
}

// pointerSet adds val at ptr: a member of an object (replacing one that
// exists), or an element inserted into an array ("-" appends).
func pointerSet(doc any, ptr string, val any, _ bool) (any, error) {
	toks, err := tokens(ptr)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return val, nil
	}
	parentPtr := ptr[:strings.LastIndexByte(ptr, '/')]
	parent, err := pointerGet(doc, parentPtr)
	if err != nil {
		return nil, err
	}
	last := toks[len(toks)-1]
	switch c := parent.(type) {
	case map[string]any:
		c[last] = val
		return doc, nil
	case []any:
		i, err := index(last, len(c), true)
		if err != nil {
			return nil, err
		}
		c = append(c[:i], append([]any{val}, c[i:]...)...)
		return pointerReplaceArray(doc, parentPtr, c)
	}
	return nil, fmt.Errorf("%s: parent is not a container", ptr)
}

// pointerRemove removes the value at ptr and returns it.
func pointerRemove(doc any, ptr string) (any, any, error) {
	toks, err := tokens(ptr)
	if err != nil || len(toks) == 0 {
		return nil, nil, fmt.Errorf("cannot remove %q", ptr)
	}
	parentPtr := ptr[:strings.LastIndexByte(ptr, '/')]
	parent, err := pointerGet(doc, parentPtr)
	if err != nil {
		return nil, nil, err
	}
	last := toks[len(toks)-1]
	switch c := parent.(type) {
	case map[string]any:
		v, ok := c[last]
		if !ok {
			return nil, nil, fmt.Errorf("%s: no member to remove", ptr)
		}
		delete(c, last)
		return doc, v, nil
	case []any:
		i, err := index(last, len(c), false)
		if err != nil {
			return nil, nil, err
		}
		v := c[i]
		c = append(append(make([]any, 0, len(c)-1), c[:i]...), c[i+1:]...)
		doc, err = pointerReplaceArray(doc, parentPtr, c)
		return doc, v, err
	}
	return nil, nil, fmt.Errorf("%s: parent is not a container", ptr)
}

// pointerReplaceArray stores a (re-sliced) array back at ptr.
func pointerReplaceArray(doc any, ptr string, a []any) (any, error) {
	toks, _ := tokens(ptr)
	if len(toks) == 0 {
		return a, nil
	}
	parent, err := pointerGet(doc, ptr[:strings.LastIndexByte(ptr, '/')])
	if err != nil {
		return nil, err
	}
	last := toks[len(toks)-1]
	switch c := parent.(type) {
	case map[string]any:
		c[last] = a
	case []any:
		i, err := index(last, len(c), false)
		if err != nil {
			return nil, err
		}
		c[i] = a
	}
	return doc, nil
}

// The applier follows RFC 6902's own examples (appendix A).
func TestApplyPatchRFCExamples(t *testing.T) {
	for _, c := range []struct{ doc, patch, want string }{
		{`{"foo":"bar"}`, `[{"op":"add","path":"/baz","value":"qux"}]`, `{"baz":"qux","foo":"bar"}`},
		{`{"foo":["bar","baz"]}`, `[{"op":"add","path":"/foo/1","value":"qux"}]`, `{"foo":["bar","qux","baz"]}`},
		{`{"baz":"qux","foo":"bar"}`, `[{"op":"remove","path":"/baz"}]`, `{"foo":"bar"}`},
		{`{"foo":["bar","qux","baz"]}`, `[{"op":"remove","path":"/foo/1"}]`, `{"foo":["bar","baz"]}`},
		{`{"baz":"qux","foo":"bar"}`, `[{"op":"replace","path":"/baz","value":"boo"}]`, `{"baz":"boo","foo":"bar"}`},
		{`{"foo":["all","grass","cows","eat"]}`, `[{"op":"move","from":"/foo/1","path":"/foo/3"}]`, `{"foo":["all","cows","eat","grass"]}`},
		{`{"foo":["bar"]}`, `[{"op":"add","path":"/foo/-","value":["abc","def"]}]`, `{"foo":["bar",["abc","def"]]}`},
		{`{"a/b":1}`, `[{"op":"replace","path":"/a~1b","value":2}]`, `{"a/b":2}`},
	} {
		var doc any
		var ops []verify.PatchOp
		json.Unmarshal([]byte(c.doc), &doc)
		if err := json.Unmarshal([]byte(c.patch), &ops); err != nil {
			t.Fatal(err)
		}
		got, err := applyJSONPatch(doc, ops)
		if err != nil {
			t.Fatalf("%s on %s: %v", c.patch, c.doc, err)
		}
		b, _ := json.Marshal(got)
		if string(b) != c.want {
			t.Errorf("%s on %s: %s, want %s", c.patch, c.doc, b, c.want)
		}
	}
	var doc any
	json.Unmarshal([]byte(`{"foo":["bar"]}`), &doc)
	for _, bad := range []string{`[{"op":"remove","path":"/nope"}]`, `[{"op":"add","path":"/foo/5","value":1}]`, `[{"op":"test","path":"/foo/0","value":"baz"}]`} {
		var ops []verify.PatchOp
		json.Unmarshal([]byte(bad), &ops)
		if _, err := applyJSONPatch(doc, ops); err == nil {
			t.Errorf("%s applied", bad)
		}
	}
}

// On random programs every patch applies and leaves a valid document, and
// at least 95 % remove their finding (all of them at the time of writing;
// the figures are logged: a patch is an edit that removes its finding, not
// a proof that no other appears).
func TestPatchesOnRandomPrograms(t *testing.T) {
	gen := progen.Program(progen.Small())
	n := 400
	if testing.Short() {
		n = 100
	}
	applied, removed := map[string]int{}, map[string]int{}
	for i := 0; i < n; i++ {
		p := gen.Example(i)
		doc, err := schedule.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		res, err := verify.Run(context.Background(), p, verify.Config{})
		if err != nil {
			t.Fatal(err)
		}
		rep := res.Report(p)
		for _, f := range rep.Findings {
			if len(f.Patch) == 0 {
				continue
			}
			fixed, err := patchedDoc(doc, f.Patch)
			if err != nil {
				t.Fatalf("seed %d: %s: patch %s does not apply: %v\n%s", i, f.Code, patchText(f.Patch), err, doc)
			}
			q, err := schedule.Unmarshal(fixed)
			if err != nil {
				t.Fatalf("seed %d: %s: patch %s leaves an invalid document: %v\n%s", i, f.Code, patchText(f.Patch), err, doc)
			}
			applied[f.Code]++
			after, err := verify.Run(context.Background(), q, verify.Config{})
			if err != nil {
				t.Fatal(err)
			}
			still := false
			for _, g := range after.Report(q).Findings {
				// The same finding: its code and tasks, or for one
				// without tasks (an output buffer) its locations.
				if g.Code == f.Code && slices.Equal(g.Tasks, f.Tasks) && (len(f.Tasks) > 0 || slices.Equal(g.Locations, f.Locations)) {
					still = true
				}
			}
			if !still {
				removed[f.Code]++
			} else if testing.Verbose() {
				t.Logf("seed %d: %s %v: still there after %s (fix: %s)", i, f.Code, f.Tasks, patchText(f.Patch), f.Fix)
			}
		}
	}
	total, gone := 0, 0
	for code, a := range applied {
		total += a
		gone += removed[code]
		t.Logf("%s: %d patches, %d removed their finding", code, a, removed[code])
	}
	if total < 50 {
		t.Errorf("%d patches applied: too few to test", total)
	}
	if gone < total*95/100 {
		t.Errorf("only %d of %d patches removed their finding", gone, total)
	}
	t.Logf("%d of %d patches removed their finding", gone, total)
}
