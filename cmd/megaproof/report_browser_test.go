package main

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// highlight is the fill of the steps that matter in the report's swimlane
// (.ev.marked in templates/report.html): #d62728.
var highlight = [3]uint8{0xd6, 0x27, 0x28}

// chromium returns Debian's Chromium, skipping the test where it is not
// installed, or failing it under CI, whose script installs it
// (.ci/tools.sh).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("Chromium is not installed under CI (.ci/tools.sh installs Debian's chromium)")
	}
	t.Skip("Chromium is not installed (apt-get install chromium); the report is not loaded in a browser")
	return ""
}

// loaded is what headless Chromium made of a page: its DOM after the
// page's script ran, a screenshot, and the wall time of the whole load.
type loaded struct {
	dom  string
	shot image.Image
	wall time.Duration
}

// load opens a page in headless Chromium with the flags this closed
// network needs and a fresh profile, at 1280×900 CSS pixels and one
// device pixel each.
func load(t *testing.T, browser, page string) loaded {
	t.Helper()
	dir := t.TempDir()
	shot := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--force-device-scale-factor=1",
		"--window-size=1280,900", "--hide-scrollbars", "--screenshot="+shot, "--dump-dom",
		"file://"+page)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", page, err, stderr.String())
	}
	wall := time.Since(start)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, stderr.String())
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	return loaded{dom: stdout.String(), shot: img, wall: wall}
}

// bodyAttr reads an attribute the page's script set on <body>.
func bodyAttr(dom, name string) string {
	m := regexp.MustCompile(`<body[^>]*\s` + regexp.QuoteMeta(name) + `="([^"]*)"`).FindStringSubmatch(dom)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// highlighted counts the pixels of the highlight colour in r.
func highlighted(img image.Image, r image.Rectangle) int {
	r = r.Intersect(img.Bounds())
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if [3]uint8{uint8(cr >> 8), uint8(cg >> 8), uint8(cb >> 8)} == highlight {
				n++
			}
		}
	}
	return n
}

// TestReportInBrowser writes the report of every file of
// verify/testdata/codes, of an AMK, an MPK and an invalid input, of a safe
// one and of the 5,805-task Llama schedule with one wait removed, loads
// each in headless Chromium and checks what it draws: the verdict, one
// card per finding, the highlighted steps (the marked steps and holds, and
// the steps that matter inside an advance) as elements of the swimlane and
// as pixels of the highlight colour inside the swimlane's box on the
// screenshot (none on the safe one). It logs file sizes and load times and
// holds the large page to a render within 3 s of script time (about
// 1 s on a loaded two-core machine).
func TestReportInBrowser(t *testing.T) {
	browser := chromium(t)
	dir := t.TempDir()
	inputs := append(sarifInputs(t), filepath.Join("..", "..", "schedule", "mpk", "testdata", "ex1_reduce_edge.json"), brokenLlama(t))
	for _, f := range inputs {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			page, err := filepath.Abs(filepath.Join(dir, filepath.Base(f)+".html"))
			if err != nil {
				t.Fatal(err)
			}
			if code, _, errOut := runCLI(t, "", "report", "-o", page, f); code == exitInternal || errOut != "" {
				t.Fatalf("report = %d: %s", code, errOut)
			}
			raw, err := os.ReadFile(page)
			if err != nil {
				t.Fatal(err)
			}
			d := reportBlob(t, string(raw))
			l := load(t, browser, page)
			if bodyAttr(l.dom, "data-ready") != "1" {
				t.Fatalf("the page's script did not finish:\n%.3000s", l.dom)
			}
			if !strings.Contains(l.dom, `class="verdict verdict-`+d.Report.Verdict.String()+`"`) {
				t.Errorf("the verdict %s is not drawn", d.Report.Verdict)
			}
			cards := len(regexp.MustCompile(`<div class="finding( selected)?" id="finding-\d+"`).FindAllString(l.dom, -1))
			if cards != len(d.Report.Findings) {
				t.Errorf("%d finding cards for %d findings", cards, len(d.Report.Findings))
			}
			patches := 0
			for _, f := range d.Report.Findings {
				if len(f.Patch) > 0 {
					patches++
				}
			}
			if n := strings.Count(l.dom, `<pre class="patch">`); n != patches {
				t.Errorf("%d patches drawn for %d findings with one", n, patches)
			}
			marked := strings.Count(l.dom, `class="ev marked"`) + strings.Count(l.dom, `class="ev hold marked"`)
			var box struct{ X, Y, W, H int }
			if err := json.Unmarshal([]byte(bodyAttr(l.dom, "data-lanes")), &box); err != nil && len(d.Report.Findings) > 0 {
				t.Fatalf("no swimlane box: %v", err)
			}
			px := highlighted(l.shot, image.Rect(box.X, box.Y, box.X+box.W, box.Y+box.H))
			all := highlighted(l.shot, l.shot.Bounds())
			renderMS, _ := strconv.ParseFloat(bodyAttr(l.dom, "data-render-ms"), 64)
			t.Logf("%s: %d bytes, %d findings, Chromium load %v (script %.0f ms), %d steps highlighted, %d highlight pixels in the swimlane", filepath.Base(f), len(raw), len(d.Report.Findings), l.wall.Round(time.Millisecond), renderMS, marked, px)
			if len(d.Report.Findings) == 0 {
				if marked != 0 || all != 0 {
					t.Errorf("a safe report highlights %d steps, %d pixels", marked, all)
				}
				return
			}
			// The first finding is shown: each of its marked events in the
			// window, or each of its located tasks without a witness, is one
			// highlighted element.
			f0 := d.Report.Findings[0]
			want := 0
			for _, e := range f0.Witness {
				switch {
				case e.Advance:
					want += len(e.Marks) // one red step each, inside the advance's spans
				case e.Marked:
					want++
				}
			}
			if len(f0.Witness) == 0 {
				seen := map[string]bool{}
				for _, loc := range f0.Locations {
					key := loc.Task
					if key == "" {
						key = loc.Path
					}
					if !seen[key] {
						seen[key] = true
						want++
					}
				}
				if want == 0 {
					want = len(f0.Tasks)
				}
				if want == 0 {
					want = 1 // the program as a whole
				}
			}
			if want == 0 {
				t.Fatalf("finding %s has nothing to highlight: %+v", f0.Code, f0)
			}
			if len(f0.Witness) <= 120 && marked != want || marked < 1 {
				t.Errorf("%d steps highlighted, want %d", marked, want)
			}
			if px < 20 {
				t.Errorf("the swimlane box %+v has %d pixels of the highlight colour (%d on the page)", box, px, all)
			}
			if len(d.Report.Findings) > 0 && strings.HasPrefix(filepath.Base(f), "llama-") {
				// The script's time is recorded in docs/PERFORMANCE.md; the
				// bound only catches a page that stops being responsive
				// (1 s here when idle), not the load of a shared machine.
				if len(raw) > 16<<20 || renderMS > 20000 {
					t.Errorf("the 5,805-task report: %d bytes, %.0f ms of script", len(raw), renderMS)
				}
			}
		})
	}
}
