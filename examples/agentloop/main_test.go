package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestLoop runs a short search twice: it must be deterministic, reject
// every deliberately broken proposal with a finding, and accept every other.
func TestLoop(t *testing.T) {
	o := options{seed: 7, rounds: 10, model: "smollm2-135m", layers: 3, brokenPct: 0.5}
	var a, b bytes.Buffer
	if err := loop(context.Background(), o, &a); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + a.String())
	if err := loop(context.Background(), o, &b); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Fatalf("not deterministic:\n%s\nvs\n%s", a.String(), b.String())
	}
	out := a.String()
	if strings.Contains(out, "bug)") {
		t.Fatalf("the gate disagreed with the proposal:\n%s", out)
	}
	rejected, accepted := 0, 0
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "#") {
			rejected += strings.Count(line, " rejected ")
			accepted += strings.Count(line, " accepted ")
		}
	}
	if rejected == 0 || accepted == 0 || rejected+accepted != o.rounds {
		t.Fatalf("%d accepted, %d rejected of %d rounds:\n%s", accepted, rejected, o.rounds, out)
	}
	broken := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "#") && strings.Contains(strings.SplitN(line, " (", 2)[0], " +") {
			broken++
		}
	}
	if broken != rejected {
		t.Fatalf("%d broken proposals, %d rejected:\n%s", broken, rejected, out)
	}
	if !strings.Contains(out, "[witness ") || !strings.Contains(out, "best ") {
		t.Fatalf("missing finding or best line:\n%s", out)
	}
}

func TestUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-model", "gpt-9"}, &stdout, &stderr); code == 0 {
		t.Fatal("unknown model accepted")
	}
	if code := run([]string{"-bogus"}, &stdout, &stderr); code != 2 {
		t.Fatalf("bad flag: exit %d", code)
	}
}
