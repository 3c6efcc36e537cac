package verify

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/megaproof/megaproof/schedule"
)

// An output-unwritten finding names the whole run of unwritten bytes from
// the first one, not a piece of the geometry's partition, and its patch
// writes that run in one access: the two tasks write the even and the odd
// bytes of [0, 32) of a 64-byte output.
func TestUnwrittenRun(t *testing.T) {
	p, err := schedule.Unmarshal([]byte(`{"format": "megaproof/v1", "launch": {"sms": 4, "workers": 2},
		"buffers": [{"name": "o", "kind": "output", "size": 64}],
		"tasks": [{"name": "a", "worker": 0, "writes": [{"buffer": "o", "offset": 0, "length": 1, "rows": 16, "stride": 2}]},
			{"name": "b", "worker": 1, "writes": [{"buffer": "o", "offset": 1, "length": 1, "rows": 16, "stride": 2}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), p, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 1 || res.Findings[0].Code != CodeOutputUnwritten {
		t.Fatalf("findings %v, want one output-unwritten", res.Findings)
	}
	f := res.Findings[0]
	patch := unwrittenPatch(p, &f)
	if want := "output o: bytes [32, 64) are never written"; f.Message != want {
		t.Errorf("message %q, want %q", f.Message, want)
	}
	if len(patch) != 1 {
		t.Fatalf("patch %v, want one added write", patch)
	}
	var w struct {
		Buffer         string
		Offset, Length int64
	}
	if err := json.Unmarshal(patch[0].Value, &w); err != nil || w != (struct {
		Buffer         string
		Offset, Length int64
	}{"o", 32, 32}) {
		t.Errorf("patch %s %s %s (%v), want a write of bytes [32, 64) of o", patch[0].Op, patch[0].Path, patch[0].Value, err)
	}
}
