package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestCorpusJSON runs a sample of the corpus and checks the summary
// object's fields and the exit status.
func TestCorpusJSON(t *testing.T) {
	code, out, errOut := runCLI(t, "corpus", "--json", "--quiet", "--every", "97")
	var r map[string]any
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("corpus --json: %v\n%s\nstderr: %s", err, out, errOut)
	}
	for _, k := range []string{"faulty", "safe", "false_accepts", "false_rejects", "classes"} {
		if _, ok := r[k]; !ok {
			t.Errorf("corpus --json lacks %q", k)
		}
	}
	if r["faulty"].(float64) == 0 || r["safe"].(float64) == 0 {
		t.Errorf("sample has no faulty or no safe entries: %s", out)
	}
	wrong := r["false_accepts"].(float64) + r["false_rejects"].(float64)
	if (wrong > 0) != (code == exitUnsafe) || (code != exitSafe && code != exitUnsafe) {
		t.Errorf("exit %d with %v false accepts/rejects", code, wrong)
	}
	classes := r["classes"].(map[string]any)
	c, ok := classes["drop-wait"].(map[string]any)
	if !ok || c["faulty"] == nil || c["recall"] == nil {
		t.Errorf("classes[drop-wait] = %v", classes["drop-wait"])
	}
}

// TestCorpusText checks the human output and the progress bar.
func TestCorpusText(t *testing.T) {
	_, out, errOut := runCLI(t, "corpus", "--every", "211")
	for _, want := range []string{"oracle unsafe", "oracle safe", "recall", "false accepts"} {
		if !strings.Contains(out, want) {
			t.Errorf("corpus output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "100%") {
		t.Errorf("progress bar did not reach 100%%: %q", errOut)
	}
}

func TestBar(t *testing.T) {
	var b strings.Builder
	p := &bar{w: &b, start: time.Now()}
	for i := 1; i <= 1000; i++ {
		p.update(i, 1000)
	}
	if n := strings.Count(b.String(), "\r"); n != 100 {
		t.Errorf("bar redrew %d times for 1000 updates, want 100", n)
	}
	if !strings.HasSuffix(b.String(), "\n") || !strings.Contains(b.String(), "1000/1000") {
		t.Errorf("bar did not finish: %q", b.String())
	}
}
