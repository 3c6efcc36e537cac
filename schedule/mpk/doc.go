// Package mpk reads the task graphs of Mirage Persistent Kernel (MPK),
// the task_graph_rank{R}.json files MPK's compiler writes beside its
// generated kernel, and maps them to a [schedule.Program] so that megaproof
// verifies MPK schedules directly. The format and the runtime semantics
// the mapping follows are those of MPK's source at commit de8745d (files
// written since MPK's prelaunch rewrite, #299).
//
// [Detect] tells an MPK file from megaproof's and AutoMegaKernel's JSON by
// its two mandatory top-level keys, all_events and all_tasks. [Unmarshal]
// and [Decode] read and map with the default [Options];
// [Options.Unmarshal] with others. [Parse] reads a file into a [Graph],
// [Options.Map] maps one, and [Marshal] writes one exactly as MPK does
// (nlohmann's dump(2)). [Builder] lays out graphs the way MPK's
// register_mugraph does, for tests and benchmarks of any size.
//
// Errors are a *[schedule.Error] whose diagnostics carry invalid.* codes
// and JSON paths into the MPK document; nothing panics.
//
// # Tasks, events and iterations
//
// Every event is a 64-bit counter e<pos>, zeroed at launch and never reset
// between iterations, as in MPK. The mapping unrolls K consecutive
// iterations ([Options.Iterations], default 2), so that reuse of buffers
// across iterations is checked. In iteration k (from 1) every task at
// position p >= 2 becomes task "t<p>.<TYPE>@<k>" (for example
// "t6.LINEAR@1") with
//
//   - a wait on its dependent event's counter for num_triggers × k, an
//     acquire at sys scope (the runtime's ld.acquire.sys spin); none when
//     dependent_event is EVENT_INVALID_ID or num_triggers is 0 (the
//     runtime's threshold is then already met);
//   - its body: the byte footprints of its inputs (reads) and outputs
//     (writes);
//   - a +1 release signal at gpu scope on its trigger event's counter
//     (atom.add.release.gpu); none when trigger_event is
//     EVENT_INVALID_ID (then it never counts toward END, MPK #665's bug).
//
// BEGIN_TASK_GRAPH of iteration k ("t1.BEGIN_TASK_GRAPH@k") waits, for
// k >= 2, until END_OF_TASK_GRAPH reaches num_triggers × (k-1) (the
// scheduler that receives END pushes BEGIN; acquire at gpu scope, the
// queue handoffs it stands for), then signals the launch event (position
// 1). The launch event firing dispatches every task of the iteration: the
// first task each worker receives in iteration k waits until the launch
// event's counter reaches k (the scheduler's acquire of the broadcast
// queue and the worker's acquire of its own). The worker runs the rest in
// FIFO order after it. Each worker then runs "w<w>.TERMINATE", which waits
// for the last iteration's END: workers stay resident until the kernel
// ends. With counters and iteration-scaled thresholds, the END barrier
// orders every task of iteration k before every task of k+1 exactly when
// the graph makes END wait for them. That wait is an acquire of every
// END trigger's increment, as the hardware performs them (each a release
// increment at L2, the leaf's writes visible before it); MPK's primitives
// in the memory model's terms order only the firing trigger's history
// before the scheduler's handoff, as no one acquires END's counter, so a
// race that only the formal model allows between a non-firing leaf of
// iteration k and iteration k+1 is not reported.
//
// The runtime fires an event when a signal makes its counter exactly
// num_triggers × the signalling task's iteration; that matters only for
// END and the launch event. The mapping takes END(k) to fire once the
// counter reaches num_triggers × k, which is the same while END's
// num_triggers is at least the number of tasks that trigger it. With fewer
// (a wrong num_triggers), END fires before iteration k ends, and a late
// trigger of iteration k can later make the count without firing, so the
// runtime may also hang in a later iteration: the mapping reports what the
// early start allows (the iterations overlap, which races when they touch
// the same bytes) but not that hang, so [Options.Programs] (what megaproof
// verify decides) refuses such a graph as unsupported unless one of its
// programs is unsafe.
//
// # Dispatch
//
// The file does not say which worker runs which task. With [Static]
// dispatch (the default) the mapping fixes the assignment of MPK's
// schedulers for one history, as MPK's dispatch loop makes it: local scheduler s
// owns the workers [lo_s, hi_s) of an even split of [Options.Workers] (the
// first Workers mod Schedulers one larger); position p is dispatched by
// the owner of worker (p-2) mod Workers, to that scheduler's round-robin
// cursor worker, the cursor persistent across iterations; BEGIN of
// iteration 1 goes to scheduler 0's cursor (seeded with END), BEGIN of
// iteration k to the cursor of the scheduler of the worker that ran the
// last task (by position) triggering END in iteration k-1, worker /
// ceil(Workers / Schedulers) ([Options.History] fixes another one).
// Tasks on one worker are ordered by its FIFO queue (a CTA barrier between
// tasks). On the GPU the scheduler that receives END is that of whichever
// worker ends the iteration, and its cursor shift moves its workers' next
// tasks: within an iteration that only relabels the workers, but a task
// that need not run before END (a leaf without a trigger, or triggering
// an event nobody needs) is followed on its worker by different tasks of
// the next iteration in different histories. [Options.Histories] lists
// the histories whose verdicts can differ, and [Options.Programs] maps
// each (megaproof verify decides every one and reports a failing one); a
// schedule is safe when all are. A program mapped for a given history is
// named after it ("mpk task graph (END(1) to scheduler 0)"). [Dynamic] dispatch makes every task its
// own thread ordered only by its events and the dispatch gate: every
// assignment the run-time cursor rotation can produce, and more. Since MPK's dependencies point to
// smaller positions, no assignment deadlocks when every worker is
// resident; deadlocks come from residency, from wrong num_triggers or
// from tasks that never signal.
//
// # Launch and residency
//
// [Options.SMs] defaults to 132 (H100 and H200), [Options.Workers] to
// MPK's get_configurations_from_gpu (128 on 132 SMs; [DefaultWorkers]),
// [Options.Schedulers] to 4 × (SMs - workers) (16 there;
// [DefaultSchedulers]). The launch is not cooperative (MPK starts its
// worker and scheduler grids on two streams) with one worker block per
// SM. Where the scheduler blocks live is [Options.Residency]:
//
//   - [Beside] (default): a scheduler block (one warp, little shared
//     memory) fits beside a worker block, so the schedulers take no
//     worker slot and are not modelled as threads. Only more workers than
//     SMs leave workers non-resident.
//   - [Exclusive]: each scheduler block takes an SM a worker could have
//     used, and is placed first — MPK's issue #761, where scheduler blocks
//     occupied SMs before the workers became resident. The schedulers are
//     then threads 0..S-1 of the launch ("s<s>.begin@k" relays END(k-1) to
//     BEGIN(k), "s<s>.dispatch@k" waits for the launch event and releases
//     its workers' first tasks of iteration k, "s<s>.end" releases their
//     TERMINATE), and MPK worker w is launch worker S+w. With S+W beyond
//     the SMs, the last workers start only when a resident block ends —
//     and none ends before the kernel does, so a task on one of them is
//     an occupancy finding (a deadlock under residency that every worker
//     resident would not have).
//
// With Dynamic dispatch there are no worker threads: residency is not
// modelled, and Exclusive is refused.
//
// # Queues
//
// MPK's queues are rings without back-pressure: a worker asserts that
// fewer than per_worker_queue_len entries are outstanding, and so does a
// scheduler for per_sched_queue_len ([Options.WorkerQueueLen], default
// 8192, and [Options.SchedulerQueueLen], default 4096, since MPK #667).
// An overflow is a finding, not an assumption. megaproof has no queue
// object, so the mapping encodes each queue as a 32-bit counter that
// starts at 2^32 - capacity and is signalled by the number of entries that
// can be outstanding at once: it overflows its width — a counter-overflow
// finding — exactly when capacity entries are outstanding.
//
//   - "queue.w<w>.i<k>": worker w's queue in iteration k, signalled by
//     the dispatch of iteration k (BEGIN(k) with Beside, the scheduler
//     threads with Exclusive) with the worker's tasks of the iteration,
//     plus one when it also received BEGIN(k) (the worst case:
//     every entry pushed before the worker consumes one). TERMINATE is
//     pushed after every other entry is consumed. Entries of earlier
//     iterations that END needs are consumed before END lets the next
//     dispatch happen; those of tasks END does not need (they trigger
//     nothing, or an event no one waits on) may still be queued then, and
//     are not counted with the next iteration's: an overflow that only
//     such leftovers make is not reported.
//   - "queue.s<s>.i<k>" with Dynamic dispatch: the fullest queue of
//     scheduler s's workers under any cursor, floor(tasks / workers) + 1.
//   - "bqueue.s<s>": a scheduler that dispatches no position is waited
//     for by nobody, so its cursor in the broadcast queue may lag every
//     iteration behind: each BEGIN adds its entry. A scheduler with
//     positions that END needs consumes each iteration's entry before the
//     iteration can end; one whose positions END does not need can lag as
//     far, which is not modelled (its overflow is not reported).
//
// A scheduler's private queue holds at most two entries (the END it is
// handling and the termination entry), so capacities below 3 are refused
// as options rather than modelled.
//
// # Buffers and footprints
//
// Every base_ptr name is one buffer ("nullptr", an absent tensor, is
// none). Its size is the end of its farthest tile; it is an input when no
// task writes it and state (initialized, read-write) otherwise — the file
// cannot tell a never-written scratch tensor from a KV cache, and MPK's
// tensors come from torch or cudaMalloc, so reads of them are never
// uninitialized-read findings. [Options.Tensors] sets a tensor's real
// size (then footprints beyond it are out-of-bounds findings), its kind,
// and an arena in which tensors alias (torch views passed as separate
// names, reused physical buffers); a negative offset is out of bounds
// anyway.
//
// A tile's footprint is exact: the es bytes of every element offset +
// es · Σ i_d · strides[d], for es the data type's size. It is one access
// when the layout allows — a contiguous run, or rows of one run at a
// regular stride (a column slab of a row-major matrix is a rows × stride
// tile) — and one such access per index of the remaining outer
// dimensions otherwise (at most 512).
//
// # What the model leaves out
//
// What the file does not record and the mapping cannot guess: accesses
// outside inputs and outputs (RuntimeConfig metadata, page tables and the
// scheduler's prepare_next_batch, paged KV through runtime indices, MoE
// routing), synchronization inside task bodies (mbarriers, TMA, and the
// async proxy, which the runtime does not fence), and data-dependent
// tiles (the declared tile is taken as the footprint). Writes are plain
// writes: two unordered tasks writing the same bytes race even if their
// kernels accumulate atomically. Multi-GPU graphs
// are refused: an event id carrying the NVSHMEM tag or owned by another
// GPU than the file's (the owner of BEGIN's trigger), and the NVSHMEM
// collectives (task types 301, 302 and the range 300-349) and the legacy
// ALLREDUCE (106), whose synchronization lives in their bodies, are
// invalid.value diagnostics whose message starts "unsupported:" and names
// them. So are LAUNCH_TASKS events (901, 902), which no file since the
// prelaunch rewrite has.
//
// # What is invalid
//
// Besides malformed JSON and wrong types (integers must be JSON integers
// within int64; MPK's uint64 ids all fit): fewer than 3 events or 2
// tasks; event 0 not TERMINATION, event 1 not LAUNCH_DEPENDENT_TASKS with
// num_triggers 1 over [2, N), the last event not END_OF_TASK_GRAPH or with
// num_triggers 0, other events not EMPTY; num_triggers outside MPK's int;
// event ranges outside [0, N]; task 0 not TERMINATE and task 1 not
// BEGIN_TASK_GRAPH triggering event 1, either with a dependent event or
// tensors; a second TERMINATE or BEGIN, an unknown task type (MPK's
// generic, Hopper and SM100 ranges are accepted), a scheduler pseudo-type;
// a task triggering event 0 or 1; an event id beyond the events; more
// than [MaxInputs] inputs or [MaxOutputs] outputs; a tensor with an empty
// name, a data type without a size (the 4-bit types, or DT_UNKNOWN but for
// nullptr), dims and strides of different lengths or more than [MaxDims],
// a dimension below 1, a negative stride, values beyond MPK's int, a tile
// beyond 2^50 bytes; first_tasks entries outside [2, N) or repeated.
//
// Not invalid, since the runtime does not rely on them or they are the
// verifier's to decide: event ranges of EMPTY events (redundant with
// dependent_event since the prelaunch rewrite), num_triggers that do not
// match the triggering tasks (but for END's below them, which
// [Options.Programs] refuses when its programs are safe), tasks that do not trigger, dependencies that
// point forward, first_tasks that disagree with the dependencies. Unknown
// keys are ignored and missing metadata (request_id, expert_offset,
// kv_idx, merge_task_offset, task_offset) defaults to -1 and variant_id to
// 0, as for files older than MPK #614; duplicate keys are refused.
package mpk
