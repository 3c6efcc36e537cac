package corpus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/megaproof/megaproof/internal/brute"
	"github.com/megaproof/megaproof/internal/defcheck"
	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify/explore"
)

// LabelConfig bounds the oracles of [LabelProgram]. Every bound is a
// quantity of work or a program size, never a duration: a label does not
// depend on the machine's speed. Zero fields take the defaults.
type LabelConfig struct {
	// ExploreTasks is the largest program verify/explore is tried on
	// (default 400), ExploreStates its state budget (default 200,000).
	ExploreTasks, ExploreStates int
	// DefcheckTasks is the largest program the definitional checker is
	// tried on (default 200,000), DefcheckWork its work budget in executed
	// operations and examined task pairs (default 2^28). From
	// DefcheckAtScale tasks on (default 2,000) it runs by the means that
	// scale (defcheck.CodesAtScale: one withhold-run per thread rather
	// than per question, candidate pairs by a sweep of each arena), below
	// that as defcheck.CodesBudget; both answer by the same definitions.
	DefcheckTasks   int
	DefcheckAtScale int
	DefcheckWork    int64
	// BruteTasks is the largest program the brute-force oracle over
	// schedule.Machine is tried on (default 12), BruteStates its budget of
	// distinct states (default 20,000).
	BruteTasks, BruteStates int
	// Cross runs every oracle that applies, not only the first that
	// decides, and requires them to agree: the explorer and the
	// definitional checker on codes, the brute-force oracle (which gives
	// families) on families.
	Cross bool
}

func (c LabelConfig) withDefaults() LabelConfig {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.ExploreTasks, 400)
	def(&c.ExploreStates, 200000)
	def(&c.DefcheckTasks, 200000)
	def(&c.DefcheckAtScale, 2000)
	def(&c.BruteTasks, 12)
	def(&c.BruteStates, 20000)
	if c.DefcheckWork <= 0 {
		c.DefcheckWork = 1 << 28
	}
	return c
}

// Label is what the oracles say about one program.
type Label struct {
	// Verdict is VerdictSafe, VerdictUnsafe, VerdictDisputed (two oracles
	// disagreed: a bug in one of them) or VerdictUndecided (no oracle
	// decided within its budget).
	Verdict string
	// Codes are the sorted finding codes (empty unless unsafe).
	Codes []string
	// Oracle joins with "+" the oracles that decided, in the order tried
	// (OracleExplore, OracleDefcheck, OracleBrute).
	Oracle string
	// Findings are the explorer's findings (code and tasks) when it
	// decided; the other oracles name no tasks.
	Findings []OracleFinding
	// Detail says why no oracle decided, or how they disagreed.
	Detail string
}

// OracleFinding is one finding of an oracle: its code and the tasks it
// names.
type OracleFinding struct {
	Code  string
	Tasks []int
}

// LabelProgram labels a valid program with the oracles, never with
// package verify: verify/explore when the program has at most
// ExploreTasks tasks and its exploration completes within its budget, the
// definitional checker (programs without semaphores of at most
// DefcheckTasks tasks, within its work budget), and the brute-force
// oracle on the smallest programs. Without cfg.Cross the first oracle that
// decides gives the label; with it, every oracle that applies is run and
// all must agree. It returns ctx's error when ctx ends first.
func LabelProgram(ctx context.Context, p *schedule.Program, cfg LabelConfig) (Label, error) {
	cfg = cfg.withDefaults()
	if err := p.Validate(); err != nil {
		return Label{}, err
	}
	var l Label
	var reasons, oracles []string
	decided := func(name string, codes []string) {
		oracles = append(oracles, name)
		if len(oracles) == 1 {
			l.Codes = codes
			return
		}
		same := slices.Equal(codes, l.Codes)
		if name == OracleBrute {
			same = slices.Equal(codes, FamiliesOf(l.Codes))
		}
		if !same && l.Verdict != VerdictDisputed {
			l.Verdict = VerdictDisputed
			l.Detail = fmt.Sprintf("%s says %v, %s says %v", oracles[0], l.Codes, name, codes)
		}
	}
	if len(p.Tasks) <= cfg.ExploreTasks {
		r, err := explore.Run(ctx, p, explore.Config{MaxStates: cfg.ExploreStates})
		switch {
		case ctx.Err() != nil:
			return Label{}, ctx.Err()
		case err != nil:
			reasons = append(reasons, "explore: "+err.Error())
		case !r.Complete:
			reasons = append(reasons, "explore: "+r.Reason)
		default:
			var codes []string
			for _, f := range r.Findings {
				codes = append(codes, f.Code)
				l.Findings = append(l.Findings, OracleFinding{Code: f.Code, Tasks: slices.Clone(f.Tasks)})
			}
			slices.Sort(codes)
			decided(OracleExplore, slices.Compact(codes))
		}
	} else {
		reasons = append(reasons, fmt.Sprintf("explore: %d tasks, beyond %d", len(p.Tasks), cfg.ExploreTasks))
	}
	if len(oracles) == 0 || cfg.Cross {
		if len(p.Tasks) <= cfg.DefcheckTasks {
			codes, err := defcheckCodes(ctx, p, cfg.DefcheckWork, len(p.Tasks) >= cfg.DefcheckAtScale)
			switch {
			case ctx.Err() != nil:
				return Label{}, ctx.Err()
			case err != nil:
				reasons = append(reasons, err.Error())
			default:
				decided(OracleDefcheck, codes)
			}
		} else {
			reasons = append(reasons, fmt.Sprintf("defcheck: %d tasks, beyond %d", len(p.Tasks), cfg.DefcheckTasks))
		}
	}
	if (len(oracles) == 0 || cfg.Cross) && len(p.Tasks) <= cfg.BruteTasks {
		fams, err := brute.Families(p, brute.Config{MaxStates: cfg.BruteStates})
		if err != nil {
			reasons = append(reasons, "brute: "+err.Error())
		} else if len(oracles) == 0 && slices.ContainsFunc(fams, func(f string) bool { return f == "deadlock" || f == "race" }) {
			// Alone, brute labels only families that are codes of their own.
			reasons = append(reasons, fmt.Sprintf("brute: families %v, not codes", fams))
		} else {
			decided(OracleBrute, fams)
		}
	}
	l.Oracle = strings.Join(oracles, "+")
	switch {
	case len(oracles) == 0:
		l.Verdict, l.Detail = VerdictUndecided, strings.Join(reasons, "; ")
	case l.Verdict == VerdictDisputed:
		l.Codes = nil
	case len(l.Codes) > 0:
		l.Verdict = VerdictUnsafe
	default:
		l.Verdict = VerdictSafe
	}
	if l.Verdict != VerdictUnsafe {
		l.Findings = nil
	}
	return l, nil
}

// defcheckCodes runs the definitional checker, which takes no context, in
// a goroutine; when ctx ends first it returns ctx's error and lets the
// run finish in the background (its work budget bounds it).
func defcheckCodes(ctx context.Context, p *schedule.Program, work int64, atScale bool) ([]string, error) {
	type res struct {
		codes []string
		err   error
	}
	ch := make(chan res, 1)
	go func() {
		run := defcheck.CodesBudget
		if atScale {
			run = defcheck.CodesAtScale
		}
		codes, err := run(p, work)
		ch <- res{codes, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil && !errors.Is(r.err, defcheck.ErrBudget) && !errors.Is(r.err, defcheck.ErrSemaphores) && !errors.Is(r.err, defcheck.ErrDispatch) {
			return nil, fmt.Errorf("defcheck: %w", r.err)
		}
		return r.codes, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
