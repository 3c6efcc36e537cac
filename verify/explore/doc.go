// Package explore is an exhaustive explicit-state explorer for megakernel
// schedules: the ground-truth oracle for small programs. It decides the
// definitions of docs/SEMANTICS.md directly, by enumerating interleavings
// of the normal form ([schedule.Lower]), and shares no algorithm with
// package verify (which it never imports) nor with [schedule.Machine] (it
// has its own transition function; tests confirm every witness through
// [schedule.CheckWitness]).
//
// # Algorithm
//
// [Run] performs an iterative depth-first search. A state is the position
// of every thread plus happens-before clocks; counter values, barrier
// arrivals, semaphore tokens and resident workers are functions of the
// positions and are carried along the search path, not hashed. Visited
// states are kept in an exact hash set (full keys, no hash compaction).
//
// Happens-before is tracked per execution with vector clocks exactly as
// docs/SEMANTICS.md defines it: a clock per thread, a release clock per
// synchronization object (joined by release signals, by relaxed signals
// through the latest gpu/sys fence of their thread, by barrier arrivals
// and by semaphore releases at gpu/sys scope), a pending clock per thread
// (what its relaxed waits would have acquired, taken by its next gpu/sys
// fence) and a fence clock per thread. Every analysis only asks whether a
// task's End happens before some Begin, so a clock component for thread u
// holds the number of u's task ends known to happen before (its ends are in
// program order, so that count is a prefix), further clamped down to the
// last end that some race or read check compares (a task that conflicts
// with another, or writes what another reads). Clamping is monotone and
// fixes every compared threshold, so it commutes with the joins (maxima)
// and keeps every comparison's outcome: it is exact, and it merges states
// that differ only in irrelevant positions. Clock parts that
// no remaining operation can read (the clock of a finished thread, the
// release clock of an object without remaining waiters) are cleared before
// hashing.
//
// At a task's Begin the explorer judges, from the current clock of its
// thread: a race with every conflicting task of another thread that has
// begun and whose End is not in the clock; an uninitialized read when some
// read byte of a scratch or output buffer is not covered by same-buffer
// writes of tasks whose End is in the clock. A stuck state (some thread
// unfinished, none enabled) is a deadlock; a signal past the counter's
// width is an overflow. Each finding keeps the search path that led to it
// as its witness.
//
// A race is race.unsynchronized when one body must execute before the
// other. Task A must precede B iff no execution begins B while A's End has
// not run, i.e. iff B's Begin is unreachable with A's thread frozen just
// before A's End. For each racing pair the explorer runs that frozen
// exploration (without clocks, memoized per frozen task).
//
// Residency: for a non-cooperative launch with more workers than capacity,
// the main exploration applies residency (workers start in index order as
// resident ones finish), and a second exploration without clocks and with
// every worker resident classifies its stuck states: a deadlock reachable
// under residency gets a deadlock.* code when one is also reachable with
// every worker resident, and is occupancy otherwise; a deadlock that only
// the all-resident launch reaches cannot happen and is not reported. The
// trace is always one that respects residency. A cooperative launch beyond
// capacity is a static occupancy finding.
//
// # Partial-order reduction
//
// At each state the search expands a persistent set: the enabled members of
// a closure of threads, computed from the static remaining operations of
// each thread (threads are straight-line, so a thread's future operations
// are known from its position). Two operations of different threads are
// dependent when one releases to an object and the other acquires from it
// (a releasing signal, an arrive or a gpu/sys release, against an
// acquiring wait, a relaxed wait that a later fence completes, an await or
// a gpu/sys acquire), or both acquire tokens of one semaphore. Everything
// else commutes when both are enabled and never disables the other: two
// signals, two waits, a non-releasing signal (cta, or relaxed with no
// earlier fence) with any wait, a non-synchronizing wait with any signal,
// Begin, End and fences with everything. Enabling is not dependence; it is
// handled by the closure below. Under residency a worker's last operation
// may enable (start) workers that are not yet resident, and a started
// worker stays started. The closure starts from one enabled
// thread and adds, for an enabled member, every thread with a remaining
// operation dependent with the member's next operation, and for a disabled
// member every thread with a remaining operation that could enable it. The
// smallest such set over all seeds is expanded; a single object-free
// operation is expanded alone.
//
// Why it preserves every finding. Let P be the expanded set at state s. No
// sequence of operations of threads outside the closure contains an
// operation dependent with a member of P, and none of them can enable a
// disabled member of the closure, so the closure's threads stay where they
// are until a member of P runs. Take any execution E from s. If E runs a
// member p of P, the events before p belong to other threads and are
// independent of p, so E is equivalent to p·E' (same events, same
// reads-from on every object, hence the same happens-before relation and
// the same clocks at every Begin). If E runs no member of P, then p·E is an
// execution for any p in P, and E's events keep their clocks in it (p is
// independent of all of them). Induction on the remaining operations shows
// that for every execution E the search explores an execution that
// contains E's events with the same happens-before, which preserves every
// race and uninitialized read, and with counters at least as large, which
// preserves overflow. For a stuck state reached by E, E must run a member
// of P (a member left out would still be enabled at the end), so the same
// state (the same positions) is explored: deadlocks are preserved. The
// state graph is acyclic (every step advances a position), so the
// reduction needs no cycle proviso, and the persistent set depends only on
// the state, so state hashing is sound with it. Reachability of a Begin,
// used for must-precede, is preserved by the same argument.
//
// # Guarantees and limits
//
// Every finding is real and every non-static one carries a trace that
// schedule.CheckWitness accepts. With Result.Complete every finding of docs/SEMANTICS.md is
// reported: one per racing pair, one per reader, one per overflowing
// counter, one per deadlock code. States are bounded by Config.MaxStates
// over all explorations; when the bound or ctx ends first, Complete is
// false. Programs whose state key would exceed 16384 ints are not explored
// at all (Complete false, static findings only).
package explore
