package schedule

import (
	"io"
	"slices"
	"sync"

	"github.com/megaproof/megaproof/internal/jsontree"
)

// The reader builds a Program in one pass over the input, without a tree:
// it reads each list element directly into the program. An element it
// cannot read directly (anything malformed) is read again, from the same
// bytes, into a small tree that conv converts with the diagnostics of the
// format; only that element's bytes are kept meanwhile. An element that
// names objects of a list the document has not declared yet (a list that
// comes later, or never) is kept as bytes and read at the end, when every
// list is known. conv reports diagnostics by part and element index, so
// the order in which parts come in the document does not change them:
// the reader gives exactly the program or the diagnostics that converting
// a tree of the whole document would (FuzzReader checks it).

// outcome is how reading an element directly ended.
type outcome uint8

const (
	read    outcome = iota // read into the program
	bail                   // malformed: read it again into a tree
	pending                // names an object of a list not known yet
)

type pendingElem struct {
	i   int
	raw []byte
}

type decoder struct {
	s    *jsontree.Scanner
	sc   jsontree.Scanner // the scanner of the document
	ds   jsontree.Diags
	c    conv
	p    *Program
	seen [nSections]bool // the list's array ended
	pend [nSections][]pendingElem

	// per task, reused
	before, after, steps []Step
	reads, writes, accs  []Access
	stepSlab             []Step
	accSlab              []Access
	paramSlab            Params
	strs                 []string // interned ops and param keys
	keys                 []string // a task's param keys and values
	vals                 []int64
}

// decoders keeps decoders, with their scanner, scratch and indices, for
// the next document: reading many small documents allocates little more
// than their programs.
var decoders = sync.Pool{New: func() any { return new(decoder) }}

// decodeBytes and decodeReader read a document with a pooled decoder.
func decodeBytes(data []byte) (*Program, error) {
	d := decoders.Get().(*decoder)
	defer decoders.Put(d)
	d.sc.Reset(data, 0, maxDepth)
	defer d.sc.Reset(nil, 0, 0) // drop data
	return d.decode()
}

func decodeReader(r io.Reader, limit int64) (*Program, error) {
	d := decoders.Get().(*decoder)
	defer decoders.Put(d)
	d.sc.ResetReader(r, limit, maxDepth)
	defer d.sc.Reset(nil, 0, 0) // drop r
	return d.decode()
}

// decode reads the document of d.sc.
func (d *decoder) decode() (*Program, error) {
	d.s = &d.sc
	d.ds = jsontree.Diags{}
	d.p = &Program{}
	d.c.reset(&d.ds, d.p)
	d.seen = [nSections]bool{}
	d.pend = [nSections][]pendingElem{}
	upTo, err := d.top()
	p := d.p
	d.p, d.c.p = nil, nil
	if err != nil {
		return nil, err
	}
	if err := diagError(d.ds.List(upTo)); err != nil {
		if se := err.(*Error); upTo < 0 {
			se.Diagnostics = withValidate(se.Diagnostics, p)
		}
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// Bits of the top-level keys seen.
const (
	topFormat = 1 << (nSections + iota)
	topName
	topLaunch
)

// top reads the document. It returns the rank below which diagnostics
// count (-1: all), or the error that ends reading.
func (d *decoder) top() (int, error) {
	s := d.s
	d.ds.Rank = rTop
	switch k := s.Peek(); k {
	case 0:
		return 0, fatal(s.Err())
	case 'o':
	default:
		s.Skip()
		s.End()
		if e := s.Err(); e != nil {
			return 0, fatal(e)
		}
		d.c.add(CodeType, "$", "want an object, have %s", jsontree.KindNames[k])
		return -1, nil
	}
	s.Object()
	var seen uint32
	var unknown [][]byte
	var format, name *node
	var formatStr []byte
	hasFormat, formatOK := false, true
	var launch *node
	for {
		key, ok := s.Key()
		if !ok {
			break
		}
		sec := sectionOf(string(key))
		var bit uint32
		switch {
		case sec >= 0:
			bit = 1 << sec
		case string(key) == "format":
			bit = topFormat
		case string(key) == "name":
			bit = topName
		case string(key) == "launch":
			bit = topLaunch
		default:
			for _, u := range unknown {
				if string(u) == string(key) {
					s.Duplicate(key)
					return 0, fatal(s.Err())
				}
			}
			unknown = append(unknown, append([]byte(nil), key...))
			d.ds.Rank = rTop
			d.c.add(CodeUnknownField, "$."+string(key), "unknown field %q", key)
			s.Skip()
			continue
		}
		if seen&bit != 0 {
			s.Duplicate(key)
			return 0, fatal(s.Err())
		}
		seen |= bit
		switch bit {
		case topFormat:
			hasFormat = true
			if s.Peek() == 's' {
				formatStr = append(formatStr, s.Str()...)
				formatOK = string(formatStr) == Format
			} else {
				format = s.Value()
			}
		case topName:
			if s.Peek() == 's' {
				d.p.Name = string(s.Str())
			} else {
				name = s.Value()
			}
		case topLaunch:
			if !d.launch() {
				s.Rewind()
				launch = s.Value()
			}
			s.Release()
		default:
			if !formatOK {
				s.Skip() // the document is of another format
			} else {
				d.list(sec)
			}
		}
		if s.Err() != nil {
			break
		}
	}
	s.End()
	if e := s.Err(); e != nil {
		return 0, fatal(e)
	}
	if seen&topLaunch == 0 {
		d.ds.Rank = rTop
		d.c.add(CodeMissing, "$.launch", "required field %q is missing", "launch")
	}
	switch {
	case !hasFormat:
		d.c.format(nil)
		return rFormat + 1, nil
	case format != nil:
		d.c.format(format) // not a string: reported, and the rest is read
	case !formatOK:
		d.c.format(&node{Kind: 's', Str: string(formatStr)})
		return rFormat + 1, nil
	}
	if name != nil {
		d.c.progName(name)
	}
	if launch != nil {
		d.c.launch(launch)
	}
	// Lists not seen are empty; pending elements are read now, in the
	// order of the lists, each list once those it names are done.
	for sec := range nSections {
		if len(d.pend[sec]) > 0 {
			d.readPending(sec)
		}
		if !d.c.done[sec] {
			d.c.finish(sec)
		}
	}
	return -1, nil
}

// list reads one top-level list.
func (d *decoder) list(sec int) {
	s := d.s
	d.seen[sec] = true
	if k := s.Peek(); k != 'a' {
		if k == 0 {
			return
		}
		n := s.Value()
		if s.Err() == nil {
			d.c.list(sec, n)
			d.c.finish(sec)
		}
		return
	}
	s.Array()
	limit := sectionLimit(sec)
	n := 0
	start := s.Offset()
	for s.Elem() {
		if n++; n > limit {
			s.Skip()
			continue
		}
		if sec == secTasks && n-1 == cap(d.p.Tasks) && n > 64 {
			d.growTasks(start)
		}
		d.element(sec, n-1, false)
		if s.Err() != nil {
			return
		}
	}
	if s.Err() != nil {
		return
	}
	if n > limit {
		// Like a list read whole: only the limit is reported, and the list
		// is empty.
		d.ds.Clear(rElems(sec))
		d.pend[sec] = nil
		p := d.p
		switch sec {
		case secArenas:
			p.Arenas = nil
		case secBuffers:
			p.Buffers = nil
		case secCounters:
			p.Counters = nil
		case secBarriers:
			p.Barriers = nil
		case secSemaphores:
			p.Semaphores = nil
		case secTasks:
			p.Tasks = nil
		}
		d.ds.Rank, d.ds.Elem = rElems(sec), 0
		d.c.limit(sec, n)
	}
	if len(d.pend[sec]) == 0 {
		d.c.finish(sec)
	}
}

// growTasks makes room for the tasks the rest of a document of known size
// holds, estimated from the bytes of those read, so that the task list is
// not copied at every doubling.
func (d *decoder) growTasks(start int64) {
	size, at, n := d.s.Size(), d.s.Offset(), len(d.p.Tasks)
	if size < 0 || at <= start {
		return
	}
	est := int64(float64(n) * float64(size-start) / float64(at-start) * 1.05)
	if est > int64(n) && est <= MaxTasks {
		d.p.Tasks = slices.Grow(d.p.Tasks, int(est)-n)
	}
}

// element reads element i of a list: directly, or again into a tree when
// it is malformed, or as bytes for later when it names a list not known.
// A late element (read at the end) has its place in the list already.
func (d *decoder) element(sec, i int, late bool) {
	s := d.s
	s.Mark()
	defer s.Release()
	p := d.p
	var o outcome
	switch sec {
	case secArenas:
		o = d.arena(slot(&p.Arenas, i))
	case secBuffers:
		o = d.buffer(slot(&p.Buffers, i))
	case secCounters:
		o = d.counter(slot(&p.Counters, i))
	case secBarriers:
		o = d.barrier(slot(&p.Barriers, i))
	case secSemaphores:
		o = d.semaphore(slot(&p.Semaphores, i))
	case secTasks:
		o = d.task(slot(&p.Tasks, i))
	}
	if o == read {
		return
	}
	s.Rewind()
	if o == pending && !late {
		s.Skip()
		if s.Err() == nil {
			d.pend[sec] = append(d.pend[sec], pendingElem{i, append([]byte(nil), s.Marked()...)})
		}
		return
	}
	n := s.Value()
	if s.Err() != nil {
		return
	}
	d.ds.Rank, d.ds.Elem = rElems(sec), i
	mark := d.ds.Mark()
	d.c.deferred = false
	d.c.element(sec, n, i)
	if d.c.deferred && !late {
		d.ds.Undo(mark)
		d.pend[sec] = append(d.pend[sec], pendingElem{i, append([]byte(nil), s.Marked()...)})
	}
}

// slot returns the place of element i, appending it when it is new.
func slot[T any](l *[]T, i int) *T {
	if i == len(*l) {
		var zero T
		*l = append(*l, zero)
	}
	return &(*l)[i]
}

// readPending reads the elements of a list kept for the end, in order;
// their diagnostics go where their indices put them.
func (d *decoder) readPending(sec int) {
	outer := d.s
	d.ds.Late = true
	for _, pe := range d.pend[sec] {
		d.s = jsontree.NewScanner(pe.raw, 0, maxDepth)
		d.s.Prefix(sectionKeys[sec], pe.i)
		d.element(sec, pe.i, true)
	}
	d.s = outer
	d.ds.Late = false
	d.pend[sec] = nil
}

// str, uint, int and boolean read a value of their type; they return false
// for a value of another type or out of range.
func (d *decoder) str() ([]byte, bool) {
	if d.s.Peek() != 's' {
		return nil, false
	}
	v := d.s.Str()
	return v, d.s.Err() == nil
}

func (d *decoder) uint(max uint64) (uint64, bool) {
	s := d.s
	if v, ok := s.SmallInt(); ok {
		return uint64(v), uint64(v) <= max
	}
	if s.Peek() != 'n' {
		return 0, false
	}
	lit := s.Num()
	if v, ok := smallUint(lit); ok {
		return v, v <= max
	}
	v, code, _ := uintLit(lit, max)
	return v, code == "" && s.Err() == nil
}

// smallUint reads a literal of at most 18 digits.
func smallUint(lit []byte) (uint64, bool) {
	if len(lit) == 0 || len(lit) > 18 {
		return 0, false
	}
	var v uint64
	for _, c := range lit {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return v, true
}

func (d *decoder) int(max int64) (int64, bool) {
	s := d.s
	if v, ok := s.SmallInt(); ok {
		if v > max {
			return 0, false
		}
		return v, true
	}
	if s.Peek() != 'n' {
		return 0, false
	}
	lit := s.Num()
	if v, ok := smallUint(lit); ok && int64(v) <= max {
		return int64(v), true
	}
	v, code, _ := intLit(lit, max)
	return v, code == "" && s.Err() == nil
}

func (d *decoder) boolean() (bool, bool) {
	s := d.s
	if s.Peek() != 'b' {
		return false, false
	}
	v := s.Bool()
	return v, s.Err() == nil
}

// intern returns a string of b, shared with earlier ones of the same
// bytes: ops and param keys repeat across tasks.
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

// find looks a name up in a list: pending when the list is not done.
func (d *decoder) find(sec int, name []byte) (int32, outcome) {
	if i, ok := d.c.idx[sec].find(name); ok {
		return i, read
	}
	if !d.c.done[sec] {
		return -1, pending
	}
	return -1, bail
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

// once marks a field seen and reports false when it already was.
func once(seen *uint32, bit uint32) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

func (d *decoder) launch() bool {
	s := d.s
	s.Mark()
	if s.Peek() != 'o' {
		return false
	}
	s.Object()
	l := Launch{PerSM: 1}
	var seen uint32
	ok := true
	for ok {
		key, more := s.Key()
		if !more {
			break
		}
		switch string(key) {
		case "target":
			var v []byte
			v, ok = d.str()
			l.Target = string(v)
			ok = ok && once(&seen, b0)
		case "sms":
			var v uint64
			v, ok = d.uint(1<<31 - 1)
			l.SMs = int(v)
			ok = ok && once(&seen, b1)
		case "blocks_per_sm":
			var v uint64
			v, ok = d.uint(1<<31 - 1)
			l.PerSM = int(v)
			ok = ok && once(&seen, b2)
		case "workers":
			var v uint64
			v, ok = d.uint(1<<31 - 1)
			l.Workers = int(v)
			ok = ok && once(&seen, b3)
		case "cooperative":
			l.Cooperative, ok = d.boolean()
			ok = ok && once(&seen, b4)
		default:
			ok = false
		}
	}
	if !ok || s.Err() != nil || seen&(b1|b3) != b1|b3 {
		return false
	}
	d.p.Launch = l
	return true
}

func (d *decoder) arena(a *Arena) outcome {
	s := d.s
	if s.Peek() != 'o' {
		return bail
	}
	s.Object()
	var seen uint32
	ok := true
	for ok {
		key, more := s.Key()
		if !more {
			break
		}
		switch string(key) {
		case "name":
			var v []byte
			v, ok = d.str()
			a.Name = string(v)
			ok = ok && once(&seen, b0)
		case "size":
			a.Size, ok = d.uint(maxExtent)
			ok = ok && once(&seen, b1)
		default:
			ok = false
		}
	}
	if !ok || s.Err() != nil || seen != b0|b1 {
		return bail
	}
	return read
}

func (d *decoder) buffer(b *Buffer) outcome {
	s := d.s
	if s.Peek() != 'o' {
		return bail
	}
	s.Object()
	*b = Buffer{Arena: NoArena}
	var seen uint32
	ok, o := true, read
	for ok {
		key, more := s.Key()
		if !more {
			break
		}
		switch string(key) {
		case "name":
			var v []byte
			v, ok = d.str()
			b.Name = string(v)
			ok = ok && once(&seen, b0)
		case "kind":
			var v []byte
			v, ok = d.str()
			b.Kind = kindOf(v)
			ok = ok && b.Kind != 0 && once(&seen, b1)
		case "size":
			b.Size, ok = d.uint(maxExtent)
			ok = ok && once(&seen, b2)
		case "arena":
			var v []byte
			if v, ok = d.str(); ok {
				b.Arena, o = d.find(secArenas, v)
				ok = o == read
			}
			ok = ok && once(&seen, b3)
		case "offset":
			b.Offset, ok = d.uint(maxExtent)
			ok = ok && once(&seen, b4)
		default:
			ok = false
		}
	}
	if o == pending {
		return pending
	}
	if !ok || s.Err() != nil || seen&(b0|b1|b2) != b0|b1|b2 {
		return bail
	}
	return read
}

func (d *decoder) counter(c *Counter) outcome {
	s := d.s
	if s.Peek() != 'o' {
		return bail
	}
	s.Object()
	*c = Counter{Width: 32}
	var seen uint32
	ok := true
	for ok {
		key, more := s.Key()
		if !more {
			break
		}
		switch string(key) {
		case "name":
			var v []byte
			v, ok = d.str()
			c.Name = string(v)
			ok = ok && once(&seen, b0)
		case "init":
			c.Init, ok = d.uint(^uint64(0))
			ok = ok && once(&seen, b1)
		case "width":
			var w uint64
			w, ok = d.uint(255)
			c.Width = uint8(w)
			ok = ok && once(&seen, b2)
		default:
			ok = false
		}
	}
	if !ok || s.Err() != nil || seen&b0 == 0 {
		return bail
	}
	return read
}

func (d *decoder) barrier(b *Barrier) outcome {
	s := d.s
	if s.Peek() != 'o' {
		return bail
	}
	s.Object()
	var seen uint32
	ok := true
	for ok {
		key, more := s.Key()
		if !more {
			break
		}
		switch string(key) {
		case "name":
			var v []byte
			v, ok = d.str()
			b.Name = string(v)
			ok = ok && once(&seen, b0)
		case "parties":
			var v uint64
			v, ok = d.uint(MaxTasks)
			b.Parties = int(v)
			ok = ok && once(&seen, b1)
		default:
			ok = false
		}
	}
	if !ok || s.Err() != nil || seen != b0|b1 {
		return bail
	}
	return read
}

func (d *decoder) semaphore(m *Semaphore) outcome {
	s := d.s
	if s.Peek() != 'o' {
		return bail
	}
	s.Object()
	var seen uint32
	ok := true
	for ok {
		key, more := s.Key()
		if !more {
			break
		}
		switch string(key) {
		case "name":
			var v []byte
			v, ok = d.str()
			m.Name = string(v)
			ok = ok && once(&seen, b0)
		case "tokens":
			m.Tokens, ok = d.uint(maxExtent)
			ok = ok && once(&seen, b1)
		default:
			ok = false
		}
	}
	if !ok || s.Err() != nil || seen&b0 == 0 {
		return bail
	}
	return read
}

// task reads a task directly; its steps and accesses go to slabs shared
// by the program's tasks (each slice capped at its length, so appending to
// one copies it).
func (d *decoder) task(t *Task) outcome {
	s := d.s
	if s.Peek() != 'o' {
		return bail
	}
	s.Object()
	*t = Task{Worker: Dynamic}
	var seen uint32
	ok, o := true, read
	// The lists are read into the scratch d.steps and d.accs; each list's
	// range is recorded and copied out at the end.
	d.steps, d.accs = d.steps[:0], d.accs[:0]
	var lists [4][2]int // before, reads, writes, after: [from, to)
	for ok {
		key, more := s.Key()
		if !more {
			break
		}
		switch string(key) {
		case "name":
			var v []byte
			v, ok = d.str()
			t.Name = string(v)
			ok = ok && once(&seen, b0)
		case "op":
			var v []byte
			v, ok = d.str()
			t.Op = d.intern(v)
			ok = ok && once(&seen, b1)
		case "params":
			ok = once(&seen, b2) && d.params(t)
		case "worker":
			var w uint64
			w, ok = d.uint(MaxWorkers)
			t.Worker = int32(w)
			ok = ok && once(&seen, b3)
		case "before", "after":
			bit, l := uint32(b4), 0
			if key[0] == 'a' {
				bit, l = b7, 3
			}
			from := len(d.steps)
			ok, o = d.stepList()
			lists[l] = [2]int{from, len(d.steps)}
			ok = ok && once(&seen, bit)
		case "reads", "writes":
			bit, l := uint32(b5), 1
			if key[0] == 'w' {
				bit, l = b6, 2
			}
			from := len(d.accs)
			ok, o = d.accessList()
			lists[l] = [2]int{from, len(d.accs)}
			ok = ok && once(&seen, bit)
		default:
			ok = false
		}
	}
	if o == pending {
		return pending
	}
	if !ok || s.Err() != nil || seen&b0 == 0 {
		return bail
	}
	t.Before = d.stepSlice(d.steps[lists[0][0]:lists[0][1]])
	t.Reads = d.accessSlice(d.accs[lists[1][0]:lists[1][1]])
	t.Writes = d.accessSlice(d.accs[lists[2][0]:lists[2][1]])
	t.After = d.stepSlice(d.steps[lists[3][0]:lists[3][1]])
	return read
}

// stepSlice copies steps to the slab.
func (d *decoder) stepSlice(src []Step) []Step {
	if len(src) == 0 {
		return nil
	}
	if len(d.stepSlab)+len(src) > cap(d.stepSlab) {
		d.stepSlab = make([]Step, 0, max(len(src), min(4096, 2*cap(d.stepSlab)), 16))
	}
	n := len(d.stepSlab)
	d.stepSlab = append(d.stepSlab, src...)
	return d.stepSlab[n : n+len(src) : n+len(src)]
}

func (d *decoder) accessSlice(src []Access) []Access {
	if len(src) == 0 {
		return nil
	}
	if len(d.accSlab)+len(src) > cap(d.accSlab) {
		d.accSlab = make([]Access, 0, max(len(src), min(4096, 2*cap(d.accSlab)), 16))
	}
	n := len(d.accSlab)
	d.accSlab = append(d.accSlab, src...)
	return d.accSlab[n : n+len(src) : n+len(src)]
}

func (d *decoder) params(t *Task) bool {
	s := d.s
	if s.Peek() != 'o' {
		return false
	}
	s.Object()
	d.keys, d.vals = d.keys[:0], d.vals[:0]
	for {
		key, more := s.Key()
		if !more {
			break
		}
		k := d.intern(key)
		for _, seen := range d.keys {
			if seen == k {
				return false
			}
		}
		v, ok := d.int(1<<63 - 1)
		if !ok {
			return false
		}
		d.keys, d.vals = append(d.keys, k), append(d.vals, v)
	}
	if s.Err() != nil {
		return false
	}
	if n := len(d.keys); n > 0 {
		if len(d.paramSlab)+n > cap(d.paramSlab) {
			d.paramSlab = make(Params, 0, max(n, min(4096, 2*cap(d.paramSlab)), 16))
		}
		from := len(d.paramSlab)
		for i, k := range d.keys {
			d.paramSlab = append(d.paramSlab, Param{k, d.vals[i]})
		}
		t.Params = d.paramSlab[from : from+n : from+n]
		SortParams(t.Params)
	}
	return true
}

func (d *decoder) stepList() (bool, outcome) {
	s := d.s
	if s.Peek() != 'a' {
		return false, read
	}
	s.Array()
	for s.Elem() {
		st, o := d.step()
		if o != read {
			return false, o
		}
		d.steps = append(d.steps, st)
	}
	return s.Err() == nil, read
}

func (d *decoder) accessList() (bool, outcome) {
	s := d.s
	if s.Peek() != 'a' {
		return false, read
	}
	s.Array()
	for s.Elem() {
		a, o := d.access()
		if o != read {
			return false, o
		}
		d.accs = append(d.accs, a)
	}
	return s.Err() == nil, read
}

// Step fields by bit: the kinds, then the extras.
const (
	fWait = b0 << iota
	fSignal
	fSync
	fArrive
	fAcquire
	fRelease
	fFence
	fGE
	fAdd
	fN
	fOrder
	fScope
	fKinds = fWait | fSignal | fSync | fArrive | fAcquire | fRelease | fFence
)

func (d *decoder) step() (Step, outcome) {
	s := d.s
	if s.Peek() != 'o' {
		return Step{}, bail
	}
	s.Object()
	var st Step
	var seen uint32
	var ge, add, n uint64
	var scope Scope
	order := ""
	ok, o := true, read
	for ok {
		key, more := s.Key()
		if !more {
			break
		}
		var bit uint32
		var v []byte
		switch string(key) {
		case "wait", "signal":
			bit, st.Kind = fWait, Wait
			if key[0] == 's' {
				bit, st.Kind = fSignal, Signal
			}
			if v, ok = d.str(); ok {
				st.Object, o = d.find(secCounters, v)
				ok = o == read
			}
		case "sync", "arrive":
			bit, st.Kind = fSync, Sync
			if key[0] == 'a' {
				bit, st.Kind = fArrive, Arrive
			}
			if v, ok = d.str(); ok {
				st.Object, o = d.find(secBarriers, v)
				ok = o == read
			}
		case "acquire", "release":
			bit, st.Kind = fAcquire, Acquire
			if key[0] == 'r' {
				bit, st.Kind = fRelease, Release
			}
			if v, ok = d.str(); ok {
				st.Object, o = d.find(secSemaphores, v)
				ok = o == read
			}
		case "fence":
			bit, st.Kind = fFence, Fence
			if v, ok = d.str(); ok {
				st.Scope, ok = scopeOf(v)
			}
		case "ge":
			bit = fGE
			ge, ok = d.uint(^uint64(0))
		case "add":
			bit = fAdd
			add, ok = d.uint(maxExtent)
		case "n":
			bit = fN
			n, ok = d.uint(maxExtent)
		case "order":
			bit = fOrder
			if v, ok = d.str(); ok {
				switch string(v) {
				case "relaxed", "acquire", "release":
					order = string(v) // constant strings: no allocation
				default:
					ok = false
				}
			}
		case "scope":
			bit = fScope
			if v, ok = d.str(); ok {
				scope, ok = scopeOf(v)
			}
		default:
			ok = false
		}
		ok = ok && once(&seen, bit)
	}
	if o == pending {
		return Step{}, pending
	}
	kind := seen & fKinds
	if !ok || s.Err() != nil || kind == 0 || kind&(kind-1) != 0 || seen&^(kind|stepExtra(kind)) != 0 {
		return Step{}, bail
	}
	switch st.Kind {
	case Wait:
		if seen&fGE == 0 || ge == 0 || (order != "" && order != "relaxed" && order != "acquire") {
			return Step{}, bail
		}
		st.Value = ge
	case Signal:
		if order != "" && order != "relaxed" && order != "release" {
			return Step{}, bail
		}
		st.Value = 1
		if seen&fAdd != 0 {
			st.Value = add
		}
	case Acquire, Release:
		st.Value = 1
		if seen&fN != 0 {
			st.Value = n
		}
	}
	st.Relaxed = order == "relaxed"
	if seen&fScope != 0 {
		st.Scope = scope
	}
	return st, read
}

// stepExtra is, per step kind bit, the fields beside the kind it may have.
func stepExtra(kind uint32) uint32 {
	switch kind {
	case fWait:
		return fGE | fOrder | fScope
	case fSignal:
		return fAdd | fOrder | fScope
	case fAcquire, fRelease:
		return fN | fScope
	}
	return 0
}

func (d *decoder) access() (Access, outcome) {
	s := d.s
	if s.Peek() != 'o' {
		return Access{}, bail
	}
	s.Object()
	var a Access
	var seen uint32
	ok, o := true, read
	for ok {
		key, more := s.Key()
		if !more {
			break
		}
		var bit uint32
		switch string(key) {
		case "buffer":
			bit = b0
			var v []byte
			if v, ok = d.str(); ok {
				a.Buffer, o = d.find(secBuffers, v)
				ok = o == read
			}
		case "offset":
			bit = b1
			a.Offset, ok = d.int(maxExtent)
		case "length":
			bit = b2
			a.Length, ok = d.uint(maxExtent)
			ok = ok && a.Length != 0
		case "rows":
			bit = b3
			a.Rows, ok = d.uint(maxExtent)
		case "stride":
			bit = b4
			a.Stride, ok = d.uint(maxExtent)
		default:
			ok = false
		}
		ok = ok && once(&seen, bit)
	}
	if o == pending {
		return Access{}, pending
	}
	if !ok || s.Err() != nil || seen&(b0|b2) != b0|b2 {
		return Access{}, bail
	}
	return a, read
}
