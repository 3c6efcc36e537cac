package schedule_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify"
)

// reportCPU reports the CPU time per op since c0 and the programs per CPU
// second (on a loaded machine, the work done rather than the time spent
// waiting for a core).
func reportCPU(b *testing.B, c0 time.Duration, ok bool) {
	if c1, ok1 := cpuTime(); ok && ok1 && b.N > 0 && c1 > c0 {
		b.ReportMetric(float64(c1-c0)/float64(b.N), "cpu-ns/op")
		b.ReportMetric(float64(b.N)/(c1-c0).Seconds(), "programs/cpu-s")
	}
}

// BenchmarkDecodeVerify decodes and verifies every example program of
// verify/testdata/codes (one per finding code, 2 to 5 tasks), one after
// the other; an op is one program. The verify sub-benchmark verifies the
// decoded programs only, for the share of decoding.
func BenchmarkDecodeVerify(b *testing.B) {
	files, err := filepath.Glob("../verify/testdata/codes/*.json")
	if err != nil || len(files) == 0 {
		b.Fatal("no example programs", err)
	}
	var docs [][]byte
	var progs []*schedule.Program
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		p, err := schedule.Unmarshal(data)
		if err != nil {
			b.Fatal(f, err)
		}
		docs, progs = append(docs, data), append(progs, p)
	}
	ctx := context.Background()
	b.Run("codes", func(b *testing.B) {
		b.ReportAllocs()
		c0, cpuOK := cpuTime()
		i := 0
		for b.Loop() {
			p, err := schedule.Unmarshal(docs[i%len(docs)])
			if err != nil {
				b.Fatal(err)
			}
			if _, err := verify.Run(ctx, p, verify.Config{}); err != nil {
				b.Fatal(err)
			}
			i++
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "programs/s")
		reportCPU(b, c0, cpuOK)
	})
	b.Run("codes/verify", func(b *testing.B) {
		b.ReportAllocs()
		c0, cpuOK := cpuTime()
		i := 0
		for b.Loop() {
			if _, err := verify.Run(ctx, progs[i%len(progs)], verify.Config{}); err != nil {
				b.Fatal(err)
			}
			i++
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "programs/s")
		reportCPU(b, c0, cpuOK)
	})
	b.Run("codes/decode", func(b *testing.B) {
		b.ReportAllocs()
		c0, cpuOK := cpuTime()
		i := 0
		for b.Loop() {
			if _, err := schedule.Unmarshal(docs[i%len(docs)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "programs/s")
		reportCPU(b, c0, cpuOK)
	})
	b.Run("codes/validate", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if err := progs[i%len(progs)].Validate(); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}
