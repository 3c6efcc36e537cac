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
// arrivals, semaphore tokens, resident workers and the workers dynamic
// tasks hold are functions of the positions and are carried along the
// search path, not hashed. Visited states are kept in an exact hash set
// (full keys, no hash compaction).
//
// Transitions follow docs/SEMANTICS.md. Without a cooperative launch and
// with more workers than capacity, workers start in index order as others
// exit, and a worker exits once its thread has finished and every dynamic
// task has ended. A dynamic task's first operation (its claim) is enabled
// when each operation of its guard (its leading waits and acquires) holds
// on its own and a worker is free for it: for any task when the resident
// workers whose thread has finished outnumber the claimed unfinished
// non-simple tasks (F − H ≥ 1), for a simple task also when the resident
// workers do (R − H ≥ 1). A non-simple task holds its worker from its
// claim to its last operation.
//
// Happens-before is tracked per execution with vector clocks exactly as
// docs/SEMANTICS.md defines it: a clock per thread, a release clock per
// synchronization object (joined by release signals, by relaxed signals
// through the latest gpu/sys fence of their thread, by barrier arrivals
// and by semaphore releases at gpu/sys scope), a pending clock per thread
// (what its relaxed waits would have acquired, taken by its next gpu/sys
// fence) and a fence clock per thread. A clock component for thread u
// holds the length of u's prefix known to happen before (a thread's own
// component is its position), clamped down to the largest length some
// check compares: past the End of a task that conflicts with another or
// writes what another reads, or past a race.scope candidate operation.
// Clamping is monotone and fixes every compared threshold, so it commutes
// with the joins (maxima) and keeps every comparison's outcome: it is
// exact, and it merges states that differ only in irrelevant positions.
// Clock parts that no remaining operation can read (the clock of a
// finished thread, the release clock of an object without remaining
// waiters) are cleared before hashing.
//
// At a task's Begin the explorer judges, from the current clock of its
// thread: a race with every conflicting task of another thread that has
// begun and whose End is not in the clock; an uninitialized read when some
// read byte of a scratch or output buffer is not covered by same-buffer
// writes of tasks whose End is in the clock. A signal past the counter's
// width is an overflow. Each finding keeps the search path that led to it
// as its witness.
//
// race.scope. The candidates are pairs of operations of different threads
// on one counter or semaphore, one modifying it, one cta-scoped. A step
// makes operations reached: the thread's next operation (its predecessor
// has just run), a dynamic task's claim (reached when it runs), and the
// first operation of every worker the step starts (the initial state
// reaches the first operations of the workers resident from the start).
// Each newly reached y is judged against its reached partners x: they race
// unless x has executed and x's prefix is in the clock of y's thread (x
// happens before y's predecessor). The condition is decided at the later
// of the two reachings: once both are reached, the happens-before
// relations it asks about are fixed, so it holds then exactly when it
// holds at any later state.
//
// A race is race.unsynchronized when one body must execute before the
// other. Task A must precede B iff no execution begins B while A's End has
// not run, i.e. iff B's Begin is unreachable with A's thread frozen just
// before A's End. For each racing pair the explorer runs that frozen
// exploration (without clocks, memoized per frozen task).
//
// Stuck states. A state in which some thread is unfinished and none is
// enabled is stuck. When residency or dispatch constrain the launch, a
// second exploration without clocks runs the unbounded launch (every
// worker resident, every dynamic thread enabled like any other) until it
// finds a stuck state: when it does, each stuck state of the main
// exploration is a deadlock.* finding (one per code, coded by its stuck
// threads); when it finds none, the first one is occupancy, whose message
// names the workers that cannot start or the ready dynamic tasks that
// find no free worker, and, when a few cheap explorations find it, the
// fewest co-resident workers that avoid the stall. The trace is always
// one of the main exploration, so it respects residency and dispatch. A
// cooperative launch beyond capacity is a static occupancy finding.
//
// # Partial-order reduction
//
// At each state the search expands a persistent set: the enabled members of
// a closure of threads, computed from the static remaining operations of
// each thread (threads are straight-line, so a thread's future operations
// are known from its position). Two operations of different threads are
// dependent when one can disable the other or their order changes the
// clocks:
//
//   - one releases to an object and the other acquires from it (a releasing
//     signal, an arrive or a gpu/sys release, against an acquiring wait, a
//     relaxed wait that a later fence completes, an await or a gpu/sys
//     acquire);
//   - both take tokens of one semaphore, where a claim counts as taking the
//     tokens of every acquire of its guard (another acquire can make its
//     guard fail);
//   - one is the claim of a non-simple dynamic task, which can leave no
//     worker free, and the other is a claim.
//
// Everything else commutes when both are enabled and never disables the
// other: two signals, two waits, a non-releasing signal (cta, or relaxed
// with no earlier fence) with any wait, a non-synchronizing wait with any
// signal, Begin, End and fences with everything, two claims of simple
// tasks (a simple task holds no worker). Counters only grow, residency
// only starts workers, and the workers free for a claim only decrease
// through the claims of non-simple tasks (F counts finished workers, which
// stay resident while a claim is left; H grows only at such claims), so
// enabling is the only other effect and it is not dependence; it is
// handled by the closure below. The enablers are: signals, arrives and
// releases for the waits on their objects; under residency a worker's last
// operation (it may start others) and a dynamic task's last operation (the
// last one lets finished workers exit); for a claim that finds no free
// worker, the last operation of a static worker or of a non-simple dynamic
// task (it frees one). The closure starts from one enabled thread and
// adds, for an enabled member, every thread with a remaining operation
// dependent with the member's next operation, and for a disabled member
// every thread with a remaining operation that could make one chosen
// false condition of it true (a worker not yet started, a guard operation
// that does not hold, the free worker, or the operation's own condition).
// The smallest such set over all seeds is expanded; a single object-free
// operation is expanded alone.
//
// Why it preserves every finding. Let P be the expanded set at state s. No
// sequence of operations of threads outside the closure contains an
// operation dependent with a member of P, and none of them can make the
// chosen condition of a disabled member of the closure true, so the
// closure's threads stay where they are until a member of P runs. Take any
// execution E from s. If E runs a member p of P, the events before p
// belong to other threads and are independent of p, so E is equivalent to
// p·E' (same events, same reads-from on every object, hence the same
// happens-before relation and the same clocks at every Begin). If E runs no
// member of P, then p·E is an execution for any p in P, and E's events
// keep their clocks in it (p is independent of all of them, and E has no
// event of p's thread, so p happens before none of E's events). Induction
// on the remaining operations shows that for every execution E the search
// explores an execution E* that contains E's events with the same
// happens-before among them, in which the added events happen before none
// of E's, and in which every thread has advanced at least as far (running
// threads stay running). This preserves every race and uninitialized read,
// overflow (counters are at least as large), and race.scope: a pair
// reached in E is reached in E*, and an added event x happens before no
// event of E, so "x has executed and happens before y's predecessor" holds
// in E* only if it holds in E. For a stuck state reached by E, E must run
// a member of P (a member left out would still be enabled at the end), so
// the same state (the same positions) is explored: deadlocks are
// preserved. The state graph is acyclic (every step advances a position),
// so the reduction needs no cycle proviso, and the persistent set depends
// only on the state, so state hashing is sound with it. Reachability of a
// Begin, used for must-precede, is preserved by the same argument.
//
// # Memory
//
// Every byte an exploration keeps is reserved from Config.MaxMemory
// (default [DefaultMaxMemory]) before it is allocated:
//
//   - the visited set: one key per state, keyLen ints of one byte each
//     (four when a thread has more than 250 operations), where keyLen is T
//     positions for T threads, plus T·(3T + objects) clock components in
//     the main exploration; keys are stored in 1 MiB chunks, with an
//     open-addressing table of 4-byte slots at most half full (8 to 16
//     bytes per state, and the old table while it doubles);
//   - the search path, reserved whole at the start: one level per
//     operation of the program plus one, each the state's ints (4 bytes
//     each), the objects' values (8 bytes each), an event, a frame and up
//     to one successor per thread;
//   - the traces the findings keep (8 bytes per event).
//
// So one exploration holds at most about path + states × (key bytes + 16)
// bytes, and the states of a Run are bounded both by MaxStates and by
// about (MaxMemory − path) / (key bytes + 16). Explorations run one after
// the other and give their reservation back when they end (the key chunks
// go to the next one; after a large one the collector runs before the
// next starts), so the bytes held at once never exceed MaxMemory. The
// model (the lowered program, its conflict and dependence tables) is
// linear in operations times threads plus quadratic in tasks, and is not
// counted. A 60-worker program of 180 semaphore-guarded tasks has
// 10,920-byte keys and a 32 MB path: the default budget holds about 46,000
// of its states.
//
// # Guarantees and limits
//
// Every finding is real and every non-static one carries a trace that
// schedule.CheckWitness accepts. With Result.Complete every finding of
// docs/SEMANTICS.md is reported: one per racing pair, one per race.scope
// task pair, one per reader, one per overflowing counter, one per
// deadlock code. When a bound ends the explorations first, Complete is
// false and Result.Limit says which: the state budget (Config.MaxStates
// over all explorations), the memory budget, the context, or the size
// bound (programs whose state key would exceed 16384 ints are not
// explored at all: static findings only). Result.Reason says it in words.
package explore
