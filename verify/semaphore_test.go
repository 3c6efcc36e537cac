package verify

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/megaproof/megaproof/schedule"
)

// pipeline builds P producer/consumer worker pairs, each sharing a ring of
// K slots, N items per pair: with semaphores (empty with K tokens, full
// with none) or with monotone counters. edit breaks one consumer: "skip"
// drops one full acquire, "hold" never releases empty.
func pipeline(P, N, K int, sems bool, edit string) *schedule.Program {
	const slot = 256
	b := schedule.NewBuilder(fmt.Sprintf("pipeline-%d-%d-%d", P, N, K), schedule.Launch{Target: "H200", SMs: 132, PerSM: 1, Workers: 2 * P, Cooperative: true})
	for k := range P {
		ring := b.Buffer(fmt.Sprintf("ring%d", k), schedule.KindScratch, uint64(K*slot))
		out := b.Buffer(fmt.Sprintf("out%d", k), schedule.KindOutput, uint64(N*slot))
		var empty, full schedule.SemaphoreRef
		var produced, consumed schedule.CounterRef
		if sems {
			empty = b.Semaphore(fmt.Sprintf("empty%d", k), uint64(K))
			full = b.Semaphore(fmt.Sprintf("full%d", k), 0)
		} else {
			produced = b.Counter(fmt.Sprintf("produced%d", k))
			consumed = b.Counter(fmt.Sprintf("consumed%d", k))
		}
		for i := range N {
			off := uint64(i%K) * slot
			pt := b.Task(fmt.Sprintf("p%d.%d", k, i)).On(2*k).Write(ring, off, slot)
			ct := b.Task(fmt.Sprintf("c%d.%d", k, i)).On(2*k+1).Read(ring, off, slot).Write(out, uint64(i)*slot, slot)
			broken := k == P/2 && i == N/2
			if sems {
				pt.Acquire(empty, 1).Release(full, 1)
				if !(broken && edit == "skip") {
					ct.Acquire(full, 1)
				}
				if !(k == P/2 && edit == "hold") {
					ct.Release(empty, 1)
				}
			} else {
				if i >= K {
					pt.Wait(consumed, uint64(i-K+1))
				}
				pt.Signal(produced, 1)
				ct.Wait(produced, uint64(i+1)).Signal(consumed, 1)
			}
		}
	}
	return mustBuild(b)
}

func TestSemaphorePipeline(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  string
		codes []string
	}{
		{"safe", "", nil},
		{"consumer-skips-full-acquire", "skip", []string{CodeRaceRAW, CodeRaceWAR, CodeUninitializedRead}},
		{"consumer-keeps-empty", "hold", []string{CodeDeadlockSemaphore}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := pipeline(66, 32, 2, true, tc.edit)
			r, err := Run(context.Background(), p, Config{Sanity: true})
			if err != nil {
				t.Fatal(err)
			}
			if r.Stats.Engine == "explore" {
				t.Errorf("the pipeline went to the explorer")
			}
			got := codes(r)
			if len(tc.codes) == 0 {
				if r.Verdict != Safe {
					t.Fatalf("verdict %v, findings %+v", r.Verdict, r.Findings)
				}
				return
			}
			if r.Verdict != Unsafe {
				t.Fatalf("verdict %v, want unsafe", r.Verdict)
			}
			for _, c := range got {
				if !slices.Contains(tc.codes, c) {
					t.Errorf("code %s, want only %v", c, tc.codes)
				}
			}
			if len(got) == 0 || tc.edit == "skip" && !slices.ContainsFunc(got, func(c string) bool { return c == CodeRaceRAW || c == CodeRaceWAR }) {
				t.Errorf("codes %v, want a race", got)
			}
		})
	}
}

// A pool: 60 workers, 3 tasks each, sharing a 30-token semaphore, each
// task writing its own byte.
func TestSemaphorePool(t *testing.T) {
	pool := func(workers int, tokens uint64, shared bool) *schedule.Program {
		b := schedule.NewBuilder("pool", schedule.Launch{Target: "H200", SMs: 132, PerSM: 1, Workers: workers, Cooperative: true})
		s := b.Semaphore("slots", tokens)
		x := b.Buffer("x", schedule.KindState, uint64(3*workers))
		for w := range workers {
			for i := range 3 {
				off := uint64(3*w + i)
				if shared {
					off = 0
				}
				b.Task(fmt.Sprintf("t%d.%d", w, i)).On(w).Acquire(s, 1).Write(x, off, 1).Release(s, 1)
			}
		}
		return mustBuild(b)
	}
	r, err := Run(context.Background(), pool(60, 30, false), Config{Sanity: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != Safe || r.Stats.Engine == "explore" {
		t.Fatalf("own bytes: verdict %v engine %s, findings %+v", r.Verdict, r.Stats.Engine, r.Findings)
	}
	// Sharing one byte under 2 tokens races; the pool shape alone cannot
	// order it, so the explorer decides. Under 1 token the semaphore is a
	// lock and orders every pair.
	for _, tc := range []struct {
		tokens uint64
		want   Verdict
	}{{2, Unsafe}, {1, Safe}} {
		r, err = Run(context.Background(), pool(3, tc.tokens, true), Config{Sanity: true})
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict != tc.want || r.Stats.Engine != "explore" {
			t.Errorf("shared byte under %d tokens: verdict %v engine %s, want %v from the explorer", tc.tokens, r.Verdict, r.Stats.Engine, tc.want)
		}
	}
}

// BenchmarkSemaphorePipeline measures the scaling of verify in P·N on the
// pipeline, in both forms: P ∈ {8, 16, 33, 66} at N = 32, and
// N ∈ {16, 32, 64, 128} at P = 66. Besides wall time it reports the
// process's CPU time per verification (cpu-ns/op), which a loaded machine
// disturbs less.
func BenchmarkSemaphorePipeline(b *testing.B) {
	for _, size := range [][2]int{{8, 32}, {16, 32}, {33, 32}, {66, 16}, {66, 32}, {66, 64}, {66, 128}} {
		for _, sems := range []bool{false, true} {
			kind := "counters"
			if sems {
				kind = "semaphores"
			}
			p := pipeline(size[0], size[1], 2, sems, "")
			b.Run(fmt.Sprintf("pairs=%d/items=%d/%s", size[0], size[1], kind), func(b *testing.B) {
				c0, ok := cpuTime()
				for b.Loop() {
					r, err := Run(context.Background(), p, Config{})
					if err != nil || r.Verdict != Safe {
						b.Fatalf("%v %v", r.Verdict, err)
					}
				}
				if c1, ok1 := cpuTime(); ok && ok1 {
					b.ReportMetric(float64(c1-c0)/float64(b.N), "cpu-ns/op")
				}
			})
		}
	}
}

// The proof clocks join a wait on a counter only one thread adds to with
// the add that first reaches its threshold: they prove every adjacent pair
// of the pipeline in both forms (no exact sweep), and a consumer that
// waits for one item too few still races.
func TestOneThreadCounterJoins(t *testing.T) {
	for _, sems := range []bool{false, true} {
		p := pipeline(4, 8, 2, sems, "")
		r, err := Run(context.Background(), p, Config{Sanity: true})
		if err != nil || r.Verdict != Safe {
			t.Fatalf("sems %v: %v %+v", sems, err, r)
		}
		v := &verifier{f: lowerForm(p)}
		if sems {
			p2, _, _, ok := reduceSemaphores(p)
			if !ok {
				t.Fatal("no counter form")
			}
			v.f = lowerForm(p2)
		}
		run := v.checkProgress()
		v.f.linkPoints()
		v.when = make([]int32, len(v.f.p.Tasks))
		for i, x := range run.trace {
			if v.f.kind[x] == kBody {
				v.when[v.f.task[x]] = int32(i)
			}
		}
		g, n := newGrid(v.f.p, func(int32) bool { return true })
		complete, _, unproven, err := v.shadowOrder(context.Background(), run, g, n)
		if err != nil || !complete || len(unproven) > 0 {
			t.Errorf("sems %v: complete %v, %d pairs left to the exact decision (%v)", sems, complete, len(unproven), err)
		}
	}
	// Consumer 1 waits for i items before reading item i.
	p := pipeline(2, 4, 2, false, "")
	for i := range p.Tasks {
		tk := &p.Tasks[i]
		if tk.Name == "c1.2" {
			tk.Before[0].Value--
		}
	}
	r, err := Run(context.Background(), p, Config{Sanity: true})
	if err != nil || r.Verdict != Unsafe || !slices.ContainsFunc(r.Findings, func(f Finding) bool { return f.Code == CodeRaceRAW }) {
		t.Fatalf("off by one: %v %v %v", err, r.Verdict, codes(r))
	}
}

// Clocks kept to the chains of their part (threads sharing no counter or
// barrier with the rest) decide what clocks over every chain decide, with
// the same statistics.
func TestClockParts(t *testing.T) {
	sameResults(t, "clocks over every chain vs over the part's",
		[2]func(){func() { clockParts = false }, func() { clockParts = true }},
		func() { clockParts = true }, true)
}

// Vector operations kept to the chains given out so far (dynamic threads
// are given one chain each at most, most of them reused) decide what
// operations over every chain decide, with the same statistics.
func TestClockWindow(t *testing.T) {
	sameResults(t, "over every chain vs over the chains given out",
		[2]func(){func() { clockWindow = false }, func() { clockWindow = true }},
		func() { clockWindow = true }, true)
}
