package corpus

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/internal/faults"
)

// FaultHintsFile names, per variant of internal/faults, corpus entries
// that caught it when it was last measured; the fault-variant test tries
// them first.
const FaultHintsFile = "testdata/faults.tsv"

// TestFaultVariants proves that the corpus can fail: it builds the
// deliberately wrong verifiers of internal/faults (the megaproof_faults
// build tag) into internal/faultrun, runs the corpus under each, and
// requires every variant to be caught by some entry (a false accept, a
// false reject, another finding, a witness that does not replay, an error
// or a panic). The run stops once every variant is caught; the entries of
// FaultHintsFile go first, so it usually checks a few dozen entries. A
// stale hints file only makes it slower.
//
// The measurement behind docs/FAULTS.md's table (every entry under every
// variant) is
//
//	go run -tags megaproof_faults ./corpus/internal/faultrun -all -write-hints corpus/testdata/faults.tsv
func TestFaultVariants(t *testing.T) {
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		if goTool, err = exec.LookPath("go"); err != nil {
			t.Fatalf("no go command to build the fault variants: %v", err)
		}
	}
	bin := filepath.Join(t.TempDir(), "faultrun")
	build := exec.Command(goTool, "build", "-tags", "megaproof_faults", "-o", bin, "./internal/faultrun")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags megaproof_faults ./internal/faultrun: %v\n%s", err, out)
	}
	run := exec.Command(bin, "-hints", FaultHintsFile)
	var stderr bytes.Buffer
	run.Stderr = &stderr
	out, err := run.Output()
	caught := map[string]string{}
	var uncaught []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		switch {
		case len(f) >= 4 && f[0] == "caught":
			caught[f[1]] = f[2] + " (" + f[3] + ")"
		case len(f) >= 2 && f[0] == "uncaught":
			uncaught = append(uncaught, f[1])
		case f[0] == "summary":
			t.Log(sc.Text())
		}
	}
	for _, in := range faults.Variants() {
		if by, ok := caught[in.Name]; ok {
			t.Logf("%-30s caught by %s", in.Name, by)
		} else {
			t.Errorf("variant %s (%s) is caught by no corpus entry", in.Name, in.Doc)
		}
	}
	if err != nil && len(uncaught) == 0 {
		t.Fatalf("faultrun: %v\n%s", err, stderr.Bytes())
	}
}
