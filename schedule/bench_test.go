package schedule

import (
	"fmt"
	"testing"
)

// BenchmarkUnmarshal decodes a program of 100,000 tasks (about 17 MB of
// JSON) whole, and parses its tree directly and through encoding/json's
// tokens.
func BenchmarkUnmarshal(b *testing.B) {
	const tasks, workers = 100000, 128
	bl := NewBuilder("bench", Launch{Target: "synthetic", SMs: workers, PerSM: 1, Workers: workers, Cooperative: true})
	w := bl.Buffer("w", KindWeight, 1<<20)
	x := bl.Buffer("x", KindScratch, 1<<20)
	c := bl.Counter("c")
	for i := range tasks {
		t := bl.Task(fmt.Sprintf("t%d", i)).On(i % workers).Op("gemv")
		if i >= workers {
			t.Wait(c, uint64(i/workers*workers))
		}
		t.Read(w, uint64(i%1024*64), 64).WriteTile(x, uint64(i%workers*64), 64, 4, workers*64).Signal(c, 1)
	}
	p, err := bl.Build()
	if err != nil {
		b.Fatal(err)
	}
	data, err := Marshal(p)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		fn   func() error
	}{
		{"whole", func() error { _, err := Unmarshal(data); return err }},
		{"tree=direct", func() error {
			if _, d := parseTree(data); d != nil {
				return fmt.Errorf("%s", d.Message)
			}
			return nil
		}},
		{"tree=tokens", func() error {
			if _, d := parseTokens(data); d != nil {
				return fmt.Errorf("%s", d.Message)
			}
			return nil
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if err := c.fn(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
