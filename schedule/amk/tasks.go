package amk

import (
	"fmt"
	"math"
	"strconv"

	"github.com/megaproof/megaproof/internal/jsontree"
	"github.com/megaproof/megaproof/schedule"
)

// slot returns the place of element i, appending it when it is new.
func slot[T any](l *[]T, i int) *T {
	if i == len(*l) {
		var zero T
		*l = append(*l, zero)
	}
	return &(*l)[i]
}

// task maps task i: its waits (acquire, gpu scope), its body's footprint,
// and one +1 release signal on its out_counter.
func (m *mapper) task(tn *node, i int) {
	m.at(rTasks, i)
	path := fmt.Sprintf("$.tasks[%d]", i)
	t := schedule.Task{Name: fmt.Sprintf("task@%d", i), Worker: schedule.Dynamic}
	defer func() { *slot(&m.p.Tasks, i) = t }()
	if !m.object(tn, path) {
		return
	}
	id, idOK := m.uniqueID(tn, path, &m.taskIDs, i, "task", "tasks")
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
		t.Name = taskName(id, op)
	}

	inputs, inOK := m.bufferList(tn, path, "inputs", MaxInputs)
	outputs, outOK := m.bufferList(tn, path, "outputs", MaxOutputs)

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
			m.pin(&t, i, sm, path+".sm")
		}
	}
	var ps params
	if v := optional(tn, "params"); v != nil && m.object(v, path+".params") {
		for j, k := range v.Keys {
			ps = append(ps, param{key: k, kind: v.Vals[j].Kind, lit: []byte(v.Vals[j].Str)})
		}
		t.Params = ps.ints(nil)
	}
	if op == "" || !inOK || !outOK {
		return
	}
	t.Reads, t.Writes = m.footprint(t.Reads, t.Writes, path, op, inputs, outputs, ps)
}

// taskName is the name of a task: t<id>.<op>.
func taskName(id int64, op string) string {
	return string(appendTaskName(make([]byte, 0, 24), id, op))
}

// appendTaskName appends taskName(id, op) to b.
func appendTaskName(b []byte, id int64, op string) []byte {
	b = append(b, 't')
	b = strconv.AppendInt(b, id, 10)
	if op != "" {
		b = append(b, '.')
		b = append(b, op...)
	}
	return b
}

// pin pins task i to worker sm, or reports why it cannot be.
func (m *mapper) pin(t *schedule.Task, i int, sm int64, path string) {
	switch {
	case sm < 0:
		m.add(schedule.CodeWorker, path, "negative SM %d", sm)
	case sm >= schedule.MaxWorkers:
		m.add(schedule.CodeLimit, path, "SM %d exceeds the limit of %d workers", sm, schedule.MaxWorkers)
	default:
		t.Worker = int32(sm)
		m.maxSM = max(m.maxSM, sm)
		m.smUses = append(m.smUses, smUse{i, sm})
	}
}

// bufferList reads a task's inputs or outputs: buffer ids, looked up. It
// reports false when the list is unusable.
func (m *mapper) bufferList(tn *node, path, key string, limit int) ([]int, bool) {
	v := m.required(tn, path, key)
	if v == nil {
		return nil, false
	}
	lp := path + "." + key
	list, ok := m.array(v, lp)
	if !ok {
		return nil, false
	}
	if len(list) > limit {
		m.add(schedule.CodeLimit, lp, "%d %s exceed AMK's ABI limit of %d", len(list), key, limit)
		return nil, false
	}
	var refs []int
	good := true
	for j, bn := range list {
		ep := fmt.Sprintf("%s[%d]", lp, j)
		id, ok := m.integer(bn, ep)
		if !ok {
			good = false
			continue
		}
		bi, ok := m.bufByID.get(id)
		if !ok {
			m.add(schedule.CodeReference, ep, "no buffer has id %d", id)
			good = false
			continue
		}
		refs = append(refs, bi)
	}
	return refs, good
}

func (m *mapper) counterRef(v *node, path string) (int, bool) {
	id, ok := m.integer(v, path)
	if !ok {
		return 0, false
	}
	ci, ok := m.ctrByID.get(id)
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
		tok = m.threshold(k, path+".threshold")
	}
	if !cok || !tok {
		return schedule.Step{}, false
	}
	return schedule.Step{Kind: schedule.Wait, Object: int32(ci), Value: uint64(k)}, true
}

// threshold checks a wait threshold.
func (m *mapper) threshold(k int64, path string) bool {
	switch {
	case k < 1:
		m.add(schedule.CodeThreshold, path, "threshold %d; want at least 1", k)
		return false
	case k > math.MaxUint32:
		m.add(schedule.CodeThreshold, path, "threshold %d exceeds the uint32 range of an AMK counter", k)
		return false
	}
	return true
}

// param is one task param: its JSON kind and, for a number, its literal
// or (isInt) its integer value, read once.
type param struct {
	key   string
	kind  byte
	isInt bool
	num   int64
	lit   []byte
}

// int64 is the param's value as an integer, if it is one.
func (p *param) int64() (int64, bool) {
	if p.isInt {
		return p.num, true
	}
	return jsontree.Int64(p.lit)
}

type params []param

func (ps params) get(key string) *param {
	for i := range ps {
		if ps[i].key == key {
			return &ps[i]
		}
	}
	return nil
}

// ints adds the integer params to into (floats and structured values such
// as FUSED recipes are not kept: Task.Params holds integers; an integral
// value written as 512.0 is an integer).
// They are appended to into, sorted by key, and returned with their
// capacity cut to their length (nil when there are none).
func (ps params) ints(into schedule.Params) schedule.Params {
	from := len(into)
	for _, p := range ps {
		if p.kind != 'n' {
			continue
		}
		if x, ok := p.int64(); ok {
			into = append(into, schedule.Param{Key: p.key, Value: x})
		}
	}
	if len(into) == from {
		return nil
	}
	out := into[from:len(into):len(into)]
	schedule.SortParams(out)
	return out
}

// intParam reads a required int32 param (AMK marshals params as int32).
func (m *mapper) intParam(ps params, path, key string) (int64, bool) {
	pv := ps.get(key)
	if pv == nil || pv.kind == 'z' {
		m.add(schedule.CodeMissing, path+".params."+key, "param %q is required for the footprint", key)
		return 0, false
	}
	if pv.kind != 'n' {
		m.add(schedule.CodeType, path+".params."+key, "want an integer, have %s", jsontree.KindNames[pv.kind])
		return 0, false
	}
	if m.quiet {
		v, ok := pv.int64()
		if !ok || v < math.MinInt32 || v > math.MaxInt32 {
			m.failed = true
			return 0, false
		}
		return v, true
	}
	v, ok := pv.num, pv.isInt
	if !ok {
		if v, ok = m.integerLit(pv.lit, path+".params."+key); !ok {
			return 0, false
		}
	}
	if v < math.MinInt32 || v > math.MaxInt32 {
		m.add(schedule.CodeSize, path+".params."+key, "param %s = %d is outside AMK's int32 params", key, v)
		return 0, false
	}
	return v, true
}

// extent reads a required param that is a count of elements or rows.
func (m *mapper) extent(ps params, path, key string) (int64, bool) {
	v, ok := m.intParam(ps, path, key)
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

// tileReads appends the reads of a GEMV or GEMM tile with inputs x and W
// (the first two) and first output out, as AMK's kernels make them, with
// K = params.K and M from out as the tile's writes take it (element
// m·stride[0] + k of x for m < M, k < K; of W, rows [nOff, nOff+nTile) of
// K elements each, stride[0] apart):
//   - a GEMM tile also reads its bias (input 2, when there is one) at
//     elements [nOff, nOff+nTile), and nothing more;
//   - a GEMV tile with params.qdtype I8 (6) or I4 (7) reads W as bytes:
//     rows of K bytes (I8) or ceil(K/2) bytes (I4) whatever W's shape,
//     and its fp16 scales (input 2) and zeros (input 3, when there is
//     one) at rows [nOff, nOff+nTile) of ceil(K/group) elements (group =
//     params.group when positive, else K), 2 bytes each whatever their
//     dtype;
//   - any other GEMV tile reads x and W only (a qdtype of another value
//     takes the unquantized kernel).
//
// When K is not a positive integer, an operand is malformed or of rank 0,
// or qdtype is not an integer, every input is read whole.
func (m *mapper) tileReads(reads []schedule.Access, op string, ps params, inputs []int, out int, nOff, nTile int64) []schedule.Access {
	x, okx := m.lay(inputs[0])
	w, okw := m.lay(inputs[1])
	o, oko := m.lay(out)
	k := positive(ps, "K")
	qd, okq := int64(0), true
	if op == "GEMV_TILE" {
		if p := ps.get("qdtype"); p != nil {
			qd, okq = p.int64()
			okq = okq && p.kind == 'n'
		}
	}
	if !okx || !okw || !oko || !okq || k == 0 || len(x.shape) == 0 || len(w.shape) == 0 {
		for _, b := range inputs {
			if l, ok := m.lay(b); ok {
				reads = append(reads, whole(l))
			}
		}
		return reads
	}
	rows := int64(1)
	if len(o.shape) >= 2 && o.shape[1] > 0 {
		rows = o.numel / o.shape[1]
	}
	rowOf := func(l layout) int64 { return l.numel / l.shape[0] }
	reads = append(reads, elems(x, 0, k, rows, rowOf(x)))
	switch {
	case op == "GEMM_TILE":
		reads = append(reads, elems(w, satMul(nOff, rowOf(w)), k, nTile, rowOf(w)))
		if len(inputs) > 2 {
			if bias, ok := m.lay(inputs[2]); ok {
				reads = append(reads, elems(bias, nOff, nTile, 1, 0))
			}
		}
	case qd == 6 || qd == 7: // AMK_I8, AMK_I4
		rb := k
		if qd == 7 {
			rb = (k + 1) / 2
		}
		reads = append(reads, bytesAt(w, satMul(nOff, rb), satMul(nTile, rb)))
		group := positive(ps, "group")
		if group == 0 {
			group = k
		}
		ng := (k + group - 1) / group
		for _, b := range inputs[2:min(len(inputs), 4)] {
			if l, ok := m.lay(b); ok {
				reads = append(reads, bytesAt(l, satMul(2, satMul(nOff, ng)), satMul(2, satMul(nTile, ng))))
			}
		}
	default:
		reads = append(reads, elems(w, satMul(nOff, rowOf(w)), k, nTile, rowOf(w)))
	}
	return reads
}

// firstIO is the layouts of a task's first input and first output (both
// there), false when either is malformed.
func (m *mapper) firstIO(inputs, outputs []int) (layout, layout, bool) {
	in, ok1 := m.lay(inputs[0])
	out, ok2 := m.lay(outputs[0])
	return in, out, ok1 && ok2
}

// lay is the layout of buffer b, false when it is malformed.
func (m *mapper) lay(b int) (layout, bool) {
	l := m.layouts[b]
	return l, l.bits != 0
}

// headParams is a task's params.head_dim when it is a positive integer,
// else 0.
func headParams(ps params) int64 { return positive(ps, "head_dim") }

// positive is the integer param key when it is positive, else 0.
func positive(ps params, key string) int64 {
	if p := ps.get(key); p != nil && p.kind == 'n' {
		if v, ok := p.int64(); ok && v > 0 && v <= math.MaxInt32 {
			return v
		}
	}
	return 0
}

// footprint appends the task's reads and writes from its op and params.
func (m *mapper) footprint(reads, writes []schedule.Access, path, op string, inputs, outputs []int, ps params) ([]schedule.Access, []schedule.Access) {
	lay := m.lay
	readWhole := func(b int) {
		if l, ok := lay(b); ok {
			reads = append(reads, whole(l))
		}
	}
	writeWhole := func(b int) {
		if l, ok := lay(b); ok {
			writes = append(writes, whole(l))
		}
	}
	allWhole := func() {
		for _, b := range inputs {
			readWhole(b)
		}
		for _, b := range outputs {
			writeWhole(b)
		}
	}
	switch op {
	case "GEMV_TILE", "GEMM_TILE":
		// The kernel writes columns n of [n_off, n_off+N_tile) of its first
		// output, indexed as [M, N] by its first two axes (element
		// m·stride[0] + n·stride[1], N = shape[1], M = numel / N), in every
		// row: M_tile and m_off do not restrict the rows.
		nOff, ok1 := m.intParam(ps, path, "n_off")
		nTile, ok2 := m.extent(ps, path, "N_tile")
		if ok1 && ok2 && len(outputs) > 0 && len(inputs) >= 2 {
			reads = m.tileReads(reads, op, ps, inputs, outputs[0], nOff, nTile)
		} else {
			for _, b := range inputs {
				readWhole(b)
			}
		}
		if !ok1 || !ok2 || len(outputs) == 0 {
			return reads, writes
		}
		if l, ok := lay(outputs[0]); ok {
			writes = append(writes, tileColumns(l, nOff, nTile))
		}
	case "KV_APPEND":
		// inputs = [new_kv, cache], outputs = [cache]: the cache operand is
		// updated in place and not read as data. AMK's kernel writes the
		// first output only: a rank-4 cache at row pos of every batch
		// entry, any other one with new_kv's elements from row pos on.
		pos, ok := m.intParam(ps, path, "pos")
		for _, b := range inputs {
			if !contains(outputs, b) {
				readWhole(b)
			}
		}
		if !ok || len(outputs) == 0 {
			return reads, writes
		}
		l, ok := lay(outputs[0])
		switch {
		case !ok:
		case len(l.shape) == 4:
			writes = append(writes, appendRows(l, pos))
		case len(inputs) > 0:
			if nl, ok := lay(inputs[0]); ok {
				writes = append(writes, appendRun(l, pos, nl.numel))
			}
		}
	case "ATTENTION_TILE":
		// inputs = [q, k_cache, v_cache(, extra)]: the K and V operands are
		// read over rows [kv_start, kv_start+kv_len) only. With the head
		// params set, as AMK's kernels do (query head h reads KV head
		// h/rep, rep = n_heads/n_kv_heads): rows of n_kv_heads·head_dim
		// elements, of which KV heads [0, ceil(n_heads/rep)) are read (past
		// the row when n_heads is not a multiple of n_kv_heads); of a rank-2
		// q, the first n_heads·head_dim elements, and as many of the first
		// output (n_heads·(head_dim+2) for a split-KV partial, flags bit
		// 1); of a rank-3 q, B = q.shape[0] sequences, each n_heads·head_dim
		// elements of q and of the output, and each with its window in the
		// caches k.shape[1] rows apart (V indexed as K). Otherwise along the
		// caches' own rows, q and outputs whole.
		start, ok1 := m.intParam(ps, path, "kv_start")
		n, ok2 := m.extent(ps, path, "kv_len")
		hd, heads, kvh, exact, seqs := headParams(ps), int64(0), int64(0), false, int64(0)
		if len(inputs) > 0 && len(outputs) > 0 && hd > 0 {
			if q, ok := lay(inputs[0]); ok && len(q.shape) > 0 {
				heads, kvh = positive(ps, "n_heads"), positive(ps, "n_kv_heads")
				exact = heads > 0 && kvh > 0
				if len(q.shape) == 3 {
					seqs = q.shape[0]
				}
			}
		}
		if exact && heads < kvh {
			m.add(schedule.CodeValue, path+".params.n_heads", "n_heads = %d is below n_kv_heads = %d: AMK's kernel divides the head index by n_heads/n_kv_heads = 0", heads, kvh)
			return reads, writes
		}
		// The elements a sequence's window spans: its rows but the last,
		// and the last row's KV heads read.
		var row, span int64
		if exact {
			rep := heads / kvh
			row = satMul(kvh, hd)
			span = satAdd(satMul(n-1, row), satMul((heads+rep-1)/rep, hd))
		}
		seqStride := int64(0) // elements between the sequences' caches, from K's shape
		if exact && seqs > 0 && len(inputs) > 1 {
			if k, ok := lay(inputs[1]); ok {
				seqStride = row
				if len(k.shape) >= 2 {
					seqStride = satMul(k.shape[1], row)
				}
			}
		}
		qWidth := satMul(heads, hd)
		for j, b := range inputs {
			l, ok := lay(b)
			switch {
			case !ok:
			case j == 1 || j == 2:
				if !ok1 || !ok2 {
					break
				}
				if exact {
					reads = append(reads, elems(l, satMul(start, row), span, max(seqs, 1), seqStride))
				} else {
					reads = append(reads, seqRows(l, start, n))
				}
			case j == 0 && exact:
				reads = append(reads, elems(l, 0, satMul(max(seqs, 1), qWidth), 1, 0))
			default:
				readWhole(b)
			}
		}
		for j, b := range outputs {
			if l, ok := lay(b); ok && j == 0 && exact {
				// A split-KV partial (flags bit 1) is single-sequence only.
				w := satMul(max(seqs, 1), qWidth)
				if f := ps.get("flags"); seqs == 0 && f != nil {
					if v, ok := f.int64(); ok && v&2 != 0 {
						w = satMul(heads, hd+2)
					}
				}
				writes = append(writes, elems(l, 0, w, 1, 0))
				continue
			}
			writeWhole(b)
		}
	case "COPY", "ADD", "SILU_MUL":
		// AMK's element loops: as many elements of each operand
		// (inputs[0], and inputs[1] for ADD and SILU_MUL) as the first
		// output has, written to it.
		if len(outputs) == 0 {
			break
		}
		o, ok := lay(outputs[0])
		if !ok {
			break
		}
		used := min(len(inputs), 2)
		if op == "COPY" {
			used = min(len(inputs), 1)
		}
		for _, b := range inputs[:used] {
			if l, ok := lay(b); ok {
				reads = append(reads, elems(l, 0, o.numel, 1, 0))
			}
		}
		writes = append(writes, elems(o, 0, o.numel, 1, 0))
	case "ROPE":
		// inputs = [x, pos]: for every params.head_dim elements of x, its
		// first 2·(head_dim/2) are rotated into the same elements of the
		// first output; pos is read whole.
		hd, ok := int64(0), false
		if pv := ps.get("head_dim"); pv != nil && pv.kind == 'n' {
			hd, ok = m.intParam(ps, path, "head_dim")
		}
		if !ok || hd <= 0 || len(inputs) < 2 || len(outputs) == 0 {
			allWhole()
			break
		}
		x, o, ok := m.firstIO(inputs, outputs)
		if !ok {
			break
		}
		vecs, run := x.numel/hd, hd/2*2
		heads := func(l layout) schedule.Access {
			if run == hd {
				return elems(l, 0, vecs*hd, 1, 0)
			}
			return elems(l, 0, run, vecs, hd)
		}
		if vecs > 0 && run > 0 {
			reads = append(reads, heads(x))
			writes = append(writes, heads(o))
		}
		readWhole(inputs[1])
	case "EMBED":
		// inputs = [ids, table]: one table row (by an id the data gives,
		// so the table is read whole) per id, written to the first output
		// one after another.
		if len(inputs) < 2 || len(outputs) == 0 {
			allWhole()
			break
		}
		ids, ok1 := lay(inputs[0])
		table, ok2 := lay(inputs[1])
		o, ok3 := lay(outputs[0])
		readWhole(inputs[0])
		readWhole(inputs[1])
		if ok1 && ok2 && ok3 {
			row := table.numel
			if len(table.shape) > 0 {
				row = table.numel / table.shape[0]
			}
			writes = append(writes, elems(o, 0, satMul(ids.numel, row), 1, 0))
		}
	case "ATTENTION_COMBINE":
		// inputs = the split-KV partials, each [n_heads, head_dim+2]
		// ({acc | m | l} per head); with positive integer head_dim and
		// n_heads, AMK's kernel reads n_heads·(head_dim+2) elements of
		// every input and writes n_heads·head_dim of the first output
		// only. Otherwise every operand whole.
		hd, heads := headParams(ps), positive(ps, "n_heads")
		if hd == 0 || heads == 0 || len(outputs) == 0 {
			allWhole()
			break
		}
		for _, b := range inputs {
			if l, ok := lay(b); ok {
				reads = append(reads, elems(l, 0, satMul(heads, hd+2), 1, 0))
			}
		}
		if o, ok := lay(outputs[0]); ok {
			writes = append(writes, elems(o, 0, satMul(heads, hd), 1, 0))
		}
	case "SAMPLE_ARGMAX":
		// inputs = [logits]: AMK's kernel reads every element of its rows
		// of V = shape[-1] and stores row r's argmax (as a float) to
		// element r of the first output, for numel/V rows.
		if len(inputs) == 0 || len(outputs) == 0 {
			allWhole()
			break
		}
		lg, o, ok := m.firstIO(inputs, outputs)
		if !ok {
			break
		}
		rows := int64(1)
		if len(lg.shape) > 0 {
			rows = lg.numel / lg.shape[len(lg.shape)-1]
		}
		reads = append(reads, elems(lg, 0, lg.numel, 1, 0))
		writes = append(writes, elems(o, 0, rows, 1, 0))
	case "RMSNORM":
		// rows of params.hidden elements of x (inputs[0]) and of the first
		// output, as many as fit the output, with hidden elements of the
		// weight (inputs[1]).
		// Without a usable hidden (the kernel then reads and writes
		// nothing), every operand whole.
		h, ok := int64(0), false
		if pv := ps.get("hidden"); pv != nil && pv.kind == 'n' {
			h, ok = m.intParam(ps, path, "hidden")
		}
		if !ok || h <= 0 || len(outputs) == 0 || len(inputs) < 2 {
			allWhole()
			break
		}
		o, ok := lay(outputs[0])
		if !ok {
			break
		}
		n := o.numel / h * h
		if l, ok := lay(inputs[0]); ok {
			reads = append(reads, elems(l, 0, n, 1, 0))
		}
		if l, ok := lay(inputs[1]); ok {
			reads = append(reads, elems(l, 0, h, 1, 0))
		}
		writes = append(writes, elems(o, 0, n, 1, 0))
	default:
		allWhole()
	}
	return dedup(reads), dedup(writes)
}

func contains(list []int, b int) bool {
	for _, x := range list {
		if x == b {
			return true
		}
	}
	return false
}

// dedup drops repeated identical accesses (a buffer listed twice), keeping
// the first of each in order, in place.
func dedup(as []schedule.Access) []schedule.Access {
	if len(as) < 2 {
		return as
	}
	out := as[:0]
	for _, a := range as {
		dup := false
		for _, b := range out {
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
