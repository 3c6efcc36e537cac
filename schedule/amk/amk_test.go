package amk_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/schedule/amk"
)

// Every testdata program is detected as AMK, maps without error, validates,
// and survives megaproof's own JSON round trip.
func TestTestdataPrograms(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if !amk.Detect(data) {
				t.Error("Detect = false")
			}
			p, err := amk.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Validate(); err != nil {
				t.Fatal(err)
			}
			enc, err := schedule.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			if amk.Detect(enc) {
				t.Error("Detect is true on the megaproof encoding")
			}
			back, err := schedule.Unmarshal(enc)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(p, back); diff != "" {
				t.Errorf("megaproof round trip differs (-amk +json):\n%s", diff)
			}
		})
	}
}

// The IR_SPEC §6 example (completed with the buffers and counter it names
// but does not declare).
func TestIRSpecExample(t *testing.T) {
	p := load(t, "ir_spec.json")
	if want := (schedule.Launch{Target: "rtx5090", SMs: 82, PerSM: 1, Workers: 82, Cooperative: true}); p.Launch != want {
		t.Errorf("launch = %+v, want %+v", p.Launch, want)
	}
	if p.Name != "toy" {
		t.Errorf("name = %q", p.Name)
	}
	kinds := map[string]schedule.BufferKind{"x": schedule.KindInput, "proj.w": schedule.KindWeight, "norm.w": schedule.KindWeight, "x.norm": schedule.KindScratch, "proj.out": schedule.KindScratch}
	sizes := map[string]uint64{"x": 32, "proj.w": 512, "norm.w": 32, "x.norm": 32, "proj.out": 32}
	for name, k := range kinds {
		b := buffer(t, p, name)
		if b.Kind != k || b.Size != sizes[name] {
			t.Errorf("buffer %s: kind %v size %d, want %v %d", name, b.Kind, b.Size, k, sizes[name])
		}
	}
	// Buffers 3 and 4 share page 0, which AMK's GPU loader does not read:
	// each buffer has its own memory.
	if len(p.Arenas) != 0 {
		t.Errorf("arenas = %+v, want none", p.Arenas)
	}
	for _, name := range []string{"x", "x.norm", "proj.out"} {
		if b := buffer(t, p, name); b.Arena != schedule.NoArena {
			t.Errorf("%s has arena %d", name, b.Arena)
		}
	}
	want := []struct{ name, before, reads, writes, after string }{
		{"t0.RMSNORM", "", "x 0+32; norm.w 0+32", "x.norm 0+32", "signal c0+1"},
		{"t1.GEMV_TILE", "wait c0>=1", "x.norm 0+32; proj.w 0+512", "proj.out 0+32", "signal c1+1"},
	}
	if len(p.Tasks) != len(want) {
		t.Fatalf("%d tasks", len(p.Tasks))
	}
	for i, w := range want {
		tk := &p.Tasks[i]
		got := []string{tk.Name, steps(p, tk.Before), accesses(p, tk.Reads), accesses(p, tk.Writes), steps(p, tk.After)}
		if diff := cmp.Diff([]string{w.name, w.before, w.reads, w.writes, w.after}, got); diff != "" {
			t.Errorf("task %d (-want +got):\n%s", i, diff)
		}
		if tk.Worker != schedule.Dynamic {
			t.Errorf("%s: worker %d, want dynamic", tk.Name, tk.Worker)
		}
	}
	// Float params (eps) are not carried; integer ones are.
	if got := p.Tasks[0].Params; !cmp.Equal(got, schedule.Params{{Key: "hidden", Value: 16}}) {
		t.Errorf("params = %v", got)
	}
}

func TestSplitKV(t *testing.T) {
	p := load(t, "split_kv.json")
	if want := (schedule.Launch{Target: "toy4", SMs: 4, PerSM: 1, Workers: 4, Cooperative: true}); p.Launch != want {
		t.Errorf("launch = %+v, want %+v", p.Launch, want)
	}
	type row struct{ Name, Before, Reads, Writes, After string }
	want := []row{
		// The shards are pinned to SMs 0-2, so AMK's loader puts every
		// unpinned task on SM 0: SM 0's queue, in topological order, is
		// t0-t5, t6, t9, one at a time (queue.sm0); t7 and t8 are alone
		// on theirs.
		// Each q tile reads its 32 rows of wq (64 F16 each).
		{"t0.GEMV_TILE", "", "x 0+128; wq 0+4096", "q 0+64", "signal c0+1, signal queue.sm0+1"},
		{"t1.GEMV_TILE", "wait queue.sm0>=1", "x 0+128; wq 4096+4096", "q 64+64", "signal c0+1, signal queue.sm0+1"},
		{"t2.GEMV_TILE", "wait queue.sm0>=2", "x 0+128; wk 0+4096", "k 0+64", "signal c1+1, signal queue.sm0+1"},
		{"t3.GEMV_TILE", "wait queue.sm0>=3", "x 0+128; wv 0+4096", "v 0+64", "signal c2+1, signal queue.sm0+1"},
		// Row 40 of a [64, 2, 16] F16 cache: 64-byte rows.
		{"t4.KV_APPEND", "wait c1>=1, wait queue.sm0>=4", "k 0+64", "cache.k 2560+64", "signal c3+1, signal queue.sm0+1"},
		{"t5.KV_APPEND", "wait c2>=1, wait queue.sm0>=5", "v 0+64", "cache.v 2560+64", "signal c4+1, signal queue.sm0+1"},
		{"t6.ATTENTION_TILE", "wait c0>=2, wait c3>=1, wait c4>=1, wait queue.sm0>=6", "q 0+128; cache.k 0+896; cache.v 0+896", "attn.part0 0+288", "signal c5+1, signal queue.sm0+1"},
		{"t7.ATTENTION_TILE", "wait c0>=2, wait c3>=1, wait c4>=1", "q 0+128; cache.k 896+896; cache.v 896+896", "attn.part1 0+288", "signal c6+1"},
		{"t8.ATTENTION_TILE", "wait c0>=2, wait c3>=1, wait c4>=1", "q 0+128; cache.k 1792+832; cache.v 1792+832", "attn.part2 0+288", "signal c7+1"},
		{"t9.ATTENTION_COMBINE", "wait c5>=1, wait c6>=1, wait c7>=1, wait queue.sm0>=7", "attn.part0 0+288; attn.part1 0+288; attn.part2 0+288", "attn 0+128", "signal c8+1, signal queue.sm0+1"},
	}
	var got []row
	for i := range p.Tasks {
		tk := &p.Tasks[i]
		got = append(got, row{tk.Name, steps(p, tk.Before), accesses(p, tk.Reads), accesses(p, tk.Writes), steps(p, tk.After)})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tasks (-want +got):\n%s", diff)
	}
	// The queues are counters; every task is dynamic.
	for _, tk := range p.Tasks {
		if tk.Worker != schedule.Dynamic {
			t.Errorf("%s: worker %d, want dynamic", tk.Name, tk.Worker)
		}
	}
	kinds := map[string]schedule.BufferKind{"x": schedule.KindInput, "wq": schedule.KindWeight, "q": schedule.KindScratch, "cache.k": schedule.KindState, "attn": schedule.KindOutput}
	for name, k := range kinds {
		if b := buffer(t, p, name); b.Kind != k {
			t.Errorf("%s: kind %v, want %v", name, b.Kind, k)
		}
	}
	for _, c := range p.Counters {
		if c.Width != 32 || c.Init != 0 {
			t.Errorf("counter %+v", c)
		}
	}
	// The normal form has 4 workers (one per SM, with no static tasks) and
	// 10 dynamic tasks.
	if got := len(schedule.Lower(p).Threads); got != 4+10 {
		t.Errorf("lowered to %d threads, want 14", got)
	}
}

// Ids are looked up, never used as list positions: the same program with
// scattered ids and shuffled buffer, counter and task lists maps to the same
// program up to names and order. (With pinned tasks the ids also order
// AMK's per-SM queues, lowest id first among the ready tasks, so the pins
// are dropped here.)
func TestPermutedNonDenseIDs(t *testing.T) {
	unpin := func(d map[string]any) {
		for _, tk := range at(d, "tasks").([]any) {
			delete(tk.(map[string]any), "sm")
		}
	}
	read := func(name string) *schedule.Program {
		p, err := amk.Unmarshal(edit(t, name, unpin))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	dense, perm := read("split_kv.json"), read("split_kv_permuted.json")
	if diff := cmp.Diff(signature(dense), signature(perm)); diff != "" {
		t.Errorf("permuted program differs (-dense +permuted):\n%s", diff)
	}
	if tk := task(t, perm, "t120.ATTENTION_TILE"); accesses(perm, tk.Reads) != "q 0+128; cache.k 0+896; cache.v 0+896" {
		t.Errorf("shard 0 reads %s", accesses(perm, tk.Reads))
	}
}

func TestKVAppendAttentionPriorRows(t *testing.T) {
	p := load(t, "kv_prior.json")
	if want := (schedule.Launch{SMs: 1, PerSM: 1, Workers: 1, Cooperative: true}); p.Launch != want {
		t.Errorf("launch without target or pins = %+v, want %+v", p.Launch, want)
	}
	// The in-place cache operand of KV_APPEND is not a read.
	for name, want := range map[string][2]string{
		"t0.KV_APPEND":      {"k.new 0+64", "cache.k 448+64"},
		"t1.KV_APPEND":      {"v.new 0+64", "cache.v 448+64"},
		"t2.ATTENTION_TILE": {"q 0+128; cache.k 0+448; cache.v 0+448", "attn 0+128"},
	} {
		tk := task(t, p, name)
		if got := [2]string{accesses(p, tk.Reads), accesses(p, tk.Writes)}; got != want {
			t.Errorf("%s: reads/writes %q, want %q", name, got, want)
		}
	}
	if b := buffer(t, p, "cache.k"); b.Kind != schedule.KindState || b.Size != 32*2*16*2 {
		t.Errorf("cache.k: %+v", b)
	}
}

// Batched decode: GEMM tiles write a column slice of every row; a rank-4
// cache is appended and read along axis 1, one run per batch entry.
func TestBatched(t *testing.T) {
	p := load(t, "batched.json")
	for name, want := range map[string][2]string{
		"t0.GEMM_TILE":      {"x 0+128; w 0+1536", "y 0+96 x2/192"},
		"t1.GEMM_TILE":      {"x 0+128; w 1536+1536", "y 96+96 x2/192"},
		"t2.KV_APPEND":      {"k.new 0+64", "cache.k 160+32 x2/512"},
		"t3.ATTENTION_TILE": {"q 0+64; cache.k 0+192 x2/512; cache.v 0+192 x2/512", "attn 0+64"},
	} {
		tk := task(t, p, name)
		if got := [2]string{accesses(p, tk.Reads), accesses(p, tk.Writes)}; got != want {
			t.Errorf("%s: reads/writes %q, want %q", name, got, want)
		}
	}
	// SM 1's queue is t1 then t2; the unpinned t3 joins SM 0's queue after
	// t0 (AMK's loader), each queue one task at a time.
	queues := map[string][2]string{
		"t0.GEMM_TILE":      {"", "signal c0+1, signal queue.sm0+1"},
		"t1.GEMM_TILE":      {"", "signal c0+1, signal queue.sm1+1"},
		"t2.KV_APPEND":      {"wait queue.sm1>=1", "signal c1+1, signal queue.sm1+1"},
		"t3.ATTENTION_TILE": {"wait c1>=1, wait queue.sm0>=1", "signal c2+1, signal queue.sm0+1"},
	}
	for name, want := range queues {
		tk := task(t, p, name)
		if got := [2]string{steps(p, tk.Before), steps(p, tk.After)}; got != want || tk.Worker != schedule.Dynamic {
			t.Errorf("%s: worker %d, steps %q, want dynamic, %q", name, tk.Worker, got, want)
		}
	}
}

// AMK's own asymmetric int4 GEMV tiles take four inputs (x, packed weight,
// scales, zeros), beyond OP_REGISTRY's arity of 2-3.
func TestAsymmetricQuantGEMV(t *testing.T) {
	p := load(t, "gemv_asym.json")
	if b := buffer(t, p, "proj"); b.Size != 48*64/2 || b.Kind != schedule.KindWeight {
		t.Errorf("packed int4 weight: %+v", b)
	}
	if b := buffer(t, p, "proj.zeros"); b.Kind != schedule.KindWeight {
		t.Errorf("CONST maps to %v", b.Kind)
	}
	// Each tile reads its 16 packed rows of ceil(K/2) = 32 bytes and their
	// fp16 scales and zeros, K/group = 2 a row.
	for i, off := range []int{0, 32, 64} {
		tk := &p.Tasks[i]
		w, sz := strconv.Itoa(512*i), strconv.Itoa(64*i)
		if got, want := accesses(p, tk.Reads), "x 0+128; proj "+w+"+512; proj.scales "+sz+"+64; proj.zeros "+sz+"+64"; got != want {
			t.Errorf("%s reads %s, want %s", tk.Name, got, want)
		}
		if got, want := accesses(p, tk.Writes), "y "+strconv.Itoa(off)+"+32"; got != want {
			t.Errorf("%s writes %s, want %s", tk.Name, got, want)
		}
	}
	if got := p.Tasks[1].Params; !cmp.Equal(got, schedule.Params{{Key: "K", Value: 64}, {Key: "N_tile", Value: 16}, {Key: "group", Value: 32}, {Key: "n_off", Value: 16}, {Key: "qdtype", Value: 7}}) {
		t.Errorf("params = %v", got)
	}
}

// Footprints outside their buffer are mapped as they are, for the verifier
// to report as out-of-bounds.
func TestOutOfBoundsFootprintsAreMapped(t *testing.T) {
	cases := []struct {
		name  string
		file  string
		edit  func(doc map[string]any)
		task  int
		write string
	}{
		{"gemv tile beyond its buffer", "ir_spec.json", func(d map[string]any) { obj(d, "tasks", 1, "params")["n_off"] = 8 }, 1, "proj.out 16+32"},
		{"negative n_off", "ir_spec.json", func(d map[string]any) { obj(d, "tasks", 1, "params")["n_off"] = -4 }, 1, "proj.out -8+32"},
		{"kv pos beyond max_seq", "kv_prior.json", func(d map[string]any) { obj(d, "tasks", 0, "params")["pos"] = 32 }, 0, "cache.k 2048+64"},
		{"kv pos at int32 max", "kv_prior.json", func(d map[string]any) { obj(d, "tasks", 0, "params")["pos"] = 2147483647 }, 0, "cache.k 137438953408+64"},
		{"negative kv pos", "kv_prior.json", func(d map[string]any) { obj(d, "tasks", 0, "params")["pos"] = -1 }, 0, "cache.k -64+64"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := amk.Unmarshal(edit(t, c.file, c.edit))
			if err != nil {
				t.Fatal(err)
			}
			if got := accesses(p, p.Tasks[c.task].Writes); got != c.write {
				t.Errorf("writes %s, want %s", got, c.write)
			}
		})
	}
	// Attention beyond the cache reads past it.
	p, err := amk.Unmarshal(edit(t, "kv_prior.json", func(d map[string]any) { obj(d, "tasks", 2, "params")["kv_len"] = 40 }))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := accesses(p, p.Tasks[2].Reads), "q 0+128; cache.k 0+2560; cache.v 0+2560"; got != want {
		t.Errorf("reads %s, want %s", got, want)
	}
}

// What AMK's format allows is accepted: unknown keys at every level, a
// missing ir_version, null optional fields, ABI capacities exactly reached,
// and schedules AMK's validator would reject for deadlock or race reasons.
func TestAccepts(t *testing.T) {
	cases := []struct {
		name string
		file string
		edit func(doc map[string]any)
	}{
		{"unknown keys everywhere", "ir_spec.json", func(d map[string]any) {
			d["future"] = map[string]any{"x": 1}
			obj(d, "target")["new_field"] = true
			obj(d, "buffers", 0)["layout"] = "row_major"
			obj(d, "counters", 0)["generation"] = 0
			obj(d, "tasks", 1)["priority"] = 3
			obj(d, "tasks", 1, "waits", 0)["order"] = "acquire"
			obj(d, "pages", "pages", 0)["bank"] = 2
			obj(d, "pages")["policy"] = "graph_color"
			obj(d, "config")["knob"] = []any{1, 2}
		}},
		{"no versions, null target, pages and config", "ir_spec.json", func(d map[string]any) {
			delete(d, "ir_version")
			delete(d, "abi_version")
			d["target"], d["pages"], d["config"] = nil, nil, nil
		}},
		{"minor version bump", "ir_spec.json", func(d map[string]any) { d["ir_version"], d["abi_version"] = "0.9.1", "0.7" }},
		{"ABI capacities exactly reached", "ir_spec.json", func(d map[string]any) {
			tk := obj(d, "tasks", 0)
			tk["inputs"] = []any{0, 1, 2, 0, 1, 2, 0, 1}
			tk["outputs"] = []any{3, 3, 3, 3}
			var ws []any
			for range 8 {
				ws = append(ws, map[string]any{"counter": 1, "threshold": 1})
			}
			obj(d, "tasks", 1)["waits"] = ws
			obj(d, "buffers", 0)["shape"] = []any{1, 1, 1, 16}
		}},
		{"self wait and threshold above producers", "ir_spec.json", func(d map[string]any) {
			obj(d, "tasks", 1)["waits"] = []any{map[string]any{"counter": 1, "threshold": 1}, map[string]any{"counter": 0, "threshold": 5}}
		}},
		{"counter init in range", "ir_spec.json", func(d map[string]any) { obj(d, "counters", 1)["init"] = 4294967295 }},
		{"scalar buffer", "ir_spec.json", func(d map[string]any) { obj(d, "buffers", 2)["shape"] = []any{} }},
		{"unused pages", "ir_spec.json", func(d map[string]any) {
			obj(d, "pages")["pages"] = append(at(d, "pages", "pages").([]any), map[string]any{"id": 9, "space": "HBM", "nbytes": 0})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := amk.Unmarshal(edit(t, c.file, c.edit)); err != nil {
				t.Fatal(err)
			}
		})
	}
	// AMK's GPU loader zeroes every counter before a launch: init is
	// checked, and the counter starts at 0.
	p, err := amk.Unmarshal(edit(t, "ir_spec.json", func(d map[string]any) { obj(d, "counters", 1)["init"] = 7 }))
	if err != nil || p.Counters[1].Init != 0 || p.Counters[1].Width != 32 {
		t.Errorf("init: %v %+v", err, p.Counters)
	}
}

// Two AMK buffers may share a name; megaproof names must be unique.
func TestDuplicateBufferNames(t *testing.T) {
	p, err := amk.Unmarshal(edit(t, "ir_spec.json", func(d map[string]any) {
		obj(d, "buffers", 3)["name"] = "x"
		obj(d, "buffers", 4)["name"] = ""
	}))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range p.Buffers {
		names = append(names, b.Name)
	}
	if want := []string{"x", "proj.w", "norm.w", "x#3", "buffer#4"}; !cmp.Equal(names, want) {
		t.Errorf("names = %q, want %q", names, want)
	}
}

func TestInvalid(t *testing.T) {
	cases := []struct {
		name, file string
		edit       func(doc map[string]any)
		code, path string
	}{
		{"dangling input", "ir_spec.json", func(d map[string]any) { obj(d, "tasks", 1)["inputs"] = []any{3, 99} }, schedule.CodeReference, "$.tasks[1].inputs[1]"},
		{"dangling output", "ir_spec.json", func(d map[string]any) { obj(d, "tasks", 0)["outputs"] = []any{7} }, schedule.CodeReference, "$.tasks[0].outputs[0]"},
		{"dangling out_counter", "ir_spec.json", func(d map[string]any) { obj(d, "tasks", 0)["out_counter"] = 2 }, schedule.CodeReference, "$.tasks[0].out_counter"},
		{"dangling wait counter", "ir_spec.json", func(d map[string]any) { obj(d, "tasks", 1, "waits", 0)["counter"] = -1 }, schedule.CodeReference, "$.tasks[1].waits[0].counter"},
		{"dangling page", "ir_spec.json", func(d map[string]any) { obj(d, "pages", "buffer_to_page")["3"] = 5 }, schedule.CodeReference, "$.pages.buffer_to_page.3"},
		{"page binding of no buffer", "ir_spec.json", func(d map[string]any) { obj(d, "pages", "buffer_to_page")["9"] = 0 }, schedule.CodeReference, "$.pages.buffer_to_page.9"},
		{"page binding key not an id", "ir_spec.json", func(d map[string]any) { obj(d, "pages", "buffer_to_page")["x"] = 0 }, schedule.CodeType, "$.pages.buffer_to_page.x"},
		{"buffer bound twice", "ir_spec.json", func(d map[string]any) { obj(d, "pages", "buffer_to_page")["03"] = 0 }, schedule.CodeDuplicate, "$.pages.buffer_to_page.3"},
		{"threshold 0", "ir_spec.json", func(d map[string]any) { obj(d, "tasks", 1, "waits", 0)["threshold"] = 0 }, schedule.CodeThreshold, "$.tasks[1].waits[0].threshold"},
		{"negative threshold", "ir_spec.json", func(d map[string]any) { obj(d, "tasks", 1, "waits", 0)["threshold"] = -2 }, schedule.CodeThreshold, "$.tasks[1].waits[0].threshold"},
		{"threshold beyond uint32", "ir_spec.json", func(d map[string]any) { obj(d, "tasks", 1, "waits", 0)["threshold"] = 4294967296 }, schedule.CodeThreshold, "$.tasks[1].waits[0].threshold"},
		{"fractional threshold", "ir_spec.json", func(d map[string]any) { obj(d, "tasks", 1, "waits", 0)["threshold"] = 1.5 }, schedule.CodeType, "$.tasks[1].waits[0].threshold"},
		{"boolean threshold", "ir_spec.json", func(d map[string]any) { obj(d, "tasks", 1, "waits", 0)["threshold"] = true }, schedule.CodeType, "$.tasks[1].waits[0].threshold"},
		{"9 inputs", "ir_spec.json", func(d map[string]any) { obj(d, "tasks", 0)["inputs"] = []any{0, 1, 2, 0, 1, 2, 0, 1, 2} }, schedule.CodeLimit, "$.tasks[0].inputs"},
		{"5 outputs", "ir_spec.json", func(d map[string]any) { obj(d, "tasks", 0)["outputs"] = []any{3, 3, 3, 3, 3} }, schedule.CodeLimit, "$.tasks[0].outputs"},
		{"9 waits", "ir_spec.json", func(d map[string]any) {
			var ws []any
			for range 9 {
				ws = append(ws, map[string]any{"counter": 0, "threshold": 1})
			}
			obj(d, "tasks", 1)["waits"] = ws
		}, schedule.CodeLimit, "$.tasks[1].waits"},
		{"rank 5", "ir_spec.json", func(d map[string]any) { obj(d, "buffers", 0)["shape"] = []any{1, 1, 1, 1, 16} }, schedule.CodeLimit, "$.buffers[0].shape"},
		{"zero dimension", "ir_spec.json", func(d map[string]any) { obj(d, "buffers", 0)["shape"] = []any{1, 0} }, schedule.CodeSize, "$.buffers[0].shape[1]"},
		{"huge packed weight", "gemv_asym.json", func(d map[string]any) {
			// 2^57 I4 elements in rows of one: a byte each, 2^57 bytes.
			obj(d, "buffers", 1)["shape"] = []any{1 << 57, 1}
		}, schedule.CodeSize, "$.buffers[1].shape"},
		{"huge buffer", "ir_spec.json", func(d map[string]any) {
			obj(d, "buffers", 0)["shape"] = []any{1 << 30, 1 << 30, 1 << 30}
		}, schedule.CodeSize, "$.buffers[0].shape"},
		{"duplicate buffer id", "ir_spec.json", func(d map[string]any) { obj(d, "buffers", 1)["id"] = 0 }, schedule.CodeDuplicate, "$.buffers[1].id"},
		{"duplicate counter id", "ir_spec.json", func(d map[string]any) { obj(d, "counters", 1)["id"] = 0 }, schedule.CodeDuplicate, "$.counters[1].id"},
		{"duplicate task id", "ir_spec.json", func(d map[string]any) { obj(d, "tasks", 1)["id"] = 0 }, schedule.CodeDuplicate, "$.tasks[1].id"},
		{"unknown op", "ir_spec.json", func(d map[string]any) { obj(d, "tasks", 0)["op"] = "RMSNORM2" }, schedule.CodeValue, "$.tasks[0].op"},
		{"unknown dtype", "ir_spec.json", func(d map[string]any) { obj(d, "buffers", 2)["dtype"] = "F64" }, schedule.CodeValue, "$.buffers[2].dtype"},
		{"unknown kind", "ir_spec.json", func(d map[string]any) { obj(d, "buffers", 2)["kind"] = "SCRATCH" }, schedule.CodeValue, "$.buffers[2].kind"},
		{"unknown space", "ir_spec.json", func(d map[string]any) { obj(d, "buffers", 2)["space"] = "L2" }, schedule.CodeValue, "$.buffers[2].space"},
		{"negative sm", "ir_spec.json", func(d map[string]any) { obj(d, "tasks", 0)["sm"] = -1 }, schedule.CodeWorker, "$.tasks[0].sm"},
		{"sm beyond the target", "split_kv.json", func(d map[string]any) { obj(d, "tasks", 8)["sm"] = 4 }, schedule.CodeWorker, "$.tasks[8].sm"},
		{"target without SMs", "split_kv.json", func(d map[string]any) { obj(d, "target")["num_sms"] = 0 }, schedule.CodeLaunch, "$.target.num_sms"},
		{"target missing num_sms", "split_kv.json", func(d map[string]any) { delete(obj(d, "target"), "num_sms") }, schedule.CodeMissing, "$.target.num_sms"},
		{"major version", "ir_spec.json", func(d map[string]any) { d["ir_version"] = "1.0.0" }, schedule.CodeFormat, "$.ir_version"},
		{"abi major version", "ir_spec.json", func(d map[string]any) { d["abi_version"] = "2.0" }, schedule.CodeFormat, "$.abi_version"},
		{"missing out_counter", "ir_spec.json", func(d map[string]any) { delete(obj(d, "tasks", 0), "out_counter") }, schedule.CodeMissing, "$.tasks[0].out_counter"},
		{"missing task id", "ir_spec.json", func(d map[string]any) { delete(obj(d, "tasks", 0), "id") }, schedule.CodeMissing, "$.tasks[0].id"},
		{"missing shape", "ir_spec.json", func(d map[string]any) { delete(obj(d, "buffers", 0), "shape") }, schedule.CodeMissing, "$.buffers[0].shape"},
		{"missing n_off", "ir_spec.json", func(d map[string]any) { delete(obj(d, "tasks", 1, "params"), "n_off") }, schedule.CodeMissing, "$.tasks[1].params.n_off"},
		{"missing pos", "kv_prior.json", func(d map[string]any) { obj(d, "tasks", 0)["params"] = map[string]any{} }, schedule.CodeMissing, "$.tasks[0].params.pos"},
		{"missing kv_len", "kv_prior.json", func(d map[string]any) { delete(obj(d, "tasks", 2, "params"), "kv_len") }, schedule.CodeMissing, "$.tasks[2].params.kv_len"},
		{"N_tile 0", "ir_spec.json", func(d map[string]any) { obj(d, "tasks", 1, "params")["N_tile"] = 0 }, schedule.CodeEmptyAccess, "$.tasks[1].params.N_tile"},
		{"negative kv_len", "kv_prior.json", func(d map[string]any) { obj(d, "tasks", 2, "params")["kv_len"] = -3 }, schedule.CodeSize, "$.tasks[2].params.kv_len"},
		{"param beyond int32", "kv_prior.json", func(d map[string]any) { obj(d, "tasks", 0, "params")["pos"] = 1 << 31 }, schedule.CodeSize, "$.tasks[0].params.pos"},
		{"fewer query heads than KV heads", "unsafe/attention_stride.json", func(d map[string]any) {
			obj(d, "tasks", 1, "params")["n_heads"] = 1
		}, schedule.CodeValue, "$.tasks[1].params.n_heads"},
		{"float footprint param", "ir_spec.json", func(d map[string]any) { obj(d, "tasks", 1, "params")["n_off"] = 0.5 }, schedule.CodeType, "$.tasks[1].params.n_off"},
		{"negative counter init", "ir_spec.json", func(d map[string]any) { obj(d, "counters", 0)["init"] = -1 }, schedule.CodeSize, "$.counters[0].init"},
		{"counter init beyond uint32", "ir_spec.json", func(d map[string]any) { obj(d, "counters", 0)["init"] = 1 << 32 }, schedule.CodeSize, "$.counters[0].init"},
		{"buffers not a list", "ir_spec.json", func(d map[string]any) { d["buffers"] = map[string]any{} }, schedule.CodeType, "$.buffers"},
		{"inputs null", "ir_spec.json", func(d map[string]any) { obj(d, "tasks", 0)["inputs"] = nil }, schedule.CodeType, "$.tasks[0].inputs"},
		{"string id", "ir_spec.json", func(d map[string]any) { obj(d, "buffers", 0)["id"] = "0" }, schedule.CodeType, "$.buffers[0].id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := amk.Unmarshal(edit(t, c.file, c.edit))
			checkInvalid(t, err, c.code, c.path)
		})
	}
	raw := []struct {
		name, data, code, path string
	}{
		{"not JSON", `{"tasks": [`, schedule.CodeSyntax, "$.tasks"},
		{"trailing data", `{} {}`, schedule.CodeSyntax, "$"},
		{"not an object", `[1, 2]`, schedule.CodeType, "$"},
		{"duplicate key", `{"tasks": [], "tasks": []}`, schedule.CodeDuplicate, "$.tasks"},
		{"id beyond int64", `{"counters": [{"id": 99999999999999999999}]}`, schedule.CodeSize, "$.counters[0].id"},
	}
	for _, c := range raw {
		t.Run(c.name, func(t *testing.T) {
			_, err := amk.Unmarshal([]byte(c.data))
			checkInvalid(t, err, c.code, c.path)
		})
	}
}

func checkInvalid(t *testing.T, err error, code, path string) {
	t.Helper()
	var se *schedule.Error
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want a *schedule.Error", err)
	}
	for _, d := range se.Diagnostics {
		if d.Code == code && d.Path == path {
			return
		}
	}
	t.Errorf("want %s at %s; have:\n%v", code, path, err)
}

func TestDetect(t *testing.T) {
	p := load(t, "ir_spec.json")
	mp, err := schedule.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		data string
		want bool
	}{
		{`{"ir_version": "0.2.0"}`, true},
		{`  {"meta": {}, "abi_version": "0.2", "format": "megaproof/v1"}`, true},
		{`{"buffers": [], "tasks": []}`, true},
		{`{"tasks": [], "launch": {}}`, false},
		{`{"format": "megaproof/v1", "ir_version": "0.2.0"}`, false},
		{string(mp), false},
		{`{}`, false},
		{`[]`, false},
		{``, false},
		{`{"ir_version"`, true}, // decided before the syntax error: Unmarshal reports it
		{`{"meta": {"x": [1, 2, {"y": null}]}, "target": null}`, true},
		{`{"meta": {"x": [1, 2`, false},
		{`not json`, false},
	}
	for _, c := range cases {
		if got := amk.Detect([]byte(c.data)); got != c.want {
			t.Errorf("Detect(%.40q) = %v, want %v", c.data, got, c.want)
		}
	}
}

// TestRequiredLists checks that a document without its tasks, buffers or
// counters list is invalid, so that no garbage is called safe.
func TestRequiredLists(t *testing.T) {
	for _, c := range []struct {
		doc     string
		missing []string
	}{
		{`{"meta": 1}`, []string{"$.buffers", "$.counters", "$.tasks"}},
		{`{"counters": []}`, []string{"$.buffers", "$.tasks"}},
		{`{"ir_version": null}`, []string{"$.buffers", "$.counters", "$.tasks"}},
		{`{"ir_version": "0.2.0", "buffers": [], "counters": [], "tasks": null}`, []string{"$.tasks"}},
	} {
		_, err := amk.Unmarshal([]byte(c.doc))
		var se *schedule.Error
		if !errors.As(err, &se) {
			t.Fatalf("%s: err = %v, want invalid.missing", c.doc, err)
		}
		var got []string
		for _, d := range se.Diagnostics {
			if d.Code == schedule.CodeMissing {
				got = append(got, d.Path)
			}
		}
		if !slices.Equal(got, c.missing) {
			t.Errorf("%s: missing %v, want %v\n%v", c.doc, got, c.missing, err)
		}
	}
	if _, err := amk.Unmarshal([]byte(`{"buffers": [], "counters": [], "tasks": []}`)); err != nil {
		t.Errorf("empty lists: %v", err)
	}
}

// TestIntegralFloats checks that integers written as integral floats (from
// Python's /) read as the integers, and that fractions stay errors.
func TestIntegralFloats(t *testing.T) {
	want := load(t, "ir_spec.json")
	data, err := os.ReadFile(filepath.Join("testdata", "ir_spec.json"))
	if err != nil {
		t.Fatal(err)
	}
	floats := regexp.MustCompile(`(": ?)([1-9][0-9]*)([,}\] ])`).ReplaceAll(data, []byte("${1}${2}.0${3}"))
	if bytes.Equal(floats, data) {
		t.Fatal("no integer rewritten")
	}
	got, err := amk.Unmarshal(floats)
	if err != nil {
		t.Fatalf("integral floats: %v", err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("integral floats map to another program (-want +got):\n%s", d)
	}
	_, err = amk.Unmarshal(edit(t, "ir_spec.json", func(d map[string]any) { obj(d, "tasks", 1, "params")["N_tile"] = 16.5 }))
	checkInvalid(t, err, schedule.CodeType, "$.tasks[1].params.N_tile")
}

// TestKeyOrder checks that the order of keys in the document does not
// change the program: tasks before the buffers and counters they name are
// read at the end.
func TestKeyOrder(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.json")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		want, err := amk.Unmarshal(data)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		keys := slices.Sorted(maps.Keys(doc))
		for _, order := range [][]string{keys, slices.Collect(func(yield func(string) bool) {
			for _, k := range slices.Backward(keys) {
				if !yield(k) {
					return
				}
			}
		})} {
			var b bytes.Buffer
			b.WriteByte('{')
			for i, k := range order {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, "%q:%s", k, doc[k])
			}
			b.WriteByte('}')
			got, err := amk.Unmarshal(b.Bytes())
			if err != nil {
				t.Fatalf("%s, keys %v: %v", name, order, err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("%s, keys %v: another program (-want +got):\n%s", name, order, d)
			}
		}
	}
}

// TestDecodeAuto reads both formats from streams, detecting each, and
// limits the input.
func TestDecodeAuto(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "split_kv.json"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := amk.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	mp, err := schedule.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		doc   []byte
		isAMK bool
	}{{"amk", data, true}, {"megaproof", mp, false}} {
		p, isAMK, err := amk.DecodeAuto(iotest.OneByteReader(bytes.NewReader(c.doc)), 0)
		if err != nil || isAMK != c.isAMK {
			t.Fatalf("%s: isAMK %v, %v", c.name, isAMK, err)
		}
		if d := cmp.Diff(want, p, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("%s: another program (-want +got):\n%s", c.name, d)
		}
	}
	_, _, err = amk.DecodeAuto(bytes.NewReader(data), 100)
	var se *schedule.Error
	if !errors.As(err, &se) || len(se.Diagnostics) != 1 || se.Diagnostics[0].Code != schedule.CodeLimit {
		t.Fatalf("100-byte limit: %v", err)
	}
}
