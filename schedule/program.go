package schedule

import (
	"fmt"
	"iter"
	"slices"
	"strings"
)

// Format is the version tag of the JSON form this package reads and writes.
const Format = "megaproof/v1"

// Dynamic is the [Task.Worker] value of a task that is not pinned to a worker:
// any worker claims it once it is ready.
const Dynamic = -1

// NoArena is the [Buffer.Arena] value of a buffer that aliases nothing.
const NoArena = -1

// Program is a megakernel schedule: one persistent launch whose workers
// (thread blocks) run tasks that coordinate through counters, barriers and
// semaphores in global memory.
//
// Every cross reference is a dense index into the program's slices; the JSON
// form uses names instead. A Program is plain data: build it with [Builder],
// decode it with [Decode], and check it with [Program.Validate].
type Program struct {
	Name       string
	Launch     Launch
	Arenas     []Arena
	Buffers    []Buffer
	Counters   []Counter
	Barriers   []Barrier
	Semaphores []Semaphore
	Tasks      []Task
}

// Launch describes the persistent launch and the GPU it targets.
type Launch struct {
	Target      string // GPU name, for messages
	SMs         int    // streaming multiprocessors on the target
	PerSM       int    // co-resident workers per SM (from occupancy)
	Workers     int    // workers (thread blocks) launched
	Cooperative bool   // all workers guaranteed co-resident, or the launch fails
}

// Capacity is the number of workers the target keeps co-resident.
func (l Launch) Capacity() int { return l.SMs * l.PerSM }

// Arena is a region of memory that several buffers may share (page reuse).
type Arena struct {
	Name string
	Size uint64
}

// BufferKind says how a buffer is initialized and who may write it.
type BufferKind uint8

// Buffer kinds.
const (
	KindInput   BufferKind = iota + 1 // initialized, read-only
	KindWeight                        // initialized, read-only
	KindOutput                        // uninitialized, must be fully written
	KindScratch                       // uninitialized at start
	KindState                         // initialized, read-write (e.g. a KV cache)
)

var kindNames = [...]string{KindInput: "input", KindWeight: "weight", KindOutput: "output", KindScratch: "scratch", KindState: "state"}

func (k BufferKind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("BufferKind(%d)", uint8(k))
}

// ReadOnly reports whether tasks may not write buffers of this kind.
func (k BufferKind) ReadOnly() bool { return k == KindInput || k == KindWeight }

// Initialized reports whether buffers of this kind hold data before the launch.
func (k BufferKind) Initialized() bool { return k == KindInput || k == KindWeight || k == KindState }

// Buffer is a named byte range in global memory.
type Buffer struct {
	Name string
	Kind BufferKind
	Size uint64
	// Arena is the index of the arena this buffer lives in, or NoArena.
	Arena int32
	// Offset is the buffer's byte offset within its arena.
	Offset uint64
}

// Access is a byte footprint in one buffer: Rows rows of Length bytes, the
// first at Offset and each next one Stride bytes further (a 2-D tile of a
// row-major matrix). Rows 0 means a plain 1-D range. Offset may be negative
// only to describe a footprint outside its buffer (an out-of-bounds access).
type Access struct {
	Buffer int32
	Offset int64
	Length uint64
	Rows   uint64
	Stride uint64
}

// RowCount is the number of rows the access covers (at least 1).
func (a Access) RowCount() uint64 {
	if a.Rows == 0 {
		return 1
	}
	return a.Rows
}

// Counter is a monotone counter in global memory.
type Counter struct {
	Name  string
	Init  uint64
	Width uint8 // bits: 32 or 64
}

// Max is the largest value the counter can hold.
func (c Counter) Max() uint64 {
	if c.Width >= 64 {
		return ^uint64(0)
	}
	return 1<<c.Width - 1
}

// Barrier is a reusable barrier for Parties participants. A participant's
// k-th operation on it belongs to generation k.
type Barrier struct {
	Name    string
	Parties int
}

// Semaphore is a counting semaphore with Tokens initial tokens.
type Semaphore struct {
	Name   string
	Tokens uint64
}

// StepKind is the kind of a synchronization step.
type StepKind uint8

// Step kinds.
const (
	Wait    StepKind = iota + 1 // wait until counter >= Value (acquire)
	Signal                      // counter += Value (release)
	Sync                        // arrive at a barrier, then wait for its generation
	Arrive                      // arrive at a barrier without waiting
	Acquire                     // wait until semaphore >= Value, then take Value
	Release                     // give Value tokens back to a semaphore
	Fence                       // memory fence (acq_rel) at Scope
)

var stepNames = [...]string{Wait: "wait", Signal: "signal", Sync: "sync", Arrive: "arrive", Acquire: "acquire", Release: "release", Fence: "fence"}

func (k StepKind) String() string {
	if int(k) < len(stepNames) && stepNames[k] != "" {
		return stepNames[k]
	}
	return fmt.Sprintf("StepKind(%d)", uint8(k))
}

// Scope is the set of threads a synchronization operation orders with.
type Scope uint8

// Scopes. The zero value is ScopeGPU, the default.
const (
	ScopeGPU Scope = iota // all workers of the launch
	ScopeCTA              // the issuing worker only
	ScopeSys              // the whole system
)

var scopeNames = [...]string{ScopeGPU: "gpu", ScopeCTA: "cta", ScopeSys: "sys"}

func (s Scope) String() string {
	if int(s) < len(scopeNames) {
		return scopeNames[s]
	}
	return fmt.Sprintf("Scope(%d)", uint8(s))
}

// CrossWorker reports whether the scope orders operations of different workers.
func (s Scope) CrossWorker() bool { return s == ScopeGPU || s == ScopeSys }

// Step is one synchronization step of a task.
//
// Object indexes Counters (Wait, Signal), Barriers (Sync, Arrive) or
// Semaphores (Acquire, Release); it is 0 for Fence. Value is the threshold
// of a Wait, the amount of a Signal, Acquire or Release, and 0 otherwise.
// Relaxed turns an acquire wait or a release signal into a relaxed one; it
// only applies to Wait and Signal.
type Step struct {
	Kind    StepKind
	Object  int32
	Value   uint64
	Relaxed bool
	Scope   Scope
}

// Task is a unit of work: synchronization steps before its body, the body's
// memory footprint, and steps after it.
type Task struct {
	Name   string
	Op     string // opaque to the verifier; meaningful to runners
	Params Params // opaque operands of Op
	// Worker pins the task to a worker's static queue (in task-list order),
	// or is Dynamic.
	Worker int32
	Before []Step
	Reads  []Access
	Writes []Access
	After  []Step
}

// Params are the operands of a task's Op, opaque to the verifier and
// meaningful to runners: integers by key, each key at most once (Validate
// rejects a repeated one). The readers and [TaskBuilder.Param] keep them
// sorted by key, as the JSON form writes them. They are a list rather
// than a map so that a reader can carve every task's operands from one
// slab instead of building a map per task.
type Params []Param

// Param is one operand of a task's Op.
type Param struct {
	Key   string
	Value int64
}

// Get returns the value of key and whether it is there.
func (ps Params) Get(key string) (int64, bool) {
	for _, p := range ps {
		if p.Key == key {
			return p.Value, true
		}
	}
	return 0, false
}

// Set sets key to v, in its place by key when it is new.
func (ps *Params) Set(key string, v int64) {
	for i := range *ps {
		if (*ps)[i].Key == key {
			(*ps)[i].Value = v
			return
		}
	}
	i, _ := slices.BinarySearchFunc(*ps, key, func(p Param, k string) int { return strings.Compare(p.Key, k) })
	*ps = slices.Insert(*ps, i, Param{key, v})
}

// Delete removes key.
func (ps *Params) Delete(key string) {
	*ps = slices.DeleteFunc(*ps, func(p Param) bool { return p.Key == key })
}

// All yields the operands in order.
func (ps Params) All() iter.Seq2[string, int64] {
	return func(yield func(string, int64) bool) {
		for _, p := range ps {
			if !yield(p.Key, p.Value) {
				return
			}
		}
	}
}

// SortParams sorts operands by key, in place, as the readers keep them
// (for readers of other formats).
func SortParams(ps Params) {
	if len(ps) > 12 {
		slices.SortFunc(ps, func(a, b Param) int { return strings.Compare(a.Key, b.Key) })
		return
	}
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && ps[j].Key < ps[j-1].Key; j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
}

// Pinned reports whether the task runs in a worker's static queue.
func (t *Task) Pinned() bool { return t.Worker != Dynamic }

// Clone returns a deep copy of p: editing the copy's lists, steps,
// accesses or params leaves p alone. Clone of nil is nil.
func (p *Program) Clone() *Program {
	if p == nil {
		return nil
	}
	q := *p
	q.Arenas = slices.Clone(p.Arenas)
	q.Buffers = slices.Clone(p.Buffers)
	q.Counters = slices.Clone(p.Counters)
	q.Barriers = slices.Clone(p.Barriers)
	q.Semaphores = slices.Clone(p.Semaphores)
	q.Tasks = slices.Clone(p.Tasks)
	for i := range q.Tasks {
		t := &q.Tasks[i]
		t.Params = slices.Clone(t.Params)
		t.Before = slices.Clone(t.Before)
		t.Reads = slices.Clone(t.Reads)
		t.Writes = slices.Clone(t.Writes)
		t.After = slices.Clone(t.After)
	}
	return &q
}
