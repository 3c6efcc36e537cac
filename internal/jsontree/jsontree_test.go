package jsontree

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// oneByte reads one byte per call, so that every token straddles refills.
type oneByte struct{ r io.Reader }

func (o oneByte) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}

// toAny converts a tree to what encoding/json decodes (with UseNumber).
func toAny(n *Node) any {
	switch n.Kind {
	case 'o':
		m := map[string]any{}
		for i, k := range n.Keys {
			m[k] = toAny(n.Vals[i])
		}
		return m
	case 'a':
		l := []any{}
		for _, v := range n.Vals {
			l = append(l, toAny(v))
		}
		return l
	case 's':
		return n.Str
	case 'n':
		return json.Number(n.Str)
	case 'b':
		return n.B
	}
	return nil
}

// hasDuplicateKey, loneSurrogate and depth tell why a document
// encoding/json accepts may be rejected here.
func hasDuplicateKey(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	var walk func() bool
	walk = func() bool {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		switch t {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, _ := dec.Token()
				if seen[k.(string)] {
					return true
				}
				seen[k.(string)] = true
				if walk() {
					return true
				}
			}
			dec.Token()
		case json.Delim('['):
			for dec.More() {
				if walk() {
					return true
				}
			}
			dec.Token()
		}
		return false
	}
	return walk()
}

func depth(data []byte) int {
	d, most, in, esc := 0, 0, false, false
	for _, c := range data {
		switch {
		case in && esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		case !in && (c == '{' || c == '['):
			d++
			most = max(most, d)
		case !in && (c == '}' || c == ']'):
			d--
		}
	}
	return most
}

// FuzzParse requires the scanner to accept exactly the documents
// encoding/json accepts, less those with invalid UTF-8, lone surrogate
// escapes, duplicate keys or too deep nesting, and to read them to the same
// values; and streaming one byte at a time to give the same tree or error
// as reading from a byte slice.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"format":"megaproof/v1","launch":{"sms":1,"workers":1}}`,
		`{"a":"\u00e9\ud83d\ude00\n\"","b":[1,-2.5e3,true,false,null,{}],"c":[]}`,
		"{\"\xff\":\"\xfe\"}", `{"s":"\ud800"}`, `{"s":"\udc00\ud800"}`, `"\ud83d\ude00x\u0041\\"`,
		`{"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k1":0}`,
		`{"a":1,"a":2}`, ` [ [ ] , { } ] `, `"s"`, `0`, `[1,2`, `{"a" 1}`, `-`, `01`, `1.`, `1e`, `1e+`, `[tru]`, `nul`,
		"\xef\xbb\xbf{}", "{\x00}", "\"\x01\"", `"\x"`, `"\u12G4"`, "\"é\"", "\"\xe2\x82\"", "\"\xed\xa0\x80\"",
		strings.Repeat("[", 70) + strings.Repeat("]", 70),
	} {
		f.Add([]byte(s))
	}
	// The example documents of both formats and the stored fuzz inputs of
	// their readers.
	for _, pattern := range []string{"../../schedule/amk/testdata/*.json", "../../schedule/testdata/*.json", "../../schedule/testdata/fuzz/FuzzDecode/*", "../../schedule/amk/testdata/fuzz/*/*", "../../verify/testdata/codes/*.json"} {
		files, _ := filepath.Glob(pattern)
		for _, name := range files {
			b, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			if !strings.HasPrefix(string(b), "go test fuzz v1") {
				f.Add(b)
				continue
			}
			for _, line := range strings.Split(string(b), "\n")[1:] {
				if q, ok := strings.CutPrefix(line, "[]byte("); ok {
					if s, err := strconv.Unquote(strings.TrimSuffix(q, ")")); err == nil {
						f.Add([]byte(s))
					}
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const maxDepth = 64
		n, err := Parse(data, maxDepth)
		// Streaming one byte at a time reads the same.
		s := NewReader(oneByte{bytes.NewReader(data)}, 0, maxDepth)
		sn := s.Value()
		s.End()
		if !reflect.DeepEqual(err, s.Err()) || (err == nil && !reflect.DeepEqual(n, sn)) {
			t.Fatalf("streaming: %v %v; bytes: %v %v", sn, s.Err(), n, err)
		}
		valid := json.Valid(data)
		if !valid || !utf8.Valid(data) || hasDuplicateKey(data) || depth(data) > maxDepth {
			if err == nil {
				t.Fatalf("accepted %q", data)
			}
			if !valid && err.Kind != Syntax && err.Kind != Duplicate {
				t.Fatalf("syntax error reported as %v", err)
			}
			return
		}
		var want any
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if e := dec.Decode(&want); e != nil {
			t.Fatal(e)
		}
		if err != nil {
			// Only a lone surrogate escape is rejected beyond this point.
			if !strings.Contains(err.Message, "surrogate") {
				t.Fatalf("rejected %q: %v", data, err)
			}
			return
		}
		if got := toAny(n); !reflect.DeepEqual(got, want) {
			t.Fatalf("read %#v, encoding/json %#v", got, want)
		}
	})
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in        string
		path, msg string
		kind      ErrorKind
	}{
		{`{"a":[{"c":1,"c":2}]}`, "$.a[0].c", `key "c" appears twice`, Duplicate},
		{`{"a":[1,}`, "$.a[1]", "invalid character '}' looking for beginning of value (at byte 8)", Syntax},
		{strings.Repeat("[", 5) + strings.Repeat("]", 5), "$[0][0][0][0]", "nesting deeper than 3", Syntax},
		{`{} {}`, "$", "trailing data after the JSON value (at byte 3)", Syntax},
		{`{"a" 1}`, "$.a", "invalid character '1' after object key (at byte 5)", Syntax},
		{`{"a":1 "b":2}`, "$", "invalid character '\"' after object key:value pair (at byte 7)", Syntax},
		{`[1 2]`, "$[1]", "invalid character '2' after array element (at byte 3)", Syntax},
		{`{"a":tru}`, "$.a", "invalid character '}' in literal true (expecting 'e') (at byte 8)", Syntax},
		{`{"a":-x}`, "$.a", "invalid character 'x' in numeric literal (at byte 6)", Syntax},
		{`{"a":"x`, "$.a", "unexpected end of JSON input (at byte 7)", Syntax},
		{"{\"a\":\"\xff\"}", "$.a", "invalid UTF-8 (byte 0xff) in a string (at byte 6)", Syntax},
		{`["\ud800x"]`, "$[0]", `lone UTF-16 surrogate \ud800 in a string (at byte 2)`, Syntax},
		{`["\q"]`, "$[0]", `invalid character 'q' in string escape code (at byte 3)`, Syntax},
		{"[\"\t\"]", "$[0]", `invalid character '\t' in string literal (at byte 2)`, Syntax},
		{"\xef\xbb\xbf{}", "$", "the input starts with a UTF-8 byte order mark (EF BB BF); JSON text must be UTF-8 without one (at byte 0)", Syntax},
		{"\xff\xfe{\x00}\x00", "$", "the input is UTF-16 little-endian text (byte order mark FF FE); JSON text must be UTF-8 (at byte 0)", Syntax},
		{"{\x00\"\x00", "$", "the input looks like UTF-16 little-endian text (a NUL byte after each ASCII character); JSON text must be UTF-8 (at byte 0)", Syntax},
		{"\x00{\x00\"", "$", "the input looks like UTF-16 big-endian text (a NUL byte before each ASCII character); JSON text must be UTF-8 (at byte 0)", Syntax},
		{"\x00\x00\x00", "$", "invalid character '\\x00' looking for beginning of value (at byte 0)", Syntax},
	} {
		_, err := Parse([]byte(c.in), 3)
		if err == nil || err.Path != c.path || err.Message != c.msg || err.Kind != c.kind {
			t.Errorf("%q: got %+v; want %s %q kind %v", c.in, err, c.path, c.msg, c.kind)
		}
	}
	n, err := Parse([]byte(` {"k":[true,null,"s\u00e9\n",-1.5e3]} `), 64)
	want := &Node{Kind: 'o', Keys: []string{"k"}, Vals: []*Node{{Kind: 'a', Vals: []*Node{{Kind: 'b', B: true}, {Kind: 'z'}, {Kind: 's', Str: "sé\n"}, {Kind: 'n', Str: "-1.5e3"}}}}}
	if err != nil || !reflect.DeepEqual(n, want) {
		t.Fatalf("got %+v %v", n, err)
	}
}

// TestLimit checks that a scanner reads at most its limit, from bytes and
// from an endless reader alike, and says so.
func TestLimit(t *testing.T) {
	doc := []byte(`{"a":[1,2,3]}`)
	for limit := int64(1); limit <= int64(len(doc))+1; limit++ {
		a := NewScanner(doc, limit, 64)
		a.Value()
		a.End()
		b := NewReader(oneByte{bytes.NewReader(doc)}, limit, 64)
		b.Value()
		b.End()
		if !reflect.DeepEqual(a.Err(), b.Err()) {
			t.Fatalf("limit %d: bytes %v, reader %v", limit, a.Err(), b.Err())
		}
		if tooLong := limit < int64(len(doc)); tooLong != (a.Err() != nil && a.Err().Kind == Limit) {
			t.Fatalf("limit %d: %v", limit, a.Err())
		}
	}
	// An endless document stops at the limit.
	endless := io.MultiReader(strings.NewReader(`[`), repeat("1,"))
	s := NewReader(endless, 1<<20, 64)
	s.Skip()
	if e := s.Err(); e == nil || e.Kind != Limit || e.Message != "the input is longer than the limit of 1048576 bytes" {
		t.Fatalf("endless array: %v", e)
	}
	if s.Offset() > 1<<20 {
		t.Fatalf("read to %d", s.Offset())
	}
}

type repeat string

func (r repeat) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = r[i%len(r)]
	}
	return len(p), nil
}

// TestReadError checks that a failing reader's error comes back as such.
func TestReadError(t *testing.T) {
	boom := fmt.Errorf("boom")
	s := NewReader(io.MultiReader(strings.NewReader(`{"a":`), errReader{boom}), 0, 64)
	s.Skip()
	if e := s.Err(); e == nil || e.Kind != IO || e.Err != boom || e.Path != "$.a" {
		t.Fatalf("got %+v", e)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// TestMarkRewind reads an element twice, the second time into a tree.
func TestMarkRewind(t *testing.T) {
	doc := `{"tasks":[{"name":"a","x":[1,{"y":2}]},{"name":"b"}]}`
	s := NewReader(oneByte{strings.NewReader(doc)}, 0, 64)
	s.Object()
	s.Key()
	s.Array()
	var got []string
	for s.Elem() {
		s.Mark()
		s.Object()
		k, _ := s.Key()
		got = append(got, string(k)+"@"+s.Path())
		s.Rewind()
		n := s.Value()
		got = append(got, fmt.Sprintf("%s %d %s", n.Keys[0], len(n.Keys), s.Marked()))
		s.Release()
	}
	if _, more := s.Key(); more {
		t.Fatal("a second top-level key")
	}
	s.End()
	want := []string{`name@$.tasks[0].name`, `name 2 {"name":"a","x":[1,{"y":2}]}`, `name@$.tasks[1].name`, `name 1 {"name":"b"}`}
	if s.Err() != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q %v", got, s.Err())
	}
}

func TestParseInteger(t *testing.T) {
	for _, c := range []struct {
		lit string
		neg bool
		mag uint64
		st  IntStatus
	}{
		{"0", false, 0, IntOK}, {"-0", false, 0, IntOK}, {"-0.0e5", false, 0, IntOK}, {"12", false, 12, IntOK},
		{"-12", true, 12, IntOK}, {"512.0", false, 512, IntOK}, {"5.12e2", false, 512, IntOK}, {"5120e-1", false, 512, IntOK},
		{"1E3", false, 1000, IntOK}, {"1e+3", false, 1000, IntOK}, {"18446744073709551615", false, math.MaxUint64, IntOK},
		{"18446744073709551616", false, 0, IntOverflow}, {"1.8446744073709551615e19", false, math.MaxUint64, IntOK},
		{"1e20", false, 0, IntOverflow}, {"1e999999999999999", false, 0, IntOverflow}, {"-9223372036854775808", true, 1 << 63, IntOK},
		{"1.5", false, 0, IntFraction}, {"-1.5", true, 0, IntFraction}, {"1e-3", false, 0, IntFraction},
		{"0.000", false, 0, IntOK}, {"9007199254740993.0", false, 9007199254740993, IntOK}, {"1.0000000000000000000001", false, 0, IntFraction},
		{"123456789012345678901234567890", false, 0, IntOverflow}, {"1e-999999999999999", false, 0, IntFraction},
	} {
		neg, mag, st := ParseInteger([]byte(c.lit))
		if neg != c.neg || mag != c.mag || st != c.st {
			t.Errorf("ParseInteger(%s) = %v %d %v; want %v %d %v", c.lit, neg, mag, st, c.neg, c.mag, c.st)
		}
	}
}

// FuzzParseInteger compares ParseInteger with exact rational arithmetic.
func FuzzParseInteger(f *testing.F) {
	for _, s := range []string{"0", "-1", "512.0", "1e19", "1.5e1", "-9223372036854775809", "18446744073709551616"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, lit string) {
		if !json.Valid([]byte(lit)) || lit == "" || strings.TrimSpace(lit) != lit || (lit[0] != '-' && (lit[0] < '0' || lit[0] > '9')) || len(lit) > 40 {
			return
		}
		if e := strings.IndexAny(lit, "eE"); e >= 0 {
			if x, err := strconv.Atoi(strings.TrimLeft(lit[e+1:], "+-")); err != nil || x > 60 {
				return
			}
		}
		r, ok := new(big.Rat).SetString(lit)
		if !ok {
			t.Fatalf("big.Rat cannot read %s", lit)
		}
		neg, mag, st := ParseInteger([]byte(lit))
		switch {
		case !r.IsInt():
			if st != IntFraction {
				t.Fatalf("%s: %v, want a fraction", lit, st)
			}
		case new(big.Int).Abs(r.Num()).BitLen() > 64:
			if st != IntOverflow {
				t.Fatalf("%s: %v, want an overflow", lit, st)
			}
		default:
			want := r.Num()
			got := new(big.Int).SetUint64(mag)
			if neg {
				got.Neg(got)
			}
			if st != IntOK || got.Cmp(want) != 0 || (neg && mag == 0) {
				t.Fatalf("%s: %v %d %v, want %v", lit, neg, mag, st, want)
			}
		}
	})
}

// BenchmarkScan reads a document of 100,000 task-like objects: into a tree,
// skipping, and with encoding/json into any, from bytes and streamed.
func BenchmarkScan(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"format":"megaproof/v1","tasks":[`)
	for i := range 100000 {
		if i > 0 {
			sb.WriteString(",\n")
		}
		fmt.Fprintf(&sb, `{"name":"t%d","op":"gemv","worker":%d,"before":[{"wait":"c","ge":%d}],"reads":[{"buffer":"w","offset":%d,"length":64}],"writes":[{"buffer":"x","offset":%d,"length":64,"rows":4,"stride":8192}],"after":[{"signal":"c"}]}`, i, i%128, i/128*128+1, i%1024*64, i%128*64)
	}
	sb.WriteString(`]}`)
	data := []byte(sb.String())
	for _, c := range []struct {
		name string
		run  func()
	}{
		{"tree", func() { NewScanner(data, 0, 64).Value() }},
		{"skip", func() { NewScanner(data, 0, 64).Skip() }},
		{"skip-stream", func() { NewReader(bytes.NewReader(data), 0, 64).Skip() }},
		{"encoding-json-any", func() {
			var v any
			json.Unmarshal(data, &v)
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				c.run()
			}
		})
	}
}

// TestSafeSpan compares safeSpan, which tests eight bytes at a time, with
// a byte-by-byte scan, for every start and every byte value at every
// place of a word.
func TestSafeSpan(t *testing.T) {
	slow := func(b []byte, i int) int {
		for i < len(b) && strSafe[b[i]] {
			i++
		}
		return i
	}
	base := []byte(`abcdefghijklmnopqrstuvwxyz0123456789 ~!{}[]:,.`)
	for c := range 256 {
		for at := range 20 {
			b := append([]byte(nil), base[:24]...)
			b[at] = byte(c)
			for i := range len(b) + 1 {
				if got, want := safeSpan(b, i), slow(b, i); got != want {
					t.Fatalf("byte %#02x at %d, from %d: %d, want %d", c, at, i, got, want)
				}
			}
		}
	}
	// Pairs of bytes that a borrow between the lanes of a word could hide.
	for _, c := range []byte{0x00, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x5b, 0x5c, 0x5d, 0x7f, 0x80, 0xff} {
		for _, d := range []byte{0x00, 0x01, 0x1f, 0x22, 0x5c, 0x7f, 0x80, 0xff} {
			for at := range 15 {
				b := append([]byte(nil), base[:16]...)
				b[at], b[at+1] = c, d
				for i := range len(b) + 1 {
					if got, want := safeSpan(b, i), slow(b, i); got != want {
						t.Fatalf("bytes %#02x %#02x at %d, from %d: %d, want %d", c, d, at, i, got, want)
					}
				}
			}
		}
	}
}

// TestSpaceSpan compares SpaceSpan with a byte loop on every start of
// random runs of white space, indentation and other bytes, and on every
// byte value after a run of each length up to 20.
func TestSpaceSpan(t *testing.T) {
	slow := func(b []byte, i int) int {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
			i++
		}
		return i
	}
	check := func(b []byte) {
		t.Helper()
		for i := range len(b) + 1 {
			if got, want := SpaceSpan(b, i), slow(b, i); got != want {
				t.Fatalf("%q from %d: %d, want %d", b, i, got, want)
			}
		}
	}
	for c := range 256 {
		for n := range 21 {
			for _, lead := range []string{"", "\n", "\r\n", "\t", ",\n"} {
				b := append([]byte(lead), bytes.Repeat([]byte(" "), n)...)
				check(append(b, byte(c)))
				check(append(b, byte(c), '\n', ' ', ' ', 'x'))
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte(" \n\t\r\"x,")
	for range 2000 {
		b := make([]byte, rng.IntN(48))
		for j := range b {
			if rng.IntN(3) == 0 {
				b[j] = alphabet[rng.IntN(len(alphabet))]
			} else {
				b[j] = ' '
			}
		}
		check(b)
	}
}

// TestMembers checks that Members keeps the named members of an object,
// in order, and the whole of any other value, and that it reports the
// errors Value reports, in the members it drops as well.
func TestMembers(t *testing.T) {
	for _, c := range []struct {
		doc, want string
		keys      []string // the members kept, in order
	}{
		{`{"a":1,"b":{"x":[1,2]},"c":"s","a2":null}`, `{"a":1,"b":{"x":[1,2]}}`, []string{"a", "b"}},
		{`{"z":[{"q":1}],"b":true}`, `{"b":true}`, []string{"b"}},
		{`{"b":2, "a":1}`, `{"b":2,"a":1}`, []string{"b", "a"}},
		{`{}`, `{}`, nil},
		{`[1,{"a":2}]`, `[1,{"a":2}]`, nil},
		{`"a"`, `"a"`, nil},
	} {
		n := NewScanner([]byte(c.doc), 0, 64).Members("b", "a")
		dec := json.NewDecoder(strings.NewReader(c.want))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if got := toAny(n); !reflect.DeepEqual(got, want) {
			t.Errorf("Members(%s) = %v; want %v", c.doc, got, want)
		}
		if n.Kind == 'o' && !slices.Equal(n.Keys, c.keys) {
			t.Errorf("Members(%s) keeps %q; want %q", c.doc, n.Keys, c.keys)
		}
	}
	for _, doc := range []string{
		`{"a":1,"a":2}`, `{"x":1,"x":2}`, `{"x":{"y":1,"y":2}}`, `{"x":[1,}`, `{"x":tru}`, `{"x":"\q"}`,
		`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k18":18,"k19":19,"k20":20,"k21":21,"k22":22,"k23":23,"k24":24,"k25":25,"k26":26,"k27":27,"k28":28,"k29":29,"k30":30,"k31":31,"k32":32,"k33":33,"k3":34}`,
	} {
		a, b := NewScanner([]byte(doc), 0, 64), NewScanner([]byte(doc), 0, 64)
		a.Value()
		b.Members("a")
		if a.Err() == nil || b.Err() == nil || a.Err().Error() != b.Err().Error() {
			t.Errorf("%s: Members error %v; Value error %v", doc, b.Err(), a.Err())
		}
	}
}
