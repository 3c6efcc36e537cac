package verify

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/megaproof/megaproof/internal/geom"
	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/schedule/amk"
	"github.com/megaproof/megaproof/schedule/mpk"
)

// PatchOp is one RFC 6902 JSON Patch operation. Path and From are JSON
// Pointers (RFC 6901: "/tasks/3/before/-"), not JSON paths.
type PatchOp struct {
	Op   string `json:"op"` // "add", "remove", "replace" or "move"
	Path string `json:"path"`
	// Value is the JSON value an add or replace puts at Path.
	Value json.RawMessage `json:"value,omitempty"`
	From  string          `json:"from,omitempty"`
}

// raw encodes a patch value (maps, slices, strings and numbers only).
func raw(v any) json.RawMessage {
	b, err := marshalPlain(v)
	if err != nil {
		panic(err) // unreachable: values are plain data
	}
	return b
}

// patchFor returns the fix of finding f as JSON Patch operations on p's
// megaproof/v1 document, or nil where the fix is not one definite edit.
// st is the state f's witness reaches (nil for a finding without one).
// The edits:
//
//   - race.raw, race.war, race.waw: a new counter that the first task
//     signals after its body and the second waits for before its own;
//   - race.unsynchronized: the relaxed or cta-scoped signals after the
//     first task's body and waits before the second's become release
//     signals and acquire waits at gpu scope;
//   - race.scope: the two tasks' cta-scoped steps become gpu-scoped;
//   - deadlock.unsatisfiable: the stuck wait's threshold lowered to what
//     its counter can reach;
//   - deadlock.barrier: the stuck thread's sync, which has no partners,
//     removed;
//   - deadlock.cycle: a stuck task moved after the first later task of its
//     worker that signals what another stuck thread waits for;
//   - counter-overflow: the counter declared 64 bits wide;
//   - occupancy: blocks_per_sm raised so every worker is co-resident (a
//     non-cooperative launch), or at most as many workers as the target
//     holds (a cooperative one, when no task is pinned beyond them);
//   - readonly-write: the written input or weight buffer declared state;
//   - uninitialized-read: the reader waits, as for a race, for a new
//     counter that each writer its fix names signals after its body (every
//     task that writes bytes within the reader's reads and need not run
//     after it, [uninitWriters]), or, where no task writes the bytes, the
//     scratch buffer declared state;
//   - out-of-bounds: the access shrunk to the buffer: a one-row access's
//     offset and length clipped to the buffer's bytes, a strided one's rows
//     cut to those that fit (none when no byte, or no whole row, is
//     inside);
//   - deadlock.semaphore: every run of acquires before a stuck task's body
//     sorted by semaphore (see [lockOrderPatch]), where one is out of order;
//   - output-unwritten: the bytes written by the last task (in list order)
//     that writes the buffer, or by a new dynamic task when none does.
func patchFor(p *schedule.Program, f *Finding, st *schedule.State) []PatchOp {
	switch f.Code {
	case CodeRaceRAW, CodeRaceWAR, CodeRaceWAW:
		if len(f.Tasks) == 2 {
			return orderPatch(p, f.Tasks[0], f.Tasks[1])
		}
	case CodeRaceUnsynchronized:
		if len(f.Tasks) == 2 {
			return strengthenPatch(p, f.Tasks[0], f.Tasks[1])
		}
	case CodeRaceScope:
		var ops []PatchOp
		for _, t := range f.Tasks {
			ops = append(ops, widenPatch(p, t)...)
		}
		return ops
	case CodeDeadlockUnsatisfiable, CodeDeadlockBarrier:
		task, after, j, s, ok := stuckStep(p, f, st)
		if !ok {
			return nil
		}
		path := stepPointer(task, after, j)
		if f.Code == CodeDeadlockBarrier {
			if s.Kind != schedule.Sync {
				return nil
			}
			return []PatchOp{{Op: "remove", Path: path}}
		}
		reach := reachable(p, s.Object)
		if s.Kind != schedule.Wait || reach == 0 || reach >= s.Value {
			return nil
		}
		return []PatchOp{{Op: "replace", Path: path + "/ge", Value: raw(reach)}}
	case CodeDeadlockCycle:
		if st != nil {
			return cyclePatch(p, f, st)
		}
	case CodeCounterOverflow:
		if st == nil {
			return nil
		}
		for c, over := range st.Overflowed {
			if over && p.Counters[c].Width < 64 {
				return []PatchOp{{Op: "add", Path: "/counters/" + strconv.Itoa(c) + "/width", Value: raw(64)}}
			}
		}
	case CodeOccupancy:
		l := p.Launch
		if !l.Cooperative {
			if l.Workers > l.Capacity() {
				return []PatchOp{{Op: "add", Path: "/launch/blocks_per_sm", Value: raw((l.Workers + l.SMs - 1) / l.SMs)}}
			}
			return nil
		}
		if l.Workers > l.Capacity() && l.Capacity() > 0 {
			for i := range p.Tasks {
				if int(p.Tasks[i].Worker) >= l.Capacity() {
					return nil
				}
			}
			return []PatchOp{{Op: "replace", Path: "/launch/workers", Value: raw(l.Capacity())}}
		}
	case CodeOutputUnwritten:
		return unwrittenPatch(p, f)
	case CodeOutOfBounds:
		return boundsPatch(p, f)
	case CodeDeadlockSemaphore:
		return lockOrderPatch(p, f.Tasks)
	case CodeUninitializedRead:
		if ws, buf := uninitTarget(p, f); len(ws) > 0 {
			var ops []PatchOp
			q := &schedule.Program{Counters: p.Counters, Tasks: p.Tasks}
			for _, w := range ws {
				// Each writer its own counter; q tells orderPatch the
				// counters and steps the earlier edits added.
				patch := orderPatch(q, w, f.Tasks[0])
				ops = append(ops, patch...)
				q = withOrder(q, w, f.Tasks[0], patch)
			}
			return ops
		} else if buf >= 0 {
			return []PatchOp{{Op: "replace", Path: "/buffers/" + strconv.Itoa(buf) + "/kind", Value: raw("state")}}
		}
	case CodeReadonlyWrite:
		if len(f.Tasks) == 0 {
			return nil
		}
		return readonlyPatch(p, f.Tasks[0], "state")
	}
	return nil
}

// patchAt returns the fix of finding f as JSON Patch operations on the
// document p was read from, in the format loc locates: megaproof/v1
// ([schedule.Paths], see patchFor), AMK IR ([amk.Paths], see amkPatchFor)
// or an MPK task graph ([mpk.Paths], see mpkPatchFor); nil for another
// format or where the fix is not one definite edit in it.
func patchAt(p *schedule.Program, f *Finding, st *schedule.State, loc schedule.Locator) []PatchOp {
	switch loc.(type) {
	case schedule.Paths:
		return patchFor(p, f, st)
	case amk.Paths:
		return amkPatchFor(p, f, st)
	case mpk.Paths:
		return mpkPatchFor(p, f, st)
	}
	return nil
}

// mpkPatchFor returns the fix of finding f as JSON Patch operations on the
// MPK task graph p was read from (schedule/mpk: event e is /all_events/e),
// or nil where the fix has no MPK form. MPK tasks wait on one event and
// trigger one, so most fixes restructure the graph; the one edit:
//
//   - deadlock.unsatisfiable: the stuck wait's event's num_triggers
//     lowered to the number of tasks that trigger it in one iteration (the
//     waits on it are num_triggers × the iteration); none when no task
//     triggers it.
func mpkPatchFor(p *schedule.Program, f *Finding, st *schedule.State) []PatchOp {
	if f.Code != CodeDeadlockUnsatisfiable {
		return nil
	}
	_, _, _, s, ok := stuckStep(p, f, st)
	if !ok || s.Kind != schedule.Wait {
		return nil
	}
	e, ok := mpk.EventOf(p, int(s.Object))
	if !ok {
		return nil
	}
	loc := mpk.Paths{Program: p}
	n := 0
	for i := range p.Tasks {
		t := &p.Tasks[i]
		if loc.TaskPath(i) == "" || !strings.HasSuffix(t.Name, "@1") {
			continue
		}
		for _, x := range t.After {
			if x.Kind == schedule.Signal && x.Object == s.Object {
				n++
				break
			}
		}
	}
	if n == 0 || reachable(p, s.Object) >= s.Value {
		return nil
	}
	return []PatchOp{{Op: "replace", Path: "/all_events/" + strconv.Itoa(e) + "/num_triggers", Value: raw(n)}}
}

// stuckStep is the step at which the first task of a deadlock finding
// stands in the state st its witness reaches.
func stuckStep(p *schedule.Program, f *Finding, st *schedule.State) (task int, after bool, j int, s schedule.Step, ok bool) {
	if st == nil || len(f.Tasks) == 0 {
		return 0, false, 0, s, false
	}
	th := threadOf(st.Form(), p, f.Tasks[0])
	if th < 0 || st.Finished(th) {
		return 0, false, 0, s, false
	}
	task, after, j, ok = st.Form().StepSource(p, th, int(st.Pos[th]))
	if !ok || j < 0 || task != f.Tasks[0] {
		return 0, false, 0, s, false
	}
	return task, after, j, stepList(p, task, after)[j], true
}

// amkPatchFor returns the fix of finding f as JSON Patch operations on the
// AMK IR document p was read from (schedule/amk: task i is /tasks/i, its
// waits /tasks/i/waits/j, buffer b /buffers/b, counter c the AMK counter
// amk.CounterID names), or nil where the fix has no AMK form. An AMK task
// has one out_counter and its body's footprint comes from its op, so a fix
// can only add or change waits, reorder the task list, or change a
// buffer's kind. The edits:
//
//   - race.raw, race.war, race.waw: the second task waits on the first
//     task's out_counter for the value that counter must have once the
//     first has signalled: its init plus the signals of every task that
//     need not run after the second (the second itself, the tasks queued
//     after it on its SM, and those whose waits cannot pass without one of
//     these, transitively, are left out); a wait of the second task on that
//     counter with a lower threshold is raised instead of adding one; no
//     patch when the first task must run after the second, the value is
//     beyond 32 bits or the second already has amk.MaxWaits waits;
//   - deadlock.unsatisfiable: the stuck wait's threshold lowered to what
//     its counter can reach (not below 1, AMK's least threshold);
//   - deadlock.cycle: as on megaproof/v1, a stuck task moved in the task
//     list after the first later task of its SM that signals what another
//     stuck thread waits for (the task list is AMK's per-SM queue order);
//   - uninitialized-read: the reader waits on the out_counter of the writer
//     its fix names, as for a race; where no task writes the bytes, the
//     ACTIVATION buffer declared KV_CACHE;
//   - readonly-write: the written WEIGHT, CONST or IO_INPUT buffer declared
//     KV_CACHE, AMK's state kind.
//
// race.unsynchronized, race.scope and deadlock.barrier do not arise (AMK's
// waits and signals are acquire and release at gpu scope, and it has no
// barriers); counter-overflow has no AMK form (counters are 32 bits wide),
// nor have occupancy (the launch is one worker per SM, from target) and
// output-unwritten (an op's footprint cannot be widened by an edit).
func amkPatchFor(p *schedule.Program, f *Finding, st *schedule.State) []PatchOp {
	switch f.Code {
	case CodeRaceRAW, CodeRaceWAR, CodeRaceWAW:
		if len(f.Tasks) == 2 {
			return amkOrderPatch(p, f.Tasks[0], f.Tasks[1])
		}
	case CodeDeadlockUnsatisfiable, CodeDeadlockCycle:
		if f.Code == CodeDeadlockCycle && amk.Queued(p) {
			// The order is AMK's loader's (queue counters), which no
			// move in the task list changes.
			return nil
		}
		ops := patchFor(p, f, st)
		for i := range ops {
			// The v1 pointers of a wait's threshold become AMK's: the
			// wait lists are the same (a queue wait comes after them and
			// has no AMK form), Before is waits.
			ops[i].Path = amkStepPointer(p, ops[i].Path)
			if ops[i].Path == "" {
				return nil
			}
		}
		return ops
	case CodeUninitializedRead:
		if ws, buf := uninitTarget(p, f); len(ws) > 0 {
			return amkWaitPatch(p, f.Tasks[0], ws)
		} else if buf >= 0 {
			return []PatchOp{{Op: "replace", Path: "/buffers/" + strconv.Itoa(buf) + "/kind", Value: raw("KV_CACHE")}}
		}
	case CodeReadonlyWrite:
		if len(f.Tasks) == 0 {
			return nil
		}
		return readonlyPatch(p, f.Tasks[0], "KV_CACHE")
	}
	return nil
}

// amkStepPointer maps a pointer of patchFor's unsatisfiable and cycle
// edits to AMK's: /tasks/i stays, /tasks/i/before/j/ge of an AMK wait of
// p's task i becomes /tasks/i/waits/j/threshold; "" for any other.
func amkStepPointer(p *schedule.Program, ptr string) string {
	parts := strings.Split(ptr, "/")
	switch {
	case len(parts) == 3 && parts[1] == "tasks":
		return ptr
	case len(parts) == 6 && parts[1] == "tasks" && parts[3] == "before" && parts[5] == "ge":
		i, err1 := strconv.Atoi(parts[2])
		j, err2 := strconv.Atoi(parts[4])
		if err1 != nil || err2 != nil || i < 0 || i >= len(p.Tasks) || j < 0 || j >= amkWaits(p, p.Tasks[i].Before) {
			return ""
		}
		return "/tasks/" + parts[2] + "/waits/" + parts[4] + "/threshold"
	}
	return ""
}

// amkOrderPatch makes AMK task b wait on task a's out_counter for the value
// the counter must have once a has signalled (see amkPatchFor).
func amkOrderPatch(p *schedule.Program, a, b int) []PatchOp {
	return amkWaitPatch(p, b, []int{a})
}

// amkWaitPatch makes AMK task b wait, for each task a of as, on a's
// out_counter for the value the counter must have once a has signalled: a
// wait of b on the counter with a lower threshold raised, the others
// added; nil where one of as must run after b, a value is beyond 32 bits
// or b would have more than amk.MaxWaits waits.
func amkWaitPatch(p *schedule.Program, b int, as []int) []PatchOp {
	later := mustFollow(p, b)
	tb := &p.Tasks[b]
	var ops []PatchOp
	var added []any
	done := map[int32]bool{}
	for _, a := range as {
		ta := &p.Tasks[a]
		if later[a] || len(ta.After) == 0 || ta.After[0].Kind != schedule.Signal || amkWaits(p, ta.After) != 1 {
			return nil
		}
		c := ta.After[0].Object
		if done[c] {
			continue
		}
		done[c] = true
		id, ok := amk.CounterID(p, int(c))
		if !ok {
			return nil
		}
		k := p.Counters[c].Init
		for i := range p.Tasks {
			if later[i] {
				continue
			}
			for _, s := range p.Tasks[i].After {
				if s.Kind == schedule.Signal && s.Object == c {
					k += s.Value
				}
			}
		}
		if k > math.MaxUint32 {
			return nil
		}
		j := slices.IndexFunc(tb.Before, func(s schedule.Step) bool { return s.Kind == schedule.Wait && s.Object == c })
		switch {
		case j < 0:
			added = append(added, map[string]any{"counter": id, "threshold": k})
		case tb.Before[j].Value < k:
			ops = append(ops, PatchOp{Op: "replace", Path: taskPointer(b) + "/waits/" + strconv.Itoa(j) + "/threshold", Value: raw(k)})
		}
	}
	nw := amkWaits(p, tb.Before)
	if nw+len(added) > amk.MaxWaits {
		return nil
	}
	if nw == 0 && len(added) > 0 {
		return append(ops, PatchOp{Op: "add", Path: taskPointer(b) + "/waits", Value: raw(added)})
	}
	for _, w := range added {
		ops = append(ops, PatchOp{Op: "add", Path: taskPointer(b) + "/waits/-", Value: raw(w)})
	}
	return ops
}

// amkWaits is the number of steps of a task's Before or After list that
// its AMK document has (waits, or the signal of out_counter): those not
// on a queue counter, which schedule/amk appends after them.
func amkWaits(p *schedule.Program, steps []schedule.Step) int {
	n := 0
	for _, s := range steps {
		if !strings.HasPrefix(p.Counters[s.Object].Name, amk.QueuePrefix) {
			n++
		}
	}
	return n
}

// mustFollow marks the tasks of p that cannot start before task b has
// finished: b, the tasks pinned after a marked one on its worker (in task
// list order), and the tasks with a wait that the counter's initial value
// and the signals of unmarked tasks cannot satisfy; to a fixed point, in
// time linear in the program's steps (after sorting each counter's waits).
func mustFollow(p *schedule.Program, b int) []bool {
	type waiter struct {
		task int32
		ge   uint64
	}
	later := make([]bool, len(p.Tasks))
	// avail[c]: counter c's init plus the signals of unmarked tasks
	// (saturating: a saturated counter is never lowered).
	avail := make([]uint64, len(p.Counters))
	for c := range p.Counters {
		avail[c] = p.Counters[c].Init
	}
	// waits[c]: the waits on c, highest threshold first; done[c] of them
	// are known not to pass.
	waits := make([][]waiter, len(p.Counters))
	done := make([]int, len(p.Counters))
	lastOn := map[int32]int{} // worker -> the last task pinned to it so far
	next := make([]int, len(p.Tasks))
	for i := range p.Tasks {
		t := &p.Tasks[i]
		next[i] = -1
		if t.Worker != schedule.Dynamic {
			if prev, ok := lastOn[t.Worker]; ok {
				next[prev] = i
			}
			lastOn[t.Worker] = i
		}
		for _, list := range [][]schedule.Step{t.Before, t.After} {
			for _, s := range list {
				switch s.Kind {
				case schedule.Signal:
					if avail[s.Object] += s.Value; avail[s.Object] < s.Value {
						avail[s.Object] = math.MaxUint64
					}
				case schedule.Wait:
					waits[s.Object] = append(waits[s.Object], waiter{int32(i), s.Value})
				}
			}
		}
	}
	for c := range waits {
		slices.SortFunc(waits[c], func(x, y waiter) int { return cmp.Compare(y.ge, x.ge) })
	}
	stack := []int{b}
	later[b] = true
	mark := func(i int) {
		if i >= 0 && !later[i] {
			later[i] = true
			stack = append(stack, i)
		}
	}
	// unmet marks the waiters of c whose threshold avail[c] no longer
	// reaches.
	unmet := func(c int32) {
		for ; done[c] < len(waits[c]) && waits[c][done[c]].ge > avail[c]; done[c]++ {
			mark(int(waits[c][done[c]].task))
		}
	}
	for c := range waits {
		unmet(int32(c)) // waits no run satisfies: never started at all
	}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		mark(next[i])
		t := &p.Tasks[i]
		lists := [][]schedule.Step{t.Before, t.After}
		if i == b {
			lists = lists[1:] // b's own signals before its body may come first
		}
		for _, list := range lists {
			for _, s := range list {
				if s.Kind == schedule.Signal && avail[s.Object] != math.MaxUint64 {
					avail[s.Object] -= s.Value
					unmet(s.Object)
				}
			}
		}
	}
	return later
}

// boundsPatch shrinks the access an out-of-bounds finding is about (found
// by its message, as the static check writes it) to its buffer's bytes.
func boundsPatch(p *schedule.Program, f *Finding) []PatchOp {
	if len(f.Tasks) == 0 {
		return nil
	}
	i := f.Tasks[0]
	t := &p.Tasks[i]
	for _, write := range []bool{false, true} {
		list, what, key := t.Reads, "reads", "/reads/"
		if write {
			list, what, key = t.Writes, "writes", "/writes/"
		}
		for k, a := range list {
			b := &p.Buffers[a.Buffer]
			r := geom.Strided(geom.Pos(0, a.Offset), a.Length, a.Rows, a.Stride)
			lo, hi := geom.Byte(0, r.Off), geom.Byte(0, r.End())
			if boundsMessage(t.Name, what, lo, hi, b) != f.Message {
				continue
			}
			return clipPatch(a, b.Size, taskPointer(i)+key+strconv.Itoa(k))
		}
	}
	return nil
}

// clipPatch shrinks access a, at ptr, to the size bytes of its buffer.
func clipPatch(a schedule.Access, size uint64, ptr string) []PatchOp {
	if size > math.MaxInt64 {
		return nil
	}
	end := int64(size)
	if a.RowCount() == 1 {
		lo := max(a.Offset, 0)
		hi := min(end, saturatingEnd(a.Offset, a.Length))
		if hi <= lo {
			return nil
		}
		ops := []PatchOp{{Op: "replace", Path: ptr + "/length", Value: raw(uint64(hi - lo))}}
		if lo != a.Offset {
			ops = append(ops, PatchOp{Op: "add", Path: ptr + "/offset", Value: raw(lo)})
		}
		return ops
	}
	// Strided: keep the rows that lie wholly inside.
	if a.Offset < 0 || a.Stride == 0 || a.Length > size || uint64(a.Offset) > size-a.Length {
		return nil
	}
	rows := (size-a.Length-uint64(a.Offset))/a.Stride + 1
	if rows >= a.RowCount() {
		return nil
	}
	return []PatchOp{{Op: "replace", Path: ptr + "/rows", Value: raw(rows)}}
}

// saturatingEnd is off+length, or math.MaxInt64 beyond it.
func saturatingEnd(off int64, length uint64) int64 {
	if length > math.MaxInt64 || off > 0 && int64(length) > math.MaxInt64-off {
		return math.MaxInt64
	}
	return off + int64(length)
}

// uninitFix names the fix of an uninitialized read by task r of bytes of
// buffer buf that the tasks srcs write, none ordered before r: r waits for
// every task that writes bytes of a buffer it reads uninitialized and need
// not run after it ([uninitWriters]), or, where none writes the bytes and
// buf is scratch, buf declared state; "" for neither.
func uninitFix(p *schedule.Program, r int, srcs []int32, buf int32) string {
	if len(srcs) == 0 {
		if b := &p.Buffers[buf]; b.Kind == schedule.KindScratch {
			return uninitStateFix(b.Name, p.Tasks[r].Name)
		}
		return ""
	}
	if ws := uninitWriters(p, r); len(ws) > 0 {
		return uninitOrderFix(p, r, ws)
	}
	return ""
}

// uninitWriters are the tasks other than r that write bytes within the
// extent of a read of r on a buffer that needs initializing and that need
// not run after r, in task order.
func uninitWriters(p *schedule.Program, r int) []int {
	later := mustFollow(p, r)
	var ws []int
	for w := range p.Tasks {
		if w == r || later[w] {
			continue
		}
	search:
		for _, rd := range p.Tasks[r].Reads {
			if !needsInit(p.Buffers[rd.Buffer].Kind) {
				continue
			}
			x := geom.Strided(geom.Pos(0, rd.Offset), rd.Length, rd.Rows, rd.Stride)
			for _, wr := range p.Tasks[w].Writes {
				y := geom.Strided(geom.Pos(0, wr.Offset), wr.Length, wr.Rows, wr.Stride)
				if wr.Buffer == rd.Buffer && x.Off < y.End() && y.Off < x.End() {
					ws = append(ws, w)
					break search
				}
			}
		}
	}
	return ws
}

func uninitOrderFix(p *schedule.Program, r int, ws []int) string {
	if len(ws) == 1 {
		return newMsg().s("make ").q(p.Tasks[r].Name).s(" wait for a signal that ").q(p.Tasks[ws[0]].Name).s(" sends after its body (a write of the bytes ordered before the read)").String()
	}
	return newMsg().s("make ").q(p.Tasks[r].Name).s(" wait for signals that the ").i(int64(len(ws))).s(" tasks writing what it reads (").q(p.Tasks[ws[0]].Name).s(" first) send after their bodies").String()
}

func uninitStateFix(buf, reader string) string {
	return newMsg().s("declare ").s(buf).s(" a state buffer (initialized before the launch), or write the bytes in a task ordered before ").q(reader).String()
}

// uninitTarget finds what an uninitialized-read's fix names, by its text:
// the writers the reader should wait for, or else the buffer to declare
// state (-1 for none).
func uninitTarget(p *schedule.Program, f *Finding) (writers []int, buf int) {
	if len(f.Tasks) != 1 || f.Fix == "" {
		return nil, -1
	}
	r := f.Tasks[0]
	for _, a := range p.Tasks[r].Reads {
		if uninitStateFix(p.Buffers[a.Buffer].Name, p.Tasks[r].Name) == f.Fix {
			return nil, int(a.Buffer)
		}
	}
	if ws := uninitWriters(p, r); len(ws) > 0 && uninitOrderFix(p, r, ws) == f.Fix {
		return ws, -1
	}
	return nil, -1
}

// withOrder is q as the orderPatch edit of tasks a and b leaves it: one
// more counter, a signal after a's body, a wait before b's (the values do
// not matter, only the names and the list lengths orderPatch reads).
func withOrder(q *schedule.Program, a, b int, patch []PatchOp) *schedule.Program {
	var name string
	var c struct {
		Name string `json:"name"`
	}
	if len(patch) > 0 && json.Unmarshal(trimList(patch[0].Value), &c) == nil {
		name = c.Name
	}
	r := &schedule.Program{Counters: append(slices.Clip(q.Counters), schedule.Counter{Name: name}), Tasks: slices.Clone(q.Tasks)}
	r.Tasks[a].After = append(slices.Clip(r.Tasks[a].After), schedule.Step{Kind: schedule.Signal})
	r.Tasks[b].Before = append(slices.Clip(r.Tasks[b].Before), schedule.Step{Kind: schedule.Wait})
	return r
}

// trimList is the element of a one-element JSON list, or v itself.
func trimList(v json.RawMessage) json.RawMessage {
	if len(v) > 1 && v[0] == '[' && v[len(v)-1] == ']' {
		return v[1 : len(v)-1]
	}
	return v
}

// taskPointer is the JSON Pointer of task i in the megaproof/v1 form.
func taskPointer(i int) string { return "/tasks/" + strconv.Itoa(i) }

// stepPointer is the JSON Pointer of step j of task i's Before or After
// list.
func stepPointer(i int, after bool, j int) string {
	list := "/before/"
	if after {
		list = "/after/"
	}
	return taskPointer(i) + list + strconv.Itoa(j)
}

func stepList(p *schedule.Program, task int, after bool) []schedule.Step {
	if after {
		return p.Tasks[task].After
	}
	return p.Tasks[task].Before
}

// appendTo adds value at the end of the list at ptr, creating the list
// when the program's list (and so, possibly, the document's key) is empty.
func appendTo(ptr string, empty bool, value any) PatchOp {
	if empty {
		return PatchOp{Op: "add", Path: ptr, Value: raw([]any{value})}
	}
	return PatchOp{Op: "add", Path: ptr + "/-", Value: raw(value)}
}

// orderPatch makes task b wait for a new counter that task a signals
// after its body.
func orderPatch(p *schedule.Program, a, b int) []PatchOp {
	names := map[string]bool{}
	for _, c := range p.Counters {
		names[c.Name] = true
	}
	name := p.Tasks[a].Name + ".done"
	for k := 2; names[name]; k++ {
		name = fmt.Sprintf("%s.done%d", p.Tasks[a].Name, k)
	}
	return []PatchOp{
		appendTo("/counters", len(p.Counters) == 0, map[string]any{"name": name}),
		appendTo(taskPointer(a)+"/after", len(p.Tasks[a].After) == 0, map[string]any{"signal": name}),
		appendTo(taskPointer(b)+"/before", len(p.Tasks[b].Before) == 0, map[string]any{"wait": name, "ge": 1}),
	}
}

// strengthenPatch turns the relaxed or cta-scoped signals after task a's
// body and waits before task b's into release signals and acquire waits
// at gpu scope (the defaults, so their keys are removed).
func strengthenPatch(p *schedule.Program, a, b int) []PatchOp {
	var ops []PatchOp
	fix := func(task int, after bool, kind schedule.StepKind) {
		for j, s := range stepList(p, task, after) {
			if s.Kind != kind {
				continue
			}
			if s.Relaxed {
				ops = append(ops, PatchOp{Op: "remove", Path: stepPointer(task, after, j) + "/order"})
			}
			if s.Scope == schedule.ScopeCTA {
				ops = append(ops, PatchOp{Op: "remove", Path: stepPointer(task, after, j) + "/scope"})
			}
		}
	}
	fix(a, true, schedule.Signal)
	fix(b, false, schedule.Wait)
	return ops
}

// widenPatch makes task t's cta-scoped waits, signals, acquires and
// releases gpu-scoped.
func widenPatch(p *schedule.Program, t int) []PatchOp {
	var ops []PatchOp
	for _, after := range []bool{false, true} {
		for j, s := range stepList(p, t, after) {
			if s.Scope == schedule.ScopeCTA && s.Kind != schedule.Fence {
				ops = append(ops, PatchOp{Op: "remove", Path: stepPointer(t, after, j) + "/scope"})
			}
		}
	}
	return ops
}

// reachable is the largest value counter c can reach: its initial value
// plus every signal of the program (saturating).
func reachable(p *schedule.Program, c int32) uint64 {
	v := p.Counters[c].Init
	for i := range p.Tasks {
		for _, list := range [][]schedule.Step{p.Tasks[i].Before, p.Tasks[i].After} {
			for _, s := range list {
				if s.Kind == schedule.Signal && s.Object == c {
					if v += s.Value; v < s.Value {
						return ^uint64(0)
					}
				}
			}
		}
	}
	return v
}

// cyclePatch moves a stuck pinned task after the first later task of its
// worker that signals a counter some stuck thread waits on.
func cyclePatch(p *schedule.Program, f *Finding, st *schedule.State) []PatchOp {
	form := st.Form()
	waited := map[int32]bool{}
	for th := range form.Threads {
		if !st.Finished(th) {
			if op := form.Threads[th].Ops[st.Pos[th]]; op.Kind == schedule.OpWait {
				waited[op.Object] = true
			}
		}
	}
	for _, t := range f.Tasks {
		w := p.Tasks[t].Worker
		if w == schedule.Dynamic {
			continue
		}
		for u := t + 1; u < len(p.Tasks); u++ {
			if p.Tasks[u].Worker != w {
				continue
			}
			for _, s := range append(slicesClone(p.Tasks[u].Before), p.Tasks[u].After...) {
				if s.Kind == schedule.Signal && waited[s.Object] {
					return []PatchOp{{Op: "move", From: taskPointer(t), Path: taskPointer(u)}}
				}
			}
		}
	}
	return nil
}

func slicesClone(s []schedule.Step) []schedule.Step { return append([]schedule.Step(nil), s...) }

// unwrittenBuffer finds the output buffer an output-unwritten finding is
// about, as the static check does, by the gap its message names: the
// buffer, the rectangles written to it, and the last task that writes it
// (-1 for none).
func unwrittenBuffer(p *schedule.Program, f *Finding) (buf int, written []geom.Rect, writer int, ok bool) {
	for bi, b := range p.Buffers {
		if b.Kind != schedule.KindOutput {
			continue
		}
		written, writer = written[:0], -1
		for i := range p.Tasks {
			for _, a := range p.Tasks[i].Writes {
				if int(a.Buffer) == bi {
					written = append(written, geom.Strided(geom.Pos(0, a.Offset), a.Length, a.Rows, a.Stride))
					writer = i
				}
			}
		}
		lo, hi, found, done := unwrittenRun(written, b.Size)
		if done && found && unwrittenMessage(b.Name, lo, hi) == f.Message {
			return bi, written, writer, true
		}
	}
	return 0, nil, 0, false
}

// maxUnwrittenGaps bounds the writes one output-unwritten patch adds.
const maxUnwrittenGaps = 64

// unwrittenPatch adds writes of an output buffer's unwritten bytes (every
// gap, up to maxUnwrittenGaps; none when there are more): to the last task
// that writes the buffer, or to a new dynamic task.
func unwrittenPatch(p *schedule.Program, f *Finding) []PatchOp {
	bi, written, writer, ok := unwrittenBuffer(p, f)
	if !ok {
		return nil
	}
	b := p.Buffers[bi]
	var accesses []any
	for {
		lo, hi, found, done := unwrittenRun(written, b.Size)
		if !done {
			return nil
		}
		if !found {
			break
		}
		if len(accesses) == maxUnwrittenGaps {
			return nil
		}
		access := map[string]any{"buffer": b.Name, "length": hi - lo}
		if lo != 0 {
			access["offset"] = lo
		}
		accesses = append(accesses, access)
		written = append(written, geom.Strided(geom.Pos(0, lo), uint64(hi-lo), 1, 0))
	}
	if writer < 0 {
		names := map[string]bool{}
		for _, t := range p.Tasks {
			names[t.Name] = true
		}
		name := b.Name + ".fill"
		for k := 2; names[name]; k++ {
			name = fmt.Sprintf("%s.fill%d", b.Name, k)
		}
		return []PatchOp{appendTo("/tasks", len(p.Tasks) == 0, map[string]any{"name": name, "writes": accesses})}
	}
	var ops []PatchOp
	for _, a := range accesses {
		ops = append(ops, PatchOp{Op: "add", Path: taskPointer(writer) + "/writes/-", Value: raw(a)})
	}
	return ops
}

// readonlyPatch declares every read-only buffer that task t writes of
// the given kind ("state" on megaproof/v1, "KV_CACHE" on AMK).
func readonlyPatch(p *schedule.Program, t int, kind string) []PatchOp {
	var ops []PatchOp
	seen := map[int32]bool{}
	for _, a := range p.Tasks[t].Writes {
		if p.Buffers[a.Buffer].Kind.ReadOnly() && !seen[a.Buffer] {
			seen[a.Buffer] = true
			ops = append(ops, PatchOp{Op: "replace", Path: "/buffers/" + strconv.Itoa(int(a.Buffer)) + "/kind", Value: raw(kind)})
		}
	}
	return ops
}

// maxSortedAcquires is the longest run of acquires lockOrderPatch sorts;
// a longer one out of order gets no patch.
const maxSortedAcquires = 64

// lockOrderPatch sorts, in each of the given tasks, every run of
// consecutive acquires before its body by semaphore (declaration order),
// as JSON Patch moves: a lock-order inversion between tasks that each hold
// one semaphore while they acquire another cannot happen once every task
// acquires in one order. It returns nil when every such run is in order
// already (the deadlock is not an inversion among these tasks), or when
// one out of order is longer than maxSortedAcquires.
func lockOrderPatch(p *schedule.Program, tasks []int) []PatchOp {
	var ops []PatchOp
	seen := map[int]bool{}
	for _, t := range tasks {
		if seen[t] {
			continue
		}
		seen[t] = true
		steps := p.Tasks[t].Before
		cur := make([]int, len(steps)) // original index of the step now at each place
		for i := range cur {
			cur[i] = i
		}
		for lo := 0; lo < len(steps); {
			if steps[lo].Kind != schedule.Acquire {
				lo++
				continue
			}
			hi := lo
			for hi < len(steps) && steps[hi].Kind == schedule.Acquire {
				hi++
			}
			want := append([]int(nil), cur[lo:hi]...)
			slices.SortStableFunc(want, func(a, b int) int { return int(steps[a].Object) - int(steps[b].Object) })
			if slices.Equal(want, cur[lo:hi]) {
				lo = hi
				continue
			}
			if hi-lo > maxSortedAcquires {
				return nil // the moves would cost the run's length squared
			}
			for k := lo; k < hi; k++ {
				i := slices.Index(cur[k:hi], want[k-lo]) + k
				if i == k {
					continue
				}
				ops = append(ops, PatchOp{Op: "move", From: stepPointer(t, false, i), Path: stepPointer(t, false, k)})
				v := cur[i]
				copy(cur[k+1:i+1], cur[k:i])
				cur[k] = v
			}
			lo = hi
		}
	}
	return ops
}
