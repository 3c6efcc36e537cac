package amk

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// e2Toy builds AMK IR JSON shaped like AMK's toy decode lowerings (E2's
// population): per layer RMSNORM, q/k/v GEMV tiles, two EMBED reshapes,
// two ROPEs, two KV_APPENDs, ATTENTION_TILE, o tiles, ADD, RMSNORM,
// gate/up tiles, SILU_MUL, down tiles, ADD; then a final RMSNORM and
// lm_head tiles writing the IO_OUTPUT logits. 9+28·L buffers, 3+19·L
// counters, every task unpinned.
func e2Toy(layers, hidden, nTile, sms int) []byte {
	type wait struct {
		Counter   int `json:"counter"`
		Threshold int `json:"threshold"`
	}
	inter, vocab, kvDim, maxSeq, pos := hidden*11/4, 512, hidden, 64, 7
	var bufs, ctrs, tasks []map[string]any
	buf := func(name, kind string, shape ...int) int {
		bufs = append(bufs, map[string]any{"id": len(bufs), "name": name, "kind": kind, "dtype": "F16", "shape": shape, "space": "HBM", "source": nil})
		return len(bufs) - 1
	}
	ctr := func(note string) int {
		ctrs = append(ctrs, map[string]any{"id": len(ctrs), "init": 0, "note": note})
		return len(ctrs) - 1
	}
	add := func(op string, in, out []int, c int, ws []wait, params map[string]any, label string) {
		if ws == nil {
			ws = []wait{}
		}
		tasks = append(tasks, map[string]any{"id": len(tasks), "op": op, "inputs": in, "outputs": out, "out_counter": c, "waits": ws, "params": params, "sm": nil, "est_bytes": 4096, "est_flops": 8192, "label": label})
	}
	type ready struct{ c, k int }
	linear := func(x int, xr ready, name string, K, N int, out int) (int, ready) {
		w := buf(name+".weight", "WEIGHT", N, K)
		o := out
		if o < 0 {
			o = buf(name, "ACTIVATION", 1, N)
		}
		c := ctr(name)
		tile := min(max(nTile, (N+63)/64), N)
		n := 0
		for off := 0; off < N; off += tile {
			add("GEMV_TILE", []int{x, w}, []int{o}, c, []wait{{xr.c, xr.k}}, map[string]any{"K": K, "N_tile": min(tile, N-off), "n_off": off}, fmt.Sprintf("%s[%d]", name, n))
			n++
		}
		return o, ready{c, n}
	}
	single := func(op string, in []int, rs []ready, name string, shape []int, params map[string]any) (int, ready) {
		o := buf(name, "ACTIVATION", shape...)
		c := ctr(name)
		var ws []wait
		for _, r := range rs {
			ws = append(ws, wait{r.c, r.k})
		}
		add(op, in, []int{o}, c, ws, params, name)
		return o, ready{c, 1}
	}
	tok := buf("token", "IO_INPUT", 1)
	emb := buf("embed.weight", "WEIGHT", vocab, hidden)
	cos := buf("rope.cos", "CONST", maxSeq, 32)
	sin := buf("rope.sin", "CONST", maxSeq, 32)
	x, xr := single("EMBED", []int{tok, emb}, nil, "h0", []int{1, hidden}, map[string]any{"hidden": hidden})
	for l := range layers {
		p := fmt.Sprintf("layers.%d.", l)
		nw := buf(p+"input_layernorm.weight", "WEIGHT", hidden)
		n1, n1r := single("RMSNORM", []int{x, nw}, []ready{xr}, p+"norm1", []int{1, hidden}, map[string]any{"eps": 1e-5, "hidden": hidden})
		q, qr := linear(n1, n1r, p+"q_proj", hidden, hidden, -1)
		k, kr := linear(n1, n1r, p+"k_proj", hidden, kvDim, -1)
		v, vr := linear(n1, n1r, p+"v_proj", hidden, kvDim, -1)
		q2, q2r := single("EMBED", []int{q}, []ready{qr}, p+"q.heads", []int{hidden / 32, 32}, nil)
		k2, k2r := single("EMBED", []int{k}, []ready{kr}, p+"k.heads", []int{kvDim / 32, 32}, nil)
		q3, q3r := single("ROPE", []int{q2, cos, sin}, []ready{q2r}, p+"q.rope", []int{hidden / 32, 32}, map[string]any{"pos": pos, "head_dim": 32})
		k3, k3r := single("ROPE", []int{k2, cos, sin}, []ready{k2r}, p+"k.rope", []int{kvDim / 32, 32}, map[string]any{"pos": pos, "head_dim": 32})
		kc := buf(p+"cache.k", "KV_CACHE", maxSeq, kvDim/32, 32)
		vc := buf(p+"cache.v", "KV_CACHE", maxSeq, kvDim/32, 32)
		ka, va := ctr(p+"k.append"), ctr(p+"v.append")
		add("KV_APPEND", []int{k3, kc}, []int{kc}, ka, []wait{{k3r.c, k3r.k}}, map[string]any{"pos": pos}, p+"k.append")
		add("KV_APPEND", []int{v, vc}, []int{vc}, va, []wait{{vr.c, vr.k}}, map[string]any{"pos": pos}, p+"v.append")
		att, ar := single("ATTENTION_TILE", []int{q3, kc, vc}, []ready{q3r, {ka, 1}, {va, 1}}, p+"attn", []int{1, hidden},
			map[string]any{"head_dim": 32, "kv_start": 0, "kv_len": pos + 1, "scale": 0.17677669529663687, "n_heads": hidden / 32, "n_kv_heads": kvDim / 32})
		o, or := linear(att, ar, p+"o_proj", hidden, hidden, -1)
		h, hr := single("ADD", []int{x, o}, []ready{xr, or}, p+"resid1", []int{1, hidden}, nil)
		nw2 := buf(p+"post_attention_layernorm.weight", "WEIGHT", hidden)
		n2, n2r := single("RMSNORM", []int{h, nw2}, []ready{hr}, p+"norm2", []int{1, hidden}, map[string]any{"eps": 1e-5, "hidden": hidden})
		g, gr := linear(n2, n2r, p+"gate_proj", hidden, inter, -1)
		u, ur := linear(n2, n2r, p+"up_proj", hidden, inter, -1)
		s, sr := single("SILU_MUL", []int{g, u}, []ready{gr, ur}, p+"act", []int{1, inter}, nil)
		d, dr := linear(s, sr, p+"down_proj", inter, hidden, -1)
		x, xr = single("ADD", []int{h, d}, []ready{hr, dr}, p+"resid2", []int{1, hidden}, nil)
	}
	fw := buf("norm.weight", "WEIGHT", hidden)
	fn, fnr := single("RMSNORM", []int{x, fw}, []ready{xr}, "norm", []int{1, hidden}, map[string]any{"eps": 1e-5, "hidden": hidden})
	logits := buf("logits", "IO_OUTPUT", 1, vocab)
	linear(fn, fnr, "lm_head", hidden, vocab, logits)
	data, _ := json.Marshal(map[string]any{
		"ir_version": "0.2.0", "abi_version": "0.2", "meta": map[string]any{"model": "toy", "gpu": "h100"},
		"target":  map[string]any{"name": "h100", "sm_arch": 90, "num_sms": sms, "supports_cooperative": true},
		"buffers": bufs, "counters": ctrs, "tasks": tasks, "pages": nil, "config": nil,
	})
	return data
}

// E2Toy and E2Population are e2Toy and e2Population, for the benchmarks
// of package amk_test.
var (
	E2Toy        = e2Toy
	E2Population = e2Population
)

// e2Out names a directory to write the E2-shaped toy population to
// (go test ./schedule/amk -run TestE2Population -e2.out DIR), for timing
// megaproof verify on it.
var e2Out = flag.String("e2.out", "", "directory to write the E2-shaped AMK toy population to")

// e2Population is the toy grid: 1 to 3 layers, hidden sizes 64 to 128,
// GEMV tile widths 8 to 256 and 82 to 192 SMs, 360 programs of 22 to 630
// tasks, as E2's toys.
func e2Population() (names []string, docs [][]byte) {
	for _, layers := range []int{1, 2, 3} {
		for _, hidden := range []int{64, 80, 96, 128} {
			for _, tile := range []int{8, 16, 32, 64, 128, 256} {
				for _, sms := range []int{82, 108, 132, 148, 192} {
					names = append(names, fmt.Sprintf("toy-l%d-h%d-t%d-s%d.json", layers, hidden, tile, sms))
					docs = append(docs, e2Toy(layers, hidden, tile, sms))
				}
			}
		}
	}
	return names, docs
}

// TestE2Population checks that the toy population maps, has E2's sizes,
// and writes it when -e2.out is set.
func TestE2Population(t *testing.T) {
	names, docs := e2Population()
	lo, hi := 1<<30, 0
	for i, doc := range docs {
		p, err := Unmarshal(doc)
		if err != nil {
			t.Fatalf("%s: %v", names[i], err)
		}
		lo, hi = min(lo, len(p.Tasks)), max(hi, len(p.Tasks))
	}
	if len(docs) != 360 || lo < 20 || hi > 700 {
		t.Fatalf("%d programs of %d to %d tasks", len(docs), lo, hi)
	}
	t.Logf("%d programs of %d to %d tasks", len(docs), lo, hi)
	if *e2Out == "" {
		return
	}
	if err := os.MkdirAll(*e2Out, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, doc := range docs {
		if err := os.WriteFile(filepath.Join(*e2Out, names[i]), doc, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
