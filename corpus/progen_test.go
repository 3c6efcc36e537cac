package corpus

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/internal/progen"
	"github.com/megaproof/megaproof/schedule"
)

var update = flag.Bool("update", false, "rewrite "+ProgenFile+" from internal/progen")

// TestProgenSeeds requires the stored progen programs to be exactly what
// internal/progen draws for every progen seed of the corpus, and that every
// stored program is used.
func TestProgenSeeds(t *testing.T) {
	var sb strings.Builder
	failed := 0
	used := map[progenKey]bool{}
	for _, s := range Seeds() {
		args, ok := strings.CutPrefix(s.Recipe, "progen:")
		if !ok {
			continue
		}
		kv, err := parseArgs(args)
		if err != nil {
			t.Fatal(err)
		}
		seed, err := kv.int("seed", 0)
		if err != nil {
			t.Fatal(err)
		}
		var o progen.Options
		switch kv["size"] {
		case "small":
			o = progen.Small()
		case "medium":
			o = progen.Medium()
		default:
			t.Fatalf("%s: size %q", s.Recipe, kv["size"])
		}
		canonical, err := schedule.Marshal(progen.Program(o).Example(seed))
		if err != nil {
			t.Fatalf("%s: %v", s.Recipe, err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, canonical); err != nil {
			t.Fatal(err)
		}
		want := compact.Bytes()
		key := progenKey{kv["size"], seed}
		used[key] = true
		fmt.Fprintf(&sb, "%s\t%d\t%s\n", key.size, key.seed, want)
		if *update {
			continue
		}
		got, ok := progenPrograms()[key]
		if !ok {
			t.Errorf("%s is not stored in %s; run `go test ./corpus -run TestProgenSeeds -update`", s.Recipe, ProgenFile)
			continue
		}
		if string(got) != string(want) {
			if failed++; failed > 5 {
				continue
			}
			t.Errorf("%s: the stored program differs from what internal/progen draws; run `go test ./corpus -run TestProgenSeeds -update`", s.Recipe)
		}
	}
	if failed > 5 {
		t.Errorf("%d stored programs differ in all, first 5 shown", failed)
	}
	if *update {
		if err := os.WriteFile(ProgenFile, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for key := range progenPrograms() {
		if !used[key] {
			t.Errorf("%s stores progen:size=%s,seed=%d, which no seed uses", ProgenFile, key.size, key.seed)
		}
	}
	if len(used) == 0 {
		t.Error("the corpus has no progen seeds")
	}
}
