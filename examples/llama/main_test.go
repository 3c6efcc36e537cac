package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/schedule"
)

func TestJSONToFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "p.json")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-model", "smollm2-135m", "-target", "l4", "-tile", "256", "-o", out, "-noverify"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	p, err := schedule.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "tasks     "+strconv.Itoa(len(p.Tasks))) {
		t.Fatalf("summary does not match the file:\n%s", stdout.String())
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{{"-model", "gpt-9"}, {"-target", "tpu"}, {"-strategy", "random"}, {"-config", "nope"}, {"extra"}, {"-tile", "0", "-pos", "-1"}} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-list"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "llama2-13b-h100-rr-t32") {
		t.Errorf("-list: exit %d\n%s", code, stdout.String())
	}
}
