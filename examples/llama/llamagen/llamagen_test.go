package llamagen_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/megaproof/megaproof/examples/llama/llamagen"
	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify"
)

// run verifies p, with the verifier's sanity checks (every witness
// replays) when sanity is set.
func run(t *testing.T, p *schedule.Program, sanity bool) *verify.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r, err := verify.Run(ctx, p, verify.Config{Sanity: sanity})
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	return r
}

func configs(t *testing.T) []llamagen.Named {
	var out []llamagen.Named
	for _, n := range llamagen.Configs() {
		if n.Big && testing.Short() {
			continue
		}
		out = append(out, n)
	}
	return out
}

func TestConfigsVerifySafe(t *testing.T) {
	sawLarge := false
	for _, n := range configs(t) {
		t.Run(n.Name, func(t *testing.T) {
			t0 := time.Now()
			p, err := llamagen.Generate(n.Config)
			if err != nil {
				t.Fatal(err)
			}
			gen := time.Since(t0)
			if len(p.Tasks) >= 10000 {
				sawLarge = true
			}
			t0 = time.Now()
			r := run(t, p, len(p.Tasks) < 20000)
			t.Logf("%d tasks, generated in %v, verified %v in %v", len(p.Tasks), gen, r.Verdict, time.Since(t0))
			if r.Verdict != verify.Safe {
				t.Fatalf("verdict %v, want safe: %v", r.Verdict, r.Err())
			}
		})
	}
	if !sawLarge {
		t.Error("no configuration of at least 10^4 tasks was verified")
	}
}

// TestGreedyRunFinishes executes every table configuration once with
// schedule.Machine, always stepping the lowest enabled thread, and requires
// every thread to finish: the queues are deadlock-free in at least this
// execution, whatever the verifier says.
func TestGreedyRunFinishes(t *testing.T) {
	for _, n := range configs(t) {
		if n.Big {
			continue
		}
		t.Run(n.Name, func(t *testing.T) {
			p, err := llamagen.Generate(n.Config)
			if err != nil {
				t.Fatal(err)
			}
			if err := greedy(p); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func greedy(p *schedule.Program) error {
	m, err := schedule.NewMachine(p)
	if err != nil {
		return err
	}
	f := m.Form()
	for {
		moved := false
		for th := range f.Threads {
			for !m.Finished(th) && m.Enabled(th) == nil {
				if err := m.Step(schedule.Event{Thread: int32(th), Step: m.Pos[th]}); err != nil {
					return err
				}
				moved = true
			}
		}
		if m.AllFinished() {
			return nil
		}
		if !moved {
			for th := range f.Threads {
				if !m.Finished(th) {
					return fmt.Errorf("stuck: %v", m.Enabled(th))
				}
			}
		}
	}
}

// TestFootprints checks the byte-precise footprints of one layer of a
// batched, split-KV configuration against the model's shapes.
func TestFootprints(t *testing.T) {
	m, _ := llamagen.LookupModel("llama-3.2-1b")
	tg, _ := llamagen.LookupTarget("h200")
	cfg := llamagen.Config{Model: m, Target: tg, Tile: 96, Batch: 3, Pos: 700, MaxSeq: 1024, Splits: 4}
	p, err := llamagen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	buf := map[string]int32{}
	for i, b := range p.Buffers {
		buf[b.Name] = int32(i)
	}
	task := map[string]*schedule.Task{}
	for i := range p.Tasks {
		task[p.Tasks[i].Name] = &p.Tasks[i]
	}
	const e = 2
	qw := m.Heads * m.HeadDim
	// Tiles of q partition the columns of the [3, qw] matrix exactly.
	covered := 0
	for j := 0; ; j++ {
		tk := task[fmt.Sprintf("L1.q.t%d", j)]
		if tk == nil {
			break
		}
		w := tk.Writes[0]
		want := schedule.Access{Buffer: buf["L1.q"], Offset: int64(covered * e), Length: uint64(min(96, qw-covered) * e), Rows: 3, Stride: uint64(qw * e)}
		if w != want {
			t.Fatalf("L1.q.t%d writes %+v, want %+v", j, w, want)
		}
		covered += min(96, qw-covered)
	}
	if covered != qw {
		t.Fatalf("q tiles cover %d columns of %d", covered, qw)
	}
	plane := uint64(1024 * m.HeadDim * e)
	// KV append writes row 700 of kv head 5 in each of the 3 sequences.
	kv := task["L1.kv.g5"]
	wantKV := schedule.Access{Buffer: buf["L1.kcache"], Offset: int64(5*plane + 700*uint64(m.HeadDim*e)), Length: uint64(m.HeadDim * e), Rows: 3, Stride: uint64(m.KVHeads) * plane}
	if kv.Writes[0] != wantKV {
		t.Fatalf("kv append writes %+v, want %+v", kv.Writes[0], wantKV)
	}
	// The split-KV chunks of head 21 (kv head 5) read rows [0, 700] once.
	rows, waitsAppend := 0, 0
	for s := 0; s < 4; s++ {
		a := task[fmt.Sprintf("L1.attn.h21.s%d", s)]
		r := a.Reads[1]
		if r.Buffer != buf["L1.kcache"] || uint64(r.Offset) != 5*plane+uint64(rows*m.HeadDim*e) || r.Rows != 3 {
			t.Fatalf("chunk %d reads %+v", s, r)
		}
		rows += int(r.Length) / (m.HeadDim * e)
		if len(a.Before) == 2 {
			waitsAppend++
		}
	}
	if rows != 701 {
		t.Fatalf("chunks read %d rows, want 701", rows)
	}
	if waitsAppend != 1 {
		t.Fatalf("%d chunks wait for the append, want only the one holding row pos", waitsAppend)
	}
	if k := p.Buffers[buf["L1.kcache"]].Kind; k != schedule.KindState {
		t.Fatalf("kv cache kind %v", k)
	}
	if k := p.Buffers[buf["logits"]].Kind; k != schedule.KindOutput {
		t.Fatalf("logits kind %v", k)
	}
}

// TestStaticQueuesTopological checks that in every static configuration,
// each wait's signalers that share the waiter's worker come earlier in its
// queue (a queue never waits on its own future).
func TestStaticQueuesTopological(t *testing.T) {
	for _, n := range configs(t) {
		if n.Config.Strategy == llamagen.Dynamic || n.Big {
			continue
		}
		p, err := llamagen.Generate(n.Config)
		if err != nil {
			t.Fatal(err)
		}
		first := map[[2]int32]int{} // (worker, counter) -> first signaling task
		for i, tk := range p.Tasks {
			for _, s := range tk.Before {
				if s.Kind != schedule.Wait {
					continue
				}
				if j, ok := first[[2]int32{tk.Worker, s.Object}]; ok && j > i {
					t.Fatalf("%s: %s waits on a counter its own later task %s signals", n.Name, tk.Name, p.Tasks[j].Name)
				}
			}
			for _, s := range tk.After {
				if s.Kind == schedule.Signal {
					if _, ok := first[[2]int32{tk.Worker, s.Object}]; !ok {
						first[[2]int32{tk.Worker, s.Object}] = i
					}
				}
			}
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	p, err := llamagen.Generate(llamagen.Configs()[1].Config)
	if err != nil {
		t.Fatal(err)
	}
	a, err := schedule.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	q, err := schedule.Unmarshal(a)
	if err != nil {
		t.Fatal(err)
	}
	b, err := schedule.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("JSON does not round-trip")
	}
}

func TestConfigErrors(t *testing.T) {
	m, _ := llamagen.LookupModel("smollm2-135m")
	tg, _ := llamagen.LookupTarget("l4")
	for _, c := range []llamagen.Config{
		{Model: m, Target: tg, Tile: -1},
		{Model: m, Target: tg, Pos: 5000, MaxSeq: 4096},
		{Model: llamagen.Model{Name: "bad", Hidden: 8, Intermediate: 8, Layers: 1, Heads: 3, KVHeads: 2, HeadDim: 4, Vocab: 8}, Target: tg},
		{Model: m},
	} {
		if _, err := llamagen.Generate(c); err == nil {
			t.Errorf("Generate(%+v) succeeded", c)
		}
	}
	if _, err := llamagen.LookupModel("gpt-5"); err == nil {
		t.Error("LookupModel(gpt-5) succeeded")
	}
	if _, err := llamagen.ParseStrategy("random"); err == nil {
		t.Error("ParseStrategy(random) succeeded")
	}
}

func TestDefault(t *testing.T) {
	p, err := llamagen.Default()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(p.Tasks); n < 1000 || n > 10000 {
		t.Fatalf("default has %d tasks", n)
	}
}

// twinCases are the configurations the unsafe twins are made from: one per
// counter-based strategy, with and without epochs and pages.
var twinCases = []string{"smollm2-h100-rr", "smollm2-l4-epoch-split3-t96", "tinyllama-l4-dynamic", "llama32-1b-h200-epoch-pages2"}

func TestTwinsRejected(t *testing.T) {
	byName := map[string]llamagen.Config{}
	for _, n := range llamagen.Configs() {
		byName[n.Name] = n.Config
	}
	for _, name := range twinCases {
		cfg := byName[name]
		cfg.Model.Layers = 4 // the faults edit the middle layer; four layers keep the test fast
		p, err := llamagen.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range llamagen.Faults() {
			t.Run(name+"/"+f.String(), func(t *testing.T) {
				q, err := llamagen.Twin(p, f)
				if err != nil {
					t.Fatal(err)
				}
				if slices.Equal(mustJSON(t, p), mustJSON(t, q)) {
					t.Fatal("twin equals its original")
				}
				r := run(t, q, true)
				if r.Verdict != verify.Unsafe {
					t.Fatalf("verdict %v, want unsafe (%v)", r.Verdict, f.Codes())
				}
				var codes []string
				hit := false
				for _, fd := range r.Findings {
					codes = append(codes, fd.Code)
					if slices.Contains(f.Codes(), fd.Code) {
						hit = true
					}
					if len(fd.Witness) > 0 {
						if err := schedule.CheckWitness(q, fd.Code, fd.Tasks, fd.Witness); err != nil {
							t.Errorf("%s witness does not replay: %v", fd.Code, err)
						}
					}
				}
				if !hit {
					t.Fatalf("codes %v, want one of %v", codes, f.Codes())
				}
			})
		}
	}
	// The original is untouched.
	p, _ := llamagen.Generate(byName[twinCases[0]])
	if _, err := llamagen.Twin(p, llamagen.DropWait); err != nil {
		t.Fatal(err)
	}
	if err := greedy(p); err != nil {
		t.Fatalf("original after Twin: %v", err)
	}
}

func TestTwinNeedsCounters(t *testing.T) {
	p, err := llamagen.Generate(llamagen.Configs()[5].Config) // barrier
	if err != nil {
		t.Fatal(err)
	}
	if _, err := llamagen.Twin(p, llamagen.DropWait); err == nil {
		t.Fatal("DropWait on a barrier schedule succeeded")
	}
	q, err := llamagen.Twin(p, llamagen.ExtraWorker)
	if err != nil {
		t.Fatal(err)
	}
	if q.Launch.Workers != q.Launch.Capacity()+1 {
		t.Fatalf("extra worker: %d workers, capacity %d", q.Launch.Workers, q.Launch.Capacity())
	}
}

func mustJSON(t *testing.T, p *schedule.Program) []byte {
	t.Helper()
	b, err := schedule.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Numeric only adds task params: with the params removed, the program is
// the one generated without it (same synchronization and footprints), for
// every named configuration that is not Big. A split-KV window clipped to
// one split keeps its partial buffers, which is the one other difference.
func TestNumericAddsParamsOnly(t *testing.T) {
	for i, n := range llamagen.Configs() {
		if n.Big || testing.Short() && i >= 3 {
			continue
		}
		plain, err := llamagen.Generate(n.Config)
		if err != nil {
			t.Fatal(err)
		}
		c := n.Config
		c.Numeric = true
		num, err := llamagen.Generate(c)
		if err != nil {
			t.Fatal(err)
		}
		added := 0
		for i := range num.Tasks {
			for _, pr := range slices.Clone(num.Tasks[i].Params) {
				if _, ok := plain.Tasks[i].Params.Get(pr.Key); !ok {
					num.Tasks[i].Params.Delete(pr.Key)
					added++
				}
			}
			if len(num.Tasks[i].Params) == 0 {
				num.Tasks[i].Params = nil
			}
		}
		if added == 0 {
			t.Errorf("%s: Numeric added no params", n.Name)
		}
		var a, b bytes.Buffer
		if err := schedule.Encode(&a, plain); err != nil {
			t.Fatal(err)
		}
		if err := schedule.Encode(&b, num); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%s: the numeric program without its params differs from the plain one", n.Name)
		}
	}
}
