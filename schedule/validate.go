package schedule

import (
	"fmt"
	"hash/maphash"
	"strings"
	"sync"
)

// Codes of structural diagnostics. They are part of the stable finding codes
// of the verifier (the family before the dot is "invalid").
const (
	CodeSyntax       = "invalid.syntax"        // not JSON, or trailing data
	CodeFormat       = "invalid.format"        // missing or unknown "format"
	CodeUnknownField = "invalid.unknown-field" // a field the format does not define
	CodeType         = "invalid.type"          // a value of the wrong JSON type
	CodeMissing      = "invalid.missing"       // a required field is absent
	CodeDuplicate    = "invalid.duplicate"     // a name or key declared twice
	CodeReference    = "invalid.reference"     // a name that nothing declares
	CodeName         = "invalid.name"          // an empty name
	CodeSize         = "invalid.size"          // a size that is zero, negative or overflows
	CodeEmptyAccess  = "invalid.empty-access"  // an access of zero bytes
	CodeThreshold    = "invalid.threshold"     // a wait threshold of 0 or beyond the counter's width
	CodeWorker       = "invalid.worker"        // a worker index outside the launch
	CodeValue        = "invalid.value"         // an enumerated value or amount that is not allowed
	CodeLaunch       = "invalid.launch"        // an impossible launch configuration
	CodeLimit        = "invalid.limit"         // more items than megaproof accepts
)

// Limits on program size. Larger inputs are rejected with CodeLimit rather
// than exhausting memory.
const (
	MaxTasks        = 1 << 24
	MaxWorkers      = 1 << 20
	MaxStepsPerTask = 1 << 12
	MaxObjects      = 1 << 24
	maxExtent       = 1 << 62 // bound on every byte quantity, so sums never overflow
)

// Diagnostic is one reason a program is malformed.
type Diagnostic struct {
	Code    string // one of the Code constants
	Path    string // JSON path, e.g. $.tasks[3].before[0].wait
	Message string
}

func (d Diagnostic) String() string { return d.Code + " at " + d.Path + ": " + d.Message }

// Error is returned for a malformed program. It lists every diagnostic
// found, in document order, up to a limit.
type Error struct {
	Diagnostics []Diagnostic
}

func (e *Error) Error() string {
	var sb strings.Builder
	for i, d := range e.Diagnostics {
		if i > 0 {
			sb.WriteString("\n")
		}
		sb.WriteString(d.String())
	}
	return sb.String()
}

const maxDiagnostics = 50

type diags struct {
	list []Diagnostic
	n    int // diagnostics added, those beyond maxDiagnostics included
}

func (ds *diags) add(code, path, format string, args ...any) {
	ds.n++
	if len(ds.list) < maxDiagnostics {
		ds.list = append(ds.list, Diagnostic{Code: code, Path: path, Message: fmt.Sprintf(format, args...)})
	}
}

func (ds *diags) err() error {
	if len(ds.list) == 0 {
		return nil
	}
	return &Error{Diagnostics: ds.list}
}

// Validate checks the program's structure: names, references, sizes,
// thresholds and workers. It returns nil or an *[Error] whose paths name the
// JSON location of each problem.
func (p *Program) Validate() error {
	var ds diags
	if p == nil {
		ds.add(CodeSyntax, "$", "no program (nil)")
		return ds.err()
	}
	p.validate(&ds)
	return ds.err()
}

func (p *Program) validate(ds *diags) {
	l := p.Launch
	switch {
	case l.SMs < 1:
		ds.add(CodeLaunch, "$.launch.sms", "need at least one SM, have %d", l.SMs)
	case l.SMs > MaxWorkers:
		ds.add(CodeLimit, "$.launch.sms", "%d SMs exceed the limit of %d", l.SMs, MaxWorkers)
	}
	switch {
	case l.PerSM < 1:
		ds.add(CodeLaunch, "$.launch.blocks_per_sm", "need at least one block per SM, have %d", l.PerSM)
	case l.PerSM > 1024:
		ds.add(CodeLimit, "$.launch.blocks_per_sm", "%d blocks per SM exceed the limit of 1024", l.PerSM)
	}
	switch {
	case l.Workers < 1:
		ds.add(CodeLaunch, "$.launch.workers", "need at least one worker, have %d", l.Workers)
	case l.Workers > MaxWorkers:
		ds.add(CodeLimit, "$.launch.workers", "%d workers exceed the limit of %d", l.Workers, MaxWorkers)
	}
	for _, n := range []struct {
		what string
		have int
	}{{"arenas", len(p.Arenas)}, {"buffers", len(p.Buffers)}, {"counters", len(p.Counters)}, {"barriers", len(p.Barriers)}, {"semaphores", len(p.Semaphores)}} {
		if n.have > MaxObjects {
			ds.add(CodeLimit, "$."+n.what, "%d %s exceed the limit of %d", n.have, n.what, MaxObjects)
			return
		}
	}
	if len(p.Tasks) > MaxTasks {
		ds.add(CodeLimit, "$.tasks", "%d tasks exceed the limit of %d", len(p.Tasks), MaxTasks)
		return
	}
	// Names are checked beside the rest on large programs; the
	// diagnostics keep their order.
	if len(p.Tasks) >= 1<<14 {
		p.validateLarge(ds)
		return
	}
	// Names first, then the rest, as validateLarge orders them.
	p.checkAllNames(ds)
	names := ds.n
	p.validateObjects(ds)
	for i := range p.Tasks {
		p.validateTask(ds, i)
	}
	if ds.n == names {
		p.validateTokenTotals(ds)
	}
}

// validateLarge is validate's second half on large programs: names are
// checked beside the rest, and the diagnostics keep their order.
func (p *Program) validateLarge(ds *diags) {
	names, rest := new(diags), new(diags)
	var wg sync.WaitGroup
	wg.Go(func() { p.checkAllNames(names) })
	p.validateObjects(rest)
	for i := range p.Tasks {
		p.validateTask(rest, i)
	}
	if len(rest.list) == 0 {
		p.validateTokenTotals(rest)
	}
	wg.Wait()
	for _, part := range [2]*diags{names, rest} {
		for _, d := range part.list {
			if len(ds.list) < maxDiagnostics {
				ds.list = append(ds.list, d)
			}
		}
	}
}

// MaxTokens bounds what a semaphore can ever hold: its initial tokens plus
// every release amount in the program. Within it no token count wraps in
// any execution, whatever the order.
const MaxTokens = 1<<63 - 1

// validateTokenTotals rejects semaphores whose initial tokens and releases
// could add up past MaxTokens, at the release step that crosses it.
func (p *Program) validateTokenTotals(ds *diags) {
	if len(p.Semaphores) == 0 {
		return
	}
	total := make([]uint64, len(p.Semaphores))
	over := make([]bool, len(p.Semaphores))
	for i, s := range p.Semaphores {
		total[i] = s.Tokens
	}
	for i := range p.Tasks {
		t := &p.Tasks[i]
		for k, list := range [2][]Step{t.Before, t.After} {
			for j, s := range list {
				if s.Kind != Release || over[s.Object] {
					continue
				}
				// Both terms are at most 2^62 here or below MaxTokens: no wrap.
				total[s.Object] += s.Value
				if total[s.Object] > MaxTokens {
					over[s.Object] = true
					at := loc{i, [2]string{"before", "after"}[k], j}
					ds.add(CodeLimit, at.String()+".n", "semaphore %q: its %d initial tokens and the releases up to this one exceed 2^63-1 tokens", p.Semaphores[s.Object].Name, p.Semaphores[s.Object].Tokens)
				}
			}
		}
	}
}

func (p *Program) checkAllNames(ds *diags) {
	checkNames(ds, "arenas", len(p.Arenas), func(i int) string { return p.Arenas[i].Name })
	checkNames(ds, "buffers", len(p.Buffers), func(i int) string { return p.Buffers[i].Name })
	checkNames(ds, "counters", len(p.Counters), func(i int) string { return p.Counters[i].Name })
	checkNames(ds, "barriers", len(p.Barriers), func(i int) string { return p.Barriers[i].Name })
	checkNames(ds, "semaphores", len(p.Semaphores), func(i int) string { return p.Semaphores[i].Name })
	checkNames(ds, "tasks", len(p.Tasks), func(i int) string { return p.Tasks[i].Name })
}

func (p *Program) validateObjects(ds *diags) {
	for i, a := range p.Arenas {
		if a.Size == 0 || a.Size > maxExtent {
			ds.add(CodeSize, fmt.Sprintf("$.arenas[%d].size", i), "arena %q has size %d", a.Name, a.Size)
		}
	}
	for i, b := range p.Buffers {
		path := func() string { return fmt.Sprintf("$.buffers[%d]", i) } // only for a diagnostic
		if b.Kind < KindInput || b.Kind > KindState {
			ds.add(CodeValue, path()+".kind", "buffer %q has unknown kind %d", b.Name, b.Kind)
		}
		if b.Size == 0 || b.Size > maxExtent {
			ds.add(CodeSize, path()+".size", "buffer %q has size %d", b.Name, b.Size)
			continue
		}
		switch {
		case b.Arena == NoArena:
			if b.Offset != 0 {
				ds.add(CodeValue, path()+".offset", "buffer %q has an offset but no arena", b.Name)
			}
		case b.Arena < 0 || int(b.Arena) >= len(p.Arenas):
			ds.add(CodeReference, path()+".arena", "buffer %q names arena %d of %d", b.Name, b.Arena, len(p.Arenas))
		default:
			a := p.Arenas[b.Arena]
			if b.Offset > maxExtent || b.Offset+b.Size > a.Size {
				ds.add(CodeSize, path()+".offset", "buffer %q at [%d, %d) does not fit arena %q of %d bytes", b.Name, b.Offset, b.Offset+b.Size, a.Name, a.Size)
			}
		}
	}
	for i, c := range p.Counters {
		path := func() string { return fmt.Sprintf("$.counters[%d]", i) }
		if c.Width != 32 && c.Width != 64 {
			ds.add(CodeValue, path()+".width", "counter %q has width %d; want 32 or 64", c.Name, c.Width)
		} else if c.Init > c.Max() {
			ds.add(CodeSize, path()+".init", "counter %q starts at %d, beyond its %d-bit width", c.Name, c.Init, c.Width)
		}
	}
	for i, b := range p.Barriers {
		if b.Parties < 1 || b.Parties > MaxTasks {
			ds.add(CodeSize, fmt.Sprintf("$.barriers[%d].parties", i), "barrier %q has %d parties", b.Name, b.Parties)
		}
	}
	for i, s := range p.Semaphores {
		if s.Tokens > maxExtent {
			ds.add(CodeSize, fmt.Sprintf("$.semaphores[%d].tokens", i), "semaphore %q holds %d tokens; want at most 2^62", s.Name, s.Tokens)
		}
	}
}

// smallNames is the most names checkNames compares pairwise.
const smallNames = 12

// nameTables holds checkNames's tables between calls, so that validating
// program after program reuses one.
var nameTables = sync.Pool{New: func() any { return new([]uint64) }}

func checkNames(ds *diags, what string, n int, name func(int) string) {
	// An open-addressing table keyed by a hash of the name, each slot the
	// hash's high half and the index + 1: names are compared only when
	// their hashes agree. A map of a million strings costs several times
	// more.
	if n == 0 {
		return
	}
	if n <= smallNames {
		// A few names are compared pairwise, with no table to allocate.
		for i := 0; i < n; i++ {
			s := name(i)
			if s == "" {
				ds.add(CodeName, fmt.Sprintf("$.%s[%d].name", what, i), "empty name")
				continue
			}
			for j := 0; j < i; j++ {
				if name(j) == s {
					ds.add(CodeDuplicate, fmt.Sprintf("$.%s[%d].name", what, i), "name %q already used by $.%s[%d]", s, what, j)
					break
				}
			}
		}
		return
	}
	size := 16
	for size < 2*n {
		size *= 2
	}
	tp := nameTables.Get().(*[]uint64)
	defer nameTables.Put(tp)
	if cap(*tp) < size {
		*tp = make([]uint64, size)
	}
	table := (*tp)[:size] // 0 empty
	clear(table)
	seed := maphash.MakeSeed()
	for i := 0; i < n; i++ {
		s := name(i)
		if s == "" {
			ds.add(CodeName, fmt.Sprintf("$.%s[%d].name", what, i), "empty name")
			continue
		}
		hash := maphash.String(seed, s)
		tag := hash >> 32 << 32
		h := int(hash & uint64(size-1))
		dup := -1
		for ; table[h] != 0; h = (h + 1) & (size - 1) {
			if table[h]&^0xffffffff == tag {
				if j := int(uint32(table[h])) - 1; name(j) == s {
					dup = j
					break
				}
			}
		}
		if dup >= 0 {
			ds.add(CodeDuplicate, fmt.Sprintf("$.%s[%d].name", what, i), "name %q already used by $.%s[%d]", s, what, dup)
			continue
		}
		table[h] = tag | uint64(i+1)
	}
}

func (p *Program) validateTask(ds *diags, i int) {
	t := &p.Tasks[i]
	if t.Worker != Dynamic && (t.Worker < 0 || int(t.Worker) >= p.Launch.Workers) {
		ds.add(CodeWorker, fmt.Sprintf("$.tasks[%d].worker", i), "task %q is pinned to worker %d; the launch has workers 0..%d", t.Name, t.Worker, p.Launch.Workers-1)
	}
	if len(t.Before) > MaxStepsPerTask || len(t.After) > MaxStepsPerTask || len(t.Reads) > MaxStepsPerTask || len(t.Writes) > MaxStepsPerTask {
		ds.add(CodeLimit, fmt.Sprintf("$.tasks[%d]", i), "task %q has more than %d steps or accesses in one list", t.Name, MaxStepsPerTask)
		return
	}
	// The usual step and access are tested inline; anything else gets the
	// full checks (TestValidateShortcuts compares the two).
	for j := range t.Before {
		if s := &t.Before[j]; !p.plainStep(s) {
			p.validateStep(ds, loc{i, "before", j}, *s)
		}
	}
	for j := range t.After {
		if s := &t.After[j]; !p.plainStep(s) {
			p.validateStep(ds, loc{i, "after", j}, *s)
		}
	}
	for j := range t.Reads {
		if a := &t.Reads[j]; !p.plainAccess(a) {
			p.validateAccess(ds, loc{i, "reads", j}, *a)
		}
	}
	for j := range t.Writes {
		if a := &t.Writes[j]; !p.plainAccess(a) {
			p.validateAccess(ds, loc{i, "writes", j}, *a)
		}
	}
	if len(t.Params) > 1 {
		validateParams(ds, i, t.Params)
	}
}

// validateParams rejects a key that a task's operands repeat (the JSON
// form could not hold it).
func validateParams(ds *diags, i int, ps Params) {
	sorted := true
	for j := 1; j < len(ps); j++ {
		if ps[j].Key <= ps[j-1].Key {
			sorted = false
			break
		}
	}
	if sorted {
		return
	}
	seen := make(map[string]bool, len(ps))
	for _, pr := range ps {
		if seen[pr.Key] {
			ds.add(CodeDuplicate, fmt.Sprintf("$.tasks[%d].params.%s", i, pr.Key), "param %q repeated", pr.Key)
			return
		}
		seen[pr.Key] = true
	}
}

// loc is the JSON location of a step or access, formatted only when a
// diagnostic needs it.
type loc struct {
	task int
	list string
	idx  int
}

func (l loc) String() string { return fmt.Sprintf("$.tasks[%d].%s[%d]", l.task, l.list, l.idx) }

func (p *Program) validateStep(ds *diags, at loc, s Step) {
	var n int
	switch s.Kind {
	case Wait, Signal:
		n = len(p.Counters)
	case Sync, Arrive:
		n = len(p.Barriers)
	case Acquire, Release:
		n = len(p.Semaphores)
	case Fence:
		n = 1
	default:
		ds.add(CodeValue, at.String(), "unknown step kind %d", s.Kind)
		return
	}
	key := func() string { return at.String() + "." + s.Kind.String() }
	if s.Kind == Fence {
		if s.Object != 0 || s.Value != 0 {
			ds.add(CodeValue, key(), "a fence takes no object or value")
		}
	} else if s.Object < 0 || int(s.Object) >= n {
		ds.add(CodeReference, key(), "%s refers to object %d of %d", s.Kind, s.Object, n)
		return
	}
	if s.Scope > ScopeSys {
		ds.add(CodeValue, at.String()+".scope", "unknown scope %d", s.Scope)
	} else if s.Scope != ScopeGPU && (s.Kind == Sync || s.Kind == Arrive) {
		ds.add(CodeValue, at.String()+".scope", "a barrier step takes no scope")
	}
	if s.Relaxed && s.Kind != Wait && s.Kind != Signal {
		ds.add(CodeValue, at.String()+".order", "only waits and signals can be relaxed, not %s", s.Kind)
	}
	switch s.Kind {
	case Wait:
		c := p.Counters[s.Object]
		if s.Value == 0 {
			ds.add(CodeThreshold, at.String()+".ge", "wait on %q has threshold 0; it would never wait", c.Name)
		} else if c.Width == 32 || c.Width == 64 {
			if s.Value > c.Max() {
				ds.add(CodeThreshold, at.String()+".ge", "threshold %d exceeds the %d-bit width of counter %q", s.Value, c.Width, c.Name)
			}
		}
	case Signal:
		if s.Value == 0 || s.Value > maxExtent {
			ds.add(CodeValue, at.String()+".add", "signal amount %d; want 1..2^62", s.Value)
		}
	case Acquire, Release:
		if s.Value == 0 || s.Value > maxExtent {
			ds.add(CodeValue, at.String()+".n", "%s amount %d; want 1..2^62", s.Kind, s.Value)
		}
	case Sync, Arrive:
		if s.Value != 0 {
			ds.add(CodeValue, key(), "a barrier step takes no value")
		}
	}
}

// plainStep reports that s is a wait or signal that validateStep accepts:
// on a counter of the program, with a known scope and, for a wait, a
// threshold within the counter's width, for a signal an amount in 1..2^62.
// It is false for every other step, which validateStep then checks.
func (p *Program) plainStep(s *Step) bool {
	if uint(s.Object) >= uint(len(p.Counters)) || s.Scope > ScopeSys || s.Value == 0 {
		return false
	}
	switch s.Kind {
	case Wait:
		c := &p.Counters[s.Object]
		return c.Width == 32 && s.Value < 1<<32 || c.Width == 64
	case Signal:
		return s.Value <= maxExtent
	}
	return false
}

// plainAccess reports that a is a single-run access that validateAccess
// accepts: to a buffer of the program, of 1..2^62 bytes at an offset within
// ±2^62, with no rows or stride. It is false for every other access, which
// validateAccess then checks.
func (p *Program) plainAccess(a *Access) bool {
	return uint(a.Buffer) < uint(len(p.Buffers)) && a.Length-1 < maxExtent && a.Offset <= maxExtent && a.Offset >= -maxExtent && a.Rows <= 1 && a.Stride == 0
}

func (p *Program) validateAccess(ds *diags, at loc, a Access) {
	if a.Buffer < 0 || int(a.Buffer) >= len(p.Buffers) {
		ds.add(CodeReference, at.String()+".buffer", "access refers to buffer %d of %d", a.Buffer, len(p.Buffers))
		return
	}
	if a.Length == 0 {
		ds.add(CodeEmptyAccess, at.String()+".length", "access to %q of zero bytes", p.Buffers[a.Buffer].Name)
		return
	}
	if a.Length > maxExtent || a.Offset > maxExtent || a.Offset < -maxExtent || a.Rows > maxExtent || a.Stride > maxExtent {
		ds.add(CodeSize, at.String(), "access to %q is larger than 2^62 bytes", p.Buffers[a.Buffer].Name)
		return
	}
	if a.Rows > 1 {
		if a.Stride == 0 {
			ds.add(CodeSize, at.String()+".stride", "a %d-row access needs a nonzero stride", a.Rows)
			return
		}
		if a.Rows > maxExtent/a.Stride || (a.Rows-1)*a.Stride > maxExtent-a.Length {
			ds.add(CodeSize, at.String()+".rows", "access to %q spans more than 2^62 bytes", p.Buffers[a.Buffer].Name)
		}
	} else if a.Rows <= 1 && a.Stride != 0 && a.Rows == 0 {
		ds.add(CodeValue, at.String()+".stride", "a stride needs rows")
	}
}
