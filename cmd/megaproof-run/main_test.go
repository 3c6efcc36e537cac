package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A schedule with an injected fault is refused before any device is
// opened, so this runs without a GPU.
func TestRefusesUnsafe(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"-model", "smollm2-135m", "-tokens", "2", "-fault", "drop-wait"}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "refused") || !strings.Contains(errb.String(), "not verified safe") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
}

func TestUsage(t *testing.T) {
	var out, errb bytes.Buffer
	for _, args := range [][]string{{"-model", "gpt-9"}, {"-tokens", "0"}, {"-fault", "nope"}, {"-strategy", "x"}} {
		if code := run(args, &out, &errb); code != 2 {
			t.Errorf("%v: exit %d", args, code)
		}
	}
}

// Batched schedules with attention per sequence and split chunks go through
// the same gate: a fault injected into them is refused before any device
// is opened.
func TestRefusesUnsafeBatch(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"-model", "smollm2-135m", "-tokens", "2", "-batch", "4", "-rows", "-fuse", "-splits", "8", "-split-chunk", "256", "-fault", "drop-wait"}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "refused") || !strings.Contains(errb.String(), "not verified safe") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
}

func TestUsageBatch(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-batch", "0"}, "-batch 0"},
		{[]string{"-batch", "65"}, "-batch 65"},
		{[]string{"-split-chunk", "-1"}, "-split-chunk -1"},
		{[]string{"-batch", "16", "-first", "49000"}, "sequence 2 would start from token 49194"},
		{[]string{"-batch", "2", "-first", "-1"}, "outside the vocabulary"},
		{[]string{"-batch", "16", "-fuse", "-tokens", "1"}, "batch 16 × hidden 576 = 9216 inputs in a task, more than 8192"},
	} {
		var out, errb bytes.Buffer
		if code := run(c.args, &out, &errb); code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, errb.String(), c.want)
		}
	}
}

func TestReadRef(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	one := write("ref.json", `{"first": 1, "tokens_bf16": [5, 6, 7]}`)
	four := write("batch-2.json", `{"batch": 2, "firsts": [1, 98], "tokens_bf16": [[5, 6, 7], [8, 9, 10]]}`)
	if got, err := readRef(one, []int32{1}, 3); err != nil || len(got) != 1 || got[0][2] != 7 {
		t.Fatalf("ref.json: %v, %v", got, err)
	}
	if got, err := readRef(four, []int32{1, 98}, 2); err != nil || len(got) != 2 || got[1][0] != 8 {
		t.Fatalf("batch-2.json: %v, %v", got, err)
	}
	for _, c := range []struct {
		path   string
		firsts []int32
		steps  int
		want   string
	}{
		{one, []int32{2}, 3, "starts from token 1"},
		{one, []int32{1}, 4, "holds 3 tokens"},
		{one, []int32{1, 98}, 3, "holds 1 sequences, the run decodes 2"},
		{four, []int32{1, 99}, 3, "sequence 1 starts from token 98"},
		{four, []int32{1}, 3, "holds 2 sequences, the run decodes 1"},
		{write("bad1.json", `{"first": 1, "tokens_bf16": [[5]]}`), []int32{1}, 1, "not a reference of one sequence"},
		{write("bad2.json", `{"tokens_bf16": [5]}`), []int32{1}, 1, "not a reference of one sequence"},
		{write("bad3.json", `{"batch": 2, "firsts": [1], "tokens_bf16": [[5], [6]]}`), []int32{1, 98}, 1, "not a reference of 2 sequences"},
		{write("bad4.json", `{"batch": 2`), []int32{1, 98}, 1, "bad4.json"},
		{filepath.Join(dir, "missing.json"), []int32{1}, 1, "missing.json"},
	} {
		if _, err := readRef(c.path, c.firsts, c.steps); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v %d: %v, want %q", filepath.Base(c.path), c.firsts, c.steps, err, c.want)
		}
	}
}
