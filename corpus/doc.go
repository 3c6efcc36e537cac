// Package corpus is megaproof's regression corpus: seeds, mutation recipes
// and one golden expectations file, run by `go test ./corpus` and by
// `megaproof corpus`, and the means to build and run a corpus of one's
// own.
//
// # Seeds
//
// A [Seed] is a recipe, not a stored program: a generator name and its
// parameters ("llama:layers=1,hidden=64,...", "proto:kind=ring,slots=2,...",
// "progen:size=small,seed=17"), rebuilt by [Build]. Seeds are small
// Llama-family lowerings of package llamagen with toy shapes (every
// strategy, tile sizes, split-KV, epoch counters, page reuse, batching,
// cooperative and non-cooperative launches that fit), lowerings and
// protocol chains of 1,000 to 1,400 tasks on 2 to 8 workers, real
// Llama-family lowerings of thousands of tasks, one of 89,803 tasks
// (llama-2-13b shapes), hand-written protocols (a semaphore ring buffer,
// barrier phases, counter handoffs with and without the fence idiom,
// split-K reductions under locks, two barrier groups of different
// parties), programs drawn from internal/progen with fixed seeds (stored
// in [ProgenFile], so that the package does not link the generator), and
// a few hand-written JSON programs in testdata/seeds.
//
// Every seed is safe: its own entry (operator [SeedOperator]) is labelled
// by every oracle that applies, which must agree; a seed that some oracle
// finds unsafe is reported by `go generate ./corpus` and its mutants are
// left out, and so are the mutants of a seed no oracle decides (it stays
// [VerdictUndecided]). From [LabelConfig]'s DefcheckAtScale tasks on
// (2,000) the definitional checker runs at scale
// (internal/defcheck.CodesAtScale): it labels the real lowerings of
// thousands of tasks and the 89,803-task one, and their mutants.
//
// # Entries
//
// An [Entry] is a mutation recipe (seed, mutate operator, site, mutation
// seed) with its label: the oracles that decided it and agreed
// (verify/explore, the definitional checker, the brute-force oracle; never
// verify), the verdict (unsafe, safe — a safe control — or malformed when
// the operator's result fails validation), the sorted finding codes, the
// mutated tasks when the operator locates its codes, the mutant's number
// of tasks, and a content hash of its canonical JSON that catches drift in
// seeds or operators. The entries live in testdata/expectations.tsv,
// written by `go generate ./corpus` (the program in internal/gen, which
// calls [Generate]) and embedded in the package ([Entries]).
//
// # Checking
//
// [Check] rebuilds one entry's mutant, compares its hash, runs verify,
// replays every witness through schedule.CheckWitness and classifies the
// outcome: ok, false accept (oracle unsafe, verify safe), false reject
// (oracle safe, verify unsafe), family mismatch, code mismatch (see
// [CodesMatch]), location mismatch, witness rejected, disputed (the
// oracles disagreed), inconclusive, drift or error. [Run] checks every
// entry in parallel and returns a [Summary]: the confusion matrix and
// counts per class and per seed family.
//
// # Incremental generation
//
// `go generate ./corpus` remembers every label in a cache file keyed by
// the mutant's content hash (which every entry records) and by the
// labeller, a version that names the oracles' behaviour and budgets
// (internal/gen). A label is reused only under the labeller that computed
// it, or under an earlier one for the program sizes at which the
// labellers run the same code with the same budgets (v2 labels below
// 2,000 tasks under v3, which changed only the checker's path from 2,000
// tasks on). The sampling of recipes does not read the cache, and the
// oracles are deterministic, bounded by work and never by time, so a
// cached label is the label a fresh run computes and the file written is
// the one a full regeneration without a cache writes. TestRegenerateSample
// checks this on a sample: it regenerates the entries of a few seeds from
// scratch ([GenerateConfig]'s Only keeps each seed's place, on which its
// sites depend) and requires exactly the file's lines for them.
//
// # Locations
//
// An operator declares in mutate.Operator.Locates the codes whose
// findings it can only raise on the tasks it changes, given a seed
// without findings; mutate.Changed names those tasks (the tasks of the
// mutant that differ from the seed's task of the same index). "Names the
// mutated task" means: every finding of a located code that verify
// reports lists one of the entry's Tasks among its own tasks. Today the
// footprint operators (shift-tile, widen-oob, kv-beyond-cache,
// write-readonly) locate race.raw, race.war, race.waw,
// race.unsynchronized, out-of-bounds and readonly-write on the task whose
// access they change, and raise-threshold locates deadlock.unsatisfiable
// on the task whose wait it raises. [Generate] also holds the explorer's
// own findings to the declaration and reports any that break it.
//
// # A corpus of one's own
//
// [Generate] builds and labels a corpus from any seeds: recipes of the
// generators above, "file:PATH" for a program file, or a
// *schedule.Program given to [RegisterProgram]. [LabelProgram] labels one
// program with the oracles. [CheckWith] and [RunWith] run entries against
// any [Checker] (a function with verify.Run's shape); [Check] and [Run]
// use verify.
package corpus
