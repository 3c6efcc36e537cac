package amk_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/megaproof/megaproof/schedule/amk"
	"github.com/megaproof/megaproof/verify"
)

// TestVerdicts runs the verifier on mapped AMK programs: the testdata
// programs are safe, and one fault injected in the AMK JSON yields the
// finding it should.
func TestVerdicts(t *testing.T) {
	cases := []struct {
		name, file string
		edit       func(doc map[string]any)
		verdict    verify.Verdict
		codes      []string // one of these must be found (unsafe only)
	}{
		{name: "IR_SPEC example", file: "ir_spec.json", verdict: verify.Safe},
		{name: "split-KV attention, pinned shards", file: "split_kv.json", verdict: verify.Safe},
		{name: "split-KV, permuted non-dense ids", file: "split_kv_permuted.json", verdict: verify.Safe},
		{name: "attention over prior KV rows", file: "kv_prior.json", verdict: verify.Safe},
		{name: "batched GEMM and rank-4 KV", file: "batched.json", verdict: verify.Safe},
		{name: "asymmetric int4 GEMV tiles", file: "gemv_asym.json", verdict: verify.Safe},
		{
			name: "wrong threshold", file: "split_kv.json",
			edit:    func(d map[string]any) { obj(d, "tasks", 9, "waits", 0)["threshold"] = 2 },
			verdict: verify.Unsafe, codes: []string{verify.CodeDeadlockUnsatisfiable},
		},
		{
			name: "GEMV tile beyond its buffer", file: "ir_spec.json",
			edit:    func(d map[string]any) { obj(d, "tasks", 1, "params")["n_off"] = 8 },
			verdict: verify.Unsafe, codes: []string{verify.CodeOutOfBounds},
		},
		{
			name: "negative n_off", file: "gemv_asym.json",
			edit:    func(d map[string]any) { obj(d, "tasks", 0, "params")["n_off"] = -16 },
			verdict: verify.Unsafe, codes: []string{verify.CodeOutOfBounds},
		},
		{
			name: "KV pos beyond the cache", file: "kv_prior.json",
			edit:    func(d map[string]any) { obj(d, "tasks", 0, "params")["pos"] = 32 },
			verdict: verify.Unsafe, codes: []string{verify.CodeOutOfBounds},
		},
		{
			name: "missing wait on the KV append", file: "split_kv.json",
			// Shard 2 reads rows [28, 41), which include row 40 appended by
			// task 4 and 5; drop its waits on the appends.
			edit: func(d map[string]any) {
				obj(d, "tasks", 8)["waits"] = []any{map[string]any{"counter": 0, "threshold": 2}}
			},
			verdict: verify.Unsafe, codes: []string{verify.CodeRaceRAW},
		},
		{
			name: "attention over the row being appended", file: "kv_prior.json",
			edit:    func(d map[string]any) { obj(d, "tasks", 2, "params")["kv_len"] = 8 },
			verdict: verify.Unsafe, codes: []string{verify.CodeRaceRAW},
		},
		{
			// Unpinned, so AMK's loader may put the shard and the second
			// producer of c0 on different SMs.
			name: "partial wait on a shared counter", file: "split_kv.json",
			edit: func(d map[string]any) {
				obj(d, "tasks", 6, "waits", 0)["threshold"] = 1
				for _, tk := range at(d, "tasks").([]any) {
					delete(tk.(map[string]any), "sm")
				}
			},
			verdict: verify.Unsafe, codes: []string{verify.CodeRaceRAW, verify.CodeUninitializedRead},
		},
		{
			// AMK's GPU loader zeroes every counter before a launch: an
			// init does not let the reader run before its producer.
			name: "counter init does not let a reader run early", file: "ir_spec.json",
			edit:    func(d map[string]any) { obj(d, "counters", 0)["init"] = 1 },
			verdict: verify.Safe,
		},
		{
			// Nor does it stand in for a producer that is not there.
			name: "counter init does not make up for a missing producer", file: "ir_spec.json",
			edit: func(d map[string]any) {
				obj(d, "counters", 0)["init"] = 1
				obj(d, "tasks", 1)["waits"] = []any{map[string]any{"counter": 0, "threshold": 2}}
			},
			verdict: verify.Unsafe, codes: []string{verify.CodeDeadlockUnsatisfiable},
		},
		{
			name: "write to a weight", file: "ir_spec.json",
			edit:    func(d map[string]any) { obj(d, "tasks", 1)["outputs"] = []any{1} },
			verdict: verify.Unsafe, codes: []string{verify.CodeReadonlyWrite},
		},
		{
			name: "missing GEMV tile", file: "gemv_asym.json",
			edit:    func(d map[string]any) { d["tasks"] = at(d, "tasks").([]any)[:2] },
			verdict: verify.Unsafe, codes: []string{verify.CodeOutputUnwritten},
		},
		{
			// AMK's kernel copies all of new_kv from row pos on: a
			// two-row append at 2 also writes row 3, which the attention
			// reads without waiting.
			name: "append of two rows", file: "unsafe/kv_append_rows.json",
			verdict: verify.Unsafe, codes: []string{verify.CodeRaceRAW},
		},
		{
			name: "append of one row", file: "unsafe/kv_append_rows.json",
			edit:    func(d map[string]any) { obj(d, "buffers", 0)["shape"] = []any{1, 4} },
			verdict: verify.Safe,
		},
		{
			// AMK's element loops store any dtype but F16 and BF16 as a
			// 4-byte float: 128 I8 elements take 512 bytes of a 128-byte
			// buffer.
			name: "store width of an I8 activation", file: "unsafe/elem_width.json",
			verdict: verify.Unsafe, codes: []string{verify.CodeOutOfBounds},
		},
		{
			name: "store width of an F32 activation", file: "unsafe/elem_width.json",
			edit:    func(d map[string]any) { obj(d, "buffers", 1)["dtype"] = "F32" },
			verdict: verify.Safe,
		},
		{
			// AMK's loader allocates F8 (and non-weight I4) buffers as
			// float32, the width its element loops store.
			name: "store width of an F8 activation", file: "unsafe/elem_width.json",
			edit:    func(d map[string]any) { obj(d, "buffers", 1)["dtype"] = "F8E4M3" },
			verdict: verify.Safe,
		},
		{
			name: "store width of an I4 activation", file: "unsafe/elem_width.json",
			edit:    func(d map[string]any) { obj(d, "buffers", 1)["dtype"] = "I4" },
			verdict: verify.Safe,
		},
		{
			name: "store width of a BOOL activation", file: "unsafe/elem_width.json",
			edit:    func(d map[string]any) { obj(d, "buffers", 1)["dtype"] = "BOOL" },
			verdict: verify.Unsafe, codes: []string{verify.CodeOutOfBounds},
		},
		{
			// K = 63: the quantizer packs each of the 48 rows into 32 bytes,
			// and each tile reads its rows' 32 bytes.
			name: "quantized GEMV of odd K", file: "gemv_asym.json",
			edit: func(d map[string]any) {
				obj(d, "buffers", 0)["shape"] = []any{1, 63}
				obj(d, "buffers", 1)["shape"] = []any{48, 63}
				for i := range 3 {
					obj(d, "tasks", i, "params")["K"] = 63
				}
			},
			verdict: verify.Safe,
		},
		{
			// AMK's GEMV kernel indexes its output as [M, N] by its first
			// two axes: a [32] vector has none past its rank, so both tiles
			// store every column to element 0.
			name: "GEMV tiles into a vector", file: "unsafe/gemv_vector_output.json",
			verdict: verify.Unsafe, codes: []string{verify.CodeOutputUnwritten, verify.CodeRaceWAW},
		},
		{
			// The second tile reads weight rows [16, 48) of a 32-row W.
			name: "GEMV tile past its weight rows", file: "unsafe/gemv_vector_output.json",
			edit: func(d map[string]any) {
				obj(d, "buffers", 2)["shape"] = []any{1, 64}
				obj(d, "tasks", 1, "params")["N_tile"] = 32
			},
			verdict: verify.Unsafe, codes: []string{verify.CodeOutOfBounds, verify.CodeOutputUnwritten},
		},
		{
			name: "GEMV tiles into a matrix", file: "unsafe/gemv_vector_output.json",
			edit:    func(d map[string]any) { obj(d, "buffers", 2)["shape"] = []any{1, 32} },
			verdict: verify.Safe,
		},
		{
			// ATTENTION_TILE steps through the cache by n_kv_heads·head_dim
			// elements a row: two rows of 8 cover cache rows 0-3 of a
			// [8, 1, 4] cache, and row 3 is being appended.
			name: "attention rows from its params", file: "unsafe/attention_stride.json",
			verdict: verify.Unsafe, codes: []string{verify.CodeRaceRAW},
		},
		{
			name: "attention params that agree with the cache", file: "unsafe/attention_stride.json",
			edit:    func(d map[string]any) { obj(d, "tasks", 1, "params")["n_kv_heads"] = 1 },
			verdict: verify.Safe,
		},
		{
			// Three query heads over two KV heads: rep = 1, so head 2 reads
			// KV head 2, past the last window row (1) into row 2, which is
			// being appended.
			name: "attention heads past the KV row", file: "unsafe/attention_stride.json",
			edit:    attentionHeads(3),
			verdict: verify.Unsafe, codes: []string{verify.CodeRaceRAW},
		},
		{
			name: "attention heads that fit the KV row", file: "unsafe/attention_stride.json",
			edit:    attentionHeads(4),
			verdict: verify.Safe,
		},
		{
			// A rank-3 q is two sequences of four heads; with n_kv_heads 4
			// the kernel steps 16·32 elements from one sequence's cache to
			// the next, past the [2, 16, 2, 8] caches.
			name: "batched attention params beyond the caches", file: "batched.json",
			edit: func(d map[string]any) {
				obj(d, "buffers", 5)["shape"] = []any{2, 4, 8}
				obj(d, "buffers", 7)["shape"] = []any{2, 32}
				ps := obj(d, "tasks", 3, "params")
				ps["n_heads"], ps["n_kv_heads"] = 4, 4
			},
			verdict: verify.Unsafe, codes: []string{verify.CodeOutOfBounds},
		},
		{
			// The second GEMM tile reads weight rows [24, 48) of a 40-row W.
			name: "GEMM tile past its weight rows", file: "batched.json",
			edit:    func(d map[string]any) { obj(d, "buffers", 1)["shape"] = []any{40, 32} },
			verdict: verify.Unsafe, codes: []string{verify.CodeOutOfBounds},
		},
		{
			// The third int4 tile reads packed rows [32, 48) of 40.
			name: "quantized GEMV tile past its packed rows", file: "gemv_asym.json",
			edit:    func(d map[string]any) { obj(d, "buffers", 1)["shape"] = []any{40, 64} },
			verdict: verify.Unsafe, codes: []string{verify.CodeOutOfBounds},
		},
		{
			// group 32 gives K/group = 2 scales a row: a [48, 1] scale
			// buffer holds half of them.
			name: "quantized GEMV scales short of its groups", file: "gemv_asym.json",
			edit:    func(d map[string]any) { obj(d, "buffers", 2)["shape"] = []any{48, 1} },
			verdict: verify.Unsafe, codes: []string{verify.CodeOutOfBounds},
		},
		{
			name: "quantized GEMV scales of one group", file: "gemv_asym.json",
			edit: func(d map[string]any) {
				obj(d, "buffers", 2)["shape"] = []any{48, 1}
				obj(d, "buffers", 3)["shape"] = []any{48, 1}
				for i := range 3 {
					obj(d, "tasks", i, "params")["group"] = 64
				}
			},
			verdict: verify.Safe,
		},
		{
			// The combine reads 5·18 elements of each [4, 18] partial.
			name: "combine over more heads than its partials hold", file: "split_kv.json",
			edit: func(d map[string]any) {
				obj(d, "buffers", 12)["shape"] = []any{1, 80}
				obj(d, "tasks", 9, "params")["n_heads"] = 5
			},
			verdict: verify.Unsafe, codes: []string{verify.CodeOutOfBounds},
		},
		{
			// The combine writes the first 4·16 elements of a [1, 80] output.
			name: "combine into a larger output", file: "split_kv.json",
			edit:    func(d map[string]any) { obj(d, "buffers", 12)["shape"] = []any{1, 80} },
			verdict: verify.Unsafe, codes: []string{verify.CodeOutputUnwritten},
		},
		{
			name: "argmax of every logits row", file: "ir_spec.json",
			edit: argmax(1, 1), verdict: verify.Safe,
		},
		{
			// Two rows of logits give two ids, one past the output.
			name: "argmax of more rows than ids", file: "ir_spec.json",
			edit: argmax(2, 1), verdict: verify.Unsafe, codes: []string{verify.CodeOutOfBounds},
		},
		{
			name: "argmax into more ids than rows", file: "ir_spec.json",
			edit: argmax(1, 2), verdict: verify.Unsafe, codes: []string{verify.CodeOutputUnwritten},
		},
		{
			// EMBED writes one table row per id: two ids into one row.		{
			// EMBED writes one table row per id: two ids into one row.
			name: "embedding of two ids into one row", file: "embed_rope.json",
			edit:    func(d map[string]any) { obj(d, "buffers", 0)["shape"] = []any{2} },
			verdict: verify.Unsafe, codes: []string{verify.CodeOutOfBounds},
		},
		{
			// ROPE writes as many elements as its input has: 8 into 4.
			name: "rotation into a smaller output", file: "embed_rope.json",
			edit:    func(d map[string]any) { obj(d, "buffers", 4)["shape"] = []any{1, 4} },
			verdict: verify.Unsafe, codes: []string{verify.CodeOutOfBounds},
		},
		{
			// COPY reads as many elements as its output has: 128 of a
			// 64-element input.
			name: "copy into a larger output", file: "unsafe/copy_extent.json",
			verdict: verify.Unsafe, codes: []string{verify.CodeOutOfBounds, verify.CodeUninitializedRead},
		},
		{
			name: "copy into an output of its size", file: "unsafe/copy_extent.json",
			edit:    func(d map[string]any) { obj(d, "buffers", 3)["shape"] = []any{1, 64} },
			verdict: verify.Safe,
		},
		{
			name: "task-list order deadlock that the loader's queue order avoids", file: "split_kv.json",
			// The combine, pinned to SM 0 ahead of shard 0 in task-list
			// order, waits for shard 0: in task-list order SM 0 would
			// only reach the shard after it, but AMK's loader queues SM 0
			// in topological order, the shard first.
			edit: func(d map[string]any) {
				ts := at(d, "tasks").([]any)
				comb := obj(ts[9])
				comb["sm"] = 0
				d["tasks"] = append(append(append([]any{}, ts[:6]...), comb), ts[6:9]...)
			},
			verdict: verify.Safe,
		},
		{
			// SM 0's queue is t2 (no waits, the lower id among the ready
			// tasks) then t1, which waits for t0 on SM 1; SM 1 runs t0 then
			// t3, which waits only for t2: t3 reads act while t1 may be
			// writing it. In task-list order t1 would come first.
			name: "race between tasks the loader's queue order swaps", file: "unsafe/queue_order_race.json",
			verdict: verify.Unsafe, codes: []string{verify.CodeRaceRAW, verify.CodeUninitializedRead},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := edit(t, c.file, func(d map[string]any) {
				if c.edit != nil {
					c.edit(d)
				}
			})
			p, err := amk.Unmarshal(data)
			if err != nil {
				t.Fatal(err)
			}
			r, err := verify.Run(context.Background(), p, verify.Config{Sanity: true})
			if err != nil {
				t.Fatalf("verify: %v", err)
			}
			var codes []string
			for _, f := range r.Findings {
				codes = append(codes, f.Code)
			}
			if r.Verdict != c.verdict {
				t.Fatalf("verdict %v, want %v; findings %v", r.Verdict, c.verdict, r.Findings)
			}
			if len(c.codes) > 0 && !slices.ContainsFunc(codes, func(code string) bool { return slices.Contains(c.codes, code) }) {
				t.Errorf("findings %v, want one of %v", codes, c.codes)
			}
		})
	}
}

// attentionHeads edits unsafe/attention_stride.json to attend with heads
// query heads over two KV heads: caches of [8, 2, 4] (rows of 8 elements),
// one appended at row 2 while the attention reads rows [0, 2).
func attentionHeads(heads int) func(map[string]any) {
	return func(d map[string]any) {
		obj(d, "buffers", 0)["shape"] = []any{1, 2, 4}
		obj(d, "buffers", 1)["shape"] = []any{8, 2, 4}
		obj(d, "buffers", 2)["shape"] = []any{heads, 4}
		obj(d, "buffers", 3)["shape"] = []any{1, 4 * heads}
		obj(d, "tasks", 0, "params")["pos"] = 2
		ps := obj(d, "tasks", 1, "params")
		ps["n_heads"], ps["n_kv_heads"] = heads, 2
	}
}

// argmax edits ir_spec.json to add a SAMPLE_ARGMAX over an input of rows
// logits rows (of 16/rows) into an I32 output of ids elements.
func argmax(rows, ids int) func(map[string]any) {
	return func(d map[string]any) {
		d["buffers"] = append(d["buffers"].([]any),
			map[string]any{"id": 5, "name": "ids", "kind": "IO_OUTPUT", "dtype": "I32", "shape": []any{ids}, "space": "HBM"},
			map[string]any{"id": 6, "name": "logits", "kind": "IO_INPUT", "dtype": "F16", "shape": []any{rows, 16 / rows}, "space": "HBM"})
		d["counters"] = append(d["counters"].([]any), map[string]any{"id": 2, "init": 0})
		d["tasks"] = append(d["tasks"].([]any), map[string]any{"id": 2, "op": "SAMPLE_ARGMAX", "inputs": []any{6}, "outputs": []any{5},
			"out_counter": 2, "waits": []any{}, "params": map[string]any{}})
	}
}

// TestAMKLowerings verifies programs written by AMK's own lower() and
// to_json() (scripts/amk/lowerings.py at RightNow-AI/AutoMegaKernel
// a514bbc): batched decode with GEMM tiles, int4 asymmetric and int8
// symmetric weight-only quantized GEMV tiles, split-KV attention with its
// combine. Each is safe, and each holds the ops it was chosen for.
func TestAMKLowerings(t *testing.T) {
	for file, op := range map[string]string{
		"b4-l1-h64-t64-p7.json":     `"GEMM_TILE"`,
		"q4ag32-l1-h64-t64-p7.json": `"qdtype": 7`,
		"q8sg64-l1-h64-t64-p3.json": `"qdtype": 6`,
		"s4-l1-h64-p40-m4.json":     `"ATTENTION_COMBINE"`,
	} {
		data, err := os.ReadFile(filepath.Join("testdata", "lowered", file))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(data, []byte(op)) {
			t.Errorf("%s holds no %s", file, op)
		}
		p, err := amk.Unmarshal(data)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		r, err := verify.Run(context.Background(), p, verify.Config{Sanity: true})
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict != verify.Safe {
			t.Errorf("%s: %v, findings %v", file, r.Verdict, r.Findings)
		}
	}
}
