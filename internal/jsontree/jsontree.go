// Package jsontree reads JSON documents for the strict readers of the
// schedule formats: they report unknown fields, wrong types and missing keys
// with the JSON path of each, which encoding/json's struct decoding cannot.
//
// [Scanner] reads a document value by value from a byte slice or an
// io.Reader, so a reader can build its result in one pass, and keeps the
// path of every error. It rejects what json.Valid rejects and also invalid
// UTF-8 (naming a byte order mark or a UTF-16 encoding when there is one),
// lone surrogate escapes, duplicate keys (a file that means two different
// things to two readers), nesting beyond a bound (so hostile input cannot
// exhaust the stack) and input beyond a size limit. [Parse] and
// [Scanner.Value] build a tree that keeps object keys in document order,
// for the readers' slow paths. FuzzParse checks both against
// encoding/json.
//
// [ParseInteger] gives the exact value of an integer literal, including
// integral values written with a fraction or an exponent (512.0, 5.12e2),
// as JSON Schema counts them.
package jsontree

// Node is one parsed JSON value.
type Node struct {
	Kind byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	Keys []string
	Vals []*Node
	Str  string // string value, or a number's literal text
	B    bool
}

// KindNames names each Kind for messages: "an object", "a number", ...
var KindNames = map[byte]string{'o': "an object", 'a': "an array", 's': "a string", 'n': "a number", 'b': "a boolean", 'z': "null"}

// Parse reads exactly one JSON value nested at most maxDepth deep.
func Parse(data []byte, maxDepth int) (*Node, *Error) {
	s := NewScanner(data, 0, maxDepth)
	n := s.Value()
	s.End()
	if s.err != nil {
		return nil, s.err
	}
	return n, nil
}

// IntStatus says what a number literal is as an integer.
type IntStatus uint8

// Integer statuses.
const (
	IntOK       IntStatus = iota // an integer whose magnitude fits in 64 bits
	IntFraction                  // not an integer (1.5, 1e-3)
	IntOverflow                  // an integer whose magnitude is 2^64 or more
)

// ParseInteger returns the exact value of a JSON number literal as a sign
// and a magnitude. A literal with a fraction or an exponent counts as an
// integer when its value is one (512.0, 5.12e2, 1E3); -0 is 0.
func ParseInteger(lit []byte) (neg bool, mag uint64, st IntStatus) {
	i := 0
	if i < len(lit) && lit[i] == '-' {
		neg = true
		i++
	}
	// Fast path: digits only.
	j := i
	for j < len(lit) && lit[j] >= '0' && lit[j] <= '9' {
		j++
	}
	if j == len(lit) && j > i && j-i <= 19 {
		for _, c := range lit[i:] {
			mag = mag*10 + uint64(c-'0')
		}
		return neg && mag != 0, mag, IntOK
	}
	// General form: the significant digits and a decimal exponent.
	intPart := lit[i:j]
	var frac []byte
	if j < len(lit) && lit[j] == '.' {
		k := j + 1
		for k < len(lit) && lit[k] >= '0' && lit[k] <= '9' {
			k++
		}
		frac, j = lit[j+1:k], k
	}
	var exp int64
	if j < len(lit) && (lit[j] == 'e' || lit[j] == 'E') {
		j++
		eneg := false
		if j < len(lit) && (lit[j] == '+' || lit[j] == '-') {
			eneg = lit[j] == '-'
			j++
		}
		for ; j < len(lit); j++ {
			if exp < 1<<40 {
				exp = exp*10 + int64(lit[j]-'0')
			}
		}
		if eneg {
			exp = -exp
		}
	}
	// digits = intPart frac, value = digits × 10^(exp - len(frac)).
	digits := make([]byte, 0, len(intPart)+len(frac))
	digits = append(digits, intPart...)
	digits = append(digits, frac...)
	exp -= int64(len(frac))
	k := 0
	for k < len(digits) && digits[k] == '0' {
		k++
	}
	digits = digits[k:]
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	if len(digits) == 0 {
		return false, 0, IntOK
	}
	if exp < 0 {
		return neg, 0, IntFraction
	}
	if int64(len(digits))+exp > 20 {
		return neg, 0, IntOverflow
	}
	for _, c := range digits {
		d := uint64(c - '0')
		if mag > (^uint64(0)-d)/10 {
			return neg, 0, IntOverflow
		}
		mag = mag*10 + d
	}
	for ; exp > 0; exp-- {
		if mag > ^uint64(0)/10 {
			return neg, 0, IntOverflow
		}
		mag *= 10
	}
	return neg, mag, IntOK
}

// Int64 returns the value of a number literal that is an integer within
// the int64 range.
func Int64(lit []byte) (int64, bool) {
	neg, mag, st := ParseInteger(lit)
	switch {
	case st != IntOK:
		return 0, false
	case neg && mag <= 1<<63:
		return int64(-mag), true
	case !neg && mag < 1<<63:
		return int64(mag), true
	}
	return 0, false
}
