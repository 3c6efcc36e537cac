package mpk

import (
	"fmt"
	"math"

	"github.com/megaproof/megaproof/schedule"
)

// MPK's capacities (runtime_header.h).
const (
	MaxInputs  = 7 // MAX_INPUTS_PER_TASK
	MaxOutputs = 3 // MAX_OUTPUTS_PER_TASK
	MaxDims    = 4 // MAX_TENSOR_DIMS
)

// maxSpan bounds a tile's offset and extent: 2^50 bytes (a PiB) is far
// beyond any GPU, and keeps every sum of footprint quantities in int64.
const maxSpan = 1 << 50

// maxRuns bounds the separate accesses one irregular tile maps to.
const maxRuns = 512

// checked is a graph whose values the mapping can use: event positions
// decoded, tensors turned into buffers and byte footprints.
type checked struct {
	g        *Graph
	rank     int64   // the GPU whose events are local (from BEGIN's trigger)
	dep      []int32 // per task: the dependent event's position, or -1
	trig     []int32 // per task: the trigger event's position, or -1
	reads    [][]schedule.Access
	writes   [][]schedule.Access
	bufNames []string
	bufIndex map[string]int32
	written  []bool  // per buffer: some task writes it
	maxEnd   []int64 // per buffer: the end of its farthest tile
	endLeaf  int     // the last task (by position) that triggers END, or -1
}

type checker struct {
	diags
	checked
	accs []schedule.Access // slab
}

// check validates g's values and gathers what the mapping needs.
func check(g *Graph) (*checked, error) {
	c := &checker{checked: checked{g: g, bufIndex: map[string]int32{}, endLeaf: -1}}
	c.graph()
	if err := c.err(); err != nil {
		return nil, err
	}
	return &c.checked, nil
}

func (c *checker) graph() {
	g := c.g
	m, n := len(g.Events), len(g.Tasks)
	if m < 3 {
		c.add(schedule.CodeValue, "$.all_events", "%d events; an MPK graph has at least 3 (TERMINATION, the launch event, END_OF_TASK_GRAPH)", m)
	}
	if n < 2 {
		c.add(schedule.CodeValue, "$.all_tasks", "%d tasks; an MPK graph has at least 2 (TERMINATE, BEGIN_TASK_GRAPH)", n)
	}
	if m < 3 || n < 2 {
		return
	}
	for i := range g.Events {
		c.event(i)
	}
	// The rank is the owner of BEGIN's trigger, event 1, always local.
	if id := g.Tasks[1].TriggerEvent; id >= 0 && id != InvalidEventID && id&NVSHMEMTag == 0 {
		c.rank = (id >> 32) & 0xffff
	}
	c.dep = make([]int32, n)
	c.trig = make([]int32, n)
	c.reads = make([][]schedule.Access, n)
	c.writes = make([][]schedule.Access, n)
	for i := range g.Tasks {
		c.task(i)
		if c.full() {
			return
		}
	}
	seen := map[int64]int{}
	for i, p := range g.FirstTasks {
		path := fmt.Sprintf("$.first_tasks[%d]", i)
		switch j, dup := seen[p]; {
		case p < 2 || p >= int64(n):
			c.add(schedule.CodeReference, path, "first task %d is not a task position in [2, %d)", p, n)
		case dup:
			c.add(schedule.CodeDuplicate, path, "first task %d already listed at $.first_tasks[%d]", p, j)
		default:
			seen[p] = i
		}
	}
}

func (c *checker) event(i int) {
	g := c.g
	e := g.Events[i]
	m, n := len(g.Events), int64(len(g.Tasks))
	path := fmt.Sprintf("$.all_events[%d]", i)
	switch {
	case i == 0 && e.Type != EventTermination:
		c.add(schedule.CodeValue, path+".event_type", "event 0 has type %d; MPK's event 0 is TERMINATION (911)", e.Type)
	case i == 1 && e.Type != EventLaunchDependentTasks:
		c.add(schedule.CodeValue, path+".event_type", "event 1 has type %d; MPK's event 1 is LAUNCH_DEPENDENT_TASKS (903), the prelaunch of every task", e.Type)
	case i == m-1 && e.Type != EventEndOfTaskGraph:
		c.add(schedule.CodeValue, path+".event_type", "the last event has type %d; MPK's last event is END_OF_TASK_GRAPH (910)", e.Type)
	case i > 1 && i < m-1 && e.Type != EventEmpty:
		switch e.Type {
		case EventLaunchTasks, EventLaunchMassiveTasks:
			c.add(schedule.CodeValue, path+".event_type", "unsupported: event type %d (LAUNCH_TASKS) predates MPK's prelaunch rewrite (#299), after which every event between the launch event and END is EMPTY (900)", e.Type)
		default:
			c.add(schedule.CodeValue, path+".event_type", "event %d has type %d; events between the launch event and END are EMPTY (900)", i, e.Type)
		}
	}
	switch {
	case e.NumTriggers < 0 || e.NumTriggers > math.MaxInt32:
		c.add(schedule.CodeSize, path+".num_triggers", "num_triggers %d is outside MPK's int", e.NumTriggers)
	case i == 1 && e.NumTriggers != 1:
		c.add(schedule.CodeValue, path+".num_triggers", "the launch event has num_triggers %d; MPK's is 1 (BEGIN_TASK_GRAPH triggers it once per iteration)", e.NumTriggers)
	case i == m-1 && e.NumTriggers == 0:
		c.add(schedule.CodeValue, path+".num_triggers", "END_OF_TASK_GRAPH with num_triggers 0 never fires: no iteration would follow and the kernel would not terminate")
	}
	switch {
	case e.FirstTask < 0 || e.FirstTask > n:
		c.add(schedule.CodeValue, path+".first_task_id", "first_task_id %d is outside [0, %d]", e.FirstTask, n)
	case e.LastTask < e.FirstTask || e.LastTask > n:
		c.add(schedule.CodeValue, path+".last_task_id", "last_task_id %d is outside [first_task_id %d, %d]", e.LastTask, e.FirstTask, n)
	case i == 1 && (e.FirstTask != 2 || e.LastTask != n):
		c.add(schedule.CodeValue, path, "the launch event covers [%d, %d); MPK's covers every task but TERMINATE and BEGIN, [2, %d)", e.FirstTask, e.LastTask, n)
	}
}

// eventRef decodes an event id: its position, or -1 for InvalidEventID.
func (c *checker) eventRef(id int64, path string) (int32, bool) {
	if id == InvalidEventID {
		return -1, true
	}
	switch pos, gpu, nvshmem := EventPos(id); {
	case id < 0:
		c.add(schedule.CodeValue, path, "negative event id %d", id)
	case nvshmem:
		c.add(schedule.CodeValue, path, "unsupported: event id %#x carries the NVSHMEM tag: it is signalled by another GPU through NVSHMEM (multi-GPU events are not supported)", id)
	case id>>48 != 0:
		c.add(schedule.CodeValue, path, "event id %#x has bits set above the owner-GPU field", id)
	case gpu != c.rank:
		c.add(schedule.CodeValue, path, "unsupported: event id %#x belongs to GPU %d, not to this file's GPU %d (multi-GPU events are not supported)", id, gpu, c.rank)
	case pos >= int64(len(c.g.Events)):
		c.add(schedule.CodeReference, path, "event id %d names position %d; the graph has %d events", id, pos, len(c.g.Events))
	default:
		return int32(pos), true
	}
	return -1, false
}

// taskTypeProblem says why a task type is not accepted at position i >= 2,
// or "".
func taskTypeProblem(t int64) string {
	switch {
	case t == TaskTerminate || t == TaskBeginTaskGraph:
		return fmt.Sprintf("a second %s task; MPK has one, at position %d", TaskTypeName(t), map[int64]int{TaskTerminate: 0, TaskBeginTaskGraph: 1}[t])
	case t == TaskAllReduce || (t >= 300 && t <= 349):
		return fmt.Sprintf("unsupported: task type %d (%s) is a multi-GPU collective whose synchronization lives inside its body (NVSHMEM); multi-GPU graphs are not supported", t, TaskTypeName(t))
	case t >= 200 && t <= 203:
		return fmt.Sprintf("task type %d is a scheduler pseudo-type MPK uses only in its profiler", t)
	case t >= 101 && t <= 149, t >= 151 && t <= 197, t >= 231 && t <= 297:
		return ""
	}
	return fmt.Sprintf("unknown task type %d", t)
}

func (c *checker) task(i int) {
	t := &c.g.Tasks[i]
	path := fmt.Sprintf("$.all_tasks[%d]", i)
	dep, depOK := c.eventRef(t.DependentEvent, path+".dependent_event")
	trig, trigOK := c.eventRef(t.TriggerEvent, path+".trigger_event")
	c.dep[i], c.trig[i] = dep, trig
	m := int32(len(c.g.Events))
	switch i {
	case 0, 1:
		want := map[int]int64{0: TaskTerminate, 1: TaskBeginTaskGraph}[i]
		if t.Type != want {
			c.add(schedule.CodeValue, path+".task_type", "task %d has type %d; MPK's task %d is %s (%d)", i, t.Type, i, TaskTypeName(want), want)
		}
		if depOK && dep != -1 {
			c.add(schedule.CodeValue, path+".dependent_event", "%s waits on no event; have %d", TaskTypeName(want), t.DependentEvent)
		}
		if trigOK && i == 0 && trig != -1 {
			c.add(schedule.CodeValue, path+".trigger_event", "TERMINATE triggers no event; have %d", t.TriggerEvent)
		}
		if trigOK && i == 1 && trig != 1 {
			c.add(schedule.CodeValue, path+".trigger_event", "BEGIN_TASK_GRAPH triggers the launch event (position 1); have %d", t.TriggerEvent)
		}
		if len(t.Inputs) > 0 || len(t.Outputs) > 0 {
			c.add(schedule.CodeValue, path, "%s has no tensors", TaskTypeName(want))
		}
		return
	}
	if msg := taskTypeProblem(t.Type); msg != "" {
		c.add(schedule.CodeValue, path+".task_type", "%s", msg)
	}
	if trigOK && (trig == 0 || trig == 1) {
		c.add(schedule.CodeValue, path+".trigger_event", "a task triggers event %d; only BEGIN_TASK_GRAPH triggers the launch event, and no task the TERMINATION event", trig)
	}
	if trigOK && trig == m-1 {
		c.endLeaf = i
	}
	if len(t.Inputs) > MaxInputs {
		c.add(schedule.CodeLimit, path+".inputs", "%d inputs exceed MPK's MAX_INPUTS_PER_TASK of %d", len(t.Inputs), MaxInputs)
	}
	if len(t.Outputs) > MaxOutputs {
		c.add(schedule.CodeLimit, path+".outputs", "%d outputs exceed MPK's MAX_OUTPUTS_PER_TASK of %d", len(t.Outputs), MaxOutputs)
	}
	start := len(c.accs)
	for j := range t.Inputs {
		c.tensor(&t.Inputs[j], fmt.Sprintf("%s.inputs[%d]", path, j), false)
	}
	mid := len(c.accs)
	for j := range t.Outputs {
		c.tensor(&t.Outputs[j], fmt.Sprintf("%s.outputs[%d]", path, j), true)
	}
	end := len(c.accs)
	c.reads[i] = c.accs[start:mid:mid]
	c.writes[i] = c.accs[mid:end:end]
}

// tensor checks one tile and appends its footprint to the slab.
func (c *checker) tensor(x *Tensor, path string, write bool) {
	if x.BasePtr == "" {
		c.add(schedule.CodeName, path+".base_ptr", "empty tensor name")
		return
	}
	if x.BasePtr == NullPtr {
		if x.DataType != DTUnknown || len(x.Dims) != 0 || len(x.Strides) != 0 {
			c.add(schedule.CodeValue, path, "an absent tensor (nullptr) has data_type 999 and no dims or strides")
		}
		return
	}
	es := ElementSize(x.DataType)
	switch {
	case es != 0:
	case fourBit(x.DataType):
		c.add(schedule.CodeValue, path+".data_type", "unsupported: data type %d is a 4-bit type, which MPK gives no byte size", x.DataType)
	case x.DataType == DTUnknown:
		c.add(schedule.CodeValue, path+".data_type", "data type 999 (unknown) belongs to absent tensors (nullptr) only")
	default:
		c.add(schedule.CodeValue, path+".data_type", "unknown data type %d", x.DataType)
	}
	if len(x.Dims) != len(x.Strides) {
		c.add(schedule.CodeValue, path+".strides", "%d strides for %d dims", len(x.Strides), len(x.Dims))
		return
	}
	if len(x.Dims) > MaxDims {
		c.add(schedule.CodeLimit, path+".dims", "rank %d exceeds MPK's MAX_TENSOR_DIMS of %d", len(x.Dims), MaxDims)
		return
	}
	ok := es != 0
	var span uint64 // Σ (dims-1)·strides, in elements
	for d, n := range x.Dims {
		s := x.Strides[d]
		switch {
		case n == 0:
			c.add(schedule.CodeEmptyAccess, fmt.Sprintf("%s.dims[%d]", path, d), "dimension 0 gives an empty tile")
			ok = false
		case n < 0 || n > math.MaxInt32:
			c.add(schedule.CodeSize, fmt.Sprintf("%s.dims[%d]", path, d), "dimension %d is outside MPK's positive int", n)
			ok = false
		}
		if s < 0 || s > math.MaxInt32 {
			c.add(schedule.CodeSize, fmt.Sprintf("%s.strides[%d]", path, d), "stride %d is outside MPK's non-negative int", s)
			ok = false
		}
		if ok {
			span += uint64(n-1) * uint64(s)
		}
	}
	if x.Offset < -maxSpan || x.Offset > maxSpan {
		c.add(schedule.CodeSize, path+".offset", "offset %d is beyond 2^50 bytes", x.Offset)
		ok = false
	}
	if !ok {
		return
	}
	if span >= maxSpan/uint64(es) {
		c.add(schedule.CodeSize, path, "tile spans more than 2^50 bytes")
		return
	}
	bi, seen := c.bufIndex[x.BasePtr]
	if !seen {
		bi = int32(len(c.bufNames))
		c.bufIndex[x.BasePtr] = bi
		c.bufNames = append(c.bufNames, x.BasePtr)
		c.written = append(c.written, false)
		c.maxEnd = append(c.maxEnd, 0)
	}
	if write {
		c.written[bi] = true
	}
	c.maxEnd[bi] = max(c.maxEnd[bi], x.Offset+int64(span+1)*es)
	before := len(c.accs)
	var more bool
	c.accs, more = appendFootprint(c.accs, bi, x, es)
	if !more {
		c.accs = c.accs[:before]
		c.add(schedule.CodeLimit, path, "tile is too irregular: more than %d separate runs of bytes", maxRuns)
	}
}
