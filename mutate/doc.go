// Package mutate injects faults into megakernel schedules: each [Operator]
// turns a [schedule.Program] into a mutant carrying one real fault class,
// taken from the faults seen in real runtimes (F1–F19) or from a gap of
// AutoMegaKernel's validator, both listed in docs/FAULTS.md of the module.
//
// Mutations are blind to verdicts: this package imports neither verify nor
// verify/explore. An operator's Expect list documents what the fault
// usually causes; many mutants are nonetheless safe (a dropped wait that
// was redundant, a relaxed signal followed by a fence, a swapped pair of
// independent tasks), and the corpus labels every mutant with the oracles,
// never with Expect.
//
// # Sites, seeds and determinism
//
// [Operator.Sites] counts the places an operator applies to, numbered in a
// fixed order (tasks in list order; a task's before-steps, then its
// after-steps; its reads, then its writes; buffers, counters and barriers
// in list order). [Operator.Apply] takes a site and a seed; the seed picks
// among choices within the site (a new threshold, a partner buffer, a
// target worker) with a splitmix64 generator, so the same (program, site,
// seed) always yields the same mutant, byte for byte in
// [schedule.Marshal]. Apply never modifies its input: it works on a deep
// copy ([Clone]). It returns a structurally valid program
// (Validate() == nil) or an error; an error wrapping [ErrSite] means the
// site does not exist or the operator cannot apply there without producing
// an invalid program.
//
// Footprint operators change accesses and buffer placement only; a task's
// Params (opaque operands such as n_off or pos) are left unchanged.
//
// # Operators
//
// Source cites the F-numbers of docs/FAULTS.md, "AMK §2.3 <witness>" for
// AutoMegaKernel's unsound regions, "AMK E2 <class>" for its mutation
// classes, and "AMK §4.1" for its sync protocol (all in docs/FAULTS.md).
//
//	name                   class                                                      source                                   expected family
//	drop-wait              missing dependency: one wait removed                       AMK E2 drop_wait, §2.3 large_model; F18  race, uninitialized-read
//	lower-threshold        partial join: threshold k lowered into [1, k)              AMK E2 partial_shared; F4                race, uninitialized-read
//	raise-threshold        phantom producer: threshold past every reachable value     F4                                       deadlock.unsatisfiable
//	reuse-phase-threshold  later phase waits for an earlier phase's threshold         F8, F9                                   race, uninitialized-read
//	drop-signal            lost producer: one signal removed                          F4, F14                                  deadlock.unsatisfiable
//	duplicate-signal       double increment: one signal repeated                      Hazy %smid (inferred); F8, F10           race, uninitialized-read, counter-overflow
//	signal-early           signal moved before the body (previous task or before)     F12, F6                                  race, uninitialized-read
//	wait-wrong-counter     wait moved to another counter                              F3                                       deadlock, race
//	wait-own-signal        task waits on a counter it signals itself                  F3; AMK E2 self_wait                     deadlock, race
//	add-cycle              two tasks wait for each other's signal                     AMK E2 cycle; F3                         deadlock.cycle
//	relax-signal           release signal made relaxed                                F6; Hazy/Luce (inferred)                 race.unsynchronized
//	relax-wait             acquire wait made relaxed                                  F6, F7; AMK §4.1                         race.unsynchronized
//	drop-fence             one fence removed                                          F6, F12                                  race.unsynchronized
//	narrow-scope           wait/signal/fence/acquire/release narrowed to cta          F6; AMK §4.1                             race.unsynchronized
//	move-acquire           acquire moved: one wait relaxed, another made acquire      F6 (mirage PR#461→PR#470)                race.unsynchronized
//	narrow-sys-scope       sys narrowed to gpu (equivalent: nothing outside the GPU)  F6; mirage ld.acquire.sys                safe (control)
//	narrow-shared-scope    op on a counter/semaphore another thread uses made cta     F6; AMK §4.1                             race.scope
//	swap-queue-order       two adjacent tasks of one worker's queue swapped           AMK §2.3 cross_sm_queue_deadlock         deadlock.cycle, race
//	move-task              task pinned to another worker                              F2; Hazy %smid (inferred)                deadlock.cycle, race
//	exceed-capacity        grid grown past, or target shrunk below, residency         F1, F2                                   occupancy
//	claim-before-ready     dynamic task claimed before its waits hold (non-simple)    F19, F1; MPK claim-then-spin             occupancy
//	hold-workers           R+1 dynamic tasks sync on a new barrier, R resident       F14, F5, F1                              occupancy
//	drop-barrier-step      uneven barrier participation: one sync/arrive removed     F5, F14                                  deadlock.barrier, race
//	barrier-parties-up     barrier parties + 1                                        F13, F5                                  deadlock.barrier
//	barrier-parties-down   barrier parties − 1                                        F13, F8                                  race, deadlock.barrier
//	merge-barriers         barrier id collision: two barriers' steps on one barrier   F13 (tt-metal PR#51773)                  deadlock.barrier, race
//	drop-release           semaphore acquire without release                          F11; NVIDIA/cutlass#1296                 deadlock.semaphore
//	swap-acquire-order     two acquires of a task in opposite order                   NVIDIA/cutlass#1296; F11                 deadlock.semaphore
//	skip-acquire           credit skipped: one acquire removed, its releases kept     F11 (mirage#464)                         race, uninitialized-read
//	nonzero-init           counter starts above zero (stale, not reset)               AMK §2.3 counter_init_nonzero; F9, F10   race, uninitialized-read
//	counter-overflow       counter range at the top of its width plus one signal      F8, F9                                   counter-overflow
//	shift-tile             write shifted onto another task's write                    AMK §2.3 oob_tile_write                  race.waw, output-unwritten
//	widen-oob              access widened past its buffer's end                       AMK §2.3 oob_tile_write                  out-of-bounds
//	kv-beyond-cache        state (KV) access shifted past the cache's end             AMK §2.3 kv_pos_beyond_max_seq           out-of-bounds
//	drop-tile              coverage hole: a write of an output/scratch removed        AMK §2.3 missing_tile_coverage           output-unwritten, uninitialized-read
//	alias-early            scratch placed on another buffer's arena slot              AMK §2.3 pages_unchecked; F17, F11       race, uninitialized-read
//	write-readonly         a read of an input/weight also writes it                   AMK §2.3 write_to_weight                 readonly-write, race
//
// Each operator's constructor in the source carries a longer comment: the
// exact rewrite, the seed's role, and when the mutant is likely safe.
//
// # Not covered
//
// narrow-sys-scope is a control, not a fault: the model has no participant
// outside the GPU (no host, no peer GPU), so gpu and sys scope order the
// same threads and its mutants keep their input's verdict and codes. The
// narrowing the model does see, sys to cta, is narrow-scope's (and, on an
// object other threads use, narrow-shared-scope's).
//
// Structural faults (dangling references, non-dense ids, ABI capacities)
// are not produced here: every mutant is a valid program, and malformed
// input is the JSON reader's business. Faults outside the model (F7's
// hoisted loads as such, F12's async proxy, F15, F16, F19) have no operator.
package mutate
