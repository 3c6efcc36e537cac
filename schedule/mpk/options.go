package mpk

import (
	"fmt"
	"io"
	"strconv"

	"github.com/megaproof/megaproof/schedule"
)

// Dispatch says which worker runs which task.
type Dispatch uint8

// Dispatch models.
const (
	// Static fixes the assignment MPK's schedulers make in one history
	// ([Options.History]; [Options.Histories] lists those whose verdicts
	// can differ): the round-robin of MPK's dispatch loop (see the
	// package documentation). Each worker runs its tasks in FIFO order,
	// so the residency of workers and the fill of each queue are
	// modelled exactly.
	Static Dispatch = iota
	// Dynamic lets any worker run any task once it is ready: every
	// assignment the run-time cursor rotation can produce, with each task
	// ordered only by its events. Residency is not modelled then.
	Dynamic
)

// Residency says where MPK's scheduler blocks live while the worker
// blocks run.
type Residency uint8

// Residency models of the scheduler blocks.
const (
	// Beside: a scheduler block (one warp, little shared memory) fits on
	// an SM beside a worker block, so the schedulers take no worker
	// slot. Only more workers than SMs can leave a worker non-resident.
	Beside Residency = iota
	// Exclusive: each scheduler block takes an SM a worker block could
	// have used, and the scheduler blocks are placed first — what MPK's
	// issue #761 observed when the worker's shared memory leaves no room
	// beside it. Workers + schedulers beyond the SMs leave the last
	// workers non-resident, and a task on one of them is an occupancy
	// finding.
	Exclusive
)

// Defaults for what the file does not say.
const (
	DefaultIterations        = 2
	DefaultSMs               = 132 // H100 and H200
	DefaultTarget            = "H100/H200"
	DefaultWorkerQueueLen    = 8192 // per_worker_queue_len since MPK #667
	DefaultSchedulerQueueLen = 4096 // per_sched_queue_len since MPK #667
)

// Limits on options, so a program stays within megaproof's limits.
const (
	MaxIterations = 1 << 16
	MaxWorkers    = 2000 // workers, and schedulers, each
)

// Options are what an MPK file does not record. The zero value is the
// documented default of every field.
type Options struct {
	// Iterations is the number K of consecutive iterations unrolled
	// (default 2), so that reuse of buffers across iterations is
	// checked. Counters are not reset between them.
	Iterations int
	// Target names the GPU in messages (default "H100/H200").
	Target string
	// SMs is the target's SM count (default 132, H100 and H200).
	SMs int
	// Workers is num_workers (default DefaultWorkers(SMs): 128 on 132
	// SMs).
	Workers int
	// Schedulers is num_local_schedulers (default
	// DefaultSchedulers(SMs, Workers): 16 on 132 SMs with 128 workers).
	Schedulers int
	// Dispatch is the assignment model (default Static).
	Dispatch Dispatch
	// Residency places the scheduler blocks (default Beside).
	Residency Residency
	// WorkerQueueLen and SchedulerQueueLen are the ring capacities
	// (default 8192 and 4096). A worker's queue overflows when it would
	// hold WorkerQueueLen entries at once.
	WorkerQueueLen, SchedulerQueueLen int
	// Tensors overrides what the mapping infers of a tensor, by base_ptr
	// name. Names the file does not use are ignored.
	Tensors map[string]TensorInfo
	// History fixes, with Static dispatch, the scheduler that receives
	// END(k-1) and pushes BEGIN(k): History[k-2] for iteration k >= 2.
	// Iterations it does not cover (nil: all) take the default, the
	// scheduler of the worker that runs the last task, by position, that
	// triggers END. On the GPU it is the scheduler of whichever worker
	// ends the iteration; [Options.Histories] lists the histories whose
	// verdicts can differ.
	History []int
}

// TensorInfo is what the file cannot say about a tensor.
type TensorInfo struct {
	// Size in bytes; 0 means the end of its farthest tile.
	Size uint64
	// Kind; 0 means input when no task writes the tensor and state
	// otherwise.
	Kind schedule.BufferKind
	// Arena and Offset place the tensor in a named arena, so that
	// tensors of one arena alias (torch views passed as separate
	// tensors, reused physical buffers). "" is an arena of its own.
	Arena  string
	Offset uint64
}

// DefaultWorkers is MPK's worker count for an SM count
// (get_configurations_from_gpu in python/mirage/utils.py).
func DefaultWorkers(sms int) int {
	switch {
	case sms >= 160:
		return 144
	case sms >= 132:
		return 128
	case sms >= 108:
		return 96
	case sms >= 68:
		return 64
	case sms >= 40:
		return 30
	}
	return 20
}

// DefaultSchedulers is MPK's local scheduler count, 4·(SMs − workers),
// and at least 1.
func DefaultSchedulers(sms, workers int) int { return max(1, 4*(sms-workers)) }

// withDefaults fills in defaults and checks the options.
func (o Options) withDefaults() (Options, error) {
	if o.Iterations == 0 {
		o.Iterations = DefaultIterations
	}
	if o.SMs == 0 {
		o.SMs = DefaultSMs
		if o.Target == "" {
			o.Target = DefaultTarget
		}
	}
	if o.Target == "" {
		o.Target = fmt.Sprintf("%d SMs", o.SMs)
	}
	if o.Workers == 0 {
		o.Workers = DefaultWorkers(o.SMs)
	}
	if o.Schedulers == 0 {
		o.Schedulers = DefaultSchedulers(o.SMs, o.Workers)
	}
	if o.WorkerQueueLen == 0 {
		o.WorkerQueueLen = DefaultWorkerQueueLen
	}
	if o.SchedulerQueueLen == 0 {
		o.SchedulerQueueLen = DefaultSchedulerQueueLen
	}
	var d diags
	bad := func(name string, v, lo, hi int) {
		if v < lo || v > hi {
			d.add(schedule.CodeValue, "Options."+name, "%s = %d; want %d..%d", name, v, lo, hi)
		}
	}
	bad("Iterations", o.Iterations, 1, MaxIterations)
	bad("SMs", o.SMs, 1, schedule.MaxWorkers)
	bad("Workers", o.Workers, 1, MaxWorkers)
	bad("Schedulers", o.Schedulers, 1, MaxWorkers)
	bad("WorkerQueueLen", o.WorkerQueueLen, 1, 1<<32)
	// Below three entries the private scheduler queues, which this
	// mapping does not model (see the package documentation), could
	// overflow.
	bad("SchedulerQueueLen", o.SchedulerQueueLen, 3, 1<<32)
	if len(o.History) > o.Iterations-1 {
		d.add(schedule.CodeValue, "Options.History", "%d entries for %d iterations; want at most %d", len(o.History), o.Iterations, o.Iterations-1)
	}
	for i, e := range o.History {
		if e < 0 || e >= o.Schedulers {
			d.add(schedule.CodeValue, "Options.History["+strconv.Itoa(i)+"]", "scheduler %d; want 0..%d", e, o.Schedulers-1)
		}
	}
	if len(o.History) > 0 && o.Dispatch != Static {
		d.add(schedule.CodeValue, "Options.History", "a dispatch history is modelled with static dispatch only")
	}
	if o.Dispatch > Dynamic {
		d.add(schedule.CodeValue, "Options.Dispatch", "unknown dispatch model %d", o.Dispatch)
	}
	switch {
	case o.Residency > Exclusive:
		d.add(schedule.CodeValue, "Options.Residency", "unknown residency model %d", o.Residency)
	case o.Residency == Exclusive && o.Dispatch == Dynamic:
		d.add(schedule.CodeValue, "Options.Residency", "the residency of scheduler blocks is modelled with static dispatch only")
	}
	for name, ti := range o.Tensors {
		if ti.Kind > schedule.KindState {
			d.add(schedule.CodeValue, "Options.Tensors["+name+"].Kind", "unknown buffer kind %d", ti.Kind)
		}
		if ti.Size > maxSpan || ti.Offset > maxSpan {
			d.add(schedule.CodeSize, "Options.Tensors["+name+"]", "size or offset beyond 2^50 bytes")
		}
	}
	return o, d.err()
}

// Unmarshal reads an MPK task-graph file and maps it with the default
// options; see [Options.Unmarshal]. The program covers one dispatch
// history: to decide a graph, verify every program of [Options.Programs].
func Unmarshal(data []byte) (*schedule.Program, error) { return Options{}.Unmarshal(data) }

// Decode reads an MPK task-graph file from r and maps it with the default
// options.
func Decode(r io.Reader) (*schedule.Program, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return Unmarshal(data)
}

// Unmarshal reads an MPK task-graph file ([Parse]) and maps it to a
// program ([Options.Map]) of one dispatch history (a graph is safe when
// every program of [Options.Programs] is and Programs refuses nothing).
// Malformed input of any kind yields a
// *[schedule.Error] whose diagnostics carry an invalid.* code and the JSON
// path of each problem; bad options do too, with the option's name as the
// path. It never panics.
func (o Options) Unmarshal(data []byte) (*schedule.Program, error) {
	if _, err := o.withDefaults(); err != nil {
		return nil, err
	}
	g, err := Parse(data)
	if err != nil {
		return nil, err
	}
	return o.Map(g)
}
