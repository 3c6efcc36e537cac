package mpk_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/schedule/mpk"
)

// FuzzUnmarshal checks that no input panics, that every error is a
// *schedule.Error of invalid.* diagnostics with JSON paths, and that every
// accepted program is valid and survives megaproof's JSON round trip, with
// static and dynamic dispatch. Seeds: the testdata graphs and
// testdata/fuzz/FuzzUnmarshal.
func FuzzUnmarshal(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.json")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		mpk.Detect(data)
		for _, o := range []mpk.Options{{}, {Dispatch: mpk.Dynamic, Iterations: 1}, {Residency: mpk.Exclusive, SMs: 8, Workers: 6, Schedulers: 2}} {
			p, err := o.Unmarshal(data)
			if err != nil {
				var se *schedule.Error
				if !errors.As(err, &se) || len(se.Diagnostics) == 0 {
					t.Fatalf("error %T %v is not a *schedule.Error with diagnostics", err, err)
				}
				for _, d := range se.Diagnostics {
					if !strings.HasPrefix(d.Code, "invalid.") || !strings.HasPrefix(d.Path, "$") {
						t.Fatalf("diagnostic %v: want an invalid.* code and a JSON path", d)
					}
				}
				return
			}
			if err := p.Validate(); err != nil {
				t.Fatalf("accepted an invalid program: %v", err)
			}
			enc, err := schedule.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			back, err := schedule.Unmarshal(enc)
			if err != nil {
				t.Fatalf("megaproof JSON of a mapped program does not decode: %v", err)
			}
			if !cmp.Equal(p, back, cmpopts.EquateEmpty()) {
				t.Fatalf("round trip differs:\n%s", cmp.Diff(p, back, cmpopts.EquateEmpty()))
			}
		}
	})
}
