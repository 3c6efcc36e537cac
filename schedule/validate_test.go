package schedule_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/schedule"
)

// doc assembles a megaproof/v1 document from its launch, extra top-level
// declarations (each ending in a comma) and task list, over a fixed set of
// declarations: buffer x (scratch, 64 bytes), counter c, barrier g (2
// parties) and semaphore s (1 token).
func doc(launch, decls, tasks string) string {
	if launch == "" {
		launch = `{"sms":2,"workers":2}`
	}
	if tasks == "" {
		tasks = `[{"name":"t"}]`
	}
	if decls == "" {
		decls = `"buffers":[{"name":"x","kind":"scratch","size":64}],`
	}
	return `{"format":"megaproof/v1","launch":` + launch + `,` + decls +
		`"counters":[{"name":"c"}],"barriers":[{"name":"g","parties":2}],"semaphores":[{"name":"s","tokens":1}],` +
		`"tasks":` + tasks + `}`
}

// task wraps one task's JSON fields (without braces) into a task list.
func task(fields string) string { return `[{"name":"t",` + fields + `}]` }

// manyFences is a task with more steps than MaxStepsPerTask.
func manyFences() string {
	return task(`"before":[` + strings.Repeat(`{"fence":"gpu"},`, schedule.MaxStepsPerTask) + `{"fence":"gpu"}]`)
}

func TestDecodeInvalid(t *testing.T) {
	tests := []struct {
		name   string
		input  string
		code   string
		path   string
		reason string
	}{
		// invalid.syntax
		{"not-json", `hello`, schedule.CodeSyntax, "$", "a bare word is not JSON"},
		{"empty", ``, schedule.CodeSyntax, "$", "no value at all"},
		{"truncated", `{"format":"megaproof/v1",`, schedule.CodeSyntax, "$", "input ends inside the top object"},
		{"double-comma", `{"format":"megaproof/v1","launch":{"sms":1,,"workers":1}}`, schedule.CodeSyntax, "$.launch", "the error is located at the object that holds it"},
		{"trailing-data", doc("", "", "") + ` {}`, schedule.CodeSyntax, "$", "a second value after the document"},
		{"trailing-garbage", doc("", "", "") + `x`, schedule.CodeSyntax, "$", "garbage after the document"},
		{"too-deep", strings.Repeat("[", 100) + strings.Repeat("]", 100), schedule.CodeSyntax, "$" + strings.Repeat("[0]", 65), "nesting is bounded so decoding cannot exhaust the stack"},

		// invalid.format
		{"wrong-format", strings.Replace(doc("", "", ""), "megaproof/v1", "megaproof/v2", 1), schedule.CodeFormat, "$.format", "a future version is refused, not guessed at"},
		{"no-format", `{"launch":{"sms":1,"workers":1}}`, schedule.CodeFormat, "$.format", "the version tag is what makes a document megaproof JSON"},
		{"amk-like", `{"format":"amk","launch":{"sms":1,"workers":1}}`, schedule.CodeFormat, "$.format", "another tool's tag"},

		// invalid.unknown-field
		{"unknown-top", strings.Replace(doc("", "", ""), `"launch"`, `"grid":1,"launch"`, 1), schedule.CodeUnknownField, "$.grid", "top-level typo"},
		{"unknown-launch", doc(`{"sms":1,"workers":1,"blocks":2}`, "", ""), schedule.CodeUnknownField, "$.launch.blocks", "blocks is not blocks_per_sm"},
		{"unknown-task", doc("", "", task(`"deps":["u"]`)), schedule.CodeUnknownField, "$.tasks[0].deps", "dependencies are waits, not a field"},
		{"unknown-step", doc("", "", task(`"before":[{"wait":"c","ge":1,"timeout":5}]`)), schedule.CodeUnknownField, "$.tasks[0].before[0].timeout", "unknown key in a step"},
		{"relaxed-barrier", doc("", "", task(`"before":[{"sync":"g","order":"relaxed"}]`)), schedule.CodeUnknownField, "$.tasks[0].before[0].order", "a barrier step has no memory order"},
		{"scope-on-fence", doc("", "", task(`"after":[{"fence":"gpu","scope":"sys"}]`)), schedule.CodeUnknownField, "$.tasks[0].after[0].scope", "a fence's scope is its value"},
		{"ge-on-signal", doc("", "", task(`"after":[{"signal":"c","ge":1}]`)), schedule.CodeUnknownField, "$.tasks[0].after[0].ge", "a signal has an amount, not a threshold"},
		{"unknown-access", doc("", "", task(`"reads":[{"buffer":"x","length":1,"dtype":"f16"}]`)), schedule.CodeUnknownField, "$.tasks[0].reads[0].dtype", "accesses are bytes"},

		// invalid.type
		{"top-array", `[]`, schedule.CodeType, "$", "the document is an object"},
		{"sms-string", doc(`{"sms":"2","workers":2}`, "", ""), schedule.CodeType, "$.launch.sms", "numbers are not quoted"},
		{"cooperative-number", doc(`{"sms":2,"workers":2,"cooperative":1}`, "", ""), schedule.CodeType, "$.launch.cooperative", "booleans are true/false"},
		{"name-number", doc("", "", `[{"name":7}]`), schedule.CodeType, "$.tasks[0].name", "names are strings"},
		{"tasks-object", doc("", "", `{"t":{}}`), schedule.CodeType, "$.tasks", "tasks are a list"},
		{"params-array", doc("", "", task(`"params":[1]`)), schedule.CodeType, "$.tasks[0].params", "params are an object"},
		{"fraction", doc("", `"buffers":[{"name":"x","kind":"scratch","size":1.5}],`, ""), schedule.CodeType, "$.buffers[0].size", "sizes are integers"},
		{"null-launch", `{"format":"megaproof/v1","launch":null}`, schedule.CodeType, "$.launch", "null is not an object"},
		{"format-number", `{"format":1,"launch":{"sms":1,"workers":1}}`, schedule.CodeType, "$.format", "the tag is a string"},

		// invalid.missing
		{"no-launch", `{"format":"megaproof/v1"}`, schedule.CodeMissing, "$.launch", "the launch is required"},
		{"no-workers", doc(`{"sms":2}`, "", ""), schedule.CodeMissing, "$.launch.workers", "workers has no default"},
		{"no-kind", doc("", `"buffers":[{"name":"x","size":64}],`, ""), schedule.CodeMissing, "$.buffers[0].kind", "a buffer's kind decides its initialization"},
		{"no-ge", doc("", "", task(`"before":[{"wait":"c"}]`)), schedule.CodeMissing, "$.tasks[0].before[0].ge", "a wait needs a threshold"},
		{"no-step-kind", doc("", "", task(`"before":[{"ge":1}]`)), schedule.CodeMissing, "$.tasks[0].before[0]", "a step names what it does"},
		{"no-length", doc("", "", task(`"writes":[{"buffer":"x"}]`)), schedule.CodeMissing, "$.tasks[0].writes[0].length", "an access has a length"},
		{"no-task-name", doc("", "", `[{"op":"gemv"}]`), schedule.CodeMissing, "$.tasks[0].name", "tasks are referenced by name"},

		// invalid.duplicate
		{"dup-buffer", doc("", `"buffers":[{"name":"x","kind":"scratch","size":64},{"name":"x","kind":"input","size":8}],`, ""), schedule.CodeDuplicate, "$.buffers[1].name", "names are references"},
		{"dup-task", doc("", "", `[{"name":"t"},{"name":"t"}]`), schedule.CodeDuplicate, "$.tasks[1].name", "task names identify findings"},
		{"dup-key", doc(`{"sms":2,"sms":3,"workers":2}`, "", ""), schedule.CodeDuplicate, "$.launch.sms", "a duplicate JSON key is ambiguous"},
		{"dup-param", doc("", "", task(`"params":{"k":1,"k":2}`)), schedule.CodeDuplicate, "$.tasks[0].params.k", "duplicate keys inside params too"},

		// invalid.reference
		{"dangling-wait", doc("", "", task(`"before":[{"wait":"nope","ge":1}]`)), schedule.CodeReference, "$.tasks[0].before[0].wait", "no counter nope"},
		{"dangling-sync", doc("", "", task(`"before":[{"sync":"nope"}]`)), schedule.CodeReference, "$.tasks[0].before[0].sync", "no barrier nope"},
		{"dangling-release", doc("", "", task(`"after":[{"release":"nope"}]`)), schedule.CodeReference, "$.tasks[0].after[0].release", "no semaphore nope"},
		{"dangling-buffer", doc("", "", task(`"reads":[{"buffer":"y","length":4}]`)), schedule.CodeReference, "$.tasks[0].reads[0].buffer", "no buffer y"},
		{"dangling-arena", doc("", `"buffers":[{"name":"x","kind":"scratch","size":64,"arena":"page"}],`, ""), schedule.CodeReference, "$.buffers[0].arena", "no arena page"},
		{"wrong-kind-ref", doc("", "", task(`"before":[{"wait":"g","ge":1}]`)), schedule.CodeReference, "$.tasks[0].before[0].wait", "g is a barrier, not a counter"},

		// invalid.name
		{"empty-task-name", doc("", "", `[{"name":""}]`), schedule.CodeName, "$.tasks[0].name", "an empty name cannot be referenced"},
		{"empty-buffer-name", doc("", `"buffers":[{"name":"","kind":"scratch","size":64}],`, ""), schedule.CodeName, "$.buffers[0].name", "an empty name cannot be referenced"},

		// invalid.size
		{"negative-size", doc("", `"buffers":[{"name":"x","kind":"scratch","size":-1}],`, ""), schedule.CodeSize, "$.buffers[0].size", "sizes are unsigned"},
		{"huge-size", doc("", `"buffers":[{"name":"x","kind":"scratch","size":99999999999999999999}],`, ""), schedule.CodeSize, "$.buffers[0].size", "beyond uint64"},
		{"exp-size", doc("", `"buffers":[{"name":"x","kind":"scratch","size":1e30}],`, ""), schedule.CodeSize, "$.buffers[0].size", "exponent form beyond uint64 still overflows"},
		{"size-2^63", doc("", `"buffers":[{"name":"x","kind":"scratch","size":9223372036854775808}],`, ""), schedule.CodeSize, "$.buffers[0].size", "fits uint64 but beyond the 2^62 byte bound"},
		{"zero-size", doc("", `"buffers":[{"name":"x","kind":"scratch","size":0}],`, ""), schedule.CodeSize, "$.buffers[0].size", "an empty buffer"},
		{"zero-arena", doc("", `"arenas":[{"name":"a","size":0}],`, ""), schedule.CodeSize, "$.arenas[0].size", "an empty arena"},
		{"arena-overflow", doc("", `"arenas":[{"name":"a","size":64}],"buffers":[{"name":"x","kind":"scratch","size":64,"arena":"a","offset":8}],`, ""), schedule.CodeSize, "$.buffers[0].offset", "the buffer runs past its arena"},
		{"zero-parties", `{"format":"megaproof/v1","launch":{"sms":1,"workers":1},"barriers":[{"name":"g","parties":0}]}`, schedule.CodeSize, "$.barriers[0].parties", "a barrier needs parties"},
		{"init-beyond-width", `{"format":"megaproof/v1","launch":{"sms":1,"workers":1},"counters":[{"name":"c","init":4294967296}]}`, schedule.CodeSize, "$.counters[0].init", "32-bit counters start below 2^32"},
		{"negative-worker", doc("", "", task(`"worker":-1`)), schedule.CodeSize, "$.tasks[0].worker", "dynamic tasks omit worker; -1 is not spelled out"},
		{"negative-offset-too-far", doc("", "", task(`"reads":[{"buffer":"x","offset":-9223372036854775809,"length":1}]`)), schedule.CodeSize, "$.tasks[0].reads[0].offset", "offsets are int64"},
		{"rows-no-stride", doc("", "", task(`"reads":[{"buffer":"x","length":4,"rows":2}]`)), schedule.CodeSize, "$.tasks[0].reads[0].stride", "rows overlap without a stride"},
		{"huge-tile", doc("", "", task(`"reads":[{"buffer":"x","length":4,"rows":4611686018427387904,"stride":4611686018427387904}]`)), schedule.CodeSize, "$.tasks[0].reads[0].rows", "the tile spans more than 2^62 bytes"},
		{"huge-tokens", `{"format":"megaproof/v1","launch":{"sms":1,"workers":1},"semaphores":[{"name":"s","tokens":4611686018427387905}]}`, schedule.CodeSize, "$.semaphores[0].tokens", "token counts are bounded like amounts"},

		// invalid.empty-access
		{"zero-length", doc("", "", task(`"writes":[{"buffer":"x","length":0}]`)), schedule.CodeEmptyAccess, "$.tasks[0].writes[0].length", "an access of zero bytes is a generator bug"},

		// invalid.threshold
		{"threshold-zero", doc("", "", task(`"before":[{"wait":"c","ge":0}]`)), schedule.CodeThreshold, "$.tasks[0].before[0].ge", "ge 0 never waits"},
		{"threshold-width", doc("", "", task(`"before":[{"wait":"c","ge":4294967296}]`)), schedule.CodeThreshold, "$.tasks[0].before[0].ge", "a 32-bit counter never reaches 2^32"},

		// invalid.worker
		{"worker-out-of-range", doc("", "", task(`"worker":2`)), schedule.CodeWorker, "$.tasks[0].worker", "workers are 0..1"},

		// invalid.value
		{"bad-scope", doc("", "", task(`"before":[{"wait":"c","ge":1,"scope":"warp"}]`)), schedule.CodeValue, "$.tasks[0].before[0].scope", "scopes are cta, gpu, sys"},
		{"bad-fence", doc("", "", task(`"after":[{"fence":"block"}]`)), schedule.CodeValue, "$.tasks[0].after[0].fence", "a fence's value is its scope"},
		{"bad-kind", doc("", `"buffers":[{"name":"x","kind":"texture","size":64}],`, ""), schedule.CodeValue, "$.buffers[0].kind", "five buffer kinds"},
		{"bad-order", doc("", "", task(`"before":[{"wait":"c","ge":1,"order":"seq_cst"}]`)), schedule.CodeValue, "$.tasks[0].before[0].order", "acquire or relaxed"},
		{"release-order-on-wait", doc("", "", task(`"before":[{"wait":"c","ge":1,"order":"release"}]`)), schedule.CodeValue, "$.tasks[0].before[0].order", "a wait cannot release"},
		{"two-kinds", doc("", "", task(`"before":[{"wait":"c","ge":1,"sync":"g"}]`)), schedule.CodeValue, "$.tasks[0].before[0]", "one step, one kind"},
		{"bad-width", `{"format":"megaproof/v1","launch":{"sms":1,"workers":1},"counters":[{"name":"c","width":16}]}`, schedule.CodeValue, "$.counters[0].width", "32 or 64 bits"},
		{"zero-add", doc("", "", task(`"after":[{"signal":"c","add":0}]`)), schedule.CodeValue, "$.tasks[0].after[0].add", "a signal adds at least 1"},
		{"zero-n", doc("", "", task(`"before":[{"acquire":"s","n":0}]`)), schedule.CodeValue, "$.tasks[0].before[0].n", "an acquire takes at least 1"},
		{"offset-no-arena", doc("", `"buffers":[{"name":"x","kind":"scratch","size":64,"offset":8}],`, ""), schedule.CodeValue, "$.buffers[0].offset", "offsets place buffers in arenas"},
		{"stride-no-rows", doc("", "", task(`"reads":[{"buffer":"x","length":4,"stride":8}]`)), schedule.CodeValue, "$.tasks[0].reads[0].stride", "a stride without rows is meaningless"},

		// invalid.launch
		{"zero-sms", doc(`{"sms":0,"workers":2}`, "", ""), schedule.CodeLaunch, "$.launch.sms", "no SMs"},
		{"zero-workers", doc(`{"sms":2,"workers":0}`, "", ""), schedule.CodeLaunch, "$.launch.workers", "no workers"},
		{"zero-per-sm", doc(`{"sms":2,"blocks_per_sm":0,"workers":2}`, "", ""), schedule.CodeLaunch, "$.launch.blocks_per_sm", "occupancy of zero"},

		// invalid.limit
		{"too-many-sms", doc(`{"sms":2000000,"workers":2}`, "", ""), schedule.CodeLimit, "$.launch.sms", "beyond MaxWorkers"},
		{"too-many-workers", doc(`{"sms":2,"workers":2000000}`, "", ""), schedule.CodeLimit, "$.launch.workers", "beyond MaxWorkers"},
		{"too-many-per-sm", doc(`{"sms":2,"blocks_per_sm":1025,"workers":2}`, "", ""), schedule.CodeLimit, "$.launch.blocks_per_sm", "no GPU keeps 1025 blocks on an SM"},
		{"too-many-steps", doc("", "", manyFences()), schedule.CodeLimit, "$.tasks[0]", "beyond MaxStepsPerTask"},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := schedule.Unmarshal([]byte(tt.input))
			if err == nil {
				t.Fatalf("Unmarshal succeeded (%d tasks); want %s at %s (%s)", len(p.Tasks), tt.code, tt.path, tt.reason)
			}
			var se *schedule.Error
			if !errors.As(err, &se) || len(se.Diagnostics) == 0 {
				t.Fatalf("error %T %v is not a *schedule.Error", err, err)
			}
			d := se.Diagnostics[0]
			if d.Code != tt.code || d.Path != tt.path {
				t.Errorf("first diagnostic %s at %s; want %s at %s (%s)\nall: %v", d.Code, d.Path, tt.code, tt.path, tt.reason, err)
			}
			if d.Message == "" {
				t.Errorf("diagnostic %s at %s has no message", d.Code, d.Path)
			}
		})
		seen[tt.code] = true
	}
	for _, code := range allInvalidCodes {
		if !seen[code] {
			t.Errorf("no table row produces %s", code)
		}
	}
}

// allInvalidCodes lists every invalid.* code package schedule defines.
var allInvalidCodes = []string{
	schedule.CodeSyntax, schedule.CodeFormat, schedule.CodeUnknownField, schedule.CodeType,
	schedule.CodeMissing, schedule.CodeDuplicate, schedule.CodeReference, schedule.CodeName,
	schedule.CodeSize, schedule.CodeEmptyAccess, schedule.CodeThreshold, schedule.CodeWorker,
	schedule.CodeValue, schedule.CodeLaunch, schedule.CodeLimit,
}

// TestValidateProgram covers problems that only a Program built in Go can
// have (the JSON form cannot spell them), through Validate and Builder.
func TestValidateProgram(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(p *schedule.Program)
		code   string
		path   string
		reason string
	}{
		{"relaxed-sync", func(p *schedule.Program) {
			p.Tasks[1].Before = append(p.Tasks[1].Before, schedule.Step{Kind: schedule.Sync, Relaxed: true})
		}, schedule.CodeValue, "$.tasks[1].before[1].order", "only waits and signals have an order"},
		{"relaxed-release", func(p *schedule.Program) {
			p.Tasks[0].After = append(p.Tasks[0].After, schedule.Step{Kind: schedule.Release, Value: 1, Relaxed: true})
		}, schedule.CodeValue, "$.tasks[0].after[1].order", "semaphore steps are not relaxed"},
		{"scoped-arrive", func(p *schedule.Program) {
			p.Tasks[0].After = append(p.Tasks[0].After, schedule.Step{Kind: schedule.Arrive, Scope: schedule.ScopeCTA})
		}, schedule.CodeValue, "$.tasks[0].after[1].scope", "a barrier step has no scope (the JSON form cannot say one)"},
		{"unknown-scope", func(p *schedule.Program) { p.Tasks[0].After[0].Scope = 9 }, schedule.CodeValue, "$.tasks[0].after[0].scope", "three scopes"},
		{"unknown-step-kind", func(p *schedule.Program) { p.Tasks[0].After[0].Kind = 0 }, schedule.CodeValue, "$.tasks[0].after[0]", "the zero StepKind is not a step"},
		{"fence-with-object", func(p *schedule.Program) {
			p.Tasks[0].After = append(p.Tasks[0].After, schedule.Step{Kind: schedule.Fence, Value: 3})
		}, schedule.CodeValue, "$.tasks[0].after[1].fence", "fences take no value"},
		{"buffer-kind-zero", func(p *schedule.Program) { p.Buffers[0].Kind = 0 }, schedule.CodeValue, "$.buffers[0].kind", "the zero BufferKind is not a kind"},
		{"counter-index", func(p *schedule.Program) { p.Tasks[0].After[0].Object = 5 }, schedule.CodeReference, "$.tasks[0].after[0].signal", "index beyond the counters"},
		{"buffer-index", func(p *schedule.Program) { p.Tasks[0].Writes[0].Buffer = -2 }, schedule.CodeReference, "$.tasks[0].writes[0].buffer", "negative buffer index"},
		{"arena-index", func(p *schedule.Program) { p.Buffers[0].Arena = 3 }, schedule.CodeReference, "$.buffers[0].arena", "index beyond the arenas"},
		{"huge-stride-one-row", func(p *schedule.Program) {
			p.Tasks[0].Writes[0].Rows, p.Tasks[0].Writes[0].Stride = 1, 1<<63
		}, schedule.CodeSize, "$.tasks[0].writes[0]", "even a one-row access bounds its stride, or it would not round-trip"},
		{"dup-counter", func(p *schedule.Program) {
			p.Counters = append(p.Counters, schedule.Counter{Name: "ready", Width: 32})
		}, schedule.CodeDuplicate, "$.counters[1].name", "names are unique per kind"},
		{"width-zero", func(p *schedule.Program) { p.Counters[0].Width = 0 }, schedule.CodeValue, "$.counters[0].width", "a Program must spell the width"},
		{"sms-limit", func(p *schedule.Program) { p.Launch.SMs = schedule.MaxWorkers + 1 }, schedule.CodeLimit, "$.launch.sms", "beyond MaxWorkers"},
		{"negative-worker", func(p *schedule.Program) { p.Tasks[0].Worker = -5 }, schedule.CodeWorker, "$.tasks[0].worker", "only Dynamic (-1) is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := handoff(t, true)
			p.Barriers = []schedule.Barrier{{Name: "g", Parties: 2}}
			p.Semaphores = []schedule.Semaphore{{Name: "s", Tokens: 1}}
			tt.edit(p)
			err := p.Validate()
			var se *schedule.Error
			if !errors.As(err, &se) {
				t.Fatalf("Validate = %v; want %s at %s (%s)", err, tt.code, tt.path, tt.reason)
			}
			if d := se.Diagnostics[0]; d.Code != tt.code || d.Path != tt.path {
				t.Errorf("first diagnostic %s at %s; want %s at %s (%s)\nall: %v", d.Code, d.Path, tt.code, tt.path, tt.reason, err)
			}
		})
	}
}

// TestDiagnosticsOrderAndCap checks that every problem is reported in
// document order and that the list is capped.
func TestDiagnosticsOrderAndCap(t *testing.T) {
	var tasks []string
	for i := range 80 {
		tasks = append(tasks, fmt.Sprintf(`{"name":"t%d","worker":9}`, i))
	}
	_, err := schedule.Unmarshal([]byte(doc("", "", "["+strings.Join(tasks, ",")+"]")))
	var se *schedule.Error
	if !errors.As(err, &se) {
		t.Fatalf("err = %v", err)
	}
	if n := len(se.Diagnostics); n != 50 {
		t.Errorf("%d diagnostics; want the cap of 50", n)
	}
	for i, d := range se.Diagnostics {
		if want := fmt.Sprintf("$.tasks[%d].worker", i); d.Path != want || d.Code != schedule.CodeWorker {
			t.Fatalf("diagnostic %d: %s at %s; want %s at %s", i, d.Code, d.Path, schedule.CodeWorker, want)
		}
	}
	if got := strings.Count(err.Error(), "\n"); got != 49 {
		t.Errorf("Error() has %d line breaks; want one line per diagnostic", got)
	}
}

// TestBuilderDuplicate checks that the builder reports its first misuse.
func TestBuilderDuplicate(t *testing.T) {
	b := schedule.NewBuilder("dup", schedule.Launch{SMs: 1, PerSM: 1, Workers: 1})
	b.Counter("c")
	b.Counter("c")
	b.Task("t")
	if _, err := b.Build(); err == nil || !strings.Contains(err.Error(), `duplicate counter name "c"`) {
		t.Fatalf("Build = %v; want a duplicate counter error", err)
	}
}
