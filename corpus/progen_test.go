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

// TestProgenSeeds requires every progen seed of the corpus to be stored in
// ProgenFile as a valid program in canonical form, and every stored program
// to be used. The stored programs are the seeds: internal/progen may draw
// differently after a change without moving the corpus. With -update the
// file is rewritten from what internal/progen draws now (then run `go
// generate ./corpus`, since the mutants' hashes change with their seeds).
func TestProgenSeeds(t *testing.T) {
	var sb strings.Builder
	used := map[progenKey]bool{}
	differ := 0
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
		drawn, err := compactProgram(progen.Program(o).Example(seed))
		if err != nil {
			t.Fatalf("%s: %v", s.Recipe, err)
		}
		key := progenKey{kv["size"], seed}
		used[key] = true
		fmt.Fprintf(&sb, "%s\t%d\t%s\n", key.size, key.seed, drawn)
		if *update {
			continue
		}
		stored, ok := progenPrograms()[key]
		if !ok {
			t.Errorf("%s is not stored in %s; run `go test ./corpus -run TestProgenSeeds -update`", s.Recipe, ProgenFile)
			continue
		}
		p, err := schedule.Unmarshal(stored)
		if err != nil {
			t.Errorf("%s: the stored program is invalid: %v", s.Recipe, err)
			continue
		}
		if canonical, _ := compactProgram(p); string(canonical) != string(stored) {
			t.Errorf("%s: the stored program is not in canonical form", s.Recipe)
		}
		if string(drawn) != string(stored) {
			differ++
		}
	}
	if differ > 0 {
		t.Logf("%d stored programs differ from what internal/progen draws now (the corpus keeps the stored ones)", differ)
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

// compactProgram is p's canonical JSON on one line.
func compactProgram(p *schedule.Program) ([]byte, error) {
	canonical, err := schedule.Marshal(p)
	if err != nil {
		return nil, err
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, canonical); err != nil {
		return nil, err
	}
	return compact.Bytes(), nil
}
