package amk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/megaproof/megaproof/internal/jsontree"
	"io"
	"math"
	"strconv"
	"strings"

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
// "pages" is taken as AMK. Detect does not validate anything; it never
// panics.
func Detect(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	amkish := false
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		key, _ := t.(string)
		switch key {
		case "ir_version", "abi_version":
			return true
		case "format", "launch":
			return false
		case "tasks", "buffers", "counters", "target", "meta", "pages":
			amkish = true
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return false
		}
	}
	return amkish
}

// Decode reads AMK IR JSON from r and maps it; see [Unmarshal].
func Decode(r io.Reader) (*schedule.Program, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return Unmarshal(data)
}

// Unmarshal maps AutoMegaKernel IR JSON to a [schedule.Program]. Malformed
// input of any kind yields a *[schedule.Error] whose diagnostics carry an
// invalid.* code and the JSON path (in the AMK document) of each problem.
// It never panics. The mapping is described in the package documentation.
func Unmarshal(data []byte) (*schedule.Program, error) {
	root, d := parse(data)
	if d != nil {
		return nil, &schedule.Error{Diagnostics: []schedule.Diagnostic{*d}}
	}
	m := &mapper{p: &schedule.Program{}}
	m.program(root)
	if err := m.err(); err != nil {
		return nil, err
	}
	// A safety net: everything Validate checks should have been reported
	// above with an AMK path. Validate also enforces megaproof's size limits.
	if err := m.p.Validate(); err != nil {
		return nil, err
	}
	return m.p, nil
}

// mapper builds a program from a parsed AMK document.
type mapper struct {
	reader
	p        *schedule.Program
	bufByID  map[int64]int // AMK buffer id -> index into p.Buffers
	layouts  []layout      // by buffer index; bits 0 when the buffer is malformed
	ctrByID  map[int64]int // AMK counter id -> index into p.Counters
	maxSM    int64         // largest pinned sm, or -1
	smPaths  []smUse       // every pinned task, to check against the target
	targetSM int64         // target.num_sms, or 0 without a target
}

type smUse struct {
	path string
	sm   int64
}

func (m *mapper) program(root *node) {
	if !m.object(root, "$") {
		return
	}
	for _, key := range []string{"ir_version", "abi_version"} {
		v := optional(root, key)
		if v == nil {
			continue
		}
		if s, ok := m.str(v, "$."+key); ok {
			if major, _, _ := strings.Cut(s, "."); major != IRMajor {
				m.add(schedule.CodeFormat, "$."+key, "%s %q has major version %q; this reader supports %s.x", key, s, major, IRMajor)
			}
		}
	}
	if meta := optional(root, "meta"); meta != nil && meta.Kind == 'o' {
		if v := optional(meta, "model"); v != nil && v.Kind == 's' {
			m.p.Name = v.Str
		}
		if v := optional(meta, "gpu"); v != nil && v.Kind == 's' {
			m.p.Launch.Target = v.Str
		}
	}
	m.p.Launch.Cooperative = true
	m.maxSM = -1
	if t := optional(root, "target"); t != nil {
		m.target(t)
	}
	m.buffers(optional(root, "buffers"))
	m.counters(optional(root, "counters"))
	if pg := optional(root, "pages"); pg != nil {
		m.pages(pg)
	}
	m.tasks(optional(root, "tasks"))
	m.launch()
}

func (m *mapper) target(t *node) {
	const path = "$.target"
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

// launch sets the launch from the target, or from the pinned tasks when the
// IR has no target.
func (m *mapper) launch() {
	sms := m.targetSM
	if sms == 0 {
		sms = max(1, m.maxSM+1)
	}
	for _, u := range m.smPaths {
		if u.sm >= sms {
			m.add(schedule.CodeWorker, u.path, "task is pinned to SM %d; the target has SMs 0..%d", u.sm, sms-1)
		}
	}
	l := &m.p.Launch
	l.SMs, l.PerSM, l.Workers = int(sms), 1, int(sms)
}

func (m *mapper) buffers(n *node) {
	m.bufByID = map[int64]int{}
	if n == nil {
		return
	}
	list, ok := m.array(n, "$.buffers")
	if !ok {
		return
	}
	names := map[string]bool{}
	for i, bn := range list {
		path := fmt.Sprintf("$.buffers[%d]", i)
		m.p.Buffers = append(m.p.Buffers, schedule.Buffer{Arena: schedule.NoArena})
		m.layouts = append(m.layouts, layout{index: int32(i)})
		if !m.object(bn, path) {
			continue
		}
		b := &m.p.Buffers[i]
		var id int64
		idOK := false
		if v := m.required(bn, path, "id"); v != nil {
			if id, idOK = m.integer(v, path+".id"); idOK {
				if j, dup := m.bufByID[id]; dup {
					m.add(schedule.CodeDuplicate, path+".id", "buffer id %d already used by $.buffers[%d]", id, j)
					idOK = false
				} else {
					m.bufByID[id] = i
				}
			}
		}
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
		shape, numel, shapeOK := m.shape(bn, path)
		if bits != 0 && shapeOK {
			if numel > maxBufferBytes*8/bits {
				m.add(schedule.CodeSize, path+".shape", "buffer of %d elements exceeds %d bytes", numel, int64(maxBufferBytes))
			} else {
				b.Size = uint64(ceilDiv8(numel * bits))
				m.layouts[i] = layout{index: int32(i), bits: bits, shape: shape, numel: numel}
			}
		}
		b.Name = uniqueName(names, name, id, idOK, i)
	}
}

// uniqueName is the buffer's AMK name, made unique with its id when another
// buffer already has it (megaproof requires unique names; AMK does not).
func uniqueName(names map[string]bool, name string, id int64, idOK bool, i int) string {
	tag := fmt.Sprintf("#%d", id)
	if !idOK {
		tag = fmt.Sprintf("@%d", i)
	}
	cand := name
	if cand == "" {
		cand = "buffer" + tag
	}
	for names[cand] {
		cand += tag
	}
	names[cand] = true
	return cand
}

// shape reads a buffer's shape: at most MaxRank positive integers.
func (m *mapper) shape(bn *node, path string) (shape []int64, numel int64, ok bool) {
	v := m.required(bn, path, "shape")
	if v == nil {
		return nil, 0, false
	}
	dims, ok := m.array(v, path+".shape")
	if !ok {
		return nil, 0, false
	}
	if len(dims) > MaxRank {
		m.add(schedule.CodeLimit, path+".shape", "rank %d exceeds AMK's ABI limit of %d", len(dims), MaxRank)
		return nil, 0, false
	}
	numel = 1
	for j, dn := range dims {
		dp := fmt.Sprintf("%s.shape[%d]", path, j)
		d, dok := m.integer(dn, dp)
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

func (m *mapper) counters(n *node) {
	m.ctrByID = map[int64]int{}
	if n == nil {
		return
	}
	list, ok := m.array(n, "$.counters")
	if !ok {
		return
	}
	for i, cn := range list {
		path := fmt.Sprintf("$.counters[%d]", i)
		c := schedule.Counter{Width: 32, Name: fmt.Sprintf("counter@%d", i)}
		if m.object(cn, path) {
			if v := m.required(cn, path, "id"); v != nil {
				if id, ok := m.integer(v, path+".id"); ok {
					if j, dup := m.ctrByID[id]; dup {
						m.add(schedule.CodeDuplicate, path+".id", "counter id %d already used by $.counters[%d]", id, j)
					} else {
						m.ctrByID[id] = i
						c.Name = fmt.Sprintf("c%d", id)
					}
				}
			}
			if v := optional(cn, "init"); v != nil {
				if init, ok := m.integer(v, path+".init"); ok {
					if init < 0 || init > math.MaxUint32 {
						m.add(schedule.CodeSize, path+".init", "init %d is outside the uint32 range of an AMK counter", init)
					} else {
						c.Init = uint64(init)
					}
				}
			}
		}
		m.p.Counters = append(m.p.Counters, c)
	}
}

// pages places buffers bound to one page at offset 0 of one arena per page,
// sized to the largest buffer on it. Pages without buffers get no arena.
func (m *mapper) pages(pg *node) {
	const path = "$.pages"
	if !m.object(pg, path) {
		return
	}
	pageByID := map[int64]int{}
	if v := m.required(pg, path, "pages"); v != nil {
		if list, ok := m.array(v, path+".pages"); ok {
			for j, pn := range list {
				pp := fmt.Sprintf("%s.pages[%d]", path, j)
				if !m.object(pn, pp) {
					continue
				}
				if iv := m.required(pn, pp, "id"); iv != nil {
					if id, ok := m.integer(iv, pp+".id"); ok {
						if k, dup := pageByID[id]; dup {
							m.add(schedule.CodeDuplicate, pp+".id", "page id %d already used by %s.pages[%d]", id, path, k)
						} else {
							pageByID[id] = j
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
	onPage := map[int][]int{} // page list position -> buffer indices, in key order
	bound := map[int]string{} // buffer index -> the key that bound it
	for k, key := range bind.Keys {
		kp := path + ".buffer_to_page." + key
		bid, err := strconv.ParseInt(key, 10, 64)
		if err != nil || !jsontree.IsInteger(key) {
			m.add(schedule.CodeType, kp, "key %q is not a buffer id", key)
			continue
		}
		bi, ok := m.bufByID[bid]
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
		pj, ok := pageByID[pid]
		if !ok {
			m.add(schedule.CodeReference, kp, "no page has id %d", pid)
			continue
		}
		onPage[pj] = append(onPage[pj], bi)
	}
	list := field(pg, "pages")
	if list == nil || list.Kind != 'a' {
		return
	}
	for j, pn := range list.Vals {
		bufs := onPage[j]
		var size uint64
		for _, bi := range bufs {
			size = max(size, m.p.Buffers[bi].Size)
		}
		if size == 0 {
			continue
		}
		name := fmt.Sprintf("page@%d", j)
		if iv := field(pn, "id"); iv != nil && iv.Kind == 'n' {
			name = "page" + iv.Str
		}
		a := int32(len(m.p.Arenas))
		m.p.Arenas = append(m.p.Arenas, schedule.Arena{Name: name, Size: size})
		for _, bi := range bufs {
			if m.p.Buffers[bi].Size > 0 {
				m.p.Buffers[bi].Arena, m.p.Buffers[bi].Offset = a, 0
			}
		}
	}
}
