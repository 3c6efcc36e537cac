package schedule

import (
	"math/rand/v2"
	"testing"
)

// TestValidateShortcuts checks the steps and accesses that validateTask
// accepts without the full checks: each one plainStep or plainAccess
// passes gets no diagnostic from validateStep or validateAccess, on random
// steps and accesses whose fields sit around every bound those checks
// test. It also requires that the shortcuts take the usual cases, so that
// they cannot pass by never applying.
func TestValidateShortcuts(t *testing.T) {
	p := &Program{
		Buffers:    []Buffer{{Name: "a", Size: 64}, {Name: "b", Size: 1 << 20}},
		Counters:   []Counter{{Name: "c32", Width: 32}, {Name: "c64", Width: 64}, {Name: "bad", Width: 16}},
		Barriers:   []Barrier{{Name: "bar", Parties: 2}},
		Semaphores: []Semaphore{{Name: "s", Tokens: 1}},
	}
	r := rand.New(rand.NewPCG(1, 2))
	pick := func(vs ...uint64) uint64 { return vs[r.IntN(len(vs))] }
	big := []uint64{0, 1, 2, 7, 1<<32 - 1, 1 << 32, 1<<32 + 1, maxExtent - 1, maxExtent, maxExtent + 1, 1<<63 - 1, 1 << 63, ^uint64(0)}
	objects := []int32{-1, 0, 1, 2, 3, 1 << 30}
	var steps, accesses int
	for range 200000 {
		s := Step{
			Kind:    StepKind(r.IntN(int(Fence) + 2)),
			Object:  objects[r.IntN(len(objects))],
			Value:   pick(big...),
			Relaxed: r.IntN(2) == 0,
			Scope:   Scope(r.IntN(int(ScopeSys) + 2)),
		}
		if p.plainStep(&s) {
			steps++
			var ds diags
			p.validateStep(&ds, loc{0, "before", 0}, s)
			if ds.n != 0 {
				t.Fatalf("plainStep(%+v), but validateStep says %v", s, ds.list)
			}
		}
		a := Access{
			Buffer: objects[r.IntN(len(objects))],
			Offset: int64(pick(big...)),
			Length: pick(big...),
			Rows:   pick(0, 1, 2, maxExtent, maxExtent+1),
			Stride: pick(0, 1, 64, maxExtent+1),
		}
		if r.IntN(2) == 0 {
			a.Offset = -a.Offset
		}
		if p.plainAccess(&a) {
			accesses++
			var ds diags
			p.validateAccess(&ds, loc{0, "reads", 0}, a)
			if ds.n != 0 {
				t.Fatalf("plainAccess(%+v), but validateAccess says %v", a, ds.list)
			}
		}
	}
	if steps < 1000 || accesses < 1000 {
		t.Fatalf("the shortcuts took %d steps and %d accesses of 200,000", steps, accesses)
	}
	for _, s := range []Step{{Kind: Wait, Object: 0, Value: 3}, {Kind: Signal, Object: 1, Value: 1}, {Kind: Wait, Object: 1, Value: 1 << 40, Relaxed: true}} {
		if !p.plainStep(&s) {
			t.Errorf("plainStep(%+v) is false", s)
		}
	}
	for _, a := range []Access{{Buffer: 0, Length: 64}, {Buffer: 1, Offset: -8, Length: 8, Rows: 1}} {
		if !p.plainAccess(&a) {
			t.Errorf("plainAccess(%+v) is false", a)
		}
	}
}
