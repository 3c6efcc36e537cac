package verify

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/megaproof/megaproof/internal/brute"
	"github.com/megaproof/megaproof/schedule"
)

// FuzzVerify decodes arbitrary bytes, verifies whatever decodes with every
// witness replayed (Config.Sanity), and holds small programs to the
// brute-force oracle. Malformed input must be an invalid result, never a
// panic; every run must end within its deadline.
func FuzzVerify(f *testing.F) {
	for _, dir := range []string{"testdata/codes", "testdata/rapid/differential"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := schedule.Unmarshal(data)
		if err != nil {
			var se *schedule.Error
			if !errors.As(err, &se) || len(se.Diagnostics) == 0 {
				t.Fatalf("decode error %v is not a *schedule.Error with diagnostics", err)
			}
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r, err := Run(ctx, p, Config{Sanity: true, MaxStates: 20000})
		if errors.Is(err, context.DeadlineExceeded) {
			return // honoured the deadline
		}
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if r.Verdict == Inconclusive || slices.ContainsFunc(r.Findings, func(f Finding) bool { return f.Code == CodeInconclusive }) {
			return
		}
		if len(p.Tasks) > 12 {
			return
		}
		want, err := brute.Families(p, brute.Config{MaxStates: 20000})
		if errors.Is(err, brute.ErrBudget) {
			return
		}
		if err != nil {
			t.Fatalf("brute: %v", err)
		}
		if got := families(r); !slices.Equal(got, want) {
			t.Fatalf("verify %v, brute-force enumeration %v", got, want)
		}
	})
}
