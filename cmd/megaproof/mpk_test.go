package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// mpkExample is one of schedule/mpk's hand-derived example graphs.
func mpkExample(name string) string {
	return filepath.Join("..", "..", "schedule", "mpk", "testdata", name)
}

// TestMPKHelperProcess is the command itself when TestVerifyMPK runs the
// test binary with MEGAPROOF_HELPER_ARGS set; otherwise it does nothing.
func TestMPKHelperProcess(t *testing.T) {
	args := os.Getenv("MEGAPROOF_HELPER_ARGS")
	if args == "" {
		return
	}
	os.Args = append([]string{"megaproof"}, strings.Split(args, "\x1f")...)
	main()
}

// megaproof runs the command in a child process (through main, so the
// test does not depend on how run is called) and returns its exit status
// and standard output.
func megaproof(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestMPKHelperProcess$")
	cmd.Env = append(os.Environ(), "MEGAPROOF_HELPER_ARGS="+strings.Join(args, "\x1f"))
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, string(out)
}

// TestVerifyMPK checks that verify reads MPK task graphs: the hand-derived
// examples 1-3 are safe, example 4 races on its stripped residual, and a
// multi-GPU graph is refused by name.
func TestVerifyMPK(t *testing.T) {
	for _, name := range []string{"ex1_reduce_edge.json", "ex2_chain_partitioned.json", "ex3_fork_interleaved.json"} {
		if code, out := megaproof(t, "verify", mpkExample(name)); code != exitSafe || !strings.Contains(out, ": safe") {
			t.Errorf("verify %s = %d:\n%s", name, code, out)
		}
	}
	code, out := megaproof(t, "verify", "--json", mpkExample("ex4_stripped_residual_hazard.json"))
	if code != exitUnsafe {
		t.Fatalf("verify ex4 = %d, want %d:\n%s", code, exitUnsafe, out)
	}
	checkResultSchema(t, out)
	var r struct {
		Format   string `json:"format"`
		Verdict  string `json:"verdict"`
		Findings []struct {
			Code  string   `json:"code"`
			Tasks []string `json:"tasks"`
		} `json:"findings"`
	}
	if err := json.NewDecoder(bufio.NewReader(strings.NewReader(out))).Decode(&r); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	found := false
	for _, f := range r.Findings {
		if strings.HasPrefix(f.Code, "race.") && slices.Contains(f.Tasks, "t3.IDENTITY@1") && slices.Contains(f.Tasks, "t6.LINEAR_WITH_RESIDUAL@1") {
			found = true
		}
	}
	if r.Format != formatMPK || r.Verdict != "unsafe" || !found {
		t.Errorf("verify --json ex4: format %q, verdict %q, no race between t3 and t6 in %s", r.Format, r.Verdict, out)
	}

	// -iterations: three iterations of example 1 (7 tasks each) and 128
	// TERMINATEs.
	code, out = megaproof(t, "verify", "--json", "-iterations", "3", mpkExample("ex1_reduce_edge.json"))
	checkResultSchema(t, out)
	var s struct {
		Stats struct {
			Tasks int `json:"tasks"`
		} `json:"stats"`
	}
	if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &s); err != nil || code != exitSafe || s.Stats.Tasks != 3*7+128 {
		t.Errorf("verify -iterations 3 ex1 = %d, %v, %d tasks:\n%s", code, err, s.Stats.Tasks, out)
	}

	// A collective is refused, by name.
	data, err := os.ReadFile(mpkExample("ex1_reduce_edge.json"))
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "allreduce.json")
	if err := os.WriteFile(bad, []byte(strings.Replace(string(data), `"task_type": 120`, `"task_type": 302`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := megaproof(t, "verify", bad); code != exitInvalid || !strings.Contains(out, "unsupported: task type 302 (NVSHMEM_TILE_ALLREDUCE)") {
		t.Errorf("verify of an NVSHMEM allreduce = %d:\n%s", code, out)
	}
}

// TestVerifyMPKHistories checks that verify, replay and dot decide an MPK
// graph whose verdict depends on which worker ends an iteration on a
// history in which it fails: the writer without a trigger races with its
// next iteration when scheduler 0 ends the first, though not in the
// mapping's default history; the graph whose histories are all safe stays
// safe.
func TestVerifyMPKHistories(t *testing.T) {
	file := mpkExample("history_dangling_writer.json")
	code, out := megaproof(t, "verify", "--json", file)
	if code != exitUnsafe || !strings.Contains(out, `"race.waw"`) || !strings.Contains(out, "t3.IDENTITY@2") {
		t.Fatalf("verify = %d, want %d with race.waw of t3.IDENTITY@1 and @2:\n%s", code, exitUnsafe, out)
	}
	checkResultSchema(t, out)
	if code, out := megaproof(t, "replay", file); code != 0 || !strings.Contains(out, "confirmed") {
		t.Errorf("replay = %d:\n%s", code, out)
	}
	if code, out := megaproof(t, "dot", file); code != 0 || !strings.Contains(out, "race.waw") {
		t.Errorf("dot = %d:\n%s", code, out)
	}
	if code, out := megaproof(t, "verify", mpkExample("history_dangling_first.json")); code != exitSafe {
		t.Errorf("verify history_dangling_first.json = %d:\n%s", code, out)
	}
	// Beyond the histories mpk lists, a failing one still decides; when
	// all listed are safe the graph is not decided.
	if code, out := megaproof(t, "verify", "--iterations", "30", file); code != exitUnsafe || !strings.Contains(out, "race.waw") {
		t.Errorf("verify --iterations 30 = %d, want %d:\n%s", code, exitUnsafe, out)
	}
	if code, out := megaproof(t, "verify", "--iterations", "12", mpkExample("history_dangling_first.json")); code != exitInvalid || !strings.Contains(out, "invalid.limit") {
		t.Errorf("verify --iterations 12 history_dangling_first.json = %d, want %d with invalid.limit:\n%s", code, exitInvalid, out)
	}
}

// A graph whose END has fewer num_triggers than tasks that trigger it is
// refused as unsupported when its programs are safe (MPK's exact-count END
// can hang a later iteration, which megaproof does not model), and unsafe
// when the early start races.
func TestVerifyMPKEndUndercount(t *testing.T) {
	code, out := megaproof(t, "verify", "--json", mpkExample("end_undercount_readonly.json"))
	if code != exitInvalid || !strings.Contains(out, `"invalid.value"`) || !strings.Contains(out, "$.all_events[2].num_triggers") ||
		!strings.Contains(out, "unsupported: END_OF_TASK_GRAPH has num_triggers 2 but 3 tasks trigger it") {
		t.Fatalf("verify end_undercount_readonly.json = %d, want %d, unsupported at END's num_triggers:\n%s", code, exitInvalid, out)
	}
	checkResultSchema(t, out)
	if code, out := megaproof(t, "verify", "--iterations", "1", mpkExample("end_undercount_readonly.json")); code != exitSafe {
		t.Errorf("verify --iterations 1 = %d, want %d:\n%s", code, exitSafe, out)
	}
	if code, out := megaproof(t, "verify", mpkExample("end_count_readonly.json")); code != exitSafe {
		t.Errorf("verify end_count_readonly.json = %d, want %d:\n%s", code, exitSafe, out)
	}
	file := mpkExample("end_undercount_race.json")
	if code, out := megaproof(t, "verify", file); code != exitUnsafe || !strings.Contains(out, "race.") {
		t.Errorf("verify end_undercount_race.json = %d, want %d with a race:\n%s", code, exitUnsafe, out)
	}
	if code, out := megaproof(t, "replay", file); code != 0 || !strings.Contains(out, "confirmed") {
		t.Errorf("replay end_undercount_race.json = %d:\n%s", code, out)
	}
}
