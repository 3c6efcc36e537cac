package runner

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// decodeResult is one configuration of docs/gpu/decode-h200.json: a decode
// check (positions 0-63 against PyTorch) or a timed run.
type decodeResult struct {
	Kind             string   `json:"kind"`
	Call             string   `json:"call"`
	Model            string   `json:"model"`
	Strategy         string   `json:"strategy"`
	Batch            int      `json:"batch"`
	Pos              any      `json:"pos"`
	TokensMatch      *bool    `json:"tokens_match"`
	LogitsMaxAbsErr  *float64 `json:"logits_max_abs_err"`
	MedianMS         *float64 `json:"ms_per_token_median"`
	P10MS            *float64 `json:"ms_per_token_p10"`
	P90MS            *float64 `json:"ms_per_token_p90"`
	MaxMS            *float64 `json:"ms_per_token_max"`
	TimedSteps       int      `json:"timed_steps"`
	Baseline         *string  `json:"baseline"`
	BaselineMS       *float64 `json:"baseline_ms_per_token"`
	Ratio            *float64 `json:"ratio_to_baseline"`
	CorrectnessFrom  *string  `json:"correctness_from"`
	VerifyMS         *float64 `json:"verify_ms"`
	SequencesMatched *int     `json:"sequences_matching"`
}

// TestDecodeResultsDocument holds docs/gpu/decode-h200.json to what
// docs/GPU.md says of it: every timed run states its correctness (from a
// decode check in the same document), its spread over at least 30 steps in
// order, and its ratio against the named PyTorch baseline; every model,
// batch and position of the matrix has a timed run; every timed run is
// token-exact (its decode check's 64 greedy tokens equal PyTorch's).
func TestDecodeResultsDocument(t *testing.T) {
	data, err := os.ReadFile("../docs/gpu/decode-h200.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Environment struct {
			GPU   string                     `json:"gpu"`
			Calls map[string]json.RawMessage `json:"calls"`
		} `json:"environment"`
		Configurations []decodeResult `json:"configurations"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Environment.GPU == "" || len(doc.Environment.Calls) == 0 {
		t.Fatalf("environment without the GPU or the calls: %+v", doc.Environment)
	}
	models := map[string]bool{"smollm2-135m": true, "llama-3.2-1b": true, "llama-3-8b": true}
	checks := map[string]bool{} // "kind model strategy batch call" of every decode check
	key := func(kind, model, strategy string, batch int, call string) string {
		return kind + " " + model + " " + strategy + " " + strconv.Itoa(batch) + " " + call
	}
	for i, c := range doc.Configurations {
		if !models[c.Model] || c.TokensMatch == nil {
			t.Fatalf("configuration %d: model %q, tokens_match %v", i, c.Model, c.TokensMatch)
		}
		switch c.Kind {
		case "decode-check", "decode-check-batch":
			checks[key(c.Kind, c.Model, c.Strategy, c.Batch, c.Call)] = *c.TokensMatch
			if c.Kind == "decode-check-batch" && (c.SequencesMatched == nil || *c.SequencesMatched > c.Batch ||
				(*c.SequencesMatched == c.Batch) != *c.TokensMatch) {
				t.Errorf("configuration %d: %d of %d sequences matching, tokens_match %v", i, deref(c.SequencesMatched), c.Batch, *c.TokensMatch)
			}
		case "timed":
		default:
			t.Fatalf("configuration %d: kind %q", i, c.Kind)
		}
	}
	grid := map[string]bool{}
	for i, c := range doc.Configurations {
		if c.Kind != "timed" {
			continue
		}
		pos, ok := c.Pos.(float64)
		if !ok || c.Strategy == "" || (c.Batch != 1 && c.Batch != 4 && c.Batch != 16) {
			t.Fatalf("timed %d: strategy %q, batch %d, pos %v", i, c.Strategy, c.Batch, c.Pos)
		}
		grid[c.Model+" "+strconv.Itoa(c.Batch)+" "+strconv.Itoa(int(pos))] = true
		if c.MedianMS == nil || c.P10MS == nil || c.P90MS == nil || c.MaxMS == nil ||
			!(0 < *c.P10MS && *c.P10MS <= *c.MedianMS && *c.MedianMS <= *c.P90MS && *c.P90MS <= *c.MaxMS) {
			t.Errorf("timed %d (%s %s b%d p%v): spread not in order", i, c.Model, c.Strategy, c.Batch, c.Pos)
			continue
		}
		if c.TimedSteps < 30 {
			t.Errorf("timed %d: %d timed steps", i, c.TimedSteps)
		}
		if c.Baseline == nil || *c.Baseline == "" || c.BaselineMS == nil || *c.BaselineMS <= 0 || c.Ratio == nil ||
			math.Abs(*c.Ratio - *c.MedianMS / *c.BaselineMS) > 1e-9 {
			t.Errorf("timed %d (%s %s b%d p%v): baseline %v %v, ratio %v", i, c.Model, c.Strategy, c.Batch, c.Pos, c.Baseline, c.BaselineMS, c.Ratio)
		}
		if c.VerifyMS == nil || *c.VerifyMS < 0 || c.LogitsMaxAbsErr == nil || c.CorrectnessFrom == nil {
			t.Errorf("timed %d (%s %s b%d p%v): verify_ms, logits error or correctness_from missing", i, c.Model, c.Strategy, c.Batch, c.Pos)
			continue
		}
		if !correctnessFound(checks, *c.CorrectnessFrom, *c.TokensMatch) {
			t.Errorf("timed %d (%s %s b%d p%v): correctness_from %q names no decode check with tokens_match %v",
				i, c.Model, c.Strategy, c.Batch, c.Pos, *c.CorrectnessFrom, *c.TokensMatch)
		}
		if !*c.TokensMatch {
			t.Errorf("timed %d: %s %s at batch %d, position %v is not token-exact", i, c.Model, c.Strategy, c.Batch, c.Pos)
		}
	}
	for m := range models {
		for _, b := range []int{1, 4, 16} {
			for _, p := range []int{128, 1024, 4096} {
				if !grid[m+" "+strconv.Itoa(b)+" "+strconv.Itoa(p)] {
					t.Errorf("no timed run of %s at batch %d, position %d", m, b, p)
				}
			}
		}
	}
}

// correctnessFound reports whether a correctness_from text ("KIND MODEL
// STRATEGY (INIT), batch B, positions 0-63, CALL") names a decode check of
// the document with the given tokens_match.
func correctnessFound(checks map[string]bool, from string, match bool) bool {
	var kind, model, strategy, call string
	var batch int
	// The init in parentheses may hold spaces and commas: cut around it.
	open, close := strings.IndexByte(from, '('), strings.LastIndexByte(from, ')')
	if open < 0 || close < open {
		return false
	}
	head, tail := from[:open], from[close+1:]
	if n, _ := fmt.Sscan(head, &kind, &model, &strategy); n != 3 {
		return false
	}
	if n, _ := fmt.Sscanf(tail, ", batch %d, positions 0-63, %s", &batch, &call); n != 2 {
		return false
	}
	got, ok := checks[kind+" "+model+" "+strategy+" "+strconv.Itoa(batch)+" "+call]
	return ok && got == match
}

func deref(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}
