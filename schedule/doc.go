// Package schedule models megakernel schedules: one persistent launch whose
// workers (thread blocks) execute tasks that coordinate through monotone
// counters, barriers and semaphores in global memory.
//
// # The model
//
// A [Program] holds the [Launch] (target GPU, SMs, co-resident workers per
// SM, workers launched, cooperative or not), [Buffer]s of five kinds
// (input, weight, output, scratch, state), optional [Arena]s in which
// buffers alias, [Counter]s, [Barrier]s, [Semaphore]s and [Task]s. A task
// has synchronization [Step]s before its body (wait, barrier sync,
// semaphore acquire, fence), the body's reads and writes as byte
// [Access]es (1-D ranges or 2-D strided tiles), and steps after it
// (signal, release, barrier arrive, fence). Waits and signals carry an
// order (acquire/release by default, or relaxed) and a scope (cta, gpu,
// sys). A task pinned to a worker runs in that worker's static queue in
// task-list order; an unpinned task is dynamic and runs once it is ready.
//
// Cross references are dense int32 indices; the JSON form (format
// "megaproof/v1") uses names. [Builder] assembles programs for code
// generators.
//
// # JSON
//
// [Marshal] writes a canonical encoding that round-trips byte for byte.
// [Unmarshal] and [Decode] are strict: malformed syntax, invalid UTF-8, a
// byte order mark or a UTF-16 encoding (named as such), unknown fields,
// wrong types, dangling or duplicate names, zero or overflowing sizes,
// zero-length accesses, zero thresholds and out-of-range workers all yield
// an *[Error] whose [Diagnostic]s carry an invalid.* code and the JSON path;
// a document's problems are reported together. As in JSON Schema, an
// integer may be written with a zero fraction or an exponent (512.0, 5.12e2).
//
// The readers build the program in one pass over the input, without a tree
// of the document: [Decode] and [DecodeLimit] stream from an io.Reader and
// hold little more than the program. [DecodeLimit] reads at most a given
// number of bytes and reports more as invalid.limit; [Decode] allows
// [DefaultMaxInput] (1 GiB). [Unmarshal] reads bytes already in memory and
// applies no limit.
//
// # Semantics and Replay
//
// [Lower] turns a program into normal form: each static worker is one
// thread of operations (its tasks' steps concatenated in queue order, each
// body a Begin/End pair, each barrier sync an Arrive then an Await of
// generation × parties arrivals) and each dynamic task is its own thread.
// Without a cooperative launch at most SMs × per-SM workers are resident;
// the others start in index order as resident ones finish.
//
// [Replay] executes a trace of [Event]s from the initial state, refusing
// any event that is not enabled, and returns the [State] reached: thread
// positions, sync-object values, completed and in-flight bodies, and a
// happens-before relation over the executed events. It is the independent
// judge of every witness the verifier produces and shares no code with it.
//
// # Compact witnesses
//
// Besides ordinary steps a trace may hold two macro events, which Replay
// expands into steps deterministically: [Hold] keeps a thread before a
// given step until the next [Advance], and an advance runs every thread
// greedily (the lowest-numbered thread that can move runs until it
// cannot, again and again) until none can move. Under static queues a
// race in the last layer of a large schedule needs thousands of steps but
// three events: hold both racing threads after their bodies begin, then
// advance. [Machine.Advance] costs the steps it executes, never the values
// in the program. docs/SEMANTICS.md, "Compact witnesses", defines them.
package schedule
