// Package progen generates random valid megakernel programs with rapid, for
// property tests that compare the verifier, the definitional checker and
// the explorer (package verify/explore).
//
// # Shape
//
// [Program] draws a launch (cooperative, or with [Options].Residency also
// non-cooperative with a small capacity, or cooperative beyond capacity),
// buffers of every kind with 1-D ranges and 2-D tiles that overlap or not,
// arenas in which buffers alias, counters (mostly from 0, some with an
// init, rarely one step below the 32-bit maximum), a barrier synced by the
// first task of some workers with the right or a wrong number of parties,
// semaphores used as acquire/release pairs or one-sided, and tasks pinned
// to workers or dynamic, with waits, signals, fences, relaxed orders and
// cta/gpu/sys scopes. With [Options].Blocking some dynamic tasks also get
// steps that block after their guard (a sync on a barrier the dynamic
// tasks share, with the right or one too many parties, or a wait after the
// body), so that they hold the worker that claims them. With
// [Options].Phases the barrier of the first tasks is reused for a second
// generation by the last task of each participant (a sync after or
// before its body, an arrive only, or nothing).
//
// Thresholds are resolved after drawing so that most are reachable: a wait
// mostly asks for every signal that tasks earlier in the list add to its
// counter (which keeps static queues and dynamic tasks deadlock-free), less
// often for part of them, and sometimes for any value up to beyond the
// total. Every choice shrinks toward its safest and simplest value and
// every list is a rapid slice, so failing cases shrink to small readable
// programs. Every generated program passes [schedule.Program.Validate].
//
// [Small] sizes programs for the explorer (up to 6 threads of 8 steps,
// every feature on);
// [Medium] for fast-versus-slow checker comparisons (up to about 200
// tasks, no semaphores).
package progen
