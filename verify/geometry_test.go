package verify

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/megaproof/megaproof/internal/defcheck"
	"github.com/megaproof/megaproof/internal/progen"
	"github.com/megaproof/megaproof/schedule"
	"pgregory.net/rapid"
)

// Programs whose numbers are large but whose text is small: work and
// memory must follow the accesses and steps, never the rows or sizes.

// rowsWrite is one task writing every byte of a 10^8-byte output, one
// 1-byte row at a time.
func rowsWrite() *schedule.Program {
	const n = 100_000_000
	b := schedule.NewBuilder("rows", launch(1))
	o := b.Buffer("o", schedule.KindOutput, n)
	b.Task("w").On(0).WriteTile(o, 0, 1, n, 1)
	return mustBuild(b)
}

// twoStrides writes the multiples of 2 and of 3 of an output from two
// workers; serialized, only the bytes that are neither are a finding.
func twoStrides(serialized bool) *schedule.Program {
	const n = 10_000_000
	b := schedule.NewBuilder("strides", launch(2))
	o := b.Buffer("o", schedule.KindOutput, 3*n)
	c := b.Counter("c")
	a := b.Task("a").On(0).WriteTile(o, 0, 1, n, 2)
	t := b.Task("b").On(1)
	if serialized {
		a.Signal(c, 1)
		t.Wait(c, 1)
	}
	t.WriteTile(o, 0, 1, n, 3)
	return mustBuild(b)
}

// interleaved writes the even bytes and the bytes 1 mod 4 of a state
// buffer from two unsynchronized workers: they never meet. With sem, a
// semaphore (one token each, never waited for) sends the program to the
// explorer, and a third worker writes the bytes 3 mod 4.
func interleaved(rows uint64, sem bool) *schedule.Program {
	b := schedule.NewBuilder("interleaved", launch(3))
	s := b.Buffer("s", schedule.KindState, 4*rows)
	ta := b.Task("a").On(0)
	tb := b.Task("b").On(1)
	if sem {
		m := b.Semaphore("m", 2)
		ta.Acquire(m, 1).Release(m, 1)
		tb.Acquire(m, 1).Release(m, 1)
		b.Task("c").On(2).WriteTile(s, 3, 1, rows, 4)
	}
	ta.WriteTile(s, 0, 1, rows, 2)
	tb.WriteTile(s, 1, 1, rows, 4)
	return mustBuild(b)
}

// coprime writes bytes of a huge state buffer with strides whose common
// multiple is about 10^12 bytes, 10^7 rows each: too many pieces for any
// grid. Offsets 0 and 1 (even strides) never meet, offsets 0 and 0 do.
func coprime(meet bool, kind schedule.BufferKind) *schedule.Program {
	const rows, s1, s2 = 10_000_000, 1_000_018, 999_958
	b := schedule.NewBuilder("coprime", launch(2))
	buf := b.Buffer("s", kind, rows*s1)
	off := uint64(1)
	if meet {
		off = 0
	}
	b.Task("a").On(0).WriteTile(buf, 0, 1, rows, s1)
	b.Task("b").On(1).WriteTile(buf, off, 1, rows, s2)
	return mustBuild(b)
}

// accumulator is a safe serialized accumulator: task i on worker i % 132
// waits c >= i, writes one 64-byte state buffer and signals c.
func accumulator(n int) *schedule.Program {
	b := schedule.NewBuilder(fmt.Sprintf("accumulator-%d", n), schedule.Launch{Target: "synthetic", SMs: 132, PerSM: 1, Workers: 132, Cooperative: true})
	s := b.Buffer("s", schedule.KindState, 64)
	c := b.Counter("c")
	for i := range n {
		t := b.Task(fmt.Sprintf("t%d", i)).On(i % 132)
		if i > 0 {
			t.Wait(c, uint64(i))
		}
		t.Write(s, 0, 64).Signal(c, 1)
	}
	return mustBuild(b)
}

// dynamicWriters is n dynamic tasks writing one buffer, unordered.
func dynamicWriters(n int) *schedule.Program {
	b := schedule.NewBuilder(fmt.Sprintf("dynamic-%d", n), schedule.Launch{Target: "synthetic", SMs: 132, PerSM: 1, Workers: 132, Cooperative: true})
	s := b.Buffer("s", schedule.KindState, 64)
	for i := range n {
		b.Task(fmt.Sprintf("t%d", i)).Write(s, 0, 64)
	}
	return mustBuild(b)
}

func TestRowsPrograms(t *testing.T) {
	for _, c := range []struct {
		name string
		p    func() *schedule.Program
		want []string // codes; nil is safe
		note string   // a truncation or undecided note the result must carry
	}{
		{"rows", rowsWrite, nil, ""},
		{"two-strides", func() *schedule.Program { return twoStrides(false) }, []string{CodeOutputUnwritten, CodeRaceWAW}, ""},
		{"two-strides-serialized", func() *schedule.Program { return twoStrides(true) }, []string{CodeOutputUnwritten}, ""},
		{"interleaved", func() *schedule.Program { return interleaved(1_000_000, false) }, nil, ""},
		{"interleaved-semaphore", func() *schedule.Program { return interleaved(1_000_000, true) }, nil, ""},
		{"coprime-apart", func() *schedule.Program { return coprime(false, schedule.KindState) }, nil, ""},
		{"coprime-meet", func() *schedule.Program { return coprime(true, schedule.KindState) }, []string{CodeRaceWAW}, ""},
		{"coprime-output", func() *schedule.Program { return coprime(false, schedule.KindOutput) }, []string{CodeInconclusive}, "whether its writes cover every byte is not decided"},
		{"accumulator", func() *schedule.Program { return accumulator(2000) }, nil, ""},
		{"dynamic-writers", func() *schedule.Program { return dynamicWriters(5000) }, []string{CodeRaceWAW}, "truncated: race.waw: at least"},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func(n int) { maxNotes = n }(maxNotes)
			maxNotes = 1 << 12
			r, err := Run(context.Background(), c.p(), Config{Sanity: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := codes(r); !slices.Equal(got, c.want) {
				t.Fatalf("codes %v, want %v: %+v", got, c.want, r.Findings)
			}
			if c.want == nil && r.Verdict != Safe {
				t.Fatalf("verdict %v", r.Verdict)
			}
			if c.note != "" && !slices.ContainsFunc(r.Findings, func(f Finding) bool {
				return strings.Contains(f.Message, c.note) || slices.ContainsFunc(f.Related, func(s string) bool { return strings.Contains(s, c.note) })
			}) {
				t.Fatalf("no %q note: %+v", c.note, r.Findings)
			}
		})
	}
}

// A racy program with more conflicting pairs than a chunk reports at most
// the bounded findings per code, with a count, and decides no more pairs
// than one chunk and the shadow pass's.
func TestBoundedPairs(t *testing.T) {
	defer func(n int) { maxNotes = n }(maxNotes)
	maxNotes = 1000
	r, err := Run(context.Background(), dynamicWriters(2000), Config{Sanity: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != Unsafe || len(r.Findings) != maxFindingsPerCode {
		t.Fatalf("verdict %v, %d findings", r.Verdict, len(r.Findings))
	}
	if r.Stats.Pairs > 2*maxNotes+2000 {
		t.Fatalf("%d pairs decided, for chunks of %d", r.Stats.Pairs, maxNotes)
	}
}

// strided perturbs a random program's accesses into strided ones of
// several strides, offsets and lengths (some crossing rows, some out of
// bounds), so that the tiers compare on mixed geometry.
func strided(gen *rapid.Generator[*schedule.Program]) *rapid.Generator[*schedule.Program] {
	return rapid.Custom(func(t *rapid.T) *schedule.Program {
		p := gen.Draw(t, "program").Clone()
		for i := range p.Tasks {
			for _, list := range [2][]schedule.Access{p.Tasks[i].Reads, p.Tasks[i].Writes} {
				for k := range list {
					a := &list[k]
					if !rapid.Bool().Draw(t, "perturb") {
						continue
					}
					size := int64(p.Buffers[a.Buffer].Size)
					rows := rapid.Uint64Range(0, 6).Draw(t, "rows")
					stride := uint64(0)
					if rows > 1 {
						stride = rapid.Uint64Range(1, 7).Draw(t, "stride")
					}
					length := rapid.Uint64Range(1, 6).Draw(t, "length")
					extent := int64(length)
					for rows > 1 && int64((rows-1)*stride+length) > size {
						rows--
					}
					if rows > 1 {
						extent = int64((rows-1)*stride + length)
					} else {
						stride = 0
					}
					a.Rows, a.Stride, a.Length = rows, stride, length
					if extent <= size && rapid.IntRange(0, 9).Draw(t, "inside") > 0 {
						a.Offset = rapid.Int64Range(0, size-extent).Draw(t, "offset")
					} else {
						a.Offset = rapid.Int64Range(-1, size).Draw(t, "offset")
					}
				}
			}
		}
		return p
	})
}

// The three tiers agree on programs of mixed strides, and every witness
// replays (Config.Sanity, in disagreement).
func TestStridedDifferential(t *testing.T) {
	gen := strided(progen.Program(progen.Small()))
	tally := map[string]int{}
	rapid.Check(t, func(t *rapid.T) {
		p := gen.Draw(t, "strided")
		if p.Validate() != nil {
			return
		}
		d, err := disagreement(p, tally)
		if errors.Is(err, defcheck.ErrDispatch) {
			return // compared with the explorer only
		}
		if err != nil {
			t.Fatal(err)
		}
		if d != "" {
			js, _ := schedule.Marshal(p)
			t.Fatalf("%s\n%s", d, js)
		}
	})
	t.Logf("%v", tally)
}

// bytesConflict is the definition: some byte of an arena that one task
// writes and the other reads or writes, enumerated row by row.
func bytesConflict(p *schedule.Program, a, b int) bool {
	bytes := func(acc schedule.Access) map[[2]int64]bool {
		out := map[[2]int64]bool{}
		buf := p.Buffers[acc.Buffer]
		arena, base := int64(-1-acc.Buffer), int64(0)
		if buf.Arena != schedule.NoArena {
			arena, base = int64(buf.Arena), int64(buf.Offset)
		}
		for lo, hi := range acc.Spans() {
			for x := lo; x < hi; x++ {
				out[[2]int64{arena, base + x}] = true
			}
		}
		return out
	}
	meet := func(xs, ys []schedule.Access) bool {
		for _, x := range xs {
			bx := bytes(x)
			for _, y := range ys {
				for k := range bytes(y) {
					if bx[k] {
						return true
					}
				}
			}
		}
		return false
	}
	ta, tb := &p.Tasks[a], &p.Tasks[b]
	return meet(ta.Writes, tb.Writes) || meet(ta.Writes, tb.Reads) || meet(ta.Reads, tb.Writes)
}

// The conflict sweep, in grids of common strides or by extents with
// arithmetic (a grid budget of 0), finds exactly the pairs that byte
// enumeration finds.
func TestConflictSweepBytes(t *testing.T) {
	defer func(b func(int) int64) { gridBudget = b }(gridBudget)
	gen := strided(progen.Program(progen.Medium()))
	rapid.Check(t, func(rt *rapid.T) {
		p := gen.Draw(rt, "strided")
		if p.Validate() != nil {
			return
		}
		for _, budget := range []int64{1 << 20, 0} {
			gridBudget = func(int) int64 { return budget }
			v := &verifier{f: lowerForm(p)}
			conflictsOfAll(v)
			for a := range p.Tasks {
				for b := a + 1; b < len(p.Tasks); b++ {
					found := v.pair(uint64(a)<<32|uint64(b)) != nil
					want := v.f.taskTh[a] != v.f.taskTh[b] && bytesConflict(p, a, b)
					if found != want {
						rt.Fatalf("budget %d: tasks %d and %d: sweep %v, bytes %v", budget, a, b, found, want)
					}
					if want != schedule.Conflict(p, a, b) && v.f.taskTh[a] != v.f.taskTh[b] {
						rt.Fatalf("tasks %d and %d: schedule.Conflict %v, bytes %v", a, b, !want, want)
					}
				}
			}
		}
	})
}

// With no room for grids, every arena is swept by extents and the shadow
// pass proves nothing initialized there: results stay those of the
// default budgets (on programs the greedy analyses decide).
func TestTinyGeometryBudgets(t *testing.T) {
	defer func(b func(int) int64) { gridBudget = b }(gridBudget)
	g := gridBudget
	for _, gen := range []*rapid.Generator[*schedule.Program]{strided(progen.Program(progen.Small())), strided(progen.Program(progen.Medium()))} {
		rapid.Check(t, func(rt *rapid.T) {
			p := gen.Draw(rt, "strided")
			if len(p.Semaphores) > 0 || slices.ContainsFunc(p.Tasks, func(t schedule.Task) bool { return !t.Pinned() }) {
				return // the explorer decides these
			}
			var res [2]*Result
			for i, budget := range []func(int) int64{g, func(int) int64 { return 0 }} {
				gridBudget = budget
				r, err := Run(context.Background(), p, Config{Sanity: true})
				if err != nil {
					rt.Fatal(err)
				}
				r.Stats = Stats{}
				res[i] = r
			}
			if d := cmp.Diff(res[0], res[1]); d != "" {
				rt.Fatalf("default budgets vs none (-default +none):\n%s", d)
			}
		})
	}
}

// Run honors cancellation on programs whose rows, strides and pairs are
// large: a context canceled at any point gives context.Canceled or the
// complete result.
func TestCancelRows(t *testing.T) {
	for _, c := range []struct {
		name string
		p    *schedule.Program
	}{
		{"two-strides", twoStrides(false)},
		{"coprime", coprime(true, schedule.KindState)},
		{"dynamic-writers", dynamicWriters(3000)},
		{"accumulator", accumulator(3000)},
	} {
		t.Run(c.name, func(t *testing.T) {
			full, err := Run(context.Background(), c.p, Config{})
			if err != nil {
				t.Fatal(err)
			}
			canceled := 0
			for n := 0; n < 8; n++ {
				r, err := Run(&countdown{context.Background(), n}, c.p, Config{})
				switch {
				case errors.Is(err, context.Canceled):
					canceled++
				case err != nil:
					t.Fatalf("n=%d: %v", n, err)
				case r.Verdict != full.Verdict || !slices.Equal(codes(r), codes(full)):
					t.Fatalf("n=%d: verdict %v %v, uncanceled %v %v", n, r.Verdict, codes(r), full.Verdict, codes(full))
				}
			}
			if canceled == 0 {
				t.Fatal("no cancellation was noticed")
			}
		})
	}
}

// TestBoundsMessageRange checks the byte range an out-of-bounds finding
// names: below the buffer (an end at or below 0 is negative, not wrapped),
// past its end, and an access ending at 2^63, the largest end there is.
func TestBoundsMessageRange(t *testing.T) {
	for _, c := range []struct {
		offset, length int64
		want           string
	}{
		{-9, 8, "bytes [-9, -1) of x"},
		{-8, 8, "bytes [-8, 0) of x"},
		{-1, 8, "bytes [-1, 7) of x"},
		{-1 << 62, 1, "bytes [-4611686018427387904, -4611686018427387903) of x"},
		{60, 8, "bytes [60, 68) of x"},
		{1 << 62, 1 << 62, "bytes [4611686018427387904, 9223372036854775808) of x"},
	} {
		doc := fmt.Sprintf(`{"format":"megaproof/v1","launch":{"sms":1,"workers":1},"buffers":[{"name":"x","kind":"state","size":64}],`+
			`"tasks":[{"name":"a","worker":0,"writes":[{"buffer":"x","offset":%d,"length":%d}]}]}`, c.offset, c.length)
		p, err := schedule.Unmarshal([]byte(doc))
		if err != nil {
			t.Fatalf("offset %d length %d: %v", c.offset, c.length, err)
		}
		res, err := Run(context.Background(), p, Config{})
		if err != nil {
			t.Fatal(err)
		}
		var msgs []string
		for _, f := range res.Findings {
			if f.Code == CodeOutOfBounds {
				msgs = append(msgs, f.Message)
			}
		}
		if len(msgs) != 1 || !strings.Contains(msgs[0], c.want) {
			t.Errorf("offset %d length %d: out-of-bounds findings %q, want one with %q", c.offset, c.length, msgs, c.want)
		}
	}
}
