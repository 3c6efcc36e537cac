// Command megaproof proves GPU megakernel schedules free of deadlocks and
// data races before they are launched.
//
// Install it with
//
//	go install github.com/megaproof/megaproof/cmd/megaproof@latest
//
// Usage:
//
//	megaproof verify [--json | --format text|json|sarif] [--stream] [-v] [--max-states N] [--max-bytes SIZE] [--iterations K] [FILE...]
//	megaproof replay [--finding N] [--json] [--expand] [--iterations K] [--max-states N] [--max-bytes SIZE] FILE
//	megaproof explain [CODE]
//	megaproof report [-o FILE] [--max-states N] [--max-bytes SIZE] [FILE]
//	megaproof dot [--focus TASK|finding:N] [--radius N] [--worker N] [--layer N] [--max-bytes SIZE] [FILE]
//	megaproof schema [result|program|amk]
//	megaproof corpus [--json] [--every N] [--quiet]
//	megaproof version
//
// megaproof COMMAND -h describes a command and every flag it has;
// megaproof --version prints the module version, VCS revision and Go
// version the binary was built from.
//
// # verify
//
// verify reads each FILE, megaproof JSON (format "megaproof/v1"),
// AutoMegaKernel IR JSON or a Mirage MPK task graph (told apart by content;
// "-" is standard input; --iterations sets how many consecutive iterations
// of an MPK graph are verified, 1 to 65,536, default 2),
// and prints its verdict as soon as it is decided: safe, unsafe (with
// findings and replayable witnesses), invalid (with the JSON path of each
// problem) or inconclusive (with the bound that was hit). A safe verdict
// says what was proved: no deadlock, race, uninitialized read or
// out-of-bounds access is possible; -v adds what the analysis covered
// (tasks, threads, steps, accesses, conflicting pairs, engine). Several
// files are decided in parallel, one per core (GOMAXPROCS), and printed
// in the order given, each as soon as it and those before it are decided;
// with "-" among them, one at a time. With no
// FILE it verifies an embedded default schedule, a Llama-family decode
// megakernel, so a newcomer sees the tool work at once.
//
// Names from the input are printed Go-quoted ("up.0"), and every other
// text from it with control and bidi characters escaped, so no name can
// break a line or pose as another verdict.
//
// With --json it prints one JSON object per file, one per line:
//
//	{"file": "...", "format": "megaproof/v1", "verdict": "unsafe",
//	 "findings": [{"code": "race.raw", "message": "...", "tasks": ["a", "b"],
//	               "witness": [{"thread": 0, "step": 2}, ...], "witness_length": 5}],
//	 "stats": {...}}
//
// Task names, not indices, identify tasks; the objects are
// verify.Report values, and `megaproof schema result` prints their JSON
// Schema. --stream turns verify into a long-lived filter for generators and
// agent loops: it reads one document per line of standard input and writes
// one such object per line ("file" is "-:N" for line N), each flushed as
// soon as it is decided, until standard input ends. The Python package in
// python/ of the module speaks this protocol.
//
// --format sarif prints one SARIF 2.1.0 log (OASIS) for all the files of
// the invocation, for code scanning tools and editors: one run whose rules
// are the finding codes of megaproof explain, one artifact per file with
// its verdict, and one result per finding. A result's region is where the
// finding's JSON path lies in the file (line and column in code points,
// and the byte range); the tasks are logical locations, the other tasks
// and steps related locations, the witness a code flow with one thread
// flow per thread (the events that matter essential, each sync object's
// value after an event in its state), and a fix given as a JSON Patch is
// a SARIF fix of byte replacements when every operation maps to one (the
// patch is in the result's properties in any case).
//
// A file that cannot be read gets an invalid.io record; a document larger
// than --max-bytes (1 GiB by default) an invalid.limit record, without
// reading more of it than needed. --max-states bounds the explicit-state
// explorer that decides programs with semaphores; beyond it the verdict is
// inconclusive. If megaproof fails internally on a file (a panic), that
// file gets a record with code "internal" and verdict inconclusive, the
// panic and its stack go to stderr, exit status 4 is reported and the
// remaining files are still verified.
//
// Each finding also carries its locations: the JSON paths, in the input's
// own format, of the tasks and steps involved ("$.tasks[12]",
// "$.tasks[12].before[0]"; AMK "$.tasks[3].waits[0]"), each with its task
// and role (writer, reader, stuck, signal, wait, ...). Witness events are
// annotated: thread_name ("worker 3"), task, op, the sync object the step
// touches and its value right after the event in a replay, marked for
// the events that matter, and the step's path. Witnesses are minimised
// (the causal cone of a race's bodies, of an uninitialized read or of an
// overflowing signal; otherwise no thread's last event can be left out).
// A witness still longer than 24 events is compact where the judge
// accepts one: holds ({"hold":T,"at":P}, a thread kept before step P) and
// advances ({"advance":true}, every thread run greedily until none can
// move), with the steps an advance runs per thread ("spans") and those
// that matter among them ("marks"); see docs/SEMANTICS.md, "Compact
// witnesses". A finding with the empty witness (a state stuck from the start) has
// "witness": [] and "witness_length": 0; a static finding has neither key.
// The text output prints the witness, marked events starred, and for a
// long one only the marked events with the one before each.
//
// # replay
//
// replay FILE verifies FILE as verify does and replays one finding's
// witness step by step (--finding N, from 1; by default the first finding
// with a witness): every event with its thread, task, operation, the
// value of its sync object after it and its JSON path, marked events
// starred; then where the threads stand (every unfinished thread for a
// deadlock), and whether schedule.CheckWitness confirms the witness. An
// advance is printed with the steps that matter among those it runs;
// --expand prints every step it runs ("expanded" in JSON). --iterations
// unrolls an MPK task graph as verify does.
// --json prints one object: the finding as verify --json has it, its
// index, "confirmed" and, when not, "error". Exit status: 0 confirmed (a
// static finding by its code alone), 1 not confirmed, 2 invalid input or
// usage (no such finding; a safe file has none), 3 an inconclusive
// finding.
//
// # Exit status
//
// 0 when every file is safe, 1 when some file is unsafe, 2 for invalid or
// unreadable input or bad usage, 3 when some file is inconclusive, 4 when
// megaproof failed internally on some file. Across files the worst status
// wins, in the order unsafe, internal error, invalid, inconclusive, safe:
// a batch with an unsafe file exits 1.
//
// # Other commands
//
// explain prints the documentation of a finding code (all codes without an
// argument). dot prints the task graph in Graphviz form (the embedded
// default schedule without FILE): tasks are nodes, edges run from
// signalling tasks to the tasks that wait on their counter (and through
// barriers and semaphores), dotted edges give each worker's queue order,
// and the findings of verify are drawn: a racing pair joined by a red
// edge, the tasks of other findings outlined in red. For schedules of
// thousands of tasks, --focus TASK or --focus finding:N draws the
// neighbourhood of a task or of a finding's tasks (--radius sync edges
// around them, 1 by default), --worker N a worker's queue and --layer N a
// layer (the tasks' "layer" parameter, else their happens-before depth);
// selectors given together intersect. schema prints the JSON Schema of verify's --json output, of
// the megaproof/v1 program format, or of the AutoMegaKernel IR JSON that
// verify reads.
//
// # report
//
// report verifies one schedule (the embedded default without FILE) and
// writes an HTML report to -o FILE (standard output by default): one
// self-contained page, with inline CSS, script and SVG and nothing loaded
// from the network, that shows the verdict, each finding with its
// locations and its fix (in words, and as a JSON Patch where the finding
// has one), a swimlane of the selected finding's witness (one lane per
// thread with events in the window, events in trace order, the events
// that matter highlighted in red, each event's operation and the sync
// object's value after it on hover and in a table) and the sync objects
// the witness touches with their initial values and their values after
// it. A finding without a trace highlights the tasks it names. The page
// draws a window of 120 events at a time, so the report of a schedule of
// thousands of tasks with a witness of thousands of events opens at once.
// Its exit status is verify's.
//
// # corpus
//
// corpus runs the regression corpus (package corpus): it rebuilds every
// mutant from its recipe, verifies it, and compares the verdict and the
// finding families with the oracles' labels. When stderr is a terminal it
// shows a progress bar with the time left (--quiet hides it), then prints
// the confusion matrix (oracle unsafe/safe × verify unsafe/safe), per-class
// recall and every failing entry. --every N checks every N-th entry only.
// With --json it prints one object with entries, faulty, safe, malformed,
// true_positives, true_negatives, false_accepts, false_rejects,
// family_mismatches, inconclusive, drift, errors, classes (per operator:
// faulty, safe, malformed, detected, recall) and failures. It exits 0 when
// every entry agrees with its label, 1 when verify disagrees with an
// oracle (a false accept or reject, a family mismatch, an inconclusive
// verdict), and 2 for bad usage or when entries drifted or failed to run.
package main
