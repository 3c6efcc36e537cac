package amk

import (
	"encoding/binary"
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
//
// The readers below are functions of the bytes and an index that return
// the index after what they read, or -1 to give up: the position stays in
// a register (no reader object behind a pointer, no closures), and each
// key is matched once, to the bit of its field.

// ws returns the index of the first byte of b from i on that is not JSON
// white space (or len(b)).
func ws(b []byte, i int) int {
	if i < len(b) && b[i] > ' ' {
		return i
	}
	return jsontree.SpaceSpan(b, i)
}

// lit returns len(s) if b holds s at i, and 0 otherwise; with s a
// constant, the comparison is a few word loads.
func lit(b []byte, i int, s string) int {
	if len(b)-i >= len(s) && string(b[i:i+len(s)]) == s {
		return len(s)
	}
	return 0
}

// isNull reports whether b holds null at i, with a byte after it within
// the buffer (a streamed buffer may end inside a longer word).
func isNull(b []byte, i int) bool {
	return len(b)-i > 4 && string(b[i:i+4]) == "null"
}

// colon reads the ':' after a key's closing quote at b[i-1], with white
// space around it, and returns the index of the value; -1 when no ':'
// comes. The compact form is tested inline.
func colon(b []byte, i int) int {
	if i+2 < len(b) && b[i] == ':' {
		if b[i+1] > ' ' {
			return i + 1
		}
		// ": ", as indented documents write it.
		if b[i+1] == ' ' && b[i+2] > ' ' {
			return i + 2
		}
	}
	return colonSlow(b, i)
}

func colonSlow(b []byte, i int) int {
	if i = ws(b, i); i < len(b) && b[i] == ':' {
		return ws(b, i+1)
	}
	return -1
}

// after reads the white space after a member or element at i and the ','
// or the closing byte that follows: it returns the index of the next
// member or element (after white space) and false, or the index after the
// closing byte and true; -1 when neither comes. The compact form is tested
// inline.
func after(b []byte, i int, end byte) (int, bool) {
	if i+1 < len(b) {
		if c := b[i]; c == ',' {
			if b[i+1] > ' ' {
				return i + 1, false
			}
			// ",\n" and indentation, as indented documents write it.
			if j := jsontree.SpaceSpan(b, i+1); j < len(b) {
				return j, false
			}
		} else if c == end {
			return i + 1, true
		}
	}
	return afterSlow(b, i, end)
}

func afterSlow(b []byte, i int, end byte) (int, bool) {
	if i = ws(b, i); i >= len(b) {
		return -1, false
	}
	switch b[i] {
	case end:
		return i + 1, true
	case ',':
		return ws(b, i+1), false
	}
	return -1, false
}

// open reads the '[' or '{' at i and the white space after it; it returns
// the index of the first element or member, and whether the list or
// object is empty (the index then after its closing byte); -1 when the
// opening byte is not there.
func open(b []byte, i int, c, end byte) (int, bool) {
	if i >= len(b) || b[i] != c {
		return -1, false
	}
	if i = ws(b, i+1); i < len(b) && b[i] == end {
		return i + 1, true
	}
	return i, false
}

// uintAt reads the non-negative integer of at most 18 digits at i, with
// no fraction or exponent, that ends within the buffer, and returns it and
// the index after it; -1 for anything else.
func uintAt(b []byte, i int) (int64, int) {
	j := i
	var v uint64
	for j < len(b) {
		c := uint64(b[j]) - '0'
		if c > 9 {
			break
		}
		v = v*10 + c
		j++
	}
	// uint(j-i-1) >= 18: no digit, or more than 18.
	if uint(j-i-1) >= 18 || j >= len(b) || b[i] == '0' && j > i+1 {
		return 0, -1
	}
	if c := b[j]; c == '.' || c|0x20 == 'e' {
		return 0, -1
	}
	return int64(v), j
}

// strAt reads the plain string whose opening quote is at i and returns the
// index after its closing quote; -1 when it is not plain or does not end
// within the buffer. Its value is b[i+1 : j-1].
func strAt(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	j := jsontree.PlainSpan(b, i+1)
	if j >= len(b) || b[j] != '"' {
		return -1
	}
	return j + 1
}

// digitsAt returns the index after the decimal digits at j and whether there
// was one.
func digitsAt(b []byte, j int) (int, bool) {
	k := j
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	return j, j > k
}

// numAt reads the number at i (JSON's grammar) that ends within the
// buffer and returns the index after it; -1 for anything else.
func numAt(b []byte, i int) int {
	j := i
	ok := false
	if j < len(b) && b[j] == '-' {
		j++
	}
	if j < len(b) && b[j] == '0' {
		j++
	} else if j, ok = digitsAt(b, j); !ok {
		return -1
	}
	if j < len(b) && b[j] == '.' {
		if j, ok = digitsAt(b, j+1); !ok {
			return -1
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if j, ok = digitsAt(b, j); !ok {
			return -1
		}
	}
	if j >= len(b) {
		return -1
	}
	return j
}

// word reads the literal w at i, with a byte after it within the buffer.
func word(b []byte, i int, w string) int {
	if len(b)-i > len(w) && string(b[i:i+len(w)]) == w {
		return i + len(w)
	}
	return -1
}

// scalarAt reads a number, plain string, boolean or null at i and returns
// its kind ('n', 's', 'b', 'z') and the index after it; -1 for anything
// else.
func scalarAt(b []byte, i int) (byte, int) {
	if i >= len(b) {
		return 0, -1
	}
	switch c := b[i]; {
	case c == '"':
		return 's', strAt(b, i)
	case c == '-' || c >= '0' && c <= '9':
		return 'n', numAt(b, i)
	case c == 'n':
		return 'z', word(b, i, "null")
	case c == 't':
		return 'b', word(b, i, "true")
	case c == 'f':
		return 'b', word(b, i, "false")
	}
	return 0, -1
}

// Bits of a task's fields (as scanTask sets them).
const (
	tID        = b0
	tOp        = b1
	tInputs    = b2
	tOutputs   = b3
	tOutCtr    = b4
	tWaits     = b5
	tSM        = b6
	tParams    = b7
	tEstBytes  = b9
	tEstFlops  = b10
	tLabel     = b11
	wCounter   = b0 // of a wait
	wThreshold = b1
	fID        = b0 // of a buffer
	fName      = b1
	fKind      = b2
	fDtype     = b3
	fSpace     = b4
	fShape     = b5
	fSource    = b6
)

// Little-endian words of key bytes, closing quote and ':' included (the
// compact form), for taskKey; TestKeyWords checks them.
const (
	wID       = 0x3a226469         // id":
	wOp       = 0x3a22706f         // op":
	wSM       = 0x3a226d73         // sm":
	wInputs   = 0x3a22737475706e69 // inputs":
	wOutputs  = 0x227374757074756f // outputs"
	wOutCoun  = 0x6e756f635f74756f // out_coun
	wTer      = 0x3a22726574       // ter":
	wWaits    = 0x3a227374696177   // waits":
	wParams   = 0x3a22736d61726170 // params":
	wEstByte  = 0x657479625f747365 // est_byte
	wEstFlop  = 0x706f6c665f747365 // est_flop
	wS        = 0x3a2273           // s":
	wLabel    = 0x3a226c6562616c   // label":
	mask3     = 1<<24 - 1
	mask4     = 1<<32 - 1
	mask5     = 1<<40 - 1
	mask7     = 1<<56 - 1
	keyWindow = 17 // bytes from a key's opening quote that taskKey loads
)

// taskKey matches the key whose opening quote is at i against the keys of
// AMK's task objects and returns its field's bit and the index of its
// value; 0 and -1 for any other key. A key in the compact form (its ':'
// right after it) is matched in one or two word comparisons.
func taskKey(b []byte, i int) (uint32, int) {
	if i+keyWindow <= len(b) && b[i] == '"' {
		w := binary.LittleEndian.Uint64(b[i+1:])
		bit, n := uint32(0), 0
		switch byte(w) {
		case 'i':
			if w&mask4 == wID {
				bit, n = tID, 4
			} else if w == wInputs {
				bit, n = tInputs, 8
			}
		case 'o':
			if w&mask4 == wOp {
				bit, n = tOp, 4
			} else if w == wOutputs && b[i+9] == ':' {
				bit, n = tOutputs, 9
			} else if w == wOutCoun && binary.LittleEndian.Uint64(b[i+9:])&mask5 == wTer {
				bit, n = tOutCtr, 13
			}
		case 'w':
			if w&mask7 == wWaits {
				bit, n = tWaits, 7
			}
		case 's':
			if w&mask4 == wSM {
				bit, n = tSM, 4
			}
		case 'p':
			if w == wParams {
				bit, n = tParams, 8
			}
		case 'e':
			if binary.LittleEndian.Uint32(b[i+9:])&mask3 == wS {
				if w == wEstByte {
					bit, n = tEstBytes, 11
				} else if w == wEstFlop {
					bit, n = tEstFlops, 11
				}
			}
		case 'l':
			if w&mask7 == wLabel {
				bit, n = tLabel, 7
			}
		}
		if n > 0 {
			if j := i + 1 + n; b[j] > ' ' {
				return bit, j
			}
			return bit, ws(b, i+1+n)
		}
	}
	return taskKeySlow(b, i)
}

// taskKeySlow is taskKey for any form.
func taskKeySlow(b []byte, i int) (uint32, int) {
	if i+1 >= len(b) || b[i] != '"' {
		return 0, -1
	}
	i++
	n, bit := 0, uint32(0)
	switch b[i] {
	case 'i':
		if n, bit = lit(b, i, `id"`), tID; n == 0 {
			n, bit = lit(b, i, `inputs"`), tInputs
		}
	case 'o':
		if n, bit = lit(b, i, `op"`), tOp; n == 0 {
			if n, bit = lit(b, i, `outputs"`), tOutputs; n == 0 {
				n, bit = lit(b, i, `out_counter"`), tOutCtr
			}
		}
	case 'w':
		n, bit = lit(b, i, `waits"`), tWaits
	case 's':
		n, bit = lit(b, i, `sm"`), tSM
	case 'p':
		n, bit = lit(b, i, `params"`), tParams
	case 'e':
		if n, bit = lit(b, i, `est_bytes"`), tEstBytes; n == 0 {
			n, bit = lit(b, i, `est_flops"`), tEstFlops
		}
	case 'l':
		n, bit = lit(b, i, `label"`), tLabel
	}
	if n == 0 {
		return 0, -1
	}
	return bit, colon(b, i+n)
}

// waitKey is taskKey for a wait object.
func waitKey(b []byte, i int) (uint32, int) {
	n, bit := 0, uint32(0)
	if i+1 < len(b) && b[i] == '"' {
		switch b[i+1] {
		case 'c':
			n, bit = lit(b, i+1, `counter"`), wCounter
		case 't':
			n, bit = lit(b, i+1, `threshold"`), wThreshold
		}
	}
	if n == 0 {
		return 0, -1
	}
	return bit, colon(b, i+1+n)
}

// bufferKey is taskKey for a buffer object.
func bufferKey(b []byte, i int) (uint32, int) {
	n, bit := 0, uint32(0)
	if i+1 < len(b) && b[i] == '"' {
		j := i + 1
		switch b[j] {
		case 'i':
			n, bit = lit(b, j, `id"`), fID
		case 'n':
			n, bit = lit(b, j, `name"`), fName
		case 'k':
			n, bit = lit(b, j, `kind"`), fKind
		case 'd':
			n, bit = lit(b, j, `dtype"`), fDtype
		case 's':
			if n, bit = lit(b, j, `shape"`), fShape; n == 0 {
				if n, bit = lit(b, j, `space"`), fSpace; n == 0 {
					n, bit = lit(b, j, `source"`), fSource
				}
			}
		}
	}
	if n == 0 {
		return 0, -1
	}
	return bit, colon(b, i+1+n)
}

// refsAt reads a task's list of at most limit buffer ids at i into d.refs,
// as buffer indices, and returns the index after it; -1 for anything else.
func (d *decoder) refsAt(b []byte, i, limit int) int {
	ls := &d.refSeps
	i, empty := ls.start(b, i)
	if i < 0 || empty {
		return i
	}
	for n := 1; ; n++ {
		if n > limit {
			return -1
		}
		id, j := uintAt(b, i)
		if j < 0 {
			return -1
		}
		bi, ok := d.m.bufByID.get(id)
		if !ok {
			return -1
		}
		d.refs = append(d.refs, bi)
		var end bool
		if i, end = ls.after(b, j, ']'); i < 0 || end {
			return i
		}
	}
}

// listSeps are the separators of a list's elements, learned as for an
// object's members (sep): after its '[' (when it is not empty), between
// two elements and before its ']'.
type listSeps struct{ open, next, end sep }

// start is the package's open for a list, with the separator ls learned
// (taken only when an element follows it: the same bytes may begin an
// empty list).
func (ls *listSeps) start(b []byte, i int) (int, bool) {
	if m := ls.open.match(b, i); m != 0 && b[i+m] != ']' {
		return i + m, false
	}
	j, empty := open(b, i, '[', ']')
	if j >= 0 && !empty {
		ls.open.learn(b[i:j], 0)
	}
	return j, empty
}

// after is the package's after, with the separators ls learned.
func (ls *listSeps) after(b []byte, j int, end byte) (int, bool) {
	if j < len(b) && b[j] == end {
		return j + 1, true
	}
	if m := ls.next.match(b, j); m != 0 {
		return j + m, false
	}
	if m := ls.end.match(b, j); m != 0 {
		return j + m, true
	}
	i, done := after(b, j, end)
	switch {
	case i < 0:
	case done:
		ls.end.learn(b[j:i], 0)
	default:
		ls.next.learn(b[j:i], 0)
	}
	return i, done
}

// waitsAt reads a task's list of waits at i into d.waits and returns the
// index after it; -1 for anything else.
func (d *decoder) waitsAt(b []byte, i int) int {
	ls := &d.waitSeps
	i, empty := ls.start(b, i)
	if i < 0 || empty {
		return i
	}
	for {
		if len(d.waits) == MaxWaits || i >= len(b) || b[i] != '{' {
			return -1
		}
		j := i + 1
		var seen uint32
		var ctr, k int64
		for n := 0; ; n++ {
			bit, m := uint32(0), 0
			if n < len(d.waitMembers)-1 {
				m = d.waitMembers[n].match(b, j)
			}
			if m != 0 {
				bit, j = d.waitMembers[n].bit, j+m
			} else if bit, j = member(b, j, n, d.waitMembers[:], waitKey); j < 0 {
				return -1
			} else if bit == 0 {
				break
			}
			if seen&bit != 0 {
				return -1
			}
			seen |= bit
			var v int64
			if v, j = uintAt(b, j); j < 0 {
				return -1
			}
			if bit == wCounter {
				ctr = v
			} else {
				k = v
			}
		}
		if seen != wCounter|wThreshold || k < 1 || k > math.MaxUint32 {
			return -1
		}
		ci, found := d.m.ctrByID.get(ctr)
		if !found {
			return -1
		}
		d.waits = append(d.waits, schedule.Step{Kind: schedule.Wait, Object: int32(ci), Value: uint64(k)})
		var end bool
		if i, end = ls.after(b, j, ']'); i < 0 || end {
			return i
		}
	}
}

// nextKey reads what comes at i after an object's '{' (n == 0) or after
// its n-th member's value: it returns the index of the next key and false,
// or the index after the '}' and true; -1 for anything else.
func nextKey(b []byte, i, n int) (int, bool) {
	if n > 0 {
		return after(b, i, '}')
	}
	j := ws(b, i)
	if j < len(b) && b[j] == '}' {
		return j + 1, true
	}
	return j, false
}

// member reads what comes at i after an object's '{' (n == 0) or after its
// n-th member's value when its learned separator (seps[n]) is not there:
// the next member's key, with key, up to its value, or the object's '}'. It
// returns the key's bit and the index of its value, or 0 and the index
// after the '}'; -1 for anything else; and learns the separator in seps
// (the last one: before the '}'). Its callers match seps[n] first, inline.
func member(b []byte, i, n int, seps []sep, key func([]byte, int) (uint32, int)) (uint32, int) {
	last := len(seps) - 1
	if m := seps[last].match(b, i); m != 0 && n > 0 {
		return 0, i + m
	}
	j, end := nextKey(b, i, n)
	if j < 0 {
		return 0, -1
	}
	if end {
		if n > 0 {
			seps[last].learn(b[i:j], 0)
		}
		return 0, j
	}
	bit, k := key(b, j)
	if k < 0 {
		return 0, -1
	}
	if n < last {
		seps[n].learn(b[i:k], bit)
	}
	return bit, k
}

// paramsAt reads a task's params object at i into d.ps, number literals
// that are not small integers into d.lits, and returns the index after it;
// -1 for anything else. Tasks in a row tend to have the same keys in the
// same order, written alike: the n-th member is first matched against the
// bytes of the n-th member of the last params read here, up to its value
// (a sep: a plain key, so the same bytes are the same key), and only
// scanned and interned when it differs.
func (d *decoder) paramsAt(b []byte, i int) int {
	if i >= len(b) || b[i] != '{' {
		return -1
	}
	i++
	for n := 0; ; n++ {
		var p param
		j := -1
		if n < len(d.paramSeps) {
			if m := d.paramSeps[n].match(b, i); m != 0 {
				p.key, j = d.paramKeys[n], i+m
			}
		}
		if j < 0 {
			if m := d.paramEnd.match(b, i); m != 0 && n > 0 {
				return i + m
			}
			k, end := nextKey(b, i, n)
			if k < 0 || end {
				if end && n > 0 {
					d.paramEnd.learn(b[i:k], 0)
				}
				return k
			}
			if j = strAt(b, k); j < 0 {
				return -1
			}
			p.key = d.intern(b[k+1 : j-1])
			if j = colon(b, j); j < 0 {
				return -1
			}
			if n < len(d.paramSeps) && len(p.key) <= 64 { // kept short: the decoder is pooled
				d.paramSeps[n].learn(b[i:j], 0)
				d.paramKeys[n] = p.key
			}
		}
		if d.ps.get(p.key) != nil {
			return -1
		}
		if j < len(b) && (b[j] == '-' || b[j] >= '0' && b[j] <= '9') {
			p.kind = 'n'
			if v, k := uintAt(b, j); k >= 0 {
				p.num, p.isInt, j = v, true, k
			} else {
				k := numAt(b, j)
				if k < 0 {
					return -1
				}
				from := len(d.lits)
				d.lits = append(d.lits, b[j:k]...)
				p.lit = d.lits[from:len(d.lits):len(d.lits)]
				j = k
			}
		} else if p.kind, j = scalarAt(b, j); j < 0 {
			return -1
		}
		d.ps = append(d.ps, p)
		i = j
	}
}

// fastTask reads the task at the scanner's position by hand into tf,
// d.refs, d.waits, d.ps and d.lits, and returns how many bytes it read;
// or false, for the scanner to read it.
func (d *decoder) fastTask(tf *taskFields) (int, bool) {
	n, seen, ok := d.fastObject(tf, nil)
	tf.seen = seen
	return n, ok
}

// fastBuffer reads the buffer at the scanner's position by hand into bf
// and d.shape, as scanBuffer would, and returns how many bytes it read; or
// false, for the scanner to read it.
func (d *decoder) fastBuffer(bf *bufFields) (int, bool) {
	n, seen, ok := d.fastObject(nil, bf)
	bf.seen = seen
	return n, ok
}

// fastObject reads the task (tf set) or buffer (bf set) at the scanner's
// position by hand: its members, each once, through the separators learned
// for its kind, and their values with taskValue or bufferValue. It returns
// how many bytes it read and the bits of the members seen; or false.
func (d *decoder) fastObject(tf *taskFields, bf *bufFields) (int, uint32, bool) {
	b := d.s.Buffered()
	i := ws(b, 0)
	if i >= len(b) || b[i] != '{' {
		return 0, 0, false
	}
	i++
	seps, key := d.taskSeps[:], taskKey
	if tf == nil {
		seps, key = d.bufSeps[:], bufferKey
	}
	var seen uint32
	for n := 0; ; n++ {
		bit, m := uint32(0), 0
		if n < len(seps)-1 {
			m = seps[n].match(b, i)
		}
		if m != 0 {
			bit, i = seps[n].bit, i+m
		} else if bit, i = member(b, i, n, seps, key); i < 0 || bit == 0 {
			break
		}
		if seen&bit != 0 {
			return 0, 0, false
		}
		seen |= bit
		if tf != nil {
			i = d.taskValue(tf, seen, bit, b, i)
		} else {
			i = d.bufferValue(bf, bit, b, i)
		}
		if i < 0 {
			return 0, 0, false
		}
	}
	return i, seen, i >= 0
}

// taskValue reads the value at i of a task's member bit (seen: the bits
// of its members so far) and returns the index after it; -1 for anything
// fastTask does not take.
func (d *decoder) taskValue(tf *taskFields, seen, bit uint32, b []byte, i int) int {
	switch bit {
	case tID:
		tf.id, i = uintAt(b, i)
	case tOp:
		j := strAt(b, i)
		if j < 0 {
			return -1
		}
		if tf.op = opName(b[i+1 : j-1]); tf.op == "" {
			return -1
		}
		i = j
	case tInputs:
		if seen&tOutputs != 0 {
			return -1
		}
		i = d.refsAt(b, i, MaxInputs)
		tf.nIn = len(d.refs)
	case tOutputs:
		if seen&tInputs == 0 {
			return -1
		}
		i = d.refsAt(b, i, MaxOutputs)
	case tOutCtr:
		tf.ctr, i = uintAt(b, i)
	case tWaits:
		if isNull(b, i) {
			i += 4
		} else {
			i = d.waitsAt(b, i)
		}
	case tSM:
		if isNull(b, i) {
			i += 4
		} else {
			tf.sm, i = uintAt(b, i)
			if tf.sm >= schedule.MaxWorkers {
				return -1
			}
			tf.pinned = true
		}
	case tParams:
		if isNull(b, i) {
			i += 4
		} else {
			i = d.paramsAt(b, i)
		}
	default: // est_bytes, est_flops, label: any scalar
		_, i = scalarAt(b, i)
	}
	return i
}

// bufferValue is taskValue for a buffer's member.
func (d *decoder) bufferValue(bf *bufFields, bit uint32, b []byte, i int) int {
	switch bit {
	case fID:
		bf.id, i = uintAt(b, i)
	case fName:
		j := strAt(b, i)
		if j < 0 {
			return -1
		}
		bf.name = string(b[i+1 : j-1])
		i = j
	case fKind:
		j := strAt(b, i)
		if j < 0 {
			return -1
		}
		var ok bool
		if bf.kind, ok = kinds[string(b[i+1:j-1])]; !ok {
			return -1
		}
		i = j
	case fDtype:
		j := strAt(b, i)
		if j < 0 {
			return -1
		}
		if bf.bits = dtypeBits[string(b[i+1:j-1])]; bf.bits == 0 {
			return -1
		}
		i = j
	case fSpace:
		if isNull(b, i) {
			i += 4
			break
		}
		j := strAt(b, i)
		if j < 0 || !memSpaces[string(b[i+1:j-1])] {
			return -1
		}
		i = j
	case fShape:
		ls := &d.shapeSeps
		var empty bool
		if i, empty = ls.start(b, i); i < 0 || empty {
			break
		}
		for {
			var x int64
			if x, i = uintAt(b, i); i < 0 {
				break
			}
			d.shape = append(d.shape, x)
			var done bool
			if i, done = ls.after(b, i, ']'); i < 0 || done {
				break
			}
		}
	default: // source: any scalar
		_, i = scalarAt(b, i)
	}
	return i
}

// A sep is the bytes from the end of a member's value (or from an object's
// '{') to the start of the next member's value: white space, ',', the key
// and ':', as an earlier object held them when they were read in full; and
// the key's field bit. The same bytes are the same member.
type sep struct {
	n   uint8
	bit uint32
	b   [maxSep]byte
}

// maxSep bounds a learned separator (longer ones are not learned).
const maxSep = 46

// match returns the length of s if b holds it at i, followed by a byte
// that is not white space (s takes all the white space there was where it
// was learned), and 0 otherwise.
func (s *sep) match(b []byte, i int) int {
	if n := int(s.n); n > 0 && len(b)-i > n && b[i+n] > ' ' && string(b[i:i+n]) == string(s.b[:n]) {
		return n
	}
	return 0
}

// learn makes s the separator v of the member with bit.
func (s *sep) learn(v []byte, bit uint32) {
	if len(v) > maxSep {
		s.n = 0
		return
	}
	s.n, s.bit = uint8(copy(s.b[:], v)), bit
}

// fastCounter reads the counter at the scanner's position by hand, as
// counter's scan would: "id", "init" (null or 0..2^32-1) and AMK's "note"
// (any scalar, which the mapping does not use), each once; and returns how
// many bytes it read, or false for the scanner to read it.
func (d *decoder) fastCounter(seen *uint32, id, init *int64) (int, bool) {
	b := d.s.Buffered()
	i, end := open(b, ws(b, 0), '{', '}')
	for i >= 0 && !end {
		n, bit := 0, uint32(0)
		if i+1 < len(b) && b[i] == '"' {
			switch b[i+1] {
			case 'i':
				if n, bit = lit(b, i+1, `id"`), b0; n == 0 {
					n, bit = lit(b, i+1, `init"`), b1
				}
			case 'n':
				n, bit = lit(b, i+1, `note"`), b2
			}
		}
		if n == 0 || *seen&bit != 0 {
			return 0, false
		}
		*seen |= bit
		if i = colon(b, i+1+n); i < 0 {
			return 0, false
		}
		switch bit {
		case b0:
			*id, i = uintAt(b, i)
		case b1:
			if isNull(b, i) {
				i += 4
			} else if *init, i = uintAt(b, i); *init > math.MaxUint32 {
				return 0, false
			}
		default:
			_, i = scalarAt(b, i)
		}
		if i < 0 {
			return 0, false
		}
		i, end = after(b, i, '}')
	}
	return i, i >= 0
}
