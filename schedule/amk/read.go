package amk

import (
	"io"
	"math"
	"slices"
	"sync"

	"github.com/megaproof/megaproof/internal/jsontree"
	"github.com/megaproof/megaproof/schedule"
)

// The reader builds the Program in one pass over the input, without a
// tree: buffers, counters and tasks are read directly into the program.
// An element it cannot read directly (anything malformed) is read again,
// from the same bytes, into a small tree that the mapper converts with
// the diagnostics of the format; only that element's bytes are kept
// meanwhile. The small top-level parts (versions, meta, target, pages) are
// read into trees and converted at the end, and a task list that comes
// before the buffers or counters it names is kept as bytes and read at the
// end. The mapper reports diagnostics by part and element index, so the
// reader gives exactly the program or the diagnostics that converting a
// tree of the whole document in the reference order would (FuzzUnmarshal
// checks it).

type decoder struct {
	s  *jsontree.Scanner
	sc jsontree.Scanner // the scanner of the document
	ds jsontree.Diags
	m  *mapper
	mm mapper

	irVersion, abiVersion, meta, target, pages *node
	buffersDone, countersDone                  bool
	tasksSeen                                  bool
	tasksRaw                                   []byte // the task list, kept for the end

	// per element, reused
	in, out, shape []int64
	refs           []int
	waits          []schedule.Step
	ps             params
	lits           []byte
	extra          []int // ends of the skipped keys of the objects being read, in extraKeys
	extraKeys      []byte
	reads, writes  []schedule.Access
	stepSlab       []schedule.Step
	accSlab        []schedule.Access
	shapeSlab      []int64
	paramSlab      schedule.Params
	strs           []string
	// The separators learned by the readers by hand (sep): of the
	// members of a task, a buffer and a wait, in order, the last one
	// before the '}'; of the members of params, with their keys, and
	// before params' '}'; and of the lists in them.
	taskSeps    [13]sep
	bufSeps     [8]sep
	waitMembers [3]sep
	paramSeps   [16]sep
	paramKeys   [16]string
	paramEnd    sep
	refSeps     listSeps
	waitSeps    listSeps
	shapeSeps   listSeps
	// Names of the tasks read directly, not yet set: their bytes, and per
	// task its place in the task list and where its name ends. They
	// become one string.
	nameBuf  []byte
	nameEnds []nameEnd

	fastRead int // tasks read by fastTask in this document (for tests)
	fastBufs int // buffers read by fastBuffer
	fastCtrs int // counters read by fastCounter
}

type nameEnd struct{ task, end int32 }

// decoders keeps decoders, with their scanner, scratch and indices, for
// the next document: reading many small documents allocates little more
// than their programs.
var decoders = sync.Pool{New: func() any { return new(decoder) }}

// decodeBytes and decodeReader read a document with a pooled decoder.
func decodeBytes(data []byte) (*schedule.Program, error) {
	d := decoders.Get().(*decoder)
	defer decoders.Put(d)
	d.sc.Reset(data, 0, maxDepth)
	defer d.sc.Reset(nil, 0, 0) // drop data
	return d.decode()
}

func decodeReader(r io.Reader, limit int64) (*schedule.Program, error) {
	d := decoders.Get().(*decoder)
	defer decoders.Put(d)
	d.sc.ResetReader(r, limit, maxDepth)
	defer d.sc.Reset(nil, 0, 0) // drop r
	return d.decode()
}

// decode reads the document of d.sc.
func (d *decoder) decode() (*schedule.Program, error) {
	d.s = &d.sc
	d.ds = jsontree.Diags{}
	d.mm.reset(&d.ds)
	d.m = &d.mm
	d.irVersion, d.abiVersion, d.meta, d.target, d.pages = nil, nil, nil, nil, nil
	d.buffersDone, d.countersDone, d.tasksSeen, d.tasksRaw = false, false, false, nil
	d.fastRead, d.fastBufs, d.fastCtrs = 0, 0, 0
	err := d.top()
	p := d.m.p
	d.m.p = nil
	if err != nil {
		return nil, err
	}
	if err := diagError(d.ds.List(-1)); err != nil {
		return nil, err
	}
	// A safety net: everything Validate checks should have been reported
	// above with an AMK path. Validate also enforces megaproof's size limits.
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// Bits of the top-level keys seen.
const (
	kIRVersion = 1 << iota
	kABIVersion
	kMeta
	kTarget
	kBuffers
	kCounters
	kPages
	kTasks
)

func topBit(key []byte) uint32 {
	switch string(key) {
	case "ir_version":
		return kIRVersion
	case "abi_version":
		return kABIVersion
	case "meta":
		return kMeta
	case "target":
		return kTarget
	case "buffers":
		return kBuffers
	case "counters":
		return kCounters
	case "pages":
		return kPages
	case "tasks":
		return kTasks
	}
	return 0
}

// metaKeys and targetKeys are the members of meta and target that the
// mapping reads (mapper.meta, mapper.target); the others are only
// checked as JSON.
var (
	metaKeys   = []string{"model", "gpu"}
	targetKeys = []string{"name", "num_sms", "supports_cooperative"}
)

func (d *decoder) top() error {
	s, m := d.s, d.m
	m.at(rRoot, 0)
	switch k := s.Peek(); k {
	case 0:
		return fatal(s.Err())
	case 'o':
	default:
		s.Skip()
		s.End()
		if e := s.Err(); e != nil {
			return fatal(e)
		}
		m.add(schedule.CodeType, "$", "want an object, have %s", jsontree.KindNames[k])
		return nil
	}
	s.Object()
	var seen uint32
	var unknown [][]byte
	for {
		key, ok := s.Key()
		if !ok {
			break
		}
		bit := topBit(key)
		if bit == 0 {
			for _, u := range unknown {
				if string(u) == string(key) {
					s.Duplicate(key)
					return fatal(s.Err())
				}
			}
			unknown = append(unknown, append([]byte(nil), key...))
			s.Skip()
		} else if seen&bit != 0 {
			s.Duplicate(key)
			return fatal(s.Err())
		}
		seen |= bit
		switch bit {
		case kIRVersion:
			d.irVersion = s.Value()
		case kABIVersion:
			d.abiVersion = s.Value()
		case kMeta:
			d.meta = s.Members(metaKeys...)
		case kTarget:
			d.target = s.Members(targetKeys...)
		case kPages:
			d.pages = s.Value()
		case kBuffers:
			d.list(rBuffers, "buffers", d.buffer)
			d.buffersDone = true
		case kCounters:
			d.list(rCounters, "counters", d.counter)
			d.countersDone = true
		case kTasks:
			d.tasksSeen = true
			if d.buffersDone && d.countersDone {
				d.list(rTasks, "tasks", d.task)
			} else {
				// Tasks name buffers and counters: read them at the end.
				s.Mark()
				s.Skip()
				d.tasksRaw = append([]byte(nil), s.Marked()...)
				s.Release()
			}
		}
		if s.Err() != nil {
			break
		}
	}
	s.End()
	if e := s.Err(); e != nil {
		return fatal(e)
	}
	// The small parts, and the lists that were not there, in the order of
	// the reference reader; then the kept task list.
	for _, v := range []struct {
		key string
		n   *node
	}{{"ir_version", d.irVersion}, {"abi_version", d.abiVersion}} {
		if v.n != nil && v.n.Kind != 'z' {
			m.version(v.key, v.n)
		}
	}
	if d.meta != nil && d.meta.Kind != 'z' {
		m.meta(d.meta)
	}
	if d.target != nil && d.target.Kind != 'z' {
		m.target(d.target)
	}
	if !d.buffersDone {
		m.list(rBuffers, "buffers", nil)
	}
	if !d.countersDone {
		m.list(rCounters, "counters", nil)
	}
	if d.pages != nil && d.pages.Kind != 'z' {
		m.pages(d.pages)
	}
	if !d.tasksSeen {
		m.list(rTasks, "tasks", nil)
	} else if d.tasksRaw != nil {
		d.s = jsontree.NewScanner(d.tasksRaw, 0, maxDepth)
		d.s.Prefix("tasks", -1)
		d.list(rTasks, "tasks", d.task)
	}
	m.launch()
	return nil
}

// list reads one of the three lists, each element directly or, when it is
// malformed, again into a tree.
func (d *decoder) list(rank int, key string, direct func(i int) bool) {
	s, m := d.s, d.m
	if s.Peek() != 'a' {
		n := s.Value()
		if s.Err() == nil {
			m.list(rank, key, n)
		}
		return
	}
	s.Array()
	if rank == rTasks {
		defer d.flushNames()
	}
	start := s.Offset()
	for i := 0; s.Elem(); i++ {
		if rank == rTasks && i == cap(m.p.Tasks) && i >= 16 {
			d.growTasks(start)
		}
		s.Mark()
		m.at(rank, i)
		if !direct(i) {
			s.Rewind()
			n := s.Value()
			if s.Err() != nil {
				return
			}
			switch rank {
			case rBuffers:
				m.buffer(n, i)
			case rCounters:
				m.counter(n, i)
			case rTasks:
				d.flushNames() // the tasks before this one are named
				m.task(n, i)
			}
		}
		s.Release()
		if s.Err() != nil {
			return
		}
	}
}

// flushNames sets the names of the tasks read directly since the last
// flush, all in one string.
func (d *decoder) flushNames() {
	if len(d.nameEnds) == 0 {
		return
	}
	all, from := string(d.nameBuf), int32(0)
	for _, e := range d.nameEnds {
		d.m.p.Tasks[e.task].Name = all[from:e.end]
		from = e.end
	}
	d.nameBuf, d.nameEnds = d.nameBuf[:0], d.nameEnds[:0]
}

// growTasks makes room for the tasks the rest of a document of known size
// holds, estimated from the bytes of those read, so that the task list is
// not copied at every doubling.
func (d *decoder) growTasks(start int64) {
	p := d.m.p
	size, at, n := d.s.Size(), d.s.Offset(), len(p.Tasks)
	if size < 0 || at <= start {
		return
	}
	est := int64(float64(n) * float64(size-start) / float64(at-start) * 1.05)
	if est > int64(n) && est <= schedule.MaxTasks {
		p.Tasks = slices.Grow(p.Tasks, int(est)-n)
	}
}

// str, integer and the others read a value of their type; they return
// false for a value of another type or out of range.
func (d *decoder) str() ([]byte, bool) {
	if d.s.Peek() != 's' {
		return nil, false
	}
	v := d.s.Str()
	return v, d.s.Err() == nil
}

func (d *decoder) integer() (int64, bool) {
	s := d.s
	if v, ok := s.SmallInt(); ok {
		return v, true
	}
	if s.Peek() != 'n' {
		return 0, false
	}
	v, ok := jsontree.Int64(s.Num())
	return v, ok && s.Err() == nil
}

func (d *decoder) boolean() (bool, bool) {
	s := d.s
	if s.Peek() != 'b' {
		return false, false
	}
	v := s.Bool()
	return v, s.Err() == nil
}

// null reads a null if one comes and reports whether it did.
func (d *decoder) null() bool {
	if d.s.Peek() == 'z' {
		d.s.Null()
		return d.s.Err() == nil
	}
	return false
}

// skip skips the value of a key the reader does not use, failing when the
// key repeats another one of the object that is not used either.
// The keys of one object are d.extra[first:], so that a wait object's
// keys can be checked within the task that holds it.
func (d *decoder) skip(key []byte, first int) bool {
	from := 0
	if first > 0 {
		from = d.extra[first-1]
	}
	for _, end := range d.extra[first:] {
		if string(d.extraKeys[from:end]) == string(key) {
			return false
		}
		from = end
	}
	d.extraKeys = append(d.extraKeys, key...)
	d.extra = append(d.extra, len(d.extraKeys))
	d.s.Skip()
	return d.s.Err() == nil
}

// dropExtra forgets the skipped keys of an object from first on.
func (d *decoder) dropExtra(first int) {
	d.extra = d.extra[:first]
	if first == 0 {
		d.extraKeys = d.extraKeys[:0]
	} else {
		d.extraKeys = d.extraKeys[:d.extra[first-1]]
	}
}

// intern returns a string of b, shared with earlier ones of the same
// bytes: param keys repeat across tasks.
func (d *decoder) intern(b []byte) string {
	for _, s := range d.strs {
		if s == string(b) {
			return s
		}
	}
	s := string(b)
	if len(d.strs) < 64 {
		d.strs = append(d.strs, s)
	}
	return s
}

// once marks a field seen and reports false when it already was.
func once(seen *uint32, bit uint32) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// Bits of fields seen in an object.
const (
	b0 = 1 << iota
	b1
	b2
	b3
	b4
	b5
	b6
	b7
	b8
	b9
	b10
	b11
)

// bufFields are what a buffer's keys give, before it is mapped; its shape
// is in d.shape.
type bufFields struct {
	seen     uint32
	id, bits int64
	name     string
	kind     schedule.BufferKind
}

func (d *decoder) buffer(i int) bool {
	var bf bufFields
	d.shape = d.shape[:0]
	if n, ok := d.fastBuffer(&bf); ok {
		d.s.Advance(n)
		d.fastBufs++
	} else {
		bf = bufFields{}
		d.shape = d.shape[:0]
		if !d.scanBuffer(&bf) {
			return false
		}
	}
	return d.finishBuffer(i, &bf)
}

// scanBuffer reads a buffer's keys with the scanner.
func (d *decoder) scanBuffer(bf *bufFields) bool {
	s := d.s
	if s.Peek() != 'o' {
		return false
	}
	s.Object()
	d.dropExtra(0)
	ok := true
	for ok {
		key, more := s.Key()
		if !more {
			break
		}
		var bit uint32
		switch string(key) {
		case "id":
			bit = b0
			bf.id, ok = d.integer()
		case "name":
			bit = b1
			var name []byte
			if name, ok = d.str(); ok {
				bf.name = string(name)
			}
		case "kind":
			bit = b2
			var v []byte
			if v, ok = d.str(); ok {
				bf.kind, ok = kinds[string(v)]
			}
		case "dtype":
			bit = b3
			var v []byte
			if v, ok = d.str(); ok {
				bf.bits = dtypeBits[string(v)]
				ok = bf.bits != 0
			}
		case "space":
			bit = b4
			if !d.null() {
				var v []byte
				v, ok = d.str()
				ok = ok && memSpaces[string(v)]
			}
		case "shape":
			bit = b5
			if s.Peek() != 'a' {
				ok = false
				break
			}
			s.Array()
			for ok && s.Elem() {
				var x int64
				x, ok = d.integer()
				d.shape = append(d.shape, x)
			}
			ok = ok && s.Err() == nil
		default:
			ok = d.skip(key, 0)
		}
		ok = ok && once(&bf.seen, bit)
	}
	return ok && s.Err() == nil
}

// finishBuffer checks and maps buffer i from its fields.
func (d *decoder) finishBuffer(i int, bf *bufFields) bool {
	m := d.m
	id, bits := bf.id, storageBits(bf.bits, bf.kind)
	if bf.seen&(b0|b1|b2|b3|b5) != b0|b1|b2|b3|b5 || len(d.shape) > MaxRank {
		return false
	}
	if _, dup := m.bufByID.get(id); dup {
		return false
	}
	numel := int64(1)
	for _, x := range d.shape {
		if x < 1 || numel > maxBufferBytes*8/x {
			return false
		}
		numel *= x
	}
	if tooLarge(bits, d.shape, numel) {
		return false
	}
	m.bufByID.put(id, i)
	if len(d.shapeSlab)+len(d.shape) > cap(d.shapeSlab) {
		d.shapeSlab = make([]int64, 0, max(len(d.shape), 256))
	}
	n := len(d.shapeSlab)
	d.shapeSlab = append(d.shapeSlab, d.shape...)
	shape := d.shapeSlab[n:len(d.shapeSlab):len(d.shapeSlab)]
	m.p.Buffers = append(m.p.Buffers, schedule.Buffer{Name: uniqueName(m.names, bf.name, id, true, i), Kind: bf.kind, Size: storageSize(bits, shape, numel), Arena: schedule.NoArena})
	m.layouts = append(m.layouts, layout{index: int32(i), bits: bits, shape: shape, numel: numel})
	return true
}

func (d *decoder) counter(i int) bool {
	s := d.s
	var seen uint32
	var id, init int64
	if n, ok := d.fastCounter(&seen, &id, &init); ok {
		s.Advance(n)
		d.fastCtrs++
		return d.finishCounter(i, seen, id)
	}
	seen, id, init = 0, 0, 0
	if s.Peek() != 'o' {
		return false
	}
	s.Object()
	d.dropExtra(0)
	ok := true
	for ok {
		key, more := s.Key()
		if !more {
			break
		}
		var bit uint32
		switch string(key) {
		case "id":
			bit = b0
			id, ok = d.integer()
		case "init":
			bit = b1
			if !d.null() {
				init, ok = d.integer()
				ok = ok && init >= 0 && init <= math.MaxUint32
			}
		default:
			ok = d.skip(key, 0)
		}
		ok = ok && once(&seen, bit)
	}
	if !ok || s.Err() != nil {
		return false
	}
	return d.finishCounter(i, seen, id)
}

// finishCounter checks and maps counter i from its fields.
func (d *decoder) finishCounter(i int, seen uint32, id int64) bool {
	m := d.m
	if seen&b0 == 0 {
		return false
	}
	if _, dup := m.ctrByID.get(id); dup {
		return false
	}
	m.ctrByID.put(id, i)
	// init is checked (by the caller) but not used: AMK's GPU loader zeroes
	// every counter before a launch (see doc.go).
	m.p.Counters = append(m.p.Counters, schedule.Counter{Name: counterName(id), Width: 32})
	return true
}

// bufList reads a task's inputs or outputs as buffer indices into d.refs,
// from the given position on.
func (d *decoder) bufList(limit int) bool {
	s := d.s
	if s.Peek() != 'a' {
		return false
	}
	s.Array()
	n := 0
	for s.Elem() {
		if n++; n > limit {
			return false
		}
		id, ok := d.integer()
		if !ok {
			return false
		}
		bi, ok := d.m.bufByID.get(id)
		if !ok {
			return false
		}
		d.refs = append(d.refs, bi)
	}
	return s.Err() == nil
}

func (d *decoder) waitList() bool {
	s := d.s
	if s.Peek() != 'a' {
		return false
	}
	s.Array()
	for s.Elem() {
		if len(d.waits) == MaxWaits || s.Peek() != 'o' {
			return false
		}
		s.Object()
		first := len(d.extra)
		var seen uint32
		var ctr, k int64
		ok := true
		for ok {
			key, more := s.Key()
			if !more {
				break
			}
			var bit uint32
			switch string(key) {
			case "counter":
				bit = b0
				ctr, ok = d.integer()
			case "threshold":
				bit = b1
				k, ok = d.integer()
			default:
				ok = d.skip(key, first)
			}
			ok = ok && once(&seen, bit)
		}
		d.dropExtra(first)
		if !ok || s.Err() != nil || seen != b0|b1 || k < 1 || k > math.MaxUint32 {
			return false
		}
		ci, found := d.m.ctrByID.get(ctr)
		if !found {
			return false
		}
		d.waits = append(d.waits, schedule.Step{Kind: schedule.Wait, Object: int32(ci), Value: uint64(k)})
	}
	return s.Err() == nil
}

// paramList reads a task's params into d.ps, number literals into d.lits.
func (d *decoder) paramList() bool {
	s := d.s
	if s.Peek() != 'o' {
		return false
	}
	s.Object()
	for {
		key, more := s.Key()
		if !more {
			break
		}
		if d.ps.get(string(key)) != nil {
			return false
		}
		p := param{key: d.intern(key)}
		switch p.kind = s.Peek(); p.kind {
		case 0:
			return false
		case 'n':
			if v, ok := s.SmallInt(); ok {
				p.num, p.isInt = v, true
				break
			}
			lit := s.Num()
			from := len(d.lits)
			d.lits = append(d.lits, lit...)
			p.lit = d.lits[from:len(d.lits):len(d.lits)]
		default:
			s.Skip()
		}
		d.ps = append(d.ps, p)
	}
	return s.Err() == nil
}

// taskFields are what a task's keys give, before it is mapped.
type taskFields struct {
	seen        uint32
	id, ctr, sm int64
	op          string
	pinned      bool
	nIn         int // inputs in d.refs, before the outputs
}

func (d *decoder) task(i int) bool {
	var tf taskFields
	d.refs, d.waits, d.ps, d.lits = d.refs[:0], d.waits[:0], d.ps[:0], d.lits[:0]
	if n, ok := d.fastTask(&tf); ok {
		d.s.Advance(n)
		d.fastRead++
	} else {
		tf = taskFields{}
		d.refs, d.waits, d.ps, d.lits = d.refs[:0], d.waits[:0], d.ps[:0], d.lits[:0]
		if !d.scanTask(&tf) {
			return false
		}
	}
	return d.finishTask(i, &tf)
}

// scanTask reads a task's keys with the scanner.
func (d *decoder) scanTask(tf *taskFields) bool {
	s := d.s
	if s.Peek() != 'o' {
		return false
	}
	s.Object()
	d.dropExtra(0)
	var seen uint32
	var id, ctr, sm int64
	op := ""
	pinned := false
	var nIn int
	ok := true
	for ok {
		key, more := s.Key()
		if !more {
			break
		}
		var bit uint32
		switch string(key) {
		case "id":
			bit = b0
			id, ok = d.integer()
		case "op":
			bit = b1
			var v []byte
			if v, ok = d.str(); ok {
				op = opName(v)
				ok = op != ""
			}
		case "inputs":
			bit = b2
			// inputs go before outputs in d.refs
			if seen&b3 != 0 {
				ok = false
				break
			}
			ok = d.bufList(MaxInputs)
			nIn = len(d.refs)
		case "outputs":
			bit = b3
			if seen&b2 == 0 {
				// outputs before inputs: read directly only in the usual
				// order.
				ok = false
				break
			}
			ok = d.bufList(MaxOutputs)
		case "out_counter":
			bit = b4
			ctr, ok = d.integer()
		case "waits":
			bit = b5
			if !d.null() {
				ok = d.waitList()
			}
		case "sm":
			bit = b6
			if !d.null() {
				sm, ok = d.integer()
				ok = ok && sm >= 0 && sm < schedule.MaxWorkers
				pinned = true
			}
		case "params":
			bit = b7
			if !d.null() {
				ok = d.paramList()
			}
		case "est_bytes", "est_flops", "label":
			// Keys of AMK's tasks that the mapping does not use, with any
			// value: skipped without keeping the key (a repeat is found by
			// its bit).
			switch key[4] {
			case 'b':
				bit = b9
			case 'f':
				bit = b10
			default:
				bit = b11
			}
			s.Skip()
			ok = s.Err() == nil
		default:
			ok = d.skip(key, 0)
		}
		ok = ok && once(&seen, bit)
	}
	*tf = taskFields{seen: seen, id: id, ctr: ctr, sm: sm, op: op, pinned: pinned, nIn: nIn}
	return ok && s.Err() == nil
}

// finishTask checks and maps task i from its fields.
func (d *decoder) finishTask(i int, tf *taskFields) bool {
	m := d.m
	if tf.seen&(b0|b1|b2|b3|b4) != b0|b1|b2|b3|b4 {
		return false
	}
	id, ctr, sm, op, pinned, nIn := tf.id, tf.ctr, tf.sm, tf.op, tf.pinned, tf.nIn
	ci, found := m.ctrByID.get(ctr)
	if !found {
		return false
	}
	if _, dup := m.taskIDs.get(id); dup {
		return false
	}
	inputs, outputs := d.refs[:nIn], d.refs[nIn:]
	m.quiet, m.failed = true, false
	reads, writes := m.footprint(d.reads[:0], d.writes[:0], "", op, inputs, outputs, d.ps)
	m.quiet = false
	d.reads, d.writes = reads, writes
	if m.failed {
		return false
	}
	m.taskIDs.put(id, i)
	t := schedule.Task{Op: op, Worker: schedule.Dynamic} // named by flushNames, as taskName does
	d.nameBuf = appendTaskName(d.nameBuf, id, op)
	d.nameEnds = append(d.nameEnds, nameEnd{int32(len(m.p.Tasks)), int32(len(d.nameBuf))})
	if pinned {
		t.Worker = int32(sm)
		m.maxSM = max(m.maxSM, sm)
		m.smUses = append(m.smUses, smUse{i, sm})
	}
	t.Before = d.stepSlice(d.waits)
	t.After = d.stepSlice([]schedule.Step{{Kind: schedule.Signal, Object: int32(ci), Value: 1}})
	t.Reads = d.accessSlice(reads)
	t.Writes = d.accessSlice(writes)
	if n := len(d.ps); len(d.paramSlab)+n > cap(d.paramSlab) {
		d.paramSlab = make(schedule.Params, 0, max(n, min(4096, 2*cap(d.paramSlab)), 16))
	}
	t.Params = d.ps.ints(d.paramSlab)
	d.paramSlab = d.paramSlab[:len(d.paramSlab)+len(t.Params)]
	m.p.Tasks = append(m.p.Tasks, t)
	return true
}

// opName returns the opcode's name, or "" for an unknown one.
func opName(b []byte) string {
	for _, op := range opList {
		if op == string(b) {
			return op
		}
	}
	return ""
}

func (d *decoder) stepSlice(src []schedule.Step) []schedule.Step {
	if len(src) == 0 {
		return nil
	}
	if len(d.stepSlab)+len(src) > cap(d.stepSlab) {
		d.stepSlab = make([]schedule.Step, 0, max(len(src), min(4096, 2*cap(d.stepSlab)), 16))
	}
	n := len(d.stepSlab)
	d.stepSlab = append(d.stepSlab, src...)
	return d.stepSlab[n : n+len(src) : n+len(src)]
}

func (d *decoder) accessSlice(src []schedule.Access) []schedule.Access {
	if len(src) == 0 {
		return nil
	}
	if len(d.accSlab)+len(src) > cap(d.accSlab) {
		d.accSlab = make([]schedule.Access, 0, max(len(src), min(4096, 2*cap(d.accSlab)), 16))
	}
	n := len(d.accSlab)
	d.accSlab = append(d.accSlab, src...)
	return d.accSlab[n : n+len(src) : n+len(src)]
}
