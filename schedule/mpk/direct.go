package mpk

// The direct scanner reads the documents MPK writes in one pass over the
// bytes, without building a tree: every value has the type the format
// gives it, integers are plain JSON integers within int64, names are
// printable ASCII without escapes, and no object repeats or adds a key.
// On anything else it gives up (ok false) and [Parse] reads the document
// through jsontree, which reports the problem with its path or accepts
// what the scanner did not handle (escapes, unknown keys, null metadata).
// The scanner checks JSON syntax itself; what it accepts, jsontree
// accepts with the same Graph (FuzzParse).

type direct struct {
	d     []byte
	i     int
	names map[string]string // interned base_ptr names
	ints  []int64           // slab for dims and strides
	tens  []Tensor          // slab for tensor lists
	tmp   []Tensor          // the list being read
	tmpI  []int64
}

// parseDirect reads data if it is in the form MPK writes.
func parseDirect(data []byte) (g *Graph, ok bool) {
	s := &direct{d: data, names: map[string]string{}}
	g = &Graph{}
	if !s.top(g) {
		return nil, false
	}
	s.ws()
	if s.i != len(s.d) {
		return nil, false
	}
	return g, true
}

func (s *direct) ws() {
	for s.i < len(s.d) {
		switch s.d[s.i] {
		case ' ', '\n', '\t', '\r':
			s.i++
		default:
			return
		}
	}
}

// lit consumes byte c after optional whitespace.
func (s *direct) lit(c byte) bool {
	s.ws()
	if s.i < len(s.d) && s.d[s.i] == c {
		s.i++
		return true
	}
	return false
}

// peek returns the next non-space byte, or 0 at the end.
func (s *direct) peek() byte {
	s.ws()
	if s.i < len(s.d) {
		return s.d[s.i]
	}
	return 0
}

// null consumes the literal null.
func (s *direct) null() bool {
	s.ws()
	if len(s.d)-s.i >= 4 && string(s.d[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

// str reads a string of printable ASCII without escapes.
func (s *direct) str() ([]byte, bool) {
	if !s.lit('"') {
		return nil, false
	}
	start := s.i
	for s.i < len(s.d) {
		c := s.d[s.i]
		switch {
		case c == '"':
			s.i++
			return s.d[start : s.i-1], true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, false
		}
		s.i++
	}
	return nil, false
}

// integer reads a JSON integer within int64, followed by no fraction or
// exponent.
func (s *direct) integer() (int64, bool) {
	s.ws()
	neg := false
	if s.i < len(s.d) && s.d[s.i] == '-' {
		neg = true
		s.i++
	}
	start := s.i
	var v uint64
	for s.i < len(s.d) {
		c := s.d[s.i]
		if c < '0' || c > '9' {
			break
		}
		if v > (1<<63)/10 {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
		s.i++
	}
	n := s.i - start
	if n == 0 || (n > 1 && s.d[start] == '0') {
		return 0, false
	}
	if s.i < len(s.d) {
		if c := s.d[s.i]; c == '.' || c == 'e' || c == 'E' {
			return 0, false
		}
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}

// object reads an object whose keys are numbered by key (-1 for a key
// the caller does not know, which makes the scanner give up); val reads
// the value of key number k. Every key in need must appear, none twice.
func (s *direct) object(key func([]byte) int, need uint32, val func(k int) bool) bool {
	if !s.lit('{') {
		return false
	}
	var seen uint32
	if s.lit('}') {
		return need == 0
	}
	for {
		name, ok := s.str()
		if !ok {
			return false
		}
		k := key(name)
		if k < 0 || seen&(1<<k) != 0 || !s.lit(':') || !val(k) {
			return false
		}
		seen |= 1 << k
		if s.lit(',') {
			continue
		}
		if !s.lit('}') {
			return false
		}
		return seen&need == need
	}
}

// list reads an array, calling elem for each element.
func (s *direct) list(elem func() bool) bool {
	if !s.lit('[') {
		return false
	}
	if s.lit(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if s.lit(',') {
			continue
		}
		return s.lit(']')
	}
}

func (s *direct) top(g *Graph) bool {
	const events, tasks, first = 0, 1, 2
	key := func(b []byte) int {
		switch string(b) {
		case "all_events":
			return events
		case "all_tasks":
			return tasks
		case "first_tasks":
			return first
		}
		return -1
	}
	return s.object(key, 1<<events|1<<tasks, func(k int) bool {
		switch k {
		case events:
			g.Events = []Event{}
			return s.list(func() bool {
				var e Event
				if !s.event(&e) {
					return false
				}
				g.Events = append(g.Events, e)
				return true
			})
		case tasks:
			// A task takes at least 250 bytes as MPK writes it.
			g.Tasks = make([]Task, 0, min(len(s.d)/250+1, 1<<20))
			return s.list(func() bool {
				g.Tasks = append(g.Tasks, Task{})
				return s.task(&g.Tasks[len(g.Tasks)-1])
			})
		default:
			if s.null() {
				return true
			}
			v, ok := s.intList()
			if !ok {
				return false
			}
			g.FirstTasks = append([]int64{}, v...)
			return true
		}
	})
}

func (s *direct) event(e *Event) bool {
	key := func(b []byte) int {
		switch string(b) {
		case "event_type":
			return 0
		case "first_task_id":
			return 1
		case "last_task_id":
			return 2
		case "num_triggers":
			return 3
		}
		return -1
	}
	return s.object(key, 15, func(k int) bool {
		v, ok := s.integer()
		switch k {
		case 0:
			e.Type = v
		case 1:
			e.FirstTask = v
		case 2:
			e.LastTask = v
		default:
			e.NumTriggers = v
		}
		return ok
	})
}

func taskKey(b []byte) int {
	switch string(b) {
	case "dependent_event":
		return 0
	case "expert_offset":
		return 1
	case "inputs":
		return 2
	case "kv_idx":
		return 3
	case "merge_task_offset":
		return 4
	case "outputs":
		return 5
	case "request_id":
		return 6
	case "task_offset":
		return 7
	case "task_type":
		return 8
	case "trigger_event":
		return 9
	case "variant_id":
		return 10
	}
	return -1
}

func (s *direct) task(t *Task) bool {
	*t = Task{RequestID: -1, ExpertOffset: -1, KVIdx: -1, MergeTaskOffset: -1, TaskOffset: -1}
	const need = 1<<0 | 1<<2 | 1<<5 | 1<<8 | 1<<9
	return s.object(taskKey, need, func(k int) bool {
		if k == 2 || k == 5 {
			ts, ok := s.tensors()
			if k == 2 {
				t.Inputs = ts
			} else {
				t.Outputs = ts
			}
			return ok
		}
		v, ok := s.integer()
		switch k {
		case 0:
			t.DependentEvent = v
		case 1:
			t.ExpertOffset = v
		case 3:
			t.KVIdx = v
		case 4:
			t.MergeTaskOffset = v
		case 6:
			t.RequestID = v
		case 7:
			t.TaskOffset = v
		case 8:
			t.Type = v
		case 9:
			t.TriggerEvent = v
		default:
			t.Variant = v
		}
		return ok
	})
}

// tensors reads null or a list of tensors into the slab.
func (s *direct) tensors() ([]Tensor, bool) {
	if s.null() {
		return nil, true
	}
	s.tmp = s.tmp[:0]
	ok := s.list(func() bool {
		var x Tensor
		if !s.tensor(&x) {
			return false
		}
		s.tmp = append(s.tmp, x)
		return true
	})
	if !ok {
		return nil, false
	}
	n := len(s.tmp)
	if s.tens == nil || cap(s.tens)-len(s.tens) < n {
		s.tens = make([]Tensor, 0, max(4096, n))
	}
	start := len(s.tens)
	s.tens = append(s.tens, s.tmp...)
	return s.tens[start : start+n : start+n], true
}

func (s *direct) tensor(x *Tensor) bool {
	key := func(b []byte) int {
		switch string(b) {
		case "base_ptr":
			return 0
		case "data_type":
			return 1
		case "dims":
			return 2
		case "offset":
			return 3
		case "strides":
			return 4
		}
		return -1
	}
	return s.object(key, 31, func(k int) bool {
		switch k {
		case 0:
			b, ok := s.str()
			if !ok {
				return false
			}
			name, seen := s.names[string(b)]
			if !seen {
				name = string(b)
				s.names[name] = name
			}
			x.BasePtr = name
			return true
		case 2, 4:
			v, ok := s.intList()
			if !ok {
				return false
			}
			if s.ints == nil || cap(s.ints)-len(s.ints) < len(v) {
				s.ints = make([]int64, 0, max(8192, len(v)))
			}
			start := len(s.ints)
			s.ints = append(s.ints, v...)
			list := s.ints[start : start+len(v) : start+len(v)]
			if k == 2 {
				x.Dims = list
			} else {
				x.Strides = list
			}
			return true
		}
		v, ok := s.integer()
		if k == 1 {
			x.DataType = v
		} else {
			x.Offset = v
		}
		return ok
	})
}

// intList reads a list of integers into a scratch slice the caller
// copies.
func (s *direct) intList() ([]int64, bool) {
	s.tmpI = s.tmpI[:0]
	ok := s.list(func() bool {
		v, ok := s.integer()
		s.tmpI = append(s.tmpI, v)
		return ok
	})
	return s.tmpI, ok
}
