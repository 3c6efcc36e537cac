package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/schedule"
)

// reportBlob extracts and decodes the JSON object a report page embeds.
func reportBlob(t *testing.T, page string) reportData {
	t.Helper()
	m := regexp.MustCompile(`(?s)<script type="application/json" id="megaproof-data">(.*?)</script>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no embedded data in\n%.2000s", page)
	}
	var d struct {
		Report  json.RawMessage  `json:"report"`
		Tasks   int              `json:"tasks"`
		Workers int              `json:"workers"`
		Objects [][]reportObject `json:"objects"`
	}
	if err := json.Unmarshal([]byte(m[1]), &d); err != nil {
		t.Fatalf("embedded data: %v", err)
	}
	var out reportData
	out.Tasks, out.Workers, out.Objects = d.Tasks, d.Workers, d.Objects
	if err := json.Unmarshal(d.Report, &out.Report); err != nil {
		t.Fatalf("embedded report: %v", err)
	}
	return out
}

// TestReport writes the report of each input: the exit status is
// verify's, the page embeds the same report verify --json prints, loads
// nothing from elsewhere, and lists each witness's sync objects with the
// value after the last event on them.
func TestReport(t *testing.T) {
	dir := t.TempDir()
	for _, f := range sarifInputs(t) {
		codeJ, outJ, _ := runCLI(t, "", "verify", "--json", f)
		html := filepath.Join(dir, filepath.Base(f)+".html")
		code, out, errOut := runCLI(t, "", "report", "-o", html, f)
		if code != codeJ || out != "" {
			t.Fatalf("%s: report = %d (verify %d), stdout %q, stderr %s", f, code, codeJ, out, errOut)
		}
		page, err := os.ReadFile(html)
		if err != nil {
			t.Fatal(err)
		}
		d := reportBlob(t, string(page))
		var want struct {
			Findings []finding `json:"findings"`
		}
		if err := json.Unmarshal([]byte(outJ), &want); err != nil {
			t.Fatal(err)
		}
		if len(d.Report.Findings) != len(want.Findings) || len(d.Objects) != len(want.Findings) {
			t.Fatalf("%s: %d findings, %d object lists; verify has %d", f, len(d.Report.Findings), len(d.Objects), len(want.Findings))
		}
		for k, wf := range want.Findings {
			last := map[string]uint64{}
			for _, e := range wf.Witness {
				if e.Object != "" && len(e.Value) > 0 {
					var v uint64
					json.Unmarshal(e.Value, &v)
					last[e.Object] = v
				}
			}
			for _, o := range d.Objects[k] {
				if v, ok := last[o.Name]; ok && (o.Final == nil || *o.Final != v) {
					t.Errorf("%s: finding %d: %s final %v, the witness ends at %d", f, k, o.Name, o.Final, v)
				}
				delete(last, o.Name)
			}
			if len(last) > 0 {
				t.Errorf("%s: finding %d: objects %v missing from the page", f, k, last)
			}
		}
		checkSelfContained(t, f, string(page))
	}
}

// checkSelfContained fails on anything that would load from elsewhere.
func checkSelfContained(t *testing.T, name, page string) {
	t.Helper()
	for _, re := range []string{`(?i)<(link|img|iframe|object|embed)\b`, `(?i)<script[^>]+src=`, `(?i)url\(`, `(?i)@import`, `(?i)fetch\(|XMLHttpRequest`} {
		if m := regexp.MustCompile(re).FindString(page); m != "" {
			t.Errorf("%s: the page loads from elsewhere: %q", name, m)
		}
	}
	for _, u := range regexp.MustCompile(`https?://[^\s"'<>]+`).FindAllString(page, -1) {
		if u != "http://www.w3.org/2000/svg" {
			t.Errorf("%s: the page names %s", name, u)
		}
	}
}

// TestReportEscapes makes sure no name from the input can end the data
// script or add markup.
func TestReportEscapes(t *testing.T) {
	evil := `</script><script>alert(1)</script><b>`
	b := schedule.NewBuilder(evil, schedule.Launch{SMs: 2, PerSM: 1, Workers: 2})
	kv := b.Buffer("kv", schedule.KindState, 64)
	b.Task(evil).On(0).Write(kv, 0, 64)
	b.Task("read").On(1).Read(kv, 0, 64)
	file := writeProgram(t, "evil.json", mustProgram(t, b))
	code, page, errOut := runCLI(t, "", "report", file)
	if code != exitUnsafe {
		t.Fatalf("report = %d: %s", code, errOut)
	}
	if strings.Contains(page, "<script>alert") || strings.Contains(page, "<b>") {
		t.Errorf("a name breaks out of the page's data:\n%s", page)
	}
	if d := reportBlob(t, page); d.Report.Program != evil || d.Report.Findings[0].Tasks[0] != evil {
		t.Errorf("the name does not survive: %q, %q", d.Report.Program, d.Report.Findings[0].Tasks)
	}
	if code, _, _ := runCLI(t, "", "report", "a.json", "b.json"); code != exitInvalid {
		t.Errorf("two files: %d", code)
	}
	if code, _, _ := runCLI(t, "", "report", "-o", filepath.Join(t.TempDir(), "no", "such", "dir.html"), file); code != exitInvalid {
		t.Errorf("unwritable -o: %d", code)
	}
	// The embedded default: a safe report.
	code, page, _ = runCLI(t, "", "report")
	if code != exitSafe || !strings.Contains(page, "safe: "+provedLine) {
		t.Errorf("default report = %d:\n%.500s", code, page)
	}
}
