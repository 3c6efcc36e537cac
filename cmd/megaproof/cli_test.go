package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify"
)

// TestHelpListsFlags requires -h of every command to describe each of its
// flags.
func TestHelpListsFlags(t *testing.T) {
	for _, tt := range []struct {
		cmd   string
		flags []string
	}{
		{"verify", []string{"--json", "--format", "--stream", "-v", "--max-states", "--max-bytes"}},
		{"dot", []string{"--max-bytes", "--focus", "--radius", "--worker", "--layer"}},
		{"corpus", []string{"--json", "--every", "--quiet"}},
		{"report", []string{"-o", "--max-states", "--max-bytes"}},
		{"explain", nil},
		{"schema", []string{"amk"}},
		{"version", nil},
	} {
		code, _, errOut := runCLI(t, "", tt.cmd, "-h")
		if code != exitSafe || !strings.HasPrefix(errOut, "usage: megaproof "+tt.cmd) {
			t.Errorf("%s -h = %d:\n%s", tt.cmd, code, errOut)
		}
		for _, f := range tt.flags {
			if !strings.Contains(errOut, "  "+f) {
				t.Errorf("%s -h lacks %s:\n%s", tt.cmd, f, errOut)
			}
		}
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		code, out, _ := runCLI(t, "", args...)
		if code != exitSafe || !strings.HasPrefix(out, "megaproof ") || !strings.Contains(out, runtime.Version()) {
			t.Errorf("%q = %d: %q", args, code, out)
		}
	}
}

// TestStdin reads a document from "-".
func TestStdin(t *testing.T) {
	doc, _ := schedule.Marshal(racyProgram(t))
	code, out, errOut := runCLI(t, string(doc), "verify", "--json", "-")
	if code != exitUnsafe {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	if r := decodeReports(t, out)[0]; r.File != stdinFile || r.Verdict != verify.Unsafe {
		t.Errorf("report %+v", r)
	}
	code, out, _ = runCLI(t, string(doc), "dot", "-")
	if code != exitSafe || !strings.HasPrefix(out, "strict digraph ") {
		t.Errorf("dot - = %d: %s", code, out)
	}
	// "--" ends the flags: a file named -v.
	code, out, _ = runCLI(t, "", "verify", "--json", "--", "-v")
	if code != exitInvalid || decodeReports(t, out)[0].Findings[0].Code != codeIO {
		t.Errorf("verify -- -v = %d: %s", code, out)
	}
}

// TestStream checks --stream: one record per input line, in order, each
// as soon as its line is decided.
func TestStream(t *testing.T) {
	safe, _ := schedule.Marshal(handoffProgram(t, 1))
	racy, _ := schedule.Marshal(racyProgram(t))
	line := func(b []byte) string { return strings.ReplaceAll(string(b), "\n", " ") }
	in := line(safe) + "\n" + line(racy) + "\r\n\n{\n" + strings.Repeat(" ", 2000) + "{}\n" + line(safe) // last line without a newline
	code, out, errOut := runCLI(t, in, "verify", "--stream", "--max-bytes", "1KiB")
	if code != exitUnsafe {
		t.Errorf("exit %d; want 1 (%s)", code, errOut)
	}
	checkResultSchema(t, out)
	rs := decodeReports(t, out)
	want := []struct {
		verdict verify.Verdict
		code    string
	}{{verify.Safe, ""}, {verify.Unsafe, verify.CodeRaceRAW}, {verify.Invalid, schedule.CodeSyntax}, {verify.Invalid, schedule.CodeSyntax}, {verify.Invalid, schedule.CodeLimit}, {verify.Safe, ""}}
	if len(rs) != len(want) {
		t.Fatalf("%d records for %d lines:\n%s", len(rs), len(want), out)
	}
	for i, w := range want {
		r := rs[i]
		if r.File != fmt.Sprintf("-:%d", i+1) || r.Verdict != w.verdict || (w.code != "" && r.Findings[0].Code != w.code) {
			t.Errorf("line %d: %+v; want %s %s", i+1, r, w.verdict, w.code)
		}
	}

	// Each record is written before the next line is read.
	pr, pw := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int)
	go func() { done <- run([]string{"verify", "--stream"}, pr, outW, io.Discard); outW.Close() }()
	lines := bufio.NewReader(outR)
	for i, doc := range [][]byte{safe, racy} {
		fmt.Fprintln(pw, line(doc))
		got := make(chan string)
		go func() { s, _ := lines.ReadString('\n'); got <- s }()
		select {
		case s := <-got:
			if !strings.Contains(s, fmt.Sprintf(`"file":"-:%d"`, i+1)) {
				t.Errorf("record %d: %s", i+1, s)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("no record for line %d while standard input stays open", i+1)
		}
	}
	pw.Close()
	if code := <-done; code != exitUnsafe {
		t.Errorf("stream exit %d", code)
	}
}

func TestReadLine(t *testing.T) {
	in := bufio.NewReaderSize(strings.NewReader("abc\n"+strings.Repeat("x", 100)+"\r\nlast"), 16)
	for _, want := range []struct {
		line    string
		tooLong bool
		err     error
	}{{"abc", false, nil}, {"", true, nil}, {"last", false, io.EOF}, {"", false, io.EOF}} {
		line, tooLong, err := readLine(in, 50)
		if string(line) != want.line || tooLong != want.tooLong || err != want.err {
			t.Errorf("readLine = %q, %v, %v; want %q, %v, %v", line, tooLong, err, want.line, want.tooLong, want.err)
		}
	}
}

// TestPanicRecovered makes the verifier panic on one file: that file gets
// an internal record and exit status 4, the other files are verified, and,
// one file at a time, each record is printed before the next file is
// verified.
func TestPanicRecovered(t *testing.T) {
	safe := writeProgram(t, "safe.json", handoffProgram(t, 1))
	boom := writeProgram(t, "boom.json", racyProgram(t))
	var out, errb bytes.Buffer
	printed := []int{}
	runProgram = func(ctx context.Context, p *schedule.Program, cfg verify.Config) (*verify.Result, error) {
		printed = append(printed, strings.Count(out.String(), "\n"))
		if len(p.Tasks[1].Before) == 0 {
			panic("injected")
		}
		return verify.Run(ctx, p, cfg)
	}
	defer func() { runProgram = verify.Run }()
	batchWorkers = func() int { return 1 }
	defer func() { batchWorkers = func() int { return runtime.GOMAXPROCS(0) } }()
	code := run([]string{"verify", "--json", safe, boom, safe}, strings.NewReader(""), &out, &errb)
	if code != exitInternal {
		t.Errorf("exit %d; want %d", code, exitInternal)
	}
	checkResultSchema(t, out.String())
	rs := decodeReports(t, out.String())
	if len(rs) != 3 || rs[0].Verdict != verify.Safe || rs[2].Verdict != verify.Safe {
		t.Fatalf("records %+v", rs)
	}
	if r := rs[1]; r.File != boom || r.Verdict != verify.Inconclusive || len(r.Findings) != 1 || r.Findings[0].Code != codeInternal || !strings.Contains(r.Findings[0].Message, "injected") {
		t.Errorf("panic record %+v", r)
	}
	if want := []int{0, 1, 2}; fmt.Sprint(printed) != fmt.Sprint(want) {
		t.Errorf("records printed before each verification: %v; want %v", printed, want)
	}
	if !strings.Contains(errb.String(), "internal error on "+boom+": injected") || !strings.Contains(errb.String(), "goroutine") {
		t.Errorf("stderr lacks the panic and its stack:\n%s", errb.String())
	}
	if worse(exitInternal, exitUnsafe) != exitUnsafe || worse(exitInvalid, exitInternal) != exitInternal {
		t.Error("internal errors rank between unsafe and invalid")
	}
}

// TestUnreadable gives files that cannot be read an invalid.io record.
func TestUnreadable(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.json")
	for _, mode := range [][]string{{"verify", "--json"}, {"verify"}} {
		code, out, _ := runCLI(t, "", append(mode, missing, dir)...)
		if code != exitInvalid {
			t.Errorf("%q: exit %d", mode, code)
		}
		if len(mode) == 1 {
			if strings.Count(out, ": invalid: 1 finding\n  invalid.io: ") != 2 {
				t.Errorf("text output:\n%s", out)
			}
			continue
		}
		checkResultSchema(t, out)
		rs := decodeReports(t, out)
		if len(rs) != 2 || rs[0].File != missing || rs[1].File != dir {
			t.Fatalf("records %+v", rs)
		}
		for _, r := range rs {
			if r.Verdict != verify.Invalid || r.Findings[0].Code != codeIO || r.Findings[0].Message == "" {
				t.Errorf("record %+v", r)
			}
		}
	}
}

// TestMaxBytes refuses documents beyond the input limit with invalid.limit,
// from files and from streams, without reading a stream to its end.
func TestMaxBytes(t *testing.T) {
	doc, _ := schedule.Marshal(handoffProgram(t, 1))
	file := writeFile(t, "p.json", doc)
	n := len(doc)
	for _, tt := range []struct {
		limit string
		code  int
	}{{fmt.Sprint(n), exitSafe}, {fmt.Sprint(n - 1), exitInvalid}} {
		for _, f := range []string{file, "-"} {
			code, out, _ := runCLI(t, string(doc), "verify", "--json", "--max-bytes", tt.limit, f)
			if code != tt.code {
				t.Errorf("%s with limit %s: exit %d: %s", f, tt.limit, code, out)
			}
			if code == exitInvalid {
				checkResultSchema(t, out)
				if r := decodeReports(t, out)[0]; r.Findings[0].Code != schedule.CodeLimit || r.Findings[0].Path != "$" || !strings.Contains(r.Findings[0].Message, "--max-bytes") {
					t.Errorf("record %+v", r)
				}
			}
		}
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		start := time.Now()
		code, out, _ := runCLI(t, "", "verify", "--json", "--max-bytes", "64MiB", "/dev/zero")
		if code != exitInvalid || decodeReports(t, out)[0].Findings[0].Code != schedule.CodeLimit {
			t.Errorf("/dev/zero: exit %d: %s", code, out)
		}
		t.Logf("/dev/zero at 64 MiB: %v", time.Since(start))
	}
}

// TestReadDocument checks that a stream that cannot be JSON is counted,
// not kept, and that the kept prefix decodes to the whole stream's
// diagnostic.
func TestReadDocument(t *testing.T) {
	zeros := io.LimitReader(zeroReader{}, 3<<20)
	data, err := readDocument(zeros, 4<<20, nil)
	if err != nil || len(data) > 1<<20+1<<16 {
		t.Fatalf("kept %d bytes (%v); want at most the first MiB", len(data), err)
	}
	whole := make([]byte, 3<<20)
	_, _, errWhole := decode(whole, verify.Config{})
	_, _, errPrefix := decode(data, verify.Config{})
	if errWhole == nil || errPrefix == nil || errWhole.Error() != errPrefix.Error() {
		t.Errorf("prefix diagnostic %v; whole document %v", errPrefix, errWhole)
	}
	// A document that is JSON so far is kept whole.
	big := `{"format":"megaproof/v1","name":"` + strings.Repeat("x", 2<<20) + `"}`
	data, err = readDocument(strings.NewReader(big), 4<<20, nil)
	if err != nil || string(data) != big {
		t.Errorf("a plausible document was not kept whole (%d bytes, %v)", len(data), err)
	}
	if _, err := readDocument(strings.NewReader(big), 1<<20, nil); err != errTooLarge {
		t.Errorf("over the limit: %v", err)
	}
	// A regular file is read into a spare buffer with room for it, and
	// into a new one otherwise.
	file := filepath.Join(t.TempDir(), "doc.json")
	if err := os.WriteFile(file, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, room := range []int{len(big) + 1, len(big)} {
		spare := make([]byte, 3, room)
		copy(spare, "old")
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		data, err := readDocument(f, 4<<20, spare)
		f.Close()
		if err != nil || string(data) != big {
			t.Fatalf("room %d: read %d bytes (%v); want the file", room, len(data), err)
		}
		if reused := &data[0] == &spare[:1][0]; reused != (room > len(big)) {
			t.Errorf("room %d for %d bytes: spare reused %v", room, len(big), reused)
		}
	}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestNamesCannotForgeLines gives a task and the program names with a
// newline and bidi controls: text and DOT output stay one line per item,
// show the characters escaped and print no bidi control.
func TestNamesCannotForgeLines(t *testing.T) {
	evil := "up\nsafe.json: safe: " + provedLine + "\u202e"
	b := schedule.NewBuilder("prog\n\u2066x", schedule.Launch{SMs: 2, PerSM: 1, Workers: 2, Cooperative: true})
	x := b.Buffer("x", schedule.KindScratch, 64)
	b.Task(evil).On(0).Write(x, 0, 64)
	b.Task("reader\u200f").On(1).Read(x, 0, 64)
	file := writeProgram(t, "evil.json", mustProgram(t, b))
	code, out, _ := runCLI(t, "", "verify", "-v", file)
	if code != exitUnsafe {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if i > 0 && !strings.HasPrefix(line, "  ") {
			t.Errorf("line %d is not indented under the verdict: %q", i, line)
		}
	}
	for _, r := range []rune{'\u202e', '\u2066', '\u200f'} {
		if strings.ContainsRune(out, r) {
			t.Errorf("text output holds bidi control %U:\n%s", r, out)
		}
	}
	if !strings.Contains(out, `"up\nsafe.json`) || !strings.Contains(out, `\u202e`) || !strings.Contains(out, `(program "prog\n\u2066x")`) {
		t.Errorf("names are not Go-quoted:\n%s", out)
	}
	_, dot, _ := runCLI(t, "", "dot", file)
	for _, r := range []rune{'\u202e', '\u2066', '\u200f'} {
		if strings.ContainsRune(dot, r) {
			t.Errorf("DOT output holds bidi control %U:\n%s", r, dot)
		}
	}
	if strings.Count(dot, "\n") != strings.Count(dot, ";\n")+strings.Count(dot, "{\n")+strings.Count(dot, "}\n") {
		t.Errorf("a name breaks a DOT line:\n%s", dot)
	}
	if !strings.Contains(dot, `label="up\\nsafe.json`) {
		t.Errorf("DOT label does not show the newline escaped:\n%s", dot)
	}
}

func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"plain \"quoted\" back\\slash": "plain \"quoted\" back\\slash",
		"tab\tnl\ncr\r":                `tab\tnl\ncr\r`,
		"bidi\u202e\u2066\u061c":       `bidi\u202e\u2066\u061c`,
		"bad\xffutf8":                  `bad\xffutf8`,
		"unicode – ok ✓":               "unicode – ok ✓",
		"nul\x00":                      `nul\x00`,
	} {
		if got := clean(in); got != want {
			t.Errorf("clean(%q) = %q; want %q", in, got, want)
		}
	}
}

// TestMaxStates makes the explorer's budget too small to decide a
// semaphore program.
func TestMaxStates(t *testing.T) {
	b := schedule.NewBuilder("ring", schedule.Launch{SMs: 2, PerSM: 1, Workers: 2, Cooperative: true})
	x := b.Buffer("x", schedule.KindState, 64)
	s := b.Semaphore("slot", 1)
	b.Task("a").On(0).Acquire(s, 1).Write(x, 0, 64).Release(s, 1)
	b.Task("b").On(1).Acquire(s, 1).Write(x, 0, 64).Release(s, 1)
	file := writeProgram(t, "ring.json", mustProgram(t, b))
	if code, out, _ := runCLI(t, "", "verify", file); code != exitSafe {
		t.Fatalf("default budget: exit %d: %s", code, out)
	}
	code, out, _ := runCLI(t, "", "verify", "--json", "--max-states", "2", file)
	if code != exitInconclusive || decodeReports(t, out)[0].Verdict != verify.Inconclusive {
		t.Errorf("--max-states 2: exit %d: %s", code, out)
	}
}

func TestByteSize(t *testing.T) {
	for in, want := range map[string]int64{"1": 1, "1024": 1024, "4KiB": 4096, "64MiB": 64 << 20, "1GiB": 1 << 30} {
		var b byteSize
		if err := b.Set(in); err != nil || int64(b) != want {
			t.Errorf("Set(%q) = %d, %v; want %d", in, b, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1", "1TB", "x", "99999999999GiB"} {
		var b byteSize
		if err := b.Set(in); err == nil {
			t.Errorf("Set(%q) accepted", in)
		}
	}
	if s := byteSize(1 << 30).String(); s != "1GiB" {
		t.Errorf("String = %q", s)
	}
}

// TestBatchOrder verifies many files on several workers: the records come
// in the order of the files, the same as one file at a time, with the same
// exit status, and a panic on some files gives internal records in their
// places.
func TestBatchOrder(t *testing.T) {
	safe := writeProgram(t, "safe.json", handoffProgram(t, 1))
	racy := writeProgram(t, "racy.json", racyProgram(t))
	missing := filepath.Join(t.TempDir(), "missing.json")
	var files []string
	for i := range 40 {
		files = append(files, [...]string{safe, racy, safe, missing, racy}[i%5])
	}
	defer func() { batchWorkers = func() int { return runtime.GOMAXPROCS(0) } }()
	runAt := func(workers int) (string, int) {
		batchWorkers = func() int { return workers }
		var out, errb bytes.Buffer
		code := run(append([]string{"verify", "--json"}, files...), strings.NewReader(""), &out, &errb)
		return out.String(), code
	}
	want, wantCode := runAt(1)
	if n := strings.Count(want, "\n"); n != len(files) {
		t.Fatalf("%d records for %d files", n, len(files))
	}
	for _, w := range []int{2, 4, 64} {
		if got, code := runAt(w); got != want || code != wantCode {
			t.Errorf("%d workers: exit %d, records\n%s\nwant exit %d, records\n%s", w, code, got, wantCode, want)
		}
	}

	runProgram = func(ctx context.Context, p *schedule.Program, cfg verify.Config) (*verify.Result, error) {
		if len(p.Tasks[1].Before) == 0 {
			panic("injected")
		}
		return verify.Run(ctx, p, cfg)
	}
	defer func() { runProgram = verify.Run }()
	got, code := runAt(4)
	if code != exitInternal {
		t.Errorf("exit %d with panics; want %d", code, exitInternal)
	}
	rs := decodeReports(t, got)
	if len(rs) != len(files) {
		t.Fatalf("%d records for %d files", len(rs), len(files))
	}
	for i, r := range rs {
		internal := len(r.Findings) == 1 && r.Findings[0].Code == codeInternal
		if r.File != files[i] || internal != (files[i] == racy) {
			t.Errorf("record %d: %+v; want file %s, internal %v", i, r, files[i], files[i] == racy)
		}
	}
}

// TestOpenDocument checks that openDocument opens what os.Open opens and
// fails as it fails, with the same message.
func TestOpenDocument(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "doc.json")
	if err := os.WriteFile(file, []byte(`{"a":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := openDocument(file)
	if err != nil {
		t.Fatal(err)
	}
	data, err := readDocument(f, 1<<20, nil)
	f.Close()
	if err != nil || string(data) != `{"a":1}` {
		t.Errorf("read %q, %v", data, err)
	}
	for _, name := range []string{filepath.Join(dir, "missing.json"), filepath.Join(file, "x")} {
		_, err := openDocument(name)
		_, want := os.Open(name)
		if err == nil || want == nil || err.Error() != want.Error() || errors.Is(err, fs.ErrNotExist) != errors.Is(want, fs.ErrNotExist) {
			t.Errorf("openDocument(%s): %v; os.Open: %v", name, err, want)
		}
	}
}
