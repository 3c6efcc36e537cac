// Package verify decides, exactly, whether a megakernel schedule can
// deadlock, race, read uninitialized memory or break a memory-safety rule,
// and shows how with a witness that schedule.Replay confirms.
//
// # Gating a launch
//
// The entry points are graded by cost. [Program] is the one-line gate: it
// returns nil for a safe program and otherwise an [*Error] that carries
// the whole [Result] (reach it with errors.As). [Run] returns the Result
// itself and honors a context.Context:
//
//	r, err := verify.Run(ctx, p, verify.Config{})
//	if err != nil {
//		return err // ctx done, or a bad Config.Checks
//	}
//	if r.Verdict != verify.Safe {
//		for _, f := range r.Findings {
//			fmt.Println(f.Code, f.Message) // f.Witness replays in schedule.Replay
//		}
//	}
//
// A [Verdict] is Safe (no finding, and the decision is complete), Unsafe
// (findings, each with a witness where it has one), Invalid (the program
// is malformed: one invalid.* finding per problem, with its JSON path) or
// Inconclusive (a bound was hit first; the message names it). The zero
// Verdict is none of them, so a gate that compares with Safe fails closed.
// [Result.Report] renders a result with task names instead of indices:
// exactly the JSON object `megaproof verify --json` prints.
//
// # Configuration
//
// The zero [Config] checks everything with default bounds. MaxStates
// bounds the explicit-state explorer that decides the programs the exact
// confluent analyses cannot take (semaphores outside the fragments below,
// some dispatch); beyond it the verdict is Inconclusive.
//
// # Semaphores
//
// A semaphore whose acquires all lie in one thread (rings, credits, an
// allocator) is decided exactly as a counter of released tokens: the
// thread's i-th acquire waits until the releases cover the tokens acquired
// up to it, minus the initial tokens. A balanced pool (several threads
// each acquire n and release n, never blocking in between) is dropped when
// the rest of the program is then safe, which proves the original safe.
// Everything else, and any finding after a pool was dropped, goes to the
// explorer. Which fragment each method decides, and why it is exact, is in
// docs/SEMANTICS.md ("How semaphore programs are decided"). Sanity checks internal invariants and
// replays every witness before returning; tests turn it on.
//
// The analyses are declared as [Check] values — [Static], [Progress],
// [Races], [Uninitialized] — each with its name, documentation, the codes
// it reports and the checks it requires; [Checks] lists them in the order
// Run performs them. [Config.Checks] selects some of them (with what they
// require) and reports only their codes.
//
// # Witnesses
//
// Every witness leaving Run is accepted by schedule.CheckWitness and is
// minimised: the causal cone of the finding's own events, or a trace none
// of whose threads' last events can be left out, within a budget. One
// still longer than 24 events is replaced, where the judge accepts one
// that is shorter, by a compact witness of holds and advances
// (schedule.Hold, schedule.Advance), which schedule.Replay expands into
// the steps they stand for: [advance] for a deadlock or an overflow, two
// holds after the racing bodies begin and an advance for a race. On the
// 5,805-task Llama schedule a race in the last layer is three events
// instead of some 19,000 steps. docs/SEMANTICS.md ("Witnesses", "Compact
// witnesses") lists the candidates; [ReportEvent] annotates the macros.
//
// # Concurrency
//
// Run and Program only read the program and keep no reference to it: any
// number of goroutines may verify one Program at once, as long as none
// modifies it meanwhile. Results share no memory with the program.
//
// # Semantics
//
// The definitions decided here are in docs/SEMANTICS.md of the module:
// normal form (one thread per static worker, one per dynamic task),
// residency for non-cooperative launches, dispatch of dynamic tasks,
// happens-before with release/acquire, fences, scopes and release
// sequences, and the exact meaning of every finding. How each engine
// decides it, and in which file it lives, is in docs/ARCHITECTURE.md.
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
// # Assurance
//
// Exactness is checked against two oracles that share no algorithm with
// this package: the definitional checker (internal/defcheck, one naive
// withhold-run per conflicting pair) and the explorer (package
// verify/explore, every interleaving of small programs). Property tests
// require the three to agree on every verdict and finding family, and
// every witness to replay in schedule.Replay; docs/ARCHITECTURE.md
// describes the tiers.
package verify
