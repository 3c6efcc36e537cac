package amk

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/megaproof/megaproof/internal/jsontree"
	"github.com/megaproof/megaproof/schedule"
)

// AMK's ABI capacities (schedule/ir.py ABI_MAX_*, mirrored in vm/abi.h).
const (
	MaxInputs  = 8 // buffers a task may read
	MaxOutputs = 4 // buffers a task may write
	MaxWaits   = 8 // waits a task may have
	MaxRank    = 4 // dimensions a buffer may have
)

// IRMajor is the major version of AMK's IR this package reads ("0.2.0" and
// any other "0.x" are accepted, as AMK's own reader accepts them).
const IRMajor = "0"

// Detect reports whether data looks like AutoMegaKernel IR rather than
// megaproof's own JSON form. It reads top-level keys only, stopping at the
// first one that decides: "ir_version" or "abi_version" mean AMK, "format"
// or "launch" mean megaproof. Without either, an object with one of AMK's
// top-level lists ("tasks", "buffers", "counters") or "target", "meta" or
// "pages" is taken as AMK (the AMK reader then requires the three lists).
// Detect does not validate anything; it never panics.
func Detect(data []byte) bool {
	return detect(jsontree.NewScanner(data, 0, maxDepth))
}

func detect(s *jsontree.Scanner) bool {
	if s.Peek() != 'o' {
		return false
	}
	s.Object()
	amkish := false
	for {
		key, ok := s.Key()
		if !ok {
			key = s.Member() // a key followed by a syntax error still decides
		}
		switch string(key) {
		case "ir_version", "abi_version":
			return true
		case "format", "launch":
			return false
		case "tasks", "buffers", "counters", "target", "meta", "pages":
			amkish = true
		}
		if !ok {
			return amkish
		}
		s.Skip()
		if s.Err() != nil {
			return false
		}
	}
}

// DetectReader decides as [Detect] does for the document r holds, reading
// no more of it than the decision needs (usually its first key), at most
// maxInput bytes (maxInput <= 0: no limit). It returns a reader of the
// whole document, what it read included. An error of r is returned as it
// is.
func DetectReader(r io.Reader, maxInput int64) (isAMK bool, doc io.Reader, err error) {
	var seen bytes.Buffer
	s := jsontree.NewReader(io.TeeReader(r, &seen), maxInput, maxDepth)
	isAMK = detect(s)
	if e := s.Err(); e != nil && e.Kind == jsontree.IO {
		return false, nil, e.Err
	}
	return isAMK, io.MultiReader(&seen, r), nil
}

// DecodeAuto reads one document of either format from r, detected as
// [DetectReader] does, with the reader of that format: [DecodeLimit] or
// [schedule.DecodeLimit], at most maxInput bytes in all.
func DecodeAuto(r io.Reader, maxInput int64) (p *schedule.Program, isAMK bool, err error) {
	isAMK, doc, err := DetectReader(r, maxInput)
	if err != nil {
		return nil, false, err
	}
	if isAMK {
		p, err = DecodeLimit(doc, maxInput)
	} else {
		p, err = schedule.DecodeLimit(doc, maxInput)
	}
	return p, isAMK, err
}

// Decode reads AMK IR JSON from r, at most [schedule.DefaultMaxInput]
// bytes of it, and maps it; see [DecodeLimit].
func Decode(r io.Reader) (*schedule.Program, error) {
	return DecodeLimit(r, schedule.DefaultMaxInput)
}

// DecodeLimit reads AMK IR JSON from r and maps it to a
// [schedule.Program], streaming: it builds the program in one pass over the
// input, holding little more than the program. It accepts at most
// maxInput bytes (maxInput <= 0: no limit); longer input is invalid.limit.
//
// Malformed input of any kind yields a *[schedule.Error] whose diagnostics
// carry an invalid.* code and the JSON path (in the AMK document) of each
// problem. It never panics. An error of r itself is returned as it is. The
// mapping is described in the package documentation.
func DecodeLimit(r io.Reader, maxInput int64) (*schedule.Program, error) {
	return decodeReader(r, maxInput)
}

// Unmarshal maps AutoMegaKernel IR JSON to a [schedule.Program]; see
// [DecodeLimit]. The bytes are in memory already, so no input limit
// applies.
func Unmarshal(data []byte) (*schedule.Program, error) {
	return decodeBytes(data)
}

// The parts of a document, in the order their diagnostics are reported.
const (
	rRoot = iota
	rIRVersion
	rABIVersion
	rTarget
	rBuffers
	rCounters
	rPages
	rTasks
	rLaunch
)

// idIndex maps AMK ids to list positions: densely while ids are small,
// by a map beyond.
type idIndex struct {
	dense []int32 // id -> position + 1
	m     map[int64]int
}

func (x *idIndex) get(id int64) (int, bool) {
	if id >= 0 && id < int64(len(x.dense)) && x.dense[id] != 0 {
		return int(x.dense[id]) - 1, true
	}
	i, ok := x.m[id]
	return i, ok
}

func (x *idIndex) reset() {
	clear(x.dense)
	clear(x.m)
}

// uniqueID reads the required integer "id" of element i of the list
// ("buffers", "counters", "tasks") at path and records it in idx. ok is
// false when it is missing, not an integer, or already used (reported as
// invalid.duplicate naming the element that has it).
func (m *mapper) uniqueID(n *node, path string, idx *idIndex, i int, what, list string) (id int64, ok bool) {
	v := m.required(n, path, "id")
	if v == nil {
		return 0, false
	}
	if id, ok = m.integer(v, path+".id"); !ok {
		return id, false
	}
	if j, dup := idx.get(id); dup {
		m.add(schedule.CodeDuplicate, path+".id", "%s id %d already used by $.%s[%d]", what, id, list, j)
		return id, false
	}
	idx.put(id, i)
	return id, true
}

func (x *idIndex) put(id int64, i int) {
	if id >= 0 && id < 1<<16 {
		if id >= int64(len(x.dense)) {
			x.dense = append(x.dense, make([]int32, int(id)+1-len(x.dense)+len(x.dense)/2)...)
		}
		x.dense[id] = int32(i + 1)
		return
	}
	if x.m == nil {
		x.m = map[int64]int{}
	}
	x.m[id] = i
}

// mapper builds a program from the parts of an AMK document.
type mapper struct {
	reader
	p        *schedule.Program
	bufByID  idIndex  // AMK buffer id -> index into p.Buffers
	layouts  []layout // by buffer index; bits 0 when the buffer is malformed
	names    map[string]bool
	ctrByID  idIndex // AMK counter id -> index into p.Counters
	taskIDs  idIndex // AMK task id -> index into p.Tasks
	maxSM    int64   // largest pinned sm, or -1
	smUses   []smUse // every pinned task, to check against the target
	targetSM int64   // target.num_sms, or 0 without a target
}

type smUse struct {
	task int
	sm   int64
}

func newMapper(ds *jsontree.Diags) *mapper {
	m := new(mapper)
	m.reset(ds)
	return m
}

// reset makes m ready for a document, keeping the memory of its indices.
func (m *mapper) reset(ds *jsontree.Diags) {
	names := m.names
	if names == nil {
		names = map[string]bool{}
	}
	clear(names)
	buf, ctr, task, layouts, uses := m.bufByID, m.ctrByID, m.taskIDs, m.layouts[:0], m.smUses[:0]
	buf.reset()
	ctr.reset()
	task.reset()
	*m = mapper{reader: reader{ds: ds}, p: &schedule.Program{}, maxSM: -1, names: names,
		bufByID: buf, ctrByID: ctr, taskIDs: task, layouts: layouts, smUses: uses}
	m.p.Launch.Cooperative = true
}

func (m *mapper) at(rank, elem int) { m.ds.Rank, m.ds.Elem = rank, elem }

// root checks that the document is an object.
func (m *mapper) root(n *node) bool {
	m.at(rRoot, 0)
	return m.object(n, "$")
}

// version checks ir_version or abi_version (n not nil nor null).
func (m *mapper) version(key string, n *node) {
	rank := rIRVersion
	if key == "abi_version" {
		rank = rABIVersion
	}
	m.at(rank, 0)
	if s, ok := m.str(n, "$."+key); ok {
		if major, _, _ := strings.Cut(s, "."); major != IRMajor {
			m.add(schedule.CodeFormat, "$."+key, "%s %q has major version %q; this reader supports %s.x", key, s, major, IRMajor)
		}
	}
}

// meta takes the program name and GPU from meta (n not nil nor null);
// target.name, read after it, overrides the GPU. Nothing in meta is
// checked.
func (m *mapper) meta(n *node) {
	if n.Kind != 'o' {
		return
	}
	if v := optional(n, "model"); v != nil && v.Kind == 's' {
		m.p.Name = v.Str
	}
	if v := optional(n, "gpu"); v != nil && v.Kind == 's' {
		m.p.Launch.Target = v.Str
	}
}

// target reads the target (n not nil nor null).
func (m *mapper) target(t *node) {
	const path = "$.target"
	m.at(rTarget, 0)
	if !m.object(t, path) {
		return
	}
	if v := optional(t, "name"); v != nil {
		if s, ok := m.str(v, path+".name"); ok {
			m.p.Launch.Target = s
		}
	}
	if v := m.required(t, path, "num_sms"); v != nil {
		if n, ok := m.integer(v, path+".num_sms"); ok {
			switch {
			case n < 1:
				m.add(schedule.CodeLaunch, path+".num_sms", "target has %d SMs", n)
			case n > schedule.MaxWorkers:
				m.add(schedule.CodeLimit, path+".num_sms", "%d SMs exceed the limit of %d", n, schedule.MaxWorkers)
			default:
				m.targetSM = n
			}
		}
	}
	if v := optional(t, "supports_cooperative"); v != nil {
		if b, ok := m.boolean(v, path+".supports_cooperative"); ok {
			m.p.Launch.Cooperative = b
		}
	}
}

// list checks one of the lists every AMK document has (n nil: absent).
func (m *mapper) list(rank int, key string, n *node) ([]*node, bool) {
	m.at(rank, 0)
	switch {
	case n == nil:
		m.add(schedule.CodeMissing, "$."+key, "required field %q is missing", key)
		return nil, false
	case n.Kind == 'z':
		m.add(schedule.CodeMissing, "$."+key, "required field %q is null; want an array", key)
		return nil, false
	}
	return m.array(n, "$."+key)
}

// launch sets the launch from the target, or from the pinned tasks when the
// IR has no target.
func (m *mapper) launch() {
	m.at(rLaunch, 0)
	sms := m.targetSM
	if sms == 0 {
		sms = max(1, m.maxSM+1)
	}
	for _, u := range m.smUses {
		if u.sm >= sms {
			m.add(schedule.CodeWorker, fmt.Sprintf("$.tasks[%d].sm", u.task), "task is pinned to SM %d; the target has SMs 0..%d", u.sm, sms-1)
		}
	}
	l := &m.p.Launch
	l.SMs, l.PerSM, l.Workers = int(sms), 1, int(sms)
	m.queues()
}

// buffer maps buffer i.
func (m *mapper) buffer(bn *node, i int) {
	m.at(rBuffers, i)
	path := fmt.Sprintf("$.buffers[%d]", i)
	m.p.Buffers = append(m.p.Buffers, schedule.Buffer{Arena: schedule.NoArena})
	m.layouts = append(m.layouts, layout{index: int32(i)})
	if !m.object(bn, path) {
		return
	}
	b := &m.p.Buffers[i]
	id, idOK := m.uniqueID(bn, path, &m.bufByID, i, "buffer", "buffers")
	name := ""
	if v := m.required(bn, path, "name"); v != nil {
		name, _ = m.str(v, path+".name")
	}
	if v := m.required(bn, path, "kind"); v != nil {
		if s, ok := m.str(v, path+".kind"); ok {
			if k, known := kinds[s]; known {
				b.Kind = k
			} else {
				m.add(schedule.CodeValue, path+".kind", "unknown buffer kind %q", s)
			}
		}
	}
	var bits int64
	if v := m.required(bn, path, "dtype"); v != nil {
		if s, ok := m.str(v, path+".dtype"); ok {
			if bits = dtypeBits[s]; bits == 0 {
				m.add(schedule.CodeValue, path+".dtype", "unknown dtype %q", s)
			}
		}
	}
	if v := optional(bn, "space"); v != nil {
		if s, ok := m.str(v, path+".space"); ok && !memSpaces[s] {
			m.add(schedule.CodeValue, path+".space", "unknown memory space %q", s)
		}
	}
	var shape []int64
	var numel int64
	shapeOK := false
	if v := m.required(bn, path, "shape"); v != nil {
		if dims, ok := m.array(v, path+".shape"); ok {
			lits := make([][]byte, len(dims))
			kinds := make([]byte, len(dims))
			for j, dn := range dims {
				kinds[j], lits[j] = dn.Kind, []byte(dn.Str)
			}
			shape, numel, shapeOK = m.shape(kinds, lits, path)
		}
	}
	m.size(i, bits, shape, numel, shapeOK && bits != 0, path)
	b.Name = uniqueName(m.names, name, id, idOK, i)
}

// shape reads a buffer's shape from its dimensions' kinds and literals: at
// most MaxRank positive integers.
func (m *mapper) shape(kinds []byte, lits [][]byte, path string) (shape []int64, numel int64, ok bool) {
	if len(kinds) > MaxRank {
		m.add(schedule.CodeLimit, path+".shape", "rank %d exceeds AMK's ABI limit of %d", len(kinds), MaxRank)
		return nil, 0, false
	}
	numel, ok = 1, true
	for j, k := range kinds {
		dp := path + ".shape[" + strconv.Itoa(j) + "]"
		if k != 'n' {
			m.add(schedule.CodeType, dp, "want an integer, have %s", jsontree.KindNames[k])
			ok = false
			continue
		}
		d, dok := m.integerLit(lits[j], dp)
		if !dok {
			ok = false
			continue
		}
		if d < 1 {
			m.add(schedule.CodeSize, dp, "dimension %d; want at least 1", d)
			ok = false
			continue
		}
		if numel > maxBufferBytes*8/d {
			m.add(schedule.CodeSize, path+".shape", "shape has more than 2^59 elements")
			return nil, 0, false
		}
		numel *= d
		shape = append(shape, d)
	}
	return shape, numel, ok
}

// size sets buffer i's size and layout.
func (m *mapper) size(i int, bits int64, shape []int64, numel int64, ok bool, path string) {
	if !ok {
		return
	}
	bits = storageBits(bits, m.p.Buffers[i].Kind)
	if tooLarge(bits, shape, numel) {
		m.add(schedule.CodeSize, path+".shape", "buffer of %d elements exceeds %d bytes", numel, int64(maxBufferBytes))
		return
	}
	m.p.Buffers[i].Size = storageSize(bits, shape, numel)
	m.layouts[i] = layout{index: int32(i), bits: bits, shape: shape, numel: numel}
}

// uniqueName is the buffer's AMK name, made unique with its id when another
// buffer already has it (megaproof requires unique names; AMK does not).
func uniqueName(names map[string]bool, name string, id int64, idOK bool, i int) string {
	cand := name
	if cand == "" || names[cand] {
		tag := "#" + strconv.FormatInt(id, 10)
		if !idOK {
			tag = "@" + strconv.Itoa(i)
		}
		if cand == "" {
			cand = "buffer" + tag
		}
		for names[cand] {
			cand += tag
		}
	}
	names[cand] = true
	return cand
}

// counter maps counter i.
func (m *mapper) counter(cn *node, i int) {
	m.at(rCounters, i)
	path := fmt.Sprintf("$.counters[%d]", i)
	c := schedule.Counter{Width: 32, Name: fmt.Sprintf("counter@%d", i)}
	if m.object(cn, path) {
		if id, ok := m.uniqueID(cn, path, &m.ctrByID, i, "counter", "counters"); ok {
			c.Name = counterName(id)
		}
		if v := optional(cn, "init"); v != nil {
			if init, ok := m.integer(v, path+".init"); ok {
				// Checked, not used: AMK's GPU loader zeroes every
				// counter before a launch (see doc.go).
				if init < 0 || init > math.MaxUint32 {
					m.add(schedule.CodeSize, path+".init", "init %d is outside the uint32 range of an AMK counter", init)
				}
			}
		}
	}
	m.p.Counters = append(m.p.Counters, c)
}

// counterNames are the names of the counters with small ids.
var counterNames = func() (names [1024]string) {
	for i := range names {
		names[i] = "c" + strconv.Itoa(i)
	}
	return names
}()

// counterName is the name of the counter with an id: c<id>.
func counterName(id int64) string {
	if id >= 0 && id < int64(len(counterNames)) {
		return counterNames[id]
	}
	return "c" + strconv.FormatInt(id, 10)
}

// pages checks the pages object and its buffer_to_page bindings. It maps
// nothing: AMK's GPU loader does not read pages (each activation and
// output gets a slot of its own in the loader's arena), so buffers bound
// to one page do not alias (see doc.go).
func (m *mapper) pages(pg *node) {
	const path = "$.pages"
	m.at(rPages, 0)
	if !m.object(pg, path) {
		return
	}
	var pageByID idIndex
	if v := m.required(pg, path, "pages"); v != nil {
		if list, ok := m.array(v, path+".pages"); ok {
			for j, pn := range list {
				pp := fmt.Sprintf("%s.pages[%d]", path, j)
				if !m.object(pn, pp) {
					continue
				}
				if iv := m.required(pn, pp, "id"); iv != nil {
					if id, ok := m.integer(iv, pp+".id"); ok {
						if k, dup := pageByID.get(id); dup {
							m.add(schedule.CodeDuplicate, pp+".id", "page id %d already used by %s.pages[%d]", id, path, k)
						} else {
							pageByID.put(id, j)
						}
					}
				}
				if sv := optional(pn, "space"); sv != nil {
					if s, ok := m.str(sv, pp+".space"); ok && !memSpaces[s] {
						m.add(schedule.CodeValue, pp+".space", "unknown memory space %q", s)
					}
				}
			}
		}
	}
	bind := m.required(pg, path, "buffer_to_page")
	if bind == nil || !m.object(bind, path+".buffer_to_page") {
		return
	}
	bound := map[int]string{} // buffer index -> the key that bound it
	for k, key := range bind.Keys {
		kp := path + ".buffer_to_page." + key
		bid, err := strconv.ParseInt(key, 10, 64)
		if err != nil || !digits(key) {
			m.add(schedule.CodeType, kp, "key %q is not a buffer id", key)
			continue
		}
		bi, ok := m.bufByID.get(bid)
		if !ok {
			m.add(schedule.CodeReference, kp, "no buffer has id %d", bid)
			continue
		}
		if prev, dup := bound[bi]; dup {
			m.add(schedule.CodeDuplicate, kp, "buffer %d is already bound by key %q", bid, prev)
			continue
		}
		bound[bi] = key
		pid, ok := m.integer(bind.Vals[k], kp)
		if !ok {
			continue
		}
		if _, ok := pageByID.get(pid); !ok {
			m.add(schedule.CodeReference, kp, "no page has id %d", pid)
		}
	}
}

// digits reports whether s is an optional minus and decimal digits.
func digits(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
