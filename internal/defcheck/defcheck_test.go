package defcheck

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/schedule"
)

// The definitional checker labels every documented code example with that
// code's family (semaphore programs are out of its scope).
func TestCodeExamples(t *testing.T) {
	files, err := filepath.Glob("../../verify/testdata/codes/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, file := range files {
		code := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(code, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			p, err := schedule.Unmarshal(data)
			if err != nil {
				t.Fatal(err)
			}
			fams, err := Families(p)
			if code == "deadlock.semaphore" {
				if !errors.Is(err, ErrSemaphores) {
					t.Fatalf("err %v, want ErrSemaphores", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			family, _, _ := strings.Cut(code, ".")
			if !slices.Equal(fams, []string{family}) {
				t.Errorf("families %v, want [%s]", fams, family)
			}
		})
	}
}

// A handoff is safe exactly when the reader waits for the writer's release.
func TestHandoff(t *testing.T) {
	for _, c := range []struct {
		reason string
		wait   bool
		opts   []schedule.StepOption
		want   []string
	}{
		{"release then acquire", true, nil, nil},
		{"no wait", false, nil, []string{"race"}},
		{"relaxed signal", true, []schedule.StepOption{schedule.Relaxed()}, []string{"race"}},
		{"cta-scoped signal", true, []schedule.StepOption{schedule.WithScope(schedule.ScopeCTA)}, []string{"race"}},
	} {
		b := schedule.NewBuilder("h", schedule.Launch{SMs: 2, PerSM: 1, Workers: 2, Cooperative: true})
		x := b.Buffer("x", schedule.KindState, 8)
		ready := b.Counter("ready")
		b.Task("w").On(0).Write(x, 0, 8).Signal(ready, 1, c.opts...)
		r := b.Task("r").On(1).Read(x, 0, 8)
		if c.wait {
			r.Wait(ready, 1)
		}
		p, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		fams, err := Families(p)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(fams, c.want) {
			t.Errorf("%s: families %v, want %v", c.reason, fams, c.want)
		}
	}
}
