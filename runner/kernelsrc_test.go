package runner

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite generated files")

// The generated header must match the Go declarations; -update rewrites it.
func TestOpcodesHeader(t *testing.T) {
	want := opcodesHeader()
	const path = "kernels/opcodes.cuh"
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s is stale: run go generate ./runner", path)
	}
	// Every numeric op's body is dispatched, and the dispatch traps on
	// anything else.
	src := kernelSource()
	for _, o := range numOps {
		if !strings.Contains(src, "case OP_"+strings.ToUpper(o.name)+":") {
			t.Errorf("kernel source dispatches no OP_%s", strings.ToUpper(o.name))
		}
	}
	if !strings.Contains(src, "default: __trap();") {
		t.Error("numeric dispatch does not trap on unknown op codes")
	}
}

// MEGAPROOF_KERNEL_SRC=path writes the assembled kernel source there (for
// scripts/gpu/cudacheck.sh).
func TestKernelSourceDump(t *testing.T) {
	path := os.Getenv("MEGAPROOF_KERNEL_SRC")
	if path == "" {
		t.Skip("MEGAPROOF_KERNEL_SRC not set")
	}
	if err := os.WriteFile(path, []byte(kernelSource()), 0o644); err != nil {
		t.Fatal(err)
	}
}
