package jsontree

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrorKind classifies an [Error].
type ErrorKind uint8

// Error kinds.
const (
	Syntax    ErrorKind = iota // not JSON, invalid UTF-8, nesting too deep, trailing data
	Duplicate                  // a key appears twice in one object
	Limit                      // the input is longer than the limit
	IO                         // the reader failed; Err holds its error
)

// Error is why a document is not one JSON value the readers accept.
type Error struct {
	Kind    ErrorKind
	Path    string // where, as a JSON path ($.tasks[3].name)
	Message string
	Err     error // the reader's error, for IO
}

func (e *Error) Error() string { return e.Path + ": " + e.Message }

// frame is one open object or array on the scanner's stack.
type frame struct {
	array  bool
	member bool   // a key was read (object) or an element started (array)
	owned  bool   // key is in own, not in buf
	index  int    // the element's index (array)
	key    []byte // the current key (object): in buf until a refill, then in own
	own    []byte
}

// ownKeys copies the keys that are still in buf to their frames, before
// buf changes.
func (s *Scanner) ownKeys() {
	for i := range s.stack {
		if f := &s.stack[i]; !f.owned && f.key != nil {
			f.own = append(f.own[:0], f.key...)
			f.key, f.owned = f.own, true
		}
	}
}

// Scanner reads one JSON document value by value, from a byte slice or
// streamed from an io.Reader through a buffer, so that a reader can build
// its result in one pass without a tree. It keeps the stack of open objects
// and arrays, so every error carries the JSON path of the value it is in,
// and it enforces what the schedule readers require of a document: valid
// UTF-8 (no lone surrogate escapes), nesting at most maxDepth deep, and at
// most limit bytes of input. Duplicate keys are detected by [Scanner.Value]
// and [Scanner.Skip]; callers reading objects key by key check their own.
//
// Errors are sticky: after the first one, every method returns a zero
// value and [Scanner.Err] reports it. A byte slice returned by a method is
// valid until the next call.
type Scanner struct {
	r        io.Reader
	buf      []byte
	pos, end int   // buf[pos:end] is unread
	base     int64 // stream offset of buf[0]
	keep     int   // buf[keep:] is kept across refills (a mark), or -1
	tok      int   // start of the token being read, kept across refills, or -1
	eof      bool  // no more input beyond buf[:end]
	over     bool  // the input continues beyond limit
	limit    int64
	maxDepth int
	stack    []frame
	err      *Error
	str      []byte // decoded string with escapes
	escaped  bool   // the last string read is in str
	head     [4]byte
	headN    int

	keys keySets

	markDepth int
	markFrame frame

	rbuf   []byte   // the read buffer, kept across resets
	stack0 [6]frame // the first frames
}

// bufSize is the read size when streaming from an io.Reader.
const bufSize = 64 << 10

// NewScanner returns a scanner of the document in data, of which at most
// limit bytes are read (limit <= 0: no limit).
func NewScanner(data []byte, limit int64, maxDepth int) *Scanner {
	s := new(Scanner)
	s.Reset(data, limit, maxDepth)
	return s
}

// NewReader returns a scanner of the document read from r, of which at
// most limit bytes are read (limit <= 0: no limit).
func NewReader(r io.Reader, limit int64, maxDepth int) *Scanner {
	s := new(Scanner)
	s.ResetReader(r, limit, maxDepth)
	return s
}

// Reset makes s a scanner of the document in data, as NewScanner does,
// keeping the memory it has.
func (s *Scanner) Reset(data []byte, limit int64, maxDepth int) {
	s.reset(limit, maxDepth)
	s.eof = true
	if limit > 0 && int64(len(data)) > limit {
		data, s.over = data[:limit], true
	}
	s.buf, s.end = data, len(data)
	s.headN = copy(s.head[:], data)
}

// ResetReader makes s a scanner of the document read from r, as NewReader
// does, keeping the memory it has.
func (s *Scanner) ResetReader(r io.Reader, limit int64, maxDepth int) {
	s.reset(limit, maxDepth)
	s.r, s.buf = r, s.rbuf[:cap(s.rbuf)]
}

func (s *Scanner) reset(limit int64, maxDepth int) {
	if s.r != nil {
		s.rbuf = s.buf // keep the read buffer
	}
	stack, mk := s.stack[:0], s.markFrame.key[:0]
	if stack == nil {
		stack = s.stack0[:0]
	}
	// Field by field, as *s = Scanner{...} would set them, without
	// clearing the first frames as a whole: only what they point into
	// (the last input) is dropped.
	for i := range s.stack0 {
		f := &s.stack0[i]
		f.key, f.owned = nil, false
	}
	s.r, s.buf, s.pos, s.end, s.base = nil, nil, 0, 0, 0
	s.keep, s.tok, s.eof, s.over = -1, -1, false, false
	s.limit, s.maxDepth, s.stack, s.err = limit, maxDepth, stack, nil
	s.str, s.escaped, s.head, s.headN = s.str[:0], false, [4]byte{}, 0
	s.keys.arena, s.keys.ends = s.keys.arena[:0], s.keys.ends[:0]
	s.markDepth, s.markFrame = 0, frame{key: mk}
}

// Err returns the first error, or nil.
func (s *Scanner) Err() *Error { return s.err }

// Offset is the stream offset of the next unread byte.
func (s *Scanner) Offset() int64 { return s.base + int64(s.pos) }

// Size is the length of the document of a scanner of bytes, or -1 for a
// scanner of a reader.
func (s *Scanner) Size() int64 {
	if s.r != nil {
		return -1
	}
	return int64(s.end)
}

// Path formats the JSON path of the value being read.
func (s *Scanner) Path() string {
	var b strings.Builder
	b.WriteByte('$')
	for i := range s.stack {
		f := &s.stack[i]
		if !f.member {
			continue
		}
		if f.array {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(f.index))
			b.WriteByte(']')
		} else {
			b.WriteByte('.')
			b.Write(f.key)
		}
	}
	return b.String()
}

// Depth is the number of open objects and arrays.
func (s *Scanner) Depth() int { return len(s.stack) }

// Prefix opens, for a scanner of one value's bytes, the enclosing object
// member key and, when index >= 0, array element index, so that paths and
// depth are those of the value in its document: $.key[index] ($.key).
func (s *Scanner) Prefix(key string, index int) {
	s.stack = append(s.stack, frame{member: true, owned: true, key: []byte(key)})
	if index >= 0 {
		s.stack = append(s.stack, frame{array: true, member: true, index: index})
	}
}

func (s *Scanner) fail(kind ErrorKind, msg string) {
	if s.err == nil {
		s.err = &Error{Kind: kind, Path: s.Path(), Message: msg}
	}
}

func (s *Scanner) syntax(format string, args ...any) {
	if s.err == nil {
		s.fail(Syntax, fmt.Sprintf(format, args...)+fmt.Sprintf(" (at byte %d)", s.Offset()))
	}
}

// Duplicate records that key appears twice in the current object, as
// [Scanner.Value] does.
func (s *Scanner) Duplicate(key []byte) {
	s.fail(Duplicate, fmt.Sprintf("key %q appears twice", key))
}

// fill reads more input into buf and reports whether any came.
func (s *Scanner) fill() bool {
	if s.err != nil {
		return false
	}
	got := 0 // bytes read by this call
	for !s.eof {
		from := s.pos
		if s.keep >= 0 && s.keep < from {
			from = s.keep
		}
		if s.tok >= 0 && s.tok < from {
			from = s.tok
		}
		if from > 0 || s.end == len(s.buf) {
			s.ownKeys()
		}
		if from > 0 {
			copy(s.buf, s.buf[from:s.end])
			s.end -= from
			s.pos -= from
			if s.keep >= 0 {
				s.keep -= from
			}
			if s.tok >= 0 {
				s.tok -= from
			}
			s.base += int64(from)
		}
		if s.end == len(s.buf) {
			nb := make([]byte, max(bufSize, 2*len(s.buf)))
			copy(nb, s.buf[:s.end])
			s.buf = nb
		}
		room := int64(len(s.buf) - s.end)
		if s.limit > 0 {
			left := s.limit - s.base - int64(s.end)
			if left <= 0 {
				// At the limit: one more byte means the input is too long.
				var one [1]byte
				n, err := s.read(one[:])
				if n > 0 {
					s.over = true
				}
				s.eof = true
				if err != nil && !errors.Is(err, io.EOF) && n == 0 {
					s.err = &Error{Kind: IO, Path: s.Path(), Message: err.Error(), Err: err}
					return false
				}
				break
			}
			room = min(room, left)
		}
		n, err := s.read(s.buf[s.end : s.end+int(room)])
		if off := s.base + int64(s.end); off < int64(len(s.head)) {
			s.headN = int(off) + copy(s.head[off:], s.buf[s.end:s.end+n])
		}
		s.end += n
		if err != nil {
			s.eof = true
			if !errors.Is(err, io.EOF) {
				s.err = &Error{Kind: IO, Path: s.Path(), Message: err.Error(), Err: err}
				return false
			}
		}
		got += n
		if got > 0 && (s.headN == len(s.head) || s.eof) {
			return true
		}
	}
	if got > 0 {
		return true // the start of a short input
	}
	if s.over {
		s.fail(Limit, fmt.Sprintf("the input is longer than the limit of %d bytes", s.limit))
	}
	return false
}

// read reads into p, giving up after many reads that return nothing, as
// bufio does.
func (s *Scanner) read(p []byte) (int, error) {
	for range 100 {
		n, err := s.r.Read(p)
		if n > 0 || err != nil {
			return n, err
		}
	}
	return 0, io.ErrNoProgress
}

// next skips white space and returns the next byte, or -1 at the end of the
// input or on an error.
func (s *Scanner) next() int {
	if i := s.pos; i < s.end {
		c := s.buf[i]
		if c > ' ' {
			return int(c)
		}
		// One space, as after the ':' and ',' of indented documents.
		if c == ' ' && i+1 < s.end {
			if c = s.buf[i+1]; c > ' ' {
				s.pos = i + 1
				return int(c)
			}
		}
	}
	return s.nextSlow()
}

func (s *Scanner) nextSlow() int {
	for {
		if s.pos = SpaceSpan(s.buf[:s.end], s.pos); s.pos < s.end {
			return int(s.buf[s.pos])
		}
		if !s.fill() {
			return -1
		}
	}
}

// unexpected reports the byte c (or the end of the input, c < 0) where
// what was expected.
func (s *Scanner) unexpected(c int, context string) {
	if c < 0 {
		if s.err == nil {
			s.syntax("unexpected end of JSON input")
		}
		return
	}
	if s.Offset() < 4 {
		if msg := s.encodingHint(); msg != "" {
			s.fail(Syntax, msg+" (at byte 0)")
			return
		}
	}
	s.syntax("invalid character %s %s", quoteChar(byte(c)), context)
}

// encodingHint names a byte order mark or a UTF-16 or UTF-32 encoding at
// the start of the input.
func (s *Scanner) encodingHint() string {
	h := s.head[:s.headN]
	has := func(p ...byte) bool { return len(h) >= len(p) && string(h[:len(p)]) == string(p) }
	switch {
	case has(0xEF, 0xBB, 0xBF):
		return "the input starts with a UTF-8 byte order mark (EF BB BF); JSON text must be UTF-8 without one"
	case has(0xFF, 0xFE, 0, 0), has(0, 0, 0xFE, 0xFF):
		return "the input is UTF-32 text (it starts with a byte order mark); JSON text must be UTF-8"
	case has(0xFF, 0xFE):
		return "the input is UTF-16 little-endian text (byte order mark FF FE); JSON text must be UTF-8"
	case has(0xFE, 0xFF):
		return "the input is UTF-16 big-endian text (byte order mark FE FF); JSON text must be UTF-8"
	case len(h) >= 2 && h[0] != 0 && h[0] < 0x80 && h[1] == 0:
		return "the input looks like UTF-16 little-endian text (a NUL byte after each ASCII character); JSON text must be UTF-8"
	case len(h) >= 2 && h[0] == 0 && h[1] != 0 && h[1] < 0x80:
		return "the input looks like UTF-16 big-endian text (a NUL byte before each ASCII character); JSON text must be UTF-8"
	}
	return ""
}

// quoteChar formats a byte for a message, as encoding/json does.
func quoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	if c >= 0x80 {
		return fmt.Sprintf("byte 0x%02x", c)
	}
	q := strconv.Quote(string(rune(c)))
	return "'" + q[1:len(q)-1] + "'"
}

// Peek returns the kind of the next value without reading it: 'o' object,
// 'a' array, 's' string, 'n' number, 'b' boolean, 'z' null; 0 on an error
// (a byte that begins no value, the end of the input, nesting too deep).
func (s *Scanner) Peek() byte {
	if len(s.stack) > s.maxDepth {
		s.fail(Syntax, fmt.Sprintf("nesting deeper than %d", s.maxDepth))
		return 0
	}
	c := s.next()
	switch {
	case c == '{':
		return 'o'
	case c == '[':
		return 'a'
	case c == '"':
		return 's'
	case c == '-' || c >= '0' && c <= '9':
		return 'n'
	case c == 't' || c == 'f':
		return 'b'
	case c == 'n':
		return 'z'
	}
	s.unexpected(c, "looking for beginning of value")
	return 0
}

// Object reads the '{' of an object; read its members with [Scanner.Key].
func (s *Scanner) Object() bool {
	if s.next() != '{' {
		s.unexpected(s.next(), "looking for beginning of value")
		return false
	}
	s.pos++
	s.push(false)
	return true
}

// push opens an object or array, reusing the key storage of a frame
// popped before.
func (s *Scanner) push(array bool) {
	if n := len(s.stack); n < cap(s.stack) {
		s.stack = s.stack[:n+1]
		f := &s.stack[n]
		*f = frame{array: array, own: f.own[:0]}
		return
	}
	s.stack = append(s.stack, frame{array: array})
}

// Key reads the next key of the current object and the ':' after it, and
// returns the key; at the end of the object it reads the '}' and returns
// false. The key is owned by the scanner until the object's next key.
func (s *Scanner) Key() ([]byte, bool) {
	if s.err != nil || len(s.stack) == 0 {
		return nil, false
	}
	f := &s.stack[len(s.stack)-1]
	// Fast path: [,] "key" : with a plain key, all in the buffer.
	// b ends where the unread bytes do, so that its length bounds every
	// index below.
	if i, b := s.pos, s.buf[:s.end]; i < len(b) {
		if f.member && b[i] == ',' {
			i++
			for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
				i++
			}
		} else if f.member {
			i = len(b)
		}
		if i < len(b) && b[i] == '"' {
			// Keys are short: byte by byte (safeSpan's words cost more).
			j := i + 1
			for j < len(b) && strSafe[b[j]] {
				j++
			}
			if j+1 < len(b) && b[j] == '"' && b[j+1] == ':' {
				f.key, f.owned, f.member = b[i+1:j], false, true
				s.pos = j + 2
				return f.key, true
			}
		}
	}
	c := s.next()
	if c == '}' {
		s.pos++
		s.stack = s.stack[:len(s.stack)-1]
		return nil, false
	}
	// Until the next key is read, errors are located at the object.
	member := f.member
	f.member = false
	if member {
		if c != ',' {
			s.unexpected(c, "after object key:value pair")
			return nil, false
		}
		s.pos++
		c = s.next()
	}
	if c != '"' {
		s.unexpected(c, "looking for beginning of object key string")
		return nil, false
	}
	k := s.str1()
	if s.err != nil {
		return nil, false
	}
	f = &s.stack[len(s.stack)-1]
	if s.escaped { // decoded into s.str, which the next string reuses
		f.own = append(f.own[:0], k...)
		f.key, f.owned = f.own, true
	} else {
		f.key, f.owned = k, false
	}
	f.member = true
	if c := s.next(); c != ':' {
		s.unexpected(c, "after object key")
		return nil, false
	}
	s.pos++
	return f.key, true
}

// Member returns the key of the innermost object being read, if one was
// read (even when what follows it failed), or nil.
func (s *Scanner) Member() []byte {
	if n := len(s.stack); n > 0 && !s.stack[n-1].array && s.stack[n-1].member {
		return s.stack[n-1].key
	}
	return nil
}

// Array reads the '[' of an array; read its elements with [Scanner.Elem].
func (s *Scanner) Array() bool {
	if s.next() != '[' {
		s.unexpected(s.next(), "looking for beginning of value")
		return false
	}
	s.pos++
	s.push(true)
	return true
}

// Elem reports whether the current array has another element (reading the
// ',' before it); at the end of the array it reads the ']' and returns
// false.
func (s *Scanner) Elem() bool {
	if s.err != nil || len(s.stack) == 0 {
		return false
	}
	f := &s.stack[len(s.stack)-1]
	c := s.next()
	if c == ']' {
		s.pos++
		s.stack = s.stack[:len(s.stack)-1]
		return false
	}
	if !f.member {
		if c < 0 {
			s.unexpected(c, "")
			return false
		}
		f.member, f.index = true, 0
		return true
	}
	if c < 0 {
		f.member = false // located at the array
		s.unexpected(c, "")
		return false
	}
	f.index++ // located at the next element
	if c != ',' {
		s.unexpected(c, "after array element")
		return false
	}
	s.pos++
	return true
}

// Index is the index of the current array element.
func (s *Scanner) Index() int { return s.stack[len(s.stack)-1].index }

// strSafe marks the bytes a string holds as they are: printable ASCII
// other than '"' and '\'.
var strSafe = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// safeSpan returns the index of the first byte of b from i on that a
// string does not hold as it is (see strSafe), or len(b). It tests eight
// bytes at a time; in the first word that holds such a byte, the lowest
// lane flagged is that byte (a borrow between lanes only flags lanes above
// a byte that is flagged itself), and the bytes after the last whole word
// are tested one by one.
func safeSpan(b []byte, i int) int {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		q := x ^ ('"' * ones)  // a zero byte where x has '"'
		e := x ^ ('\\' * ones) // ... '\\'
		// A byte below 0x20, a zero byte of q or e, or a byte of x with
		// its high bit set: exact tests of "some byte is", per word.
		bad := ((x-0x20*ones)&^x | (q-ones)&^q | (e-ones)&^e | x) & highs
		if bad != 0 {
			return i + bits.TrailingZeros64(bad)>>3
		}
	}
	for i < len(b) && strSafe[b[i]] {
		i++
	}
	return i
}

// SpaceSpan returns the index of the first byte of b from i on that is
// not JSON white space (' ', '\t', '\n', '\r'), or len(b). Runs of spaces
// are measured eight bytes at a time (the lowest byte of a word that is
// not ' '), and a newline with up to seven spaces of indentation after
// it, as indented documents put before every member and element, takes
// one step without a loop.
func SpaceSpan(b []byte, i int) int {
	const spaces = 0x2020202020202020
	if i+9 <= len(b) && b[i] == '\n' {
		if x := binary.LittleEndian.Uint64(b[i+1:]) ^ spaces; x != 0 {
			if j := i + 1 + bits.TrailingZeros64(x)>>3; b[j] > ' ' {
				return j
			}
		}
	}
	for i+8 <= len(b) {
		switch b[i] {
		case ' ':
		case '\n', '\r', '\t':
			i++
			continue
		default:
			return i
		}
		x := binary.LittleEndian.Uint64(b[i:]) ^ spaces
		if x == 0 {
			i += 8
			continue
		}
		if i += bits.TrailingZeros64(x) >> 3; b[i] > ' ' {
			return i
		}
	}
	return spaceTail(b, i)
}

// spaceTail is SpaceSpan byte by byte.
func spaceTail(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// PlainSpan returns the index of the first byte of b from i on that a JSON
// string does not hold as it is ('"', '\\', a control character or a byte
// of a multi-byte UTF-8 sequence), or len(b): a string whose closing quote
// is at PlainSpan(b, start) is plain, its bytes its value.
func PlainSpan(b []byte, i int) int { return safeSpan(b, i) }

// Str reads a string value and returns its decoded bytes.
func (s *Scanner) Str() []byte {
	if c := s.next(); c != '"' {
		s.unexpected(c, "looking for beginning of value")
		return nil
	}
	return s.str1()
}

// str1 reads the string whose '"' is at s.pos.
func (s *Scanner) str1() []byte {
	s.tok = s.pos
	s.pos++
	escaped := false
	for {
		i := safeSpan(s.buf[:s.end], s.pos)
		if escaped {
			s.str = append(s.str, s.buf[s.pos:i]...)
		}
		s.pos = i
		if i == s.end {
			if !s.fill() {
				s.unexpected(-1, "")
				s.tok = -1
				return nil
			}
			continue
		}
		switch c := s.buf[i]; {
		case c == '"':
			s.pos++
			start := s.tok
			s.tok = -1
			s.escaped = escaped
			if escaped {
				return s.str
			}
			return s.buf[start+1 : i]
		case c == '\\':
			if !escaped {
				escaped = true
				s.str = append(s.str[:0], s.buf[s.tok+1:i]...)
			}
			if !s.escape() {
				s.tok = -1
				return nil
			}
		case c >= utf8.RuneSelf:
			if !s.need(utf8.UTFMax) && s.err != nil {
				s.tok = -1
				return nil
			}
			r, n := utf8.DecodeRune(s.buf[s.pos:s.end])
			if r == utf8.RuneError && n <= 1 {
				s.syntax("invalid UTF-8 (byte 0x%02x) in a string", c)
				s.tok = -1
				return nil
			}
			if escaped {
				s.str = append(s.str, s.buf[s.pos:s.pos+n]...)
			}
			s.pos += n
		default: // a control character
			s.syntax("invalid character %s in string literal", quoteChar(c))
			s.tok = -1
			return nil
		}
	}
}

// need makes n bytes from s.pos available and reports whether they are.
func (s *Scanner) need(n int) bool {
	for s.end-s.pos < n {
		if !s.fill() {
			return false
		}
	}
	return true
}

// escape decodes the escape sequence at s.pos into s.str.
func (s *Scanner) escape() bool {
	if !s.need(2) {
		s.unexpected(-1, "")
		return false
	}
	c := s.buf[s.pos+1]
	switch c {
	case '"', '\\', '/':
		s.str = append(s.str, c)
	case 'b':
		s.str = append(s.str, '\b')
	case 'f':
		s.str = append(s.str, '\f')
	case 'n':
		s.str = append(s.str, '\n')
	case 'r':
		s.str = append(s.str, '\r')
	case 't':
		s.str = append(s.str, '\t')
	case 'u':
		r, ok := s.hex4(2)
		if !ok {
			return false
		}
		width := 6
		if utf16.IsSurrogate(r) {
			r2 := rune(-1)
			if r < 0xDC00 && s.need(12) && s.buf[s.pos+6] == '\\' && s.buf[s.pos+7] == 'u' {
				if r2, ok = s.hex4(8); !ok {
					return false
				}
			}
			if s.err != nil {
				return false
			}
			d := utf16.DecodeRune(r, r2)
			if d == utf8.RuneError {
				s.syntax(`lone UTF-16 surrogate \u%04x in a string`, r)
				return false
			}
			r, width = d, 12
		}
		s.str = utf8.AppendRune(s.str, r)
		s.pos += width
		return true
	default:
		s.pos++
		s.syntax("invalid character %s in string escape code", quoteChar(c))
		return false
	}
	s.pos += 2
	return true
}

// hex4 decodes the four hex digits at buf[s.pos+rel:].
func (s *Scanner) hex4(rel int) (rune, bool) {
	if !s.need(rel + 4) {
		for k := rel; k < s.end-s.pos; k++ {
			if !isHex(s.buf[s.pos+k]) {
				s.pos += k
				s.syntax(`invalid character %s in \u hexadecimal character escape`, quoteChar(s.buf[s.pos]))
				return 0, false
			}
		}
		s.unexpected(-1, "")
		return 0, false
	}
	var r rune
	for k := rel; k < rel+4; k++ {
		c := s.buf[s.pos+k]
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			s.pos += k
			s.syntax(`invalid character %s in \u hexadecimal character escape`, quoteChar(c))
			return 0, false
		}
	}
	return r, true
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// SmallInt reads a number written as a non-negative integer of at most 18
// digits, with no sign, fraction or exponent, that lies in the buffer: the
// value Peek, Num and [Int64] would read, and true. Otherwise it consumes
// nothing and reports false, and the caller reads the value the general
// way.
func (s *Scanner) SmallInt() (int64, bool) {
	if s.err != nil || len(s.stack) > s.maxDepth {
		return 0, false
	}
	if c := s.next(); c < '0' || c > '9' {
		return 0, false
	}
	i, b := s.pos, s.buf
	j := i
	var v int64
	for j < s.end && b[j] >= '0' && b[j] <= '9' {
		v = v*10 + int64(b[j]-'0')
		j++
	}
	if j >= s.end || j-i > 18 || b[i] == '0' && j > i+1 || b[j] == '.' || b[j] == 'e' || b[j] == 'E' {
		return 0, false
	}
	s.pos = j
	return v, true
}

// Num reads a number and returns its literal text.
func (s *Scanner) Num() []byte {
	c := s.next()
	if c != '-' && (c < '0' || c > '9') {
		s.unexpected(c, "looking for beginning of value")
		return nil
	}
	// Fast path: an integer in the buffer, followed by something else.
	i, b := s.pos, s.buf
	if c == '-' {
		i++
	}
	j := i
	for j < s.end && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	if j < s.end && j > i && (b[i] != '0' || j == i+1) && b[j] != '.' && b[j] != 'e' && b[j] != 'E' {
		start := s.pos
		s.pos = j
		return b[start:j]
	}
	return s.numSlow()
}

func (s *Scanner) numSlow() []byte {
	s.tok = s.pos
	// at returns the byte at s.pos, or -1 at the end of the input.
	at := func() int {
		if s.pos == s.end && !s.fill() {
			return -1
		}
		return int(s.buf[s.pos])
	}
	digits := func() bool {
		c := at()
		if c < '0' || c > '9' {
			s.unexpected(c, "in numeric literal")
			return false
		}
		for c >= '0' && c <= '9' {
			s.pos++
			c = at()
		}
		return true
	}
	ok := true
	if at() == '-' {
		s.pos++
	}
	if at() == '0' {
		s.pos++
	} else {
		ok = digits()
	}
	if ok && at() == '.' {
		s.pos++
		ok = digits()
	}
	if c := at(); ok && (c == 'e' || c == 'E') {
		s.pos++
		if c := at(); c == '+' || c == '-' {
			s.pos++
		}
		ok = digits()
	}
	start := s.tok
	s.tok = -1
	if !ok || s.err != nil {
		if s.err == nil {
			s.unexpected(-1, "")
		}
		return nil
	}
	return s.buf[start:s.pos]
}

// Bool reads true or false.
func (s *Scanner) Bool() bool {
	switch s.next() {
	case 't':
		s.literal("true")
		return s.err == nil
	case 'f':
		s.literal("false")
	default:
		s.unexpected(s.next(), "looking for beginning of value")
	}
	return false
}

// Null reads null.
func (s *Scanner) Null() {
	if c := s.next(); c != 'n' {
		s.unexpected(c, "looking for beginning of value")
		return
	}
	s.literal("null")
}

func (s *Scanner) literal(lit string) {
	for k := 0; k < len(lit); k++ {
		if s.pos == s.end && !s.fill() {
			s.unexpected(-1, "")
			return
		}
		if c := s.buf[s.pos]; c != lit[k] {
			s.syntax("invalid character %s in literal %s (expecting %s)", quoteChar(c), lit, quoteChar(lit[k]))
			return
		}
		s.pos++
	}
}

// End checks that nothing but white space follows the value read.
func (s *Scanner) End() {
	if s.err != nil {
		return
	}
	if c := s.next(); c >= 0 {
		s.fail(Syntax, fmt.Sprintf("trailing data after the JSON value (at byte %d)", s.Offset()))
	}
}

// Mark starts keeping the input from the next value on, so that
// [Scanner.Rewind] can read it again and [Scanner.Marked] return it. Marks
// do not nest.
func (s *Scanner) Mark() {
	s.next()
	s.keep = s.pos
	s.markDepth = len(s.stack)
	if s.markDepth > 0 {
		f := s.stack[s.markDepth-1]
		s.markFrame = frame{array: f.array, member: f.member, index: f.index, key: append(s.markFrame.key[:0], f.key...)}
	}
}

// Rewind goes back to the mark, forgetting any error since (an I/O or
// limit error is kept: the input is gone).
func (s *Scanner) Rewind() {
	if s.keep < 0 {
		return
	}
	if s.err != nil && (s.err.Kind == IO || s.err.Kind == Limit) {
		return
	}
	s.err = nil
	s.pos = s.keep
	s.stack = s.stack[:s.markDepth]
	if s.markDepth > 0 {
		f := &s.stack[s.markDepth-1]
		f.array, f.member, f.index = s.markFrame.array, s.markFrame.member, s.markFrame.index
		f.own = append(f.own[:0], s.markFrame.key...)
		f.key, f.owned = f.own, true
	}
}

// Marked returns the input from the mark to the current position.
func (s *Scanner) Marked() []byte {
	if s.keep < 0 {
		return nil
	}
	return s.buf[s.keep:s.pos]
}

// Buffered returns the unread input that is in the buffer: from bytes, the
// rest of the document (within the limit); streamed, what the reads so far
// brought. A reader may parse a value from it by hand, with the checks the
// scanner makes, and then [Scanner.Advance] past it. It is valid until the
// next call.
func (s *Scanner) Buffered() []byte {
	if s.err != nil {
		return nil
	}
	return s.buf[s.pos:s.end]
}

// Advance moves past the first n bytes of [Scanner.Buffered], which the
// caller has read as one whole value (with white space around it) nested
// at most maxDepth deep, as the scanner would have.
func (s *Scanner) Advance(n int) { s.pos += n }

// Release drops the mark.
func (s *Scanner) Release() { s.keep = -1 }

// Value reads one value into a tree, rejecting duplicate keys.
func (s *Scanner) Value() *Node { return s.value(true) }

// Skip reads one value and drops it, with the checks of [Scanner.Value].
func (s *Scanner) Skip() { s.value(false) }

// Members reads one value as [Scanner.Value] does, except that of an
// object it keeps only the members whose key is one of keys, in their
// order, and reads the others as [Scanner.Skip] does: every check is
// made, the tree is built only where it is used. A value that is not an
// object is kept whole.
func (s *Scanner) Members(keys ...string) *Node {
	if s.Peek() != 'o' {
		return s.value(true)
	}
	return s.object(true, true, keys)
}

// object reads an object value: with build, into a node that holds every
// member, or with filter only those whose key is in only (the others are
// read as Skip reads them).
func (s *Scanner) object(build, filter bool, only []string) *Node {
	s.Object()
	var n *Node
	if build {
		n = &Node{Kind: 'o'}
	}
	set := s.keys.open()
	for {
		k, ok := s.Key()
		if !ok {
			break
		}
		if s.keys.add(&set, k) {
			s.Duplicate(k)
			return nil
		}
		// The key is copied before the value is read: k may not outlast it.
		key, keep := "", build
		switch {
		case !build:
		case !filter:
			key = string(k)
		default:
			keep = false
			for _, w := range only {
				if string(k) == w {
					key, keep = w, true
					break
				}
			}
		}
		v := s.value(keep)
		if s.err != nil {
			return nil
		}
		if keep {
			n.Keys = append(n.Keys, key)
			n.Vals = append(n.Vals, v)
		}
	}
	s.keys.close(set)
	if s.err != nil {
		return nil
	}
	return n
}

func (s *Scanner) value(build bool) *Node {
	switch s.Peek() {
	case 'o':
		return s.object(build, false, nil)
	case 'a':
		s.Array()
		var n *Node
		if build {
			n = &Node{Kind: 'a'}
		}
		for s.Elem() {
			v := s.value(build)
			if s.err != nil {
				return nil
			}
			if build {
				n.Vals = append(n.Vals, v)
			}
		}
		if s.err != nil {
			return nil
		}
		return n
	case 's':
		v := s.Str()
		if s.err != nil || !build {
			return nil
		}
		return &Node{Kind: 's', Str: string(v)}
	case 'n':
		v := s.Num()
		if s.err != nil || !build {
			return nil
		}
		return &Node{Kind: 'n', Str: string(v)}
	case 'b':
		v := s.Bool()
		if s.err != nil || !build {
			return nil
		}
		return &Node{Kind: 'b', B: v}
	case 'z':
		s.Null()
		if s.err != nil || !build {
			return nil
		}
		return &Node{Kind: 'z'}
	}
	return nil
}

// keySets finds duplicate keys of the objects being read, all in one
// byte arena: by a scan while an object is small, by a map beyond.
type keySets struct {
	arena []byte
	ends  []int // end of each key in arena
}

// keySet is one object's keys: ends[first:] in keySets.
type keySet struct {
	first, start int
	big          map[string]bool
}

func (ks *keySets) open() keySet { return keySet{first: len(ks.ends), start: len(ks.arena)} }

func (ks *keySets) close(k keySet) {
	ks.ends = ks.ends[:k.first]
	ks.arena = ks.arena[:k.start]
}

// add adds key to the object's set and reports whether it was there.
func (ks *keySets) add(k *keySet, key []byte) (dup bool) {
	if k.big != nil {
		dup = k.big[string(key)]
		k.big[string(key)] = true
		return dup
	}
	from := k.start
	for _, end := range ks.ends[k.first:] {
		if string(ks.arena[from:end]) == string(key) {
			return true
		}
		from = end
	}
	if n := len(ks.ends) - k.first; n >= 32 {
		k.big = make(map[string]bool, 2*n)
		from := k.start
		for _, end := range ks.ends[k.first:] {
			k.big[string(ks.arena[from:end])] = true
			from = end
		}
		k.big[string(key)] = true
		return false
	}
	ks.arena = append(ks.arena, key...)
	ks.ends = append(ks.ends, len(ks.arena))
	return false
}
