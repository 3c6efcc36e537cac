package corpus

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/mutate"
	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify"
)

// TestCorpus regenerates every entry from its recipe, checks its content
// hash, and requires verify to agree with the oracle's verdict and finding
// families. One parallel subtest per class (operator); -short samples every
// fourth entry of each class.
func TestCorpus(t *testing.T) {
	entries, err := Entries()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) == 0 {
		t.Fatalf("%s has no entries; run `go generate ./corpus`", ExpectationsFile)
	}
	byClass := map[string][]Entry{}
	for _, e := range entries {
		byClass[e.Operator] = append(byClass[e.Operator], e)
	}
	for _, op := range mutate.Operators() {
		class := byClass[op.Name]
		delete(byClass, op.Name)
		t.Run(op.Name, func(t *testing.T) {
			t.Parallel()
			failed := 0
			for i, e := range class {
				if testing.Short() && i%4 != 0 {
					continue
				}
				// Sanity: every witness verify gives replays in schedule.Replay.
				o := CheckConfig(context.Background(), e, verify.Config{Sanity: true})
				if o.Kind == OutcomeOK {
					continue
				}
				if failed++; failed > 20 {
					continue
				}
				t.Errorf("%s: %s: %s\n\trecipe: %s", e.ID, o.Kind, o.Detail, e.Recipe)
			}
			if failed > 20 {
				t.Errorf("%d failures in all, first 20 shown", failed)
			}
		})
	}
	for name := range byClass {
		t.Errorf("%s names operator %q, which mutate no longer has; run `go generate ./corpus`", ExpectationsFile, name)
	}
}

// TestTargets pins the size of the corpus the README promises.
func TestTargets(t *testing.T) {
	entries, err := Entries()
	if err != nil {
		t.Fatal(err)
	}
	var s Summary
	for _, e := range entries {
		s.Add(Outcome{Entry: e, Kind: OutcomeOK})
	}
	classes := 0
	for _, c := range s.Classes {
		if c.Faulty > 0 {
			classes++
		}
	}
	if s.Faulty < 7000 || s.Safe < 1000 || classes < 25 {
		t.Errorf("corpus has %d faulty entries, %d safe controls and %d classes with faults; want at least 7000, 1000 and 25", s.Faulty, s.Safe, classes)
	}
	if n := len(Seeds()); n < 300 {
		t.Errorf("%d seeds, want at least 300", n)
	}
}

// TestSeeds builds every seed and requires it to be valid and
// deterministic (two builds marshal to the same bytes).
func TestSeeds(t *testing.T) {
	ids := map[string]bool{}
	for _, s := range Seeds() {
		if ids[s.ID] {
			t.Errorf("duplicate seed id %s", s.ID)
		}
		ids[s.ID] = true
		if s.Big && testing.Short() {
			continue
		}
		p, err := s.Program()
		if err != nil {
			t.Errorf("%s: %v", s.ID, err)
			continue
		}
		q, err := Build(s.Recipe)
		if err != nil {
			t.Errorf("%s: second build: %v", s.ID, err)
			continue
		}
		h1, err1 := Hash(p)
		h2, err2 := Hash(q)
		if err1 != nil || err2 != nil || h1 != h2 {
			t.Errorf("%s: builds differ (%s, %s, %v, %v)", s.ID, h1, h2, err1, err2)
		}
	}
}

// TestEntriesRoundTrip requires the expectations file to be in canonical
// form: reading and writing it again gives the same bytes.
func TestEntriesRoundTrip(t *testing.T) {
	entries, err := Entries()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteEntries(&b, entries); err != nil {
		t.Fatal(err)
	}
	if b.String() != string(expectations) {
		t.Errorf("%s is not in canonical form; run `go generate ./corpus`", ExpectationsFile)
	}
	disk, err := os.ReadFile(ExpectationsFile)
	if err != nil || string(disk) != string(expectations) {
		t.Errorf("embedded expectations differ from %s (%v)", ExpectationsFile, err)
	}
}

// TestCheckFails makes sure Check can fail: a wrong hash is drift, a
// flipped verdict a false accept or reject, a wrong family a mismatch.
func TestCheckFails(t *testing.T) {
	entries, err := Entries()
	if err != nil {
		t.Fatal(err)
	}
	var unsafe, safe *Entry
	for i := range entries {
		e := &entries[i]
		if e.Oracle != OracleExplore || !strings.HasPrefix(e.Seed, "proto-") {
			continue
		}
		if e.Verdict == VerdictUnsafe && unsafe == nil {
			unsafe = e
		}
		if e.Verdict == VerdictSafe && safe == nil {
			safe = e
		}
	}
	if unsafe == nil || safe == nil {
		t.Fatal("no unsafe or safe proto entry")
	}
	ctx := context.Background()
	for _, tc := range []struct {
		reason string
		edit   func(e *Entry)
		from   *Entry
		want   string
	}{
		{"hash of another mutant", func(e *Entry) { e.Hash = "0123456789abcdef" }, unsafe, OutcomeDrift},
		{"safe control labelled unsafe", func(e *Entry) { e.Verdict, e.Families = VerdictUnsafe, []string{"race"} }, safe, OutcomeFalseAccept},
		{"faulty entry labelled safe", func(e *Entry) { e.Verdict, e.Families = VerdictSafe, nil }, unsafe, OutcomeFalseReject},
		{"wrong family", func(e *Entry) { e.Families = []string{"zzz"} }, unsafe, OutcomeFamilyMismatch},
		{"unknown operator", func(e *Entry) { e.Operator = "no-such-op" }, unsafe, OutcomeDrift},
	} {
		e := *tc.from
		tc.edit(&e)
		if got := Check(ctx, e); got.Kind != tc.want {
			t.Errorf("%s: Check(%s) = %s (%s), want %s", tc.reason, e.ID, got.Kind, got.Detail, tc.want)
		}
	}
}

// TestRecipes checks recipe parsing errors.
func TestRecipes(t *testing.T) {
	for _, r := range []string{"nope:", "llama:layers=x", "proto:kind=none", "progen:size=huge,seed=1", "json:../x.json", "llama-named:no-such", "llama:tile"} {
		if _, err := Build(r); err == nil {
			t.Errorf("Build(%q) succeeded", r)
		}
	}
	for _, r := range []string{"llama:layers=1", "proto:kind=ring", "json:fenced-handoff.json", "progen:size=small,seed=3"} {
		p, err := Build(r)
		if err != nil {
			t.Errorf("Build(%q): %v", r, err)
			continue
		}
		if _, err := schedule.Marshal(p); err != nil {
			t.Errorf("Marshal(%q): %v", r, err)
		}
	}
}

func ExampleCheck() {
	entries, err := Entries()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range entries {
		if e.ID == "proto-000/drop-release/0/"+fmt.Sprint(e.MSeed) {
			o := Check(context.Background(), e)
			fmt.Println(e.Operator, e.Oracle, e.Verdict, e.Families, o.Kind)
			return
		}
	}
	fmt.Println("not found")
	// Output: drop-release explore unsafe [deadlock] ok
}
