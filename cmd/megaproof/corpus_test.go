package main

import (
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/megaproof/megaproof/corpus"
)

// TestCorpusJSON runs a sample of the corpus and checks the summary
// object's fields and the exit status.
func TestCorpusJSON(t *testing.T) {
	code, out, errOut := runCLI(t, "", "corpus", "--json", "--quiet", "--every", "97")
	var r map[string]any
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("corpus --json: %v\n%s\nstderr: %s", err, out, errOut)
	}
	for _, k := range []string{"faulty", "safe", "false_accepts", "false_rejects", "classes", "seeds", "unsafe_seeds", "code_mismatches",
		"location_mismatches", "large_faulty", "oracle_disagreements", "labelled_by", "by_seed_family", "witness_failures"} {
		if _, ok := r[k]; !ok {
			t.Errorf("corpus --json lacks %q", k)
		}
	}
	if r["faulty"].(float64) == 0 || r["safe"].(float64) == 0 {
		t.Errorf("sample has no faulty or no safe entries: %s", out)
	}
	wrong := r["false_accepts"].(float64) + r["false_rejects"].(float64)
	if (wrong > 0) != (code == exitUnsafe) || code == exitInternal {
		t.Errorf("exit %d with %v false accepts/rejects", code, wrong)
	}
	classes := r["classes"].(map[string]any)
	c, ok := classes["drop-wait"].(map[string]any)
	if !ok || c["faulty"] == nil || c["recall"] == nil {
		t.Errorf("classes[drop-wait] = %v", classes["drop-wait"])
	}
}

// TestCorpusText checks the human output, and that no progress bar is
// drawn when stderr is not a terminal.
func TestCorpusText(t *testing.T) {
	_, out, errOut := runCLI(t, "", "corpus", "--every", "211")
	for _, want := range []string{"oracle unsafe", "oracle safe", "recall", "false accepts"} {
		if !strings.Contains(out, want) {
			t.Errorf("corpus output lacks %q:\n%s", want, out)
		}
	}
	if errOut != "" {
		t.Errorf("progress drawn on a stderr that is not a terminal: %q", errOut)
	}
}

// TestCorpusProgress draws the bar as on a terminal: it counts to the end
// and shows the time left.
func TestCorpusProgress(t *testing.T) {
	old := isTerminal
	isTerminal = func(io.Writer) bool { return true }
	defer func() { isTerminal = old }()
	var errb syncBuffer
	p := newProgress(&errb, 1000)
	for i := 1; i <= 1000; i++ {
		p.update(i, 1000)
	}
	p.finish()
	out := errb.String()
	if !strings.Contains(out, "1000/1000") || !strings.Contains(out, "100 %") || !strings.Contains(out, "spent ") || !strings.Contains(out, ", left ") {
		t.Errorf("bar did not finish with its count, percentage and times: %q", out)
	}
	// A run that stops early still ends the bar.
	q := newProgress(&errb, 10)
	q.update(3, 10)
	q.finish()
	if _, _, errOut := runCLI(t, "", "corpus", "--every", "997", "--quiet"); errOut != "" {
		t.Errorf("--quiet still draws: %q", errOut)
	}
}

// syncBuffer is a strings.Builder safe for the bar's refresh goroutine.
type syncBuffer struct {
	mu sync.Mutex
	sb strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb.String()
}

func TestCorpusStatus(t *testing.T) {
	for _, tt := range []struct {
		s    corpus.Summary
		want int
	}{
		{corpus.Summary{}, exitSafe},
		{corpus.Summary{FalseAccepts: 1}, exitUnsafe},
		{corpus.Summary{FamilyMismatches: 1, Drift: 1}, exitUnsafe},
		{corpus.Summary{Inconclusive: 1}, exitUnsafe},
		{corpus.Summary{CodeMismatches: 1}, exitUnsafe},
		{corpus.Summary{LocationMismatches: 1}, exitUnsafe},
		{corpus.Summary{WitnessFailures: 1}, exitUnsafe},
		{corpus.Summary{OracleDisagreements: 1, Drift: 1}, exitUnsafe},
		{corpus.Summary{Drift: 1}, exitInvalid},
		{corpus.Summary{Errors: 1}, exitInvalid},
	} {
		if got := corpusStatus(&tt.s); got != tt.want {
			t.Errorf("corpusStatus(%+v) = %d; want %d", tt.s, got, tt.want)
		}
	}
}
