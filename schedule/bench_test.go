package schedule

import (
	"fmt"
	"testing"
)

// BenchmarkUnmarshal decodes a program of 100,000 tasks (22 MiB of JSON).
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
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Unmarshal(data); err != nil {
			b.Fatal(err)
		}
	}
}
