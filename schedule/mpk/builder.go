package mpk

import (
	"fmt"
	"slices"
)

// Whole is the [Operand.Dim] of an operand every task of a layer reads or
// writes entirely (MPK's input_map -1: replicated).
const Whole = -1

// Operand is one tensor of a layer: the tensor's name and the dimension
// the layer's grid partitions (task b of a grid of g gets slice b of g
// along it), or Whole.
type Operand struct {
	Tensor string
	Dim    int
}

// Builder assembles an MPK task graph layer by layer the way MPK's
// register_mugraph lays one out, so that tests and benchmarks can produce
// MPK-shaped files of any size: layers in topological order, one task per
// block of a layer's 1-D grid, tiles derived from the operands' partition
// (dims = shape / grid along the partitioned dimension, byte offset =
// element size · slice · stride), and events from read-after-write edges
// only:
//
//   - each layer's in-edges come from the last writer of each input;
//   - an edge u→v is dropped when another path from u to v remains (MPK's
//     residual stripping, per layer);
//   - consumers with the same producer layers share their events: one
//     event per slice of gcd(grid sizes) when a single producer and every
//     consumer partition each shared tensor along the same dimension, one
//     all-to-all event otherwise (num_triggers = the producer tasks it
//     collects);
//   - the consumers of one event are laid out together, event by event,
//     so each event's range is the contiguous run of its waiters; leaf
//     layers trigger END_OF_TASK_GRAPH.
//
// A producer layer whose consumers would need two different events is an
// error, as in MPK (a task triggers one event). Metadata is what MPK
// writes for a generic task of block b: request_id b, kv_idx 65535,
// expert_offset and task_offset b - 65536, merge_task_offset -1.
type Builder struct {
	tensors map[string]*tensorDecl
	layers  []*layerDecl
	err     error
}

type tensorDecl struct {
	dtype   int64
	shape   []int64
	strides []int64
	writer  int // the last layer that wrote it, -1
}

type layerDecl struct {
	typ       int64
	grid      int
	ins, outs []Operand
	producers []int // layers it reads from (last writers), before stripping
	group     int   // its consumer group
	firstTask int
	positions []int // task position of each block
}

// NewBuilder starts an empty graph.
func NewBuilder() *Builder { return &Builder{tensors: map[string]*tensorDecl{}} }

func (b *Builder) fail(format string, args ...any) {
	if b.err == nil {
		b.err = fmt.Errorf("mpk: "+format, args...)
	}
}

// Tensor declares a row-major tensor of the given data type and shape
// (at most four dimensions, each at least 1).
func (b *Builder) Tensor(name string, dtype int64, shape ...int64) {
	switch {
	case b.tensors[name] != nil:
		b.fail("tensor %q declared twice", name)
		return
	case ElementSize(dtype) == 0:
		b.fail("tensor %q: data type %d has no size", name, dtype)
		return
	case len(shape) > MaxDims:
		b.fail("tensor %q: rank %d exceeds %d", name, len(shape), MaxDims)
		return
	}
	st := make([]int64, len(shape))
	acc := int64(1)
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] < 1 {
			b.fail("tensor %q: dimension %d is %d", name, d, shape[d])
			return
		}
		st[d] = acc
		acc *= shape[d]
	}
	b.tensors[name] = &tensorDecl{dtype: dtype, shape: slices.Clone(shape), strides: st, writer: -1}
}

// Layer appends a layer of grid tasks of the given type reading inputs and
// writing outputs (at most MaxInputs and MaxOutputs).
func (b *Builder) Layer(taskType int64, grid int, inputs, outputs []Operand) {
	li := len(b.layers)
	l := &layerDecl{typ: taskType, grid: grid, ins: slices.Clone(inputs), outs: slices.Clone(outputs)}
	switch {
	case grid < 1:
		b.fail("layer %d: grid %d", li, grid)
	case len(inputs) > MaxInputs || len(outputs) > MaxOutputs:
		b.fail("layer %d: %d inputs and %d outputs exceed MPK's %d and %d", li, len(inputs), len(outputs), MaxInputs, MaxOutputs)
	case taskTypeProblem(taskType) != "":
		b.fail("layer %d: %s", li, taskTypeProblem(taskType))
	}
	for _, op := range append(slices.Clone(inputs), outputs...) {
		t := b.tensors[op.Tensor]
		switch {
		case t == nil:
			b.fail("layer %d: undeclared tensor %q", li, op.Tensor)
			return
		case op.Dim != Whole && (op.Dim < 0 || op.Dim >= len(t.shape)):
			b.fail("layer %d: tensor %q has no dimension %d", li, op.Tensor, op.Dim)
			return
		case op.Dim != Whole && t.shape[op.Dim]%int64(grid) != 0:
			b.fail("layer %d: dimension %d of tensor %q (%d) does not split into %d", li, op.Dim, op.Tensor, t.shape[op.Dim], grid)
			return
		}
	}
	for _, op := range inputs {
		if w := b.tensors[op.Tensor].writer; w >= 0 && !slices.Contains(l.producers, w) {
			l.producers = append(l.producers, w)
		}
	}
	for _, op := range outputs {
		b.tensors[op.Tensor].writer = li
	}
	b.layers = append(b.layers, l)
}

// Graph lays the graph out, or reports the first misuse of the builder.
func (b *Builder) Graph() (*Graph, error) {
	if b.err != nil {
		return nil, b.err
	}
	nl := len(b.layers)
	// Reachability over layers (a bitset per layer), to strip edges
	// another path implies.
	words := (nl + 63) / 64
	reach := make([][]uint64, nl) // reach[v]: layers with a path to v
	for v, l := range b.layers {
		reach[v] = make([]uint64, words)
		for _, u := range l.producers {
			reach[v][u/64] |= 1 << (u % 64)
			for i, w := range reach[u] {
				reach[v][i] |= w
			}
		}
	}
	for _, l := range b.layers {
		var kept []int
		for _, u := range l.producers {
			implied := false
			for _, w := range l.producers {
				if w != u && reach[w][u/64]&(1<<(u%64)) != 0 {
					implied = true
					break
				}
			}
			if !implied {
				kept = append(kept, u)
			}
		}
		slices.Sort(kept)
		l.producers = kept
	}
	// Consumer groups: layers with the same producers share events.
	type group struct {
		producers []int
		consumers []int
		slices    int // events (1: all-to-all)
		first     int // first event position
	}
	var groups []*group
	trigger := make([]int, nl) // group each layer's tasks trigger, -1: END
	for i := range trigger {
		trigger[i] = -1
	}
	for v, l := range b.layers {
		if len(l.producers) == 0 {
			l.group = -1
			continue
		}
		gi := slices.IndexFunc(groups, func(g *group) bool { return slices.Equal(g.producers, l.producers) })
		if gi < 0 {
			gi = len(groups)
			groups = append(groups, &group{producers: l.producers})
		}
		groups[gi].consumers = append(groups[gi].consumers, v)
		l.group = gi
		for _, u := range l.producers {
			if trigger[u] >= 0 && trigger[u] != gi {
				return nil, fmt.Errorf("mpk: layer %d would trigger two events (its consumers have different producers), which MPK cannot express", u)
			}
			trigger[u] = gi
		}
	}
	for _, g := range groups {
		g.slices = 1
		if len(g.producers) == 1 {
			g.slices = b.sliceCount(g.producers[0], g.consumers)
		}
	}

	// Positions: TERMINATE, BEGIN, the first layers, then each group's
	// consumers event by event, once its producers are laid out.
	out := &Graph{}
	out.Tasks = append(out.Tasks,
		Task{Type: TaskTerminate, DependentEvent: InvalidEventID, TriggerEvent: InvalidEventID, RequestID: -1, ExpertOffset: -1, KVIdx: -1, MergeTaskOffset: -1, TaskOffset: -1},
		Task{Type: TaskBeginTaskGraph, DependentEvent: InvalidEventID, TriggerEvent: 1, RequestID: -1, ExpertOffset: -1, KVIdx: -1, MergeTaskOffset: -1, TaskOffset: -1})
	placed := make([]bool, nl)
	place := func(v, lo, hi int) {
		l := b.layers[v]
		if l.positions == nil {
			l.positions = make([]int, l.grid)
		}
		for bid := lo; bid < hi; bid++ {
			l.positions[bid] = len(out.Tasks)
			out.Tasks = append(out.Tasks, Task{Type: l.typ})
		}
		placed[v] = true
	}
	for v, l := range b.layers {
		if len(l.producers) == 0 {
			place(v, 0, l.grid)
			for _, p := range l.positions {
				out.FirstTasks = append(out.FirstTasks, int64(p))
			}
		}
	}
	type rng struct{ first, last int }
	var ranges []rng // per event from position 2
	done := make([]bool, len(groups))
	for left := len(groups); left > 0; {
		progress := false
		for gi, g := range groups {
			if done[gi] || slices.ContainsFunc(g.producers, func(u int) bool { return !placed[u] }) {
				continue
			}
			g.first = 2 + len(ranges)
			for j := range g.slices {
				r := rng{first: len(out.Tasks)}
				for _, v := range g.consumers {
					n := b.layers[v].grid / g.slices
					place(v, j*n, (j+1)*n)
				}
				r.last = len(out.Tasks)
				ranges = append(ranges, r)
			}
			done[gi], progress = true, true
			left--
		}
		if !progress {
			return nil, fmt.Errorf("mpk: the layer graph has a cycle")
		}
	}
	nEvents := 2 + len(ranges) + 1
	end := int64(nEvents - 1)
	n := int64(len(out.Tasks))
	out.Events = make([]Event, 0, nEvents)
	out.Events = append(out.Events,
		Event{Type: EventTermination, NumTriggers: 1},
		Event{Type: EventLaunchDependentTasks, NumTriggers: 1, FirstTask: 2, LastTask: n})
	for _, r := range ranges {
		out.Events = append(out.Events, Event{Type: EventEmpty, FirstTask: int64(r.first), LastTask: int64(r.last)})
	}
	out.Events = append(out.Events, Event{Type: EventEndOfTaskGraph})

	// Tasks: tiles, waits and triggers.
	for li, l := range b.layers {
		for bid, pos := range l.positions {
			t := &out.Tasks[pos]
			t.RequestID, t.KVIdx, t.ExpertOffset, t.TaskOffset, t.MergeTaskOffset = int64(bid), 65535, int64(bid)-65536, int64(bid)-65536, -1
			t.DependentEvent = InvalidEventID
			if l.group >= 0 {
				g := groups[l.group]
				t.DependentEvent = int64(g.first + bid/(l.grid/g.slices))
			}
			var ev int64
			if gi := trigger[li]; gi < 0 {
				ev = end
			} else {
				g := groups[gi]
				ev = int64(g.first + bid/(l.grid/g.slices))
			}
			t.TriggerEvent = ev
			out.Events[ev].NumTriggers++
			for _, op := range l.ins {
				t.Inputs = append(t.Inputs, b.tile(op, l.grid, bid))
			}
			for _, op := range l.outs {
				t.Outputs = append(t.Outputs, b.tile(op, l.grid, bid))
			}
		}
	}
	return out, nil
}

// sliceCount is the number of events between producer layer u and its
// consumers: gcd of the grids when every tensor u writes and a consumer
// reads is partitioned along one dimension by u and by every consumer,
// else 1.
func (b *Builder) sliceCount(u int, consumers []int) int {
	pl := b.layers[u]
	g := pl.grid
	for _, v := range consumers {
		cl := b.layers[v]
		shared := false
		for _, in := range cl.ins {
			for _, o := range pl.outs {
				if o.Tensor != in.Tensor {
					continue
				}
				shared = true
				if o.Dim == Whole || o.Dim != in.Dim {
					return 1
				}
			}
		}
		if !shared {
			return 1
		}
		g = gcd(g, cl.grid)
	}
	return g
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// tile is block bid's tile of an operand of a layer with grid g.
func (b *Builder) tile(op Operand, g, bid int) Tensor {
	t := b.tensors[op.Tensor]
	x := Tensor{BasePtr: op.Tensor, DataType: t.dtype, Dims: slices.Clone(t.shape), Strides: slices.Clone(t.strides)}
	if op.Dim != Whole {
		part := t.shape[op.Dim] / int64(g)
		x.Dims[op.Dim] = part
		x.Offset = ElementSize(t.dtype) * part * int64(bid) * t.strides[op.Dim]
	}
	return x
}
