package schedule

import (
	"fmt"
	"math"
)

// Handles returned by [Builder]. They are dense indices into the program
// being built.
type (
	BufferRef    int32 // a buffer of the program being built
	CounterRef   int32 // a counter of the program being built
	BarrierRef   int32 // a barrier of the program being built
	SemaphoreRef int32 // a semaphore of the program being built
	ArenaRef     int32 // an arena of the program being built
)

// A StepOption adjusts a synchronization step added by a [TaskBuilder].
type StepOption func(*Step)

// Relaxed makes a wait or signal relaxed instead of acquire or release.
func Relaxed() StepOption { return func(s *Step) { s.Relaxed = true } }

// WithScope sets a step's scope (the default is ScopeGPU).
func WithScope(sc Scope) StepOption { return func(s *Step) { s.Scope = sc } }

// Builder assembles a [Program] for code generators. Methods record every
// misuse and [Builder.Build] reports them, so generator code can chain
// calls without checking each one. Build's error is a *[Error] like
// [Program.Validate]'s: each misuse is a [Diagnostic] with an invalid.*
// code and the JSON path of the element it concerns (a duplicate counter
// name is invalid.duplicate at $.counters[3].name), followed by the
// structural problems Validate finds in what was built.
//
// A Builder is not safe for concurrent use.
type Builder struct {
	p      Program
	names  map[string]int // "kind\x00name" of everything declared → index
	misuse diags
	built  bool
	spare  Task // what a TaskBuilder edits once the builder has built
}

// NewBuilder starts a program with the given name and launch.
func NewBuilder(name string, launch Launch) *Builder {
	return &Builder{p: Program{Name: name, Launch: launch}, names: map[string]int{}}
}

// usable reports whether the builder may still change its program; after
// Build it records the misuse at path and returns false.
func (b *Builder) usable(path string) bool {
	if b.built {
		b.misuse.add(CodeValue, path, "the builder was used after Build")
		return false
	}
	return true
}

func (b *Builder) declare(kind, list string, i int, name string) {
	key := kind + "\x00" + name
	if j, dup := b.names[key]; dup {
		b.misuse.add(CodeDuplicate, fmt.Sprintf("$.%s[%d].name", list, i), "duplicate %s name %q (also $.%s[%d])", kind, name, list, j)
		return
	}
	b.names[key] = i
}

// Arena declares an arena of size bytes that buffers can share.
func (b *Builder) Arena(name string, size uint64) ArenaRef {
	if !b.usable("$.arenas") {
		return -1
	}
	b.declare("arena", "arenas", len(b.p.Arenas), name)
	b.p.Arenas = append(b.p.Arenas, Arena{Name: name, Size: size})
	return ArenaRef(len(b.p.Arenas) - 1)
}

// Buffer declares a buffer of size bytes.
func (b *Builder) Buffer(name string, kind BufferKind, size uint64) BufferRef {
	if !b.usable("$.buffers") {
		return -1
	}
	b.declare("buffer", "buffers", len(b.p.Buffers), name)
	b.p.Buffers = append(b.p.Buffers, Buffer{Name: name, Kind: kind, Size: size, Arena: NoArena})
	return BufferRef(len(b.p.Buffers) - 1)
}

// BufferIn declares a buffer placed at offset within an arena, so it may
// alias other buffers of that arena.
func (b *Builder) BufferIn(name string, kind BufferKind, size uint64, arena ArenaRef, offset uint64) BufferRef {
	r := b.Buffer(name, kind, size)
	if r < 0 {
		return r
	}
	if offset > math.MaxInt64 {
		b.misuse.add(CodeSize, fmt.Sprintf("$.buffers[%d].offset", r), "buffer %q has offset %d", name, offset)
	}
	b.p.Buffers[r].Arena = int32(arena)
	b.p.Buffers[r].Offset = offset
	return r
}

// Counter declares a 32-bit counter starting at 0.
func (b *Builder) Counter(name string) CounterRef { return b.CounterInit(name, 0, 32) }

// CounterInit declares a counter with an initial value and a width in bits.
func (b *Builder) CounterInit(name string, init uint64, width uint8) CounterRef {
	if !b.usable("$.counters") {
		return -1
	}
	b.declare("counter", "counters", len(b.p.Counters), name)
	b.p.Counters = append(b.p.Counters, Counter{Name: name, Init: init, Width: width})
	return CounterRef(len(b.p.Counters) - 1)
}

// Barrier declares a barrier for parties participants.
func (b *Builder) Barrier(name string, parties int) BarrierRef {
	if !b.usable("$.barriers") {
		return -1
	}
	b.declare("barrier", "barriers", len(b.p.Barriers), name)
	b.p.Barriers = append(b.p.Barriers, Barrier{Name: name, Parties: parties})
	return BarrierRef(len(b.p.Barriers) - 1)
}

// Semaphore declares a semaphore holding tokens initial tokens.
func (b *Builder) Semaphore(name string, tokens uint64) SemaphoreRef {
	if !b.usable("$.semaphores") {
		return -1
	}
	b.declare("semaphore", "semaphores", len(b.p.Semaphores), name)
	b.p.Semaphores = append(b.p.Semaphores, Semaphore{Name: name, Tokens: tokens})
	return SemaphoreRef(len(b.p.Semaphores) - 1)
}

// Task appends a dynamic task (claimed by any worker once ready) and returns
// a builder for it; pin it with [TaskBuilder.On].
func (b *Builder) Task(name string) *TaskBuilder {
	if !b.usable("$.tasks") {
		return &TaskBuilder{b: b, i: -1}
	}
	b.declare("task", "tasks", len(b.p.Tasks), name)
	b.p.Tasks = append(b.p.Tasks, Task{Name: name, Worker: Dynamic})
	return &TaskBuilder{b: b, i: len(b.p.Tasks) - 1}
}

// Len is the number of tasks added so far.
func (b *Builder) Len() int { return len(b.p.Tasks) }

// Build validates the program and returns it, or returns a *[Error] listing
// every misuse recorded so far and every structural problem of the program
// (see [Builder]). Build hands the program over: later calls on the
// builder or its task builders change nothing and make a second Build fail.
func (b *Builder) Build() (*Program, error) {
	if !b.usable("$") {
		return nil, b.misuse.err()
	}
	b.built = true
	p := new(Program)
	*p = b.p
	b.p = Program{}
	ds := b.misuse
	if err := p.Validate(); err != nil {
		for _, d := range err.(*Error).Diagnostics {
			if !ds.has(d.Code, d.Path) {
				ds.add(d.Code, d.Path, "%s", d.Message)
			}
		}
	}
	if err := ds.err(); err != nil {
		return nil, err
	}
	return p, nil
}

// has reports whether a diagnostic with this code and path is listed.
func (ds *diags) has(code, path string) bool {
	for _, d := range ds.list {
		if d.Code == code && d.Path == path {
			return true
		}
	}
	return false
}

// TaskBuilder adds steps and accesses to one task. Waits, barrier syncs,
// acquires and FenceBefore go before the body; signals, arrivals, releases
// and FenceAfter go after it, each list in call order.
type TaskBuilder struct {
	b *Builder
	i int
}

// task returns the task being built, or, once the builder has built, a
// spare task whose edits go nowhere (the misuse is recorded).
func (t *TaskBuilder) task() *Task {
	if t.i < 0 || !t.b.usable(fmt.Sprintf("$.tasks[%d]", t.i)) {
		t.b.spare = Task{}
		return &t.b.spare
	}
	return &t.b.p.Tasks[t.i]
}

// path is the JSON path of an element of the task.
func (t *TaskBuilder) path(format string, args ...any) string {
	return fmt.Sprintf("$.tasks[%d]", t.i) + fmt.Sprintf(format, args...)
}

// Index is the task's index in the program.
func (t *TaskBuilder) Index() int { return t.i }

// On pins the task to a worker's static queue: 0 to Launch.Workers-1, or
// [Dynamic] to unpin it.
func (t *TaskBuilder) On(worker int) *TaskBuilder {
	tk := t.task()
	if worker < Dynamic || worker > math.MaxInt32 {
		t.b.misuse.add(CodeWorker, t.path(".worker"), "task %q pinned to worker %d", tk.Name, worker)
		return t
	}
	tk.Worker = int32(worker)
	return t
}

// Op sets the operation the body performs.
func (t *TaskBuilder) Op(op string) *TaskBuilder { t.task().Op = op; return t }

// Param sets one operand of the operation.
func (t *TaskBuilder) Param(key string, v int64) *TaskBuilder {
	t.task().Params.Set(key, v)
	return t
}

func (t *TaskBuilder) before(s Step, opts []StepOption) *TaskBuilder {
	tk := t.task()
	t.apply(&s, opts, t.path(".before[%d]", len(tk.Before)))
	tk.Before = append(tk.Before, s)
	return t
}

func (t *TaskBuilder) after(s Step, opts []StepOption) *TaskBuilder {
	tk := t.task()
	t.apply(&s, opts, t.path(".after[%d]", len(tk.After)))
	tk.After = append(tk.After, s)
	return t
}

// apply applies step options; a nil option is a misuse.
func (t *TaskBuilder) apply(s *Step, opts []StepOption, path string) {
	for _, o := range opts {
		if o == nil {
			t.b.misuse.add(CodeValue, path, "nil StepOption")
			continue
		}
		o(s)
	}
}

// Wait makes the body wait until c >= threshold.
func (t *TaskBuilder) Wait(c CounterRef, threshold uint64, opts ...StepOption) *TaskBuilder {
	return t.before(Step{Kind: Wait, Object: int32(c), Value: threshold}, opts)
}

// Signal adds amount to c after the body.
func (t *TaskBuilder) Signal(c CounterRef, amount uint64, opts ...StepOption) *TaskBuilder {
	return t.after(Step{Kind: Signal, Object: int32(c), Value: amount}, opts)
}

// Sync arrives at a barrier and waits for the generation before the body.
func (t *TaskBuilder) Sync(br BarrierRef) *TaskBuilder {
	return t.before(Step{Kind: Sync, Object: int32(br)}, nil)
}

// SyncAfter arrives at a barrier and waits for the generation after the body.
func (t *TaskBuilder) SyncAfter(br BarrierRef) *TaskBuilder {
	return t.after(Step{Kind: Sync, Object: int32(br)}, nil)
}

// Arrive arrives at a barrier after the body without waiting.
func (t *TaskBuilder) Arrive(br BarrierRef) *TaskBuilder {
	return t.after(Step{Kind: Arrive, Object: int32(br)}, nil)
}

// Acquire takes n tokens from a semaphore before the body.
func (t *TaskBuilder) Acquire(s SemaphoreRef, n uint64) *TaskBuilder {
	return t.before(Step{Kind: Acquire, Object: int32(s), Value: n}, nil)
}

// Release gives n tokens back to a semaphore after the body.
func (t *TaskBuilder) Release(s SemaphoreRef, n uint64) *TaskBuilder {
	return t.after(Step{Kind: Release, Object: int32(s), Value: n}, nil)
}

// FenceBefore adds a fence before the body.
func (t *TaskBuilder) FenceBefore(sc Scope) *TaskBuilder {
	return t.before(Step{Kind: Fence, Scope: sc}, nil)
}

// FenceAfter adds a fence after the body.
func (t *TaskBuilder) FenceAfter(sc Scope) *TaskBuilder {
	return t.after(Step{Kind: Fence, Scope: sc}, nil)
}

// Read adds a 1-D read of length bytes at offset.
func (t *TaskBuilder) Read(buf BufferRef, offset, length uint64) *TaskBuilder {
	return t.ReadTile(buf, offset, length, 0, 0)
}

// ReadTile adds a 2-D read: rows rows of length bytes, stride bytes apart.
func (t *TaskBuilder) ReadTile(buf BufferRef, offset, length, rows, stride uint64) *TaskBuilder {
	tk := t.task()
	t.checkOffset(offset, t.path(".reads[%d].offset", len(tk.Reads)))
	tk.Reads = append(tk.Reads, Access{Buffer: int32(buf), Offset: int64(offset), Length: length, Rows: rows, Stride: stride})
	return t
}

// checkOffset records an offset that does not fit Access.Offset (beyond
// 2^63-1, it would turn negative).
func (t *TaskBuilder) checkOffset(offset uint64, path string) {
	if offset > math.MaxInt64 {
		t.b.misuse.add(CodeSize, path, "access offset %d does not fit in an int64", offset)
	}
}

// Write adds a 1-D write of length bytes at offset.
func (t *TaskBuilder) Write(buf BufferRef, offset, length uint64) *TaskBuilder {
	return t.WriteTile(buf, offset, length, 0, 0)
}

// WriteTile adds a 2-D write: rows rows of length bytes, stride bytes apart.
func (t *TaskBuilder) WriteTile(buf BufferRef, offset, length, rows, stride uint64) *TaskBuilder {
	tk := t.task()
	t.checkOffset(offset, t.path(".writes[%d].offset", len(tk.Writes)))
	tk.Writes = append(tk.Writes, Access{Buffer: int32(buf), Offset: int64(offset), Length: length, Rows: rows, Stride: stride})
	return t
}
