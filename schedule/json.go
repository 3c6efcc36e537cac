package schedule

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/megaproof/megaproof/internal/jsontree"
	"io"
	"math"
	"strconv"
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
			jt.Params = t.Params
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

// Decode reads one program in JSON form. Malformed input of any kind yields
// an *[Error] whose diagnostics carry the JSON path of each problem; Decode
// never panics.
func Decode(r io.Reader) (*Program, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return Unmarshal(data)
}

// Unmarshal decodes a program from JSON bytes; see [Decode].
func Unmarshal(data []byte) (*Program, error) {
	root, d := parseTree(data)
	if d != nil {
		return nil, &Error{Diagnostics: []Diagnostic{*d}}
	}
	var ds diags
	p := fromTree(&ds, root)
	if err := ds.err(); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// node is a parsed JSON value with object keys in document order.
type node = jsontree.Node

const maxDepth = 64

// parseTree parses a JSON document into a tree.
func parseTree(data []byte) (*node, *Diagnostic) {
	n, err := jsontree.Parse(data, maxDepth)
	if err != nil {
		code := CodeSyntax
		if err.Duplicate {
			code = CodeDuplicate
		}
		return nil, &Diagnostic{Code: code, Path: err.Path, Message: err.Message}
	}
	return n, nil
}

// reader walks a parsed tree, converting values and collecting diagnostics.
type reader struct{ ds *diags }

// object checks that n is an object with only the allowed keys and returns a
// lookup of its fields. Required keys that are missing are reported.
func (r reader) object(n *node, path string, allowed []string, required ...string) (map[string]*node, bool) {
	if n.Kind != 'o' {
		r.ds.add(CodeType, path, "want an object, have %s", jsontree.KindNames[n.Kind])
		return nil, false
	}
	m := make(map[string]*node, len(n.Keys))
	for i, k := range n.Keys {
		ok := false
		for _, a := range allowed {
			if a == k {
				ok = true
				break
			}
		}
		if !ok {
			r.ds.add(CodeUnknownField, path+"."+k, "unknown field %q", k)
			continue
		}
		m[k] = n.Vals[i]
	}
	for _, k := range required {
		if _, ok := m[k]; !ok {
			r.ds.add(CodeMissing, path+"."+k, "required field %q is missing", k)
		}
	}
	return m, true
}

func (r reader) array(n *node, path string) []*node {
	if n == nil {
		return nil
	}
	if n.Kind != 'a' {
		r.ds.add(CodeType, path, "want an array, have %s", jsontree.KindNames[n.Kind])
		return nil
	}
	return n.Vals
}

func (r reader) str(n *node, path string) string {
	if n == nil {
		return ""
	}
	if n.Kind != 's' {
		r.ds.add(CodeType, path, "want a string, have %s", jsontree.KindNames[n.Kind])
		return ""
	}
	return n.Str
}

func (r reader) boolean(n *node, path string) bool {
	if n == nil {
		return false
	}
	if n.Kind != 'b' {
		r.ds.add(CodeType, path, "want a boolean, have %s", jsontree.KindNames[n.Kind])
		return false
	}
	return n.B
}

// uint reads a non-negative integer no larger than max.
func (r reader) uint(n *node, path string, max uint64) uint64 {
	if n == nil {
		return 0
	}
	if n.Kind != 'n' {
		r.ds.add(CodeType, path, "want a number, have %s", jsontree.KindNames[n.Kind])
		return 0
	}
	v, err := strconv.ParseUint(n.Str, 10, 64)
	if err != nil {
		if len(n.Str) > 0 && n.Str[0] == '-' {
			r.ds.add(CodeSize, path, "negative value %s", n.Str)
		} else if _, ferr := strconv.ParseInt(n.Str, 10, 64); ferr != nil && (jsontree.IsInteger(n.Str) || hugeInteger(n.Str)) {
			r.ds.add(CodeSize, path, "value %s overflows", n.Str)
		} else {
			r.ds.add(CodeType, path, "want an integer, have %s", n.Str)
		}
		return 0
	}
	if v > max {
		r.ds.add(CodeSize, path, "value %d exceeds %d", v, max)
		return 0
	}
	return v
}

// int reads a signed integer within ±max.
func (r reader) int(n *node, path string, max int64) int64 {
	if n == nil {
		return 0
	}
	if n.Kind != 'n' {
		r.ds.add(CodeType, path, "want a number, have %s", jsontree.KindNames[n.Kind])
		return 0
	}
	v, err := strconv.ParseInt(n.Str, 10, 64)
	if err != nil {
		if jsontree.IsInteger(n.Str) || hugeInteger(n.Str) {
			r.ds.add(CodeSize, path, "value %s overflows", n.Str)
		} else {
			r.ds.add(CodeType, path, "want an integer, have %s", n.Str)
		}
		return 0
	}
	if max < 1<<63-1 && (v > max || v < -max) { // max = MaxInt64 admits every int64
		r.ds.add(CodeSize, path, "value %d is beyond ±%d", v, max)
		return 0
	}
	return v
}

// hugeInteger reports whether a number literal in exponent or fraction
// form (1e30, 1.5e300) denotes an integer beyond the int64 range, so it is
// reported as an overflowing size rather than a wrong type.
func hugeInteger(s string) bool {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return false
	}
	return math.Abs(f) >= 1<<63 && f == math.Trunc(f)
}

// stepFields lists, per step kind, the fields a step of that kind may have
// beside its kind.
var stepFields = map[string][]string{
	"wait": {"ge", "order", "scope"}, "signal": {"add", "order", "scope"},
	"sync": {}, "arrive": {}, "acquire": {"n", "scope"}, "release": {"n", "scope"}, "fence": {},
}

func fromTree(ds *diags, root *node) *Program {
	r := reader{ds}
	top, ok := r.object(root, "$", []string{"format", "name", "launch", "arenas", "buffers", "counters", "barriers", "semaphores", "tasks"}, "launch")
	if !ok {
		return nil
	}
	if f, ok := top["format"]; ok {
		if s := r.str(f, "$.format"); s != Format && f.Kind == 's' {
			ds.add(CodeFormat, "$.format", "format %q; want %q", s, Format)
			return nil
		}
	} else {
		ds.add(CodeFormat, "$.format", "missing \"format\"; want %q", Format)
		return nil
	}
	p := &Program{Name: r.str(top["name"], "$.name")}
	if ln := top["launch"]; ln != nil {
		if l, ok := r.object(ln, "$.launch", []string{"target", "sms", "blocks_per_sm", "workers", "cooperative"}, "sms", "workers"); ok {
			p.Launch = Launch{
				Target:      r.str(l["target"], "$.launch.target"),
				SMs:         int(r.uint(l["sms"], "$.launch.sms", 1<<31-1)),
				PerSM:       1,
				Workers:     int(r.uint(l["workers"], "$.launch.workers", 1<<31-1)),
				Cooperative: r.boolean(l["cooperative"], "$.launch.cooperative"),
			}
			if n := l["blocks_per_sm"]; n != nil {
				p.Launch.PerSM = int(r.uint(n, "$.launch.blocks_per_sm", 1<<31-1))
			}
		}
	}
	// Name tables, built as each list is read.
	index := func(kind string, list []*node, name func(i int) string) map[string]int32 {
		m := make(map[string]int32, len(list))
		for i := range list {
			s := name(i)
			if s == "" {
				continue
			}
			if _, dup := m[s]; dup {
				ds.add(CodeDuplicate, fmt.Sprintf("$.%s[%d].name", kind, i), "%s name %q declared twice", kind, s)
				continue
			}
			m[s] = int32(i)
		}
		return m
	}
	lookup := func(m map[string]int32, what, name, path string) int32 {
		i, ok := m[name]
		if !ok {
			ds.add(CodeReference, path, "no %s named %q", what, name)
			return -1
		}
		return i
	}
	limit := func(key string, list []*node) []*node {
		max := MaxObjects
		if key == "tasks" {
			max = MaxTasks
		}
		if len(list) > max {
			ds.add(CodeLimit, "$."+key, "%d entries exceed the limit of %d", len(list), max)
			return nil
		}
		return list
	}

	arenas := limit("arenas", r.array(top["arenas"], "$.arenas"))
	for i, n := range arenas {
		path := fmt.Sprintf("$.arenas[%d]", i)
		o, ok := r.object(n, path, []string{"name", "size"}, "name", "size")
		if !ok {
			p.Arenas = append(p.Arenas, Arena{})
			continue
		}
		p.Arenas = append(p.Arenas, Arena{Name: r.str(o["name"], path+".name"), Size: r.uint(o["size"], path+".size", maxExtent)})
	}
	arenaIdx := index("arenas", arenas, func(i int) string { return p.Arenas[i].Name })

	buffers := limit("buffers", r.array(top["buffers"], "$.buffers"))
	for i, n := range buffers {
		path := fmt.Sprintf("$.buffers[%d]", i)
		b := Buffer{Arena: NoArena, Kind: KindScratch}
		if o, ok := r.object(n, path, []string{"name", "kind", "size", "arena", "offset"}, "name", "kind", "size"); ok {
			b.Name = r.str(o["name"], path+".name")
			b.Size = r.uint(o["size"], path+".size", maxExtent)
			if k := o["kind"]; k != nil {
				ks := r.str(k, path+".kind")
				b.Kind = 0
				for kk, name := range kindNames {
					if name != "" && name == ks {
						b.Kind = BufferKind(kk)
					}
				}
				if b.Kind == 0 && k.Kind == 's' {
					ds.add(CodeValue, path+".kind", "unknown buffer kind %q; want input, weight, output, scratch or state", ks)
					b.Kind = KindScratch
				}
			}
			if a := o["arena"]; a != nil {
				b.Arena = lookup(arenaIdx, "arena", r.str(a, path+".arena"), path+".arena")
				if b.Arena < 0 {
					b.Arena = NoArena
				}
			}
			b.Offset = r.uint(o["offset"], path+".offset", maxExtent)
		}
		p.Buffers = append(p.Buffers, b)
	}
	bufIdx := index("buffers", buffers, func(i int) string { return p.Buffers[i].Name })

	counters := limit("counters", r.array(top["counters"], "$.counters"))
	for i, n := range counters {
		path := fmt.Sprintf("$.counters[%d]", i)
		c := Counter{Width: 32}
		if o, ok := r.object(n, path, []string{"name", "init", "width"}, "name"); ok {
			c.Name = r.str(o["name"], path+".name")
			c.Init = r.uint(o["init"], path+".init", ^uint64(0))
			if w := o["width"]; w != nil {
				c.Width = uint8(r.uint(w, path+".width", 255))
			}
		}
		p.Counters = append(p.Counters, c)
	}
	ctrIdx := index("counters", counters, func(i int) string { return p.Counters[i].Name })

	barriers := limit("barriers", r.array(top["barriers"], "$.barriers"))
	for i, n := range barriers {
		path := fmt.Sprintf("$.barriers[%d]", i)
		var b Barrier
		if o, ok := r.object(n, path, []string{"name", "parties"}, "name", "parties"); ok {
			b = Barrier{Name: r.str(o["name"], path+".name"), Parties: int(r.uint(o["parties"], path+".parties", MaxTasks))}
		}
		p.Barriers = append(p.Barriers, b)
	}
	barIdx := index("barriers", barriers, func(i int) string { return p.Barriers[i].Name })

	sems := limit("semaphores", r.array(top["semaphores"], "$.semaphores"))
	for i, n := range sems {
		path := fmt.Sprintf("$.semaphores[%d]", i)
		var s Semaphore
		if o, ok := r.object(n, path, []string{"name", "tokens"}, "name"); ok {
			s = Semaphore{Name: r.str(o["name"], path+".name"), Tokens: r.uint(o["tokens"], path+".tokens", maxExtent)}
		}
		p.Semaphores = append(p.Semaphores, s)
	}
	semIdx := index("semaphores", sems, func(i int) string { return p.Semaphores[i].Name })

	readStep := func(n *node, path string) Step {
		o, ok := r.object(n, path, []string{"wait", "ge", "signal", "add", "sync", "arrive", "acquire", "release", "n", "fence", "order", "scope"})
		if !ok {
			return Step{}
		}
		var s Step
		var kinds []string
		for _, k := range []string{"wait", "signal", "sync", "arrive", "acquire", "release", "fence"} {
			if o[k] != nil {
				kinds = append(kinds, k)
			}
		}
		if len(kinds) != 1 {
			if len(kinds) == 0 {
				ds.add(CodeMissing, path, "a step needs one of wait, signal, sync, arrive, acquire, release or fence")
			} else {
				ds.add(CodeValue, path, "a step has exactly one kind, have %v", kinds)
			}
			return Step{}
		}
		k := kinds[0]
		kp := path + "." + k
		name := r.str(o[k], kp)
		allowed := stepFields[k]
		for _, extra := range []string{"ge", "add", "n", "order", "scope"} {
			if o[extra] == nil {
				continue
			}
			ok := false
			for _, a := range allowed {
				ok = ok || a == extra
			}
			if !ok {
				ds.add(CodeUnknownField, path+"."+extra, "field %q does not apply to a %s step", extra, k)
			}
		}
		switch k {
		case "wait":
			s = Step{Kind: Wait, Object: lookup(ctrIdx, "counter", name, kp)}
			if o["ge"] == nil {
				ds.add(CodeMissing, path+".ge", "a wait needs a threshold \"ge\"")
			} else {
				s.Value = r.uint(o["ge"], path+".ge", ^uint64(0))
				if s.Value == 0 && o["ge"].Kind == 'n' && o["ge"].Str == "0" {
					ds.add(CodeThreshold, path+".ge", "threshold 0 never waits")
				}
			}
		case "signal":
			s = Step{Kind: Signal, Object: lookup(ctrIdx, "counter", name, kp), Value: 1}
			if o["add"] != nil {
				s.Value = r.uint(o["add"], path+".add", maxExtent)
			}
		case "sync", "arrive":
			s = Step{Kind: Sync, Object: lookup(barIdx, "barrier", name, kp)}
			if k == "arrive" {
				s.Kind = Arrive
			}
		case "acquire", "release":
			s = Step{Kind: Acquire, Object: lookup(semIdx, "semaphore", name, kp), Value: 1}
			if k == "release" {
				s.Kind = Release
			}
			if o["n"] != nil {
				s.Value = r.uint(o["n"], path+".n", maxExtent)
			}
		case "fence":
			s = Step{Kind: Fence, Scope: r.scope(name, kp)}
		}
		if ord := o["order"]; ord != nil {
			v := r.str(ord, path+".order")
			want := map[StepKind]string{Wait: "acquire", Signal: "release"}[s.Kind]
			switch v {
			case "relaxed":
				s.Relaxed = true
			case want:
			default:
				if ord.Kind == 's' {
					ds.add(CodeValue, path+".order", "order %q; a %s is %q or \"relaxed\"", v, k, want)
				}
			}
		}
		if sc := o["scope"]; sc != nil {
			s.Scope = r.scope(r.str(sc, path+".scope"), path+".scope")
		}
		return s
	}
	readAccess := func(n *node, path string) Access {
		o, ok := r.object(n, path, []string{"buffer", "offset", "length", "rows", "stride"}, "buffer", "length")
		if !ok {
			return Access{}
		}
		a := Access{
			Buffer: lookup(bufIdx, "buffer", r.str(o["buffer"], path+".buffer"), path+".buffer"),
			Offset: r.int(o["offset"], path+".offset", maxExtent),
			Length: r.uint(o["length"], path+".length", maxExtent),
			Rows:   r.uint(o["rows"], path+".rows", maxExtent),
			Stride: r.uint(o["stride"], path+".stride", maxExtent),
		}
		if o["length"] != nil && a.Length == 0 && o["length"].Str == "0" {
			ds.add(CodeEmptyAccess, path+".length", "an access of zero bytes")
		}
		return a
	}

	tasks := limit("tasks", r.array(top["tasks"], "$.tasks"))
	p.Tasks = make([]Task, 0, len(tasks))
	for i, n := range tasks {
		path := fmt.Sprintf("$.tasks[%d]", i)
		t := Task{Worker: Dynamic}
		if o, ok := r.object(n, path, []string{"name", "op", "params", "worker", "before", "reads", "writes", "after"}, "name"); ok {
			t.Name = r.str(o["name"], path+".name")
			t.Op = r.str(o["op"], path+".op")
			if pn := o["params"]; pn != nil {
				if pn.Kind != 'o' {
					ds.add(CodeType, path+".params", "want an object, have %s", jsontree.KindNames[pn.Kind])
				} else if len(pn.Keys) > 0 {
					t.Params = make(map[string]int64, len(pn.Keys))
					for j, k := range pn.Keys {
						t.Params[k] = r.int(pn.Vals[j], path+".params."+k, 1<<63-1)
					}
				}
			}
			if w := o["worker"]; w != nil {
				t.Worker = int32(r.uint(w, path+".worker", MaxWorkers))
			}
			for j, sn := range r.array(o["before"], path+".before") {
				t.Before = append(t.Before, readStep(sn, fmt.Sprintf("%s.before[%d]", path, j)))
			}
			for j, an := range r.array(o["reads"], path+".reads") {
				t.Reads = append(t.Reads, readAccess(an, fmt.Sprintf("%s.reads[%d]", path, j)))
			}
			for j, an := range r.array(o["writes"], path+".writes") {
				t.Writes = append(t.Writes, readAccess(an, fmt.Sprintf("%s.writes[%d]", path, j)))
			}
			for j, sn := range r.array(o["after"], path+".after") {
				t.After = append(t.After, readStep(sn, fmt.Sprintf("%s.after[%d]", path, j)))
			}
		}
		p.Tasks = append(p.Tasks, t)
	}
	index("tasks", tasks, func(i int) string { return p.Tasks[i].Name })
	return p
}

func (r reader) scope(s, path string) Scope {
	for i, name := range scopeNames {
		if name == s {
			return Scope(i)
		}
	}
	r.ds.add(CodeValue, path, "scope %q; want cta, gpu or sys", s)
	return ScopeGPU
}
