package corpus

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/internal/defcheck"
	"github.com/megaproof/megaproof/mutate"
	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify"
)

// TestCorpus regenerates every entry from its recipe, checks its content
// hash, and requires verify to agree with the oracles' verdict, finding
// codes and locations, every witness replaying through
// schedule.CheckWitness. One parallel subtest per class (operator), and
// one for the seeds; -short samples every fourth entry of each.
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
	names := []string{SeedOperator}
	for _, op := range mutate.Operators() {
		names = append(names, op.Name)
	}
	for _, name := range names {
		class := byClass[name]
		delete(byClass, name)
		t.Run(name, func(t *testing.T) {
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
	huge, hugeFaulty := 0, 0
	for _, e := range entries {
		s.Add(Outcome{Entry: e, Kind: OutcomeOK})
		switch {
		case e.Size < 70000:
		case e.Operator == SeedOperator && e.Verdict == VerdictSafe:
			huge++
		case e.Verdict == VerdictUnsafe:
			hugeFaulty++
		}
	}
	classes := 0
	for _, c := range s.Classes {
		if c.Faulty > 0 {
			classes++
		}
	}
	if s.Faulty < 7000 || s.Safe < 1000 || classes < 34 {
		t.Errorf("corpus has %d faulty entries, %d safe controls and %d classes with faults; want at least 7000, 1000 and 34", s.Faulty, s.Safe, classes)
	}
	if s.LargeFaulty < 1000 {
		t.Errorf("%d faulty entries of at least %d tasks, want at least 1000", s.LargeFaulty, LargeTasks)
	}
	if huge == 0 || hugeFaulty == 0 {
		t.Errorf("%d safe seeds and %d faulty entries of 70,000 tasks or more, want at least one of each", huge, hugeFaulty)
	}
	if s.Seeds < 300 || s.Seeds != len(Seeds()) {
		t.Errorf("%d seed entries for %d seeds, want one per seed and at least 300", s.Seeds, len(Seeds()))
	}
	if s.UnsafeSeeds > 0 {
		t.Errorf("%d unsafe seeds", s.UnsafeSeeds)
	}
}

// TestClassCoverage requires faulty entries of every operator whose
// mutants are not equivalent to their input, and faulty entries of at
// least LargeTasks tasks of every such operator that has a site on a seed
// of that size (with -short, the big seeds are not built).
func TestClassCoverage(t *testing.T) {
	entries, err := Entries()
	if err != nil {
		t.Fatal(err)
	}
	faulty, large := map[string]int{}, map[string]int{}
	var seeds []Entry
	for _, e := range entries {
		switch {
		case e.Operator == SeedOperator && e.Verdict == VerdictSafe && e.Size >= LargeTasks:
			seeds = append(seeds, e)
		case e.Verdict == VerdictUnsafe:
			faulty[e.Operator]++
			if e.Size >= LargeTasks {
				large[e.Operator]++
			}
		}
	}
	big := map[string]bool{}
	for _, s := range Seeds() {
		big[s.ID] = s.Big
	}
	// Smallest seeds first; an operator is tried until a seed has a site.
	slices.SortStableFunc(seeds, func(a, b Entry) int { return a.Size - b.Size })
	applies := map[string]string{} // operator: a large seed with a site
	for _, e := range seeds {
		if big[e.Seed] && testing.Short() {
			continue
		}
		p, err := SeedProgram(e.Recipe)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range mutate.Operators() {
			if applies[op.Name] == "" && op.Sites(p) > 0 {
				applies[op.Name] = e.Seed
			}
		}
	}
	for _, op := range mutate.Operators() {
		if slices.Equal(op.Expect, []string{"safe"}) {
			continue // a control: its mutants keep their seed's verdict
		}
		if faulty[op.Name] == 0 {
			t.Errorf("class %s has no faulty entry", op.Name)
		}
		if on := applies[op.Name]; on != "" && large[op.Name] == 0 {
			t.Errorf("class %s applies to a seed of %d tasks or more (%s) but has no faulty entry of that size", op.Name, LargeTasks, on)
		}
	}
	if len(applies) == 0 {
		t.Error("no operator has a site on a seed of 1,000 tasks or more")
	}
}

// TestSeedsSafe requires every seed's own entry to be safe by the oracles,
// by two of them where both the explorer and the definitional checker
// apply; only a seed beyond every oracle's reach may stay undecided. And
// no mutant of a seed that is not safe is in the corpus.
func TestSeedsSafe(t *testing.T) {
	entries, err := Entries()
	if err != nil {
		t.Fatal(err)
	}
	verdict := map[string]string{}
	cfg := LabelConfig{}.withDefaults()
	for _, e := range entries {
		if e.Operator != SeedOperator {
			continue
		}
		verdict[e.Seed] = e.Verdict
		oracles := strings.Split(e.Oracle, "+")
		switch {
		case e.Verdict == VerdictUndecided && e.Size <= cfg.DefcheckTasks:
			// Undecided only where the definitional checker does not
			// apply (semaphores, dispatch) or runs out of its budget.
			p, err := SeedProgram(e.Recipe)
			if err != nil {
				t.Fatal(err)
			}
			run := defcheck.CodesBudget
			if e.Size >= cfg.DefcheckAtScale {
				run = defcheck.CodesAtScale
			}
			if _, err := run(p, cfg.DefcheckWork); err == nil {
				t.Errorf("%s: seed of %d tasks undecided, but the definitional checker decides it", e.Seed, e.Size)
			}
		case e.Verdict != VerdictSafe && e.Verdict != VerdictUndecided:
			t.Errorf("%s: seed is %s %v (%s)", e.Seed, e.Verdict, e.Codes, e.Oracle)
		case e.Verdict == VerdictSafe && e.Size <= cfg.ExploreTasks && len(oracles) < 2:
			p, err := SeedProgram(e.Recipe)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := defcheck.Codes(p); err == nil {
				t.Errorf("%s: safe by %s alone, though the definitional checker decides it too", e.Seed, e.Oracle)
			}
		}
	}
	for _, s := range Seeds() {
		if _, ok := verdict[s.ID]; !ok {
			t.Errorf("seed %s has no entry; run `go generate ./corpus`", s.ID)
		}
	}
	for _, e := range entries {
		if e.Operator != SeedOperator && verdict[e.Seed] != VerdictSafe {
			t.Errorf("%s: mutant of seed %s, which is %s", e.ID, e.Seed, verdict[e.Seed])
		}
	}
}

// TestNoDuplicates requires distinct mutants: no two entries share a
// content hash (malformed ones have none).
func TestNoDuplicates(t *testing.T) {
	entries, err := Entries()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, e := range entries {
		if e.Hash == "" || e.Operator == SeedOperator {
			continue
		}
		if id, ok := seen[e.Hash]; ok {
			t.Errorf("%s and %s have the same mutant (%s)", id, e.ID, e.Hash)
		}
		seen[e.Hash] = e.ID
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
// flipped verdict a false accept or reject, a wrong family a family
// mismatch, a wrong code within the family a code mismatch, a location
// the findings do not name a location mismatch, and a checker that
// codes a barrier deadlock as a cycle, drops a code, or gives a witness
// that does not replay is caught.
func TestCheckFails(t *testing.T) {
	entries, err := Entries()
	if err != nil {
		t.Fatal(err)
	}
	find := func(ok func(e *Entry) bool) *Entry {
		for i := range entries {
			if e := &entries[i]; e.Size < 200 && ok(e) {
				return e
			}
		}
		t.Fatal("no such entry")
		return nil
	}
	unsafe := find(func(e *Entry) bool {
		return e.Verdict == VerdictUnsafe && strings.HasPrefix(e.Seed, "proto-") && e.Operator != SeedOperator
	})
	safe := find(func(e *Entry) bool {
		return e.Verdict == VerdictSafe && strings.HasPrefix(e.Seed, "proto-") && e.Operator != SeedOperator
	})
	raw := find(func(e *Entry) bool { return slices.Equal(e.Codes, []string{"race.raw"}) })
	barrier := find(func(e *Entry) bool { return slices.Equal(e.Codes, []string{"deadlock.barrier"}) })
	located := find(func(e *Entry) bool { return len(e.Tasks) > 0 })
	oob := find(func(e *Entry) bool { return len(e.Tasks) > 0 && slices.Equal(e.Codes, []string{"out-of-bounds"}) })
	raced := find(func(e *Entry) bool {
		return len(e.Codes) == 1 && strings.HasPrefix(e.Codes[0], "race.") && e.Codes[0] != "race.scope"
	})
	ctx := context.Background()
	for _, tc := range []struct {
		reason string
		edit   func(e *Entry)
		from   *Entry
		want   string
	}{
		{"hash of another mutant", func(e *Entry) { e.Hash = "0123456789abcdef" }, unsafe, OutcomeDrift},
		{"safe control labelled unsafe", func(e *Entry) { e.Verdict, e.Codes, e.Families = VerdictUnsafe, []string{"race.raw"}, []string{"race"} }, safe, OutcomeFalseAccept},
		{"faulty entry labelled safe", func(e *Entry) { e.Verdict, e.Codes, e.Families = VerdictSafe, nil, nil }, unsafe, OutcomeFalseReject},
		{"wrong family", func(e *Entry) { e.Codes, e.Families = []string{"zzz"}, []string{"zzz"} }, unsafe, OutcomeFamilyMismatch},
		{"wrong race code", func(e *Entry) { e.Codes = []string{"race.war"} }, raw, OutcomeCodeMismatch},
		{"wrong deadlock code", func(e *Entry) { e.Codes = []string{"deadlock.semaphore"} }, barrier, OutcomeCodeMismatch},
		{"location elsewhere", func(e *Entry) { e.Tasks = []int{e.Size + 1} }, located, OutcomeLocationMismatch},
		{"disputed", func(e *Entry) { e.Verdict = VerdictDisputed }, unsafe, OutcomeDisputed},
		{"unknown operator", func(e *Entry) { e.Operator = "no-such-op" }, unsafe, OutcomeDrift},
	} {
		e := *tc.from
		tc.edit(&e)
		if got := Check(ctx, e); got.Kind != tc.want {
			t.Errorf("%s: Check(%s) = %s (%s), want %s", tc.reason, e.ID, got.Kind, got.Detail, tc.want)
		}
	}
	// Wrong checkers.
	edit := func(change func(r *verify.Result)) Checker {
		return func(ctx context.Context, p *schedule.Program) (*verify.Result, error) {
			r, err := verify.Run(ctx, p, verify.Config{})
			if err == nil {
				change(r)
			}
			return r, err
		}
	}
	for _, tc := range []struct {
		reason string
		check  Checker
		from   *Entry
		want   string
	}{
		{"barrier deadlock coded as cycle", edit(func(r *verify.Result) {
			for i := range r.Findings {
				if r.Findings[i].Code == verify.CodeDeadlockBarrier {
					r.Findings[i].Code = verify.CodeDeadlockCycle
				}
			}
		}), barrier, OutcomeCodeMismatch},
		{"race on tasks that do not exist", edit(func(r *verify.Result) {
			for i := range r.Findings {
				r.Findings[i].Tasks = []int{raced.Size + 1, raced.Size + 2}
			}
		}), raced, OutcomeWitness},
		{"out-of-bounds named on another task", edit(func(r *verify.Result) {
			for i := range r.Findings {
				r.Findings[i].Tasks = []int{(oob.Tasks[0] + 1) % oob.Size}
			}
		}), oob, OutcomeLocationMismatch},
		{"witness cut short", edit(func(r *verify.Result) {
			for i := range r.Findings {
				if len(r.Findings[i].Witness) > 0 {
					r.Findings[i].Witness = r.Findings[i].Witness[:0:0]
				}
			}
		}), raced, OutcomeWitness},
		{"every finding dropped", edit(func(r *verify.Result) { r.Findings, r.Verdict = nil, verify.Safe }), unsafe, OutcomeFalseAccept},
		{"a checker error", func(context.Context, *schedule.Program) (*verify.Result, error) { return nil, errors.New("broken") }, unsafe, OutcomeError},
	} {
		if got := CheckWith(ctx, *tc.from, tc.check); got.Kind != tc.want {
			t.Errorf("%s: CheckWith(%s) = %s (%s), want %s", tc.reason, tc.from.ID, got.Kind, got.Detail, tc.want)
		}
	}
}

// TestCodesMatch pins the deadlock rule of CodesMatch.
func TestCodesMatch(t *testing.T) {
	for _, c := range []struct {
		oracle, checker []string
		want            bool
	}{
		{[]string{"race.raw"}, []string{"race.raw"}, true},
		{[]string{"race.raw"}, []string{"race.war"}, false},
		{[]string{"race.raw", "race.war"}, []string{"race.raw"}, false},
		{[]string{"deadlock.barrier"}, []string{"deadlock.barrier", "deadlock.cycle"}, true},
		{[]string{"deadlock.barrier"}, []string{"deadlock.cycle"}, false},
		{[]string{"deadlock.unsatisfiable"}, []string{"deadlock.cycle", "deadlock.unsatisfiable"}, true},
		{[]string{"deadlock.cycle"}, []string{"deadlock.cycle", "deadlock.unsatisfiable"}, false},
		{[]string{"deadlock.cycle", "out-of-bounds"}, []string{"deadlock.cycle"}, false},
	} {
		if got := CodesMatch(c.oracle, c.checker); got != c.want {
			t.Errorf("CodesMatch(%v, %v) = %v, want %v", c.oracle, c.checker, got, c.want)
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
	for _, r := range []string{"llama:layers=1", "proto:kind=ring", "json:fenced-handoff.json", "progen:size=small,seed=2"} {
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
			fmt.Println(e.Operator, e.Oracle, e.Verdict, e.Codes, o.Kind)
			return
		}
	}
	fmt.Println("not found")
	// Output: drop-release explore+brute unsafe [deadlock.semaphore] ok
}

// TestRegenerateSample regenerates the entries of a few seeds from
// scratch (no label cache, the oracles' default budgets, as `go generate
// ./corpus` runs them) and requires exactly the lines the expectations
// file holds for them: labels cached by `go generate` are those a full
// regeneration computes. A regenerated entry may be missing from the file
// only as a byte-level duplicate of another seed's entry there.
func TestRegenerateSample(t *testing.T) {
	sample := []string{"proto-003", "llama-010", "progen-020", "progenm-003", "json-001", "llama-100"}
	if testing.Short() {
		sample = sample[:1]
	}
	all, err := Entries()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Entry{}
	hashes := map[string]string{}
	for _, e := range all {
		if slices.Contains(sample, e.Seed) {
			want[e.ID] = e
		}
		if e.Hash != "" {
			hashes[e.Hash] = e.Seed
		}
	}
	got, _, err := Generate(context.Background(), Seeds(), GenerateConfig{
		Label: LabelConfig{Cross: true},
		Only:  func(s Seed) bool { return slices.Contains(sample, s.ID) },
	})
	if err != nil {
		t.Fatal(err)
	}
	line := func(e Entry) string {
		var b strings.Builder
		if err := WriteEntries(&b, []Entry{e}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	for _, e := range got {
		w, ok := want[e.ID]
		delete(want, e.ID)
		switch {
		case !ok && e.Hash != "" && hashes[e.Hash] != "" && hashes[e.Hash] != e.Seed:
			// A duplicate of another seed's entry, left out of the file.
		case !ok:
			t.Errorf("%s: regenerated, not in %s", e.ID, ExpectationsFile)
		case line(e) != line(w):
			t.Errorf("%s: regenerated as\n%s\nthe file holds\n%s", e.ID, line(e), line(w))
		}
	}
	for id := range want {
		t.Errorf("%s: in %s, not regenerated", id, ExpectationsFile)
	}
	if len(got) < 20*len(sample) {
		t.Errorf("only %d entries regenerated for %d seeds", len(got), len(sample))
	}
}
