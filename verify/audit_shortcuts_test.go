package verify

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/internal/defcheck"
	"github.com/megaproof/megaproof/schedule"
	"pgregory.net/rapid"
)

// This file holds generators that concentrate on the shapes the exact
// core's shortcuts decide: counters with one adder (the one-thread counter
// joins of the proof clocks), programs that split into parts sharing no
// counter or barrier (the part clocks), idle workers beside dynamic tasks
// (no clock component for workers without ops) and semaphores in guards
// (the semaphore fragments and the transient dispatch). Each program is
// held to the explorer, the brute-force oracle and the definitional
// checker (disagreement), and its race codes to the definitional
// checker's.

// auditScope draws a step scope, mostly gpu.
func auditScope(t *rapid.T, label string) schedule.Scope {
	switch rapid.IntRange(0, 9).Draw(t, label) {
	case 0:
		return schedule.ScopeCTA
	case 1:
		return schedule.ScopeSys
	}
	return schedule.ScopeGPU
}

// auditBuffers are the buffers of every audit program: an input buffer
// most reads read (they need no writer) and a scratch buffer the writes
// write, of 8 bytes each.
func auditBuffers() []schedule.Buffer {
	return []schedule.Buffer{
		{Name: "in", Kind: schedule.KindInput, Size: 8, Arena: schedule.NoArena},
		{Name: "b", Kind: schedule.KindScratch, Size: 8, Arena: schedule.NoArena},
	}
}

// auditAccess draws an access of 1 or 2 bytes: a write of the scratch
// buffer, a read of it or (mostly) of the input buffer; within the region
// [lo, lo+2) of the scratch buffer unless a stray access is drawn.
func auditAccess(t *rapid.T, write bool, lo int, label string) schedule.Access {
	b := int32(1)
	if !write && rapid.IntRange(0, 3).Draw(t, label+"in") > 0 {
		b = 0
	}
	off := lo + rapid.IntRange(0, 1).Draw(t, label+"off")
	if rapid.IntRange(0, 4).Draw(t, label+"stray") == 0 {
		off = rapid.IntRange(0, 7).Draw(t, label+"any")
	}
	n := uint64(rapid.IntRange(1, 2).Draw(t, label+"len"))
	if uint64(off)+n > 8 {
		n = 8 - uint64(off)
	}
	return schedule.Access{Buffer: b, Offset: int64(off), Length: n}
}

// auditBody gives a task a few accesses.
func auditBody(t *rapid.T, lo int, tk *schedule.Task) {
	switch rapid.IntRange(0, 3).Draw(t, "body") {
	case 0:
	case 1:
		tk.Writes = append(tk.Writes, auditAccess(t, true, lo, "w"))
	case 2:
		tk.Reads = append(tk.Reads, auditAccess(t, false, lo, "r"))
	case 3:
		tk.Reads = append(tk.Reads, auditAccess(t, false, lo, "r"))
		tk.Writes = append(tk.Writes, auditAccess(t, true, lo, "w"))
	}
}

// soloProgram draws rings and credit loops: every counter has one adding
// thread (a static worker or a dynamic task; now and then a second one, at
// the edge of the shortcut), its signals relaxed, fenced or cta-scoped now
// and then, and waits on it from other workers and dynamic tasks, with
// thresholds around the sums of its adds.
func soloProgram(t *rapid.T) *schedule.Program {
	workers := rapid.IntRange(1, 3).Draw(t, "workers")
	coop := rapid.IntRange(0, 3).Draw(t, "coop") > 0
	sms := workers
	if !coop {
		sms = rapid.IntRange(1, workers).Draw(t, "sms")
	}
	p := &schedule.Program{
		Name:    "solo",
		Launch:  schedule.Launch{SMs: sms, PerSM: 1, Workers: workers, Cooperative: coop},
		Buffers: auditBuffers(),
	}
	nDyn := rapid.IntRange(0, 2).Draw(t, "dynamic")
	nThreads := workers + nDyn
	nc := rapid.IntRange(1, 3).Draw(t, "counters")
	owner := make([]int, nc)
	for c := range nc {
		p.Counters = append(p.Counters, schedule.Counter{Name: fmt.Sprintf("c%d", c), Width: 32, Init: uint64(rapid.IntRange(0, 1).Draw(t, "init"))})
		owner[c] = rapid.IntRange(0, nThreads-1).Draw(t, "owner")
	}
	// Tasks per thread: workers 0..W-1 get 0..2 tasks, dynamic tasks one each.
	type slot struct{ thread int }
	var slots []slot
	for w := range workers {
		for range rapid.IntRange(0, 2).Draw(t, "tasks") {
			slots = append(slots, slot{w})
		}
	}
	for d := range nDyn {
		slots = append(slots, slot{workers + d})
	}
	// Interleave the task list a little: dynamic tasks may come first.
	if rapid.Bool().Draw(t, "dynfirst") {
		slices.SortStableFunc(slots, func(a, b slot) int { return -(a.thread/workers - b.thread/workers) })
	}
	total := make([]uint64, nc)
	for c := range nc {
		total[c] = p.Counters[c].Init
	}
	// Signals first (so that the waits see every counter's total), then
	// the waits before the bodies and now and then one after the signals.
	for i, s := range slots {
		tk := schedule.Task{Name: fmt.Sprintf("t%d", i), Worker: schedule.Dynamic}
		if s.thread < workers {
			tk.Worker = int32(s.thread)
		}
		auditBody(t, 2*rapid.IntRange(0, 3).Draw(t, "region"), &tk)
		for c := range nc {
			mine := owner[c] == s.thread
			if !mine && rapid.IntRange(0, 14).Draw(t, "second") != 0 {
				continue
			}
			if rapid.IntRange(0, 2).Draw(t, "sig") == 0 {
				continue
			}
			relaxed := rapid.IntRange(0, 4).Draw(t, "srelaxed") == 0
			if relaxed && rapid.Bool().Draw(t, "relfence") {
				tk.After = append(tk.After, schedule.Step{Kind: schedule.Fence, Scope: auditScope(t, "fscope")})
			}
			n := uint64(rapid.IntRange(1, 2).Draw(t, "amount"))
			total[c] += n
			tk.After = append(tk.After, schedule.Step{Kind: schedule.Signal, Object: int32(c), Value: n, Scope: auditScope(t, "sscope"), Relaxed: relaxed})
		}
		p.Tasks = append(p.Tasks, tk)
	}
	threshold := func(c int, label string) uint64 {
		if total[c] > p.Counters[c].Init && rapid.IntRange(0, 7).Draw(t, label+"reach") > 0 {
			return uint64(rapid.IntRange(int(p.Counters[c].Init)+1, int(total[c])).Draw(t, label+"k"))
		}
		return uint64(rapid.IntRange(1, 4).Draw(t, label+"any"))
	}
	for i := range p.Tasks {
		tk := &p.Tasks[i]
		for range rapid.IntRange(0, 2).Draw(t, "waits") {
			c := rapid.IntRange(0, nc-1).Draw(t, "wc")
			if owner[c] == slots[i].thread && rapid.IntRange(0, 4).Draw(t, "ownwait") > 0 {
				continue // mostly no wait for one's own signals
			}
			st := schedule.Step{Kind: schedule.Wait, Object: int32(c), Value: threshold(c, "w"), Scope: auditScope(t, "wscope"), Relaxed: rapid.IntRange(0, 5).Draw(t, "wrelaxed") == 0}
			tk.Before = append(tk.Before, st)
			if st.Relaxed && rapid.Bool().Draw(t, "acqfence") {
				tk.Before = append(tk.Before, schedule.Step{Kind: schedule.Fence, Scope: auditScope(t, "fscope")})
			}
		}
		if rapid.IntRange(0, 4).Draw(t, "postwait") == 0 {
			c := rapid.IntRange(0, nc-1).Draw(t, "pc")
			tk.After = append(tk.After, schedule.Step{Kind: schedule.Wait, Object: int32(c), Value: threshold(c, "p"), Scope: schedule.ScopeGPU})
		}
	}
	return p
}

// partsProgram draws a program that splits into two or three parts sharing
// no counter, barrier or semaphore: each part a few workers in a chain of
// signals and waits, a barrier or a semaphore of its own, some parts with
// dynamic tasks, and idle workers (no tasks) between them; the parts' bodies
// touch one buffer, so that races between parts are possible.
func partsProgram(t *rapid.T) *schedule.Program {
	nParts := rapid.IntRange(2, 3).Draw(t, "parts")
	plain := rapid.Bool().Draw(t, "plain") // no dynamic tasks, no semaphores: the part clocks apply
	p := &schedule.Program{
		Name:    "parts",
		Buffers: auditBuffers(),
	}
	w := 0
	var dyns []schedule.Task
	for part := range nParts {
		if rapid.IntRange(0, 2).Draw(t, "idle") == 0 {
			w++ // an idle worker
		}
		size := rapid.IntRange(1, 2).Draw(t, "size")
		c := int32(len(p.Counters))
		p.Counters = append(p.Counters, schedule.Counter{Name: fmt.Sprintf("c%d", part), Width: 32})
		kind := rapid.IntRange(0, 2).Draw(t, "kind") // 0 chain, 1 barrier, 2 semaphore
		if plain && kind == 2 {
			kind = 0
		}
		var br, sem int32 = -1, -1
		if kind == 1 && size > 1 {
			br = int32(len(p.Barriers))
			p.Barriers = append(p.Barriers, schedule.Barrier{Name: fmt.Sprintf("br%d", part), Parties: size})
		}
		if kind == 2 {
			sem = int32(len(p.Semaphores))
			p.Semaphores = append(p.Semaphores, schedule.Semaphore{Name: fmt.Sprintf("s%d", part), Tokens: uint64(rapid.IntRange(0, 3).Draw(t, "tokens")&1 + 1&^rapid.IntRange(0, 3).Draw(t, "none"))})
		}
		signals := uint64(0)
		for i := range size {
			tk := schedule.Task{Name: fmt.Sprintf("p%dw%d", part, i), Worker: int32(w + i)}
			if i > 0 && rapid.IntRange(0, 3).Draw(t, "chainwait") > 0 {
				tk.Before = append(tk.Before, schedule.Step{Kind: schedule.Wait, Object: c, Value: uint64(rapid.IntRange(1, i).Draw(t, "k")), Scope: auditScope(t, "ws")})
			}
			if sem >= 0 && rapid.Bool().Draw(t, "acq") {
				tk.Before = append(tk.Before, schedule.Step{Kind: schedule.Acquire, Object: sem, Value: 1, Scope: auditScope(t, "as")})
			}
			auditBody(t, 2*part, &tk)
			if sem >= 0 && rapid.IntRange(0, 3).Draw(t, "rel") > 0 {
				tk.After = append(tk.After, schedule.Step{Kind: schedule.Release, Object: sem, Value: 1, Scope: auditScope(t, "rs")})
			}
			if br >= 0 && rapid.IntRange(0, 5).Draw(t, "sync") > 0 {
				tk.After = append(tk.After, schedule.Step{Kind: schedule.Sync, Object: br})
			}
			if rapid.IntRange(0, 4).Draw(t, "signal") > 0 {
				tk.After = append(tk.After, schedule.Step{Kind: schedule.Signal, Object: c, Value: 1, Scope: auditScope(t, "ss"), Relaxed: rapid.IntRange(0, 5).Draw(t, "relaxed") == 0})
				signals++
			}
			p.Tasks = append(p.Tasks, tk)
			if rapid.IntRange(0, 3).Draw(t, "second") == 0 {
				tk2 := schedule.Task{Name: fmt.Sprintf("p%dw%db", part, i), Worker: int32(w + i)}
				auditBody(t, 2*part, &tk2)
				p.Tasks = append(p.Tasks, tk2)
			}
		}
		if !plain && rapid.IntRange(0, 2).Draw(t, "hasdyn") == 0 {
			for d := range rapid.IntRange(1, 2).Draw(t, "ndyn") {
				tk := schedule.Task{Name: fmt.Sprintf("p%dd%d", part, d), Worker: schedule.Dynamic}
				if signals > 0 && rapid.Bool().Draw(t, "dwait") {
					tk.Before = append(tk.Before, schedule.Step{Kind: schedule.Wait, Object: c, Value: uint64(rapid.IntRange(1, int(signals)).Draw(t, "dk")), Scope: auditScope(t, "dws")})
				}
				if sem >= 0 && rapid.Bool().Draw(t, "dacq") {
					tk.Before = append(tk.Before, schedule.Step{Kind: schedule.Acquire, Object: sem, Value: 1, Scope: schedule.ScopeGPU})
					tk.After = append(tk.After, schedule.Step{Kind: schedule.Release, Object: sem, Value: 1, Scope: schedule.ScopeGPU})
				}
				auditBody(t, 2*part, &tk)
				if rapid.Bool().Draw(t, "dsig") {
					tk.After = append(tk.After, schedule.Step{Kind: schedule.Signal, Object: c, Value: 1, Scope: schedule.ScopeGPU})
				}
				dyns = append(dyns, tk)
			}
		}
		w += size
	}
	if rapid.IntRange(0, 2).Draw(t, "idletail") == 0 {
		w++
	}
	for _, d := range dyns {
		at := rapid.IntRange(0, len(p.Tasks)).Draw(t, "dynat")
		p.Tasks = slices.Insert(p.Tasks, at, d)
	}
	coop := rapid.IntRange(0, 3).Draw(t, "coop") > 0
	sms := w
	if !coop {
		sms = rapid.IntRange(1, w).Draw(t, "sms")
	}
	p.Launch = schedule.Launch{SMs: sms, PerSM: 1, Workers: w, Cooperative: coop}
	return p
}

// guardProgram draws dynamic tasks whose guards acquire semaphores (one
// semaphore twice now and then, at mixed scopes and amounts), pool
// semaphores taken around bodies, and static workers that release or
// acquire them and wait for the dynamic tasks' signals, on few workers
// (idle ones too) so that claimed tasks compete for them.
func guardProgram(t *rapid.T) *schedule.Program {
	workers := rapid.IntRange(1, 3).Draw(t, "workers")
	coop := rapid.Bool().Draw(t, "coop")
	sms := workers
	if !coop {
		sms = rapid.IntRange(1, workers).Draw(t, "sms")
	}
	p := &schedule.Program{
		Name:     "guards",
		Launch:   schedule.Launch{SMs: sms, PerSM: 1, Workers: workers, Cooperative: coop},
		Counters: []schedule.Counter{{Name: "c", Width: 32}},
		Buffers:  auditBuffers(),
	}
	nSem := rapid.IntRange(1, 2).Draw(t, "sems")
	for s := range nSem {
		p.Semaphores = append(p.Semaphores, schedule.Semaphore{Name: fmt.Sprintf("s%d", s), Tokens: uint64(rapid.IntRange(0, 3).Draw(t, "tokens"))})
	}
	acq := func(label string) schedule.Step {
		return schedule.Step{Kind: schedule.Acquire, Object: int32(rapid.IntRange(0, nSem-1).Draw(t, label+"s")), Value: uint64(rapid.IntRange(1, 2).Draw(t, label+"n")), Scope: auditScope(t, label+"scope")}
	}
	signals := 0
	for i := range rapid.IntRange(1, 3).Draw(t, "dynamic") {
		tk := schedule.Task{Name: fmt.Sprintf("d%d", i), Worker: schedule.Dynamic}
		if rapid.IntRange(0, 2).Draw(t, "gwait") == 0 {
			tk.Before = append(tk.Before, schedule.Step{Kind: schedule.Wait, Object: 0, Value: 1, Scope: schedule.ScopeGPU})
		}
		var held []schedule.Step
		for range rapid.IntRange(0, 2).Draw(t, "gacq") {
			a := acq("g")
			if len(held) == 1 && rapid.Bool().Draw(t, "same") {
				a.Object = held[0].Object // the same semaphore twice in one guard
			}
			tk.Before = append(tk.Before, a)
			held = append(held, a)
		}
		auditBody(t, 2*rapid.IntRange(0, 3).Draw(t, "region"), &tk)
		for j := len(held) - 1; j >= 0; j-- {
			if rapid.IntRange(0, 5).Draw(t, "keep") == 0 {
				continue // a missing release
			}
			h := held[j]
			tk.After = append(tk.After, schedule.Step{Kind: schedule.Release, Object: h.Object, Value: h.Value, Scope: auditScope(t, "rscope")})
		}
		if rapid.IntRange(0, 3).Draw(t, "late") == 0 {
			a := acq("l")
			tk.After = append(tk.After, a, schedule.Step{Kind: schedule.Release, Object: a.Object, Value: a.Value, Scope: schedule.ScopeGPU})
		}
		if rapid.Bool().Draw(t, "dsig") {
			tk.After = append(tk.After, schedule.Step{Kind: schedule.Signal, Object: 0, Value: 1, Scope: schedule.ScopeGPU})
			signals++
		}
		p.Tasks = append(p.Tasks, tk)
	}
	for w := range workers {
		if rapid.IntRange(0, 2).Draw(t, "idle") == 0 {
			continue
		}
		tk := schedule.Task{Name: fmt.Sprintf("w%d", w), Worker: int32(w)}
		switch rapid.IntRange(0, 3).Draw(t, "wshape") {
		case 0: // gives tokens
			tk.After = append(tk.After, schedule.Step{Kind: schedule.Release, Object: int32(rapid.IntRange(0, nSem-1).Draw(t, "ws")), Value: 1, Scope: auditScope(t, "wrs")})
		case 1: // critical section
			a := acq("w")
			tk.Before = append(tk.Before, a)
			tk.After = append(tk.After, schedule.Step{Kind: schedule.Release, Object: a.Object, Value: a.Value, Scope: schedule.ScopeGPU})
		case 2: // waits for dynamic tasks
			if signals > 0 {
				tk.Before = append(tk.Before, schedule.Step{Kind: schedule.Wait, Object: 0, Value: uint64(rapid.IntRange(1, signals).Draw(t, "wk")), Scope: schedule.ScopeGPU})
			}
		}
		auditBody(t, 2*rapid.IntRange(0, 3).Draw(t, "region"), &tk)
		if rapid.IntRange(0, 2).Draw(t, "wsig") == 0 {
			tk.After = append(tk.After, schedule.Step{Kind: schedule.Signal, Object: 0, Value: 1, Scope: schedule.ScopeGPU})
		}
		p.Tasks = append(p.Tasks, tk)
	}
	if rapid.Bool().Draw(t, "shuffle") {
		slices.Reverse(p.Tasks)
	}
	return p
}

// auditCheck holds one program to the oracles (disagreement) and, where the
// definitional checker decides it, its race codes to verify's.
func auditCheck(t *rapid.T, p *schedule.Program, tally map[string]int) {
	if err := p.Validate(); err != nil {
		tally["invalid"]++
		return
	}
	tally["programs"]++
	shortcutTally(p, tally)
	d, err := disagreement(p, tally)
	if err != nil {
		t.Fatal(err)
	}
	if d == "" {
		d = raceCodeDisagreement(p, tally)
	}
	if d != "" {
		js, _ := schedule.Marshal(p)
		t.Fatalf("%s\n%s", d, strings.TrimSpace(string(js)))
	}
}

// shortcutTally counts the programs on which the one-thread counter joins
// and the part clocks apply, so that the generators can be seen to reach
// them.
func shortcutTally(p *schedule.Program, tally map[string]int) {
	f := lowerForm(p)
	f.linkPoints()
	for _, hb := range []bool{false, true} {
		cp := newClockPass(f, hb)
		if cp == nil {
			continue
		}
		if cp.soloAdd != nil {
			tally[fmt.Sprintf("solo joins (hb %v)", hb)]++
		}
		if hb && slices.ContainsFunc(cp.hi, func(h int32) bool { return int(h) < cp.K }) {
			tally["part clocks"]++
		}
	}
}

// raceCodeDisagreement replays the witnesses of a run without
// Config.Sanity and compares the race codes verify reports with the
// definitional checker's (deadlock codes are a family-level contract).
func raceCodeDisagreement(p *schedule.Program, tally map[string]int) string {
	// Without Config.Sanity, as the CLI runs: every witness still replays.
	res, err := Run(context.Background(), p, Config{MaxStates: diffMaxStates})
	if err != nil {
		return err.Error()
	}
	if err := sanity(p, res); err != nil {
		return err.Error()
	}
	if res.Verdict == Inconclusive {
		return ""
	}
	var got []string
	for _, f := range res.Findings {
		if Family(f.Code) == "race" {
			got = append(got, f.Code)
		}
	}
	slices.Sort(got)
	got = slices.Compact(got)
	// The definitional checker judges the race codes of programs without
	// semaphores; the explorer (run a second time here) those with them.
	if len(p.Semaphores) > 0 {
		if _, efs, ok := explorerFamilies(p); ok {
			var ex []string
			for _, f := range efs {
				if Family(f.Code) == "race" {
					ex = append(ex, f.Code)
				}
			}
			slices.Sort(ex)
			tally["race codes compared with the explorer"]++
			if ex = slices.Compact(ex); !slices.Equal(got, ex) {
				return fmt.Sprintf("race codes: verify %v, explorer %v", got, ex)
			}
		}
	}
	want, err := defcheck.Codes(p)
	switch {
	case errors.Is(err, defcheck.ErrSemaphores), errors.Is(err, defcheck.ErrDispatch), errors.Is(err, defcheck.ErrBudget):
		return ""
	case err != nil:
		return err.Error()
	}
	want = slices.DeleteFunc(want, func(c string) bool { return Family(c) != "race" })
	tally["race codes compared"]++
	if !slices.Equal(got, want) {
		return fmt.Sprintf("race codes: verify %v, definitional checker %v", got, want)
	}
	return ""
}

func auditGenerator(t *testing.T, gen func(*rapid.T) *schedule.Program, need ...string) {
	tally := map[string]int{}
	rapid.Check(t, func(rt *rapid.T) { auditCheck(rt, gen(rt), tally) })
	t.Logf("tally: %v", tally)
	for _, k := range need {
		if tally[k] == 0 {
			t.Errorf("no program reached %q: %v", k, tally)
		}
	}
}

// TestAuditSolo: rings and credit loops with one adder per counter.
func TestAuditSolo(t *testing.T) {
	auditGenerator(t, soloProgram, "solo joins (hb true)", "solo joins (hb false)", "explorer compared", "brute compared", "race codes compared", "unsafe", "safe")
}

// TestAuditParts: programs of independent parts with idle workers.
func TestAuditParts(t *testing.T) {
	auditGenerator(t, partsProgram, "part clocks", "explorer compared", "brute compared", "unsafe", "safe")
}

// TestAuditGuards: semaphores in dynamic tasks' guards.
func TestAuditGuards(t *testing.T) {
	auditGenerator(t, guardProgram, "explorer compared", "brute compared", "unsafe", "safe")
}

// ringProgram draws a pipeline of P stages on P workers over N items with
// S slots between neighbouring stages: stage i waits for item n from
// stage i-1 (full[i-1] >= n+1) and for a free slot (empty[i] >= n-S+1),
// so every counter has one adder. A few edits are drawn on top (an
// off-by-one threshold, relaxed or cta-scoped steps with or without their
// fences, a stage's tasks made dynamic, a dynamic reader of the last
// slots, a second adder): each can break the pipeline or leave it safe.
func ringProgram(t *rapid.T) *schedule.Program { return ringsProgram(t, 1, 3, 3, 2) }

// ringsProgram draws up to R independent rings of ringProgram's shape
// (each its own part), of at most P stages, N items and S slots.
func ringsProgram(t *rapid.T, R, maxP, maxN, maxS int) *schedule.Program {
	rings := rapid.IntRange(1, R).Draw(t, "rings")
	type ring struct{ P, N, S, w, c, off int }
	rs := make([]ring, rings)
	workers, size := 0, 0
	for r := range rs {
		P := rapid.IntRange(2, maxP).Draw(t, "stages")
		rs[r] = ring{P: P, N: rapid.IntRange(2, maxN).Draw(t, "items"), S: rapid.IntRange(1, maxS).Draw(t, "slots"), w: workers, c: 2 * (workers - r), off: size}
		workers += P
		size += (P - 1) * rs[r].S
	}
	coop := rapid.IntRange(0, 3).Draw(t, "coop") > 0
	sms := workers
	if !coop {
		sms = rapid.IntRange(1, workers).Draw(t, "sms")
	}
	p := &schedule.Program{
		Name:   "ring",
		Launch: schedule.Launch{SMs: sms, PerSM: 1, Workers: workers, Cooperative: coop},
		Buffers: []schedule.Buffer{
			{Name: "in", Kind: schedule.KindInput, Size: uint64(max(8, maxN)), Arena: schedule.NoArena},
			{Name: "b", Kind: schedule.KindScratch, Size: uint64(max(8, size)), Arena: schedule.NoArena},
		},
	}
	for _, rg := range rs {
		for i := 0; i < rg.P-1; i++ {
			p.Counters = append(p.Counters, schedule.Counter{Name: fmt.Sprintf("full%d", rg.c/2+i), Width: 32}, schedule.Counter{Name: fmt.Sprintf("empty%d", rg.c/2+i), Width: 32})
		}
	}
	for _, rg := range rs {
		ringTasks(t, p, rg.P, rg.N, rg.S, rg.w, rg.c, rg.off)
	}
	if rapid.IntRange(0, 39).Draw(t, "second") == 17 {
		// A second adder to one counter.
		i := rapid.IntRange(0, len(p.Tasks)-1).Draw(t, "sa")
		p.Tasks[i].After = append(p.Tasks[i].After, schedule.Step{Kind: schedule.Signal, Object: int32(rapid.IntRange(0, len(p.Counters)-1).Draw(t, "sc")), Value: 1, Scope: schedule.ScopeGPU})
	}
	return p
}

// ringTasks appends the tasks of one ring: P stages on workers w.., its
// counters from c on, its slots at off in the scratch buffer.
func ringTasks(t *rapid.T, p *schedule.Program, P, N, S, w, c, off int) {
	full := func(i int) int32 { return int32(c + 2*i) }
	empty := func(i int) int32 { return int32(c + 2*i + 1) }
	edit := func(label string) bool { return rapid.IntRange(0, 39).Draw(t, label) == 17 } // rapid draws the bounds often: a middle value is rare
	wait := func(c int32, k int) []schedule.Step {
		if edit("offbyone") {
			k--
		}
		if k <= 0 {
			return nil
		}
		s := schedule.Step{Kind: schedule.Wait, Object: c, Value: uint64(k), Scope: schedule.ScopeGPU}
		if edit("wcta") {
			s.Scope = schedule.ScopeCTA
		}
		if edit("wrelaxed") {
			s.Relaxed = true
			if rapid.Bool().Draw(t, "wfence") {
				return []schedule.Step{s, {Kind: schedule.Fence, Scope: auditScope(t, "wfs")}}
			}
		}
		return []schedule.Step{s}
	}
	signal := func(c int32) []schedule.Step {
		s := schedule.Step{Kind: schedule.Signal, Object: c, Value: 1, Scope: schedule.ScopeGPU}
		if edit("scta") {
			s.Scope = schedule.ScopeCTA
		}
		if edit("srelaxed") {
			s.Relaxed = true
			if rapid.Bool().Draw(t, "sfence") {
				return []schedule.Step{{Kind: schedule.Fence, Scope: auditScope(t, "sfs")}, s}
			}
		}
		return []schedule.Step{s}
	}
	dynStage := -1
	if rapid.IntRange(0, 4).Draw(t, "dynstage") == 0 {
		dynStage = rapid.IntRange(0, P-1).Draw(t, "which")
	}
	// Now and then the static stages sync on a barrier of their own after
	// one item (one of them may skip it: a deadlock).
	syncAt, skipSync, br := -1, -1, int32(len(p.Barriers))
	if rapid.IntRange(0, 3).Draw(t, "barrier") == 0 {
		syncAt, skipSync = rapid.IntRange(0, N-1).Draw(t, "syncat"), rapid.IntRange(0, P-1).Draw(t, "skip")
		parties := P
		if dynStage >= 0 {
			parties--
		}
		p.Barriers = append(p.Barriers, schedule.Barrier{Name: fmt.Sprintf("br%d", w), Parties: parties})
	}
	task := func(i, n int) schedule.Task {
		tk := schedule.Task{Name: fmt.Sprintf("s%dn%d", w+i, n), Worker: int32(w + i)}
		if i == dynStage {
			tk.Worker = schedule.Dynamic
		}
		if i > 0 {
			tk.Before = append(tk.Before, wait(full(i-1), n+1)...)
			tk.Reads = append(tk.Reads, schedule.Access{Buffer: 1, Offset: int64(off + (i-1)*S + n%S), Length: 1})
		} else {
			tk.Reads = append(tk.Reads, schedule.Access{Buffer: 0, Offset: int64(n), Length: 1})
		}
		if i < P-1 {
			if n >= S {
				tk.Before = append(tk.Before, wait(empty(i), n-S+1)...)
			}
			tk.Writes = append(tk.Writes, schedule.Access{Buffer: 1, Offset: int64(off + i*S + n%S), Length: 1})
		}
		if i > 0 {
			tk.After = append(tk.After, signal(empty(i-1))...)
		}
		if i < P-1 {
			tk.After = append(tk.After, signal(full(i))...)
		}
		if n == syncAt && i != dynStage && (i != skipSync || !edit("skipsync")) {
			tk.After = append(tk.After, schedule.Step{Kind: schedule.Sync, Object: br})
		}
		return tk
	}
	if rapid.Bool().Draw(t, "itemmajor") {
		for n := range N {
			for i := range P {
				p.Tasks = append(p.Tasks, task(i, n))
			}
		}
	} else {
		for i := range P {
			for n := range N {
				p.Tasks = append(p.Tasks, task(i, n))
			}
		}
	}
	if edit("reader") || rapid.IntRange(0, 5).Draw(t, "reader2") == 0 {
		// A dynamic reader of stage P-2's output, waiting for it partly.
		n := rapid.IntRange(0, N-1).Draw(t, "rn")
		tk := schedule.Task{Name: fmt.Sprintf("reader%d", w), Worker: schedule.Dynamic}
		tk.Before = append(tk.Before, wait(full(P-2), rapid.IntRange(n+1, N).Draw(t, "rk"))...)
		tk.Reads = []schedule.Access{{Buffer: 1, Offset: int64(off + (P-2)*S + n%S), Length: 1}}
		p.Tasks = append(p.Tasks, tk)
	}
}

// TestAuditRing: pipelines of one-adder counters and their edits.
func TestAuditRing(t *testing.T) {
	auditGenerator(t, ringProgram, "solo joins (hb true)", "explorer compared", "brute compared", "race codes compared", "unsafe", "safe")
}

// manyProgram draws many workers with few ops: 4 to 7 workers, most with
// one task of at most two steps or none at all, dynamic tasks waiting for
// them, counters mostly with one adder, and launches below capacity now
// and then (workers that start only once others exit order execution
// without ordering memory).
func manyProgram(t *rapid.T) *schedule.Program {
	workers := rapid.IntRange(4, 7).Draw(t, "workers")
	coop := rapid.Bool().Draw(t, "coop")
	sms := workers
	if !coop {
		sms = rapid.IntRange(1, workers).Draw(t, "sms")
	}
	nc := rapid.IntRange(1, 3).Draw(t, "counters")
	p := &schedule.Program{
		Name:    "many",
		Launch:  schedule.Launch{SMs: sms, PerSM: 1, Workers: workers, Cooperative: coop},
		Buffers: auditBuffers(),
	}
	for c := range nc {
		p.Counters = append(p.Counters, schedule.Counter{Name: fmt.Sprintf("c%d", c), Width: 32})
	}
	total := make([]int, nc)
	for w := range workers {
		if rapid.IntRange(0, 2).Draw(t, "idle") == 1 {
			continue
		}
		tk := schedule.Task{Name: fmt.Sprintf("w%d", w), Worker: int32(w)}
		auditBody(t, 2*rapid.IntRange(0, 3).Draw(t, "region"), &tk)
		if c := rapid.IntRange(-1, nc-1).Draw(t, "sc"); c >= 0 {
			tk.After = append(tk.After, schedule.Step{Kind: schedule.Signal, Object: int32(c), Value: 1, Scope: auditScope(t, "ss"), Relaxed: rapid.IntRange(0, 6).Draw(t, "rel") == 3})
			total[c]++
		}
		p.Tasks = append(p.Tasks, tk)
	}
	for i := range p.Tasks {
		if c := rapid.IntRange(-1, nc-1).Draw(t, "wc"); c >= 0 && total[c] > 0 && rapid.Bool().Draw(t, "wwait") {
			p.Tasks[i].Before = append(p.Tasks[i].Before, schedule.Step{Kind: schedule.Wait, Object: int32(c), Value: uint64(rapid.IntRange(1, total[c]).Draw(t, "k")), Scope: auditScope(t, "ws")})
		}
	}
	for d := range rapid.IntRange(0, 3).Draw(t, "dynamic") {
		tk := schedule.Task{Name: fmt.Sprintf("d%d", d), Worker: schedule.Dynamic}
		if c := rapid.IntRange(0, nc-1).Draw(t, "dc"); total[c] > 0 && rapid.IntRange(0, 3).Draw(t, "dwait") > 0 {
			tk.Before = append(tk.Before, schedule.Step{Kind: schedule.Wait, Object: int32(c), Value: uint64(rapid.IntRange(1, total[c]).Draw(t, "dk")), Scope: auditScope(t, "dws")})
		}
		auditBody(t, 2*rapid.IntRange(0, 3).Draw(t, "region"), &tk)
		if rapid.Bool().Draw(t, "dsig") {
			c := rapid.IntRange(0, nc-1).Draw(t, "dsc")
			tk.After = append(tk.After, schedule.Step{Kind: schedule.Signal, Object: int32(c), Value: 1, Scope: schedule.ScopeGPU})
		}
		if rapid.IntRange(0, 4).Draw(t, "dpost") == 2 {
			c := rapid.IntRange(0, nc-1).Draw(t, "dpc")
			tk.After = append(tk.After, schedule.Step{Kind: schedule.Wait, Object: int32(c), Value: 1, Scope: schedule.ScopeGPU})
		}
		at := rapid.IntRange(0, len(p.Tasks)).Draw(t, "at")
		p.Tasks = slices.Insert(p.Tasks, at, tk)
	}
	return p
}

// TestAuditMany: many workers with few ops, idle ones among them.
func TestAuditMany(t *testing.T) {
	auditGenerator(t, manyProgram, "explorer compared", "brute compared", "race codes compared", "unsafe", "safe")
}

// TestAuditFewChains runs the one-adder generators with one clock chain
// for all dynamic threads: the proof clocks reuse it for each dynamic
// thread in turn and must prove less, never wrongly.
func TestAuditFewChains(t *testing.T) {
	defer func(n int) { maxDynamicChains = n }(maxDynamicChains)
	maxDynamicChains = 1
	mixed := func(t *rapid.T) *schedule.Program {
		switch rapid.IntRange(0, 2).Draw(t, "generator") {
		case 0:
			return soloProgram(t)
		case 1:
			return ringProgram(t)
		}
		return manyProgram(t)
	}
	auditGenerator(t, mixed, "explorer compared", "solo joins (hb true)", "unsafe", "safe")
}

// auditCodes runs verify and returns its sorted codes, or ok=false when it
// is inconclusive; every witness must replay.
func auditCodes(t *rapid.T, p *schedule.Program) ([]string, bool) {
	res, err := Run(context.Background(), p, Config{Sanity: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict == Inconclusive {
		return nil, false
	}
	var out []string
	for _, f := range res.Findings {
		out = append(out, f.Code)
	}
	slices.Sort(out)
	return slices.Compact(out), true
}

// TestAuditShortcutsMetamorphic holds verify with the one-thread counter
// joins and the part clocks to verify without them (and with one clock
// chain for dynamic threads) on pipelines too large for the explorer:
// several independent rings of up to 6 stages over up to 5 items. Every
// variant is exact, so they must report the same codes.
func TestAuditShortcutsMetamorphic(t *testing.T) {
	tally := map[string]int{}
	rapid.Check(t, func(rt *rapid.T) {
		p := ringsProgram(rt, 3, 6, 5, 3)
		if err := p.Validate(); err != nil {
			rt.Fatal(err)
		}
		shortcutTally(p, tally)
		got, ok := auditCodes(rt, p)
		if !ok {
			tally["inconclusive"]++
			return
		}
		if len(got) == 0 {
			tally["safe"]++
		}
		clockSoloJoins, clockParts = false, false
		want, ok2 := auditCodes(rt, p)
		clockSoloJoins, clockParts = true, true
		defer func(n int) { maxDynamicChains = n }(maxDynamicChains)
		maxDynamicChains = 1
		few, ok3 := auditCodes(rt, p)
		maxDynamicChains = 2048
		if ok2 {
			tally["compared without the shortcuts"]++
			if !slices.Equal(got, want) {
				js, _ := schedule.Marshal(p)
				rt.Fatalf("with the shortcuts %v, without %v\n%s", got, want, js)
			}
		}
		if ok3 && !slices.Equal(got, few) {
			js, _ := schedule.Marshal(p)
			rt.Fatalf("with the dynamic chains %v, with one %v\n%s", got, few, js)
		}
	})
	clockSoloJoins, clockParts = true, true
	t.Logf("tally: %v", tally)
	if tally["compared without the shortcuts"] == 0 || tally["safe"] == 0 || tally["part clocks"] == 0 || tally["solo joins (hb true)"] == 0 {
		t.Errorf("the shortcuts were not exercised: %v", tally)
	}
}

// fanProgram draws one or two static producers, each writing a byte of
// its own per item and signalling its own counter after it, and two to
// four dynamic consumers that wait for an item (the counter reaching k)
// and read its byte, now and then one byte too far; some consumers signal
// a done counter that a static collector waits for (and for every item)
// before it overwrites the bytes. Every counter but done has one adder, and the consumers'
// clock chains are placed and reused as they finish.
func fanProgram(t *rapid.T) *schedule.Program {
	producers := rapid.IntRange(1, 2).Draw(t, "producers")
	items := rapid.IntRange(2, 3).Draw(t, "items")
	workers := producers + 1
	coop := rapid.IntRange(0, 3).Draw(t, "coop") > 0
	sms := workers
	if !coop {
		sms = rapid.IntRange(1, workers).Draw(t, "sms")
	}
	p := &schedule.Program{
		Name:   "fan",
		Launch: schedule.Launch{SMs: sms, PerSM: 1, Workers: workers, Cooperative: coop},
		Buffers: []schedule.Buffer{
			{Name: "in", Kind: schedule.KindInput, Size: 8, Arena: schedule.NoArena},
			{Name: "b", Kind: schedule.KindScratch, Size: uint64(producers * 4), Arena: schedule.NoArena},
		},
	}
	for q := range producers {
		p.Counters = append(p.Counters, schedule.Counter{Name: fmt.Sprintf("c%d", q), Width: 32})
	}
	done := int32(len(p.Counters))
	p.Counters = append(p.Counters, schedule.Counter{Name: "done", Width: 32})
	rare := func(label string) bool { return rapid.IntRange(0, 19).Draw(t, label) == 9 }
	for q := range producers {
		for n := range items {
			tk := schedule.Task{Name: fmt.Sprintf("p%dn%d", q, n), Worker: int32(q)}
			tk.Reads = []schedule.Access{{Buffer: 0, Offset: int64(n), Length: 1}}
			tk.Writes = []schedule.Access{{Buffer: 1, Offset: int64(q*4 + n), Length: 1}}
			if rare("fence") {
				tk.After = append(tk.After, schedule.Step{Kind: schedule.Fence, Scope: schedule.ScopeGPU})
			}
			tk.After = append(tk.After, schedule.Step{Kind: schedule.Signal, Object: int32(q), Value: 1, Scope: schedule.ScopeGPU, Relaxed: rare("relaxed")})
			p.Tasks = append(p.Tasks, tk)
		}
	}
	signals := 0
	for d := range rapid.IntRange(2, 4).Draw(t, "consumers") {
		q := rapid.IntRange(0, producers-1).Draw(t, "q")
		k := rapid.IntRange(1, items).Draw(t, "k")
		off := k - 1
		if rare("far") {
			off = min(k, 3)
		}
		tk := schedule.Task{Name: fmt.Sprintf("d%d", d), Worker: schedule.Dynamic}
		tk.Before = []schedule.Step{{Kind: schedule.Wait, Object: int32(q), Value: uint64(k), Scope: schedule.ScopeGPU}}
		if rare("cta") {
			tk.Before[0].Scope = schedule.ScopeCTA
		}
		tk.Reads = []schedule.Access{{Buffer: 1, Offset: int64(q*4 + off), Length: 1}}
		if !rare("nosignal") {
			tk.After = []schedule.Step{{Kind: schedule.Signal, Object: done, Value: 1, Scope: schedule.ScopeGPU}}
			signals++
		}
		at := rapid.IntRange(0, len(p.Tasks)).Draw(t, "at")
		p.Tasks = slices.Insert(p.Tasks, at, tk)
	}
	col := schedule.Task{Name: "collect", Worker: int32(producers)}
	if signals > 0 {
		k := signals
		if rare("early") {
			k--
		}
		if k > 0 {
			col.Before = []schedule.Step{{Kind: schedule.Wait, Object: done, Value: uint64(k), Scope: schedule.ScopeGPU}}
		}
	}
	for q := range producers {
		if !rare("noprod") {
			col.Before = append(col.Before, schedule.Step{Kind: schedule.Wait, Object: int32(q), Value: uint64(items), Scope: schedule.ScopeGPU})
		}
	}
	if rapid.Bool().Draw(t, "overwrite") {
		col.Writes = []schedule.Access{{Buffer: 1, Offset: 0, Length: uint64(producers * 4)}}
	}
	p.Tasks = append(p.Tasks, col)
	return p
}

// TestAuditFan: static producers and dynamic consumers of one-adder
// counters.
func TestAuditFan(t *testing.T) {
	auditGenerator(t, fanProgram, "solo joins (hb true)", "explorer compared", "race codes compared", "unsafe", "safe")
}

// shifted draws a program of gen and moves its counters up to just below
// their width's limit (init and every wait threshold raised by the same
// amount; 32-bit counters widened to 64 bits now and then): the one-thread
// joins' sums of adds meet overflow and saturation there.
func shifted(gen func(*rapid.T) *schedule.Program) func(*rapid.T) *schedule.Program {
	return func(t *rapid.T) *schedule.Program {
		p := gen(t)
		for c := range p.Counters {
			ct := &p.Counters[c]
			if rapid.Bool().Draw(t, "wide") {
				ct.Width = 64
			}
			base := ct.Max() - uint64(rapid.IntRange(0, 6).Draw(t, "room"))
			base -= ct.Init
			ct.Init += base
			for i := range p.Tasks {
				for _, list := range [][]schedule.Step{p.Tasks[i].Before, p.Tasks[i].After} {
					for j := range list {
						if s := &list[j]; s.Kind == schedule.Wait && int(s.Object) == c {
							s.Value = satAdd(s.Value, base)
							s.Value = min(s.Value, ct.Max())
						}
					}
				}
			}
		}
		return p
	}
}

// TestAuditShifted: the one-adder generators near the counters' limits.
func TestAuditShifted(t *testing.T) {
	mixed := func(t *rapid.T) *schedule.Program {
		if rapid.Bool().Draw(t, "ring") {
			return ringProgram(t)
		}
		return soloProgram(t)
	}
	auditGenerator(t, shifted(mixed), "solo joins (hb true)", "explorer compared", "unsafe", "safe")
}

// TestAuditSaturatedJoin: a wait for 2^64-1 on a counter whose adds
// saturate it does not need every add (the first one already lifts the
// value there), so it joins no clock of the later add: the read after it
// races with that add's task's write (was: all-join on the saturated
// total, the race missed beside the counter-overflow).
func TestAuditSaturatedJoin(t *testing.T) {
	p := &schedule.Program{
		Name:     "saturated",
		Launch:   schedule.Launch{SMs: 2, PerSM: 1, Workers: 2, Cooperative: true},
		Counters: []schedule.Counter{{Name: "c", Init: 1<<64 - 2, Width: 64}},
		Buffers:  auditBuffers(),
		Tasks: []schedule.Task{
			{Name: "a", Worker: 0, After: []schedule.Step{{Kind: schedule.Signal, Object: 0, Value: 1}}},
			{Name: "b", Worker: 0, Writes: []schedule.Access{{Buffer: 1, Length: 1}}, After: []schedule.Step{{Kind: schedule.Signal, Object: 0, Value: 1}}},
			{Name: "c", Worker: 1, Before: []schedule.Step{{Kind: schedule.Wait, Object: 0, Value: 1<<64 - 1}}, Reads: []schedule.Access{{Buffer: 1, Length: 1}}},
		},
	}
	for _, q := range []*schedule.Program{p} {
		res, err := Run(context.Background(), q, Config{Sanity: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := families(res); !slices.Equal(got, []string{"counter-overflow", "race", "uninitialized-read"}) {
			t.Errorf("%s: families %v, want [counter-overflow race uninitialized-read]", q.Name, got)
		}
		if d, err := disagreement(q, map[string]int{}); err != nil || d != "" {
			t.Errorf("%s: %v %s", q.Name, err, d)
		}
	}
}

// TestAuditOverflowWitnesses: where several counters overflow, each
// counter-overflow finding's witness ends with the signal that carries
// its own counter past its width (it used to be the run to its end,
// minimised and located at whichever counter overflowed first).
func TestAuditOverflowWitnesses(t *testing.T) {
	p := &schedule.Program{
		Name:   "overflows",
		Launch: schedule.Launch{SMs: 2, PerSM: 1, Workers: 2, Cooperative: true},
		Counters: []schedule.Counter{
			{Name: "a", Init: 1<<32 - 1, Width: 32},
			{Name: "b", Init: 1<<32 - 1, Width: 32},
			{Name: "w", Init: 1<<64 - 1, Width: 64},
			{Name: "go", Width: 32},
		},
		Tasks: []schedule.Task{
			{Name: "t0", Worker: 0, After: []schedule.Step{{Kind: schedule.Signal, Object: 0, Value: 1}, {Kind: schedule.Signal, Object: 1, Value: 1}, {Kind: schedule.Signal, Object: 3, Value: 1}}},
			{Name: "t1", Worker: 1, Before: []schedule.Step{{Kind: schedule.Wait, Object: 3, Value: 1}}, After: []schedule.Step{{Kind: schedule.Signal, Object: 2, Value: 1}}},
		},
	}
	res, err := Run(context.Background(), p, Config{Sanity: true})
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, f := range res.Findings {
		if f.Code != CodeCounterOverflow {
			continue
		}
		name := strings.TrimSuffix(strings.Fields(f.Message)[1], "'s")
		c := slices.IndexFunc(p.Counters, func(k schedule.Counter) bool { return k.Name == name })
		m, err := schedule.NewMachine(p)
		if err != nil || c < 0 || len(f.Witness) == 0 {
			t.Fatalf("%s: counter %q, witness %v, %v", f.Message, name, f.Witness, err)
		}
		for _, e := range f.Witness {
			if err := m.Step(e); err != nil {
				t.Fatalf("%s: %v", f.Message, err)
			}
		}
		last := f.Witness[len(f.Witness)-1]
		op := m.Form().Threads[last.Thread].Ops[last.Step]
		if !m.Overflowed[c] || op.Kind != schedule.OpSignal || int(op.Object) != c {
			t.Errorf("%s: the witness ends with %v on object %d (overflowed: %v), want the signal overflowing %s", f.Message, op.Kind, op.Object, m.Overflowed, name)
		}
		seen++
	}
	if seen != 3 {
		t.Errorf("%d counter-overflow findings, want 3: %v", seen, res.Findings)
	}
}
