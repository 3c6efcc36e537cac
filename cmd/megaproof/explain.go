package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify"
)

// codeDoc documents one finding code: what it means, a minimal example, and
// the usual fix.
type codeDoc struct {
	code    string
	summary string
	example string
	fix     string
}

// codeDocs lists every stable finding code, invalid.* first, then the
// verifier's, then the two the command adds. Codes are append-only.
var codeDocs = []codeDoc{
	{schedule.CodeSyntax, "The input is not JSON, or has data after the JSON value.",
		`{"format":"megaproof/v1",` + " (truncated)", "Emit one complete JSON object per file."},
	{schedule.CodeFormat, `"format" is missing or is not "megaproof/v1" (and the input is not AutoMegaKernel IR).`,
		`{"format":"megaproof/v2", ...}`, `Write "format": "megaproof/v1".`},
	{schedule.CodeUnknownField, "A field the format does not define, or one that does not apply to this kind of step.",
		`{"sync":"grid","order":"relaxed"}: barrier steps have no memory order`, "Remove the field or fix its spelling."},
	{schedule.CodeType, "A value of the wrong JSON type.",
		`"sms": "132" (a string where a number belongs)`, "Use the type the schema gives (megaproof schema program)."},
	{schedule.CodeMissing, "A required field is absent.",
		`{"wait":"ready"} without "ge"`, "Add the field."},
	{schedule.CodeDuplicate, "A name declared twice in one list, or a JSON key repeated in one object.",
		`two buffers named "x"`, "Give every buffer, counter, barrier, semaphore, arena and task a unique name."},
	{schedule.CodeReference, "A name that nothing declares (references are by name, never by position).",
		`{"wait":"redy","ge":1} with only counter "ready" declared`, "Declare the object or fix the name."},
	{schedule.CodeName, "An empty name.",
		`{"name":""}`, "Name it."},
	{schedule.CodeSize, "A size, offset or amount that is zero where it must not be, negative, or beyond 2^62 bytes.",
		`{"name":"x","kind":"scratch","size":0}`, "Use the real byte size."},
	{schedule.CodeEmptyAccess, "A read or write of zero bytes.",
		`{"buffer":"x","length":0}`, "Drop the access or give its length."},
	{schedule.CodeThreshold, "A wait threshold of 0 (it never waits) or beyond the counter's width.",
		`{"wait":"ready","ge":0}`, "Wait for the number of increments the consumer needs."},
	{schedule.CodeWorker, "A task pinned to a worker the launch does not have.",
		`"worker": 132 in a launch of 132 workers (0..131)`, "Pin to 0..workers-1 or launch more workers."},
	{schedule.CodeValue, "An enumerated value or amount that is not allowed: scope, order, kind, width, step kind.",
		`{"wait":"ready","ge":1,"scope":"warp"}`, "Use one of the documented values."},
	{schedule.CodeLaunch, "An impossible launch: no SMs, no workers, or no blocks per SM.",
		`"launch": {"sms":0,"workers":1}`, "Describe the real target and grid."},
	{schedule.CodeLimit, "More than megaproof accepts: a document larger than the input limit (verify --max-bytes, 1 GiB by default), or more workers, tasks, steps per task or objects than the format allows.",
		`a task with 5000 before-steps`, "Split the task or the schedule, or raise --max-bytes."},
	{verify.CodeDeadlockUnsatisfiable, "A wait's threshold exceeds the counter's initial value plus every signal any task makes: it can never pass.",
		`consumer waits ready >= 4; only three tiles signal ready`, "Lower the threshold to the number of producers, or add the missing signals."},
	{verify.CodeDeadlockCycle, "Threads wait on each other in a cycle, each for a signal the other sends only after its own wait.",
		`worker 0: wait b >= 1, signal a; worker 1: wait a >= 1, signal b`, "Reorder the queues so a producer's signal precedes its own waits."},
	{verify.CodeDeadlockBarrier, "A thread waits at a barrier whose generation never fills: fewer parties arrive than it counts.",
		`barrier grid with 3 parties, only 2 workers sync`, "Set parties to the number of participants, or make every participant sync."},
	{verify.CodeDeadlockSemaphore, "A thread waits to acquire semaphore tokens that are never released (or released too late).",
		`slots has 1 token; task A acquires 1 and waits for B, B acquires 1`, "Release before waiting on others, or provide more tokens."},
	{verify.CodeOccupancy, "More workers than can be co-resident: a cooperative launch fails, or a non-cooperative one can deadlock when a waiter holds the slot its producer needs.",
		`132 SMs × 1 block, 133 workers, worker 0 waits for worker 132`, "Launch at most SMs × blocks_per_sm workers, or order queues so waiters never block producers."},
	{verify.CodeRaceRAW, "A read and an earlier task's write of the same bytes are not ordered by happens-before.",
		`producer writes h, consumer reads h with no wait on the producer's counter`, "Make the reader wait for the writer's signal."},
	{verify.CodeRaceWAR, "A write and an earlier task's read of the same bytes are not ordered: the write may clobber data still being read (page reuse).",
		`attention reads page 3 while kv_append of the next layer reuses it`, "Make the writer wait until the reader signals it is done."},
	{verify.CodeRaceWAW, "Two writes of the same bytes are not ordered.",
		`two GEMV tiles with overlapping column ranges`, "Make the tiles disjoint, or order them."},
	{verify.CodeRaceUnsynchronized, "One access must execute before the other, but happens-before is missing: a relaxed signal or wait, or a cta scope across workers.",
		`{"signal":"ready","order":"relaxed"} followed by an acquire wait on another worker`, "Use release/acquire (the defaults), add a gpu fence, or widen the scope; adding a wait does not help."},
	{verify.CodeRaceScope, "Two threads operate on one counter or semaphore, at least one modifying it and one cta-scoped, and neither happens before the other: a cta-scoped atomic is not atomic across blocks.",
		`worker 0: {"signal":"c","scope":"cta"}; worker 1: {"signal":"c"} with no order between them`, "Use gpu scope (the default) for sync objects shared across workers, or keep them within one worker."},
	{verify.CodeUninitializedRead, "A read of scratch or output bytes that no write to that same buffer happens before.",
		`consumer reads h[512:1024) but producers write only h[0:512)`, "Write the bytes first and wait for that write, or read only what is written."},
	{verify.CodeOutOfBounds, "An access with a byte outside its buffer (negative offsets included).",
		`{"buffer":"x","offset":960,"length":128} on a 1024-byte buffer`, "Fix the tile's offset or length."},
	{verify.CodeReadonlyWrite, "A write to an input or weight buffer.",
		`{"writes":[{"buffer":"w1","length":64}]} where w1 is a weight`, "Write a scratch, output or state buffer instead."},
	{verify.CodeOutputUnwritten, "Bytes of an output buffer that no task writes.",
		`output y of 1024 bytes; tiles write y[0:512) only`, "Add the missing tiles or shrink the buffer."},
	{verify.CodeCounterOverflow, "A counter can exceed its width (2^32-1 by default).",
		`init 4294967295, one signal`, "Use width 64 or reset counters between steps."},
	{verify.CodeInconclusive, "A bound was hit before a decision (e.g. the explorer's state budget on programs with semaphores); the message says which.",
		`a semaphore protocol with more states than the budget`, "Raise the bound (verify --max-states), or express the protocol with monotone counters so it is decided exactly."},
	{codeIO, "The file could not be read (it does not exist, is a directory, or reading failed); the message is the system's.",
		`megaproof verify missing.json`, "Check the path and its permissions."},
	{codeInternal, "megaproof failed internally on this input (a panic it recovered); the verdict is inconclusive, the exit status 4, and the other files are still verified. The stack trace is on stderr.",
		`(none is known: each one is a bug)`, "Report it with the input and the stack trace; meanwhile treat the schedule as unverified."},
}

func lookupCode(code string) (codeDoc, bool) {
	for _, d := range codeDocs {
		if d.code == code {
			return d, true
		}
	}
	return codeDoc{}, false
}

func runExplain(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("explain", "[CODE]", "Prints what a finding code means, a minimal example and the usual fix. Without CODE it lists every code with its summary.", stderr)
	args, status, done := parseFlags(fs, args, 0, 1)
	if done {
		return status
	}
	if len(args) == 0 {
		for _, d := range codeDocs {
			fmt.Fprintf(stdout, "%-24s %s\n", d.code, d.summary)
		}
		return exitSafe
	}
	d, ok := lookupCode(args[0])
	if !ok {
		var near []string
		for _, c := range codeDocs {
			if strings.HasPrefix(c.code, args[0]) {
				near = append(near, c.code)
			}
		}
		fmt.Fprintf(stderr, "megaproof explain: unknown code %q", args[0])
		if len(near) > 0 {
			fmt.Fprintf(stderr, "; did you mean %s?", strings.Join(near, ", "))
		}
		fmt.Fprintln(stderr, " (megaproof explain lists every code)")
		return exitInvalid
	}
	fmt.Fprintf(stdout, "%s\n\n%s\n\nExample: %s\n\nFix: %s\n", d.code, d.summary, d.example, d.fix)
	return exitSafe
}
