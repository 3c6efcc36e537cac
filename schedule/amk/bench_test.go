package amk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/schedule/amk"
	"github.com/megaproof/megaproof/verify"
)

// llamaIR builds AMK IR JSON shaped like AMK's decode lowering of a
// Llama-family model: per layer RMSNORM, q/k/v GEMV tiles, two KV_APPENDs,
// attention, o tiles, ADD, RMSNORM, gate/up tiles, SILU_MUL, down tiles,
// ADD; every tiled projection shares one counter that its consumer
// all-joins.
func llamaIR(layers, hidden, inter, kvDim, nTile, pos int) []byte {
	type wait struct {
		Counter   int `json:"counter"`
		Threshold int `json:"threshold"`
	}
	var bufs, ctrs, tasks []map[string]any
	buf := func(name, kind string, shape ...int) int {
		bufs = append(bufs, map[string]any{"id": len(bufs), "name": name, "kind": kind, "dtype": "F16", "shape": shape, "space": "HBM", "source": nil})
		return len(bufs) - 1
	}
	ctr := func() int {
		ctrs = append(ctrs, map[string]any{"id": len(ctrs), "init": 0, "note": ""})
		return len(ctrs) - 1
	}
	add := func(op string, in, out []int, c int, ws []wait, params map[string]any) {
		if ws == nil {
			ws = []wait{}
		}
		tasks = append(tasks, map[string]any{"id": len(tasks), "op": op, "inputs": in, "outputs": out, "out_counter": c, "waits": ws, "params": params, "sm": nil, "est_bytes": 0, "est_flops": 0, "label": ""})
	}
	type ready struct{ c, k int }
	linear := func(x int, xr ready, name string, K, N int) (int, ready) {
		w := buf(name+".w", "WEIGHT", N, K)
		o := buf(name, "ACTIVATION", 1, N)
		c := ctr()
		n := 0
		for off := 0; off < N; off += nTile {
			add("GEMV_TILE", []int{x, w}, []int{o}, c, []wait{{xr.c, xr.k}}, map[string]any{"K": K, "N_tile": min(nTile, N-off), "n_off": off})
			n++
		}
		return o, ready{c, n}
	}
	single := func(op string, in []int, rs []ready, name string, shape []int, params map[string]any) (int, ready) {
		o := buf(name, "ACTIVATION", shape...)
		c := ctr()
		var ws []wait
		for _, r := range rs {
			ws = append(ws, wait{r.c, r.k})
		}
		add(op, in, []int{o}, c, ws, params)
		return o, ready{c, 1}
	}
	tok := buf("token", "IO_INPUT", 1)
	emb := buf("embed.w", "WEIGHT", 32000, hidden)
	x, xr := single("EMBED", []int{tok, emb}, nil, "h0", []int{1, hidden}, map[string]any{"hidden": hidden})
	for l := range layers {
		p := fmt.Sprintf("L%d.", l)
		nw := buf(p+"norm1.w", "WEIGHT", hidden)
		n1, n1r := single("RMSNORM", []int{x, nw}, []ready{xr}, p+"norm1", []int{1, hidden}, map[string]any{"eps": 1e-5, "hidden": hidden})
		q, qr := linear(n1, n1r, p+"q", hidden, hidden)
		k, kr := linear(n1, n1r, p+"k", hidden, kvDim)
		v, vr := linear(n1, n1r, p+"v", hidden, kvDim)
		kc := buf(p+"cache.k", "KV_CACHE", 2048, kvDim/64, 64)
		vc := buf(p+"cache.v", "KV_CACHE", 2048, kvDim/64, 64)
		ka, ca := ctr(), ctr()
		add("KV_APPEND", []int{k, kc}, []int{kc}, ka, []wait{{kr.c, kr.k}}, map[string]any{"pos": pos})
		add("KV_APPEND", []int{v, vc}, []int{vc}, ca, []wait{{vr.c, vr.k}}, map[string]any{"pos": pos})
		att, ar := single("ATTENTION_TILE", []int{q, kc, vc}, []ready{qr, {ka, 1}, {ca, 1}}, p+"attn", []int{1, hidden},
			map[string]any{"head_dim": 64, "kv_start": 0, "kv_len": pos + 1, "scale": 0.125, "n_heads": hidden / 64, "n_kv_heads": kvDim / 64})
		o, or := linear(att, ar, p+"o", hidden, hidden)
		h, hr := single("ADD", []int{x, o}, []ready{xr, or}, p+"h", []int{1, hidden}, nil)
		nw2 := buf(p+"norm2.w", "WEIGHT", hidden)
		n2, n2r := single("RMSNORM", []int{h, nw2}, []ready{hr}, p+"norm2", []int{1, hidden}, map[string]any{"eps": 1e-5, "hidden": hidden})
		g, gr := linear(n2, n2r, p+"gate", hidden, inter)
		u, ur := linear(n2, n2r, p+"up", hidden, inter)
		s, sr := single("SILU_MUL", []int{g, u}, []ready{gr, ur}, p+"act", []int{1, inter}, nil)
		d, dr := linear(s, sr, p+"down", inter, hidden)
		x, xr = single("ADD", []int{h, d}, []ready{hr, dr}, p+"out", []int{1, hidden}, nil)
	}
	data, _ := json.Marshal(map[string]any{
		"ir_version": "0.2.0", "abi_version": "0.2", "meta": map[string]any{"model": "llama-shaped"},
		"target":  map[string]any{"name": "h100", "num_sms": 132},
		"buffers": bufs, "counters": ctrs, "tasks": tasks, "pages": nil, "config": nil,
	})
	return data
}

// BenchmarkUnmarshal maps a TinyLlama-shaped decode lowering (22 layers,
// 64-column tiles): in one pass from bytes and streamed from an io.Reader,
// through the reference tree reader (an internal test, not here), and with
// encoding/json into any for scale.
func BenchmarkUnmarshal(b *testing.B) {
	// 22 layers of a TinyLlama-shaped decode step with 64-column tiles.
	data := llamaIR(22, 2048, 5632, 256, 64, 100)
	p, err := amk.Unmarshal(data)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		read func() error
	}{
		{"one-pass", func() error { _, err := amk.Unmarshal(data); return err }},
		{"stream", func() error { _, err := amk.Decode(bytes.NewReader(data)); return err }},
		{"encoding-json-any", func() error {
			var v any
			return json.Unmarshal(data, &v)
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportMetric(float64(len(p.Tasks)), "tasks")
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if err := c.read(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// e2Shapes are AMK toy lowerings of E2's sizes: layers, hidden size, tile
// width and SMs, from 23 to 606 tasks on 82 to 192 workers.
var e2Shapes = []struct{ layers, hidden, tile, sms int }{{1, 64, 256, 82}, {2, 128, 32, 132}, {3, 128, 8, 192}}

// BenchmarkE2 decodes and verifies AMK toy lowerings of E2's shape; an op
// is one program. The decode and verify sub-benchmarks give the shares.
func BenchmarkE2(b *testing.B) {
	ctx := context.Background()
	for _, sh := range e2Shapes {
		data := amk.E2Toy(sh.layers, sh.hidden, sh.tile, sh.sms)
		p, err := amk.Unmarshal(data)
		if err != nil {
			b.Fatal(err)
		}
		if r, err := verify.Run(ctx, p, verify.Config{}); err != nil || r.Verdict != verify.Safe {
			b.Fatalf("%v %v", r.Verdict, err)
		}
		name := fmt.Sprintf("tasks=%d/workers=%d", len(p.Tasks), sh.sms)
		for _, c := range []struct {
			name string
			run  func() error
		}{
			{"decode+verify", func() error {
				q, err := amk.Unmarshal(data)
				if err == nil {
					_, err = verify.Run(ctx, q, verify.Config{})
				}
				return err
			}},
			{"decode", func() error { _, err := amk.Unmarshal(data); return err }},
			{"verify", func() error { _, err := verify.Run(ctx, p, verify.Config{}); return err }},
		} {
			b.Run(name+"/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := c.run(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "programs/s")
			})
		}
	}
}

// e2Dir names a directory of AMK documents that BenchmarkE2Population
// takes instead of the generated population, such as the files AMK's own
// lowering writes (scripts/bench/amk_e2.py).
var e2Dir = flag.String("e2.dir", "", "directory of AMK documents for BenchmarkE2Population instead of the generated population")

// readDir returns the contents of the .json files in dir, in name order.
func readDir(b *testing.B, dir string) [][]byte {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(names) == 0 {
		b.Fatalf("no .json files in %s (%v)", dir, err)
	}
	docs := make([][]byte, len(names))
	for i, name := range names {
		if docs[i], err = os.ReadFile(name); err != nil {
			b.Fatal(err)
		}
	}
	return docs
}

// BenchmarkE2Population decodes and verifies the whole E2-shaped toy
// population (360 programs of 23 to 606 tasks on 82 to 192 workers); an op
// is one program, taken in turn. The decode sub-benchmark's MB/s is the
// reader's (the mean document size per op), beside encoding/json decoding
// the same documents into any.
func BenchmarkE2Population(b *testing.B) {
	_, docs := amk.E2Population()
	if *e2Dir != "" {
		docs = readDir(b, *e2Dir)
	}
	progs := make([]*schedule.Program, len(docs))
	size := 0
	for _, doc := range docs {
		size += len(doc)
	}
	for i, doc := range docs {
		p, err := amk.Unmarshal(doc)
		if err != nil {
			b.Fatal(err)
		}
		progs[i] = p
	}
	ctx := context.Background()
	for _, c := range []struct {
		name string
		run  func(i int) error
	}{
		{"decode+verify", func(i int) error {
			p, err := amk.Unmarshal(docs[i])
			if err == nil {
				_, err = verify.Run(ctx, p, verify.Config{})
			}
			return err
		}},
		{"decode", func(i int) error { _, err := amk.Unmarshal(docs[i]); return err }},
		{"verify", func(i int) error { _, err := verify.Run(ctx, progs[i], verify.Config{}); return err }},
		{"validate", func(i int) error { return progs[i].Validate() }},
		{"encoding-json-any", func(i int) error {
			var v any
			return json.Unmarshal(docs[i], &v)
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			if c.name == "decode" || c.name == "encoding-json-any" {
				b.SetBytes(int64(size / len(docs)))
			}
			c0, cpuOK := cpuTime()
			i := 0
			for b.Loop() {
				if err := c.run(i % len(docs)); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "programs/s")
			if c1, ok := cpuTime(); cpuOK && ok && c1 > c0 {
				// The work done, on a loaded machine, rather than the time
				// spent waiting for a core.
				b.ReportMetric(float64(c1-c0)/float64(b.N), "cpu-ns/op")
				b.ReportMetric(float64(b.N)/(c1-c0).Seconds(), "programs/cpu-s")
				if c.name == "decode" || c.name == "encoding-json-any" {
					b.ReportMetric(float64(b.N)*float64(size/len(docs))/1e6/(c1-c0).Seconds(), "cpu-MB/s")
				}
			}
		})
	}
}
