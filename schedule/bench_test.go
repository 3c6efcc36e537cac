package schedule

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// benchProgram builds a program shaped like a Llama decode lowering: tasks
// on 128 workers, each waiting on the previous layer, with op params, a
// read of a weight slice and one of an activation, a 4-row tile write and
// a signal.
func benchProgram(b *testing.B, tasks int) []byte {
	const workers = 128
	bl := NewBuilder("bench", Launch{Target: "synthetic", SMs: workers, PerSM: 1, Workers: workers, Cooperative: true})
	w := bl.Buffer("w", KindWeight, 1<<20)
	x := bl.Buffer("x", KindScratch, 1<<20)
	c := bl.Counter("c")
	for i := range tasks {
		t := bl.Task(fmt.Sprintf("L%d.q.t%d", i/workers, i%workers)).On(i%workers).Op("gemv").Param("k", 5120).Param("layer", int64(i/workers)).Param("n", 32).Param("n_off", int64(i%workers*32))
		if i >= workers {
			t.Wait(c, uint64(i/workers*workers))
		}
		t.Read(w, uint64(i%1024*64), 64).Read(x, 0, 10240).WriteTile(x, uint64(i%workers*64), 64, 4, workers*64).Signal(c, 1)
	}
	p, err := bl.Build()
	if err != nil {
		b.Fatal(err)
	}
	data, err := Marshal(p)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkUnmarshal reads a program of 100,000 tasks (25 MB of JSON): in
// one pass from bytes and streamed from an io.Reader, through the
// reference tree reader, and with encoding/json into any for scale. Each
// reads and validates the whole program, but for encoding/json.
func BenchmarkUnmarshal(b *testing.B) {
	data := benchProgram(b, 100000)
	for _, c := range []struct {
		name string
		read func() error
	}{
		{"one-pass", func() error { _, err := Unmarshal(data); return err }},
		{"stream", func() error { _, err := Decode(bytes.NewReader(data)); return err }},
		{"tree", func() error { _, err := unmarshalTree(data); return err }},
		{"encoding-json-any", func() error {
			var v any
			return json.Unmarshal(data, &v)
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
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
