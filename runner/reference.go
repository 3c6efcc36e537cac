package runner

import (
	"fmt"
	"strings"

	"github.com/megaproof/megaproof/schedule"
)

// Reference executes p on the CPU in one valid order and returns every
// buffer's final bytes by name. Uninitialized bytes (scratch and output
// buffers) start as zero, as on the GPU with the zero [Options.Poison].
//
// The order is a greedy execution of the normal form (see schedule.Lower):
// every thread runs until it blocks, and a blocked thread resumes when the
// object it waits on changes. For a program verify calls safe every valid
// order gives the same bytes, so this is the expected result of any GPU
// run. A program whose greedy execution gets stuck returns an error naming
// the stuck threads.
func Reference(p *schedule.Program) (map[string][]byte, error) {
	return ReferencePoisoned(p, 0)
}

// ReferencePoisoned is [Reference] with uninitialized bytes starting as
// poison instead of zero, matching a GPU run with Options.Poison = poison.
func ReferencePoisoned(p *schedule.Program, poison byte) (map[string][]byte, error) {
	return ReferenceWith(p, Options{Poison: poison})
}

// ReferenceWith is [Reference] for a GPU run with options o: uninitialized
// bytes start as o.Poison and every body executes o.Body when it is set
// (see [Options.Body]). The other options do not change the expected bytes
// of a safe program.
func ReferenceWith(p *schedule.Program, o Options) (map[string][]byte, error) {
	e, err := encode(p, o.Body)
	if err != nil {
		return nil, err
	}
	heap, err := e.ImageFrom(o.Poison, o.Init)
	if err != nil {
		return nil, err
	}
	if err := e.execute(heap); err != nil {
		return nil, err
	}
	return e.Buffers(heap), nil
}

// execute runs the greedy execution on heap.
func (e *Encoded) execute(heap []byte) error {
	p, f := e.prog, e.form
	nc, nb := len(p.Counters), len(p.Barriers)
	vals := make([]uint64, nc+nb+len(p.Semaphores)) // counters, barrier arrivals, semaphore tokens
	for i, c := range p.Counters {
		vals[i] = c.Init
	}
	for i, s := range p.Semaphores {
		vals[nc+nb+i] = s.Tokens
	}
	waiters := make([][]int32, len(vals))
	pos := make([]int, len(f.Threads))
	queue := make([]int32, 0, len(f.Threads))
	for th := len(f.Threads) - 1; th >= 0; th-- {
		queue = append(queue, int32(th))
	}
	wake := func(obj int) {
		queue = append(queue, waiters[obj]...)
		waiters[obj] = waiters[obj][:0]
	}
	for len(queue) > 0 {
		th := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		ops := f.Threads[th].Ops
	run:
		for pos[th] < len(ops) {
			op := ops[pos[th]]
			switch op.Kind {
			case schedule.OpWait, schedule.OpAwait, schedule.OpAcquire:
				obj := int(op.Object)
				switch op.Kind {
				case schedule.OpAwait:
					obj += nc
				case schedule.OpAcquire:
					obj += nc + nb
				}
				if vals[obj] < op.Value {
					waiters[obj] = append(waiters[obj], th)
					break run
				}
				if op.Kind == schedule.OpAcquire {
					vals[obj] -= op.Value
				}
			case schedule.OpSignal:
				vals[op.Object] += op.Value
				wake(int(op.Object))
			case schedule.OpArrive:
				vals[nc+int(op.Object)]++
				wake(nc + int(op.Object))
			case schedule.OpRelease:
				vals[nc+nb+int(op.Object)] += op.Value
				wake(nc + nb + int(op.Object))
			case schedule.OpBegin:
				e.bodies[op.Task].run(heap)
			}
			pos[th]++
		}
	}
	var stuck []string
	for th := range f.Threads {
		if pos[th] < len(f.Threads[th].Ops) {
			if len(stuck) == 8 {
				stuck = append(stuck, "...")
				break
			}
			stuck = append(stuck, fmt.Sprintf("%s at %s", f.ThreadName(p, th), p.Describe(f.Threads[th].Ops[pos[th]])))
		}
	}
	if stuck != nil {
		return fmt.Errorf("runner: reference execution is stuck: %s", strings.Join(stuck, "; "))
	}
	return nil
}
