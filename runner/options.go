package runner

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/megaproof/megaproof/verify"

	"github.com/megaproof/megaproof/schedule"
)

// Errors the runner returns. Test them with errors.Is.
var (
	// ErrNoCGO is returned by every GPU entry point of a build without cgo.
	ErrNoCGO = errors.New("runner: built without cgo")
	// ErrNoDevice means the CUDA driver or a CUDA device is not available.
	ErrNoDevice = errors.New("runner: no CUDA device")
	// ErrDeadlock is matched by a *DeadlockError: the watchdog stopped a
	// run that made no progress before its deadline.
	ErrDeadlock = errors.New("runner: deadlock")
	// ErrUnverified means verify did not call the program safe and the
	// caller did not set Options.AllowUnsafe.
	ErrUnverified = errors.New("runner: program not verified safe")
	// ErrOccupancy means the driver refused a cooperative launch with more
	// workers than the device keeps co-resident.
	ErrOccupancy = errors.New("runner: cooperative launch exceeds co-resident capacity")
)

// Options tune [Device.Run]. The zero value runs a verified program once,
// with a 2 s watchdog, no delays and the identity worker placement.
type Options struct {
	// AllowUnsafe runs programs that verify does not call safe (for
	// falsification experiments). Without it such programs are refused
	// with ErrUnverified.
	AllowUnsafe bool
	// Timeout is the watchdog deadline of every worker, counted from its
	// start; 0 means 2 s.
	Timeout time.Duration
	// MaxDelay, when positive, makes every task spin a pseudo-random time
	// in [0, MaxDelay) before its body and again after it (seeded by Seed).
	MaxDelay time.Duration
	// Permute places workers on thread blocks by a pseudo-random
	// permutation (seeded by Seed) instead of worker w on block w. A
	// launch that is not cooperative and has more workers than the device
	// keeps resident refuses it: there the blocks that wait to be
	// scheduled are the highest-numbered ones, and the model's index-order
	// residency (docs/SEMANTICS.md) holds for worker w on block w only.
	Permute bool
	// Seed seeds delays and the permutation.
	Seed uint64
	// Poison is the initial value of every byte of scratch and output
	// buffers (compare with ReferencePoisoned).
	Poison byte
	// BlockThreads is the number of threads per block, a multiple of 32 up
	// to MaxBlockThreads; 0 means 128.
	BlockThreads int
	// FreeOccupancy turns off the shared-memory padding that otherwise
	// limits the device to Launch.PerSM co-resident blocks per SM, so that
	// residency matches the program's declared capacity where it can.
	FreeOccupancy bool
	// Body, when not empty, names the operation (one of [Ops]) that every
	// task body executes instead of its Task.Op, over the task's own
	// footprint and params. "mix" runs any program whose accesses are in
	// bounds — a hash of exactly the bytes each task read, written to
	// every byte it writes — so programs whose ops the runner does not
	// know (the corpus seeds' "gemv", "rmsnorm", ...) still execute with
	// their real footprints and a stale or torn read still shows in the
	// output. "mixat" is the same hash keyed by the written byte's address
	// (see [Ops]); it is the one to use for programs where a task's write
	// accesses overlap each other, whose "mix" result is not defined.
	// Compare with [ReferenceWith] given the same options. The empty value
	// executes Task.Op.
	Body string
	// Init, when set, gives the initial bytes of the initialized buffers
	// (inputs, weights, state) instead of the runner's byte pattern: for
	// a llamagen program, real weights ([LlamaSource]).
	Init Source
	// PrefetchBytes is each worker's L2 prefetch budget: at each run of
	// sync steps (before it waits) a worker prefetches into L2 the weight
	// and state reads of the numeric tasks that come next in its queue,
	// up to this many bytes ahead of the task it is about to run. A
	// prefetch reads no values (it has no effect on the memory model), so
	// it cannot change a result. 0 or negative turns it off: on the H200
	// it measured slower than no prefetch for the Llama schedules (see
	// docs/GPU.md), so it is opt-in; DefaultPrefetchBytes is the budget
	// that was measured.
	PrefetchBytes int
	// Trace records, per task with a body, when its worker began the sync
	// steps before it, when the body started and when it ended
	// (%globaltimer, ns), into Outcome.Trace. It adds two timer reads per
	// task; for profiles, not for timed runs.
	Trace bool
}

// MaxBlockThreads is the largest Options.BlockThreads: the interpreter
// kernel is compiled for at most 512 threads per block, so that its
// bodies have 128 registers per thread.
const MaxBlockThreads = 512

// DefaultPrefetchBytes is the L2 prefetch budget measured in docs/GPU.md
// (the benchmarks' MEGAPROOF_PREFETCH=1 means it).
const DefaultPrefetchBytes = 256 << 10

func (o Options) prefetch() int { return max(o.PrefetchBytes, 0) }

func (o Options) timeout() time.Duration {
	if o.Timeout <= 0 {
		return 2 * time.Second
	}
	return o.Timeout
}

func (o Options) threads() int {
	if o.BlockThreads <= 0 {
		return 128
	}
	return o.BlockThreads
}

// TaskTime is one task's entry of [Outcome.Trace]: device timer readings
// in ns (one clock for the whole device). Worker is -1 for a task that ran
// no body.
type TaskTime struct {
	Wait, Start, End int64
	Worker           int
}

// Outcome is the result of one GPU run.
type Outcome struct {
	// Buffers holds every buffer's final bytes by name.
	Buffers map[string][]byte
	// Kernel is the launch's duration measured with CUDA events.
	Kernel time.Duration
	// Trace has one entry per task when Options.Trace was set (device
	// runs only).
	Trace []TaskTime
	// Total is the wall time of the run: upload, launch, download.
	Total time.Duration
	// Cooperative reports whether cuLaunchCooperativeKernel was used.
	Cooperative bool
	// PerSM is the number of interpreter blocks the device keeps resident
	// per SM with the padding in effect.
	PerSM int
	// DynamicRun counts, per worker, the dynamic tasks it executed.
	DynamicRun []int
}

// WorkerState is where one worker stood when a run was stopped.
type WorkerState struct {
	Worker int // the worker (its static thread)
	// State is "done", "timeout" (its own deadline passed), "aborted"
	// (another worker's did) or "running" (never reached the watchdog:
	// not resident, for example).
	State string
	// Thread is the normal-form thread it was executing (its own, or a
	// dynamic task's), or -1 when it was polling for dynamic tasks.
	Thread int
	// Step is the index of the operation within Thread it was stuck at.
	Step int
	// Op describes that operation, e.g. `wait c >= 4 (task "t")`.
	Op string
	// Observed is the value the stuck wait last read.
	Observed uint64
}

// DeadlockError reports a run stopped by the watchdog. It matches
// ErrDeadlock under errors.Is.
type DeadlockError struct {
	Program  string
	Timeout  time.Duration
	Workers  []WorkerState     // every worker that did not finish
	Counters map[string]uint64 // final counter values
	Barriers map[string]uint64 // final barrier arrivals
	Tokens   map[string]uint64 // final semaphore tokens
}

func (e *DeadlockError) Error() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "runner: deadlock in %q: %d workers stuck after %v", e.Program, len(e.Workers), e.Timeout)
	for i, w := range e.Workers {
		if i == 8 {
			fmt.Fprintf(&sb, "\n  ... %d more", len(e.Workers)-i)
			break
		}
		if w.Thread < 0 {
			fmt.Fprintf(&sb, "\n  worker %d: %s while polling for dynamic tasks", w.Worker, w.State)
			continue
		}
		fmt.Fprintf(&sb, "\n  worker %d: %s at thread %d step %d: %s (observed %d)", w.Worker, w.State, w.Thread, w.Step, w.Op, w.Observed)
	}
	names := make([]string, 0, len(e.Counters))
	for n := range e.Counters {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		if i == 16 {
			sb.WriteString("\n  ...")
			break
		}
		fmt.Fprintf(&sb, "\n  counter %s = %d", n, e.Counters[n])
	}
	return sb.String()
}

// Is reports whether target is ErrDeadlock.
func (e *DeadlockError) Is(target error) bool { return target == ErrDeadlock }

// Mismatch compares a run's buffers with expected ones and returns nil or
// an error naming the first differing byte of each differing buffer.
func Mismatch(want, got map[string][]byte) error {
	var bad []string
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		w, g := want[n], got[n]
		if len(w) != len(g) {
			bad = append(bad, fmt.Sprintf("%s: %d bytes, want %d", n, len(g), len(w)))
			continue
		}
		diff, first := 0, -1
		for i := range w {
			if w[i] != g[i] {
				if first < 0 {
					first = i
				}
				diff++
			}
		}
		if diff > 0 {
			bad = append(bad, fmt.Sprintf("%s: %d bytes differ, first at %d (got %#02x, want %#02x)", n, diff, first, g[first], w[first]))
		}
	}
	if bad == nil {
		return nil
	}
	return fmt.Errorf("runner: results differ from the reference: %s", strings.Join(bad, "; "))
}

// permutation returns the block→worker map for a run.
func permutation(n int, o Options) []uint32 {
	perm := make([]uint32, n)
	for i := range perm {
		perm[i] = uint32(i)
	}
	if o.Permute {
		s := o.Seed*0x9E3779B97F4A7C15 + 1
		for i := n - 1; i > 0; i-- {
			s ^= s << 13
			s ^= s >> 7
			s ^= s << 17
			j := int(s % uint64(i+1))
			perm[i], perm[j] = perm[j], perm[i]
		}
	}
	return perm
}

// stateNames are the worker states of the kernel's status table.
var stateNames = [...]string{"running", "done", "timeout", "aborted"}

// deadlockError builds the report from the kernel's status table and the
// final sync-object values.
func (e *Encoded) deadlockError(status []uint64, ctr, bar, sem []uint64, timeout time.Duration) *DeadlockError {
	p := e.prog
	de := &DeadlockError{Program: p.Name, Timeout: timeout, Counters: map[string]uint64{}, Barriers: map[string]uint64{}, Tokens: map[string]uint64{}}
	for w := 0; w < e.Workers; w++ {
		st := status[8*w : 8*w+8]
		if st[0] == 1 {
			continue
		}
		ws := WorkerState{Worker: w, State: "state?", Thread: -1}
		if int(st[0]) < len(stateNames) {
			ws.State = stateNames[st[0]]
		}
		if st[0] == 2 || st[0] == 3 {
			if th := st[1]; th != 0xffffffff && int(th) < e.Threads {
				ws.Thread = int(th)
				ws.Step = -1
				if pc := int(st[2]); pc < len(e.step) {
					ws.Step = int(e.step[pc])
				}
				if ws.Step >= 0 && ws.Step < len(e.form.Threads[th].Ops) {
					ws.Op = p.Describe(e.form.Threads[th].Ops[ws.Step])
				}
				ws.Observed = st[3]
			}
		}
		de.Workers = append(de.Workers, ws)
	}
	for i, c := range p.Counters {
		de.Counters[c.Name] = ctr[i]
	}
	for i, b := range p.Barriers {
		de.Barriers[b.Name] = bar[i]
	}
	for i, s := range p.Semaphores {
		de.Tokens[s.Name] = sem[i]
	}
	return de
}

// initialSync returns the initial counter, barrier and semaphore values.
func (e *Encoded) initialSync() (ctr, bar, sem []uint64) {
	p := e.prog
	ctr = make([]uint64, max(1, len(p.Counters)))
	for i, c := range p.Counters {
		ctr[i] = c.Init
	}
	bar = make([]uint64, max(1, len(p.Barriers)))
	sem = make([]uint64, max(1, len(p.Semaphores)))
	for i, s := range p.Semaphores {
		sem[i] = s.Tokens
	}
	return ctr, bar, sem
}

// gate refuses programs that verify does not call safe, unless allowed.
func gate(ctx context.Context, p *schedule.Program, o Options) error {
	if o.AllowUnsafe {
		return nil
	}
	r, err := verify.Run(ctx, p, verify.Config{})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnverified, err)
	}
	if r.Verdict != verify.Safe {
		return fmt.Errorf("%w: %v", ErrUnverified, r.Err())
	}
	return nil
}

// permuteRefusal is the error of a run that would permute the workers of
// a launch that is not cooperative over more workers than are resident
// (perSM blocks on each of sms SMs), or nil (see [Options.Permute]).
func permuteRefusal(permute, coop bool, workers, perSM, sms int) error {
	if !permute || coop || workers <= perSM*sms {
		return nil
	}
	return fmt.Errorf("runner: Permute on a launch that is not cooperative, of %d workers with %d resident (%d per SM × %d SMs): the workers beyond residency must be the highest-numbered ones, as verify assumed", workers, perSM*sms, perSM, sms)
}
