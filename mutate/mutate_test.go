package mutate_test

import (
	"bytes"
	"errors"
	"go/parser"
	"go/token"
	"math/bits"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/mutate"
	"github.com/megaproof/megaproof/schedule"
)

var wantOrder = []string{
	"drop-wait", "lower-threshold", "raise-threshold", "reuse-phase-threshold", "drop-signal",
	"duplicate-signal", "signal-early", "wait-wrong-counter", "wait-own-signal", "add-cycle",
	"relax-signal", "relax-wait", "drop-fence", "narrow-scope", "move-acquire", "narrow-sys-scope", "narrow-shared-scope",
	"swap-queue-order", "move-task", "exceed-capacity", "claim-before-ready", "hold-workers",
	"drop-barrier-step", "barrier-parties-up", "barrier-parties-down", "merge-barriers",
	"drop-release", "swap-acquire-order", "skip-acquire",
	"nonzero-init", "counter-overflow",
	"shift-tile", "widen-oob", "kv-beyond-cache", "drop-tile", "alias-early", "write-readonly",
}

// knownFindings are the finding families and codes (verify's code table)
// that an operator may name in Expect.
var knownFindings = []string{
	"deadlock", "deadlock.unsatisfiable", "deadlock.cycle", "deadlock.barrier", "deadlock.semaphore",
	"occupancy", "race", "race.raw", "race.war", "race.waw", "race.unsynchronized", "race.scope", "safe",
	"uninitialized-read", "out-of-bounds", "readonly-write", "output-unwritten", "counter-overflow",
}

func TestOperatorsTable(t *testing.T) {
	ops := mutate.Operators()
	var names []string
	for _, op := range ops {
		names = append(names, op.Name)
		if op.Class == "" || op.Source == "" || len(op.Expect) == 0 {
			t.Errorf("%s: empty documentation", op.Name)
		}
		for _, e := range op.Expect {
			if !slices.Contains(knownFindings, e) {
				t.Errorf("%s: Expect names unknown finding %q", op.Name, e)
			}
		}
		got, ok := mutate.Lookup(op.Name)
		if !ok || got != op {
			t.Errorf("Lookup(%q) = %v, %v", op.Name, got, ok)
		}
		if _, ok := checks[op.Name]; !ok {
			t.Errorf("%s: no structural check in this test", op.Name)
		}
	}
	if !slices.Equal(names, wantOrder) {
		t.Errorf("operator order:\n got %q\nwant %q", names, wantOrder)
	}
	if _, ok := mutate.Lookup("no-such-operator"); ok {
		t.Error("Lookup of an unknown name succeeded")
	}
	// Operators returns a fresh slice each time.
	ops[0] = nil
	if mutate.Operators()[0] == nil {
		t.Error("Operators shares its slice with callers")
	}
}

// TestDocTable checks that doc.go's table lists every operator in order.
func TestDocTable(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, line := range strings.Split(f.Doc.Text(), "\n") {
		fields := strings.Fields(line)
		if len(fields) > 1 && strings.HasPrefix(line, "\t") && fields[0] != "name" {
			listed = append(listed, fields[0])
		}
	}
	if !slices.Equal(listed, wantOrder) {
		t.Errorf("doc.go table:\n got %q\nwant %q", listed, wantOrder)
	}
}

// TestNoVerdictImports enforces the import rule of docs/ARCHITECTURE.md:
// mutations are blind to verdicts.
func TestNoVerdictImports(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "github.com/megaproof/megaproof/") && path != "github.com/megaproof/megaproof/schedule" {
				t.Errorf("%s imports %s", name, path)
			}
		}
	}
}

func TestSitesPipeline(t *testing.T) {
	want := map[string]int{
		"drop-wait": 6, "lower-threshold": 4, "raise-threshold": 6, "reuse-phase-threshold": 3,
		"drop-signal": 7, "duplicate-signal": 7, "signal-early": 7, "wait-wrong-counter": 6,
		"wait-own-signal": 4, "add-cycle": 4, "relax-signal": 6, "relax-wait": 6, "drop-fence": 3,
		"narrow-scope": 22, "move-acquire": 6, "narrow-sys-scope": 1, "narrow-shared-scope": 17,
		"claim-before-ready": 1, "skip-acquire": 3, "swap-queue-order": 2, "move-task": 5, "exceed-capacity": 2,
		"drop-barrier-step": 3, "barrier-parties-up": 1, "barrier-parties-down": 1, "drop-release": 3,
		"swap-acquire-order": 1, "nonzero-init": 3, "counter-overflow": 3, "shift-tile": 4,
		"widen-oob": 19, "kv-beyond-cache": 2, "drop-tile": 7, "alias-early": 4, "write-readonly": 4,
	}
	p := pipeline(t)
	for _, op := range mutate.Operators() {
		if got := op.Sites(p); got != want[op.Name] {
			t.Errorf("%s: %d sites, want %d", op.Name, got, want[op.Name])
		}
	}
	wantHandoff := map[string]int{
		"drop-wait": 1, "raise-threshold": 1, "drop-signal": 1, "duplicate-signal": 1, "signal-early": 1,
		"relax-signal": 1, "relax-wait": 1, "narrow-scope": 2, "narrow-shared-scope": 2, "move-task": 2, "exceed-capacity": 1,
		"nonzero-init": 1, "counter-overflow": 1, "widen-oob": 3, "drop-tile": 2, "alias-early": 1,
	}
	h := handoff(t)
	for _, op := range mutate.Operators() {
		if got := op.Sites(h); got != wantHandoff[op.Name] {
			t.Errorf("handoff: %s: %d sites, want %d", op.Name, got, wantHandoff[op.Name])
		}
	}
}

var seeds = []uint64{0, 1, 2, 3, 0xdeadbeef, 1<<64 - 1}

// TestEveryOperatorEverySite applies every operator at every site of the
// hand-built programs with several seeds: every application succeeds,
// yields a valid program different from its input, leaves the input
// untouched, is deterministic, and has the operator's structural effect.
func TestEveryOperatorEverySite(t *testing.T) {
	for _, p := range []*schedule.Program{pipeline(t), handoff(t)} {
		for _, op := range mutate.Operators() {
			t.Run(p.Name+"/"+op.Name, func(t *testing.T) {
				for site := range op.Sites(p) {
					for _, seed := range seeds {
						q, err := applyChecked(t, op, p, site, seed)
						if err != nil {
							t.Errorf("site %d seed %d: %v", site, seed, err)
						}
						_ = q
					}
				}
			})
		}
	}
}

// TestRandomPrograms is the no-panic sweep: every operator at every site of
// a few hundred random programs must return a valid mutant or an error
// wrapping ErrSite, and every mutant must pass the structural checks.
func TestRandomPrograms(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 60
	}
	applied, refused := make([]int, len(wantOrder)), make([]int, len(wantOrder))
	for s := range uint64(n) {
		p := randomProgram(s)
		if p == nil {
			continue
		}
		for oi, op := range mutate.Operators() {
			for site := range op.Sites(p) {
				seed := s*31 + uint64(site)
				if _, err := applyChecked(t, op, p, site, seed); err != nil {
					if !errors.Is(err, mutate.ErrSite) {
						t.Fatalf("random %d: %s site %d: error not wrapping ErrSite: %v", s, op.Name, site, err)
					}
					refused[oi]++
					continue
				}
				applied[oi]++
			}
		}
	}
	for oi, name := range wantOrder {
		t.Logf("%-22s applied %5d refused %4d", name, applied[oi], refused[oi])
		if applied[oi] == 0 {
			t.Errorf("%s never applied to a random program", name)
		}
		if refused[oi] > applied[oi] {
			t.Errorf("%s refused %d sites and applied %d: Sites overcounts", name, refused[oi], applied[oi])
		}
	}
}

// applyChecked applies op and, on success, checks the generic contract and
// the operator's structural effect. It returns Apply's error unchanged.
func applyChecked(t *testing.T, op *mutate.Operator, p *schedule.Program, site int, seed uint64) (*schedule.Program, error) {
	t.Helper()
	before := mustMarshal(t, p)
	q, err := op.Apply(p, site, seed)
	if after := mustMarshal(t, p); !bytes.Equal(before, after) {
		t.Fatalf("%s site %d seed %d modified its input", op.Name, site, seed)
	}
	if err != nil {
		return nil, err
	}
	if verr := q.Validate(); verr != nil {
		t.Fatalf("%s site %d seed %d: invalid mutant: %v", op.Name, site, seed, verr)
	}
	got := mustMarshal(t, q)
	if bytes.Equal(got, before) {
		t.Errorf("%s site %d seed %d: mutant equals its input", op.Name, site, seed)
	}
	q2, err2 := op.Apply(p, site, seed)
	if err2 != nil || !bytes.Equal(got, mustMarshal(t, q2)) {
		t.Errorf("%s site %d seed %d: not deterministic (%v)", op.Name, site, seed, err2)
	}
	if msg := checks[op.Name](p, q); msg != "" {
		t.Errorf("%s site %d seed %d: %s", op.Name, site, seed, msg)
	}
	return q, nil
}

func TestBadSites(t *testing.T) {
	p := pipeline(t)
	for _, op := range mutate.Operators() {
		for _, site := range []int{-1, op.Sites(p), op.Sites(p) + 100} {
			if _, err := op.Apply(p, site, 0); !errors.Is(err, mutate.ErrSite) {
				t.Errorf("%s site %d: err %v, want ErrSite", op.Name, site, err)
			}
		}
		if op.Sites(nil) != 0 {
			t.Errorf("%s: Sites(nil) != 0", op.Name)
		}
		if _, err := op.Apply(nil, 0, 0); err == nil {
			t.Errorf("%s: Apply(nil) succeeded", op.Name)
		}
	}
}

// TestInvalidInput feeds structurally invalid programs: Sites must not
// panic, and Apply must return an error.
func TestInvalidInput(t *testing.T) {
	corrupt := []func(p *schedule.Program){
		func(p *schedule.Program) { p.Tasks[2].Before[0].Object = 99 },
		func(p *schedule.Program) { p.Tasks[0].After[1].Object = -5 },
		func(p *schedule.Program) { p.Tasks[2].Writes[0].Buffer = 42 },
		func(p *schedule.Program) { p.Tasks[0].Reads[0].Buffer = -1 },
		func(p *schedule.Program) { p.Tasks[1].Worker = 17 },
		func(p *schedule.Program) { p.Launch.Workers = 0 },
		func(p *schedule.Program) { p.Launch.PerSM = 0 },
		func(p *schedule.Program) { p.Buffers[7].Arena = 9 },
		func(p *schedule.Program) { p.Counters[0].Width = 7 },
		func(p *schedule.Program) { p.Tasks[3].Before[3].Object = 11 },
	}
	for i, c := range corrupt {
		p := pipeline(t)
		c(p)
		for _, op := range mutate.Operators() {
			n := op.Sites(p)
			for _, site := range []int{0, n - 1} {
				if _, err := op.Apply(p, site, 7); err == nil {
					t.Errorf("corruption %d: %s applied to an invalid program", i, op.Name)
				}
			}
		}
	}
}

func TestClone(t *testing.T) {
	p := pipeline(t)
	p.Tasks[0].Params = schedule.Params{{Key: "n_off", Value: 64}}
	want := mustMarshal(t, p)
	q := mutate.Clone(p)
	if !same(t, p, q) {
		t.Fatal("clone differs")
	}
	q.Tasks[0].Params.Set("n_off", 0)
	q.Tasks[0].After[0].Scope = schedule.ScopeCTA
	q.Tasks[0].Reads[0].Length = 1
	q.Tasks[0].Writes[0].Offset = 3
	q.Tasks[2].Before[0].Value = 9
	q.Buffers[0].Size = 1
	q.Counters[0].Init = 1
	q.Barriers[0].Parties = 9
	q.Semaphores[0].Tokens = 9
	q.Arenas[0].Size = 1
	q.Tasks[1].Name = "renamed"
	if !bytes.Equal(want, mustMarshal(t, p)) || p.Tasks[0].Params[0].Value != 64 {
		t.Error("changing the clone changed the original")
	}
	if mutate.Clone(nil) != nil {
		t.Error("Clone(nil) != nil")
	}
	h := handoff(t)
	if c := mutate.Clone(h); c.Arenas != nil || c.Tasks[0].Before != nil || c.Tasks[0].Params != nil {
		t.Error("Clone turned nil slices or maps into empty ones")
	}
}

// checks holds each operator's structural check: given input p and mutant
// q, it returns "" or what is wrong.
var checks = map[string]func(p, q *schedule.Program) string{
	"drop-wait":    countDelta(schedule.Wait, -1),
	"drop-signal":  countDelta(schedule.Signal, -1),
	"drop-fence":   countDelta(schedule.Fence, -1),
	"drop-release": countDelta(schedule.Release, -1),
	"add-cycle":    countDelta(schedule.Wait, +2),
	"lower-threshold": oneStepChange(func(p, q *schedule.Program, a, b schedule.Step, _ int) bool {
		return a.Kind == schedule.Wait && b.Value >= 1 && b.Value < a.Value && sameExcept(a, b, "value")
	}),
	"raise-threshold": oneStepChange(func(p, q *schedule.Program, a, b schedule.Step, _ int) bool {
		total, carry := total(q, b.Object)
		return a.Kind == schedule.Wait && carry == 0 && b.Value == total+1 && sameExcept(a, b, "value")
	}),
	"reuse-phase-threshold": oneStepChange(func(p, q *schedule.Program, a, b schedule.Step, _ int) bool {
		if a.Kind != schedule.Wait || b.Value >= a.Value || !sameExcept(a, b, "value") {
			return false
		}
		ss, _ := allSteps(p)
		return slices.ContainsFunc(ss, func(s schedule.Step) bool {
			return s.Kind == schedule.Wait && s.Object == a.Object && s.Value == b.Value
		})
	}),
	"duplicate-signal": countDelta(schedule.Signal, +1),
	"signal-early": func(p, q *schedule.Program) string {
		if steps(p, schedule.Signal) != steps(q, schedule.Signal) {
			return "signal count changed"
		}
		moved := 0
		for i := range p.Tasks {
			dp, dq := afterSignals(&p.Tasks[i]), afterSignals(&q.Tasks[i])
			if dq < dp {
				moved += dp - dq
			}
		}
		if moved != 1 {
			return "want exactly one signal moved out of an after-list"
		}
		return ""
	},
	"wait-wrong-counter": oneStepChange(func(p, q *schedule.Program, a, b schedule.Step, _ int) bool {
		return a.Kind == schedule.Wait && a.Object != b.Object && sameExcept(a, b, "object")
	}),
	"wait-own-signal": oneStepChange(func(p, q *schedule.Program, a, b schedule.Step, task int) bool {
		own := slices.ContainsFunc(q.Tasks[task].After, func(s schedule.Step) bool {
			return s.Kind == schedule.Signal && s.Object == b.Object
		})
		return a.Kind == schedule.Wait && b.Kind == schedule.Wait && a.Object != b.Object && own
	}),
	"relax-signal": oneStepChange(func(p, q *schedule.Program, a, b schedule.Step, _ int) bool {
		return a.Kind == schedule.Signal && !a.Relaxed && b.Relaxed && sameExcept(a, b, "relaxed")
	}),
	"relax-wait": oneStepChange(func(p, q *schedule.Program, a, b schedule.Step, _ int) bool {
		return a.Kind == schedule.Wait && !a.Relaxed && b.Relaxed && sameExcept(a, b, "relaxed")
	}),
	"narrow-scope": oneStepChange(func(p, q *schedule.Program, a, b schedule.Step, _ int) bool {
		return a.Scope != schedule.ScopeCTA && b.Scope == schedule.ScopeCTA && sameExcept(a, b, "scope")
	}),
	"swap-queue-order": func(p, q *schedule.Program) string {
		var diff []int
		for i := range p.Tasks {
			if p.Tasks[i].Name != q.Tasks[i].Name {
				diff = append(diff, i)
			}
		}
		if len(diff) != 2 {
			return "want exactly two tasks exchanged"
		}
		i, j := diff[0], diff[1]
		if p.Tasks[i].Name != q.Tasks[j].Name || p.Tasks[j].Name != q.Tasks[i].Name || p.Tasks[i].Worker != p.Tasks[j].Worker || !p.Tasks[i].Pinned() {
			return "exchanged tasks are not of one worker"
		}
		for k := i + 1; k < j; k++ {
			if p.Tasks[k].Worker == p.Tasks[i].Worker {
				return "exchanged tasks are not adjacent in their queue"
			}
		}
		return ""
	},
	"move-task": func(p, q *schedule.Program) string {
		n := 0
		for i := range p.Tasks {
			if p.Tasks[i].Worker != q.Tasks[i].Worker {
				n++
				if !q.Tasks[i].Pinned() {
					return "moved task is not pinned"
				}
			}
		}
		if n != 1 {
			return "want exactly one task moved"
		}
		return ""
	},
	"exceed-capacity": func(p, q *schedule.Program) string {
		if q.Launch.Workers <= q.Launch.Capacity() {
			return "launch still fits the target"
		}
		if q.Launch.Cooperative != p.Launch.Cooperative {
			return "cooperative flag changed"
		}
		return ""
	},
	"drop-barrier-step": func(p, q *schedule.Program) string {
		if steps(q, schedule.Sync)+steps(q, schedule.Arrive) != steps(p, schedule.Sync)+steps(p, schedule.Arrive)-1 {
			return "want one barrier step fewer"
		}
		return ""
	},
	"barrier-parties-up":   partiesDelta(+1),
	"barrier-parties-down": partiesDelta(-1),
	"swap-acquire-order": func(p, q *schedule.Program) string {
		n := 0
		for i := range p.Tasks {
			a, b := p.Tasks[i].Before, q.Tasks[i].Before
			if slices.Equal(a, b) {
				continue
			}
			n++
			var d []int
			for j := range a {
				if a[j] != b[j] {
					d = append(d, j)
				}
			}
			if len(d) != 2 || a[d[0]] != b[d[1]] || a[d[1]] != b[d[0]] || a[d[0]].Kind != schedule.Acquire || a[d[1]].Kind != schedule.Acquire {
				return "want two acquires of one task exchanged"
			}
		}
		if n != 1 {
			return "want exactly one task changed"
		}
		return ""
	},
	"nonzero-init": func(p, q *schedule.Program) string {
		n := 0
		for i := range p.Counters {
			if q.Counters[i].Init < p.Counters[i].Init {
				return "init decreased"
			}
			if q.Counters[i].Init > p.Counters[i].Init {
				n++
			}
		}
		if n != 1 {
			return "want exactly one counter's init raised"
		}
		return ""
	},
	"counter-overflow": func(p, q *schedule.Program) string {
		for c := range q.Counters {
			if t, carry := total(q, int32(c)); carry != 0 || t > q.Counters[c].Max() {
				return ""
			}
		}
		return "no counter's total exceeds its width"
	},
	"shift-tile": func(p, q *schedule.Program) string {
		var moved *schedule.Access
		task := -1
		for i := range p.Tasks {
			for j := range p.Tasks[i].Writes {
				a, b := p.Tasks[i].Writes[j], q.Tasks[i].Writes[j]
				if a != b {
					if moved != nil || a.Offset == b.Offset || a.Length != b.Length {
						return "want one write's offset changed"
					}
					moved, task = &q.Tasks[i].Writes[j], i
				}
			}
		}
		if moved == nil {
			return "no write moved"
		}
		for i := range q.Tasks {
			for _, o := range q.Tasks[i].Writes {
				if i != task && o.Buffer == moved.Buffer && o.Offset < moved.Offset+int64(moved.Length) && moved.Offset < o.Offset+int64(o.Length) {
					return ""
				}
			}
		}
		return "moved write overlaps no other task's write"
	},
	"widen-oob": oneAccessChange(func(q *schedule.Program, a, b schedule.Access) bool {
		return b.Length > a.Length && end(b) > int64(q.Buffers[b.Buffer].Size)
	}),
	"kv-beyond-cache": oneAccessChange(func(q *schedule.Program, a, b schedule.Access) bool {
		return q.Buffers[b.Buffer].Kind == schedule.KindState && b.Offset > a.Offset && (b.Offset-a.Offset)%int64(a.Length) == 0 &&
			end(b) > int64(q.Buffers[b.Buffer].Size)
	}),
	"drop-tile": func(p, q *schedule.Program) string {
		pr, pw := accesses(p)
		qr, qw := accesses(q)
		if qr != pr || qw != pw-1 {
			return "want exactly one write removed"
		}
		return ""
	},
	"alias-early": func(p, q *schedule.Program) string {
		for i, b := range q.Buffers {
			pb := p.Buffers[i]
			if b.Arena == pb.Arena && b.Offset == pb.Offset {
				continue
			}
			if b.Kind != schedule.KindScratch {
				continue
			}
			for j, o := range q.Buffers {
				if j != i && o.Arena == b.Arena && o.Offset == b.Offset {
					return ""
				}
			}
		}
		return "no scratch buffer moved onto another buffer's slot"
	},
	"write-readonly": func(p, q *schedule.Program) string {
		pr, pw := accesses(p)
		qr, qw := accesses(q)
		if qr != pr || qw != pw+1 {
			return "want exactly one write added"
		}
		for i := range q.Tasks {
			if len(q.Tasks[i].Writes) > len(p.Tasks[i].Writes) {
				w := q.Tasks[i].Writes[len(q.Tasks[i].Writes)-1]
				if !q.Buffers[w.Buffer].Kind.ReadOnly() || !slices.Contains(q.Tasks[i].Reads, w) {
					return "added write is not a read of a read-only buffer"
				}
			}
		}
		return ""
	},
}

func countDelta(k schedule.StepKind, d int) func(p, q *schedule.Program) string {
	return func(p, q *schedule.Program) string {
		if got, want := steps(q, k), steps(p, k)+d; got != want {
			return k.String() + " count " + strconv.Itoa(got) + ", want " + strconv.Itoa(want)
		}
		for _, o := range []schedule.StepKind{schedule.Wait, schedule.Signal, schedule.Sync, schedule.Arrive, schedule.Acquire, schedule.Release, schedule.Fence} {
			if o != k && steps(p, o) != steps(q, o) {
				return o.String() + " count changed"
			}
		}
		return ""
	}
}

// oneStepChange checks that p and q have the same step layout and differ
// in exactly one step, for which ok holds.
func oneStepChange(ok func(p, q *schedule.Program, a, b schedule.Step, task int) bool) func(p, q *schedule.Program) string {
	return func(p, q *schedule.Program) string {
		sp, tp := allSteps(p)
		sq, tq := allSteps(q)
		if len(sp) != len(sq) || !slices.Equal(tp, tq) {
			return "step layout changed"
		}
		n := 0
		for i := range sp {
			if sp[i] != sq[i] {
				n++
				if !ok(p, q, sp[i], sq[i], tp[i]) {
					return "unexpected change to a " + sp[i].Kind.String() + " step"
				}
			}
		}
		if n != 1 {
			return strconv.Itoa(n) + " steps changed, want 1"
		}
		return ""
	}
}

// sameExcept reports whether a and b agree on every field but one.
func sameExcept(a, b schedule.Step, field string) bool {
	switch field {
	case "value":
		b.Value = a.Value
	case "object":
		b.Object = a.Object
	case "relaxed":
		b.Relaxed = a.Relaxed
	case "scope":
		b.Scope = a.Scope
	}
	return a == b
}

// oneAccessChange checks that exactly one access changed, for which ok holds.
func oneAccessChange(ok func(q *schedule.Program, a, b schedule.Access) bool) func(p, q *schedule.Program) string {
	return func(p, q *schedule.Program) string {
		n := 0
		for i := range p.Tasks {
			for _, l := range [][2][]schedule.Access{{p.Tasks[i].Reads, q.Tasks[i].Reads}, {p.Tasks[i].Writes, q.Tasks[i].Writes}} {
				if len(l[0]) != len(l[1]) {
					return "access layout changed"
				}
				for j := range l[0] {
					if l[0][j] != l[1][j] {
						n++
						if !ok(q, l[0][j], l[1][j]) {
							return "unexpected access change"
						}
					}
				}
			}
		}
		if n != 1 {
			return strconv.Itoa(n) + " accesses changed, want 1"
		}
		return ""
	}
}

func partiesDelta(d int) func(p, q *schedule.Program) string {
	return func(p, q *schedule.Program) string {
		sum := 0
		for i := range p.Barriers {
			sum += q.Barriers[i].Parties - p.Barriers[i].Parties
		}
		if sum != d {
			return "parties changed by " + strconv.Itoa(sum)
		}
		return ""
	}
}

// total returns init + every signal on counter c, with the carry out of 64
// bits.
func total(p *schedule.Program, c int32) (sum, carry uint64) {
	sum = p.Counters[c].Init
	for _, t := range p.Tasks {
		for _, l := range [][]schedule.Step{t.Before, t.After} {
			for _, s := range l {
				if s.Kind == schedule.Signal && s.Object == c {
					var cy uint64
					sum, cy = bits.Add64(sum, s.Value, 0)
					carry += cy
				}
			}
		}
	}
	return sum, carry
}

func afterSignals(t *schedule.Task) int {
	n := 0
	for _, s := range t.After {
		if s.Kind == schedule.Signal {
			n++
		}
	}
	return n
}

// end is one past the last byte of an access.
func end(a schedule.Access) int64 {
	return a.Offset + int64((a.RowCount()-1)*a.Stride) + int64(a.Length)
}

// TestCounterOverflowExactTotal: a 64-bit counter whose exact total is
// already past 2^64 − 1 is not a site (a saturating sum would say it sits
// exactly at the maximum).
func TestCounterOverflowExactTotal(t *testing.T) {
	b := schedule.NewBuilder("ov", schedule.Launch{SMs: 1, PerSM: 1, Workers: 1})
	c := b.CounterInit("c", 1<<64-3, 64)
	d := b.CounterInit("d", 1<<64-4, 64)
	b.Task("t").On(0).Signal(c, 1).Signal(c, 2).Signal(d, 1).Signal(d, 2)
	p, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	op, _ := mutate.Lookup("counter-overflow")
	if n := op.Sites(p); n != 1 {
		t.Fatalf("%d sites, want 1 (counter d only)", n)
	}
	q, err := op.Apply(p, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if q.Counters[0] != p.Counters[0] || q.Counters[1].Init != 1<<64-4 {
		t.Errorf("counters %+v, want c untouched and d's range already at the top", q.Counters)
	}
}

// TestExceedCapacityNeedsBlocking: shrinking a non-cooperative target is
// pointless when no pinned task can block; a cooperative launch always has
// both sites.
func TestExceedCapacityNeedsBlocking(t *testing.T) {
	build := func(coop, wait bool) *schedule.Program {
		b := schedule.NewBuilder("cap", schedule.Launch{SMs: 4, PerSM: 1, Workers: 3, Cooperative: coop})
		c := b.Counter("c")
		b.Task("a").On(0).Signal(c, 1)
		tb := b.Task("b").On(2)
		if wait {
			tb.Wait(c, 1)
		}
		p, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	op, _ := mutate.Lookup("exceed-capacity")
	for _, tc := range []struct {
		coop, wait bool
		want       int
	}{{false, false, 0}, {false, true, 1}, {true, false, 2}, {true, true, 2}} {
		if got := op.Sites(build(tc.coop, tc.wait)); got != tc.want {
			t.Errorf("cooperative=%v wait=%v: %d sites, want %d", tc.coop, tc.wait, got, tc.want)
		}
	}
}

// TestSiteOrder pins the numbering of step sites: tasks in list order,
// before-steps then after-steps.
func TestSiteOrder(t *testing.T) {
	p := pipeline(t)
	op, _ := mutate.Lookup("drop-wait")
	q, err := op.Apply(p, 2, 0) // the third wait: task c1's "wait c1 >= 1" (sys)
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Tasks[3].Before) != len(p.Tasks[3].Before)-1 || !slices.Equal(q.Tasks[3].Before, p.Tasks[3].Before[1:]) {
		t.Errorf("drop-wait site 2 removed %v, want task c1's first wait", q.Tasks[3].Before)
	}
}

// TestSignalEarlyBothPlaces: with a queue predecessor, seeds move the
// signal either to the predecessor's after-steps or to the task's own
// before-steps; without one, always to the before-steps.
func TestSignalEarlyBothPlaces(t *testing.T) {
	p := pipeline(t)
	op, _ := mutate.Lookup("signal-early")
	var toPrev, toBefore int
	for seed := range uint64(32) {
		q, err := op.Apply(p, 4, seed) // task c0's "signal c2", after p0 on worker 0
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case len(q.Tasks[0].After) == len(p.Tasks[0].After)+1:
			toPrev++
		case len(q.Tasks[2].Before) == len(p.Tasks[2].Before)+1:
			toBefore++
		default:
			t.Fatalf("seed %d: signal went elsewhere", seed)
		}
	}
	if toPrev == 0 || toBefore == 0 {
		t.Errorf("to predecessor %d, to own before-steps %d; want both", toPrev, toBefore)
	}
	h := handoff(t)
	for seed := range uint64(8) {
		q, err := op.Apply(h, 0, seed)
		if err != nil {
			t.Fatal(err)
		}
		if len(q.Tasks[0].Before) != 1 || q.Tasks[0].Before[0].Kind != schedule.Signal || len(q.Tasks[0].After) != 0 {
			t.Errorf("seed %d: produce is %+v, want its signal before the body", seed, q.Tasks[0])
		}
	}
}

// FuzzApply applies a fuzzer-chosen operator at a fuzzer-chosen site of a
// random program: never a panic, always a valid mutant or ErrSite.
func FuzzApply(f *testing.F) {
	f.Add(uint64(0), uint8(0), uint16(0), uint64(0))
	f.Add(uint64(7), uint8(24), uint16(3), uint64(1<<63))
	f.Fuzz(func(t *testing.T, progSeed uint64, opi uint8, site uint16, seed uint64) {
		p := randomProgram(progSeed)
		if p == nil {
			return
		}
		ops := mutate.Operators()
		op := ops[int(opi)%len(ops)]
		n := op.Sites(p)
		if n == 0 {
			return
		}
		if _, err := applyChecked(t, op, p, int(site)%n, seed); err != nil && !errors.Is(err, mutate.ErrSite) {
			t.Fatalf("%s: %v", op.Name, err)
		}
	})
}
