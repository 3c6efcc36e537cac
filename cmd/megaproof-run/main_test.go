package main

import (
	"bytes"
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
