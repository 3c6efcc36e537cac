package main

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// sarifSchemaDoc is the official SARIF 2.1.0 JSON Schema of OASIS
// (errata01, its "id" is checked below), as shipped in the Go module
// github.com/owenrumney/go-sarif/v3 v3.3.1 and equal as JSON to the one in
// the oasis-tcs/sarif-spec repository.
//
//go:embed testdata/sarif-schema-2.1.0.json
var sarifSchemaDoc []byte

var sarifSchemaCompiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(sarifSchemaDoc))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft4)
	c.AssertFormat()
	if err := c.AddResource(sarifSchema, doc); err != nil {
		return nil, err
	}
	return c.Compile(sarifSchema)
})

// validateSARIF validates one SARIF log against the official schema.
func validateSARIF(t *testing.T, out []byte) {
	t.Helper()
	sch, err := sarifSchemaCompiled()
	if err != nil {
		t.Fatalf("compiling the SARIF schema: %v", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("SARIF schema: %v", err)
	}
}

func TestSARIFSchemaIsOASIS(t *testing.T) {
	var s map[string]any
	if err := json.Unmarshal(sarifSchemaDoc, &s); err != nil {
		t.Fatal(err)
	}
	if s["id"] != sarifSchema || s["$schema"] != "http://json-schema.org/draft-04/schema#" {
		t.Fatalf("testdata/sarif-schema-2.1.0.json: id %v, $schema %v; want the OASIS 2.1.0 schema", s["id"], s["$schema"])
	}
}

// TestSARIFSchemaRejects makes sure validation can fail.
func TestSARIFSchemaRejects(t *testing.T) {
	sch, err := sarifSchemaCompiled()
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range []string{
		`{"version":"2.1.0","runs":[{"tool":{"driver":{}}}]}`,
		`{"version":"2.0.0","runs":[]}`,
		`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"m"}},"results":[{"message":{"text":"x"},"level":"fatal"}]}]}`,
		`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"m"}},"results":[{"message":{"text":"x"},"locations":[{"physicalLocation":{"region":{"startLine":0}}}]}]}]}`,
		`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"m"}},"results":[{"message":{"text":"x"},"codeFlows":[{"threadFlows":[]}]}]}]}`,
	} {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
		if err != nil {
			t.Fatal(err)
		}
		if sch.Validate(inst) == nil {
			t.Errorf("the SARIF schema accepts %s", doc)
		}
	}
}

// sarifInputs are the documents the SARIF and report tests run on: every
// file of verify/testdata/codes, an AMK and an MPK input that are unsafe,
// and one that is invalid.
func sarifInputs(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "verify", "testdata", "codes", "*.json"))
	if err != nil || len(files) < 15 {
		t.Fatalf("verify/testdata/codes: %d files, %v", len(files), err)
	}
	amkDoc, err := os.ReadFile(filepath.Join("..", "..", "schedule", "amk", "testdata", "kv_prior.json"))
	if err != nil {
		t.Fatal(err)
	}
	// Attention over row 7 too, which it does not wait for: a race.
	racy := bytes.Replace(amkDoc, []byte(`"kv_len": 7`), []byte(`"kv_len": 8`), 1)
	if bytes.Equal(racy, amkDoc) {
		t.Fatal("kv_prior.json changed: no kv_len 7")
	}
	files = append(files,
		writeFile(t, "amk_race.json", racy),
		filepath.Join("..", "..", "schedule", "mpk", "testdata", "ex4_stripped_residual_hazard.json"),
		writeFile(t, "invalid.json", []byte("{\"format\":\"megaproof/v1\",\n \"launch\":{\"sms\":1,\"workers\":1},\n \"tasks\":[{\"name\":\"a\",\"wrker\":0}]}")))
	return files
}

// sarifLog as the test reads it back.
type sarifOut struct {
	Runs []struct {
		Tool struct {
			Driver struct {
				Rules []struct {
					ID string `json:"id"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Artifacts []struct {
			Location struct {
				URI string `json:"uri"`
			} `json:"location"`
			Properties map[string]any `json:"properties"`
		} `json:"artifacts"`
		Results []struct {
			RuleID    string `json:"ruleId"`
			RuleIndex int    `json:"ruleIndex"`
			Locations []struct {
				PhysicalLocation *struct {
					ArtifactLocation struct {
						Index int `json:"index"`
					} `json:"artifactLocation"`
					Region *sarifRegion `json:"region"`
				} `json:"physicalLocation"`
				LogicalLocations []sarifLogicalLocation `json:"logicalLocations"`
			} `json:"locations"`
			Fixes []struct {
				ArtifactChanges []struct {
					Replacements []struct {
						DeletedRegion   sarifRegion `json:"deletedRegion"`
						InsertedContent *sarifText  `json:"insertedContent"`
					} `json:"replacements"`
				} `json:"artifactChanges"`
			} `json:"fixes"`
			CodeFlows []struct {
				ThreadFlows []struct {
					Locations []struct {
						ExecutionOrder int    `json:"executionOrder"`
						Importance     string `json:"importance"`
					} `json:"locations"`
				} `json:"threadFlows"`
			} `json:"codeFlows"`
		} `json:"results"`
	} `json:"runs"`
}

// TestSARIF verifies every input with --format sarif, validates the log
// against the official schema and checks it against --json: one result
// per finding with its rule, regions that are where the JSON path is, a
// thread flow location per witness event in trace order, marked events
// essential.
func TestSARIF(t *testing.T) {
	files := sarifInputs(t)
	fixesChecked = 0
	defer func() {
		if fixesChecked < 10 {
			t.Errorf("%d SARIF fixes checked against their patch, want at least 10", fixesChecked)
		}
	}()
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			codeJ, outJ, _ := runCLI(t, "", "verify", "--json", f)
			codeS, outS, errS := runCLI(t, "", "verify", "--format", "sarif", f)
			if codeS != codeJ {
				t.Fatalf("exit status %d with sarif, %d with --json; stderr %s", codeS, codeJ, errS)
			}
			validateSARIF(t, []byte(outS))
			var rep struct {
				Verdict  string    `json:"verdict"`
				Findings []finding `json:"findings"`
			}
			if err := json.Unmarshal([]byte(outJ), &rep); err != nil {
				t.Fatal(err)
			}
			var log sarifOut
			if err := json.Unmarshal([]byte(outS), &log); err != nil {
				t.Fatal(err)
			}
			if len(log.Runs) != 1 {
				t.Fatalf("%d runs", len(log.Runs))
			}
			run := log.Runs[0]
			if len(run.Artifacts) != 1 || run.Artifacts[0].Properties["verdict"] != rep.Verdict {
				t.Fatalf("artifacts %+v, verdict %s", run.Artifacts, rep.Verdict)
			}
			if len(run.Results) != len(rep.Findings) || len(rep.Findings) == 0 {
				t.Fatalf("%d results for %d findings", len(run.Results), len(rep.Findings))
			}
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for i, res := range run.Results {
				fd := rep.Findings[i]
				if res.RuleID != fd.Code || run.Tool.Driver.Rules[res.RuleIndex].ID != fd.Code {
					t.Errorf("result %d: rule %s (index %d), finding %s", i, res.RuleID, res.RuleIndex, fd.Code)
				}
				if len(res.Locations) != 1 || res.Locations[0].PhysicalLocation == nil {
					t.Fatalf("result %d: locations %+v", i, res.Locations)
				}
				primary := fd.Path
				if len(fd.Locations) > 0 {
					primary = fd.Locations[0].Path
				}
				if primary != "" {
					checkRegion(t, data, primary, res.Locations[0].PhysicalLocation.Region)
				}
				if len(fd.Tasks) > 0 && (len(res.Locations[0].LogicalLocations) != 1 || res.Locations[0].LogicalLocations[0].Name != fd.Tasks[0]) {
					t.Errorf("result %d: logical locations %+v, tasks %q", i, res.Locations[0].LogicalLocations, fd.Tasks)
				}
				var order []int
				essential, marked := 0, 0
				for _, e := range fd.Witness {
					if e.Marked {
						marked++
					}
				}
				for _, cf := range res.CodeFlows {
					for _, tf := range cf.ThreadFlows {
						for _, l := range tf.Locations {
							order = append(order, l.ExecutionOrder)
							if l.Importance == "essential" {
								essential++
							}
						}
					}
				}
				checkFix(t, data, fd, res.Fixes)
				sort.Ints(order)
				for k, o := range order {
					if o != k+1 {
						t.Fatalf("result %d: execution orders %v", i, order)
					}
				}
				if len(order) != len(fd.Witness) || essential != marked {
					t.Errorf("result %d: %d flow locations (%d essential) for %d events (%d marked)", i, len(order), essential, len(fd.Witness), marked)
				}
			}
		})
	}
}

// checkFix applies a result's SARIF fix to the file's bytes and compares
// the document with the finding's JSON Patch applied to the decoded one: a
// finding with a patch of add, remove and replace operations has a fix,
// and the fix makes the same document.
func checkFix(t *testing.T, data []byte, fd finding, fixes []struct {
	ArtifactChanges []struct {
		Replacements []struct {
			DeletedRegion   sarifRegion `json:"deletedRegion"`
			InsertedContent *sarifText  `json:"insertedContent"`
		} `json:"replacements"`
	} `json:"artifactChanges"`
}) {
	t.Helper()
	mappable := len(fd.Patch) > 0
	for _, op := range fd.Patch {
		if op.Op != "add" && op.Op != "remove" && op.Op != "replace" {
			mappable = false
		}
	}
	if !mappable {
		if len(fixes) > 0 {
			t.Errorf("%s: a fix for patch %+v", fd.Code, fd.Patch)
		}
		return
	}
	if len(fixes) != 1 || len(fixes[0].ArtifactChanges) != 1 {
		t.Errorf("%s: patch %s has no SARIF fix", fd.Code, mustJSON(fd.Patch))
		return
	}
	reps := fixes[0].ArtifactChanges[0].Replacements
	sort.Slice(reps, func(i, j int) bool { return reps[i].DeletedRegion.ByteOffset > reps[j].DeletedRegion.ByteOffset })
	got := append([]byte(nil), data...)
	for _, r := range reps {
		before := data[:r.DeletedRegion.ByteOffset]
		line := bytes.Count(before, []byte("\n")) + 1
		col := utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:]) + 1
		if r.DeletedRegion.StartLine != line || r.DeletedRegion.StartColumn != col {
			t.Errorf("%s: replacement at byte %d says %d:%d, is at %d:%d", fd.Code, r.DeletedRegion.ByteOffset, r.DeletedRegion.StartLine, r.DeletedRegion.StartColumn, line, col)
		}
		ins := ""
		if r.InsertedContent != nil {
			ins = r.InsertedContent.Text
		}
		a, b := r.DeletedRegion.ByteOffset, r.DeletedRegion.ByteOffset+r.DeletedRegion.ByteLength
		got = append(append(append([]byte(nil), got[:a]...), ins...), got[b:]...)
	}
	var g, orig any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Errorf("%s: the fixed file is not JSON: %v\n%s", fd.Code, err, got)
		return
	}
	if err := json.Unmarshal(data, &orig); err != nil {
		t.Fatal(err)
	}
	fixesChecked++
	if w := applyPatch(t, orig, fd.Patch); !reflect.DeepEqual(g, w) {
		t.Errorf("%s: the SARIF fix makes\n%s\nthe patch %s makes %v", fd.Code, got, mustJSON(fd.Patch), w)
	}
}

// fixesChecked counts the SARIF fixes checkFix compared with their patch.
var fixesChecked int

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// checkRegion checks that region covers the value at path in data: the
// bytes decode as JSON, and the line and column are those of the byte
// offset, computed here independently.
func checkRegion(t *testing.T, data []byte, path string, r *sarifRegion) {
	t.Helper()
	if r == nil {
		t.Errorf("%s: no region", path)
		return
	}
	val := data[r.ByteOffset : r.ByteOffset+r.ByteLength]
	if i := bytes.IndexByte(val, ':'); i > 0 && val[0] == '"' && !json.Valid(val) {
		val = val[i+1:] // a member: "name": value
	}
	if !json.Valid(val) {
		t.Errorf("%s: region %+v is %q, not a JSON value", path, r, data[r.ByteOffset:r.ByteOffset+r.ByteLength])
	}
	before := data[:r.ByteOffset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:]) + 1
	if r.StartLine != line || r.StartColumn != col {
		t.Errorf("%s: region starts at %d:%d, byte %d is at %d:%d", path, r.StartLine, r.StartColumn, r.ByteOffset, line, col)
	}
}

// TestLocatePaths checks the locator against encoding/json: on documents
// with nesting, escapes, odd member names and multi-byte text, the span
// of every path in the document decodes to the value at that path, and
// paths that are not there resolve to their deepest ancestor.
func TestLocatePaths(t *testing.T) {
	docs := []string{
		`{"a": [1, {"b": "x\"]}", "c.d": [true, null]}, [[]]], "e": {"f[0]": -1.5e3, "": {}}, "ü": "ö"}`,
		"\xef\xbb\xbf [ {\"k\" : \"v\" } ,\n\t2 ]",
		`"just a string"`,
		`{"tasks":[{"name":"t0","before":[{"wait":"c","ge":1}]},{"name":"t1"}]}`,
	}
	examples, _ := filepath.Glob(filepath.Join("..", "..", "verify", "testdata", "codes", "*.json"))
	amkExamples, _ := filepath.Glob(filepath.Join("..", "..", "schedule", "amk", "testdata", "*.json"))
	for _, f := range append(examples, amkExamples...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	if len(docs) < 20 {
		t.Fatalf("%d documents", len(docs))
	}
	for _, doc := range docs {
		checkLocate(t, doc)
	}
	// Garbage never panics and resolves nothing beyond what is there.
	for _, doc := range []string{"", "{", `{"a":`, `[1,`, `{"a" 1}`, "\x00", `{"a":[{"b":`} {
		locatePaths([]byte(doc), []string{"$", "$.a", "$.a[0].b", "$[0]"})
	}
}

// checkLocate checks locatePaths on one JSON document against
// encoding/json: every path of the document is located exactly, its span
// decodes to the value there, and paths that are not there resolve to an
// ancestor.
func checkLocate(t *testing.T, doc string) {
	t.Helper()
	var v any
	if err := json.Unmarshal(bytes.TrimPrefix([]byte(doc), []byte("\xef\xbb\xbf")), &v); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{}
	var walk func(p string, v any)
	walk = func(p string, v any) {
		want[p] = v
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				walk(p+"."+k, c)
			}
		case []any:
			for i, c := range x {
				walk(p+"["+strconv.Itoa(i)+"]", c)
			}
		}
	}
	walk("$", v)
	var paths []string
	for p := range want {
		paths = append(paths, p)
	}
	paths = append(paths, "$.nope", "$.a[1].b.deeper", "$.a[7]")
	got := locatePaths([]byte(doc), paths)
	for p, w := range want {
		sp, ok := got[p]
		if !ok || !sp.exact {
			t.Errorf("%s: %s not located (%+v)", doc, p, sp)
			continue
		}
		var g any
		if err := json.Unmarshal([]byte(doc[sp.start:sp.end]), &g); err != nil || !reflect.DeepEqual(g, w) {
			t.Errorf("%s: %s at [%d,%d) is %q, want %v", doc, p, sp.start, sp.end, doc[sp.start:sp.end], w)
		}
		if sp.member >= 0 && doc[sp.member] != '"' {
			t.Errorf("%s: %s: member at %d is %q", doc, p, sp.member, doc[sp.member:])
		}
	}
	if _, ok := want["$.a[1].b"]; ok {
		if sp := got["$.a[1].b.deeper"]; sp.exact || sp.start != got["$.a[1].b"].start {
			t.Errorf("$.a[1].b.deeper resolves to %+v", sp)
		}
	}
	if sp, ok := got["$.nope"]; !ok || sp.exact || sp.start != got["$"].start {
		t.Errorf("$.nope resolves to %+v", sp)
	}
}

// FuzzLocatePaths holds the locator to encoding/json on every valid UTF-8
// JSON document without repeated keys (where the two may pick different
// members), and to not panicking on anything.
func FuzzLocatePaths(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"x"}]}`, `[[],{}]`, `{"a.b":{"c[0]":1}}`, "\"s\"", `{"a":1,"a":2}`, `{`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		locatePaths([]byte(doc), []string{"$", "$.a", "$.a[0]", "$[0].b", "$.a[1].b"})
		// The readers reject invalid UTF-8 (invalid.syntax), so no path
		// names such a key; encoding/json would decode it to U+FFFD.
		if !json.Valid([]byte(doc)) || !utf8.ValidString(doc) || len(doc) > 4096 || hasRepeatedKey(doc) {
			return
		}
		checkLocate(t, doc)
	})
}

// hasRepeatedKey reports whether some object of the valid document doc
// repeats a key.
func hasRepeatedKey(doc string) bool {
	dec := json.NewDecoder(strings.NewReader(doc))
	type frame struct {
		obj  bool
		keys map[string]bool
		key  bool // the next string token is a key
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		if top != nil && top.obj && top.key {
			if s, ok := tok.(string); ok {
				if top.keys[s] {
					return true
				}
				top.keys[s] = true
				top.key = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			if top != nil && top.obj {
				top.key = true
			}
			stack = append(stack, frame{obj: true, keys: map[string]bool{}, key: true})
			continue
		case json.Delim('['):
			if top != nil && top.obj {
				top.key = true
			}
			stack = append(stack, frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && stack[len(stack)-1].obj {
				stack[len(stack)-1].key = true
			}
			continue
		}
		if top != nil && top.obj {
			top.key = true
		}
	}
}

// applyPatch is a reference RFC 6902 add/remove/replace on decoded JSON.
func applyPatch(t *testing.T, doc any, ops []patchOp) any {
	t.Helper()
	for _, op := range ops {
		toks, _ := pointerTokens(op.Path)
		var val any
		if len(op.Value) > 0 {
			if err := json.Unmarshal(op.Value, &val); err != nil {
				t.Fatal(err)
			}
		}
		var set func(cur any, toks []string) any
		set = func(cur any, toks []string) any {
			if len(toks) == 0 {
				return val
			}
			k := toks[0]
			switch x := cur.(type) {
			case map[string]any:
				if len(toks) == 1 {
					if op.Op == "remove" {
						delete(x, k)
					} else {
						x[k] = val
					}
					return x
				}
				x[k] = set(x[k], toks[1:])
				return x
			case []any:
				i := len(x)
				if k != "-" {
					i, _ = strconv.Atoi(k)
				}
				if len(toks) == 1 {
					switch op.Op {
					case "remove":
						return append(x[:i:i], x[i+1:]...)
					case "add":
						return append(x[:i:i], append([]any{val}, x[i:]...)...)
					default:
						x[i] = val
						return x
					}
				}
				x[i] = set(x[i], toks[1:])
				return x
			}
			t.Fatalf("pointer %s into a scalar", op.Path)
			return nil
		}
		doc = set(doc, toks)
	}
	return doc
}

// TestPatchReplacements applies the byte replacements a patch maps to and
// compares the result with the patch applied to the decoded document.
func TestPatchReplacements(t *testing.T) {
	doc := "{\"format\": \"megaproof/v1\",\n \"tasks\": [\n  {\"name\": \"a\", \"before\": [{\"wait\": \"c\", \"ge\": 2}, {\"wait\": \"d\", \"ge\": 1}]},\n  {\"name\": \"b\", \"after\": []},\n  {\"name\": \"x/y~\", \"n\": {}}\n ]}"
	for _, tt := range []struct {
		ops  string
		maps bool
	}{
		{`[{"op":"replace","path":"/tasks/0/before/0/ge","value":1}]`, true},
		{`[{"op":"remove","path":"/tasks/0/before/0"}]`, true},
		{`[{"op":"remove","path":"/tasks/0/before/1"}]`, true},
		{`[{"op":"remove","path":"/tasks/0/before/1"},{"op":"replace","path":"/tasks/1/name","value":"bb"}]`, true},
		{`[{"op":"add","path":"/tasks/1/after/0","value":{"signal":"c"}}]`, true},
		{`[{"op":"add","path":"/tasks/1/after/-","value":{"signal":"c"}}]`, true},
		{`[{"op":"add","path":"/tasks/0/before/-","value":{"signal":"c"}}]`, true},
		{`[{"op":"add","path":"/tasks/0/before/1","value":{"signal":"c"}}]`, true},
		{`[{"op":"add","path":"/tasks/2/n/k","value":[1, 2]}]`, true},
		{`[{"op":"add","path":"/tasks/0/worker","value":3}]`, true},
		{`[{"op":"remove","path":"/tasks/2/x~1y~0"}]`, false},
		{`[{"op":"replace","path":"/tasks/2/name","value":"z"},{"op":"remove","path":"/format"}]`, true},
		{`[{"op":"remove","path":"/tasks/0/before/0"},{"op":"remove","path":"/tasks/0/before/0"}]`, false},
		{`[{"op":"move","from":"/tasks/0","path":"/tasks/1"}]`, false},
		{`[{"op":"replace","path":"/tasks/9","value":1}]`, false},
	} {
		var ops []patchOp
		if err := json.Unmarshal([]byte(tt.ops), &ops); err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, op := range ops {
			paths = append(append(paths, pointerPaths(op.Path)...), parentPaths(op.Path)...)
		}
		reps, ok := patchReplacements(newDocIndex([]byte(doc), paths), ops)
		if ok != tt.maps {
			t.Errorf("%s: maps %v, want %v", tt.ops, ok, tt.maps)
			continue
		}
		if !ok {
			continue
		}
		sort.Slice(reps, func(i, j int) bool { return reps[i].start > reps[j].start })
		got := []byte(doc)
		for _, r := range reps {
			got = append(append(append([]byte(nil), got[:r.start]...), r.text...), got[r.end:]...)
		}
		var g, orig any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Errorf("%s: patched bytes are not JSON: %v\n%s", tt.ops, err, got)
			continue
		}
		json.Unmarshal([]byte(doc), &orig)
		if w := applyPatch(t, orig, ops); !reflect.DeepEqual(g, w) {
			t.Errorf("%s: patched to\n%s\nwant %v", tt.ops, got, w)
		}
	}
}

// TestSARIFSeveralFiles writes one run for several files, one artifact
// each, and uses flag parsing like the other formats.
func TestSARIFSeveralFiles(t *testing.T) {
	files := sarifInputs(t)
	code, out, errOut := runCLI(t, "", append([]string{"verify", "--format", "sarif"}, files...)...)
	if code != exitUnsafe {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	validateSARIF(t, []byte(out))
	var log sarifOut
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatal(err)
	}
	if len(log.Runs) != 1 || len(log.Runs[0].Artifacts) != len(files) {
		t.Fatalf("%d runs, %d artifacts for %d files", len(log.Runs), len(log.Runs[0].Artifacts), len(files))
	}
	for _, res := range log.Runs[0].Results {
		for _, l := range res.Locations {
			if l.PhysicalLocation != nil && l.PhysicalLocation.ArtifactLocation.Index >= len(files) {
				t.Errorf("artifact index %d", l.PhysicalLocation.ArtifactLocation.Index)
			}
		}
	}
	// A file that cannot be read and standard input: no region, still valid.
	doc, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, string(doc), "verify", "--format", "sarif", filepath.Join(t.TempDir(), "missing.json"), "-")
	if code != exitUnsafe {
		t.Fatalf("missing and stdin: exit %d: %s", code, errOut)
	}
	validateSARIF(t, []byte(out))
	if !strings.Contains(out, `"ruleId":"invalid.io"`) || !strings.Contains(out, `"uri":"-"`) {
		t.Errorf("no invalid.io result or no standard input artifact:\n%.2000s", out)
	}
	// The embedded default: logical locations only, still valid.
	code, out, errOut = runCLI(t, "", "verify", "--format", "sarif")
	if code != exitSafe {
		t.Fatalf("default: exit %d: %s", code, errOut)
	}
	validateSARIF(t, []byte(out))
	for _, args := range [][]string{{"verify", "--format", "xml"}, {"verify", "--format", "sarif", "--json"}, {"verify", "--format", "sarif", "--stream"}} {
		if code, _, _ := runCLI(t, "", args...); code != exitInvalid {
			t.Errorf("%q: exit %d, want %d", args, code, exitInvalid)
		}
	}
}

// FuzzPatchReplacements draws one to three add, remove and replace
// operations on the containers and values of a valid document and holds
// the byte replacements they map to, whenever they map, to the patch
// applied to the decoded document.
func FuzzPatchReplacements(f *testing.F) {
	f.Add(`{"a":[1,{"b":"x"}],"c":{}}`, uint64(1))
	f.Add("{\"tasks\": [\n {\"name\": \"t\", \"before\": [{\"wait\": \"c\"}]}\n]}", uint64(7))
	f.Add(`[[],[1 , 2],{"k":null}]`, uint64(42))
	f.Fuzz(func(t *testing.T, doc string, seed uint64) {
		if !json.Valid([]byte(doc)) || !utf8.ValidString(doc) || len(doc) > 2048 || hasRepeatedKey(doc) {
			return
		}
		var root any
		if err := json.Unmarshal([]byte(doc), &root); err != nil {
			return
		}
		// Every container and value by pointer.
		type node struct {
			ptr string
			v   any
		}
		var nodes []node
		var walk func(ptr string, v any)
		walk = func(ptr string, v any) {
			nodes = append(nodes, node{ptr, v})
			switch x := v.(type) {
			case map[string]any:
				for k, c := range x {
					walk(ptr+"/"+strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1"), c)
				}
			case []any:
				for i, c := range x {
					walk(ptr+"/"+strconv.Itoa(i), c)
				}
			}
		}
		walk("", root)
		sort.Slice(nodes, func(i, j int) bool { return nodes[i].ptr < nodes[j].ptr })
		next := func(n int) int {
			seed = seed*6364136223846793005 + 1442695040888963407
			return int((seed >> 33) % uint64(n))
		}
		var ops []patchOp
		for range 1 + next(3) {
			nd := nodes[next(len(nodes))]
			val := json.RawMessage(`{"new":[1,"two"]}`)
			switch next(3) {
			case 0:
				if nd.ptr != "" {
					ops = append(ops, patchOp{Op: "replace", Path: nd.ptr, Value: val})
				}
			case 1:
				if nd.ptr != "" {
					ops = append(ops, patchOp{Op: "remove", Path: nd.ptr})
				}
			default:
				switch x := nd.v.(type) {
				case []any:
					tok := "-"
					if k := next(len(x) + 2); k <= len(x) {
						tok = strconv.Itoa(k)
					}
					ops = append(ops, patchOp{Op: "add", Path: nd.ptr + "/" + tok, Value: val})
				case map[string]any:
					ops = append(ops, patchOp{Op: "add", Path: nd.ptr + "/n" + strconv.Itoa(next(3)), Value: val})
				}
			}
		}
		if len(ops) == 0 {
			return
		}
		var paths []string
		for _, op := range ops {
			paths = append(append(paths, pointerPaths(op.Path)...), parentPaths(op.Path)...)
		}
		reps, ok := patchReplacements(newDocIndex([]byte(doc), paths), ops)
		if !ok {
			return
		}
		// The reference: the operations in order on the decoded document,
		// each of which must apply (else the mapping should have refused).
		var ref any
		json.Unmarshal([]byte(doc), &ref)
		if !patchApplies(t, ref, ops) {
			t.Fatalf("%s: %s maps, but does not apply in order", doc, mustJSON(ops))
		}
		sort.Slice(reps, func(i, j int) bool { return reps[i].start > reps[j].start })
		got := []byte(doc)
		for _, r := range reps {
			got = append(append(append([]byte(nil), got[:r.start]...), r.text...), got[r.end:]...)
		}
		var g any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("%s: %s: patched bytes are not JSON: %v\n%s", doc, mustJSON(ops), err, got)
		}
		json.Unmarshal([]byte(doc), &ref)
		if w := applyPatch(t, ref, ops); !reflect.DeepEqual(g, w) {
			t.Fatalf("%s: %s: patched to\n%s\nwant %s", doc, mustJSON(ops), got, mustJSON(w))
		}
	})
}

// patchApplies reports whether every operation finds its target in turn:
// the value to replace or remove, the container to add to.
func patchApplies(t *testing.T, doc any, ops []patchOp) bool {
	for _, op := range ops {
		toks, _ := pointerTokens(op.Path)
		if len(toks) == 0 {
			return false
		}
		cur := doc
		for _, k := range toks[:len(toks)-1] {
			switch x := cur.(type) {
			case map[string]any:
				c, ok := x[k]
				if !ok {
					return false
				}
				cur = c
			case []any:
				i, err := strconv.Atoi(k)
				if err != nil || i < 0 || i >= len(x) {
					return false
				}
				cur = x[i]
			default:
				return false
			}
		}
		k := toks[len(toks)-1]
		switch x := cur.(type) {
		case map[string]any:
			if _, ok := x[k]; !ok && op.Op != "add" {
				return false
			}
		case []any:
			if k == "-" {
				if op.Op != "add" {
					return false
				}
				break
			}
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i > len(x) || i == len(x) && op.Op != "add" {
				return false
			}
		default:
			return false
		}
		doc = applyPatch(t, doc, []patchOp{op})
	}
	return true
}
