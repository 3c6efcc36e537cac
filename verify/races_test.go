package verify

import (
	"testing"

	"github.com/megaproof/megaproof/schedule"
)

// two returns a builder for two cooperative workers.
func two() *tb { return schedule.NewBuilder("t", launch(2)) }

func TestThresholdBlindCases(t *testing.T) {
	runTable(t, []row{
		{"threshold-1-cycle-satisfied", "A waits c>=1 (producers B and C), B waits on A, but C alone satisfies A", func() *schedule.Program {
			b := schedule.NewBuilder("t", launch(3))
			c, d := b.Counter("c"), b.Counter("d")
			b.Task("A").On(0).Wait(c, 1).Signal(d, 1)
			b.Task("B").On(1).Wait(d, 1).Signal(c, 1)
			b.Task("C").On(2).Signal(c, 1)
			return mustBuild(b)
		}, nil},
		{"threshold-2-cycle", "A now needs both B and C, and B needs A", func() *schedule.Program {
			b := schedule.NewBuilder("t", launch(3))
			c, d := b.Counter("c"), b.Counter("d")
			b.Task("A").On(0).Wait(c, 2).Signal(d, 1)
			b.Task("B").On(1).Wait(d, 1).Signal(c, 1)
			b.Task("C").On(2).Signal(c, 1)
			return mustBuild(b)
		}, []string{CodeDeadlockCycle}},
	})
}

func TestOccupancyAndOverflowTable(t *testing.T) {
	nonCoop := func(waiterFirst bool) func() *schedule.Program {
		return func() *schedule.Program {
			b := schedule.NewBuilder("t", schedule.Launch{SMs: 1, PerSM: 1, Workers: 2})
			c := b.Counter("c")
			w, s := 0, 1
			if !waiterFirst {
				w, s = 1, 0
			}
			b.Task("waiter").On(w).Wait(c, 1)
			b.Task("signaller").On(s).Signal(c, 1)
			return mustBuild(b)
		}
	}
	coop := func(sms int) func() *schedule.Program {
		return func() *schedule.Program {
			b := schedule.NewBuilder("t", schedule.Launch{SMs: sms, PerSM: 1, Workers: 3, Cooperative: true})
			for i := 0; i < 3; i++ {
				b.Task("t" + string(rune('0'+i))).On(i)
			}
			return mustBuild(b)
		}
	}
	overflow := func(width uint8) func() *schedule.Program {
		return func() *schedule.Program {
			b := two()
			c := b.CounterInit("c", 1<<32-2, width)
			b.Task("a").On(0).Signal(c, 1)
			b.Task("b").On(1).Signal(c, 1)
			b.Task("w").On(1).Wait(c, 1<<32-1)
			return mustBuild(b)
		}
	}
	runTable(t, []row{
		{"in-order-dispatch", "worker 0 signals, worker 1 waits: in-order dispatch of one slot works", nonCoop(false), nil},
		{"waiter-holds-slot", "worker 0 spins on a signal from worker 1, which cannot start", nonCoop(true), []string{CodeOccupancy}},
		{"coop-fits", "3 workers on 3 SMs", coop(3), nil},
		{"coop-too-many", "3 workers on 2 SMs", coop(2), []string{CodeOccupancy}},
		{"width-64", "a 64-bit counter holds 2^32", overflow(64), nil},
		{"overflow-32", "a 32-bit counter wraps", overflow(32), []string{CodeCounterOverflow}},
	})
}

func TestRaceTable(t *testing.T) {
	// raw: producer writes state (initialized) bytes, consumer reads them.
	raw := func(wait bool) func() *schedule.Program {
		return func() *schedule.Program {
			b := two()
			x := b.Buffer("x", schedule.KindState, 64)
			c := b.Counter("c")
			b.Task("w").On(0).Write(x, 0, 64).Signal(c, 1)
			r := b.Task("r").On(1).Read(x, 0, 64)
			if wait {
				r.Wait(c, 1)
			}
			return mustBuild(b)
		}
	}
	war := func(wait bool) func() *schedule.Program {
		return func() *schedule.Program {
			b := two()
			x := b.Buffer("x", schedule.KindState, 64)
			c := b.Counter("c")
			b.Task("r").On(0).Read(x, 0, 64).Signal(c, 1)
			w := b.Task("w").On(1).Write(x, 0, 64)
			if wait {
				w.Wait(c, 1)
			}
			return mustBuild(b)
		}
	}
	tiles := func(overlap uint64) func() *schedule.Program {
		return func() *schedule.Program {
			b := two()
			m := b.Buffer("m", schedule.KindOutput, 4*32) // 4 rows × 32 bytes
			b.Task("left").On(0).WriteTile(m, 0, 16, 4, 32)
			b.Task("right").On(1).WriteTile(m, 16-overlap, 16+overlap, 4, 32)
			return mustBuild(b)
		}
	}
	relaxed := func(opts []schedule.StepOption, fence bool) func() *schedule.Program {
		return func() *schedule.Program {
			b := two()
			x := b.Buffer("x", schedule.KindState, 64)
			c := b.Counter("c")
			w := b.Task("w").On(0).Write(x, 0, 64)
			if fence {
				w.FenceAfter(schedule.ScopeGPU)
			}
			w.Signal(c, 1, opts...)
			b.Task("r").On(1).Wait(c, 1).Read(x, 0, 64)
			return mustBuild(b)
		}
	}
	relaxedWait := func(fence bool) func() *schedule.Program {
		return func() *schedule.Program {
			b := two()
			x := b.Buffer("x", schedule.KindState, 64)
			c := b.Counter("c")
			b.Task("w").On(0).Write(x, 0, 64).Signal(c, 1)
			r := b.Task("r").On(1).Wait(c, 1, schedule.Relaxed())
			if fence {
				r.FenceBefore(schedule.ScopeGPU)
			}
			r.Read(x, 0, 64)
			return mustBuild(b)
		}
	}
	kOfN := func(readsProducer bool) func() *schedule.Program {
		return func() *schedule.Program {
			b := schedule.NewBuilder("t", launch(4))
			x := b.Buffer("x", schedule.KindState, 3*16)
			c := b.Counter("c")
			for i := 0; i < 3; i++ {
				b.Task("p"+string(rune('0'+i))).On(i).Write(x, uint64(16*i), 16).Signal(c, 1)
			}
			r := b.Task("r").On(3).Wait(c, 2)
			if readsProducer {
				r.Read(x, 0, 16)
			}
			return mustBuild(b)
		}
	}
	kv := func(rows uint64) func() *schedule.Program {
		return func() *schedule.Program {
			const pos, rowBytes = 5, 64
			b := two()
			cache := b.Buffer("k_cache", schedule.KindState, 16*rowBytes)
			b.Task("append").On(0).Write(cache, pos*rowBytes, rowBytes)
			b.Task("attend").On(1).Read(cache, 0, rows*rowBytes)
			return mustBuild(b)
		}
	}
	pageReuse := func(wait bool) func() *schedule.Program {
		return func() *schedule.Program {
			b := schedule.NewBuilder("t", launch(3))
			page := b.Arena("page0", 256)
			a := b.BufferIn("act_a", schedule.KindScratch, 256, page, 0)
			bb := b.BufferIn("act_b", schedule.KindScratch, 256, page, 0)
			out := b.Buffer("out", schedule.KindOutput, 256)
			c, d := b.Counter("a_ready"), b.Counter("a_free")
			b.Task("produce").On(0).Write(a, 0, 256).Signal(c, 1)
			b.Task("consume").On(1).Wait(c, 1).Read(a, 0, 256).Write(out, 0, 256).Signal(d, 1)
			reuse := b.Task("reuse").On(2).Wait(c, 1)
			if wait {
				reuse.Wait(d, 1)
			}
			reuse.Write(bb, 0, 256)
			return mustBuild(b)
		}
	}
	runTable(t, []row{
		{"raw-ordered", "the reader waits for the writer's signal", raw(true), nil},
		{"raw", "the reader does not wait", raw(false), []string{CodeRaceRAW}},
		{"war-ordered", "the writer waits for the reader's signal", war(true), nil},
		{"war", "the writer overwrites what the reader may still read", war(false), []string{CodeRaceWAR}},
		{"disjoint-column-tiles", "column slices [0,16) and [16,32) of a 4×32 matrix", tiles(0), nil},
		{"overlapping-tiles", "the right tile is shifted 4 bytes into the left one", tiles(4), []string{CodeRaceWAW}},
		{"release-signal", "release signal, acquire wait", relaxed(nil, false), nil},
		{"relaxed-signal", "a relaxed signal carries no happens-before", relaxed([]schedule.StepOption{schedule.Relaxed()}, false), []string{CodeRaceUnsynchronized}},
		{"relaxed-signal-after-fence", "a gpu fence before the relaxed signal releases the body's writes", relaxed([]schedule.StepOption{schedule.Relaxed()}, true), nil},
		{"cta-signal", "a cta-scoped signal does not order another worker, and another worker's wait on it races with it", relaxed([]schedule.StepOption{schedule.WithScope(schedule.ScopeCTA)}, false), []string{CodeRaceScope, CodeRaceUnsynchronized}},
		{"relaxed-wait-fenced", "a gpu fence after the relaxed wait acquires", relaxedWait(true), nil},
		{"relaxed-wait", "a relaxed wait without a fence acquires nothing", relaxedWait(false), []string{CodeRaceUnsynchronized}},
		{"k-of-n-scheduling-only", "a 2-of-3 wait that reads nothing the producers write", kOfN(false), nil},
		{"k-of-n-reads-producer", "producer 0 need not be among the first two", kOfN(true), []string{CodeRaceRAW}},
		{"kv-prior-rows", "attention reads rows [0, pos) while row pos is appended", kv(5), nil},
		{"kv-includes-pos", "attention reads row pos without waiting for the append", kv(6), []string{CodeRaceRAW}},
		{"page-reuse-after-free", "the aliasing buffer waits until the page's reader is done", pageReuse(true), nil},
		{"page-reuse-early", "the page is rewritten while its reader may still read it", pageReuse(false), []string{CodeRaceWAR}},
	})
}

func TestMemorySafetyTable(t *testing.T) {
	uninit := func(write bool) func() *schedule.Program {
		return func() *schedule.Program {
			b := two()
			x := b.Buffer("x", schedule.KindScratch, 32)
			c := b.Counter("c")
			w := b.Task("w").On(0)
			if write {
				w.Write(x, 0, 32)
			}
			w.Signal(c, 1)
			b.Task("r").On(1).Wait(c, 1).Read(x, 0, 32)
			return mustBuild(b)
		}
	}
	selfRead := func(prior bool) func() *schedule.Program {
		return func() *schedule.Program {
			b := two()
			x := b.Buffer("x", schedule.KindScratch, 32)
			if prior {
				b.Task("init").On(0).Write(x, 0, 32)
			}
			b.Task("t").On(0).Read(x, 0, 32).Write(x, 0, 32)
			return mustBuild(b)
		}
	}
	oob := func(n uint64) func() *schedule.Program {
		return func() *schedule.Program {
			b := two()
			x := b.Buffer("x", schedule.KindOutput, 32)
			b.Task("t").On(0).Write(x, 0, n)
			return mustBuild(b)
		}
	}
	readonly := func(k schedule.BufferKind) func() *schedule.Program {
		return func() *schedule.Program {
			b := two()
			x := b.Buffer("x", k, 32)
			b.Task("t").On(0).Write(x, 0, 32)
			return mustBuild(b)
		}
	}
	coverage := func(n uint64) func() *schedule.Program {
		return func() *schedule.Program {
			b := two()
			y := b.Buffer("y", schedule.KindOutput, 32)
			b.Task("a").On(0).Write(y, 0, 16)
			b.Task("b").On(1).Write(y, 16, n)
			return mustBuild(b)
		}
	}
	runTable(t, []row{
		{"initialized", "the reader waits for the writer", uninit(true), nil},
		{"uninitialized", "nobody writes the scratch bytes", uninit(false), []string{CodeUninitializedRead}},
		{"self-read-after-init", "an earlier task of the worker initializes the bytes", selfRead(true), nil},
		{"self-read", "a task reads scratch only it writes", selfRead(false), []string{CodeUninitializedRead}},
		{"in-bounds", "32 of 32 bytes", oob(32), nil},
		{"out-of-bounds", "33 of 32 bytes", oob(33), []string{CodeOutOfBounds, CodeOutputUnwritten}[:1]},
		{"write-scratch", "scratch is writable", readonly(schedule.KindState), nil},
		{"write-weight", "weights are read-only", readonly(schedule.KindWeight), []string{CodeReadonlyWrite}},
		{"write-input", "inputs are read-only", readonly(schedule.KindInput), []string{CodeReadonlyWrite}},
		{"output-covered", "two tiles cover the output", coverage(16), nil},
		{"output-hole", "the second tile misses 4 bytes", coverage(12), []string{CodeOutputUnwritten}},
	})
}

func TestOverflow64(t *testing.T) {
	runTable(t, []row{
		{"overflow-64", "a 64-bit counter at 2^64-3 receives +1 and +2", func() *schedule.Program {
			b := two()
			c := b.CounterInit("c", 1<<64-3, 64)
			b.Task("a").On(0).Signal(c, 1)
			b.Task("b").On(1).Signal(c, 2)
			return mustBuild(b)
		}, []string{CodeCounterOverflow}},
	})
}
