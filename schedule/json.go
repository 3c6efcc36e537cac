package schedule

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"io"
	"maps"
	"slices"

	"github.com/megaproof/megaproof/internal/jsontree"
)

// The JSON form. Every cross reference is by name; fields appear in a fixed
// order; defaults (order acquire/release, scope gpu, width 32, amounts of 1,
// zero offsets) are omitted. Encode writes one array element per line.

type jProgram struct {
	Format     string       `json:"format"`
	Name       string       `json:"name,omitempty"`
	Launch     jLaunch      `json:"launch"`
	Arenas     []jArena     `json:"arenas,omitempty"`
	Buffers    []jBuffer    `json:"buffers,omitempty"`
	Counters   []jCounter   `json:"counters,omitempty"`
	Barriers   []jBarrier   `json:"barriers,omitempty"`
	Semaphores []jSemaphore `json:"semaphores,omitempty"`
	Tasks      []jTask      `json:"tasks,omitempty"`
}

type jLaunch struct {
	Target      string `json:"target,omitempty"`
	SMs         int    `json:"sms"`
	PerSM       int    `json:"blocks_per_sm"`
	Workers     int    `json:"workers"`
	Cooperative bool   `json:"cooperative,omitempty"`
}

type jArena struct {
	Name string `json:"name"`
	Size uint64 `json:"size"`
}

type jBuffer struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Size   uint64 `json:"size"`
	Arena  string `json:"arena,omitempty"`
	Offset uint64 `json:"offset,omitempty"`
}

type jCounter struct {
	Name  string `json:"name"`
	Init  uint64 `json:"init,omitempty"`
	Width uint8  `json:"width,omitempty"`
}

type jBarrier struct {
	Name    string `json:"name"`
	Parties int    `json:"parties"`
}

type jSemaphore struct {
	Name   string `json:"name"`
	Tokens uint64 `json:"tokens,omitempty"`
}

type jTask struct {
	Name   string           `json:"name"`
	Op     string           `json:"op,omitempty"`
	Params map[string]int64 `json:"params,omitempty"`
	Worker *int32           `json:"worker,omitempty"`
	Before []jStep          `json:"before,omitempty"`
	Reads  []jAccess        `json:"reads,omitempty"`
	Writes []jAccess        `json:"writes,omitempty"`
	After  []jStep          `json:"after,omitempty"`
}

type jStep struct {
	Wait    string `json:"wait,omitempty"`
	GE      uint64 `json:"ge,omitempty"`
	Signal  string `json:"signal,omitempty"`
	Add     uint64 `json:"add,omitempty"`
	Sync    string `json:"sync,omitempty"`
	Arrive  string `json:"arrive,omitempty"`
	Acquire string `json:"acquire,omitempty"`
	Release string `json:"release,omitempty"`
	N       uint64 `json:"n,omitempty"`
	Fence   string `json:"fence,omitempty"`
	Order   string `json:"order,omitempty"`
	Scope   string `json:"scope,omitempty"`
}

type jAccess struct {
	Buffer string `json:"buffer"`
	Offset int64  `json:"offset,omitempty"`
	Length uint64 `json:"length"`
	Rows   uint64 `json:"rows,omitempty"`
	Stride uint64 `json:"stride,omitempty"`
}

// Encode writes the canonical JSON form of a valid program. Decoding the
// result and encoding it again yields the same bytes.
func Encode(w io.Writer, p *Program) error {
	b, err := Marshal(p)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// Marshal returns the canonical JSON form of a valid program.
func Marshal(p *Program) ([]byte, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	jp := toJSON(p)
	var buf bytes.Buffer
	buf.WriteString("{\n")
	field := func(key string, v any, last bool) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(&buf, "  %q: %s", key, b)
		if !last {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
	}
	type list struct {
		key string
		n   int
		at  func(int) any
	}
	lists := []list{
		{"arenas", len(jp.Arenas), func(i int) any { return jp.Arenas[i] }},
		{"buffers", len(jp.Buffers), func(i int) any { return jp.Buffers[i] }},
		{"counters", len(jp.Counters), func(i int) any { return jp.Counters[i] }},
		{"barriers", len(jp.Barriers), func(i int) any { return jp.Barriers[i] }},
		{"semaphores", len(jp.Semaphores), func(i int) any { return jp.Semaphores[i] }},
		{"tasks", len(jp.Tasks), func(i int) any { return jp.Tasks[i] }},
	}
	present := lists[:0]
	for _, l := range lists {
		if l.n > 0 {
			present = append(present, l)
		}
	}
	field("format", jp.Format, false)
	if jp.Name != "" {
		field("name", jp.Name, false)
	}
	field("launch", jp.Launch, len(present) == 0)
	for li, l := range present {
		fmt.Fprintf(&buf, "  %q: [\n", l.key)
		for i := 0; i < l.n; i++ {
			b, err := json.Marshal(l.at(i))
			if err != nil {
				return nil, err
			}
			buf.WriteString("    ")
			buf.Write(b)
			if i < l.n-1 {
				buf.WriteByte(',')
			}
			buf.WriteByte('\n')
		}
		buf.WriteString("  ]")
		if li < len(present)-1 {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
	}
	buf.WriteString("}\n")
	return buf.Bytes(), nil
}

func toJSON(p *Program) *jProgram {
	jp := &jProgram{
		Format: Format,
		Name:   p.Name,
		Launch: jLaunch{Target: p.Launch.Target, SMs: p.Launch.SMs, PerSM: p.Launch.PerSM, Workers: p.Launch.Workers, Cooperative: p.Launch.Cooperative},
	}
	for _, a := range p.Arenas {
		jp.Arenas = append(jp.Arenas, jArena{Name: a.Name, Size: a.Size})
	}
	for _, b := range p.Buffers {
		jb := jBuffer{Name: b.Name, Kind: b.Kind.String(), Size: b.Size, Offset: b.Offset}
		if b.Arena != NoArena {
			jb.Arena = p.Arenas[b.Arena].Name
		}
		jp.Buffers = append(jp.Buffers, jb)
	}
	for _, c := range p.Counters {
		jc := jCounter{Name: c.Name, Init: c.Init, Width: c.Width}
		if c.Width == 32 {
			jc.Width = 0
		}
		jp.Counters = append(jp.Counters, jc)
	}
	for _, b := range p.Barriers {
		jp.Barriers = append(jp.Barriers, jBarrier{Name: b.Name, Parties: b.Parties})
	}
	for _, s := range p.Semaphores {
		jp.Semaphores = append(jp.Semaphores, jSemaphore{Name: s.Name, Tokens: s.Tokens})
	}
	steps := func(ss []Step) []jStep {
		var out []jStep
		for _, s := range ss {
			out = append(out, stepJSON(p, s))
		}
		return out
	}
	accesses := func(as []Access) []jAccess {
		var out []jAccess
		for _, a := range as {
			out = append(out, jAccess{Buffer: p.Buffers[a.Buffer].Name, Offset: a.Offset, Length: a.Length, Rows: a.Rows, Stride: a.Stride})
		}
		return out
	}
	jp.Tasks = make([]jTask, len(p.Tasks))
	for i := range p.Tasks {
		t := &p.Tasks[i]
		jt := jTask{Name: t.Name, Op: t.Op, Before: steps(t.Before), Reads: accesses(t.Reads), Writes: accesses(t.Writes), After: steps(t.After)}
		if len(t.Params) > 0 {
			jt.Params = maps.Collect(t.Params.All())
		}
		if t.Worker != Dynamic {
			w := t.Worker
			jt.Worker = &w
		}
		jp.Tasks[i] = jt
	}
	return jp
}

func stepJSON(p *Program, s Step) jStep {
	var j jStep
	switch s.Kind {
	case Wait:
		j.Wait, j.GE = p.Counters[s.Object].Name, s.Value
	case Signal:
		j.Signal = p.Counters[s.Object].Name
		if s.Value != 1 {
			j.Add = s.Value
		}
	case Sync:
		j.Sync = p.Barriers[s.Object].Name
	case Arrive:
		j.Arrive = p.Barriers[s.Object].Name
	case Acquire, Release:
		name := p.Semaphores[s.Object].Name
		if s.Kind == Acquire {
			j.Acquire = name
		} else {
			j.Release = name
		}
		if s.Value != 1 {
			j.N = s.Value
		}
	case Fence:
		j.Fence = s.Scope.String()
		return j
	}
	if s.Relaxed {
		j.Order = "relaxed"
	}
	if s.Scope != ScopeGPU {
		j.Scope = s.Scope.String()
	}
	return j
}

// DefaultMaxInput is the largest document [Decode] reads: 1 GiB. Longer
// input is an invalid.limit diagnostic.
const DefaultMaxInput = 1 << 30

// Decode reads one program in JSON form from r, at most [DefaultMaxInput]
// bytes of it; see [DecodeLimit].
func Decode(r io.Reader) (*Program, error) { return DecodeLimit(r, DefaultMaxInput) }

// DecodeLimit reads one program in JSON form from r, streaming: it builds
// the program in one pass over the input, holding little more than the
// program. It accepts at most maxInput bytes (maxInput <= 0: no limit),
// reading one more to tell that the input is longer, and stops reading at
// the first syntax error.
//
// Malformed input of any kind yields an *[Error] whose diagnostics carry
// the JSON path of each problem: invalid.syntax (not JSON, invalid UTF-8,
// a byte order mark or a UTF-16 encoding, trailing data), invalid.limit
// (more than maxInput bytes, or more items than megaproof accepts), and
// the rest of the invalid.* codes for what the format does not allow.
// DecodeLimit never panics. An error of r itself is returned as it is.
func DecodeLimit(r io.Reader, maxInput int64) (*Program, error) {
	return decodeReader(r, maxInput)
}

// Unmarshal decodes a program from JSON bytes; see [DecodeLimit]. The
// bytes are in memory already, so no input limit applies.
func Unmarshal(data []byte) (*Program, error) {
	return decodeBytes(data)
}

// node is a parsed JSON value with object keys in document order.
type node = jsontree.Node

const maxDepth = 64

// fatal turns a scanner error into the error a reader returns.
func fatal(e *jsontree.Error) error {
	if e.Kind == jsontree.IO {
		return e.Err
	}
	code := CodeSyntax
	switch e.Kind {
	case jsontree.Duplicate:
		code = CodeDuplicate
	case jsontree.Limit:
		code = CodeLimit
	}
	return &Error{Diagnostics: []Diagnostic{{Code: code, Path: e.Path, Message: e.Message}}}
}

// diagError turns collected diagnostics into an error (nil without any).
func diagError(list []jsontree.Diag) error {
	if len(list) == 0 {
		return nil
	}
	ds := make([]Diagnostic, len(list))
	for i, d := range list {
		ds[i] = Diagnostic{Code: d.Code, Path: d.Path, Message: d.Message}
	}
	return &Error{Diagnostics: ds}
}

// The parts of a document, in the order the reader reports their
// diagnostics: the top-level object, format, name, launch, then each list
// (its elements, then its duplicate names).
const (
	rTop = iota
	rFormat
	rName
	rLaunch
	rLists
)

// Lists of named objects, in the order they are read: each may refer only
// to those before it.
const (
	secArenas = iota
	secBuffers
	secCounters
	secBarriers
	secSemaphores
	secTasks
	nSections
)

var sectionKeys = [nSections]string{"arenas", "buffers", "counters", "barriers", "semaphores", "tasks"}

// sectionOf returns the list a top-level key names, or -1.
func sectionOf(key string) int {
	for s, k := range sectionKeys {
		if k == key {
			return s
		}
	}
	return -1
}

func rElems(sec int) int { return rLists + 2*sec }
func rDups(sec int) int  { return rLists + 2*sec + 1 }

// sectionLimit is the most elements a list may have.
func sectionLimit(sec int) int {
	if sec == secTasks {
		return MaxTasks
	}
	return MaxObjects
}

// topKeys are the keys of a program object.
var topKeys = []string{"format", "name", "launch", "arenas", "buffers", "counters", "barriers", "semaphores", "tasks"}

// nameIndex maps the names of one list to their first index: by a scan
// while the list is small, by an open-addressing table of index + 1 beyond,
// keyed by a hash of the name.
type nameIndex struct {
	small []nameAt
	big   bool     // the table is in use
	names []string // with the table: the name of each index
	slots []int32  // the table: index + 1, or 0 for an empty slot
	n     int      // names in the table
}

type nameAt struct {
	name string
	i    int32
}

// nameSeed seeds the hash of the name tables.
var nameSeed = maphash.MakeSeed()

// reset empties the index, keeping its memory.
func (x *nameIndex) reset() {
	clear(x.small)
	x.small = x.small[:0]
	if x.big {
		clear(x.names)
		x.names = x.names[:0]
		clear(x.slots)
		x.n, x.big = 0, false
	}
}

func (x *nameIndex) find(name []byte) (int32, bool) {
	if !x.big {
		for _, e := range x.small {
			if e.name == string(name) {
				return e.i, true
			}
		}
		return 0, false
	}
	mask := uint64(len(x.slots) - 1)
	for h := maphash.Bytes(nameSeed, name) & mask; ; h = (h + 1) & mask {
		v := x.slots[h]
		if v == 0 {
			return 0, false
		}
		if x.names[v-1] == string(name) {
			return v - 1, true
		}
	}
}

// add adds a name and reports false if it is already there.
func (x *nameIndex) add(name string, i int32) bool {
	if _, dup := x.find([]byte(name)); dup {
		return false
	}
	if !x.big && len(x.small) < 8 {
		x.small = append(x.small, nameAt{name, i})
		return true
	}
	if !x.big {
		x.big = true
		for _, e := range x.small {
			x.put(e.name, e.i)
		}
		clear(x.small)
		x.small = x.small[:0]
	}
	x.put(name, i)
	return true
}

// put adds a name that is not there to the table.
func (x *nameIndex) put(name string, i int32) {
	for int32(len(x.names)) <= i {
		x.names = append(x.names, "")
	}
	x.names[i] = name
	if 2*(x.n+1) > len(x.slots) {
		size := max(16, 2*len(x.slots))
		for size < 2*(x.n+1) {
			size *= 2
		}
		old := x.slots
		x.slots = make([]int32, size)
		mask := uint64(size - 1)
		for _, v := range old {
			if v != 0 {
				h := maphash.String(nameSeed, x.names[v-1]) & mask
				for x.slots[h] != 0 {
					h = (h + 1) & mask
				}
				x.slots[h] = v
			}
		}
	}
	mask := uint64(len(x.slots) - 1)
	h := maphash.String(nameSeed, name) & mask
	for x.slots[h] != 0 {
		h = (h + 1) & mask
	}
	x.slots[h] = i + 1
	x.n++
}

// conv converts parsed values into a program and collects diagnostics. The
// fast reader uses it for the elements it cannot read directly, so both
// ways of reading give the same program or the same diagnostics.
type conv struct {
	ds  *jsontree.Diags
	p   *Program
	idx [nSections]nameIndex
	// done marks the lists whose names are all known. A lookup into a list
	// not done sets deferred instead of reporting the name as unknown.
	done     [nSections]bool
	deferred bool
}

func (c *conv) add(code, path, format string, args ...any) { c.ds.Add(code, path, format, args...) }

// reset makes c ready for a program, keeping the memory of its indices.
func (c *conv) reset(ds *jsontree.Diags, p *Program) {
	c.ds, c.p, c.done, c.deferred = ds, p, [nSections]bool{}, false
	for i := range c.idx {
		c.idx[i].reset()
	}
}

// finish indexes a list's names, reporting those declared twice.
func (c *conv) finish(sec int) {
	c.ds.Rank, c.ds.Elem, c.ds.Late = rDups(sec), 0, false
	x := &c.idx[sec]
	x.reset()
	n := c.count(sec)
	for i := 0; i < n; i++ {
		s := c.name(sec, i)
		if s == "" {
			continue
		}
		if !x.add(s, int32(i)) {
			c.add(CodeDuplicate, fmt.Sprintf("$.%s[%d].name", sectionKeys[sec], i), "%s name %q declared twice", sectionKeys[sec], s)
		}
	}
	c.done[sec] = true
}

func (c *conv) count(sec int) int {
	p := c.p
	return [nSections]int{len(p.Arenas), len(p.Buffers), len(p.Counters), len(p.Barriers), len(p.Semaphores), len(p.Tasks)}[sec]
}

func (c *conv) name(sec, i int) string {
	p := c.p
	switch sec {
	case secArenas:
		return p.Arenas[i].Name
	case secBuffers:
		return p.Buffers[i].Name
	case secCounters:
		return p.Counters[i].Name
	case secBarriers:
		return p.Barriers[i].Name
	case secSemaphores:
		return p.Semaphores[i].Name
	}
	return p.Tasks[i].Name
}

// lookup finds a name in a list, reporting it when the list is done and
// does not have it.
func (c *conv) lookup(sec int, what, name, path string) int32 {
	if i, ok := c.idx[sec].find([]byte(name)); ok {
		return i
	}
	if !c.done[sec] {
		c.deferred = true
		return -1
	}
	c.add(CodeReference, path, "no %s named %q", what, name)
	return -1
}

// object checks that n is an object with only the allowed keys and returns a
// lookup of its fields. Required keys that are missing are reported.
func (c *conv) object(n *node, path string, allowed []string, required ...string) (map[string]*node, bool) {
	if n.Kind != 'o' {
		c.add(CodeType, path, "want an object, have %s", jsontree.KindNames[n.Kind])
		return nil, false
	}
	m := make(map[string]*node, len(n.Keys))
	for i, k := range n.Keys {
		if !slices.Contains(allowed, k) {
			c.add(CodeUnknownField, path+"."+k, "unknown field %q", k)
			continue
		}
		m[k] = n.Vals[i]
	}
	for _, k := range required {
		if _, ok := m[k]; !ok {
			c.add(CodeMissing, path+"."+k, "required field %q is missing", k)
		}
	}
	return m, true
}

func (c *conv) array(n *node, path string) []*node {
	if n == nil {
		return nil
	}
	if n.Kind != 'a' {
		c.add(CodeType, path, "want an array, have %s", jsontree.KindNames[n.Kind])
		return nil
	}
	return n.Vals
}

func (c *conv) str(n *node, path string) string {
	if n == nil {
		return ""
	}
	if n.Kind != 's' {
		c.add(CodeType, path, "want a string, have %s", jsontree.KindNames[n.Kind])
		return ""
	}
	return n.Str
}

func (c *conv) boolean(n *node, path string) bool {
	if n == nil {
		return false
	}
	if n.Kind != 'b' {
		c.add(CodeType, path, "want a boolean, have %s", jsontree.KindNames[n.Kind])
		return false
	}
	return n.B
}

// uintLit reads a number literal as a non-negative integer no larger than
// max. Integral values written with a fraction or an exponent (512.0)
// count, as in JSON Schema. On failure it returns the diagnostic's code
// and message.
func uintLit(lit []byte, max uint64) (v uint64, code, msg string) {
	neg, mag, st := jsontree.ParseInteger(lit)
	switch {
	case st == jsontree.IntFraction:
		return 0, CodeType, fmt.Sprintf("want an integer, have %s", lit)
	case neg:
		return 0, CodeSize, fmt.Sprintf("negative value %s", lit)
	case st == jsontree.IntOverflow:
		return 0, CodeSize, fmt.Sprintf("value %s overflows", lit)
	case mag > max:
		return 0, CodeSize, fmt.Sprintf("value %d exceeds %d", mag, max)
	}
	return mag, "", ""
}

// intLit reads a number literal as an integer within ±max; see uintLit.
func intLit(lit []byte, max int64) (v int64, code, msg string) {
	neg, mag, st := jsontree.ParseInteger(lit)
	switch {
	case st == jsontree.IntFraction:
		return 0, CodeType, fmt.Sprintf("want an integer, have %s", lit)
	case st == jsontree.IntOverflow || mag > 1<<63 || (!neg && mag == 1<<63):
		return 0, CodeSize, fmt.Sprintf("value %s overflows", lit)
	}
	v = int64(mag)
	if neg {
		v = int64(-mag)
	}
	if max < 1<<63-1 && (v > max || v < -max) { // max = MaxInt64 admits every int64
		return 0, CodeSize, fmt.Sprintf("value %d is beyond ±%d", v, max)
	}
	return v, "", ""
}

// uint reads a non-negative integer no larger than max.
func (c *conv) uint(n *node, path string, max uint64) uint64 {
	if n == nil {
		return 0
	}
	if n.Kind != 'n' {
		c.add(CodeType, path, "want a number, have %s", jsontree.KindNames[n.Kind])
		return 0
	}
	v, code, msg := uintLit([]byte(n.Str), max)
	if code != "" {
		c.add(code, path, "%s", msg)
	}
	return v
}

// int reads a signed integer within ±max.
func (c *conv) int(n *node, path string, max int64) int64 {
	if n == nil {
		return 0
	}
	if n.Kind != 'n' {
		c.add(CodeType, path, "want a number, have %s", jsontree.KindNames[n.Kind])
		return 0
	}
	v, code, msg := intLit([]byte(n.Str), max)
	if code != "" {
		c.add(code, path, "%s", msg)
	}
	return v
}

// zero reports whether n is a number whose value is 0.
func zero(n *node) bool {
	if n == nil || n.Kind != 'n' {
		return false
	}
	_, mag, st := jsontree.ParseInteger([]byte(n.Str))
	return st == jsontree.IntOK && mag == 0
}

// top reads the top-level object, reporting unknown keys and a missing
// launch. It returns nil when n is not an object.
func (c *conv) top(n *node) map[string]*node {
	c.ds.Rank = rTop
	m, ok := c.object(n, "$", topKeys, "launch")
	if !ok {
		return nil
	}
	return m
}

// format checks the format tag (n nil: absent) and reports whether the
// rest of the document is to be read.
func (c *conv) format(n *node) bool {
	c.ds.Rank = rFormat
	if n == nil {
		c.add(CodeFormat, "$.format", "missing \"format\"; want %q", Format)
		return false
	}
	if s := c.str(n, "$.format"); s != Format && n.Kind == 's' {
		c.add(CodeFormat, "$.format", "format %q; want %q", s, Format)
		return false
	}
	return true
}

func (c *conv) progName(n *node) {
	c.ds.Rank = rName
	c.p.Name = c.str(n, "$.name")
}

var launchKeys = []string{"target", "sms", "blocks_per_sm", "workers", "cooperative"}

func (c *conv) launch(n *node) {
	c.ds.Rank = rLaunch
	l, ok := c.object(n, "$.launch", launchKeys, "sms", "workers")
	if !ok {
		return
	}
	c.p.Launch = Launch{
		Target:      c.str(l["target"], "$.launch.target"),
		SMs:         int(c.uint(l["sms"], "$.launch.sms", 1<<31-1)),
		PerSM:       1,
		Workers:     int(c.uint(l["workers"], "$.launch.workers", 1<<31-1)),
		Cooperative: c.boolean(l["cooperative"], "$.launch.cooperative"),
	}
	if b := l["blocks_per_sm"]; b != nil {
		c.p.Launch.PerSM = int(c.uint(b, "$.launch.blocks_per_sm", 1<<31-1))
	}
}

// list reads a top-level list value: its elements, or nil after reporting
// what is wrong with it.
func (c *conv) list(sec int, n *node) []*node {
	c.ds.Rank, c.ds.Elem = rElems(sec), 0
	key := sectionKeys[sec]
	list := c.array(n, "$."+key)
	if max := sectionLimit(sec); len(list) > max {
		c.limit(sec, len(list))
		return nil
	}
	return list
}

func (c *conv) limit(sec, n int) {
	c.add(CodeLimit, "$."+sectionKeys[sec], "%d entries exceed the limit of %d", n, sectionLimit(sec))
}

// element converts element i of a list into its place in the program
// (appending it when it is the next).
func (c *conv) element(sec int, n *node, i int) {
	c.ds.Rank, c.ds.Elem = rElems(sec), i
	path := fmt.Sprintf("$.%s[%d]", sectionKeys[sec], i)
	p := c.p
	switch sec {
	case secArenas:
		v := c.arena(n, path)
		*slot(&p.Arenas, i) = v
	case secBuffers:
		v := c.buffer(n, path)
		*slot(&p.Buffers, i) = v
	case secCounters:
		v := c.counter(n, path)
		*slot(&p.Counters, i) = v
	case secBarriers:
		v := c.barrier(n, path)
		*slot(&p.Barriers, i) = v
	case secSemaphores:
		v := c.semaphore(n, path)
		*slot(&p.Semaphores, i) = v
	case secTasks:
		v := c.task(n, path)
		*slot(&p.Tasks, i) = v
	}
}

var (
	arenaKeys     = []string{"name", "size"}
	bufferKeys    = []string{"name", "kind", "size", "arena", "offset"}
	counterKeys   = []string{"name", "init", "width"}
	barrierKeys   = []string{"name", "parties"}
	semaphoreKeys = []string{"name", "tokens"}
	taskKeys      = []string{"name", "op", "params", "worker", "before", "reads", "writes", "after"}
	stepKeys      = []string{"wait", "ge", "signal", "add", "sync", "arrive", "acquire", "release", "n", "fence", "order", "scope"}
	stepKinds     = []string{"wait", "signal", "sync", "arrive", "acquire", "release", "fence"}
	stepExtras    = []string{"ge", "add", "n", "order", "scope"}
	accessKeys    = []string{"buffer", "offset", "length", "rows", "stride"}
)

func (c *conv) arena(n *node, path string) Arena {
	o, ok := c.object(n, path, arenaKeys, "name", "size")
	if !ok {
		return Arena{}
	}
	return Arena{Name: c.str(o["name"], path+".name"), Size: c.uint(o["size"], path+".size", maxExtent)}
}

func (c *conv) buffer(n *node, path string) Buffer {
	b := Buffer{Arena: NoArena, Kind: KindScratch}
	o, ok := c.object(n, path, bufferKeys, "name", "kind", "size")
	if !ok {
		return b
	}
	b.Name = c.str(o["name"], path+".name")
	b.Size = c.uint(o["size"], path+".size", maxExtent)
	if k := o["kind"]; k != nil {
		ks := c.str(k, path+".kind")
		b.Kind = kindOf(ks)
		if b.Kind == 0 && k.Kind == 's' {
			c.add(CodeValue, path+".kind", "unknown buffer kind %q; want input, weight, output, scratch or state", ks)
			b.Kind = KindScratch
		}
	}
	if a := o["arena"]; a != nil {
		b.Arena = c.lookup(secArenas, "arena", c.str(a, path+".arena"), path+".arena")
		if b.Arena < 0 {
			b.Arena = NoArena
		}
	}
	b.Offset = c.uint(o["offset"], path+".offset", maxExtent)
	return b
}

// kindOf returns the buffer kind of a name, or 0.
func kindOf[S string | []byte](s S) BufferKind {
	for k, name := range kindNames {
		if name != "" && name == string(s) {
			return BufferKind(k)
		}
	}
	return 0
}

func (c *conv) counter(n *node, path string) Counter {
	ct := Counter{Width: 32}
	o, ok := c.object(n, path, counterKeys, "name")
	if !ok {
		return ct
	}
	ct.Name = c.str(o["name"], path+".name")
	ct.Init = c.uint(o["init"], path+".init", ^uint64(0))
	if w := o["width"]; w != nil {
		ct.Width = uint8(c.uint(w, path+".width", 255))
	}
	return ct
}

func (c *conv) barrier(n *node, path string) Barrier {
	o, ok := c.object(n, path, barrierKeys, "name", "parties")
	if !ok {
		return Barrier{}
	}
	return Barrier{Name: c.str(o["name"], path+".name"), Parties: int(c.uint(o["parties"], path+".parties", MaxTasks))}
}

func (c *conv) semaphore(n *node, path string) Semaphore {
	o, ok := c.object(n, path, semaphoreKeys, "name")
	if !ok {
		return Semaphore{}
	}
	return Semaphore{Name: c.str(o["name"], path+".name"), Tokens: c.uint(o["tokens"], path+".tokens", maxExtent)}
}

// stepFields lists, per step kind, the fields a step of that kind may have
// beside its kind.
var stepFields = map[string][]string{
	"wait": {"ge", "order", "scope"}, "signal": {"add", "order", "scope"},
	"sync": {}, "arrive": {}, "acquire": {"n", "scope"}, "release": {"n", "scope"}, "fence": {},
}

func (c *conv) step(n *node, path string) Step {
	o, ok := c.object(n, path, stepKeys)
	if !ok {
		return Step{}
	}
	var kinds []string
	for _, k := range stepKinds {
		if o[k] != nil {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) != 1 {
		if len(kinds) == 0 {
			c.add(CodeMissing, path, "a step needs one of wait, signal, sync, arrive, acquire, release or fence")
		} else {
			c.add(CodeValue, path, "a step has exactly one kind, have %v", kinds)
		}
		return Step{}
	}
	k := kinds[0]
	kp := path + "." + k
	name := c.str(o[k], kp)
	for _, extra := range stepExtras {
		if o[extra] != nil && !slices.Contains(stepFields[k], extra) {
			c.add(CodeUnknownField, path+"."+extra, "field %q does not apply to a %s step", extra, k)
		}
	}
	var s Step
	switch k {
	case "wait":
		s = Step{Kind: Wait, Object: c.lookup(secCounters, "counter", name, kp)}
		if o["ge"] == nil {
			c.add(CodeMissing, path+".ge", "a wait needs a threshold \"ge\"")
		} else {
			s.Value = c.uint(o["ge"], path+".ge", ^uint64(0))
			if zero(o["ge"]) {
				c.add(CodeThreshold, path+".ge", "threshold 0 never waits")
			}
		}
	case "signal":
		s = Step{Kind: Signal, Object: c.lookup(secCounters, "counter", name, kp), Value: 1}
		if o["add"] != nil {
			s.Value = c.uint(o["add"], path+".add", maxExtent)
		}
	case "sync", "arrive":
		s = Step{Kind: Sync, Object: c.lookup(secBarriers, "barrier", name, kp)}
		if k == "arrive" {
			s.Kind = Arrive
		}
	case "acquire", "release":
		s = Step{Kind: Acquire, Object: c.lookup(secSemaphores, "semaphore", name, kp), Value: 1}
		if k == "release" {
			s.Kind = Release
		}
		if o["n"] != nil {
			s.Value = c.uint(o["n"], path+".n", maxExtent)
		}
	case "fence":
		s = Step{Kind: Fence, Scope: c.scope(name, kp)}
	}
	if ord := o["order"]; ord != nil {
		v := c.str(ord, path+".order")
		want := map[StepKind]string{Wait: "acquire", Signal: "release"}[s.Kind]
		switch v {
		case "relaxed":
			s.Relaxed = true
		case want:
		default:
			if ord.Kind == 's' {
				c.add(CodeValue, path+".order", "order %q; a %s is %q or \"relaxed\"", v, k, want)
			}
		}
	}
	if sc := o["scope"]; sc != nil {
		s.Scope = c.scope(c.str(sc, path+".scope"), path+".scope")
	}
	return s
}

func (c *conv) scope(s, path string) Scope {
	if sc, ok := scopeOf(s); ok {
		return sc
	}
	c.add(CodeValue, path, "scope %q; want cta, gpu or sys", s)
	return ScopeGPU
}

func scopeOf[S string | []byte](s S) (Scope, bool) {
	for i, name := range scopeNames {
		if name == string(s) {
			return Scope(i), true
		}
	}
	return ScopeGPU, false
}

func (c *conv) access(n *node, path string) Access {
	o, ok := c.object(n, path, accessKeys, "buffer", "length")
	if !ok {
		return Access{}
	}
	a := Access{
		Buffer: c.lookup(secBuffers, "buffer", c.str(o["buffer"], path+".buffer"), path+".buffer"),
		Offset: c.int(o["offset"], path+".offset", maxExtent),
		Length: c.uint(o["length"], path+".length", maxExtent),
		Rows:   c.uint(o["rows"], path+".rows", maxExtent),
		Stride: c.uint(o["stride"], path+".stride", maxExtent),
	}
	if zero(o["length"]) {
		c.add(CodeEmptyAccess, path+".length", "an access of zero bytes")
	}
	return a
}

func (c *conv) task(n *node, path string) Task {
	t := Task{Worker: Dynamic}
	o, ok := c.object(n, path, taskKeys, "name")
	if !ok {
		return t
	}
	t.Name = c.str(o["name"], path+".name")
	t.Op = c.str(o["op"], path+".op")
	if pn := o["params"]; pn != nil {
		if pn.Kind != 'o' {
			c.add(CodeType, path+".params", "want an object, have %s", jsontree.KindNames[pn.Kind])
		} else if len(pn.Keys) > 0 {
			t.Params = make(Params, len(pn.Keys))
			for j, k := range pn.Keys {
				t.Params[j] = Param{k, c.int(pn.Vals[j], path+".params."+k, 1<<63-1)}
			}
			SortParams(t.Params)
		}
	}
	if w := o["worker"]; w != nil {
		t.Worker = int32(c.uint(w, path+".worker", MaxWorkers))
	}
	for j, sn := range c.array(o["before"], path+".before") {
		t.Before = append(t.Before, c.step(sn, fmt.Sprintf("%s.before[%d]", path, j)))
	}
	for j, an := range c.array(o["reads"], path+".reads") {
		t.Reads = append(t.Reads, c.access(an, fmt.Sprintf("%s.reads[%d]", path, j)))
	}
	for j, an := range c.array(o["writes"], path+".writes") {
		t.Writes = append(t.Writes, c.access(an, fmt.Sprintf("%s.writes[%d]", path, j)))
	}
	for j, sn := range c.array(o["after"], path+".after") {
		t.After = append(t.After, c.step(sn, fmt.Sprintf("%s.after[%d]", path, j)))
	}
	return t
}
