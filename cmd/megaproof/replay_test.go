package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/schedule"
)

// replay prints, for every finding of every code example, a trace that
// schedule.CheckWitness accepts, in text and in JSON.
func TestReplayCodeExamples(t *testing.T) {
	files, _ := filepath.Glob("../../verify/testdata/codes/*.json")
	if len(files) == 0 {
		t.Fatal("no code examples")
	}
	for _, file := range files {
		code := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(code, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			p, err := schedule.Unmarshal(data)
			if err != nil {
				t.Fatal(err)
			}
			status, out, errOut := runCLI(t, "", "replay", file)
			if status != exitSafe || !strings.Contains(out, "confirmed: schedule.CheckWitness accepts the witness of "+code) {
				t.Fatalf("replay %s: status %d\n%s%s", file, status, out, errOut)
			}
			status, out, errOut = runCLI(t, "", "replay", "--json", "--finding", "1", file)
			if status != exitSafe {
				t.Fatalf("replay --json: status %d\n%s%s", status, out, errOut)
			}
			var r replayReport
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if !r.Confirmed || r.Index != 1 || r.Finding.Code != code || r.Error != "" {
				t.Errorf("replay --json: %+v", r)
			}
			tasks := make([]int, len(r.Finding.Tasks))
			for i, name := range r.Finding.Tasks {
				tasks[i] = slices.IndexFunc(p.Tasks, func(tk schedule.Task) bool { return tk.Name == name })
			}
			if err := schedule.CheckWitness(p, code, tasks, r.Finding.Events()); err != nil {
				t.Errorf("the printed witness does not replay: %v", err)
			}
			// The text shows every event of the trace, each line naming
			// its thread and operation.
			_, text, _ := runCLI(t, "", "replay", file)
			for i, e := range r.Finding.Witness {
				line := fmt.Sprintf("%3d  %s", i+1, e.ThreadName)
				if !strings.Contains(text, line) || !strings.Contains(text, e.Op) {
					t.Errorf("text lacks event %d (%q, %q):\n%s", i+1, line, e.Op, text)
				}
			}
			if len(r.Finding.Locations) == 0 && len(r.Finding.Tasks) > 0 {
				t.Errorf("no locations: %+v", r.Finding)
			}
		})
	}
}

func TestReplayUsage(t *testing.T) {
	safe := "testdata/default.json"
	race := "../../verify/testdata/codes/race.raw.json"
	for _, c := range []struct {
		args   []string
		status int
		errs   string
	}{
		{[]string{"replay"}, exitInvalid, "usage: megaproof replay"},
		{[]string{"replay", race, race}, exitInvalid, "usage: megaproof replay"},
		{[]string{"replay", "--finding", "2", race}, exitInvalid, "has 1 findings, not 2"},
		{[]string{"replay", "--finding", "-1", race}, exitInvalid, "usage: megaproof replay"},
		{[]string{"replay", safe}, exitInvalid, "safe: no finding to replay"},
		{[]string{"replay", "nonexistent.json"}, exitInvalid, "invalid.io"},
		{[]string{"replay", "-"}, exitInvalid, "invalid"},
	} {
		status, _, errOut := runCLI(t, "", c.args...)
		if status != c.status || !strings.Contains(errOut, c.errs) {
			t.Errorf("%v: status %d, stderr %q; want %d and %q", c.args, status, errOut, c.status, c.errs)
		}
	}
}
