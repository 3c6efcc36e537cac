package verify

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/megaproof/megaproof/schedule"
)

// layered builds a synthetic Llama-like program: layers of `workers` tiled
// tasks, one per worker. Task j of layer l waits for all of layer l-1 (an
// all-join), and, in partial mode, for the first half of layer l-2 (a
// partial threshold), reads two neighbouring tiles of layer l-1's
// activations and its weight slice, and writes its own column tile of layer
// l's activations (a 2-D tile of a 4-row matrix).
func layered(tasks, workers int, partial bool) *schedule.Program {
	const tile, rows = 64, 4
	layers := (tasks + workers - 1) / workers
	b := schedule.NewBuilder(fmt.Sprintf("layered-%d", tasks), schedule.Launch{Target: "synthetic", SMs: workers, PerSM: 1, Workers: workers, Cooperative: true})
	stride := uint64(workers * tile)
	w := b.Buffer("weights", schedule.KindWeight, stride)
	var acts []schedule.BufferRef
	var done []schedule.CounterRef
	n := 0
	for l := 0; l < layers && n < tasks; l++ {
		kind := schedule.KindScratch
		if l == layers-1 && tasks%workers == 0 {
			kind = schedule.KindOutput
		}
		acts = append(acts, b.Buffer(fmt.Sprintf("act%d", l), kind, stride*rows))
		done = append(done, b.Counter(fmt.Sprintf("layer%d", l)))
		for j := 0; j < workers && n < tasks; j++ {
			t := b.Task(fmt.Sprintf("l%d.t%d", l, j)).On(j).Op("gemv")
			if l > 0 {
				t.Wait(done[l-1], uint64(workers))
				lo := max(j-1, 0)
				t.ReadTile(acts[l-1], uint64(lo*tile), uint64((min(j+1, workers-1)-lo+1)*tile), rows, stride)
			}
			if partial && l > 1 {
				t.Wait(done[l-2], uint64(workers/2))
			}
			t.Read(w, uint64(j*tile), tile)
			t.WriteTile(acts[l], uint64(j*tile), tile, rows, stride)
			t.Signal(done[l], 1)
			n++
		}
	}
	p, err := b.Build()
	if err != nil {
		panic(err)
	}
	return p
}

// BenchmarkDeadlock measures the deadlock and progress decision from a
// validated program: lowering to normal form and the greedy run.
func BenchmarkDeadlock(b *testing.B) {
	for _, c := range []struct{ tasks, workers int }{{10000, 132}, {100000, 132}, {1000000, 264}} {
		b.Run(fmt.Sprintf("tasks=%d/workers=%d", c.tasks, c.workers), func(b *testing.B) {
			p := layered(c.tasks, c.workers, true)
			runtime.GC()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				v := &verifier{f: lowerForm(p)}
				v.checkProgress()
				if len(v.findings) != 0 {
					b.Fatal("layered program deadlocks")
				}
			}
		})
	}
}

// BenchmarkVerify times verify.Run with every check on, then measures one
// more run's heap (see peakHeap).
func BenchmarkVerify(b *testing.B) {
	for _, c := range []struct{ tasks, workers int }{{10000, 132}, {100000, 132}, {1000000, 264}} {
		b.Run(fmt.Sprintf("tasks=%d/workers=%d", c.tasks, c.workers), func(b *testing.B) {
			p := layered(c.tasks, c.workers, true)
			runtime.GC()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r, err := Run(context.Background(), p, Config{})
				if err != nil || r.Verdict != Safe {
					b.Fatalf("%v %v %+v", err, r.Verdict, r.Findings)
				}
			}
			b.StopTimer()
			heap, live := peakHeap(func() { Run(context.Background(), p, Config{}) })
			b.ReportMetric(float64(heap)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(live)/(1<<20), "peak-live-MiB")
		})
	}
}

// peakHeap runs fn with the garbage collector set to collect at 10 % heap
// growth (GOGC=10) and samples the heap every 100 µs. heap is the largest
// growth of heap objects (live or not yet collected) over what was live
// before; live is the largest growth of the live heap as measured at the
// end of each collection. With the default GOGC=100, the runtime lets
// garbage grow to the size of the whole live heap, the program included,
// before collecting: the process footprint is then larger, but not what
// the analysis needs.
func peakHeap(fn func()) (heap, live uint64) {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	base, baseLive := s[0].Value.Uint64(), s[1].Value.Uint64()
	var peak, peakLive atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
		for {
			metrics.Read(s)
			peak.Store(max(peak.Load(), s[0].Value.Uint64()))
			peakLive.Store(max(peakLive.Load(), s[1].Value.Uint64()))
			select {
			case <-done:
				return
			case <-time.After(100 * time.Microsecond):
			}
		}
	}()
	fn()
	close(done)
	<-stopped
	return max(peak.Load(), base) - base, max(peakLive.Load(), baseLive) - baseLive
}

// Lowering halves of the task list concurrently must give exactly the
// sequential normal form.
func TestParallelLowering(t *testing.T) {
	p := layered(70000, 64, false)
	par := lowerForm(p)
	parallelLowering = false
	seq := lowerForm(p)
	parallelLowering = true
	if !reflect.DeepEqual(par, seq) {
		t.Fatal("parallel and sequential lowering differ")
	}
}

// BenchmarkAccumulator times verify.Run on the serialized accumulator
// (task i on worker i % 132 waits c >= i, writes one 64-byte state buffer
// and signals c): safe, with every pair of its tasks conflicting. Its cost
// must grow linearly in the tasks (ns/task flat).
func BenchmarkAccumulator(b *testing.B) {
	for _, n := range []int{2000, 20000, 200000} {
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) {
			p := accumulator(n)
			runtime.GC()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r, err := Run(context.Background(), p, Config{})
				if err != nil || r.Verdict != Safe {
					b.Fatalf("%v %v %+v", err, r.Verdict, r.Findings)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/task")
			heap, live := peakHeap(func() { Run(context.Background(), p, Config{}) })
			b.ReportMetric(float64(heap)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(live)/(1<<20), "peak-live-MiB")
		})
	}
}

// BenchmarkCancel measures how soon verify.Run returns after its
// context's 100 ms deadline passes: ms-past-deadline is the time from the
// deadline to the return, 0 for a run that finishes first (the programs
// large in rows and strides now take microseconds).
func BenchmarkCancel(b *testing.B) {
	const deadline = 100 * time.Millisecond
	for _, c := range []struct {
		name string
		p    func() *schedule.Program
	}{
		{"interleaved-rows=1e6", func() *schedule.Program { return interleaved(1_000_000, false) }},
		{"two-strides-rows=1e7", func() *schedule.Program { return twoStrides(false) }},
		{"dynamic-writers=200000", func() *schedule.Program { return dynamicWriters(200000) }},
		{"accumulator=200000", func() *schedule.Program { return accumulator(200000) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := c.p()
			runtime.GC()
			var past, worst time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ctx, cancel := context.WithTimeout(context.Background(), deadline)
				start := time.Now()
				_, err := Run(ctx, p, Config{})
				late := max(time.Since(start)-deadline, 0)
				cancel()
				if err != nil && ctx.Err() == nil {
					b.Fatal(err)
				}
				past += late
				worst = max(worst, late)
			}
			b.ReportMetric(float64(past.Microseconds())/1000/float64(b.N), "ms-past-deadline")
			b.ReportMetric(float64(worst.Microseconds())/1000, "worst-ms-past-deadline")
		})
	}
}
