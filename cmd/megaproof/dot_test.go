package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/megaproof/megaproof/examples/llama/llamagen"
	"github.com/megaproof/megaproof/schedule"
)

func TestDot(t *testing.T) {
	code, out, errOut := runCLI(t, "", "dot", "testdata/default.json")
	if code != exitSafe {
		t.Fatalf("dot = %d: %s", code, errOut)
	}
	for _, want := range []string{
		`strict digraph {`,
		`label="tiny-mlp — 4 tasks, 2 workers on H200 — safe";`,
		`"t0" [ fontsize="10", label="up.0\ngemv\nworker 0", shape="box",  weight=0 ];`,
		`"t0" -> "t2" [ fontsize="9", label="h_ready ≥ 2",  weight=1 ];`,
		`"t1" -> "t3" [ fontsize="9", label="h_ready ≥ 2",  weight=1 ];`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dot output lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "{") != strings.Count(out, "}") {
		t.Errorf("unbalanced braces:\n%s", out)
	}
	for range 3 {
		if _, again, _ := runCLI(t, "", "dot", "testdata/default.json"); again != out {
			t.Fatalf("dot output is not deterministic:\n%s\nthen\n%s", out, again)
		}
	}
	// Barriers, semaphores and dynamic tasks.
	b := schedule.NewBuilder(`q"uote`, schedule.Launch{SMs: 1, PerSM: 1, Workers: 1})
	g := b.Barrier("g", 2)
	s := b.Semaphore("s", 1)
	b.Task("a").On(0).Sync(g).Release(s, 1)
	b.Task("b").Sync(g).Acquire(s, 1)
	file := writeProgram(t, "bs.json", mustProgram(t, b))
	_, out, _ = runCLI(t, "", "dot", file)
	for _, want := range []string{
		`label="q\"uote — 2 tasks, 1 workers on 1 SMs — unsafe, 1 finding";`,
		`"o0" [ fontsize="10", label="g", shape="diamond",  weight=0 ];`,
		`"t1" [ class="finding", color="red", fontsize="10", label="b\ndynamic", penwidth="3", shape="box", style="rounded", tooltip="finding:0 occupancy",  weight=0 ];`,
		`"t0" -> "o1" [ label="release 1", style="dashed",  weight=1 ];`,
		`"o1" -> "t1" [ label="acquire 1", style="dashed",  weight=1 ];`,
		`"o0" -> "t0" [ label="sync", style="dashed",  weight=1 ];`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dot output lacks %q:\n%s", want, out)
		}
	}
	bad := writeFile(t, "bad.json", []byte("{"))
	if code, _, errOut := runCLI(t, "", "dot", bad); code != exitInvalid || !strings.Contains(errOut, "invalid.syntax") {
		t.Errorf("dot of bad input = %d: %s", code, errOut)
	}
}

// TestDotDefault draws the embedded default schedule when no file is
// given.
func TestDotDefault(t *testing.T) {
	code, out, errOut := runCLI(t, "", "dot", "--layer", "3", "--radius", "0")
	if code != exitSafe {
		t.Fatalf("dot = %d: %s", code, errOut)
	}
	p, err := defaultProgram()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "label=\""+p.Name+" — ") {
		t.Errorf("not the default program:\n%.400s", out)
	}
	labels := nodeLabels(out)
	if len(labels) == 0 {
		t.Fatal("no task drawn")
	}
	for _, l := range labels {
		if !strings.HasPrefix(l, "L3.") {
			t.Errorf("--layer 3 draws %q", l)
		}
	}
}

// nodeLabels are the names of the task nodes of a DOT output.
func nodeLabels(dot string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^  "t\d+" \[.*? label="([^"\\]*)`).FindAllStringSubmatch(dot, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestDotFindings draws a racing pair as a red edge and outlines the
// tasks of every finding.
func TestDotFindings(t *testing.T) {
	_, out, _ := runCLI(t, "", "dot", "../../verify/testdata/codes/race.raw.json")
	if !strings.Contains(out, `"t0" -> "t1" [ class="race", color="red", constraint="false", dir="both", fontcolor="red", label="finding:0 race.raw", penwidth="3",  weight=1 ];`) {
		t.Errorf("no race edge:\n%s", out)
	}
	_, out, _ = runCLI(t, "", "dot", "../../verify/testdata/codes/deadlock.cycle.json")
	if n := strings.Count(out, `class="finding", color="red"`); n < 2 {
		t.Errorf("%d tasks outlined in a wait-for cycle:\n%s", n, out)
	}
	_, out, _ = runCLI(t, "", "dot", "testdata/default.json")
	if strings.Contains(out, "red") {
		t.Errorf("a safe program has a finding drawn:\n%s", out)
	}
}

// brokenLlama writes the 5,805-task Llama-3.2-1B schedule (128-column
// tiles) with one wait removed: L8.q.t5 no longer waits for L8.norm1,
// whose output it reads.
func brokenLlama(t *testing.T) string {
	t.Helper()
	cfg := llamagen.DefaultConfig()
	cfg.Tile = 128
	p, err := llamagen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Tasks) != 5805 {
		t.Fatalf("%d tasks, want 5805", len(p.Tasks))
	}
	found := false
	for i := range p.Tasks {
		if tk := &p.Tasks[i]; tk.Name == "L8.q.t5" && len(tk.Before) == 1 {
			tk.Before, found = nil, true
		}
	}
	if !found {
		t.Fatal("no L8.q.t5 with one wait")
	}
	return writeProgram(t, "llama-5805-nowait.json", p)
}

// TestDotFocus draws the neighbourhood of a finding of the 5,805-task
// schedule, and of a worker and a layer; with Graphviz installed (always
// under CI), the focused graph must lay out, the whole pipeline within
// 5 s.
func TestDotFocus(t *testing.T) {
	file := brokenLlama(t)
	start := time.Now()
	code, out, errOut := runCLI(t, "", "dot", "--focus", "finding:0", file)
	dotTime := time.Since(start)
	if code != exitSafe {
		t.Fatalf("dot = %d: %s", code, errOut)
	}
	labels := nodeLabels(out)
	if len(labels) < 3 || len(labels) > 200 {
		t.Fatalf("the neighbourhood of finding 0 has %d tasks", len(labels))
	}
	for _, want := range []string{`label="L8.q.t5\ngemv`, `label="L8.norm1\nrmsnorm`, `class="race"`, "tasks drawn — unsafe"} {
		if !strings.Contains(out, want) {
			t.Errorf("focused output lacks %q", want)
		}
	}
	// Radius 0: the finding's tasks alone; a larger radius draws more.
	_, out0, _ := runCLI(t, "", "dot", "--focus", "finding:0", "--radius", "0", file)
	_, out2, _ := runCLI(t, "", "dot", "--focus", "finding:0", "--radius", "2", file)
	if n0, n2 := len(nodeLabels(out0)), len(nodeLabels(out2)); n0 != 2 || n2 <= len(labels) {
		t.Errorf("radius 0, 1, 2: %d, %d, %d tasks", n0, len(labels), n2)
	}
	_, outT, _ := runCLI(t, "", "dot", "--focus", "L8.norm1", "--radius", "0", file)
	if l := nodeLabels(outT); len(l) != 1 || !strings.HasPrefix(l[0], "L8.norm1") {
		t.Errorf("--focus L8.norm1 draws %q", l)
	}
	_, outW, _ := runCLI(t, "", "dot", "--worker", "31", "--radius", "0", file)
	for _, m := range regexp.MustCompile(`(?m)^  "t\d+" \[.*? label="[^"]*\\n(worker \d+|dynamic)"`).FindAllStringSubmatch(outW, -1) {
		if m[1] != "worker 31" {
			t.Errorf("--worker 31 draws a task of %s", m[1])
		}
	}
	_, outL, _ := runCLI(t, "", "dot", "--layer", "8", "--worker", "31", "--radius", "0", file)
	for _, l := range nodeLabels(outL) {
		if !strings.HasPrefix(l, "L8.") {
			t.Errorf("--layer 8 --worker 31 draws %q", l)
		}
	}
	for _, args := range [][]string{
		{"--focus", "finding:9"}, {"--focus", "no such task"}, {"--worker", "132"}, {"--radius", "-1", "--focus", "finding:0"}, {"--layer", "x"},
	} {
		if code, _, _ := runCLI(t, "", append(append([]string{"dot"}, args...), file)...); code != exitInvalid {
			t.Errorf("dot %q = %d, want %d", args, code, exitInvalid)
		}
	}

	gv, err := exec.LookPath("dot")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("Graphviz dot is not installed under CI (.ci/tools.sh installs Debian's graphviz)")
		}
		t.Skip("Graphviz dot is not installed (apt-get install graphviz); the layout is not checked")
	}
	start = time.Now()
	cmd := exec.Command(gv, "-Tsvg")
	cmd.Stdin = strings.NewReader(out)
	var svg, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &svg, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("dot -Tsvg: %v\n%s", err, stderr.String())
	}
	layout := time.Since(start)
	t.Logf("5,805 tasks, --focus finding:0: %d tasks drawn, megaproof dot %v, Graphviz %v, SVG %d bytes", len(labels), dotTime, layout, svg.Len())
	if total := dotTime + layout; total > 5*time.Second {
		t.Errorf("megaproof dot --focus finding:0 | dot -Tsvg took %v, over 5 s", total)
	}
	if !bytes.Contains(svg.Bytes(), []byte("L8.q.t5")) || !bytes.Contains(svg.Bytes(), []byte(`stroke="red"`)) {
		t.Errorf("the SVG lacks the racing task or the red edge")
	}
}

// BenchmarkDot times dot on the 5,805-task Llama schedule with one wait
// removed: the whole graph, and the neighbourhood of finding 0 (reading,
// verifying and drawing included).
func BenchmarkDot(b *testing.B) {
	cfg := llamagen.DefaultConfig()
	cfg.Tile = 128
	p, err := llamagen.Generate(cfg)
	if err != nil {
		b.Fatal(err)
	}
	for i := range p.Tasks {
		if p.Tasks[i].Name == "L8.q.t5" {
			p.Tasks[i].Before = nil
		}
	}
	data, err := schedule.Marshal(p)
	if err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(b.TempDir(), "llama.json")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		args []string
	}{
		{"full", []string{"dot", file}},
		{"focus", []string{"dot", "--focus", "finding:0", file}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var out bytes.Buffer
			for b.Loop() {
				out.Reset()
				if code := run(bc.args, strings.NewReader(""), &out, io.Discard); code != exitSafe {
					b.Fatalf("exit %d", code)
				}
			}
			b.ReportMetric(float64(out.Len()), "bytes")
		})
	}
}
