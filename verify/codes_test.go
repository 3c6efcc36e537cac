package verify

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Every documented code has a tiny example program in testdata/codes named
// after it; verifying it must report exactly that code.
func TestCodeExamples(t *testing.T) {
	files, err := filepath.Glob("testdata/codes/*.json")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, file := range files {
		code := strings.TrimSuffix(filepath.Base(file), ".json")
		seen[code] = true
		t.Run(code, func(t *testing.T) {
			p := readProgram(t, file)
			r, err := Run(context.Background(), p, Config{Sanity: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := codes(r); !slices.Equal(got, []string{code}) {
				t.Errorf("codes %v, want [%s]; findings %+v", got, code, r.Findings)
			}
		})
	}
	for _, code := range []string{
		CodeDeadlockUnsatisfiable, CodeDeadlockCycle, CodeDeadlockBarrier, CodeDeadlockSemaphore,
		CodeOccupancy, CodeRaceRAW, CodeRaceWAR, CodeRaceWAW, CodeRaceUnsynchronized, CodeRaceScope,
		CodeUninitializedRead, CodeOutOfBounds, CodeReadonlyWrite, CodeOutputUnwritten, CodeCounterOverflow,
	} {
		if !seen[code] {
			t.Errorf("code %s has no example in testdata/codes", code)
		}
	}
}
