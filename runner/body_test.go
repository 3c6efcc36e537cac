package runner

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/corpus"
	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify"
)

// bodyProg has ops the runner does not know, a nop with a footprint and a
// task with params.
func bodyProg(op func(i int) string) *schedule.Program {
	b := schedule.NewBuilder("body", schedule.Launch{SMs: 2, PerSM: 1, Workers: 2, Cooperative: true})
	in := b.Buffer("in", schedule.KindInput, 64)
	s := b.Buffer("s", schedule.KindScratch, 64)
	o := b.Buffer("o", schedule.KindOutput, 64)
	c := b.Counter("c")
	b.Task("gemv").On(0).Op(op(0)).Read(in, 0, 64).Write(s, 0, 32).Signal(c, 1)
	b.Task("rmsnorm").On(0).Op(op(1)).Param("seed", 9).Param("k", 5).Read(s, 0, 32).Write(s, 32, 32).Signal(c, 1)
	b.Task("nop").On(1).Op(op(2)).Wait(c, 2).Read(s, 0, 64).Write(o, 0, 16)
	b.Task("inplace").On(1).Op(op(3)).Read(o, 0, 16).Write(o, 0, 64)
	return must(b.Build())
}

// Options.Body = "mix" executes every body as mix, on the CPU exactly as a
// program whose every Task.Op is "mix" would.
func TestBodyOverrideMix(t *testing.T) {
	ops := []string{"matmul", "layernorm", "", "softmax"}
	p := bodyProg(func(i int) string { return ops[i] })
	if _, err := Encode(p); err == nil || !strings.Contains(err.Error(), "unknown op") {
		t.Fatalf("Encode without override: err = %v, want unknown op", err)
	}
	if _, err := Reference(p); err == nil {
		t.Fatal("Reference without override accepted unknown ops")
	}
	mixed := bodyProg(func(int) string { return "mix" })
	for _, poison := range []byte{0, 0xA5} {
		o := Options{Body: "mix", Poison: poison}
		got, err := ReferenceWith(p, o)
		if err != nil {
			t.Fatal(err)
		}
		want, err := ReferencePoisoned(mixed, poison)
		if err != nil {
			t.Fatal(err)
		}
		if err := Mismatch(want, got); err != nil {
			t.Errorf("poison %#x: %v", poison, err)
		}
		// The hand-computed first body: mix of the 64 input bytes with seed 0.
		var h uint32
		for j := 0; j < 64; j++ {
			h += mixTerm(uint64(j), initByte(0, uint64(j)))
		}
		for i := 0; i < 32; i++ {
			if w := byte(mix32(h + uint32(i)*0x9E3779B9)); got["s"][i] != w {
				t.Fatalf("s[%d] = %#x, want %#x", i, got["s"][i], w)
			}
		}
	}
	// The encoding carries the mix code in the task table and in every
	// body's begin instruction, and the same streams as without override.
	e, err := EncodeWith(p, Options{Body: "mix"})
	if err != nil {
		t.Fatal(err)
	}
	em, err := Encode(mixed)
	if err != nil {
		t.Fatal(err)
	}
	for i := range p.Tasks {
		if e.tasks[taskWords*i] != opMix {
			t.Errorf("task %d encoded with op %d, want mix", i, e.tasks[taskWords*i])
		}
	}
	eq := func(a, b []uint64) bool { return len(a) == len(b) && string(u64bytes(a)) == string(u64bytes(b)) }
	if !eq(e.ins, em.ins) || !eq(e.tasks, em.tasks) || !eq(e.accs, em.accs) {
		t.Error("override encoding differs from the all-mix program's")
	}
	if e.HeapBytes != em.HeapBytes || !bytes.Equal(e.Image(0xA5), em.Image(0xA5)) {
		t.Error("heap layout differs")
	}
	// Default behaviour: without Body, Task.Op runs.
	known := bodyProg(func(i int) string { return []string{"fill", "copy", "nop", "mix"}[i] })
	a, err := Reference(known)
	if err != nil {
		t.Fatal(err)
	}
	b2, err := ReferenceWith(known, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := Mismatch(a, b2); err != nil {
		t.Error(err)
	}
	c, _ := ReferenceWith(known, Options{Body: "mix"})
	if Mismatch(a, c) == nil {
		t.Error("Body mix gave the same bytes as fill/copy/nop/mix")
	}
}

func u64bytes(xs []uint64) []byte {
	out := make([]byte, 0, 8*len(xs))
	for _, x := range xs {
		for k := 0; k < 8; k++ {
			out = append(out, byte(x>>(8*k)))
		}
	}
	return out
}

func TestBodyOverrideRejects(t *testing.T) {
	p := bodyProg(func(int) string { return "mix" })
	if _, err := EncodeWith(p, Options{Body: "gemv"}); err == nil || !strings.Contains(err.Error(), "Options.Body") {
		t.Errorf("unknown override: err = %v", err)
	}
	// copy over every body: the in-place task writes bytes it reads.
	if _, err := ReferenceWith(p, Options{Body: "copy"}); err == nil || !strings.Contains(err.Error(), `op "copy" writes bytes it reads`) {
		t.Errorf("copy override: err = %v", err)
	}
}

// Corpus seeds use llamagen/progen/proto ops the runner does not know; with
// Body "mix" the first seed of every kind encodes, and the greedy reference
// of the first one verify calls safe completes (progen seeds may be unsafe).
func TestBodyOverrideCorpusSeeds(t *testing.T) {
	encoded, referenced := map[string]bool{}, map[string]bool{}
	for _, s := range corpus.Seeds() {
		kind, _, _ := strings.Cut(s.ID, "-")
		if s.Big || referenced[kind] {
			continue
		}
		p, err := corpus.SeedProgram(s.Recipe)
		if err != nil {
			t.Fatalf("%s: %v", s.ID, err)
		}
		if !encoded[kind] {
			encoded[kind] = true
			if _, err := EncodeWith(p, Options{Body: "mix"}); err != nil {
				t.Errorf("%s (%s): %v", s.ID, s.Recipe, err)
			}
		}
		if r, err := verify.Run(context.Background(), p, verify.Config{}); err != nil || r.Verdict != verify.Safe {
			continue
		}
		referenced[kind] = true
		if _, err := ReferenceWith(p, Options{Body: "mix", Poison: 0xA5}); err != nil {
			t.Errorf("%s (%s): %v", s.ID, s.Recipe, err)
		}
	}
	if len(encoded) < 4 || len(referenced) < 4 {
		t.Errorf("seed kinds encoded %v, referenced %v", encoded, referenced)
	}
}

// mixat writes the byte at heap address a as mix32(h + a·0x9E3779B9), so
// overlapping write accesses of one task agree; mix keys by stream index
// and they do not.
func TestMixAtOverlappingWrites(t *testing.T) {
	build := func(op string) *schedule.Program {
		b := schedule.NewBuilder("ow", schedule.Launch{SMs: 1, PerSM: 1, Workers: 1})
		in := b.Buffer("in", schedule.KindInput, 16)
		o := b.Buffer("o", schedule.KindOutput, 24)
		b.Task("w").On(0).Op(op).Param("seed", 4).Read(in, 0, 16).Write(o, 8, 8).Write(o, 0, 16).ReadTile(o, 0, 4, 3, 2).Write(o, 16, 8)
		return must(b.Build())
	}
	p := build("mixat")
	e, err := Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Reference(p)
	if err != nil {
		t.Fatal(err)
	}
	h := uint32(4)
	for j := 0; j < 16; j++ {
		h += mixTerm(uint64(j), initByte(0, uint64(j)))
	}
	// The tile read of o comes after the 16 input bytes in the read stream
	// and reads o's bytes before the task writes them (poison 0).
	for j := 16; j < 16+12; j++ { // 3 rows of 4 bytes, stride 2
		h += mixTerm(uint64(j), 0)
	}
	base := e.BufferAddr[1]
	for i := uint64(0); i < 24; i++ {
		if w := byte(mix32(h + uint32(base+i)*0x9E3779B9)); got["o"][i] != w {
			t.Fatalf("o[%d] = %#x, want %#x", i, got["o"][i], w)
		}
	}
	// The same through the override, and mix really differs on the doubly
	// written bytes (so only mixat is defined there).
	viaBody, err := ReferenceWith(build("gemv"), Options{Body: "mixat"})
	if err != nil {
		t.Fatal(err)
	}
	if err := Mismatch(got, viaBody); err != nil {
		t.Error(err)
	}
	if !selfOverlaps(spans(e.bodies[0].writes)) || selfOverlaps([]span{{0, 4}, {4, 8}}) {
		t.Error("selfOverlaps")
	}
	mx, err := ReferenceWith(build("gemv"), Options{Body: "mix"})
	if err != nil {
		t.Fatal(err)
	}
	first := byte(mix32(h + 0*0x9E3779B9)) // stream index 0 writes o[8] first
	if mx["o"][8] == first {
		t.Error("mix kept the first write of o[8]; the later access should win on the CPU")
	}
}
