package corpus

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/megaproof/megaproof/mutate"
	"github.com/megaproof/megaproof/schedule"
)

// GenerateConfig configures [Generate]. The zero value works: the default
// oracle budgets, GOMAXPROCS jobs, the default site sampling.
type GenerateConfig struct {
	// Label bounds the oracles. Seeds are always labelled with Cross set;
	// mutants with Label.Cross as given.
	Label LabelConfig
	// Jobs is the number of mutants labelled at once (default GOMAXPROCS).
	Jobs int
	// Sites is how many sites of one operator are sampled on a seed
	// (default [DefaultSites]); every site when the operator has no more.
	Sites func(s Seed, p *schedule.Program) int
	// OperatorSites, when not nil, is used instead of Sites: how many
	// sites of op are sampled on s.
	OperatorSites func(s Seed, p *schedule.Program, op *mutate.Operator) int
	// Operators are the mutation operators (default mutate.Operators()).
	Operators []*mutate.Operator
	// Only, when not nil, selects the seeds whose entries are generated;
	// the others are skipped but keep their place, so that the selected
	// ones get the sites and mutation seeds a run over every seed gives
	// them (sampling depends on a seed's index among seeds).
	Only func(s Seed) bool
	// Known returns a label computed before for a mutant's content hash
	// and number of tasks (a cache that makes generation resumable and
	// incremental: the number lets a cache keep labels of an earlier
	// labeller for the sizes where it answers as this one does); Learn is
	// told each new label. Either may be nil.
	Known func(hash string, tasks int) (Label, bool)
	Learn func(hash string, l Label)
	// Progress, when not nil, is called after each labelled mutant, from
	// one goroutine at a time.
	Progress func(done, total int)
}

// GenerateReport says what [Generate] left out and why.
type GenerateReport struct {
	// Candidates is the number of sampled recipes.
	Candidates int
	// Undecided lists recipes no oracle decided ("id: reasons").
	Undecided []string
	// Duplicates counts recipes whose mutant has the content hash of an
	// earlier entry's (or of its seed).
	Duplicates int
	// UnsafeSeeds lists seeds an oracle found unsafe or disputed; their
	// mutants are left out (a fault the seed already has would not have to
	// be seen). Their own entries stay, so that a run reports them.
	UnsafeSeeds []string
	// UndecidedSeeds lists seeds no oracle decided; their mutants are
	// left out too.
	UndecidedSeeds []string
	// Disputed counts mutants on which two oracles disagreed (kept as
	// VerdictDisputed entries).
	Disputed int
	// LocationViolations lists entries where the explorer's own findings
	// break an operator's Locates declaration; their Tasks are left empty.
	LocationViolations []string
}

// DefaultSites samples 3 sites per operator on protocol, progen-small and
// JSON seeds, 2 on Llama-family and progen-medium seeds, and 2 on big ones.
func DefaultSites(s Seed, _ *schedule.Program) int {
	switch {
	case s.Big:
		return 2
	case strings.HasPrefix(s.ID, "llama-"), strings.HasPrefix(s.ID, "progenm-"):
		return 2
	}
	return 3
}

// mix is splitmix64 over the recipe coordinates: deterministic sampling.
func mix(xs ...uint64) uint64 {
	var z uint64
	for _, x := range xs {
		z += x + 0x9e3779b97f4a7c15
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		z ^= z >> 31
	}
	return z
}

type candidate struct {
	e     Entry
	seed  int // index of the seed
	label Label
	hash  string
	skip  string // why it is left out
}

// Generate builds a corpus from seeds: each seed's own entry (operator
// [SeedOperator], labelled by every oracle that applies, which must
// agree), then for every operator and sampled site a mutant labelled by
// the oracles, never by verify. Mutants of seeds an oracle finds unsafe,
// mutants no oracle decides and byte-level duplicates are left out and
// reported. The result is deterministic: it depends on the seeds, the
// operators and the budgets, never on the machine or the number of jobs.
// It returns ctx's error when ctx ends first.
func Generate(ctx context.Context, seeds []Seed, cfg GenerateConfig) ([]Entry, *GenerateReport, error) {
	if cfg.Jobs <= 0 {
		cfg.Jobs = runtime.GOMAXPROCS(0)
	}
	if cfg.Sites == nil {
		cfg.Sites = DefaultSites
	}
	if cfg.Operators == nil {
		cfg.Operators = mutate.Operators()
	}
	rep := &GenerateReport{}
	progs := make([]*schedule.Program, len(seeds))
	var cands []*candidate
	for si, s := range seeds {
		if cfg.Only != nil && !cfg.Only(s) {
			continue
		}
		p, err := SeedProgram(s.Recipe)
		if err != nil {
			return nil, nil, err
		}
		progs[si] = p
		cands = append(cands, &candidate{seed: si, e: Entry{ID: EntryID(s.ID, SeedOperator, 0, 0), Seed: s.ID, Recipe: s.Recipe, Operator: SeedOperator}})
		for oi, op := range cfg.Operators {
			n := op.Sites(p)
			k := 0
			if cfg.OperatorSites != nil {
				k = cfg.OperatorSites(s, p, op)
			} else {
				k = cfg.Sites(s, p)
			}
			var sites []int
			if n <= k {
				for i := range n {
					sites = append(sites, i)
				}
			} else {
				off := mix(uint64(si), uint64(oi)) % uint64(n)
				for i := range k {
					sites = append(sites, int((off+uint64(i)*uint64(n)/uint64(k))%uint64(n)))
				}
				slices.Sort(sites)
				sites = slices.Compact(sites)
			}
			for _, site := range sites {
				mseed := 1 + mix(uint64(si), uint64(oi), uint64(site))%1000
				cands = append(cands, &candidate{seed: si, e: Entry{
					ID: EntryID(s.ID, op.Name, site, mseed), Seed: s.ID, Recipe: s.Recipe,
					Operator: op.Name, Site: site, MSeed: mseed,
				}})
			}
		}
	}
	rep.Candidates = len(cands)
	// Seeds first (their labels decide whether their mutants count), then
	// the mutants, each job taking the next candidate.
	var seedIdx, mutIdx []int
	for i, c := range cands {
		if c.e.Operator == SeedOperator {
			seedIdx = append(seedIdx, i)
		} else {
			mutIdx = append(mutIdx, i)
		}
	}
	var mu sync.Mutex
	done := 0
	runAll := func(idx []int, label func(c *candidate)) error {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range min(cfg.Jobs, max(1, len(idx))) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					i := int(next.Add(1)) - 1
					if i >= len(idx) {
						return
					}
					label(cands[idx[i]])
					mu.Lock()
					done++
					if cfg.Progress != nil {
						cfg.Progress(done, len(cands))
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		return ctx.Err()
	}
	labelOne := func(c *candidate, q *schedule.Program, lc LabelConfig) {
		h, err := Hash(q)
		if err != nil {
			c.skip = "marshal: " + err.Error()
			return
		}
		c.hash = h
		if cfg.Known != nil {
			if l, ok := cfg.Known(h, len(q.Tasks)); ok {
				c.label = l
				return
			}
		}
		l, err := LabelProgram(ctx, q, lc)
		if err != nil {
			c.skip = "label: " + err.Error()
			return
		}
		c.label = l
		if cfg.Learn != nil {
			cfg.Learn(h, l)
		}
	}
	seedCfg := cfg.Label
	seedCfg.Cross = true
	if err := runAll(seedIdx, func(c *candidate) { labelOne(c, progs[c.seed], seedCfg) }); err != nil {
		return nil, nil, err
	}
	seedOK := make([]bool, len(seeds))
	for _, i := range seedIdx {
		c := cands[i]
		c.e.Size = len(progs[c.seed].Tasks)
		switch c.label.Verdict {
		case VerdictUnsafe, VerdictDisputed:
			rep.UnsafeSeeds = append(rep.UnsafeSeeds, fmt.Sprintf("%s: %s %v %s", c.e.Seed, c.label.Verdict, c.label.Codes, c.label.Detail))
		case VerdictUndecided:
			rep.UndecidedSeeds = append(rep.UndecidedSeeds, fmt.Sprintf("%s: %s", c.e.Seed, c.label.Detail))
		case VerdictSafe:
			seedOK[c.seed] = c.skip == ""
		}
	}
	err := runAll(mutIdx, func(c *candidate) {
		if !seedOK[c.seed] {
			c.skip = "seed is not safe"
			return
		}
		q, err := Mutant(c.e.Recipe, c.e.Operator, c.e.Site, c.e.MSeed)
		if errors.Is(err, ErrMalformed) {
			c.e.Verdict = VerdictMalformed
			return
		}
		if err != nil {
			c.skip = "apply: " + err.Error()
			return
		}
		c.e.Size = len(q.Tasks)
		labelOne(c, q, cfg.Label)
		if c.skip != "" || c.label.Verdict != VerdictUnsafe {
			return
		}
		op, _ := mutate.Lookup(c.e.Operator)
		for _, o := range cfg.Operators {
			if o.Name == c.e.Operator {
				op = o
			}
		}
		if op == nil || !slices.ContainsFunc(c.label.Codes, func(code string) bool { return slices.Contains(op.Locates, code) }) {
			return
		}
		changed := mutate.Changed(progs[c.seed], q)
		for _, f := range c.label.Findings {
			if slices.Contains(op.Locates, f.Code) && !slices.ContainsFunc(f.Tasks, func(t int) bool { return slices.Contains(changed, t) }) {
				c.skip = fmt.Sprintf("location: the explorer's %s finding names tasks %v, none of the changed tasks %v", f.Code, f.Tasks, changed)
				return
			}
		}
		c.e.Tasks = changed
	})
	if err != nil {
		return nil, nil, err
	}
	var out []Entry
	seen := map[string]bool{}
	for _, c := range cands {
		e := c.e
		switch {
		case strings.HasPrefix(c.skip, "location: "):
			rep.LocationViolations = append(rep.LocationViolations, e.ID+": "+strings.TrimPrefix(c.skip, "location: "))
			c.skip = ""
			e.Tasks = nil
		case c.skip == "seed is not safe":
			continue
		case c.skip != "":
			rep.Undecided = append(rep.Undecided, e.ID+": "+c.skip)
			continue
		}
		if e.Verdict == VerdictMalformed {
			out = append(out, e)
			continue
		}
		if seen[c.hash] && e.Operator != SeedOperator {
			rep.Duplicates++
			continue
		}
		seen[c.hash] = true
		e.Hash, e.Oracle, e.Verdict, e.Codes = c.hash, c.label.Oracle, c.label.Verdict, c.label.Codes
		e.Families = FamiliesOf(e.Codes)
		switch {
		case e.Verdict == VerdictDisputed:
			rep.Disputed++
			e.Oracle = c.label.Oracle
		case e.Verdict == VerdictUndecided && e.Operator != SeedOperator:
			rep.Undecided = append(rep.Undecided, e.ID+": "+c.label.Detail)
			continue
		}
		out = append(out, e)
	}
	return out, rep, nil
}
