package runner

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/schedule"
)

func TestReferenceHandoff(t *testing.T) {
	got, err := Reference(progHandoff())
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, 256)
	for i := range want {
		want[i] = byte(mix32(7 + uint32(i)*0x9E3779B9))
	}
	if !bytes.Equal(got["x"], want) || !bytes.Equal(got["y"], want) {
		t.Fatalf("x=%x\ny=%x\nwant %x", got["x"][:8], got["y"][:8], want[:8])
	}
}

func TestReferenceOps(t *testing.T) {
	b := schedule.NewBuilder("ops", schedule.Launch{SMs: 1, PerSM: 1, Workers: 1})
	in := b.Buffer("in", schedule.KindInput, 8)
	o := b.Buffer("o", schedule.KindOutput, 40)
	b.Task("copy").On(0).Op("copy").Read(in, 0, 4).Write(o, 0, 8)
	b.Task("scale").On(0).Op("scale").Param("k", 2).Param("c", 5).Read(in, 0, 8).Write(o, 8, 8)
	b.Task("add").On(0).Op("add8").Read(in, 0, 8).Read(in, 4, 2).Write(o, 16, 8)
	b.Task("mix").On(0).Op("mix").Param("seed", 1).Read(in, 0, 8).Write(o, 24, 8)
	b.Task("tile").On(0).Op("copy").ReadTile(in, 1, 2, 2, 4).Write(o, 32, 8)
	p := must(b.Build())
	got, err := Reference(p)
	if err != nil {
		t.Fatal(err)
	}
	src := got["in"]
	for i := 0; i < 8; i++ {
		if initByte(0, uint64(i)) != src[i] {
			t.Fatalf("input byte %d = %#x, want the init pattern", i, src[i])
		}
	}
	o8 := got["o"]
	var h uint32 = 1
	for j := 0; j < 8; j++ {
		h += mixTerm(uint64(j), src[j])
	}
	tile := []byte{src[1], src[2], src[5], src[6]}
	for i := 0; i < 8; i++ {
		checks := []struct {
			name      string
			got, want byte
		}{
			{"copy", o8[i], src[i%4]},
			{"scale", o8[8+i], src[i]*2 + 5},
			{"add", o8[16+i], src[i] + src[4+i%2]},
			{"mix", o8[24+i], byte(mix32(h + uint32(i)*0x9E3779B9))},
			{"tile", o8[32+i], tile[i%4]},
		}
		for _, c := range checks {
			if c.got != c.want {
				t.Errorf("%s byte %d = %#x, want %#x", c.name, i, c.got, c.want)
			}
		}
	}
}

// A mix output changes when any single byte it read changes.
func TestMixSeesEveryByte(t *testing.T) {
	heap := make([]byte, 64)
	for i := range heap {
		heap[i] = byte(i * 7)
	}
	bd := body{op: opMix, seed: 3, reads: []access{{0, 32, 1, 0}}, writes: []access{{32, 8, 1, 0}}}
	bd.run(heap)
	base := append([]byte(nil), heap[32:40]...)
	for j := 0; j < 32; j++ {
		h := append([]byte(nil), heap...)
		h[j]++
		bd.run(h)
		if bytes.Equal(h[32:40], base) {
			t.Fatalf("changing read byte %d did not change the mix output", j)
		}
	}
}

func TestReferenceStuck(t *testing.T) {
	b := schedule.NewBuilder("stuck", schedule.Launch{SMs: 2, PerSM: 1, Workers: 2})
	c := b.Counter("c")
	b.Task("a").On(0).Wait(c, 2)
	b.Task("b").On(1).Signal(c, 1)
	_, err := Reference(must(b.Build()))
	if err == nil || !strings.Contains(err.Error(), "wait c >= 2") {
		t.Fatalf("err = %v, want a stuck report naming the wait", err)
	}
}

func TestEncodeRejects(t *testing.T) {
	b := schedule.NewBuilder("bad", schedule.Launch{SMs: 1, PerSM: 1, Workers: 1})
	x := b.Buffer("x", schedule.KindScratch, 16)
	b.Task("inplace").On(0).Op("copy").Read(x, 0, 8).Write(x, 4, 8)
	if _, err := Encode(must(b.Build())); err == nil || !strings.Contains(err.Error(), "writes bytes it reads") {
		t.Errorf("overlapping copy: err = %v", err)
	}
	b = schedule.NewBuilder("bad2", schedule.Launch{SMs: 1, PerSM: 1, Workers: 1})
	x = b.Buffer("x", schedule.KindScratch, 16)
	b.Task("t").On(0).Op("gemm").Write(x, 0, 8)
	if _, err := Encode(must(b.Build())); err == nil || !strings.Contains(err.Error(), "unknown op") {
		t.Errorf("unknown op: err = %v", err)
	}
}

func TestEncodeLayout(t *testing.T) {
	p := progArena()
	e, err := Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	if e.BufferAddr[1] != e.BufferAddr[0]+128 {
		t.Errorf("aliasing buffers at %d and %d, want 128 apart", e.BufferAddr[0], e.BufferAddr[1])
	}
	if e.Threads != 2 || e.Workers != 2 {
		t.Errorf("threads %d workers %d", e.Threads, e.Workers)
	}
	// Every instruction round-trips its kind, object and value.
	f := schedule.Lower(p)
	k := 0
	for th, thr := range f.Threads {
		if int(e.streams[th]) != k {
			t.Errorf("thread %d starts at %d, want %d", th, e.streams[th], k)
		}
		for j, op := range thr.Ops {
			if op.Kind == schedule.OpEnd {
				continue
			}
			if int(e.step[k]) != j {
				t.Errorf("instruction %d maps to step %d, want %d", k, e.step[k], j)
			}
			w0, w1 := e.ins[2*k], e.ins[2*k+1]
			k++
			if int(w0&0xff) != int(op.Kind) || (op.Kind != schedule.OpBegin && w1 != op.Value) {
				t.Errorf("thread %d op %d: encoded %#x/%d for %v", th, j, w0, w1, op)
			}
		}
	}
}

func TestSafeProgramsReference(t *testing.T) {
	for _, p := range safePrograms(testing.Short()) {
		if _, err := Reference(p); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
	}
}

func TestDynamicGuards(t *testing.T) {
	c := layered{name: "d", workers: 3, layers: 3, width: 4, tile: 8, sync: "deps", dynamic: 1, seed: 1, maxReads: 2}
	e, err := Encode(c.build())
	if err != nil {
		t.Fatal(err)
	}
	if e.Threads != 3+12 || e.BlockingDynamic() != 0 {
		t.Errorf("threads %d, blocking dynamic %d", e.Threads, e.BlockingDynamic())
	}
}

func TestNoDeviceIsClear(t *testing.T) {
	d, err := Open()
	if err != nil {
		if !errors.Is(err, ErrNoDevice) && !errors.Is(err, ErrNoCGO) {
			t.Fatalf("Open error %v is neither ErrNoDevice nor ErrNoCGO", err)
		}
		return
	}
	d.Close()
}

func TestDeadlockErrorIs(t *testing.T) {
	var err error = &DeadlockError{Program: "x"}
	if !errors.Is(err, ErrDeadlock) {
		t.Fatal("DeadlockError does not match ErrDeadlock")
	}
}
