package amk

import (
	"fmt"
	"github.com/megaproof/megaproof/internal/jsontree"
	"math"
	"strconv"

	"github.com/megaproof/megaproof/schedule"
)

func (m *mapper) tasks(n *node) {
	if n == nil {
		return
	}
	list, ok := m.array(n, "$.tasks")
	if !ok {
		return
	}
	if len(list) > schedule.MaxTasks {
		m.add(schedule.CodeLimit, "$.tasks", "%d tasks exceed the limit of %d", len(list), schedule.MaxTasks)
		return
	}
	ids := map[int64]int{}
	if len(list) > 0 {
		m.p.Tasks = make([]schedule.Task, 0, len(list))
	}
	for i, tn := range list {
		m.task(tn, fmt.Sprintf("$.tasks[%d]", i), i, ids)
	}
}

// task maps one AMK task: its waits (acquire, gpu scope), its body's
// footprint, and one +1 release signal on its out_counter.
func (m *mapper) task(tn *node, path string, i int, ids map[int64]int) {
	t := schedule.Task{Name: fmt.Sprintf("task@%d", i), Worker: schedule.Dynamic}
	defer func() { m.p.Tasks = append(m.p.Tasks, t) }()
	if !m.object(tn, path) {
		return
	}
	var id int64
	idOK := false
	if v := m.required(tn, path, "id"); v != nil {
		if id, idOK = m.integer(v, path+".id"); idOK {
			if j, dup := ids[id]; dup {
				m.add(schedule.CodeDuplicate, path+".id", "task id %d already used by $.tasks[%d]", id, j)
				idOK = false
			} else {
				ids[id] = i
			}
		}
	}
	op := ""
	if v := m.required(tn, path, "op"); v != nil {
		if s, ok := m.str(v, path+".op"); ok {
			if ops[s] {
				op = s
			} else {
				m.add(schedule.CodeValue, path+".op", "unknown opcode %q", s)
			}
		}
	}
	t.Op = op
	if idOK {
		t.Name = fmt.Sprintf("t%d", id)
		if op != "" {
			t.Name += "." + op
		}
	}

	inputs := m.bufferList(tn, path, "inputs", MaxInputs)
	outputs := m.bufferList(tn, path, "outputs", MaxOutputs)

	if v := m.required(tn, path, "out_counter"); v != nil {
		if ci, ok := m.counterRef(v, path+".out_counter"); ok {
			t.After = []schedule.Step{{Kind: schedule.Signal, Object: int32(ci), Value: 1}}
		}
	}
	if v := optional(tn, "waits"); v != nil {
		if ws, ok := m.array(v, path+".waits"); ok {
			if len(ws) > MaxWaits {
				m.add(schedule.CodeLimit, path+".waits", "%d waits exceed AMK's ABI limit of %d", len(ws), MaxWaits)
			} else {
				for j, wn := range ws {
					if s, ok := m.wait(wn, fmt.Sprintf("%s.waits[%d]", path, j)); ok {
						t.Before = append(t.Before, s)
					}
				}
			}
		}
	}
	if v := optional(tn, "sm"); v != nil {
		if sm, ok := m.integer(v, path+".sm"); ok {
			switch {
			case sm < 0:
				m.add(schedule.CodeWorker, path+".sm", "negative SM %d", sm)
			case sm >= schedule.MaxWorkers:
				m.add(schedule.CodeLimit, path+".sm", "SM %d exceeds the limit of %d workers", sm, schedule.MaxWorkers)
			default:
				t.Worker = int32(sm)
				m.maxSM = max(m.maxSM, sm)
				m.smPaths = append(m.smPaths, smUse{path + ".sm", sm})
			}
		}
	}
	params := m.params(tn, path, &t)
	if op == "" || inputs == nil || outputs == nil {
		return
	}
	m.footprint(&t, path, op, *inputs, *outputs, params)
}

// bufferRef is one entry of a task's inputs or outputs.
type bufferRef struct {
	index int // into m.p.Buffers
}

// bufferList reads a task's inputs or outputs: buffer ids, looked up. It
// returns nil when the list is unusable.
func (m *mapper) bufferList(tn *node, path, key string, limit int) *[]bufferRef {
	v := m.required(tn, path, key)
	if v == nil {
		return nil
	}
	lp := path + "." + key
	list, ok := m.array(v, lp)
	if !ok {
		return nil
	}
	if len(list) > limit {
		m.add(schedule.CodeLimit, lp, "%d %s exceed AMK's ABI limit of %d", len(list), key, limit)
		return nil
	}
	refs := []bufferRef{}
	good := true
	for j, bn := range list {
		ep := fmt.Sprintf("%s[%d]", lp, j)
		id, ok := m.integer(bn, ep)
		if !ok {
			good = false
			continue
		}
		bi, ok := m.bufByID[id]
		if !ok {
			m.add(schedule.CodeReference, ep, "no buffer has id %d", id)
			good = false
			continue
		}
		refs = append(refs, bufferRef{bi})
	}
	if !good {
		return nil
	}
	return &refs
}

func (m *mapper) counterRef(v *node, path string) (int, bool) {
	id, ok := m.integer(v, path)
	if !ok {
		return 0, false
	}
	ci, ok := m.ctrByID[id]
	if !ok {
		m.add(schedule.CodeReference, path, "no counter has id %d", id)
	}
	return ci, ok
}

func (m *mapper) wait(wn *node, path string) (schedule.Step, bool) {
	if !m.object(wn, path) {
		return schedule.Step{}, false
	}
	cv := m.required(wn, path, "counter")
	tv := m.required(wn, path, "threshold")
	if cv == nil || tv == nil {
		return schedule.Step{}, false
	}
	ci, cok := m.counterRef(cv, path+".counter")
	k, tok := m.integer(tv, path+".threshold")
	if tok {
		switch {
		case k < 1:
			m.add(schedule.CodeThreshold, path+".threshold", "threshold %d; want at least 1", k)
			tok = false
		case k > math.MaxUint32:
			m.add(schedule.CodeThreshold, path+".threshold", "threshold %d exceeds the uint32 range of an AMK counter", k)
			tok = false
		}
	}
	if !cok || !tok {
		return schedule.Step{}, false
	}
	return schedule.Step{Kind: schedule.Wait, Object: int32(ci), Value: uint64(k)}, true
}

// params reads a task's params. Integer params are copied into the task
// (floats and structured values such as FUSED recipes are not: Task.Params
// holds integers); the returned map holds the integer params by key.
func (m *mapper) params(tn *node, path string, t *schedule.Task) map[string]*node {
	v := optional(tn, "params")
	if v == nil {
		return nil
	}
	if !m.object(v, path+".params") {
		return nil
	}
	out := make(map[string]*node, len(v.Keys))
	for j, k := range v.Keys {
		pv := v.Vals[j]
		out[k] = pv
		if pv.Kind != 'n' || !jsontree.IsInteger(pv.Str) {
			continue
		}
		if x, err := strconv.ParseInt(pv.Str, 10, 64); err == nil {
			if t.Params == nil {
				t.Params = map[string]int64{}
			}
			t.Params[k] = x
		}
	}
	return out
}

// intParam reads a required int32 param (AMK marshals params as int32).
func (m *mapper) intParam(params map[string]*node, path, key string) (int64, bool) {
	pv := params[key]
	pp := path + ".params." + key
	if pv == nil || pv.Kind == 'z' {
		m.add(schedule.CodeMissing, pp, "param %q is required for the footprint", key)
		return 0, false
	}
	v, ok := m.integer(pv, pp)
	if !ok {
		return 0, false
	}
	if v < math.MinInt32 || v > math.MaxInt32 {
		m.add(schedule.CodeSize, pp, "param %s = %d is outside AMK's int32 params", key, v)
		return 0, false
	}
	return v, true
}

// extent reads a required param that is a count of elements or rows.
func (m *mapper) extent(params map[string]*node, path, key string) (int64, bool) {
	v, ok := m.intParam(params, path, key)
	if !ok {
		return 0, false
	}
	switch {
	case v == 0:
		m.add(schedule.CodeEmptyAccess, path+".params."+key, "%s = 0 gives an empty footprint", key)
		return 0, false
	case v < 0:
		m.add(schedule.CodeSize, path+".params."+key, "negative %s = %d", key, v)
		return 0, false
	}
	return v, true
}

// footprint sets the task's reads and writes from its op and params.
func (m *mapper) footprint(t *schedule.Task, path, op string, inputs, outputs []bufferRef, params map[string]*node) {
	lay := func(r bufferRef) (layout, bool) {
		l := m.layouts[r.index]
		return l, l.bits != 0
	}
	readWhole := func(r bufferRef) {
		if l, ok := lay(r); ok {
			t.Reads = append(t.Reads, whole(l))
		}
	}
	writeWhole := func(r bufferRef) {
		if l, ok := lay(r); ok {
			t.Writes = append(t.Writes, whole(l))
		}
	}
	switch op {
	case "GEMV_TILE", "GEMM_TILE":
		// The kernel writes out[..., n_off:n_off+N_tile] for every row; it
		// derives the rows from the output's leading extent (M_tile and
		// m_off do not restrict them).
		nOff, ok1 := m.intParam(params, path, "n_off")
		nTile, ok2 := m.extent(params, path, "N_tile")
		for _, r := range inputs {
			readWhole(r)
		}
		if !ok1 || !ok2 {
			return
		}
		for _, r := range outputs {
			if l, ok := lay(r); ok {
				t.Writes = append(t.Writes, columns(l, nOff, nTile))
			}
		}
	case "KV_APPEND":
		// inputs = [new_kv, cache], outputs = [cache]: the cache operand is
		// updated in place and not read as data.
		pos, ok := m.intParam(params, path, "pos")
		for _, r := range inputs {
			if !contains(outputs, r) {
				readWhole(r)
			}
		}
		if !ok {
			return
		}
		for _, r := range outputs {
			if l, ok := lay(r); ok {
				t.Writes = append(t.Writes, seqRows(l, pos, 1))
			}
		}
	case "ATTENTION_TILE":
		// inputs = [q, k_cache, v_cache(, extra)]: the K and V operands are
		// read over rows [kv_start, kv_start+kv_len) only.
		start, ok1 := m.intParam(params, path, "kv_start")
		n, ok2 := m.extent(params, path, "kv_len")
		for j, r := range inputs {
			if j == 1 || j == 2 {
				if l, ok := lay(r); ok && ok1 && ok2 {
					t.Reads = append(t.Reads, seqRows(l, start, n))
				}
				continue
			}
			readWhole(r)
		}
		for _, r := range outputs {
			writeWhole(r)
		}
	default:
		for _, r := range inputs {
			readWhole(r)
		}
		for _, r := range outputs {
			writeWhole(r)
		}
	}
	t.Reads = dedup(t.Reads)
	t.Writes = dedup(t.Writes)
}

func contains(list []bufferRef, r bufferRef) bool {
	for _, x := range list {
		if x == r {
			return true
		}
	}
	return false
}

// dedup drops repeated identical accesses (a buffer listed twice), keeping
// the first of each in order.
func dedup(as []schedule.Access) []schedule.Access {
	if len(as) < 2 {
		return as
	}
	out := make([]schedule.Access, 0, len(as))
	for i, a := range as {
		dup := false
		for _, b := range as[:i] {
			if a == b {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, a)
		}
	}
	return out
}
