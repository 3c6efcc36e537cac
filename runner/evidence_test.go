package runner

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify"
)

// evidenceRow is one row of the table "Hardware evidence per finding code"
// in docs/GPU.md: a program verify calls unsafe with a finding code, and
// its safe twins, each one edit away. The programs are
// testdata/evidence/<name>.json and <name>.<twin>.json.
// TestEvidencePrograms checks every row's verdicts on the CPU;
// TestGPUEvidence (MEGAPROOF_EVIDENCE=1) runs them on the device.
type evidenceRow struct {
	code string // the finding code of the row
	kind string // what the program does wrong
	name string // the unsafe program's file, without .json
	// verdict is verify's verdict on the unsafe program: Unsafe, or
	// Inconclusive where verify cannot decide the program (said in the
	// table); codes are its findings' distinct codes, sorted (nil: code).
	verdict verify.Verdict
	codes   []string
	twins   []evidenceTwin
	// runs is the number of runs of the unsafe program on the device:
	// 3 for programs that hang (each costs the watchdog), 20 otherwise.
	runs int
	// indexOrder keeps worker w on block w in every run (no permutation):
	// a non-cooperative launch beyond the device's capacity relies on
	// index-order residency (docs/SEMANTICS.md).
	indexOrder bool
}

// evidenceTwin is a safe twin of an evidence program.
type evidenceTwin struct {
	suffix string // file <name>.<suffix>.json
	edit   string // the edit, in words
}

// evidenceRows is the table of docs/GPU.md, in its order.
var evidenceRows = []evidenceRow{
	{code: verify.CodeDeadlockUnsatisfiable, kind: "the consumer waits for 2 signals, the producer gives 1", name: "deadlock-unsatisfiable",
		twins: []evidenceTwin{{"twin", "`ge` 2 → 1"}}, runs: 3},
	{code: verify.CodeDeadlockCycle, kind: "two workers each wait for the other's signal", name: "deadlock-cycle",
		twins: []evidenceTwin{{"twin", "drop the first task's wait"}}, runs: 3},
	{code: verify.CodeDeadlockBarrier, kind: "a barrier of 3 parties synced by 2 workers", name: "deadlock-barrier",
		twins: []evidenceTwin{{"twin", "`parties` 3 → 2"}}, runs: 3},
	{code: verify.CodeDeadlockSemaphore, kind: "the consumer acquires a token the producer never releases", name: "deadlock-semaphore",
		twins: []evidenceTwin{{"twin", "the producer releases after its body"}}, runs: 3},
	{code: verify.CodeOccupancy, kind: "cooperative launch beyond capacity: 133 workers, 132 SMs × 1", name: "occupancy-cooperative",
		twins: []evidenceTwin{{"twin", "`blocks_per_sm` 1 → 2"}}, runs: 3},
	{code: verify.CodeOccupancy, kind: "non-cooperative residency: 132 resident workers wait for worker 132, which cannot start", name: "occupancy-residency",
		twins: []evidenceTwin{{"twin", "`blocks_per_sm` 1 → 2"}}, runs: 3, indexOrder: true},
	{code: verify.CodeOccupancy, kind: "dynamic tasks hold every free worker: 3 barrier syncs on 2 workers", name: "dynamic-barrier-pool",
		twins: []evidenceTwin{{"twin", "3 workers (`sms`, `workers` 2 → 3)"}, {"twin-pinned", "3 workers, the tasks pinned to workers 0, 1, 2"}}, runs: 3},
	{code: verify.CodeOccupancy, kind: "workers stay resident while dynamic tasks remain (declared capacity 1): the empty worker 0 keeps the producer's worker 1 from starting", name: "occupancy-worker-exit-small",
		twins: []evidenceTwin{{"twin", "the producer on worker 0"}}, runs: 20, indexOrder: true},
	{code: verify.CodeOccupancy, kind: "the same at the H200's capacity: 132 empty workers stay resident for a dynamic task whose producer is worker 132", name: "occupancy-worker-exit",
		twins: []evidenceTwin{{"twin", "`blocks_per_sm` 1 → 2"}}, runs: 3, indexOrder: true},
	{code: verify.CodeRaceRAW, kind: "the consumer does not wait; the producer follows a 64 KiB task on its worker", name: "race-raw",
		twins: []evidenceTwin{{"twin", "the consumer waits `c >= 1`"}}, runs: 20},
	{code: verify.CodeRaceWAR, kind: "the overwriter does not wait for the reader, which follows a 64 KiB task", name: "race-war",
		twins: []evidenceTwin{{"twin", "the overwriter waits `c >= 1`"}}, runs: 20},
	{code: verify.CodeRaceWAW, kind: "two writes overlap by 2 KiB; the second does not wait for the first", name: "race-waw",
		twins: []evidenceTwin{{"twin", "the second writer waits `c >= 1`"}}, runs: 20},
	{code: verify.CodeRaceUnsynchronized, kind: "relaxed wait without a fence; the consumer's worker read the old bytes just before", name: "race-unsynchronized",
		twins: []evidenceTwin{{"twin", "the wait is acquire (drop `order: relaxed`)"}}, runs: 20},
	{code: verify.CodeRaceScope, kind: "cta-scoped wait on another worker's signal", name: "cta-wait-across-workers",
		twins: []evidenceTwin{{"twin", "the consumer on worker 0"}, {"twin-gpu", "the wait gpu-scoped"}}, runs: 20},
	{code: verify.CodeRaceScope, kind: "cta-scoped signal to another worker's gpu-scoped wait", name: "cta-signal-across-workers",
		codes: []string{verify.CodeRaceScope, verify.CodeRaceUnsynchronized, verify.CodeUninitializedRead},
		twins: []evidenceTwin{{"twin", "the signal gpu-scoped"}}, runs: 20},
	{code: verify.CodeUninitializedRead, kind: "the reader of a scratch buffer is queued before its writer", name: "uninitialized-read",
		twins: []evidenceTwin{{"twin", "writer and reader swapped"}}, runs: 20},
	{code: verify.CodeOutOfBounds, kind: "a 4 KiB write at offset 2 KiB of a 4 KiB buffer", name: "out-of-bounds",
		twins: []evidenceTwin{{"twin", "`length` 4096 → 2048"}}, runs: 3},
	{code: verify.CodeReadonlyWrite, kind: "a task writes a weight buffer", name: "readonly-write",
		twins: []evidenceTwin{{"twin", "the buffer's `kind` weight → state"}}, runs: 20},
	{code: verify.CodeOutputUnwritten, kind: "the last 256 bytes of a 4 KiB output are never written", name: "output-unwritten",
		twins: []evidenceTwin{{"twin", "`length` 3840 → 4096"}}, runs: 20},
	{code: verify.CodeCounterOverflow, kind: "a 32-bit counter at 2^32 − 2 gets `add: 2`; the consumer waits for 2^32 − 1", name: "counter-overflow",
		twins: []evidenceTwin{{"twin", "`add` 2 → 1"}}, runs: 20},
}

// wantCodes returns the distinct codes the row's unsafe program reports.
func (r evidenceRow) wantCodes() []string {
	if r.codes != nil {
		return r.codes
	}
	return []string{r.code}
}

// wantVerdict returns verify's verdict on the row's unsafe program.
func (r evidenceRow) wantVerdict() verify.Verdict {
	if r.verdict == 0 {
		return verify.Unsafe
	}
	return r.verdict
}

const evidenceDir = "testdata/evidence"

// loadEvidence reads testdata/evidence/<file>.json.
func loadEvidence(t testing.TB, file string) *schedule.Program {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(evidenceDir, file+".json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := schedule.Unmarshal(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return p
}

// distinctCodes returns r's findings' distinct codes, sorted.
func distinctCodes(r *verify.Result) []string {
	var cs []string
	for _, f := range r.Findings {
		cs = append(cs, f.Code)
	}
	slices.Sort(cs)
	return slices.Compact(cs)
}

// checkEvidenceVerdicts verifies a row's unsafe program and twins and
// reports every difference from the row. It returns verify's summary of
// the unsafe program and of each twin ("unsafe race.raw", "safe").
func checkEvidenceVerdicts(t testing.TB, row evidenceRow) (string, []string) {
	t.Helper()
	ctx := context.Background()
	p := loadEvidence(t, row.name)
	if p.Name != row.name {
		t.Errorf("%s: program name %q, want the file's", row.name, p.Name)
	}
	r, err := verify.Run(ctx, p, verify.Config{Sanity: true})
	if err != nil {
		t.Fatalf("%s: %v", row.name, err)
	}
	got := distinctCodes(r)
	if r.Verdict != row.wantVerdict() || !slices.Equal(got, row.wantCodes()) {
		t.Errorf("%s: verify says %v %v, want %v %v (%v)", row.name, r.Verdict, got, row.wantVerdict(), row.wantCodes(), r.Err())
	}
	for _, f := range r.Findings {
		if f.Code == verify.CodeInconclusive {
			continue
		}
		if err := schedule.CheckWitness(p, f.Code, f.Tasks, f.Witness); err != nil {
			t.Errorf("%s: witness of %s does not replay: %v", row.name, f.Code, err)
		}
	}
	summary := r.Verdict.String()
	if r.Verdict == verify.Unsafe {
		summary += " " + strings.Join(got, ", ")
	}
	var twins []string
	for _, tw := range row.twins {
		name := row.name + "." + tw.suffix
		q := loadEvidence(t, name)
		if q.Name != name {
			t.Errorf("%s: program name %q, want the file's", name, q.Name)
		}
		r, err := verify.Run(ctx, q, verify.Config{Sanity: true})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if r.Verdict != verify.Safe {
			t.Errorf("%s: verify says %v, want safe (%v)", name, r.Verdict, r.Err())
		}
		twins = append(twins, r.Verdict.String())
	}
	return summary, twins
}

// TestEvidencePrograms checks, without a GPU, what verify says of every
// program of the hardware evidence table, that every finding code but
// invalid.* and inconclusive has a row (occupancy one per kind), that every
// file belongs to a row, and that every twin encodes and has a CPU
// reference.
func TestEvidencePrograms(t *testing.T) {
	files := map[string]bool{}
	paths, err := filepath.Glob(filepath.Join(evidenceDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		files[strings.TrimSuffix(filepath.Base(path), ".json")] = true
	}
	covered := map[string]int{}
	for _, row := range evidenceRows {
		t.Run(row.name, func(t *testing.T) {
			checkEvidenceVerdicts(t, row)
			for _, tw := range row.twins {
				q := loadEvidence(t, row.name+"."+tw.suffix)
				if _, err := Encode(q); err != nil {
					t.Errorf("%s: %v", q.Name, err)
				}
				for _, poison := range []byte{0, 0xA5} {
					if _, err := ReferencePoisoned(q, poison); err != nil {
						t.Errorf("%s: %v", q.Name, err)
					}
				}
			}
		})
		if row.wantVerdict() == verify.Unsafe {
			covered[row.code]++
		}
		delete(files, row.name)
		for _, tw := range row.twins {
			delete(files, row.name+"."+tw.suffix)
		}
	}
	for f := range files {
		t.Errorf("%s/%s.json belongs to no row of evidenceRows", evidenceDir, f)
	}
	for _, c := range verify.Checks() {
		for _, code := range c.Codes {
			if strings.HasPrefix(code, "invalid.") || code == verify.CodeInconclusive {
				continue
			}
			if covered[code] == 0 {
				t.Errorf("code %s has no evidence row with an unsafe program", code)
			}
		}
	}
	// Occupancy has four kinds: cooperative beyond capacity, residency,
	// dynamic tasks holding every free worker, worker exit.
	if n := covered[verify.CodeOccupancy]; n < 4 {
		t.Errorf("occupancy has %d rows with an unsafe program, want one per kind (4)", n)
	}
}
