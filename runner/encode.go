package runner

import (
	"context"
	"fmt"

	"github.com/megaproof/megaproof/schedule"
)

// Instruction kinds of the encoded step streams (the low byte of an
// instruction's first word). They follow schedule.OpKind.
const (
	insWait    = 1
	insSignal  = 2
	insArrive  = 3
	insAwait   = 4
	insAcquire = 5
	insRelease = 6
	insFence   = 7
	insBegin   = 8
	insEnd     = 9
)

// Words per task record and per access record in the encoded tables.
const (
	taskWords = 9 + numArgs // op, seed, k, c, reads, #reads, writes, #writes, args, prefetch mask
	// prefetchMin is the smallest read a numeric task's prefetch mask
	// names: smaller ones are not worth a prefetch.
	prefetchMin = 2048
	accessWords = 4
	heapAlign   = 256
)

// Encoded is a program compiled for the interpreter kernel: per-thread
// step streams, a task table, an access table and a heap layout. It is
// pure data; [Encode] builds it without a GPU, and [Reference] executes the
// same program on the CPU.
//
// Each instruction is two 64-bit words: the first holds the kind (bits
// 0–7), relaxed (bit 8), the scope (bits 9–10: 0 gpu, 1 cta, 2 sys) and
// the object — counter, barrier, semaphore or task index — in bits 32–63;
// the second holds the value (threshold, amount, or barrier target; for
// a body's begin, its operation code).
// Threads 0..Workers-1 are the static workers, the rest are the dynamic
// tasks in task-list order. A body's End is not encoded: the kernel's
// Begin runs the whole body.
type Encoded struct {
	Workers int // static workers (thread blocks launched)
	Threads int // Workers + dynamic tasks
	Steps   int // instructions in all streams

	// HeapBytes is the size of the data heap that holds every arena and
	// every buffer that aliases nothing.
	HeapBytes uint64
	// BufferAddr is each buffer's byte offset in the heap.
	BufferAddr []uint64

	prog     *schedule.Program
	form     *schedule.Form
	verified bool     // made by Prepare: verify called the program safe
	ins      []uint64 // 2 words per instruction
	streams  []uint32 // Threads+1 offsets into ins (in instructions)
	dyninfo  []uint32 // per dynamic task: guard length | simple<<31
	tasks    []uint64 // taskWords per task
	accs     []uint64 // accessWords per access
	bodies   []body   // per task, for the CPU reference
	step     []int32  // per instruction: its operation's index in its normal-form thread
}

// BlockingDynamic counts dynamic tasks that may block after their entry
// guard (the leading waits and acquires before anything else); see the
// package documentation on dynamic dispatch.
func (e *Encoded) BlockingDynamic() int {
	n := 0
	for _, d := range e.dyninfo {
		if d>>31 == 0 {
			n++
		}
	}
	return n
}

// Encode validates p and compiles it for the interpreter kernel. It fails
// on an invalid program, an unknown operation, an access outside its
// buffer, and an operation that would read and write the same bytes (see
// [Ops]).
func Encode(p *schedule.Program) (*Encoded, error) { return encode(p, "") }

// Prepare verifies p (unless o.AllowUnsafe) and encodes it with the body
// override of o.Body, for [Resident.Run]. A program verify does not call
// safe is refused with ErrUnverified.
func Prepare(ctx context.Context, p *schedule.Program, o Options) (*Encoded, error) {
	if err := gate(ctx, p, o); err != nil {
		return nil, err
	}
	e, err := encode(p, o.Body)
	if err != nil {
		return nil, err
	}
	e.verified = !o.AllowUnsafe
	return e, nil
}

// EncodeWith is [Encode] with the body override of o.Body: when it is not
// empty, every task body is encoded as that operation (one of [Ops])
// instead of its Task.Op. The other options do not affect the encoding.
func EncodeWith(p *schedule.Program, o Options) (*Encoded, error) { return encode(p, o.Body) }

func encode(p *schedule.Program, bodyOp string) (*Encoded, error) {
	if bodyOp != "" {
		if c, ok := opCodes[bodyOp]; !ok || c >= opCodeFirstNumeric {
			return nil, fmt.Errorf("runner: Options.Body %q is not one of %v", bodyOp, Ops)
		}
	}
	if p == nil {
		return nil, fmt.Errorf("runner: nil program")
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	e := &Encoded{prog: p, Workers: p.Launch.Workers}
	// Heap layout: arenas first, then buffers outside arenas.
	arenaAddr := make([]uint64, len(p.Arenas))
	var top uint64
	for i, a := range p.Arenas {
		arenaAddr[i] = top
		top = alignUp(top+a.Size, heapAlign)
	}
	e.BufferAddr = make([]uint64, len(p.Buffers))
	for i, b := range p.Buffers {
		if b.Arena == schedule.NoArena {
			e.BufferAddr[i] = top
			top = alignUp(top+b.Size, heapAlign)
		} else {
			e.BufferAddr[i] = arenaAddr[b.Arena] + b.Offset
		}
	}
	e.HeapBytes = max(top, heapAlign)

	// Task table and accesses.
	e.tasks = make([]uint64, 0, taskWords*len(p.Tasks))
	e.bodies = make([]body, len(p.Tasks))
	for i := range p.Tasks {
		t := &p.Tasks[i]
		opName := t.Op
		if bodyOp != "" {
			opName = bodyOp
		}
		code, ok := opCodes[opName]
		if !ok {
			return nil, opError(t.Name, "unknown op %q (want one of %v or %v)", t.Op, Ops, NumericOps())
		}
		bd := body{
			op:   code,
			seed: uint64(param(t.Params, "seed", int64(i))),
			k:    uint64(param(t.Params, "k", 3)),
			c:    uint64(param(t.Params, "c", 1)),
		}
		if code != opNop {
			var err error
			if bd.reads, err = e.resolve(t, t.Reads, "read"); err != nil {
				return nil, err
			}
			if bd.writes, err = e.resolve(t, t.Writes, "write"); err != nil {
				return nil, err
			}
		}
		if o := numByCode[code]; o != nil {
			var err error
			if bd.args, err = checkNumeric(p, t, o); err != nil {
				return nil, err
			}
			if overlaps(spans(bd.reads), spans(bd.writes)) {
				return nil, opError(t.Name, "op %q writes bytes it reads", opName)
			}
		}
		switch code {
		case opCopy, opAdd, opScale:
			if len(bd.reads) == 0 {
				return nil, opError(t.Name, "op %q needs at least one read", opName)
			}
			if overlaps(spans(bd.reads), spans(bd.writes)) {
				return nil, opError(t.Name, "op %q writes bytes it reads; only mix may", opName)
			}
		}
		rs := len(e.accs) / accessWords
		for _, a := range bd.reads {
			e.accs = append(e.accs, a.addr, a.length, a.rows, a.stride)
		}
		ws := len(e.accs) / accessWords
		for _, a := range bd.writes {
			e.accs = append(e.accs, a.addr, a.length, a.rows, a.stride)
		}
		e.tasks = append(e.tasks, code, bd.seed, bd.k, bd.c,
			uint64(rs), uint64(len(bd.reads)), uint64(ws), uint64(len(bd.writes)))
		e.tasks = append(e.tasks, bd.args[:]...)
		e.tasks = append(e.tasks, prefetchMask(p, t, code))
		e.bodies[i] = bd
	}

	// Step streams.
	f := schedule.Lower(p)
	e.form = f
	e.Threads = len(f.Threads)
	e.streams = make([]uint32, 0, len(f.Threads)+1)
	for th, t := range f.Threads {
		e.streams = append(e.streams, uint32(len(e.ins)/2))
		// A dynamic task's guard and whether a spinning worker may run it
		// come from the schedule's definitions (docs/SEMANTICS.md,
		// "Dispatch"), so the kernel dispatches as the model says.
		guard, simple := t.Guard(), t.Simple()
		for j, op := range t.Ops {
			if op.Kind == schedule.OpEnd {
				// The kernel's begin runs the whole body, delays included.
				continue
			}
			e.step = append(e.step, int32(j))
			w0, w1 := encodeOp(op)
			if op.Kind == schedule.OpBegin {
				w1 = e.bodies[op.Task].op // lets the kernel skip empty bodies
			}
			e.ins = append(e.ins, w0, w1)
		}
		if th >= f.Workers {
			d := uint32(guard)
			if simple {
				d |= 1 << 31
			}
			e.dyninfo = append(e.dyninfo, d)
		}
	}
	e.streams = append(e.streams, uint32(len(e.ins)/2))
	e.Steps = len(e.ins) / 2
	if len(e.ins)/2 >= 1<<31 {
		return nil, fmt.Errorf("runner: %d instructions exceed the encoder's limit", len(e.ins)/2)
	}
	return e, nil
}

// prefetchMask is bit k for each read access k (k < 32) of a numeric task
// that reads a weight or state buffer, at least prefetchMin bytes: the
// reads the kernel may prefetch into L2 before the task's waits are met
// (weights never change during a run; a prefetch of state reads no value,
// so it cannot observe a write that has not happened yet).
func prefetchMask(p *schedule.Program, t *schedule.Task, code uint64) uint64 {
	if code < opCodeFirstNumeric {
		return 0
	}
	var m uint64
	for k, a := range t.Reads {
		if k >= 32 {
			break
		}
		kind := p.Buffers[a.Buffer].Kind
		if (kind == schedule.KindWeight || kind == schedule.KindState) && a.Length*uint64(max(a.RowCount(), 1)) >= prefetchMin {
			m |= 1 << k
		}
	}
	return m
}

// resolve maps a task's accesses to heap addresses, refusing any byte
// outside its buffer.
func (e *Encoded) resolve(t *schedule.Task, as []schedule.Access, what string) ([]access, error) {
	out := make([]access, 0, len(as))
	for _, a := range as {
		b := e.prog.Buffers[a.Buffer]
		lo, hi := a.Extent()
		if lo < 0 || hi > int64(b.Size) || a.Length == 0 {
			return nil, opError(t.Name, "%s of buffer %q at [%d, %d) is outside its %d bytes", what, b.Name, lo, hi, b.Size)
		}
		out = append(out, access{addr: e.BufferAddr[a.Buffer] + uint64(a.Offset), length: a.Length, rows: a.RowCount(), stride: a.Stride})
	}
	return out, nil
}

func encodeOp(op schedule.Op) (uint64, uint64) {
	var k uint64
	switch op.Kind {
	case schedule.OpWait:
		k = insWait
	case schedule.OpSignal:
		k = insSignal
	case schedule.OpArrive:
		k = insArrive
	case schedule.OpAwait:
		k = insAwait
	case schedule.OpAcquire:
		k = insAcquire
	case schedule.OpRelease:
		k = insRelease
	case schedule.OpFence:
		k = insFence
	case schedule.OpBegin:
		k = insBegin
	case schedule.OpEnd:
		k = insEnd
	}
	w := k
	if op.Relaxed {
		w |= 1 << 8
	}
	var sc uint64
	switch op.Scope {
	case schedule.ScopeCTA:
		sc = 1
	case schedule.ScopeSys:
		sc = 2
	}
	w |= sc << 9
	obj := uint64(uint32(op.Object))
	if op.Kind == schedule.OpBegin || op.Kind == schedule.OpEnd {
		obj = uint64(uint32(op.Task))
	}
	return w | obj<<32, op.Value
}

// Image returns the heap's initial contents: every byte poison, then each
// initialized buffer (input, weight, state) in buffer order filled with its
// deterministic pattern. The GPU and the CPU reference start from it.
func (e *Encoded) Image(poison byte) []byte {
	heap := make([]byte, e.HeapBytes)
	if poison != 0 {
		for i := range heap {
			heap[i] = poison
		}
	}
	for i, b := range e.prog.Buffers {
		if !b.Kind.Initialized() {
			continue
		}
		base := e.BufferAddr[i]
		for j := uint64(0); j < b.Size; j++ {
			heap[base+j] = initByte(i, j)
		}
	}
	return heap
}

// ImageFrom is [Encoded.Image] with the initialized buffers filled by src
// instead of the byte pattern (src nil: the pattern).
func (e *Encoded) ImageFrom(poison byte, src Source) ([]byte, error) {
	if src == nil {
		return e.Image(poison), nil
	}
	heap := make([]byte, e.HeapBytes)
	if poison != 0 {
		for i := range heap {
			heap[i] = poison
		}
	}
	for i, b := range e.prog.Buffers {
		if !b.Kind.Initialized() {
			continue
		}
		if err := src.Fill(e.prog, i, heap[e.BufferAddr[i]:e.BufferAddr[i]+b.Size]); err != nil {
			return nil, err
		}
	}
	return heap, nil
}

// Buffers cuts each buffer's bytes out of a heap image, by buffer name.
func (e *Encoded) Buffers(heap []byte) map[string][]byte {
	out := make(map[string][]byte, len(e.prog.Buffers))
	for i, b := range e.prog.Buffers {
		out[b.Name] = append([]byte(nil), heap[e.BufferAddr[i]:e.BufferAddr[i]+b.Size]...)
	}
	return out
}

// Program is the program the encoding was made from.
func (e *Encoded) Program() *schedule.Program { return e.prog }

func alignUp(x, a uint64) uint64 { return (x + a - 1) / a * a }
