package mpk_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/schedule/mpk"
	"github.com/megaproof/megaproof/verify"
)

// In history_dangling_writer.json, positions 2 and 4-10 trigger END
// (num_triggers 8) and position 3 writes X without a trigger (MPK #665's
// kind of leaf). With 128 workers and 16 schedulers, scheduler 0 places
// positions 2-9 on workers 1-7 and 0 and scheduler 1 places position 10
// on worker 8. The default history gives END(1) to scheduler 1 (the
// worker of position 10), scheduler 0's cursor does not move, t3@2 shares
// t3@1's worker and the FIFO queue orders them. When a task of scheduler
// 0 ends iteration 1 instead, scheduler 0 pushes BEGIN(2) first, t3@2
// lands on the next worker, and nothing orders the two writes of X.
func TestHistoriesDanglingWriter(t *testing.T) {
	data := read(t, "history_dangling_writer.json")
	g := parse(t, data)
	hs, err := mpk.Options{}.Histories(g)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(hs, [][]int{{1}, {0}}, slices.Equal) {
		t.Fatalf("histories %v, want [[1] [0]]", hs)
	}
	_, res := run(t, data, mpk.Options{})
	if res.Verdict != verify.Safe {
		t.Fatalf("default history: %v %v, want safe", res.Verdict, res.Findings)
	}
	p, res := run(t, data, mpk.Options{History: hs[1]})
	if res.Verdict != verify.Unsafe {
		t.Fatalf("history %v: %v, want unsafe", hs[1], res.Verdict)
	}
	found := false
	for _, f := range res.Findings {
		if f.Code == verify.CodeRaceWAW && names(p, f, []string{"t3.IDENTITY@1", "t3.IDENTITY@2"}) {
			found = true
			if err := schedule.CheckWitness(p, f.Code, f.Tasks, f.Witness); err != nil {
				t.Errorf("witness does not replay: %v", err)
			}
		}
	}
	if !found {
		t.Errorf("no race.waw of t3@1 and t3@2 in %v", res.Findings)
	}
	ps, err := mpk.Options{}.Programs(g)
	if err != nil || len(ps) != 2 {
		t.Fatalf("Programs: %d programs, %v; want 2", len(ps), err)
	}
	if v := verdicts(t, ps); !slices.Equal(v, []verify.Verdict{verify.Safe, verify.Unsafe}) {
		t.Errorf("programs of Programs: %v, want safe, unsafe", v)
	}
}

// With the dangling writer at position 2, scheduler 0's cursor puts
// BEGIN(2) right behind t2@1 on its worker when scheduler 0 ends
// iteration 1, and t2@2 on that worker otherwise: both histories order
// the writes.
func TestHistoriesDanglingFirst(t *testing.T) {
	data := read(t, "history_dangling_first.json")
	hs, err := mpk.Options{}.Histories(parse(t, data))
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 2 {
		t.Fatalf("histories %v, want two", hs)
	}
	for _, h := range hs {
		if _, res := run(t, data, mpk.Options{History: h}); res.Verdict != verify.Safe {
			t.Errorf("history %v: %v %v, want safe", h, res.Verdict, res.Findings)
		}
	}
}

// Graphs in which every task must run before END give one verdict for
// every history: Histories lists none, and every history the END
// triggers allow verifies like the default one.
func TestHistoriesIndependent(t *testing.T) {
	for _, name := range []string{"ex1_reduce_edge.json", "ex2_chain_partitioned.json", "ex3_fork_interleaved.json", "ex4_stripped_residual_hazard.json"} {
		data := read(t, name)
		g := parse(t, data)
		for _, o := range []mpk.Options{{}, {Iterations: 3}, {Workers: 4, Schedulers: 2}, {Workers: 4, Schedulers: 2, Iterations: 3}} {
			hs, err := o.Histories(g)
			if err != nil || hs != nil {
				t.Fatalf("%s %+v: histories %v, %v; want none", name, o, hs, err)
			}
			_, want := run(t, data, o)
			schedulers := o.Schedulers
			if schedulers == 0 {
				schedulers = mpk.DefaultSchedulers(mpk.DefaultSMs, mpk.DefaultWorkers(mpk.DefaultSMs))
			}
			for s := range min(schedulers, 4) {
				h := make([]int, max(o.Iterations, 2)-1)
				for i := range h {
					h[i] = s
				}
				o.History = h
				if _, got := run(t, data, o); got.Verdict != want.Verdict || !slices.Equal(codes(got), codes(want)) {
					t.Errorf("%s %+v: %v %v, default history %v %v", name, o, got.Verdict, codes(got), want.Verdict, codes(want))
				}
			}
		}
	}
}

// Options.History is checked like every other option.
func TestHistoryOption(t *testing.T) {
	data := read(t, "ex1_reduce_edge.json")
	for _, o := range []mpk.Options{{History: []int{16}}, {History: []int{-1}}, {History: []int{0, 0}}, {History: []int{0}, Dispatch: mpk.Dynamic}} {
		_, err := o.Unmarshal(data)
		if err == nil || !strings.Contains(err.Error(), "Options.History") {
			t.Errorf("%+v: %v, want an Options.History error", o, err)
		}
	}
}

func codes(r *verify.Result) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, f.Code)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// A graph whose keys are escaped (\u0061ll_events, all_t\u0061sks,
// dependent\u005fevent) is an MPK graph like any other: detected, read
// and verified (its two tasks race on y).
func TestEscapedKeys(t *testing.T) {
	data := read(t, "escaped_keys_race.json")
	if !mpk.Detect(data) {
		t.Fatal("not detected as MPK")
	}
	p, res := run(t, data, mpk.Options{})
	found := false
	for _, f := range res.Findings {
		found = found || f.Code == verify.CodeRaceRAW && names(p, f, []string{"t2.IDENTITY@1", "t3.IDENTITY@1"})
	}
	if !found {
		t.Errorf("no race.raw of t2@1 and t3@1 in %v", res.Findings)
	}
}

// randomGraph draws a small MPK graph: positions 2..n-1, each waiting on
// an EMPTY event triggered by earlier positions (or on none) and
// triggering an EMPTY event, END, or (rarely) nothing, every event's
// num_triggers its number of triggers, tiles of three tensors.
func randomGraph(r *rand.Rand) *mpk.Graph {
	n := 4 + r.IntN(7)
	empties := 1 + r.IntN(3)
	end := 2 + empties
	g := &mpk.Graph{Events: make([]mpk.Event, end+1)}
	g.Events[0] = mpk.Event{Type: mpk.EventTermination, NumTriggers: 1}
	g.Events[1] = mpk.Event{Type: mpk.EventLaunchDependentTasks, NumTriggers: 1, FirstTask: 2, LastTask: int64(n)}
	for e := 2; e < end; e++ {
		g.Events[e] = mpk.Event{Type: mpk.EventEmpty}
	}
	g.Events[end] = mpk.Event{Type: mpk.EventEndOfTaskGraph}
	none := int64(mpk.InvalidEventID)
	g.Tasks = []mpk.Task{
		{Type: mpk.TaskTerminate, TriggerEvent: none, DependentEvent: none},
		{Type: mpk.TaskBeginTaskGraph, TriggerEvent: 1, DependentEvent: none},
	}
	tile := func() []mpk.Tensor {
		return []mpk.Tensor{{BasePtr: string(rune('a' + r.IntN(3))), Offset: int64(16 * r.IntN(2)), DataType: mpk.DTBF16, Dims: []int64{1, 8}, Strides: []int64{8, 1}}}
	}
	triggered := map[int64]bool{}
	for pos := 2; pos < n; pos++ {
		t := mpk.Task{Type: mpk.TaskIdentity, TriggerEvent: none, DependentEvent: none, Inputs: tile()}
		if r.IntN(4) > 0 {
			t.Outputs = tile()
		}
		var waitable []int64
		for e := range triggered {
			waitable = append(waitable, e)
		}
		slices.Sort(waitable)
		if len(waitable) > 0 && r.IntN(3) > 0 {
			t.DependentEvent = waitable[r.IntN(len(waitable))]
		}
		switch k := r.IntN(10); {
		case pos == n-1 || k >= 5 && k < 9:
			t.TriggerEvent = int64(end)
		case k < 5:
			t.TriggerEvent = int64(2 + r.IntN(empties))
		}
		if t.TriggerEvent != none {
			triggered[t.TriggerEvent] = true
			g.Events[t.TriggerEvent].NumTriggers++
		}
		g.Tasks = append(g.Tasks, t)
	}
	return g
}

// closed reports whether every position of g must run before END by its
// events alone: it triggers END, or an event whose waiters include a
// position that must (randomGraph's events need all their triggers).
func closed(g *mpk.Graph) bool {
	end := int64(len(g.Events) - 1)
	must := make([]bool, len(g.Tasks))
	for pos := len(g.Tasks) - 1; pos >= 2; pos-- {
		tr := g.Tasks[pos].TriggerEvent
		must[pos] = tr == end
		for w := pos + 1; w < len(g.Tasks) && !must[pos] && tr != mpk.InvalidEventID; w++ {
			must[pos] = must[w] && g.Tasks[w].DependentEvent == tr
		}
		if !must[pos] {
			return false
		}
	}
	return true
}

// On random graphs, every history Histories lists maps, and a graph in
// which every task must run before END by its events alone verifies alike
// in every history, feasible or not (any scheduler receiving each END).
func TestHistoriesRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 21))
	listed, checked := 0, 0
	const graphs = 300
	for i := 0; i < graphs; i++ {
		g := randomGraph(r)
		o := mpk.Options{Workers: 3 + r.IntN(4), Schedulers: 2 + r.IntN(2), Iterations: 2 + r.IntN(2)}
		hs, err := o.Histories(g)
		if err != nil {
			t.Fatalf("graph %d: %v", i, err)
		}
		verdict := func(h []int) string {
			o := o
			o.History = h
			p, err := o.Map(g)
			if err != nil {
				t.Fatalf("graph %d, history %v: %v", i, h, err)
			}
			res, err := verify.Run(context.Background(), p, verify.Config{})
			if err != nil {
				t.Fatal(err)
			}
			return res.Verdict.String() + " " + strings.Join(codes(res), ",")
		}
		// Dynamic dispatch runs every assignment, so it races wherever
		// some history does.
		dyn := o
		dyn.Dispatch = mpk.Dynamic
		dp, err := dyn.Map(g)
		if err != nil {
			t.Fatalf("graph %d, dynamic: %v", i, err)
		}
		dres, err := verify.Run(context.Background(), dp, verify.Config{})
		if err != nil {
			t.Fatal(err)
		}
		dynRaces := strings.Contains(strings.Join(codes(dres), ","), "race.")
		for _, h := range append([][]int{nil}, hs...) {
			if v := verdict(h); strings.Contains(v, "race.") && !dynRaces {
				t.Fatalf("graph %d %+v: history %v races (%s), dynamic dispatch does not (%v)", i, o, h, v, codes(dres))
			}
		}
		if hs != nil {
			listed++
		}
		if !closed(g) {
			continue
		}
		if hs != nil {
			t.Fatalf("graph %d %+v: every task must run before END, yet histories %v are listed", i, o, hs)
		}
		checked++
		want := verdict(nil)
		h := make([]int, o.Iterations-1)
		for {
			if got := verdict(h); got != want {
				t.Fatalf("graph %d %+v: no histories listed, but history %v gives %s and the default %s\n%s", i, o, h, got, want, mpk.Marshal(g))
			}
			j := 0
			for j < len(h) && h[j] == o.Schedulers-1 {
				h[j] = 0
				j++
			}
			if j == len(h) {
				break
			}
			h[j]++
		}
	}
	t.Logf("%d of %d graphs list histories; %d closed graphs checked in every history", listed, graphs, checked)
	if listed == 0 || checked < 30 {
		t.Errorf("%d graphs listed histories and %d were checked in every history; the generator no longer covers both", listed, checked)
	}
}

// Beyond MaxHistories, Programs returns the histories that change the
// fewest choices of the default one, with an invalid.limit error: 12
// iterations of history_dangling_first.json have 2^11 histories, and the
// first listed after the default changes one choice.
func TestHistoriesLimit(t *testing.T) {
	g := parse(t, read(t, "history_dangling_first.json"))
	o := mpk.Options{Iterations: 12}
	hs, err := o.Histories(g)
	var se *schedule.Error
	if !errors.As(err, &se) || se.Diagnostics[0].Code != schedule.CodeLimit || len(hs) != mpk.MaxHistories {
		t.Fatalf("%d histories, %v; want %d and an invalid.limit error", len(hs), err, mpk.MaxHistories)
	}
	changed := func(h []int) int {
		n := 0
		for i := range h {
			n += b2i(h[i] != hs[0][i])
		}
		return n
	}
	for i := 1; i < len(hs); i++ {
		if changed(hs[i]) < changed(hs[i-1]) {
			t.Fatalf("history %d %v changes fewer choices than history %d %v", i, hs[i], i-1, hs[i-1])
		}
	}
	if changed(hs[1]) != 1 {
		t.Errorf("history 1 %v changes %d choices of the default %v, want 1", hs[1], changed(hs[1]), hs[0])
	}
	ps, err := o.Programs(g)
	if len(ps) != mpk.MaxHistories || err == nil {
		t.Errorf("Programs: %d programs, %v; want %d and the limit error", len(ps), err, mpk.MaxHistories)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// In end_undercount_readonly.json three tasks trigger END, whose
// num_triggers is 2, and every task only reads: the programs are safe
// (the iterations overlap without touching the same bytes), but MPK's
// exact-count END can hang a later iteration, so Programs refuses the
// graph as unsupported at END's num_triggers. With num_triggers 3
// (end_count_readonly.json), or one iteration, nothing is refused; in
// end_undercount_race.json (the first example with END lowered) the early
// start races, and that program still decides.
func TestEndUndercount(t *testing.T) {
	programs := func(name string, o mpk.Options) ([]*schedule.Program, error) {
		t.Helper()
		return o.Programs(parse(t, read(t, name)))
	}
	ps, err := programs("end_undercount_readonly.json", mpk.Options{})
	var se *schedule.Error
	if !errors.As(err, &se) || len(se.Diagnostics) != 1 {
		t.Fatalf("end_undercount_readonly.json: %v, want one diagnostic", err)
	}
	if d := se.Diagnostics[0]; d.Code != schedule.CodeValue || d.Path != "$.all_events[2].num_triggers" ||
		!strings.HasPrefix(d.Message, "unsupported: END_OF_TASK_GRAPH has num_triggers 2 but 3 tasks trigger it") ||
		!strings.Contains(d.Message, "in iteration 3 when") {
		t.Errorf("diagnostic %+v", d)
	}
	if v := verdicts(t, ps); !slices.Equal(v, []verify.Verdict{verify.Safe}) {
		t.Errorf("programs of end_undercount_readonly.json: %v, want one safe program beside the refusal", v)
	}
	if ps, err := programs("end_undercount_readonly.json", mpk.Options{Iterations: 1}); err != nil || len(ps) != 1 {
		t.Errorf("one iteration: %d programs, %v; want one, no error", len(ps), err)
	}
	if ps, err := programs("end_count_readonly.json", mpk.Options{}); err != nil || !slices.Equal(verdicts(t, ps), []verify.Verdict{verify.Safe}) {
		t.Errorf("end_count_readonly.json: %v, want safe", err)
	}
	ps, err = programs("end_undercount_race.json", mpk.Options{})
	if !errors.As(err, &se) || !strings.HasPrefix(se.Diagnostics[0].Message, "unsupported: END_OF_TASK_GRAPH") {
		t.Fatalf("end_undercount_race.json: %v", err)
	}
	if v := verdicts(t, ps); !slices.Contains(v, verify.Unsafe) {
		t.Errorf("programs of end_undercount_race.json: %v, want an unsafe one", v)
	}
}

// In history_counted.json (4 workers, 2 schedulers), position 2 triggers
// END (num_triggers 2) on worker 1, which then runs positions 6 and 10,
// the two triggers of an event with num_triggers 1; position 12, on
// worker 2, waits on that event and triggers END. Whichever trigger
// position 12 waits for, worker 1 has run position 2 before it, so
// position 12 always ends the iteration: one history, and it is safe
// (position 11's two writes of r share a worker in it). Counting the
// event's triggers gives that; treating the event as ordering nothing
// listed position 2's scheduler as a receiver too, whose history races.
func TestHistoriesCounted(t *testing.T) {
	data := read(t, "history_counted.json")
	o := mpk.Options{Workers: 4, Schedulers: 2}
	hs, err := o.Histories(parse(t, data))
	if err != nil || hs != nil {
		t.Fatalf("histories %v, %v; want none", hs, err)
	}
	if _, res := run(t, data, o); res.Verdict != verify.Safe {
		t.Errorf("%v %v, want safe", res.Verdict, res.Findings)
	}
}
