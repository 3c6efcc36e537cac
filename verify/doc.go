// Package verify decides, exactly, whether a megakernel schedule can
// deadlock, race, read uninitialized memory or break a memory-safety rule,
// and shows how with a witness that schedule.Replay confirms.
//
// The entry points are graded by cost: [Program] returns nil for a safe
// program and an error naming the first finding otherwise; [Run] returns
// the full [Result] with its [Verdict] (safe, unsafe, invalid,
// inconclusive), its [Finding]s and statistics, and honors a
// context.Context. The zero [Config] checks everything.
//
// # Checks
//
// The analyses are declared as [Check] values — [Static], [Progress],
// [Races], [Uninitialized] — each with its name, documentation, the codes
// it reports and the checks it requires; [Checks] lists them in the order
// Run performs them. [Config.Checks] selects some of them (with what they
// require) and reports only their codes.
//
// # Semantics
//
// The definitions decided here are in docs/SEMANTICS.md of the module:
// normal form (one thread per static worker, one per dynamic task),
// residency for non-cooperative launches, happens-before with
// release/acquire, fences, scopes and release sequences, and the exact
// meaning of every finding.
//
// # Finding codes
//
// Codes are stable and append-only; the part before the dot is the family.
// Each has a tiny example program in testdata/codes.
//
//	code                    meaning                                                    witness
//	invalid.*               malformed input, with the JSON path (package schedule)     none
//	deadlock.unsatisfiable  a wait's threshold exceeds every value its counter reaches  trace to the stuck state
//	deadlock.cycle          stuck threads wait on each other (incl. static queue order) trace to the stuck state
//	deadlock.barrier        participants sync unevenly, or parties ≠ participants      trace to the stuck state
//	deadlock.semaphore      semaphore acquires that can never be granted               trace to the stuck state
//	occupancy               more workers than co-resident capacity (cooperative), a
//	                        waiter holding the slot its producer needs, or dynamic
//	                        tasks holding every free worker (see docs/SEMANTICS.md);
//	                        names the workers needed where known                       trace, or none (cooperative)
//	race.raw                a read unordered with an earlier-listed write              both bodies in flight
//	race.war                a write unordered with an earlier-listed read              both bodies in flight
//	race.waw                two unordered writes                                       both bodies in flight
//	race.unsynchronized     always executed in order, but relaxed or cta-scoped sync
//	                        (or only worker start order) gives no happens-before       execution without the order
//	race.scope              a cta-scoped step on a counter or semaphore that another
//	                        worker or a dynamic task uses unordered                    both steps reached
//	uninitialized-read      scratch/output bytes read before any write that happens
//	                        before the read (including a task's own unwritten scratch) trace to the read
//	out-of-bounds           an access outside its buffer                               none
//	readonly-write          a write to an input or weight buffer                       none
//	output-unwritten        output bytes no task writes                                none
//	counter-overflow        a counter exceeds its width                                trace to the overflow
//	inconclusive            a bound was hit (the message names it)                     none
//
// # Three tiers of assurance
//
// Exactness is earned against two oracles that share no algorithm with
// this package:
//
//  1. verify itself, fast at any size. With counters and barriers only, no
//     step disables another (values only grow; waits are ≥), so the system
//     is confluent and one greedy run, with wait lists keyed by threshold,
//     decides deadlock for every interleaving. Races and uninitialized
//     reads are first tried in one shadow pass: the greedy run is walked in
//     order with proof clocks (joining all-join waits, well-formed barrier
//     generations and epoch crossings; they only prove, never refute), and
//     every access is checked against the last write and the reads since
//     of the bytes it touches, kept per arena as row bands of column
//     segments. Must-happen-before is transitive, so when every such check
//     is proven every conflicting pair is ordered, and a read whose bytes
//     were last written through its own buffer, proven before it, is
//     covered. The checks the clocks cannot prove are decided exactly as a
//     list of adjacent pairs; a program with an adjacent pair that is not
//     ordered goes to the pairwise analysis, which reports every racing
//     pair: conflicting pairs come from a sweep of byte ranges per arena,
//     so disjoint tiles never meet, and each pair is ordered by the
//     cheapest exact means that settles it:
//     - proof clocks, as above, for every pair at once;
//     - withhold-runs: step a must precede step b exactly when b is
//     unreachable with a withheld, and per thread the steps that must
//     precede b form a prefix, so one incremental sweep per thread orders
//     every remaining pair on it; by confluence a sweep may start from the
//     greedy run's state just before the withheld thread's first op, and
//     does when every worker is resident;
//     - happens-before equals must-precede when every edge synchronizes;
//     otherwise composed clocks (an acquire synchronizes with every release
//     that must precede it) and a relaxation in which non-synchronizing
//     edges are free prove most pairs, and a taint game decides the rest
//     exactly (its one choice is the order in which objects receive
//     releases that follow the source; free choices are taken first, the
//     others are branched on within a bound, beyond which the verdict says
//     inconclusive).
//  2. The definitional checker (internal/defcheck), slow and obviously
//     correct: one naive withhold-run per conflicting pair and every poison
//     order tried. Property tests require verify to agree with it on random
//     programs.
//  3. The explorer (package verify/explore) enumerates interleavings with
//     state hashing and partial-order reduction and computes happens-before
//     per execution with vector clocks. It is ground truth for small
//     programs, and it decides programs with semaphores (which break
//     confluence) within Config.MaxStates; beyond that the verdict is
//     inconclusive and names the bound. TestDifferential requires the three
//     to agree on every verdict and finding family, and every witness to
//     replay in schedule.Replay.
//
// Which fragment is decided by which algorithm: programs without semaphores
// by tier 1 at any size; programs with semaphores by tier 3 within the
// state budget.
package verify
