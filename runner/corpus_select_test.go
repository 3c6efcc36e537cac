package runner

import (
	"bytes"
	"context"
	"hash/fnv"
	"os"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/megaproof/megaproof/corpus"
	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify"
)

// Limits on the corpus mutants the falsification test runs.
const (
	corpusMaxTasks = 3000     // larger programs are skipped
	corpusMaxHeap  = 64 << 20 // bytes of device heap
)

// corpusFamilies are the unsafe families of the falsification table, then
// the safe controls ("safe").
var corpusFamilies = []string{"deadlock", "race", "occupancy", "uninitialized-read", "safe"}

// corpusCase is one selected corpus entry, ready to run with corpusBody.
type corpusCase struct {
	family string
	entry  corpus.Entry
	prog   *schedule.Program
	ref    map[string][]byte // ReferenceWith(Body mix, Poison 0xA5); nil where the greedy order is stuck
	refErr error
	// For deadlock and occupancy entries: verify's first finding of the
	// family and the stuck set its witness replays to (static workers not
	// finished, and how many dynamic threads are not finished).
	code         string
	witness      bool
	stuckWorkers []int
	stuckPos     map[int]int // static worker → step it is stuck at
	dynStuck     int
	// selfOverlap counts tasks whose write accesses overlap each other.
	selfOverlap int
}

// corpusBody is the body every corpus task executes: the address-keyed mix,
// since generated programs have tasks whose write accesses overlap (see
// Ops; with "mix" those bytes are not defined and the GPU differs from the
// reference even on safe programs).
const corpusBody = "mixat"

// corpusPoison is the poison of every corpus run and reference.
const corpusPoison = 0xA5

func entryKey(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64()
}

// pureFamily reports whether e belongs to family f alone (safe controls:
// verdict safe).
func pureFamily(e corpus.Entry, f string) bool {
	if f == "safe" {
		return e.Verdict == corpus.VerdictSafe
	}
	return e.Verdict == corpus.VerdictUnsafe && len(e.Families) == 1 && e.Families[0] == f
}

// selectCorpus picks, deterministically, perFamily entries of each of
// corpusFamilies whose label is that family alone. Candidates are ordered
// by a hash of their id and taken round-robin over operators, preferring
// seeds not yet used in the family; a candidate is kept only when its
// mutant rebuilds, has at most corpusMaxTasks tasks, encodes with Body
// corpusBody within corpusMaxHeap, and (safe, race, uninitialized-read) its
// greedy reference completes. Safe controls whose blocking dynamic tasks
// outnumber the workers are skipped (a documented runner limit).
func selectCorpus(perFamily int, logf func(string, ...any)) ([]*corpusCase, error) {
	entries, err := corpus.Entries()
	if err != nil {
		return nil, err
	}
	var out []*corpusCase
	for _, fam := range corpusFamilies {
		byOp := map[string][]corpus.Entry{}
		for _, e := range entries {
			if pureFamily(e, fam) {
				byOp[e.Operator] = append(byOp[e.Operator], e)
			}
		}
		ops := make([]string, 0, len(byOp))
		for op, es := range byOp {
			sort.Slice(es, func(i, j int) bool { return entryKey(es[i].ID) < entryKey(es[j].ID) })
			ops = append(ops, op)
		}
		sort.Strings(ops)
		usedSeed := map[string]bool{}
		skipped := map[string]int{}
		var picked []*corpusCase
		// Pass 0 wants a new seed; pass 1 takes any.
		for pass := 0; pass < 2 && len(picked) < perFamily; pass++ {
			next := map[string]int{}
			for progress := true; progress && len(picked) < perFamily; {
				progress = false
				for _, op := range ops {
					if len(picked) >= perFamily {
						break
					}
					es := byOp[op]
					for next[op] < len(es) {
						e := es[next[op]]
						next[op]++
						if e.Verdict == "" || (pass == 0 && usedSeed[e.Seed]) || slices.ContainsFunc(picked, func(c *corpusCase) bool { return c.entry.ID == e.ID }) {
							continue
						}
						c, why := prepareCase(fam, e)
						if c == nil {
							skipped[why]++
							continue
						}
						picked = append(picked, c)
						usedSeed[e.Seed] = true
						progress = true
						break
					}
				}
			}
		}
		seeds := map[string]bool{}
		opsUsed := map[string]bool{}
		for _, c := range picked {
			seeds[c.entry.Seed] = true
			opsUsed[c.entry.Operator] = true
		}
		logf("corpus %s: %d selected (%d seeds, %d operators) of %d pure-%s entries; skipped %v", fam, len(picked), len(seeds), len(opsUsed), countAll(byOp), fam, skipped)
		out = append(out, picked...)
	}
	return out, nil
}

func countAll(m map[string][]corpus.Entry) int {
	n := 0
	for _, es := range m {
		n += len(es)
	}
	return n
}

// prepareCase rebuilds e's mutant and checks that it can run; it returns
// nil and a reason otherwise.
func prepareCase(fam string, e corpus.Entry) (*corpusCase, string) {
	p, err := corpus.Mutant(e.Recipe, e.Operator, e.Site, e.MSeed)
	if err != nil {
		return nil, "rebuild"
	}
	if len(p.Tasks) > corpusMaxTasks {
		return nil, "tasks"
	}
	enc, err := EncodeWith(p, Options{Body: corpusBody})
	if err != nil {
		return nil, "encode"
	}
	if enc.HeapBytes > corpusMaxHeap {
		return nil, "heap"
	}
	if fam == "safe" && enc.BlockingDynamic() > enc.Workers {
		return nil, "blocking-dynamic"
	}
	p.Name = e.ID
	c := &corpusCase{family: fam, entry: e, prog: p}
	for _, b := range enc.bodies {
		if selfOverlaps(spans(b.writes)) {
			c.selfOverlap++
		}
	}
	c.ref, c.refErr = ReferenceWith(p, Options{Body: corpusBody, Poison: corpusPoison})
	if c.refErr != nil && (fam == "safe" || fam == "race" || fam == "uninitialized-read") {
		return nil, "reference-stuck"
	}
	if fam == "deadlock" || fam == "occupancy" {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		r, err := verify.Run(ctx, p, verify.Config{})
		if err != nil {
			return nil, "verify"
		}
		for _, f := range r.Findings {
			if verify.Family(f.Code) != fam {
				continue
			}
			c.code = f.Code
			if len(f.Witness) == 0 {
				break
			}
			st, err := schedule.Replay(p, f.Witness)
			if err != nil || !st.Stuck() {
				break
			}
			c.witness = true
			c.stuckPos = map[int]int{}
			form := st.Form()
			for th := range form.Threads {
				if st.Finished(th) {
					continue
				}
				if th < form.Workers {
					c.stuckWorkers = append(c.stuckWorkers, th)
					c.stuckPos[th] = int(st.Pos[th])
				} else {
					c.dynStuck++
				}
			}
			break
		}
		if c.code == "" {
			c.code = "verify: " + r.Verdict.String()
			if len(r.Findings) > 0 {
				c.code += " " + r.Findings[0].Code
			}
		}
	}
	return c, ""
}

// compareStuck compares the watchdog's stuck static workers with the
// witness's: "match" (same set; "exact" when every worker is also at the
// same step), "gpu⊂witness", "witness⊂gpu", or "mismatch". A worker counts
// as stuck in its static queue when it was stopped in its own thread or
// never became resident; workers stopped while polling for, or running, a
// dynamic task are counted apart (dyn).
func compareStuck(c *corpusCase, de *DeadlockError) (verdict string, gpu []int, dyn int) {
	pos := map[int]int{}
	for _, w := range de.Workers {
		switch {
		case w.Thread == w.Worker || w.State == "running":
			gpu = append(gpu, w.Worker)
			pos[w.Worker] = w.Step
		default:
			dyn++
		}
	}
	sort.Ints(gpu)
	wit := c.stuckWorkers
	sub := func(a, b []int) bool {
		for _, x := range a {
			if !slices.Contains(b, x) {
				return false
			}
		}
		return true
	}
	switch {
	case slices.Equal(gpu, wit):
		verdict = "match"
		exact := true
		for _, w := range gpu {
			if pos[w] != c.stuckPos[w] {
				exact = false
			}
		}
		if exact {
			verdict = "exact"
		}
	case sub(gpu, wit):
		verdict = "gpu⊂witness"
	case sub(wit, gpu):
		verdict = "witness⊂gpu"
	default:
		verdict = "mismatch"
	}
	return verdict, gpu, dyn
}

// TestCorpusSelect runs the falsification test's selection on the CPU (set
// MEGAPROOF_CORPUS=1): every family gets at least 20 entries.
func TestCorpusSelect(t *testing.T) {
	if os.Getenv("MEGAPROOF_CORPUS") == "" {
		t.Skip("set MEGAPROOF_CORPUS=1 to select the corpus falsification set")
	}
	t0 := time.Now()
	cases, err := selectCorpus(corpusPerFamily, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, c := range cases {
		n[c.family]++
		if c.selfOverlap > 0 {
			t.Logf("%s %s: %d tasks with overlapping writes", c.family, c.entry.ID, c.selfOverlap)
		}
		if c.family == "deadlock" || c.family == "occupancy" {
			t.Logf("%s %s: %s witness %v stuck %v dyn %d", c.family, c.entry.ID, c.code, c.witness, c.stuckWorkers, c.dynStuck)
		}
	}
	for _, f := range corpusFamilies {
		if n[f] < 20 {
			t.Errorf("%s: %d entries selected", f, n[f])
		}
	}
	t.Logf("selection took %v: %v", time.Since(t0), n)
	// Whose reference order itself reads uninitialized bytes: the written
	// bytes depend on the poison. Safe controls must not.
	sens := map[string]int{}
	for _, c := range cases {
		if c.ref == nil {
			continue
		}
		if poisonSensitive(t, c) {
			sens[c.family]++
			if c.family == "safe" {
				t.Errorf("safe control %s: reference depends on the poison", c.entry.ID)
			}
		}
	}
	t.Logf("references whose written bytes depend on the poison (0 vs 0xA5): %v", sens)
}

// poisonSensitive reports whether some byte a task writes differs between
// the references with poison 0 and corpusPoison.
func poisonSensitive(t *testing.T, c *corpusCase) bool {
	e, err := EncodeWith(c.prog, Options{Body: corpusBody})
	if err != nil {
		t.Fatal(err)
	}
	h0, h1 := e.Image(0), e.Image(corpusPoison)
	if e.execute(h0) != nil || e.execute(h1) != nil {
		return false
	}
	for _, b := range e.bodies {
		for _, sp := range spans(b.writes) {
			if !bytes.Equal(h0[sp.lo:sp.hi], h1[sp.lo:sp.hi]) {
				return true
			}
		}
	}
	return false
}

// corpusPerFamily is how many entries of each family run.
const corpusPerFamily = 24

// selfOverlaps reports whether two of the spans overlap.
func selfOverlaps(ss []span) bool {
	ss = slices.Clone(ss)
	sort.Slice(ss, func(i, j int) bool { return ss[i].lo < ss[j].lo })
	for i := 1; i < len(ss); i++ {
		if ss[i].lo < ss[i-1].hi {
			return true
		}
		if ss[i].hi < ss[i-1].hi {
			ss[i].hi = ss[i-1].hi
		}
	}
	return false
}
