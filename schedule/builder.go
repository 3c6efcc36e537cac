package schedule

import "fmt"

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

// Builder assembles a [Program] for code generators. Methods record the
// first misuse and report it from [Builder.Build], so generator code can
// chain calls without checking each one.
type Builder struct {
	p     Program
	names map[string]bool // "kind\x00name" of everything declared
	err   error
}

// NewBuilder starts a program with the given name and launch.
func NewBuilder(name string, launch Launch) *Builder {
	return &Builder{p: Program{Name: name, Launch: launch}, names: map[string]bool{}}
}

func (b *Builder) declare(kind, name string) {
	key := kind + "\x00" + name
	if b.names[key] && b.err == nil {
		b.err = fmt.Errorf("schedule: duplicate %s name %q", kind, name)
	}
	b.names[key] = true
}

// Arena declares an arena of size bytes that buffers can share.
func (b *Builder) Arena(name string, size uint64) ArenaRef {
	b.declare("arena", name)
	b.p.Arenas = append(b.p.Arenas, Arena{Name: name, Size: size})
	return ArenaRef(len(b.p.Arenas) - 1)
}

// Buffer declares a buffer of size bytes.
func (b *Builder) Buffer(name string, kind BufferKind, size uint64) BufferRef {
	b.declare("buffer", name)
	b.p.Buffers = append(b.p.Buffers, Buffer{Name: name, Kind: kind, Size: size, Arena: NoArena})
	return BufferRef(len(b.p.Buffers) - 1)
}

// BufferIn declares a buffer placed at offset within an arena, so it may
// alias other buffers of that arena.
func (b *Builder) BufferIn(name string, kind BufferKind, size uint64, arena ArenaRef, offset uint64) BufferRef {
	r := b.Buffer(name, kind, size)
	b.p.Buffers[r].Arena = int32(arena)
	b.p.Buffers[r].Offset = offset
	return r
}

// Counter declares a 32-bit counter starting at 0.
func (b *Builder) Counter(name string) CounterRef { return b.CounterInit(name, 0, 32) }

// CounterInit declares a counter with an initial value and a width in bits.
func (b *Builder) CounterInit(name string, init uint64, width uint8) CounterRef {
	b.declare("counter", name)
	b.p.Counters = append(b.p.Counters, Counter{Name: name, Init: init, Width: width})
	return CounterRef(len(b.p.Counters) - 1)
}

// Barrier declares a barrier for parties participants.
func (b *Builder) Barrier(name string, parties int) BarrierRef {
	b.declare("barrier", name)
	b.p.Barriers = append(b.p.Barriers, Barrier{Name: name, Parties: parties})
	return BarrierRef(len(b.p.Barriers) - 1)
}

// Semaphore declares a semaphore holding tokens initial tokens.
func (b *Builder) Semaphore(name string, tokens uint64) SemaphoreRef {
	b.declare("semaphore", name)
	b.p.Semaphores = append(b.p.Semaphores, Semaphore{Name: name, Tokens: tokens})
	return SemaphoreRef(len(b.p.Semaphores) - 1)
}

// Task appends a dynamic task (claimed by any worker once ready) and returns
// a builder for it; pin it with [TaskBuilder.On].
func (b *Builder) Task(name string) *TaskBuilder {
	b.declare("task", name)
	b.p.Tasks = append(b.p.Tasks, Task{Name: name, Worker: Dynamic})
	return &TaskBuilder{b: b, i: len(b.p.Tasks) - 1}
}

// Len is the number of tasks added so far.
func (b *Builder) Len() int { return len(b.p.Tasks) }

// Build validates the program and returns it. The builder must not be used
// afterwards.
func (b *Builder) Build() (*Program, error) {
	if b.err != nil {
		return nil, b.err
	}
	p := &b.p
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// TaskBuilder adds steps and accesses to one task. Waits, barrier syncs,
// acquires and FenceBefore go before the body; signals, arrivals, releases
// and FenceAfter go after it, each list in call order.
type TaskBuilder struct {
	b *Builder
	i int
}

func (t *TaskBuilder) task() *Task { return &t.b.p.Tasks[t.i] }

// Index is the task's index in the program.
func (t *TaskBuilder) Index() int { return t.i }

// On pins the task to a worker's static queue.
func (t *TaskBuilder) On(worker int) *TaskBuilder { t.task().Worker = int32(worker); return t }

// Op sets the operation the body performs.
func (t *TaskBuilder) Op(op string) *TaskBuilder { t.task().Op = op; return t }

// Param sets one operand of the operation.
func (t *TaskBuilder) Param(key string, v int64) *TaskBuilder {
	tk := t.task()
	if tk.Params == nil {
		tk.Params = map[string]int64{}
	}
	tk.Params[key] = v
	return t
}

func (t *TaskBuilder) before(s Step, opts []StepOption) *TaskBuilder {
	for _, o := range opts {
		o(&s)
	}
	t.task().Before = append(t.task().Before, s)
	return t
}

func (t *TaskBuilder) after(s Step, opts []StepOption) *TaskBuilder {
	for _, o := range opts {
		o(&s)
	}
	t.task().After = append(t.task().After, s)
	return t
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
	tk.Reads = append(tk.Reads, Access{Buffer: int32(buf), Offset: int64(offset), Length: length, Rows: rows, Stride: stride})
	return t
}

// Write adds a 1-D write of length bytes at offset.
func (t *TaskBuilder) Write(buf BufferRef, offset, length uint64) *TaskBuilder {
	return t.WriteTile(buf, offset, length, 0, 0)
}

// WriteTile adds a 2-D write: rows rows of length bytes, stride bytes apart.
func (t *TaskBuilder) WriteTile(buf BufferRef, offset, length, rows, stride uint64) *TaskBuilder {
	tk := t.task()
	tk.Writes = append(tk.Writes, Access{Buffer: int32(buf), Offset: int64(offset), Length: length, Rows: rows, Stride: stride})
	return t
}
