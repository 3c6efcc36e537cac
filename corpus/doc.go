// Package corpus is megaproof's regression corpus: seeds, mutation recipes
// and one golden expectations file, run by `go test ./corpus` and by
// `megaproof corpus`.
//
// # Seeds
//
// A [Seed] is a recipe, not a stored program: a generator name and its
// parameters ("llama:layers=1,hidden=64,...", "proto:kind=ring,slots=2,...",
// "progen:size=small,seed=17"), rebuilt by [Build]. Seeds are small
// Llama-family lowerings of package llamagen with toy shapes (every
// strategy, tile sizes, split-KV, epoch counters, page reuse, batching,
// cooperative and non-cooperative launches, grids beyond capacity), real
// Llama-family lowerings of thousands of tasks, hand-written protocols
// (a semaphore ring buffer, barrier phases, counter handoffs with and
// without the fence idiom, split-K reductions under locks), programs
// drawn from internal/progen with fixed seeds (stored in [ProgenFile], so
// that the package does not link the generator), and a few hand-written
// JSON programs in testdata/seeds.
//
// # Entries
//
// An [Entry] is a mutation recipe (seed, mutate operator, site, mutation
// seed) with its label: the oracle that decided it (verify/explore when
// its exploration completes within its budget, else internal/defcheck;
// never verify), the verdict (unsafe, safe — a safe control — or
// malformed when the operator's result fails validation), the sorted
// finding families, and a content hash of the mutant's canonical JSON
// that catches drift in seeds or operators. The entries live in
// testdata/expectations.tsv, written by `go generate ./corpus` (the
// program in internal/gen) and embedded in the package ([Entries]).
//
// # Checking
//
// [Check] rebuilds one entry's mutant, compares its hash, runs verify and
// classifies the outcome: ok, false accept (oracle unsafe, verify safe),
// false reject (oracle safe, verify unsafe), family mismatch, inconclusive,
// drift or error. [Run] checks every entry in parallel and returns a
// [Summary]: the confusion matrix and per-class counts with recall.
package corpus
