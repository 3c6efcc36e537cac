package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify"
)

// runCLI runs the command in-process with stdin as standard input and
// returns its exit status and output.
func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// writeProgram encodes p into a file in a fresh temporary directory.
func writeProgram(t *testing.T, name string, p *schedule.Program) string {
	t.Helper()
	b, err := schedule.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, name, b)
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// handoffProgram is a two-worker producer/consumer; threshold 1 is safe,
// threshold 2 deadlocks (only one signal exists).
func handoffProgram(t *testing.T, threshold uint64) *schedule.Program {
	t.Helper()
	b := schedule.NewBuilder("handoff", schedule.Launch{Target: "H200", SMs: 132, PerSM: 1, Workers: 2, Cooperative: true})
	x := b.Buffer("x", schedule.KindScratch, 256)
	y := b.Buffer("y", schedule.KindOutput, 256)
	ready := b.Counter("ready")
	b.Task("produce").On(0).Op("fill").Write(x, 0, 256).Signal(ready, 1)
	b.Task("consume").On(1).Op("copy").Wait(ready, threshold).Read(x, 0, 256).Write(y, 0, 256)
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// racyProgram has a consumer that reads x without waiting for its producer.
func racyProgram(t *testing.T) *schedule.Program {
	t.Helper()
	p := handoffProgram(t, 1)
	p.Tasks[1].Before = nil
	return p
}

// decodeReports parses verify --json output, one object per line, into the
// exported report type, refusing fields it does not have.
func decodeReports(t *testing.T, out string) []verify.Report {
	t.Helper()
	var rs []verify.Report
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var r verify.Report
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		rs = append(rs, r)
	}
	return rs
}

func TestUsage(t *testing.T) {
	tests := []struct {
		args   []string
		code   int
		stdout string
		stderr string
		reason string
	}{
		{nil, exitInvalid, "", "Usage:", "no command is a usage error"},
		{[]string{"help"}, exitSafe, "megaproof verify", "", "help goes to stdout"},
		{[]string{"-h"}, exitSafe, "megaproof explain", "", "-h is help"},
		{[]string{"frobnicate"}, exitInvalid, "", `unknown command "frobnicate"`, "unknown commands are usage errors"},
		{[]string{"verify", "--bogus"}, exitInvalid, "", "flag provided but not defined", "unknown flags are usage errors"},
		{[]string{"dot", "a.json", "b.json"}, exitInvalid, "", "usage: megaproof dot [flags] [FILE]", "dot draws one file"},
		{[]string{"schema", "nope"}, exitInvalid, "", "usage: megaproof schema", "three schemas exist"},
		{[]string{"verify", "--stream", "f.json"}, exitInvalid, "", "--stream reads standard input", "a stream has no files"},
		{[]string{"verify", "--max-states", "0"}, exitInvalid, "", "must be positive", "a budget of nothing"},
		{[]string{"verify", "--iterations", "0"}, exitInvalid, "", "--iterations must be between 1 and", "no iteration is not the default two"},
		{[]string{"verify", "--iterations", "65537"}, exitInvalid, "", "--iterations must be between 1 and", "past the unrolling limit"},
		{[]string{"verify", "--max-bytes", "12XB"}, exitInvalid, "", "positive byte count", "unknown size suffix"},
		{[]string{"help", "verify"}, exitSafe, "--max-bytes limit", "", "help CMD is CMD -h"},
		{[]string{"--version"}, exitSafe, "megaproof ", "", "--version prints the build"},
		{[]string{"explain", "a", "b"}, exitInvalid, "", "usage: megaproof explain", "one code at a time"},
		{[]string{"corpus", "extra"}, exitInvalid, "", "usage: megaproof corpus", "corpus takes no arguments"},
		{[]string{"corpus", "--every", "0"}, exitInvalid, "", "usage: megaproof corpus", "a sample needs a positive stride"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, "_"), func(t *testing.T) {
			code, out, errOut := runCLI(t, "", tt.args...)
			if code != tt.code || !strings.Contains(out, tt.stdout) || !strings.Contains(errOut, tt.stderr) {
				t.Errorf("run(%q) = %d\nstdout: %s\nstderr: %s\nwant %d, stdout with %q, stderr with %q (%s)", tt.args, code, out, errOut, tt.code, tt.stdout, tt.stderr, tt.reason)
			}
		})
	}
}

// TestVerifyDefault runs the newcomer command: verify with no file checks
// the embedded Llama default and must call it safe.
func TestVerifyDefault(t *testing.T) {
	code, out, errOut := runCLI(t, "", "verify")
	if code != exitSafe {
		t.Fatalf("megaproof verify = %d; want 0\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if !strings.HasPrefix(out, defaultFile+` (program "llama`) || !strings.HasSuffix(out, ": safe: "+provedLine+"\n") || strings.Count(out, "\n") != 1 {
		t.Errorf("unexpected text output: %q", out)
	}
	_, out, _ = runCLI(t, "", "verify", "-v")
	if lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[1], "  analysed ") || !strings.Contains(lines[1], "conflicting pairs ordered; engine greedy") {
		t.Errorf("verify -v does not add the statistics line: %q", out)
	}
	code, out, _ = runCLI(t, "", "verify", "--json")
	if code != exitSafe {
		t.Fatalf("megaproof verify --json = %d", code)
	}
	rs := decodeReports(t, out)
	if len(rs) != 1 || rs[0].File != defaultFile || rs[0].Verdict != verify.Safe || rs[0].Format != schedule.Format || len(rs[0].Findings) != 0 || rs[0].Stats.Tasks == 0 {
		t.Errorf("default report = %+v", rs)
	}
	if !strings.Contains(out, `"findings":[]`) {
		t.Errorf("findings must be an empty array, not absent: %s", out)
	}
	checkResultSchema(t, out)
}

func TestVerifyExitStatus(t *testing.T) {
	safe := writeProgram(t, "safe.json", handoffProgram(t, 1))
	deadlock := writeProgram(t, "deadlock.json", handoffProgram(t, 2))
	notJSON := writeFile(t, "notes.txt", []byte("not json at all\n"))
	missing := filepath.Join(t.TempDir(), "missing.json")
	tests := []struct {
		name   string
		files  []string
		code   int
		reason string
	}{
		{"safe", []string{safe}, exitSafe, "a safe program"},
		{"unsafe", []string{deadlock}, exitUnsafe, "a deadlock"},
		{"invalid", []string{notJSON}, exitInvalid, "not JSON"},
		{"missing", []string{missing}, exitInvalid, "an unreadable file is invalid input"},
		{"missing+unsafe", []string{missing, deadlock}, exitUnsafe, "an unreadable file does not stop the batch"},
		{"safe+unsafe", []string{safe, deadlock}, exitUnsafe, "any unsafe file makes the batch unsafe"},
		{"invalid+unsafe", []string{notJSON, deadlock}, exitUnsafe, "unsafe beats invalid"},
		{"safe+invalid", []string{safe, notJSON}, exitInvalid, "invalid beats safe"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, mode := range [][]string{{"verify"}, {"verify", "--json"}} {
				code, out, errOut := runCLI(t, "", append(mode, tt.files...)...)
				if code != tt.code {
					t.Errorf("%q = %d; want %d (%s)\nstdout: %s\nstderr: %s", mode, code, tt.code, tt.reason, out, errOut)
				}
			}
		})
	}
}

func TestWorse(t *testing.T) {
	for _, tt := range []struct{ a, b, want int }{
		{exitSafe, exitInconclusive, exitInconclusive},
		{exitInconclusive, exitInvalid, exitInvalid},
		{exitInvalid, exitUnsafe, exitUnsafe},
		{exitUnsafe, exitInconclusive, exitUnsafe},
		{exitInconclusive, exitSafe, exitInconclusive},
	} {
		if got := worse(tt.a, tt.b); got != tt.want {
			t.Errorf("worse(%d, %d) = %d; want %d", tt.a, tt.b, got, tt.want)
		}
	}
	for v, want := range map[verify.Verdict]int{verify.Safe: 0, verify.Unsafe: 1, verify.Invalid: 2, verify.Inconclusive: 3} {
		if got := exitStatus(v); got != want {
			t.Errorf("exitStatus(%s) = %d; want %d", v, got, want)
		}
	}
}

func TestVerifyInvalidJSON(t *testing.T) {
	notJSON := writeFile(t, "notes.txt", []byte("not json at all\n"))
	badRef := writeFile(t, "badref.json", []byte(`{"format":"megaproof/v1","launch":{"sms":1,"workers":1},"tasks":[{"name":"t","before":[{"wait":"nope","ge":1}]}]}`))
	code, out, _ := runCLI(t, "", "verify", "--json", notJSON, badRef)
	if code != exitInvalid {
		t.Fatalf("exit %d; want 2", code)
	}
	checkResultSchema(t, out)
	rs := decodeReports(t, out)
	if len(rs) != 2 {
		t.Fatalf("%d reports; want 2", len(rs))
	}
	if r := rs[0]; r.File != notJSON || r.Verdict != verify.Invalid || r.Format != "" || len(r.Findings) != 1 || r.Findings[0].Code != schedule.CodeSyntax || r.Findings[0].Path != "$" {
		t.Errorf("non-JSON report = %+v", r)
	}
	if r := rs[1]; r.Verdict != verify.Invalid || r.Format != schedule.Format || r.Findings[0].Code != schedule.CodeReference || r.Findings[0].Path != "$.tasks[0].before[0].wait" {
		t.Errorf("dangling-reference report = %+v", r)
	}
	code, out, _ = runCLI(t, "", "verify", badRef)
	want := badRef + ": invalid: 1 finding\n  invalid.reference at $.tasks[0].before[0].wait: no counter named \"nope\"\n"
	if code != exitInvalid || out != want {
		t.Errorf("text output:\n%s\nwant:\n%s", out, want)
	}
}

// TestVerifyUnsafe checks findings name tasks and carry witnesses that
// schedule.CheckWitness accepts.
func TestVerifyUnsafe(t *testing.T) {
	tests := []struct {
		name   string
		p      *schedule.Program
		code   string
		tasks  []string
		reason string
	}{
		{"deadlock", handoffProgram(t, 2), verify.CodeDeadlockUnsatisfiable, []string{"consume"}, "one signal, threshold 2"},
		{"race", racyProgram(t), verify.CodeRaceRAW, []string{"produce", "consume"}, "the consumer does not wait"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := writeProgram(t, tt.name+".json", tt.p)
			code, out, errOut := runCLI(t, "", "verify", "--json", file)
			if code != exitUnsafe {
				t.Fatalf("exit %d; want 1\n%s%s", code, out, errOut)
			}
			checkResultSchema(t, out)
			r := decodeReports(t, out)[0]
			if r.Verdict != verify.Unsafe {
				t.Fatalf("verdict %s", r.Verdict)
			}
			var f *verify.ReportFinding
			for i := range r.Findings {
				if r.Findings[i].Code == tt.code {
					f = &r.Findings[i]
				}
			}
			if f == nil {
				t.Fatalf("no %s finding in %+v (%s)", tt.code, r.Findings, tt.reason)
			}
			for _, name := range tt.tasks {
				if !slices.Contains(f.Tasks, name) {
					t.Errorf("finding tasks %q lack %q", f.Tasks, name)
				}
			}
			if len(f.Witness) == 0 || f.WitnessLength != len(f.Witness) {
				t.Fatalf("witness %v, length %d", f.Witness, f.WitnessLength)
			}
			idx := make([]int, len(f.Tasks))
			for i, name := range f.Tasks {
				idx[i] = slices.IndexFunc(tt.p.Tasks, func(tk schedule.Task) bool { return tk.Name == name })
			}
			if err := schedule.CheckWitness(tt.p, f.Code, idx, f.Events()); err != nil {
				t.Errorf("witness does not replay: %v", err)
			}
			_, text, _ := runCLI(t, "", "verify", file)
			if !strings.Contains(text, ": unsafe: ") || !strings.Contains(text, "  "+tt.code+": ") || !strings.Contains(text, "      witness: ") || !strings.Contains(text, `      tasks: "`) {
				t.Errorf("text output lacks the finding or its witness summary:\n%s", text)
			}
		})
	}
}

// TestReportRendering renders a synthetic result, so the rendering is
// tested independently of what the verifier finds.
func TestReportRendering(t *testing.T) {
	p := handoffProgram(t, 1)
	res := &verify.Result{
		Verdict: verify.Unsafe,
		Findings: []verify.Finding{{
			Code: verify.CodeRaceRAW, Message: `"consume" reads x while "produce" may write it`,
			Tasks: []int{1, 0}, Related: []string{"written by produce (worker 0)"}, Fix: "insert `wait ready >= 1` before consume",
			Witness: []schedule.Event{{Thread: 0, Step: 0}, {Thread: 1, Step: 0}},
		}, {
			Code: verify.CodeInconclusive, Message: "state budget of 10 exhausted", Tasks: []int{9},
		}},
		Stats: verify.Stats{Tasks: 2, Threads: 2, Steps: 7, Accesses: 3, Pairs: 1, States: 10, Engine: "explore"},
	}
	r := res.Report(p)
	r.File = "f.json"
	var text bytes.Buffer
	writeText(&text, r, true)
	want := `f.json (program "handoff"): unsafe: 2 findings
  race.raw: "consume" reads x while "produce" may write it
      tasks: "consume", "produce"
      written by produce (worker 0)
      fix: insert ` + "`wait ready >= 1`" + ` before consume
      at: $.tasks[1] (reader "consume"), $.tasks[0] (writer "produce")
      witness: 2 events (* marks the ones that matter):
        *   1  worker 0 "produce": begin
            2  worker 1 "consume": wait ready >= 1
  inconclusive: state budget of 10 exhausted
      tasks: "#9"
  analysed 2 tasks as 2 threads (one per static worker, one per dynamic task): 7 steps, 3 accesses, 1 conflicting pairs ordered, 10 states explored; engine explore
`
	if text.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", text.String(), want)
	}
	var jb bytes.Buffer
	if err := writeJSON(&jb, r); err != nil {
		t.Fatal(err)
	}
	b := bytes.TrimSuffix(jb.Bytes(), []byte("\n"))
	checkResultSchema(t, string(b))
	wantJSON := `{"file":"f.json","program":"handoff","verdict":"unsafe","findings":[{"code":"race.raw","message":"\"consume\" reads x while \"produce\" may write it","tasks":["consume","produce"],"locations":[{"path":"$.tasks[1]","task":"consume","role":"reader"},{"path":"$.tasks[0]","task":"produce","role":"writer"}],"related":["written by produce (worker 0)"],"fix":"insert ` + "`wait ready >= 1`" + ` before consume","patch":[{"op":"add","path":"/counters/-","value":{"name":"consume.done"}},{"op":"add","path":"/tasks/1/after","value":[{"signal":"consume.done"}]},{"op":"add","path":"/tasks/0/before","value":[{"ge":1,"wait":"consume.done"}]}],"witness":[{"thread":0,"step":0,"thread_name":"worker 0","task":"produce","op":"begin","marked":true,"path":"$.tasks[0]"},{"thread":1,"step":0,"thread_name":"worker 1","task":"consume","op":"wait ready >= 1","object":"counter ready","path":"$.tasks[1].before[0]"}],"witness_length":2},{"code":"inconclusive","message":"state budget of 10 exhausted","tasks":["#9"]}],"stats":{"tasks":2,"threads":2,"steps":7,"accesses":3,"conflict_pairs":1,"explored_states":10,"engine":"explore"}}`
	if string(b) != wantJSON {
		t.Errorf("json:\n%s\nwant:\n%s", b, wantJSON)
	}
}

func TestVerifyAMK(t *testing.T) {
	files, _ := filepath.Glob("../../schedule/amk/testdata/*.json")
	if len(files) == 0 {
		t.Skip("no AutoMegaKernel test programs")
	}
	code, out, errOut := runCLI(t, "", append([]string{"verify", "--json"}, files...)...)
	if code == exitInvalid {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	checkResultSchema(t, out)
	for _, r := range decodeReports(t, out) {
		if r.Format != formatAMK {
			t.Errorf("%s: format %q; want %q", r.File, r.Format, formatAMK)
		}
	}
}

func TestExplain(t *testing.T) {
	codes := []string{
		verify.CodeDeadlockUnsatisfiable, verify.CodeDeadlockCycle, verify.CodeDeadlockBarrier, verify.CodeDeadlockSemaphore,
		verify.CodeOccupancy, verify.CodeRaceRAW, verify.CodeRaceWAR, verify.CodeRaceWAW, verify.CodeRaceUnsynchronized, verify.CodeRaceScope,
		verify.CodeUninitializedRead, verify.CodeOutOfBounds, verify.CodeReadonlyWrite, verify.CodeOutputUnwritten,
		verify.CodeCounterOverflow, verify.CodeInconclusive, codeIO, codeInternal,
		schedule.CodeSyntax, schedule.CodeFormat, schedule.CodeUnknownField, schedule.CodeType, schedule.CodeMissing,
		schedule.CodeDuplicate, schedule.CodeReference, schedule.CodeName, schedule.CodeSize, schedule.CodeEmptyAccess,
		schedule.CodeThreshold, schedule.CodeWorker, schedule.CodeValue, schedule.CodeLaunch, schedule.CodeLimit,
	}
	seen := map[string]bool{}
	for _, d := range codeDocs {
		if seen[d.code] {
			t.Errorf("code %s documented twice", d.code)
		}
		seen[d.code] = true
		if d.summary == "" || d.example == "" || d.fix == "" {
			t.Errorf("code %s lacks a summary, example or fix", d.code)
		}
	}
	for _, c := range codes {
		code, out, _ := runCLI(t, "", "explain", c)
		if code != exitSafe || !strings.HasPrefix(out, c+"\n\n") || !strings.Contains(out, "Example: ") || !strings.Contains(out, "Fix: ") {
			t.Errorf("explain %s = %d:\n%s", c, code, out)
		}
	}
	if len(seen) != len(codes) {
		t.Errorf("%d codes documented; %d exist", len(seen), len(codes))
	}
	code, out, _ := runCLI(t, "", "explain")
	if code != exitSafe || strings.Count(out, "\n") != len(codes) {
		t.Errorf("explain lists %d lines; want %d", strings.Count(out, "\n"), len(codes))
	}
	code, _, errOut := runCLI(t, "", "explain", "race")
	if code != exitInvalid || !strings.Contains(errOut, "did you mean race.raw, race.war, race.waw, race.unsynchronized, race.scope?") {
		t.Errorf("explain race = %d: %s", code, errOut)
	}
}

func mustProgram(t *testing.T, b *schedule.Builder) *schedule.Program {
	t.Helper()
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return p
}
