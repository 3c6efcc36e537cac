package verify

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// A Check is one analysis of [Run], declared as a value: its name, what it
// looks for, the finding codes it reports, and the checks whose results it
// uses. Select checks with [Config.Checks]; the zero Config runs them all.
type Check struct {
	Name     string
	Doc      string
	Codes    []string
	Requires []*Check
	run      func(v *verifier, ctx context.Context) error
}

func (c *Check) String() string { return c.Name }

// The checks, in the order Run performs them.
var (
	// Static finds what needs no execution.
	Static = &Check{
		Name:  "static",
		Doc:   "accesses outside their buffer, writes to input or weight buffers, output bytes no task writes, and cooperative launches beyond the target's co-resident capacity",
		Codes: []string{CodeOutOfBounds, CodeReadonlyWrite, CodeOutputUnwritten, CodeOccupancy},
		run:   func(v *verifier, _ context.Context) error { v.checkStatic(); return nil },
	}
	// Progress decides deadlock, residency and overflow with one greedy run.
	Progress = &Check{
		Name:  "progress",
		Doc:   "deadlocks (unsatisfiable waits, wait-for cycles including static queue order, uneven barriers, semaphores that are never granted), deadlocks caused by residency of non-cooperative launches, and counter overflow, decided for every interleaving by one greedy run",
		Codes: []string{CodeDeadlockUnsatisfiable, CodeDeadlockCycle, CodeDeadlockBarrier, CodeDeadlockSemaphore, CodeOccupancy, CodeCounterOverflow},
		run: func(v *verifier, ctx context.Context) error {
			e, err := v.checkProgressCtx(ctx)
			if err != nil {
				return err
			}
			v.run = e
			v.f.linkPoints()
			return ctx.Err()
		},
	}
	// Races orders every pair of conflicting accesses by happens-before.
	Races = &Check{
		Name:     "races",
		Doc:      "pairs of tasks on different threads whose accesses overlap in arena bytes, at least one writing, that some execution leaves unordered by happens-before, and cta-scoped steps on counters or semaphores that other threads use unordered",
		Codes:    []string{CodeRaceRAW, CodeRaceWAR, CodeRaceWAW, CodeRaceUnsynchronized, CodeRaceScope},
		Requires: []*Check{Progress},
		run:      func(v *verifier, ctx context.Context) error { return v.checkRaces(ctx, v.run) },
	}
	// Uninitialized finds reads of scratch and output bytes nothing wrote
	// before them.
	Uninitialized = &Check{
		Name:     "uninitialized",
		Doc:      "reads of scratch or output bytes that some execution reaches before any same-buffer write that happens before them",
		Codes:    []string{CodeUninitializedRead},
		Requires: []*Check{Races},
		run:      func(v *verifier, ctx context.Context) error { return v.checkUninitialized(ctx, v.run) },
	}
)

// Checks returns every check, in the order Run performs them.
func Checks() []*Check { return []*Check{Static, Progress, Races, Uninitialized} }

// validateChecks checks the declared checks once: unique names, docs and
// codes present, requirements known and acyclic and listed before their
// users.
func validateChecks(all []*Check) error {
	pos := map[*Check]int{}
	names := map[string]bool{}
	for i, c := range all {
		switch {
		case c.Name == "":
			return fmt.Errorf("verify: check %d has no name", i)
		case names[c.Name]:
			return fmt.Errorf("verify: duplicate check name %q", c.Name)
		case c.Doc == "":
			return fmt.Errorf("verify: check %q has no doc", c.Name)
		case len(c.Codes) == 0:
			return fmt.Errorf("verify: check %q reports no codes", c.Name)
		case c.run == nil:
			return fmt.Errorf("verify: check %q cannot run", c.Name)
		}
		for _, r := range c.Requires {
			j, ok := pos[r]
			if !ok || j >= i {
				return fmt.Errorf("verify: check %q requires %q, which is unknown or not before it", c.Name, r.Name)
			}
		}
		names[c.Name] = true
		pos[c] = i
	}
	return nil
}

// selected returns the checks to run for cfg (with what they require) and
// the codes to report; callers do not modify them. The default selection,
// every check, is computed once.
func selected(cfg Config) (run []*Check, report map[string]bool, err error) {
	if len(cfg.Checks) == 0 {
		d := defaultSelection()
		return d.run, d.report, d.err
	}
	return selectChecks(cfg.Checks)
}

type selection struct {
	run    []*Check
	report map[string]bool
	err    error
}

var defaultSelection = sync.OnceValue(func() selection {
	run, report, err := selectChecks(nil)
	return selection{run, report, err}
})

func selectChecks(pick []*Check) (run []*Check, report map[string]bool, err error) {
	all := Checks()
	if err := validateChecks(all); err != nil {
		return nil, nil, err
	}
	want := map[*Check]bool{}
	report = map[string]bool{}
	if len(pick) == 0 {
		pick = all
	}
	var need func(c *Check)
	need = func(c *Check) {
		if !want[c] {
			want[c] = true
			for _, r := range c.Requires {
				need(r)
			}
		}
	}
	for _, c := range pick {
		if !slices.Contains(all, c) {
			return nil, nil, fmt.Errorf("verify: unknown check %v", c)
		}
		need(c)
		for _, code := range c.Codes {
			report[code] = true
		}
	}
	for _, c := range all {
		if want[c] {
			run = append(run, c)
		}
	}
	return run, report, nil
}
