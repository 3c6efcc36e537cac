// Command megaproof proves GPU megakernel schedules free of deadlocks and
// data races before they are launched.
//
// Usage:
//
//	megaproof verify [--json] [FILE...]
//	megaproof explain [CODE]
//	megaproof dot FILE
//	megaproof schema [result|program]
//	megaproof corpus [--json] [--every N] [--quiet]
//
// # verify
//
// verify reads each FILE, megaproof JSON (format "megaproof/v1") or
// AutoMegaKernel IR JSON (told apart by content), and prints its verdict:
// safe, unsafe (with findings and replayable witnesses), invalid (with the
// JSON path of each problem) or inconclusive (with the bound that was hit).
// With no FILE it verifies an embedded default schedule, a Llama-family
// decode megakernel, so a newcomer sees the tool work at once.
//
// With --json it prints one JSON object per file:
//
//	{"file": "...", "format": "megaproof/v1", "verdict": "unsafe",
//	 "findings": [{"code": "race.raw", "message": "...", "tasks": ["a", "b"],
//	               "witness": [{"thread": 0, "step": 2}, ...]}],
//	 "stats": {...}}
//
// Task names, not indices, identify tasks. `megaproof schema` prints the JSON
// Schema of these objects.
//
// # Exit status
//
// 0 when every file is safe, 1 when some file is unsafe, 2 for invalid input
// or bad usage, 3 when some file is inconclusive and none is unsafe. Invalid
// input takes precedence over everything but unsafe: a batch with an unsafe
// file exits 1.
//
// # Other commands
//
// explain prints the documentation of a finding code (all codes without an
// argument). dot prints the task graph in Graphviz form: tasks are nodes,
// edges run from signalling tasks to the tasks that wait on their counter
// (and through barriers and semaphores), and each worker's static queue is
// a cluster. schema prints the JSON Schema of verify's --json output, or of
// the megaproof/v1 program format.
//
// # corpus
//
// corpus runs the regression corpus (package corpus): it rebuilds every
// mutant from its recipe, verifies it, and compares the verdict and the
// finding families with the oracles' labels. It shows a progress bar on
// stderr (--quiet hides it), then prints the confusion matrix (oracle
// unsafe/safe × verify unsafe/safe), per-class recall and every failing
// entry. --every N checks every N-th entry only. With --json it prints one
// object with entries, faulty, safe, malformed, true_positives,
// true_negatives, false_accepts, false_rejects, family_mismatches,
// inconclusive, drift, errors, classes (per operator: faulty, safe,
// malformed, detected, recall) and failures. It exits 1 when some entry is
// a false accept or a false reject, 0 otherwise.
package main
