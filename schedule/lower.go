package schedule

import (
	"fmt"
	"iter"
)

// OpKind is the kind of one step of a thread in normal form.
type OpKind uint8

// Normal-form operations. A task's body is the interval between its Begin
// and its End; a barrier Sync lowers to Arrive followed by Await.
const (
	OpWait    OpKind = iota + 1 // wait until counter >= Value
	OpSignal                    // counter += Value
	OpArrive                    // barrier arrivals += 1
	OpAwait                     // wait until barrier arrivals >= Value (generation × parties)
	OpAcquire                   // wait until semaphore >= Value, then subtract Value
	OpRelease                   // semaphore += Value
	OpFence                     // memory fence at Scope
	OpBegin                     // the task's body starts
	OpEnd                       // the task's body ends
)

var opNames = [...]string{OpWait: "wait", OpSignal: "signal", OpArrive: "arrive", OpAwait: "await", OpAcquire: "acquire", OpRelease: "release", OpFence: "fence", OpBegin: "begin", OpEnd: "end"}

func (k OpKind) String() string {
	if int(k) < len(opNames) && opNames[k] != "" {
		return opNames[k]
	}
	return fmt.Sprintf("OpKind(%d)", uint8(k))
}

// Op is one step of a thread in normal form.
type Op struct {
	Value   uint64 // threshold, amount, or barrier target
	Task    int32  // the task the step belongs to
	Object  int32  // counter, barrier or semaphore index (0 for fences and bodies)
	Kind    OpKind
	Scope   Scope
	Relaxed bool
}

// Thread is one thread of the normal form: a static worker's queue, or one
// dynamic task.
type Thread struct {
	Worker int32 // the worker, or Dynamic for a dynamic task's thread
	Task   int32 // the dynamic task, or -1 for a worker thread
	Ops    []Op
}

// Form is a program in normal form: threads 0..Workers-1 are the static
// workers (some possibly empty), the rest are the dynamic tasks in task-list
// order.
type Form struct {
	Workers int
	Threads []Thread

	small formSmall // a small program's lists, in the form's own allocation
}

// formSmall holds the lists of a small program's form: tiny programs are
// lowered by the thousand (a Machine for each witness), and each list is
// otherwise an allocation of its own.
type formSmall struct {
	threads [8]Thread
	counts  [8]int
	ops     [32]Op
}

// Lower returns the normal form of a valid program.
func Lower(p *Program) *Form {
	// The threads' operations are counted first and carved from one slab,
	// each thread's list capped at its length (a thread without operations
	// keeps a nil list).
	nw := p.Launch.Workers
	threadOf := func(i, dyn int) int {
		if p.Tasks[i].Worker == Dynamic {
			return nw + dyn
		}
		return int(p.Tasks[i].Worker)
	}
	dyn := 0
	for i := range p.Tasks {
		if p.Tasks[i].Worker == Dynamic {
			dyn++
		}
	}
	f := &Form{Workers: nw}
	var counts []int
	if n := nw + dyn; n <= len(f.small.threads) {
		f.Threads, counts = f.small.threads[:n:n], f.small.counts[:n:n]
	} else {
		f.Threads, counts = make([]Thread, n), make([]int, n)
	}
	total, d := 0, 0
	for i := range p.Tasks {
		t := &p.Tasks[i]
		n := 2 + len(t.Before) + len(t.After)
		for _, s := range t.Before {
			if s.Kind == Sync {
				n++
			}
		}
		for _, s := range t.After {
			if s.Kind == Sync {
				n++
			}
		}
		th := threadOf(i, d)
		if t.Worker == Dynamic {
			f.Threads[th] = Thread{Worker: Dynamic, Task: int32(i)}
			d++
		}
		counts[th] += n
		total += n
	}
	var slab []Op
	if total <= len(f.small.ops) {
		slab = f.small.ops[:total:total]
	} else {
		slab = make([]Op, total)
	}
	for th := range f.Threads {
		if th < nw {
			f.Threads[th] = Thread{Worker: int32(th), Task: -1}
		}
		if n := counts[th]; n > 0 {
			f.Threads[th].Ops = slab[:0:n]
			slab = slab[n:]
		}
	}
	var gens map[[2]int32]uint64 // (thread, barrier) -> operations so far
	if len(p.Barriers) > 0 {
		gens = make(map[[2]int32]uint64)
	}
	d = 0
	for i := range p.Tasks {
		t := &p.Tasks[i]
		th := threadOf(i, d)
		if t.Worker == Dynamic {
			d++
		}
		ops := f.Threads[th].Ops
		emit := func(s Step) {
			switch s.Kind {
			case Wait:
				ops = append(ops, Op{Kind: OpWait, Task: int32(i), Object: s.Object, Value: s.Value, Relaxed: s.Relaxed, Scope: s.Scope})
			case Signal:
				ops = append(ops, Op{Kind: OpSignal, Task: int32(i), Object: s.Object, Value: s.Value, Relaxed: s.Relaxed, Scope: s.Scope})
			case Sync, Arrive:
				key := [2]int32{int32(th), s.Object}
				gens[key]++
				ops = append(ops, Op{Kind: OpArrive, Task: int32(i), Object: s.Object, Value: 1})
				if s.Kind == Sync {
					ops = append(ops, Op{Kind: OpAwait, Task: int32(i), Object: s.Object, Value: gens[key] * uint64(p.Barriers[s.Object].Parties)})
				}
			case Acquire:
				ops = append(ops, Op{Kind: OpAcquire, Task: int32(i), Object: s.Object, Value: s.Value, Scope: s.Scope})
			case Release:
				ops = append(ops, Op{Kind: OpRelease, Task: int32(i), Object: s.Object, Value: s.Value, Scope: s.Scope})
			case Fence:
				ops = append(ops, Op{Kind: OpFence, Task: int32(i), Scope: s.Scope})
			}
		}
		for _, s := range t.Before {
			emit(s)
		}
		ops = append(ops, Op{Kind: OpBegin, Task: int32(i)}, Op{Kind: OpEnd, Task: int32(i)})
		for _, s := range t.After {
			emit(s)
		}
		f.Threads[th].Ops = ops
	}
	return f
}

// ThreadName describes a thread for messages: "worker 3" or "task \"x\"".
func (f *Form) ThreadName(p *Program, th int) string {
	if th < f.Workers {
		return fmt.Sprintf("worker %d", th)
	}
	return fmt.Sprintf("task %q", p.Tasks[f.Threads[th].Task].Name)
}

// Describe renders one operation for messages, e.g. `wait c >= 4 (task "t")`.
func (p *Program) Describe(op Op) string {
	task := ""
	if op.Task >= 0 && int(op.Task) < len(p.Tasks) {
		task = fmt.Sprintf(" (task %q)", p.Tasks[op.Task].Name)
	}
	mods := ""
	if op.Relaxed {
		mods += " relaxed"
	}
	if op.Scope != ScopeGPU {
		mods += " scope " + op.Scope.String()
	}
	switch op.Kind {
	case OpWait:
		return fmt.Sprintf("wait %s >= %d%s%s", p.Counters[op.Object].Name, op.Value, mods, task)
	case OpSignal:
		return fmt.Sprintf("signal %s += %d%s%s", p.Counters[op.Object].Name, op.Value, mods, task)
	case OpArrive:
		return fmt.Sprintf("arrive %s%s", p.Barriers[op.Object].Name, task)
	case OpAwait:
		return fmt.Sprintf("await %s >= %d arrivals%s", p.Barriers[op.Object].Name, op.Value, task)
	case OpAcquire:
		return fmt.Sprintf("acquire %s %d%s", p.Semaphores[op.Object].Name, op.Value, task)
	case OpRelease:
		return fmt.Sprintf("release %s %d%s", p.Semaphores[op.Object].Name, op.Value, task)
	case OpFence:
		return fmt.Sprintf("fence %s%s", op.Scope, task)
	case OpBegin:
		return "begin" + task
	case OpEnd:
		return "end" + task
	}
	return op.Kind.String()
}

// Spans yields the byte ranges [lo, hi) an access covers within its buffer,
// one per row.
func (a Access) Spans() iter.Seq2[int64, int64] {
	return func(yield func(int64, int64) bool) {
		for r := uint64(0); r < a.RowCount(); r++ {
			lo := a.Offset + int64(r*a.Stride)
			if !yield(lo, lo+int64(a.Length)) {
				return
			}
		}
	}
}

// Extent is the smallest range [lo, hi) that contains every byte of the access.
func (a Access) Extent() (lo, hi int64) {
	return a.Offset, a.Offset + int64((a.RowCount()-1)*a.Stride) + int64(a.Length)
}
