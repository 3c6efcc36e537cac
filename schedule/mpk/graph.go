package mpk

import "strconv"

// Graph is one MPK task-graph file (task_graph_rank{R}.json) as written:
// the events and tasks by position, and the informational first_tasks.
// [Parse] reads it, [Marshal] writes it in MPK's own layout, and
// [Options.Map] maps it to a schedule.Program.
type Graph struct {
	Events []Event
	Tasks  []Task
	// FirstTasks are the positions of the tasks of layers without
	// in-edges. The runtime does not read them; nil is written as null.
	FirstTasks []int64
}

// Event is one entry of all_events.
type Event struct {
	Type        int64 // event_type: EventEmpty, EventEndOfTaskGraph, ...
	NumTriggers int64 // num_triggers: completions needed per iteration
	FirstTask   int64 // first_task_id: start of the task range, inclusive
	LastTask    int64 // last_task_id: end of the task range, exclusive
}

// Task is one entry of all_tasks.
type Task struct {
	Type    int64 // task_type: TaskLinear, TaskRMSNorm, ...
	Variant int64 // variant_id
	// Inputs and Outputs are the task's tensor tiles; nil is written as
	// null (what MPK writes for a task without any).
	Inputs, Outputs []Tensor
	// TriggerEvent and DependentEvent are event ids; InvalidEventID
	// means none.
	TriggerEvent, DependentEvent int64
	// The five views of the task's 8-byte metadata union, kept as read.
	RequestID, ExpertOffset, KVIdx, MergeTaskOffset, TaskOffset int64
}

// Tensor is one tile a task reads or writes.
type Tensor struct {
	BasePtr  string  // base_ptr: the tensor's name, or "nullptr" for none
	Offset   int64   // offset: byte offset of the tile from the tensor base
	DataType int64   // data_type: DTBF16, DTFP32, ...
	Dims     []int64 // dims: the tile's shape, outermost first
	Strides  []int64 // strides: element strides of the whole tensor
}

// Event types (EventType in MPK's runtime_header.h).
const (
	EventEmpty                = 900
	EventLaunchTasks          = 901 // absent from files since the prelaunch rewrite
	EventLaunchMassiveTasks   = 902 // absent from files since the prelaunch rewrite
	EventLaunchDependentTasks = 903
	EventEndOfTaskGraph       = 910
	EventTermination          = 911
	EventInvalid              = 999
)

// Event id encoding: position in bits 0-31, owner GPU in bits 32-47, and
// NVSHMEMTag for events signalled remotely.
const (
	InvalidEventID = 0x7ffffffffffffffe // EVENT_INVALID_ID: no event
	NVSHMEMTag     = 0x1e00000000000000 // EVENT_NVSHMEM_TAG
)

// Task types with a role in the mapping (TaskType in runtime_header.h);
// the names of others are in [TaskTypeName].
const (
	TaskTerminate          = 0
	TaskBeginTaskGraph     = 10
	TaskEmbedding          = 101
	TaskAllReduce          = 106 // the legacy multi-GPU allreduce
	TaskLinearWithResidual = 108
	TaskSiLUMul            = 118
	TaskRMSNorm            = 119
	TaskLinear             = 120
	TaskIdentity           = 121
	TaskNVSHMEMAllgather   = 301 // NVSHMEM_ALLGATHER_STRIDED_PUT
	TaskNVSHMEMAllreduce   = 302 // NVSHMEM_TILE_ALLREDUCE
)

var taskNames = map[int64]string{
	TaskTerminate: "TERMINATE", TaskBeginTaskGraph: "BEGIN_TASK_GRAPH",
	TaskEmbedding: "EMBEDDING", TaskAllReduce: "ALLREDUCE", TaskLinearWithResidual: "LINEAR_WITH_RESIDUAL",
	TaskSiLUMul: "SILU_MUL", TaskRMSNorm: "RMS_NORM", TaskLinear: "LINEAR", TaskIdentity: "IDENTITY",
	TaskNVSHMEMAllgather: "NVSHMEM_ALLGATHER_STRIDED_PUT", TaskNVSHMEMAllreduce: "NVSHMEM_TILE_ALLREDUCE",
}

// TaskTypeName names a task type: MPK's name where this package knows
// it, "TYPE<n>" otherwise.
func TaskTypeName(t int64) string {
	if s, ok := taskNames[t]; ok {
		return s
	}
	return "TYPE" + strconv.FormatInt(t, 10)
}

// Data types (mirage::type::DataType) this package gives a size.
const (
	DTFP8     = 930
	DTInt8    = 935
	DTUInt8   = 936
	DTFP16    = 940
	DTBF16    = 941
	DTInt16   = 945
	DTUInt16  = 946
	DTFP32    = 950
	DTInt32   = 955
	DTUInt32  = 956
	DTDouble  = 960
	DTInt64   = 965
	DTUInt64  = 966
	DTUnknown = 999 // only with base_ptr "nullptr"
)

// NullPtr is the base_ptr of an absent (EMPTY) tensor.
const NullPtr = "nullptr"

// ElementSize is the byte size of a data type, or 0 for a type without
// one (the 4-bit types, DTUnknown and unknown values).
func ElementSize(dt int64) int64 {
	switch dt {
	case DTFP8, DTInt8, DTUInt8:
		return 1
	case DTFP16, DTBF16, DTInt16, DTUInt16:
		return 2
	case DTFP32, DTInt32, DTUInt32:
		return 4
	case DTDouble, DTInt64, DTUInt64:
		return 8
	}
	return 0
}

// fourBit reports the 4-bit data types, which MPK gives no byte size
// (get_datatype_size asserts).
func fourBit(dt int64) bool { return dt == 920 || dt == 925 || dt == 926 }

// EventPos decodes a valid event id: its position, owner GPU and whether
// it carries NVSHMEMTag. Test for InvalidEventID first: it has the tag
// bits set.
func EventPos(id int64) (pos int64, gpu int64, nvshmem bool) {
	return id & 0xffffffff, (id >> 32) & 0xffff, id&NVSHMEMTag != 0
}

// Marshal writes g exactly as MPK does: nlohmann::json::dump(2), two-space
// indent, keys in alphabetical order, nil lists as null, no final
// newline. Parse(Marshal(g)) gives g back.
func Marshal(g *Graph) []byte {
	w := writer{buf: make([]byte, 0, 256+len(g.Tasks)*1400)}
	w.raw("{\n")
	w.key(1, "all_events")
	if g.Events == nil {
		w.raw("null")
	} else if len(g.Events) == 0 {
		w.raw("[]")
	} else {
		w.raw("[\n")
		for i, e := range g.Events {
			w.indent(2)
			w.raw("{\n")
			w.intField(3, "event_type", e.Type, true)
			w.intField(3, "first_task_id", e.FirstTask, true)
			w.intField(3, "last_task_id", e.LastTask, true)
			w.intField(3, "num_triggers", e.NumTriggers, false)
			w.indent(2)
			w.raw("}")
			w.sep(i < len(g.Events)-1)
		}
		w.indent(1)
		w.raw("]")
	}
	w.raw(",\n")
	w.key(1, "all_tasks")
	if g.Tasks == nil {
		w.raw("null")
	} else if len(g.Tasks) == 0 {
		w.raw("[]")
	} else {
		w.raw("[\n")
		for i := range g.Tasks {
			w.task(&g.Tasks[i])
			w.sep(i < len(g.Tasks)-1)
		}
		w.indent(1)
		w.raw("]")
	}
	w.raw(",\n")
	w.key(1, "first_tasks")
	w.ints(1, g.FirstTasks)
	w.raw("\n}")
	return w.buf
}

type writer struct{ buf []byte }

func (w *writer) raw(s string) { w.buf = append(w.buf, s...) }

func (w *writer) indent(level int) {
	for range level {
		w.buf = append(w.buf, ' ', ' ')
	}
}

func (w *writer) key(level int, k string) {
	w.indent(level)
	w.buf = append(w.buf, '"')
	w.buf = append(w.buf, k...)
	w.buf = append(w.buf, '"', ':', ' ')
}

// sep ends a list element: a comma when more follow, then a newline.
func (w *writer) sep(more bool) {
	if more {
		w.buf = append(w.buf, ',')
	}
	w.buf = append(w.buf, '\n')
}

func (w *writer) intField(level int, k string, v int64, more bool) {
	w.key(level, k)
	w.buf = strconv.AppendInt(w.buf, v, 10)
	w.sep(more)
}

// ints writes an int list whose opening bracket is at level.
func (w *writer) ints(level int, vs []int64) {
	switch {
	case vs == nil:
		w.raw("null")
		return
	case len(vs) == 0:
		w.raw("[]")
		return
	}
	w.raw("[\n")
	for i, v := range vs {
		w.indent(level + 1)
		w.buf = strconv.AppendInt(w.buf, v, 10)
		w.sep(i < len(vs)-1)
	}
	w.indent(level)
	w.raw("]")
}

func (w *writer) task(t *Task) {
	w.indent(2)
	w.raw("{\n")
	w.intField(3, "dependent_event", t.DependentEvent, true)
	w.intField(3, "expert_offset", t.ExpertOffset, true)
	w.key(3, "inputs")
	w.tensors(t.Inputs)
	w.raw(",\n")
	w.intField(3, "kv_idx", t.KVIdx, true)
	w.intField(3, "merge_task_offset", t.MergeTaskOffset, true)
	w.key(3, "outputs")
	w.tensors(t.Outputs)
	w.raw(",\n")
	w.intField(3, "request_id", t.RequestID, true)
	w.intField(3, "task_offset", t.TaskOffset, true)
	w.intField(3, "task_type", t.Type, true)
	w.intField(3, "trigger_event", t.TriggerEvent, true)
	w.intField(3, "variant_id", t.Variant, false)
	w.indent(2)
	w.raw("}")
}

func (w *writer) tensors(ts []Tensor) {
	switch {
	case ts == nil:
		w.raw("null")
		return
	case len(ts) == 0:
		w.raw("[]")
		return
	}
	w.raw("[\n")
	for i, x := range ts {
		w.indent(4)
		w.raw("{\n")
		w.key(5, "base_ptr")
		w.quote(x.BasePtr)
		w.raw(",\n")
		w.intField(5, "data_type", x.DataType, true)
		w.key(5, "dims")
		w.ints(5, x.Dims)
		w.raw(",\n")
		w.intField(5, "offset", x.Offset, true)
		w.key(5, "strides")
		w.ints(5, x.Strides)
		w.raw("\n")
		w.indent(4)
		w.raw("}")
		w.sep(i < len(ts)-1)
	}
	w.indent(3)
	w.raw("]")
}

// quote writes s as a JSON string the way nlohmann does: quote and
// backslash escaped, control characters as \b \f \n \r \t or \u00xx,
// everything else as it is.
func (w *writer) quote(s string) {
	const hex = "0123456789abcdef"
	w.buf = append(w.buf, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			w.buf = append(w.buf, '\\', c)
		case c == '\b':
			w.raw(`\b`)
		case c == '\f':
			w.raw(`\f`)
		case c == '\n':
			w.raw(`\n`)
		case c == '\r':
			w.raw(`\r`)
		case c == '\t':
			w.raw(`\t`)
		case c < 0x20:
			w.buf = append(w.buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			w.buf = append(w.buf, c)
		}
	}
	w.buf = append(w.buf, '"')
}
