package mutate

import (
	"slices"

	"github.com/megaproof/megaproof/schedule"
)

// dropWait removes one counter wait.
//
// Class: missing dependency — a consumer no longer waits for its producer.
// Source: AutoMegaKernel E2 "drop_wait" class and its §2.3 witness
// large_model_race_skipped (swiglu no longer waits for gate); F18 (latent
// races hidden by timing). Expect: race, uninitialized-read; safe when the
// wait was redundant (implied by program order or another wait).
func dropWait() *Operator {
	return stepOp("drop-wait",
		"missing dependency: one wait removed",
		"AMK E2 drop_wait, AMK §2.3 large_model_race_skipped; F18",
		[]string{"race", "uninitialized-read"},
		kindIs(schedule.Wait),
		removeStep)
}

// lowerThreshold lowers one wait threshold k to a seed-chosen value in
// [1, k).
//
// Class: partial join — a consumer proceeds after some but not all of its
// producers. Source: AutoMegaKernel E2 "partial_shared" (all-join N → k,
// 1<k<N; every one a real race its oracle missed), F4 read backwards
// (expected count wrong for some shapes). Expect: race, uninitialized-read;
// safe when the remaining signals are ordered by other means.
func lowerThreshold() *Operator {
	return stepOp("lower-threshold",
		"partial join: a wait threshold lowered below the number of producers",
		"AMK E2 partial_shared; F4",
		[]string{"race", "uninitialized-read"},
		func(_ *schedule.Program, _ stepRef, s schedule.Step) bool {
			return s.Kind == schedule.Wait && s.Value >= 2
		},
		func(q *schedule.Program, ref stepRef, r *rng) error {
			s := ref.step(q)
			s.Value = 1 + r.below(s.Value-1)
			return nil
		})
}

// raiseThreshold sets one wait threshold to one past the largest value its
// counter can reach (init plus every signal of the program). Waits that are
// already unreachable are not sites.
//
// Class: phantom producer — the threshold counts work that is never
// emitted. Source: F4 (fleet-chiplet PR#6 split-KV chunks not dispatched,
// Hazy 70B pre-credit for padding slots). Expect: deadlock.unsatisfiable.
// Not applicable when the counter's width cannot hold that value.
func raiseThreshold() *Operator {
	pred := func(p *schedule.Program) stepPred {
		st := counterStats(p)
		return func(p *schedule.Program, _ stepRef, s schedule.Step) bool {
			c := s.Object
			return s.Kind == schedule.Wait && counterOK(p, c) && s.Value <= st[c].total && st[c].total < p.Counters[c].Max()
		}
	}
	return newOp("raise-threshold",
		"phantom producer: a wait threshold beyond every reachable counter value",
		"F4",
		[]string{"deadlock.unsatisfiable"},
		func(p *schedule.Program) int { return countSteps(p, pred(p)) },
		func(q *schedule.Program, site int, _ *rng) error {
			ref, ok := nthStep(q, pred(q), site)
			if !ok {
				return notApplicable("no step site %d", site)
			}
			s := ref.step(q)
			s.Value = counterTotal(q, s.Object) + 1
			return nil
		})
}

// counterTotal is init plus every signal amount on counter c, saturating.
func counterTotal(p *schedule.Program, c int32) uint64 {
	total := p.Counters[c].Init
	eachStep(p, func(_ stepRef, s schedule.Step) bool {
		if s.Kind == schedule.Signal && s.Object == c {
			total = satAdd(total, s.Value)
		}
		return true
	})
	return total
}

// reusePhaseThreshold makes a later phase's wait on a shared counter use an
// earlier phase's threshold: the wait's threshold becomes one of the
// strictly smaller thresholds other waits use on the same counter (for
// about half of the seeds the nearest one, for the others any of them).
//
// Class: counter reused across phases without scaling the targets (missing
// generation). Source: F8 (NVIDIA/cuml#458, tile-ai/tilelang PR#2319:
// reusable counter without generation), F9 (late phase reset). Expect:
// race, uninitialized-read.
func reusePhaseThreshold() *Operator {
	// A wait is a site when some other wait on its counter has a smaller
	// threshold, i.e. when its threshold exceeds the counter's smallest one.
	pred := func(p *schedule.Program) stepPred {
		st := counterStats(p)
		return func(p *schedule.Program, _ stepRef, s schedule.Step) bool {
			return s.Kind == schedule.Wait && counterOK(p, s.Object) && s.Value > st[s.Object].minWait
		}
	}
	return newOp("reuse-phase-threshold",
		"phase counter reuse: a later phase waits for an earlier phase's threshold",
		"F8, F9",
		[]string{"race", "uninitialized-read"},
		func(p *schedule.Program) int { return countSteps(p, pred(p)) },
		func(q *schedule.Program, site int, r *rng) error {
			ref, ok := nthStep(q, pred(q), site)
			if !ok {
				return notApplicable("no step site %d", site)
			}
			s := ref.step(q)
			var lower []uint64
			eachStep(q, func(_ stepRef, o schedule.Step) bool {
				if o.Kind == schedule.Wait && o.Object == s.Object && o.Value < s.Value {
					lower = append(lower, o.Value)
				}
				return true
			})
			slices.Sort(lower)
			lower = slices.Compact(lower)
			if r.next()%2 == 0 {
				s.Value = lower[len(lower)-1]
			} else {
				s.Value = lower[r.intn(len(lower))]
			}
			return nil
		})
}

// dropSignal removes one counter signal.
//
// Class: phantom producer / lost increment — a producer that never signals.
// Source: F4 (split-KV chunks not dispatched), F14 (role-divergent
// termination: the releaser exits). Expect: deadlock.unsatisfiable; safe
// when the counter had surplus increments, race when a partial wait then
// passes without the dropped producer's data being ordered.
func dropSignal() *Operator {
	return stepOp("drop-signal",
		"lost producer: one signal removed",
		"F4, F14",
		[]string{"deadlock.unsatisfiable", "deadlock"},
		kindIs(schedule.Signal),
		removeStep)
}

// duplicateSignal repeats one signal right after itself.
//
// Class: double increment — a waiter's threshold is reached before all of
// its producers have finished. Source: the inferred Hazy `%smid` hazard
// of docs/FAULTS.md (a queue re-run on a freed SM double increments), F8 (a fast participant re-arrives), F10 (two launches share
// counters). Expect: race, uninitialized-read; counter-overflow near the
// width.
func duplicateSignal() *Operator {
	return stepOp("duplicate-signal",
		"double increment: one signal repeated",
		"Hazy %smid re-run (inferred); F8, F10",
		[]string{"race", "uninitialized-read", "counter-overflow"},
		kindIs(schedule.Signal),
		func(q *schedule.Program, ref stepRef, _ *rng) error {
			l := ref.list(q)
			*l = slices.Insert(*l, ref.idx+1, (*l)[ref.idx])
			return nil
		})
}

// signalEarly moves one signal in front of its task's body: to the end of
// the previous task of the same worker's queue (for about half of the
// seeds, when there is one) or to the end of the task's own before-steps.
//
// Class: signal published before the data it announces is written. Source:
// F12 (TMA writes signalled before they are visible; Hazy "full wait! must
// be visible in global"), F6 (fleet-chiplet PR#6: "+1" snapshots unordered
// against producers). Expect: race (race.raw), uninitialized-read.
func signalEarly() *Operator {
	pred := func(_ *schedule.Program, ref stepRef, s schedule.Step) bool {
		return s.Kind == schedule.Signal && ref.after
	}
	return stepOp("signal-early",
		"early signal: a signal moved in front of the body whose writes it announces",
		"F12, F6",
		[]string{"race", "uninitialized-read"},
		pred,
		func(q *schedule.Program, ref stepRef, r *rng) error {
			s := *ref.step(q)
			ref.remove(q)
			prev := queuePrev(q)[ref.task]
			if prev >= 0 && r.next()%2 == 0 {
				q.Tasks[prev].After = append(q.Tasks[prev].After, s)
			} else {
				t := &q.Tasks[ref.task]
				t.Before = append(t.Before, s)
			}
			return nil
		})
}

// waitWrongCounter points one wait at a different, seed-chosen counter
// whose width holds the threshold.
//
// Class: wait on the wrong event. Source: F3 (mirage `f4c333c2` "fix
// hang": the wait used trigger_event instead of dependent_event).
// Expect: deadlock (unsatisfiable or cycle), race (the real producer is no
// longer awaited).
func waitWrongCounter() *Operator {
	// A wait is a site when another counter's width holds its threshold.
	pred := func(p *schedule.Program) stepPred {
		n64 := 0
		for _, c := range p.Counters {
			if c.Width == 64 {
				n64++
			}
		}
		return func(p *schedule.Program, _ stepRef, s schedule.Step) bool {
			if s.Kind != schedule.Wait || !counterOK(p, s.Object) {
				return false
			}
			if s.Value <= 1<<32-1 {
				return len(p.Counters) >= 2
			}
			if p.Counters[s.Object].Width == 64 {
				return n64 >= 2
			}
			return n64 >= 1
		}
	}
	return newOp("wait-wrong-counter",
		"wrong event: a wait moved to another counter",
		"F3",
		[]string{"deadlock", "race", "uninitialized-read"},
		func(p *schedule.Program) int { return countSteps(p, pred(p)) },
		func(q *schedule.Program, site int, r *rng) error {
			ref, ok := nthStep(q, pred(q), site)
			if !ok {
				return notApplicable("no step site %d", site)
			}
			s := ref.step(q)
			var cands []int32
			for c := range q.Counters {
				if int32(c) != s.Object && s.Value <= q.Counters[c].Max() {
					cands = append(cands, int32(c))
				}
			}
			if len(cands) == 0 {
				return notApplicable("no other counter holds threshold %d", s.Value)
			}
			s.Object = cands[r.intn(len(cands))]
			return nil
		})
}

// waitOwnSignal points one wait of a task at a counter the same task
// signals after its body (a seed-chosen one if several), keeping the
// threshold (clamped to the counter's width).
//
// Class: waiting on one's own output. Source: F3 (mirage `f4c333c2`),
// AutoMegaKernel E2 "self_wait". Expect: deadlock (cycle or unsatisfiable
// when only the task itself can reach the threshold); often safe when other
// producers reach it, and then a race with the original producer.
func waitOwnSignal() *Operator {
	own := func(t *schedule.Task, not int32) []int32 {
		var cs []int32
		for _, s := range t.After {
			if s.Kind == schedule.Signal && s.Object != not && !slices.Contains(cs, s.Object) {
				cs = append(cs, s.Object)
			}
		}
		return cs
	}
	return stepOp("wait-own-signal",
		"self wait: a task waits on the counter it signals itself",
		"F3; AMK E2 self_wait",
		[]string{"deadlock", "race"},
		func(p *schedule.Program, ref stepRef, s schedule.Step) bool {
			if s.Kind != schedule.Wait || ref.after {
				return false
			}
			t := &p.Tasks[ref.task]
			for _, o := range t.After {
				if o.Kind == schedule.Signal && o.Object != s.Object && counterOK(p, o.Object) {
					return true
				}
			}
			return false
		},
		func(q *schedule.Program, ref stepRef, r *rng) error {
			s := ref.step(q)
			cs := own(&q.Tasks[ref.task], s.Object)
			s.Object = cs[r.intn(len(cs))]
			s.Value = min(s.Value, q.Counters[s.Object].Max())
			return nil
		})
}

// addCycle makes two tasks wait on each other: each gets a wait for one
// increment beyond the initial value of the counter the other signals first.
// The partner is seed-chosen among the other tasks that signal.
//
// Class: dependency cycle. Source: AutoMegaKernel E2 "cycle" class
// (gate_proj ↔ up_proj, threshold 1), F3. Expect: deadlock.cycle; safe when
// other producers satisfy both waits (AMK's false rejects).
func addCycle() *Operator {
	signalers := func(p *schedule.Program) []int {
		var ts []int
		for i := range p.Tasks {
			if c := firstSignal(&p.Tasks[i]); counterOK(p, c) {
				ts = append(ts, i)
			}
		}
		return ts
	}
	return newOp("add-cycle",
		"dependency cycle: two tasks each wait for the other's signal",
		"AMK E2 cycle; F3",
		[]string{"deadlock.cycle"},
		func(p *schedule.Program) int {
			if n := len(signalers(p)); n >= 2 {
				return n
			}
			return 0
		},
		func(q *schedule.Program, site int, r *rng) error {
			ts := signalers(q)
			a := ts[site]
			others := slices.Delete(slices.Clone(ts), site, site+1)
			b := others[r.intn(len(others))]
			ca, cb := firstSignal(&q.Tasks[a]), firstSignal(&q.Tasks[b])
			for _, c := range []int32{ca, cb} {
				if q.Counters[c].Init >= q.Counters[c].Max() {
					return notApplicable("counter %q starts at its maximum", q.Counters[c].Name)
				}
			}
			q.Tasks[a].Before = append(q.Tasks[a].Before, schedule.Step{Kind: schedule.Wait, Object: cb, Value: q.Counters[cb].Init + 1})
			q.Tasks[b].Before = append(q.Tasks[b].Before, schedule.Step{Kind: schedule.Wait, Object: ca, Value: q.Counters[ca].Init + 1})
			return nil
		})
}

// nonzeroInit raises one counter's initial value by a seed-chosen amount in
// [1, largest threshold waited for], capped at the counter's width.
//
// Class: counter not reset (stale value from a previous launch or step).
// Source: AutoMegaKernel §2.3 counter_init_nonzero (`Counter.init` never
// read by validate()), F9 (reset races, in-kernel init), F10 (sync state
// shared across launches). Expect: race, uninitialized-read;
// counter-overflow near the width.
func nonzeroInit() *Operator {
	sites := func(p *schedule.Program) []int32 {
		st := counterStats(p)
		var cs []int32
		for c := range p.Counters {
			if st[c].waits > 0 && p.Counters[c].Init < p.Counters[c].Max() {
				cs = append(cs, int32(c))
			}
		}
		return cs
	}
	return newOp("nonzero-init",
		"stale counter: nonzero initial value",
		"AMK §2.3 counter_init_nonzero; F9, F10",
		[]string{"race", "uninitialized-read", "counter-overflow"},
		func(p *schedule.Program) int { return len(sites(p)) },
		func(q *schedule.Program, site int, r *rng) error {
			c := sites(q)[site]
			st := counterStats(q)[c]
			k := 1 + r.below(max(st.maxWait, 1))
			ctr := &q.Counters[c]
			ctr.Init += min(k, ctr.Max()-ctr.Init)
			return nil
		})
}

// counterOverflow moves one counter's whole range to the top of its width
// (init and every threshold on it shifted up so that its final value is
// exactly its maximum) and then repeats one of its signals (seed-chosen).
//
// Class: counter overflow — a monotone counter reused across many steps
// without reset wraps past 2^width − 1. Source: F8 (counters reused without
// generations), F9 (reset not performed), AutoMegaKernel's one-shot
// counters re-zeroed in-kernel by the persistent loop. Expect:
// counter-overflow; also race when the extra increment lets a waiter pass
// early. Not applicable to counters with no signal, or whose waits or
// total already exceed the width.
func counterOverflow() *Operator {
	sites := func(p *schedule.Program) []int32 {
		st := counterStats(p)
		var cs []int32
		for c := range p.Counters {
			s := st[c]
			if s.signals > 0 && !s.over && s.total <= p.Counters[c].Max() && s.maxWait <= s.total {
				cs = append(cs, int32(c))
			}
		}
		return cs
	}
	return newOp("counter-overflow",
		"counter overflow: range shifted to the top of the width plus one extra signal",
		"F8, F9",
		[]string{"counter-overflow", "race"},
		func(p *schedule.Program) int { return len(sites(p)) },
		func(q *schedule.Program, site int, r *rng) error {
			c := sites(q)[site]
			st := counterStats(q)[c]
			delta := q.Counters[c].Max() - st.total
			q.Counters[c].Init += delta
			var sigs []stepRef
			eachStep(q, func(ref stepRef, s schedule.Step) bool {
				if s.Object == c {
					switch s.Kind {
					case schedule.Wait:
						ref.step(q).Value += delta
					case schedule.Signal:
						sigs = append(sigs, ref)
					}
				}
				return true
			})
			ref := sigs[r.intn(len(sigs))]
			l := ref.list(q)
			*l = slices.Insert(*l, ref.idx+1, (*l)[ref.idx])
			return nil
		})
}
