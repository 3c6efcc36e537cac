package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/megaproof/megaproof/internal/progen"
	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compiled compiles the embedded schemas once with a JSON Schema 2020-12
// validator.
var compiled = sync.OnceValues(func() (map[string]*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	ids := map[string]string{}
	for _, s := range schemas {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(s.doc))
		if err != nil {
			return nil, err
		}
		id, _ := doc.(map[string]any)["$id"].(string)
		if err := c.AddResource(id, doc); err != nil {
			return nil, err
		}
		ids[s.name] = id
	}
	out := map[string]*jsonschema.Schema{}
	for name, id := range ids {
		sch, err := c.Compile(id)
		if err != nil {
			return nil, err
		}
		out[name] = sch
	}
	return out, nil
})

// validate checks one JSON document against the named embedded schema and
// returns the validator's error, nil when the document is valid.
func validate(t *testing.T, schema string, doc []byte) error {
	t.Helper()
	all, err := compiled()
	if err != nil {
		t.Fatalf("compiling the schemas: %v", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatalf("not JSON: %v\n%s", err, doc)
	}
	return all[schema].Validate(inst)
}

// checkResultSchema validates every line of verify --json output against
// the result schema.
func checkResultSchema(t *testing.T, out string) {
	t.Helper()
	if out == "" {
		t.Fatal("no output to validate")
	}
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if err := validate(t, "result", []byte(line)); err != nil {
			t.Errorf("result schema: %v\nin %s", err, line)
		}
	}
}

// TestSchemaRejects makes sure the result schema can fail.
func TestSchemaRejects(t *testing.T) {
	const stats = `"stats":{"tasks":0,"threads":0,"steps":0,"accesses":0,"conflict_pairs":0,"engine":""}`
	for _, doc := range []string{
		`{"file":"f","verdict":"maybe","findings":[],` + stats + `}`,
		`{"file":"f","verdict":"safe","findings":[{"code":"race.rw","message":""}],` + stats + `}`,
		`{"file":"f","verdict":"safe","findings":[],` + stats + `,"extra":1}`,
		`{"file":"f","verdict":"safe","findings":[{"code":"occupancy","message":"","witness":[{"thread":-1,"step":0}]}],` + stats + `}`,
		`{"file":"f","verdict":"unsafe","findings":[{"code":"occupancy","message":"","witness":[{"thread":1,"step":0,"hold":1,"at":2}]}],` + stats + `}`,
		`{"file":"f","verdict":"unsafe","findings":[{"code":"occupancy","message":"","witness":[{"advance":false}]}],` + stats + `}`,
		`{"file":"f","verdict":"unsafe","findings":[{"code":"occupancy","message":"","witness":[{"hold":1}]}],` + stats + `}`,
		`{"file":"f","verdict":"unsafe","findings":[{"code":"occupancy","message":"","witness":[{"advance":true,"step":0}]}],` + stats + `}`,
		`{"file":"f","verdict":"safe","findings":[]}`,
		`{"file":"f","verdict":"safe","findings":[],"stats":{"tasks":0,"threads":0,"steps":0,"accesses":0,"conflict_pairs":0,"engine":"","games":1}}`,
		`{"file":"f","verdict":"unsafe","findings":[{"code":"race.raw","message":"","tasks":[0]}],` + stats + `}`,
	} {
		if err := validate(t, "result", []byte(doc)); err == nil {
			t.Errorf("the result schema accepts %s", doc)
		}
	}
}

// TestSchemaCoversStructs requires every JSON field of the types behind
// verify --json to be a property of the schema, and every property to be
// a field: the schema cannot drift from the code in either direction.
func TestSchemaCoversStructs(t *testing.T) {
	var s map[string]any
	if err := json.Unmarshal(resultSchema, &s); err != nil {
		t.Fatal(err)
	}
	defs := s["$defs"].(map[string]any)
	for _, tt := range []struct {
		typ    reflect.Type
		schema map[string]any
		// forms are the properties that only some forms of the object
		// require (an event's "thread" and "step"), and extra those of
		// its JSON form alone (a hold's "hold" and "at", kept in Thread
		// and Step in Go).
		forms, extra []string
	}{
		{typ: reflect.TypeFor[verify.Report](), schema: s},
		{typ: reflect.TypeFor[verify.ReportFinding](), schema: defs["finding"].(map[string]any)},
		{typ: reflect.TypeFor[verify.Stats](), schema: defs["stats"].(map[string]any)},
		{typ: reflect.TypeFor[verify.ReportEvent](), schema: defs["event"].(map[string]any), forms: []string{"thread", "step"}, extra: []string{"hold", "at"}},
		{typ: reflect.TypeFor[verify.ReportSpan](), schema: defs["span"].(map[string]any)},
	} {
		props := tt.schema["properties"].(map[string]any)
		if tt.schema["additionalProperties"] != false {
			t.Errorf("%s: the schema allows additional properties", tt.typ)
		}
		required := map[string]bool{}
		if r, ok := tt.schema["required"].([]any); ok {
			for _, r := range r {
				required[r.(string)] = true
			}
		}
		oneOf, _ := tt.schema["oneOf"].([]any)
		for _, form := range oneOf {
			for _, r := range form.(map[string]any)["required"].([]any) {
				if !slices.Contains(tt.forms, r.(string)) && !slices.Contains(tt.extra, r.(string)) && r != "advance" {
					t.Errorf("%s: a form requires %q", tt.typ, r)
				}
			}
		}
		fields := map[string]bool{}
		for _, name := range tt.extra {
			fields[name] = true
		}
		for i := range tt.typ.NumField() {
			f := tt.typ.Field(i)
			tag := f.Tag.Get("json")
			name, opts, _ := strings.Cut(tag, ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			fields[name] = true
			if _, ok := props[name]; !ok {
				t.Errorf("%s.%s is %q in JSON, which the result schema does not have", tt.typ, f.Name, name)
			}
			if omit := strings.Contains(opts, "omitempty"); omit == required[name] && !slices.Contains(tt.forms, name) {
				t.Errorf("%s.%s (%q): omitempty %v, but required in the schema %v", tt.typ, f.Name, name, omit, required[name])
			}
		}
		for name := range props {
			if !fields[name] {
				t.Errorf("the result schema has %q, which %s does not", name, tt.typ)
			}
		}
	}
}

// TestSchemaCodes requires every documented code to match the schema's
// code pattern.
func TestSchemaCodes(t *testing.T) {
	var s struct {
		Defs struct {
			Finding struct {
				Properties struct {
					Code struct{ Pattern string }
				}
			}
		} `json:"$defs"`
	}
	if err := json.Unmarshal(resultSchema, &s); err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(s.Defs.Finding.Properties.Code.Pattern)
	for _, d := range codeDocs {
		if !re.MatchString(d.code) {
			t.Errorf("code %s does not match the schema's pattern %s", d.code, re)
		}
	}
}

// testdataPrograms returns every JSON program under a testdata directory of
// the module.
func testdataPrograms(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "python" || strings.HasPrefix(d.Name(), ".")) && path != "../.." {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".json") && strings.Contains(filepath.ToSlash(path), "/testdata/") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 20 {
		t.Fatalf("only %d testdata programs found", len(files))
	}
	return files
}

// TestSchemaAllOutputs validates verify --json of every testdata program
// of the module and of a sample of random programs against the result
// schema with a real JSON Schema validator, and checks that the output
// decodes into verify.Report.
func TestSchemaAllOutputs(t *testing.T) {
	files := testdataPrograms(t)
	dir := t.TempDir()
	n := 40
	if testing.Short() {
		n = 12
	}
	for i := range n {
		o := progen.Small()
		if i%4 == 3 {
			o = progen.Medium()
		}
		b, err := schedule.Marshal(progen.Program(o).Example(i))
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, fmt.Sprintf("progen-%02d.json", i))
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	// A small state budget keeps the semaphore programs of the sample
	// quick; their inconclusive records are validated too.
	code, out, errOut := runCLI(t, "", append([]string{"verify", "--json", "--max-states", "10000"}, files...)...)
	if code == exitInternal {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	checkResultSchema(t, out)
	rs := decodeReports(t, out)
	if len(rs) != len(files) {
		t.Fatalf("%d records for %d files", len(rs), len(files))
	}
	verdicts := map[verify.Verdict]int{}
	for _, r := range rs {
		verdicts[r.Verdict]++
	}
	if verdicts[verify.Safe] == 0 || verdicts[verify.Unsafe] == 0 {
		t.Errorf("verdicts %v: the sample lacks safe or unsafe programs", verdicts)
	}
	// Every program schema must accept the megaproof programs.
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, format, err := decode(data, verify.Config{}); format == formatMegaproof && err == nil {
			if err := validate(t, "program", data); err != nil {
				t.Errorf("%s: program schema: %v", f, err)
			}
		}
	}
}

// TestProgramSchema checks that canonical encodings validate against the
// program schema and that malformed ones do not.
func TestProgramSchema(t *testing.T) {
	docs := map[string][]byte{}
	for _, p := range []*schedule.Program{handoffProgram(t, 1), racyProgram(t)} {
		b, _ := schedule.Marshal(p)
		docs[p.Name] = b
	}
	def, err := defaultProgram()
	if err != nil {
		t.Fatal(err)
	}
	docs["default"], _ = schedule.Marshal(def)
	tiny, err := os.ReadFile("testdata/default.json")
	if err != nil {
		t.Fatal(err)
	}
	docs["tiny"] = tiny
	var all bytes.Buffer
	b := schedule.NewBuilder("all", schedule.Launch{SMs: 2, PerSM: 2, Workers: 2})
	ar := b.Arena("page", 128)
	x := b.BufferIn("x", schedule.KindScratch, 64, ar, 0)
	y := b.BufferIn("y", schedule.KindOutput, 64, ar, 64)
	c := b.CounterInit("c", 3, 64)
	g := b.Barrier("g", 2)
	s := b.Semaphore("s", 1)
	b.Task("a").On(0).Op("op").Param("k", -1).Sync(g).Acquire(s, 1).Wait(c, 4, schedule.Relaxed(), schedule.WithScope(schedule.ScopeSys)).FenceBefore(schedule.ScopeGPU).
		WriteTile(x, 0, 8, 4, 16).Signal(c, 2, schedule.Relaxed()).Release(s, 1).Arrive(g).FenceAfter(schedule.ScopeCTA)
	b.Task("b").Read(x, 0, 64).Write(y, 0, 64)
	pa, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	schedule.Encode(&all, pa)
	docs["all"] = all.Bytes()
	for name, doc := range docs {
		if err := validate(t, "program", doc); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, bad := range []string{
		`{"format":"megaproof/v1","launch":{"sms":1,"workers":1,"grid":2}}`,
		`{"format":"megaproof/v1","launch":{"sms":0,"workers":1}}`,
		`{"format":"megaproof/v1","launch":{"sms":1,"workers":1},"tasks":[{"name":"t","before":[{"wait":"c"}]}]}`,
		`{"format":"megaproof/v1","launch":{"sms":1,"workers":1},"tasks":[{"name":"t","before":[{"sync":"g","order":"relaxed"}]}]}`,
		`{"format":"megaproof/v1","launch":{"sms":1,"workers":1},"buffers":[{"name":"x","kind":"texture","size":1}]}`,
	} {
		if err := validate(t, "program", []byte(bad)); err == nil {
			t.Errorf("program schema accepts %s", bad)
		}
		if _, err := schedule.Unmarshal([]byte(bad)); err == nil {
			t.Errorf("schedule.Unmarshal accepts %s, which the schema rejects", bad)
		}
	}
}

// TestAMKSchema checks that the AutoMegaKernel test programs validate
// against the AMK schema, and that documents megaproof cannot read do not.
func TestAMKSchema(t *testing.T) {
	files, err := filepath.Glob("../../schedule/amk/testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no AutoMegaKernel test programs (%v)", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := validate(t, "amk", data); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, bad := range []string{
		`{"meta":1}`,
		`{"ir_version":"0.2.0","buffers":[],"counters":[]}`,
		`{"buffers":[],"counters":[],"tasks":[{"id":0,"op":"GEMV_TILE","inputs":[],"outputs":[],"out_counter":0,"waits":[{"counter":0,"threshold":0}]}]}`,
		`{"buffers":[{"id":0,"name":"x","kind":"TEXTURE","dtype":"F32","shape":[4]}],"counters":[],"tasks":[]}`,
		`{"buffers":[],"counters":[],"tasks":[{"id":0,"op":"COPY","inputs":[0,1,2,3,4,5,6,7,8],"outputs":[],"out_counter":0}]}`,
	} {
		if err := validate(t, "amk", []byte(bad)); err == nil {
			t.Errorf("the AMK schema accepts %s", bad)
		}
	}
}

func TestSchemaCommand(t *testing.T) {
	for _, tt := range []struct {
		args  []string
		title string
	}{
		{nil, "megaproof verify --json report"},
		{[]string{"result"}, "megaproof verify --json report"},
		{[]string{"program"}, "megaproof/v1 program"},
		{[]string{"amk"}, "AutoMegaKernel IR JSON read by megaproof"},
	} {
		code, out, _ := runCLI(t, "", append([]string{"schema"}, tt.args...)...)
		var s struct{ Title string }
		if code != exitSafe || json.Unmarshal([]byte(out), &s) != nil || s.Title != tt.title {
			t.Errorf("schema %q: exit %d, title %q; want %q", tt.args, code, s.Title, tt.title)
		}
	}
}
