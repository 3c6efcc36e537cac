// Package runner executes megaproof programs on a real NVIDIA GPU and on
// the CPU, so that a verdict can be checked against hardware.
//
// # Overview
//
// [Encode] compiles a [schedule.Program] into the interpreter's form: one
// step stream per normal-form thread (see [schedule.Lower]), a task table,
// an access table and a heap layout. [Reference] executes the same program
// on the CPU in one valid order and returns every buffer's bytes. [Open]
// loads libcuda.so.1 and NVRTC with dlopen (no CUDA is needed at build
// time), compiles the embedded CUDA source for the device, and
// [Device.Run] launches one persistent interpreter kernel for a program and
// returns its buffers; they must equal [Reference] bit for bit.
//
// Without cgo, [Open] and [Device.Run] return [ErrNoCGO]; without a driver
// or device, [Open] returns an error wrapping [ErrNoDevice]. Encoding and
// the CPU reference work everywhere.
//
// # The interpreter kernel
//
// One thread block per worker (Options.Permute shuffles the worker→block
// map). Thread 0 performs every synchronization step; the whole block runs
// task bodies. A wait spins in thread 0 with ld.acquire.<scope> (relaxed
// waits use ld.relaxed) and then synchronizes the block; a signal
// synchronizes the block and then issues red.release.<scope>.add (relaxed
// signals red.relaxed). Consecutive sync steps with no body between them
// (a signal then the next task's wait, empty bodies, barrier arrive and
// await) run in thread 0 alone while the rest of the block waits at one
// barrier, so the block barrier after a wait is the one that ends the run
// and the barrier before a signal is the one that ends the previous body.
// The instruction window in shared memory is predecoded when loaded, so
// that acquire/release steps at gpu scope and empty bodies cost a few
// instructions each. Barriers are counters with generation-scaled
// targets (arrive = release add of 1, await = acquire spin until k·P).
// Semaphores acquire with an acq_rel CAS loop and release with a release
// add. Fences are fence.acq_rel.<scope> by every thread between two block
// barriers. Mutants therefore run as written: a relaxed or cta-scoped step
// really is one on the GPU.
//
// Every spin checks a deadline (%globaltimer, Options.Timeout from the
// worker's start) and a global abort flag. The first worker past its
// deadline raises the flag, every spinning worker leaves, and Run returns
// a *[DeadlockError] (matching [ErrDeadlock]) with each stuck worker's
// thread, step, operation and the value it last read, and the final
// counter values. The GPU never hangs on a stuck schedule.
//
// # Dynamic dispatch
//
// Dynamic (unpinned) tasks are claimed from a ready queue. A dynamic task's
// entry guard is the run of waits and acquires at the start of its thread.
// A task is ready when its guard holds (read with relaxed loads; the
// claimed task then executes its guard with the real acquire semantics).
// Workers that finished their static queue scan the unclaimed tasks in
// windows of 64 from a per-block cursor (all tasks are eventually visited)
// and claim a ready one with an atomic CAS until every dynamic task has
// run; they stay resident until then. A worker spinning in a static wait
// also helps: it may claim a ready simple task (one whose guard holds only
// counter waits and that cannot block after it), run it, and resume
// waiting. A claimed task holds its worker until it ends. This is the
// dispatch docs/SEMANTICS.md defines ("Dispatch of dynamic tasks", with
// [schedule.Thread.Guard] and [schedule.Thread.Simple] shared by both), so
// a program the model calls safe cannot stall here: tasks that block after
// their guard and can hold every free worker are findings (`occupancy`),
// not hangs. [Encoded.BlockingDynamic] counts such tasks.
//
// # Bodies
//
// Task.Op names one of [Ops] (byte operations) or [NumericOps] (the
// numeric operations of a Llama decode step). Byte operations read their
// byte footprint and write their own: "mix" writes a hash of exactly the
// bytes it read, so a stale or torn read changes the output. Inputs,
// weights and state start with a deterministic pattern per buffer unless
// Options.Init gives their contents; scratch and output bytes start as
// Options.Poison. Options.Body runs every body as one byte operation
// instead of Task.Op ("mix" or the address-keyed "mixat"), so programs
// with ops the runner does not know, such as the corpus seeds, execute
// with their real footprints; [ReferenceWith] is the matching CPU
// reference.
//
// # Numeric operations
//
// embed, rmsnorm, gemv, rope, kv_append, attention, attn_partial,
// attn_combine, add, silu_mul and argmax compute in fp32 on bf16 storage
// and round where PyTorch's bf16 Llama rounds. The fused ops norm_gemv,
// gemv_add, norm_gate_up, rope_append, norm_gemv_argmax and argmax_tiles
// (llamagen's Config.Fuse), and combine_gemv_add (Config.FuseCombine: the
// split-KV combine in the o tiles) compute exactly what a sequence of those ops
// computes, in one task: the CPU reference of a fused schedule equals the
// unfused one's bit for bit. Each has a file
// runner/op_<name>.go (documentation, the checks of its params and
// footprint, its CPU reference and tolerance) and device code in
// runner/kernels/ops/<name>.cuh; op codes and the task record layout are
// declared in Go and generated into kernels/opcodes.cuh (a test fails when
// it is stale), and the kernel traps on an op code it does not know. A
// task's operands are its accesses, its scalars task params
// (examples/llama/llamagen writes them with Config.Numeric); [Encode]
// refuses, naming the task, an op whose params, footprint and buffer
// sizes disagree. [LlamaSource] fills a llamagen program's weights from
// Hugging Face tensors: a safetensors file ([OpenSafetensors]) or the
// seeded initialization [SeededTensors] shared with
// scripts/gpu/llama_ref.py. A [Resident] heap keeps weights and the KV
// cache on the device across the decode steps of one model ([Prepare]
// verifies each step's program first), and [Generation] decodes greedily
// on it or on a [HostHeap] (the CPU reference). [Resident.Load] uploads a
// step's tables before the loop and [Resident.RunIO] runs a step with one
// wait: the sync state is reset by a device-to-device copy from a pristine
// copy on the stream, and the token in and out go through pinned memory.
//
// # Performance features
//
// The kernel is compiled for at most [MaxBlockThreads] threads per block,
// so that the bodies have 128 registers. At a wait that is not met yet,
// thread 0 copies the next numeric task's record and accesses into shared
// memory and, with Options.PrefetchBytes, prefetches the weight and state
// reads of the next tasks into L2 (a prefetch reads no value). With
// Options.Trace a run records per task when its sync steps began and its
// body started and ended (Outcome.Trace). MEGAPROOF_KERNEL_CACHE names a
// folder where compiled kernel images are kept by source hash.
//
// # Residency
//
// Unless Options.FreeOccupancy is set, Run pads each block's dynamic
// shared memory so the device keeps at most Launch.PerSM interpreter blocks
// per SM, making the real residency match the declared capacity where the
// device's SM count does. A cooperative launch beyond it fails with
// [ErrOccupancy]; a non-cooperative one runs with the hardware's residency.
//
// # Safety gate
//
// Run calls verify.Run first and refuses (with [ErrUnverified]) any program
// whose verdict is not safe, unless Options.AllowUnsafe is set.
//
// docs/GPU.md records the measurements on an H200.
package runner
