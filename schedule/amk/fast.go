package amk

import (
	"math"

	"github.com/megaproof/megaproof/internal/jsontree"
	"github.com/megaproof/megaproof/schedule"
)

// The usual task object is read by hand from the scanner's buffered bytes:
// plain keys and strings (no escapes, ASCII), non-negative integers, the
// keys AMK writes and nothing else, each once. It gives the fields that
// scanTask would; anything else (an unknown or repeated key, an escape, a
// negative id, a nested value where a scalar is expected, the end of the
// buffer) makes it give up having consumed nothing, and the scanner reads
// the task instead, with its diagnostics. FuzzUnmarshal holds both to the
// reference reader.

// fastReader reads JSON tokens from b at i.
type fastReader struct {
	b []byte
	i int
}

// next skips white space and returns the next byte, or 0 at the end.
func (r *fastReader) next() byte {
	if r.i < len(r.b) {
		if c := r.b[r.i]; c > ' ' {
			return c
		}
	}
	return r.nextSlow()
}

func (r *fastReader) nextSlow() byte {
	for r.i < len(r.b) {
		switch c := r.b[r.i]; c {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return c
		}
	}
	return 0
}

// lit returns len(s) if b holds s at i, and 0 otherwise; with s a
// constant, the comparison is a few word loads.
func lit(b []byte, i int, s string) int {
	if len(b)-i >= len(s) && string(b[i:i+len(s)]) == s {
		return len(s)
	}
	return 0
}

// eat reads the byte c if it comes next.
func (r *fastReader) eat(c byte) bool {
	if r.next() == c {
		r.i++
		return true
	}
	return false
}

// str reads a plain string.
func (r *fastReader) str() ([]byte, bool) {
	if r.next() != '"' {
		return nil, false
	}
	j := jsontree.PlainSpan(r.b, r.i+1)
	if j >= len(r.b) || r.b[j] != '"' {
		return nil, false
	}
	v := r.b[r.i+1 : j]
	r.i = j + 1
	return v, true
}

// key reads a plain string and the ':' after it. The keys AMK writes are
// matched whole, closing quote included, against constants (a few word
// comparisons each), without scanning them.
func (r *fastReader) key() ([]byte, bool) {
	if r.next() == '"' && r.i+1 < len(r.b) {
		b, i, n := r.b, r.i+1, 0
		switch b[i] {
		case 'c':
			n = lit(b, i, "counter\"")
		case 'd':
			n = lit(b, i, "dtype\"")
		case 'k':
			n = lit(b, i, "kind\"")
		case 'n':
			n = lit(b, i, "name\"")
		case 'e':
			if n = lit(b, i, "est_bytes\""); n == 0 {
				n = lit(b, i, "est_flops\"")
			}
		case 'i':
			if n = lit(b, i, "id\""); n == 0 {
				n = lit(b, i, "inputs\"")
			}
		case 'l':
			n = lit(b, i, "label\"")
		case 'o':
			if n = lit(b, i, "op\""); n == 0 {
				if n = lit(b, i, "out_counter\""); n == 0 {
					n = lit(b, i, "outputs\"")
				}
			}
		case 'p':
			n = lit(b, i, "params\"")
		case 's':
			if n = lit(b, i, "sm\""); n == 0 {
				if n = lit(b, i, "shape\""); n == 0 {
					if n = lit(b, i, "source\""); n == 0 {
						n = lit(b, i, "space\"")
					}
				}
			}
		case 't':
			n = lit(b, i, "threshold\"")
		case 'w':
			n = lit(b, i, "waits\"")
		}
		if n > 0 {
			r.i = i + n
			return b[i : i+n-1], r.eat(':')
		}
	}
	k, ok := r.str()
	return k, ok && r.eat(':')
}

// int reads a non-negative integer of at most 18 digits, with no fraction
// or exponent, that ends within the buffer.
func (r *fastReader) int() (int64, bool) {
	if c := r.next(); c < '0' || c > '9' {
		return 0, false
	}
	b, i := r.b, r.i
	j := i
	var v int64
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		v = v*10 + int64(b[j]-'0')
		j++
	}
	if j >= len(b) || j-i > 18 || b[i] == '0' && j > i+1 || b[j] == '.' || b[j] == 'e' || b[j] == 'E' {
		return 0, false
	}
	r.i = j
	return v, true
}

// num reads a number and returns its literal, which ends within the
// buffer.
func (r *fastReader) num() ([]byte, bool) {
	b := r.b
	r.next()
	i, j := r.i, r.i
	digits := func() bool {
		k := j
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		return j > k
	}
	if j < len(b) && b[j] == '-' {
		j++
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case !digits():
		return nil, false
	}
	if j < len(b) && b[j] == '.' {
		j++
		if !digits() {
			return nil, false
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if !digits() {
			return nil, false
		}
	}
	if j >= len(b) {
		return nil, false
	}
	r.i = j
	return b[i:j], true
}

// lit reads the literal word if it comes next.
func (r *fastReader) lit(word string) bool {
	if r.next() != word[0] || len(r.b)-r.i <= len(word) || string(r.b[r.i:r.i+len(word)]) != word {
		return false
	}
	r.i += len(word)
	return true
}

// scalar reads a number, plain string, boolean or null and returns its
// kind ('n', 's', 'b', 'z'), or 0.
func (r *fastReader) scalar() byte {
	switch c := r.next(); {
	case c == '"':
		if _, ok := r.str(); ok {
			return 's'
		}
	case c == '-' || c >= '0' && c <= '9':
		if _, ok := r.num(); ok {
			return 'n'
		}
	case c == 'n':
		if r.lit("null") {
			return 'z'
		}
	case c == 't':
		if r.lit("true") {
			return 'b'
		}
	case c == 'f':
		if r.lit("false") {
			return 'b'
		}
	}
	return 0
}

// list reads '[' and calls elem for each element until ']'.
func (r *fastReader) list(elem func() bool) bool {
	if !r.eat('[') {
		return false
	}
	if r.eat(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if r.eat(']') {
			return true
		}
		if !r.eat(',') {
			return false
		}
	}
}

// object reads '{' and calls member with each key until '}'.
func (r *fastReader) object(member func(key []byte) bool) bool {
	if !r.eat('{') {
		return false
	}
	if r.eat('}') {
		return true
	}
	for {
		k, ok := r.key()
		if !ok || !member(k) {
			return false
		}
		if r.eat('}') {
			return true
		}
		if !r.eat(',') {
			return false
		}
	}
}

// fastTask reads the task at the scanner's position by hand into tf,
// d.refs, d.waits, d.ps and d.lits, and returns how many bytes it read;
// or false, for the scanner to read it.
func (d *decoder) fastTask(tf *taskFields) (int, bool) {
	r := fastReader{b: d.s.Buffered()}
	m := d.m
	bufs := func(limit int) bool {
		n := 0
		return r.list(func() bool {
			if n++; n > limit {
				return false
			}
			id, ok := r.int()
			if !ok {
				return false
			}
			bi, ok := m.bufByID.get(id)
			d.refs = append(d.refs, bi)
			return ok
		})
	}
	wait := func() bool {
		if len(d.waits) == MaxWaits {
			return false
		}
		var seen uint32
		var ctr, k int64
		ok := r.object(func(key []byte) bool {
			var bit uint32
			var ok bool
			switch string(key) {
			case "counter":
				bit = b0
				ctr, ok = r.int()
			case "threshold":
				bit = b1
				k, ok = r.int()
			}
			return ok && once(&seen, bit)
		})
		if !ok || seen != b0|b1 || k < 1 || k > math.MaxUint32 {
			return false
		}
		ci, found := m.ctrByID.get(ctr)
		d.waits = append(d.waits, schedule.Step{Kind: schedule.Wait, Object: int32(ci), Value: uint64(k)})
		return found
	}
	param := func(key []byte) bool {
		if d.ps.get(string(key)) != nil {
			return false
		}
		p := param{key: d.intern(key)}
		switch c := r.next(); {
		case c == '-' || c >= '0' && c <= '9':
			p.kind = 'n'
			if v, ok := r.int(); ok {
				p.num, p.isInt = v, true
				break
			}
			lit, ok := r.num()
			if !ok {
				return false
			}
			from := len(d.lits)
			d.lits = append(d.lits, lit...)
			p.lit = d.lits[from:len(d.lits):len(d.lits)]
		default:
			if p.kind = r.scalar(); p.kind == 0 {
				return false
			}
		}
		d.ps = append(d.ps, p)
		return true
	}
	seen := uint32(0)
	ok := r.object(func(key []byte) bool {
		var bit uint32
		ok := false
		switch string(key) {
		case "id":
			bit = b0
			tf.id, ok = r.int()
		case "op":
			bit = b1
			var v []byte
			if v, ok = r.str(); ok {
				tf.op = opName(v)
				ok = tf.op != ""
			}
		case "inputs":
			bit = b2
			ok = seen&b3 == 0 && bufs(MaxInputs)
			tf.nIn = len(d.refs)
		case "outputs":
			bit = b3
			ok = seen&b2 != 0 && bufs(MaxOutputs)
		case "out_counter":
			bit = b4
			tf.ctr, ok = r.int()
		case "waits":
			bit = b5
			ok = r.lit("null") || r.list(wait)
		case "sm":
			bit = b6
			if ok = r.lit("null"); !ok {
				tf.sm, ok = r.int()
				ok = ok && tf.sm < schedule.MaxWorkers
				tf.pinned = true
			}
		case "params":
			bit = b7
			ok = r.lit("null") || r.object(param)
		case "est_bytes":
			bit, ok = b9, r.scalar() != 0
		case "est_flops":
			bit, ok = b10, r.scalar() != 0
		case "label":
			bit, ok = b11, r.scalar() != 0
		}
		return ok && once(&seen, bit)
	})
	tf.seen = seen
	return r.i, ok
}

// fastBuffer reads the buffer at the scanner's position by hand into bf
// and d.shape, as scanBuffer would, and returns how many bytes it read; or
// false, for the scanner to read it.
func (d *decoder) fastBuffer(bf *bufFields) (int, bool) {
	r := fastReader{b: d.s.Buffered()}
	var seen uint32
	ok := r.object(func(key []byte) bool {
		var bit uint32
		ok := false
		switch string(key) {
		case "id":
			bit = b0
			bf.id, ok = r.int()
		case "name":
			bit = b1
			var v []byte
			if v, ok = r.str(); ok {
				bf.name = string(v)
			}
		case "kind":
			bit = b2
			var v []byte
			if v, ok = r.str(); ok {
				bf.kind, ok = kinds[string(v)]
			}
		case "dtype":
			bit = b3
			var v []byte
			if v, ok = r.str(); ok {
				bf.bits = dtypeBits[string(v)]
				ok = bf.bits != 0
			}
		case "space":
			bit = b4
			if ok = r.lit("null"); !ok {
				var v []byte
				v, ok = r.str()
				ok = ok && memSpaces[string(v)]
			}
		case "shape":
			bit = b5
			ok = r.list(func() bool {
				x, ok := r.int()
				d.shape = append(d.shape, x)
				return ok
			})
		case "source":
			// AMK's state-dict key, which the mapping does not use.
			bit, ok = b6, r.scalar() != 0
		}
		return ok && once(&seen, bit)
	})
	bf.seen = seen
	return r.i, ok
}
