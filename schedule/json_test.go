package schedule_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"github.com/megaproof/megaproof/schedule"
)

// maxExtent mirrors the package's bound on byte quantities (2^62).
const maxExtent = 1 << 62

// nameChars are the characters generated names draw from: JSON-special,
// HTML-escaped and non-ASCII ones included, so the encoder's escaping is
// exercised.
var nameChars = []rune("abcxyz_-.0123456789 \"\\/<>&\u00e9\u4e16\U0001F600\t")

// genName returns a generator of names unique by construction: a prefix and
// index, then an arbitrary suffix.
func genName(t *rapid.T, prefix string, i int) string {
	suffix := rapid.SliceOfN(rapid.SampledFrom(nameChars), 0, 6).Draw(t, "suffix")
	return fmt.Sprintf("%s%d%s", prefix, i, string(suffix))
}

// genUint draws a uint64 in [lo, hi], biased toward both ends.
func genUint(t *rapid.T, label string, lo, hi uint64) uint64 {
	return rapid.OneOf(
		rapid.Just(lo),
		rapid.Just(hi),
		rapid.Uint64Range(lo, min(hi, lo+64)),
		rapid.Uint64Range(lo, hi),
	).Draw(t, label)
}

// genProgram generates a valid program that uses every field of the model:
// arenas with aliasing buffers, all buffer kinds, 1-D and 2-D accesses,
// negative offsets, counters with init and width 64, barriers, semaphores,
// all step kinds with relaxed orders and scopes, params, and pinned and
// dynamic tasks.
var genProgram = rapid.Custom(func(t *rapid.T) *schedule.Program {
	p := &schedule.Program{}
	if rapid.Bool().Draw(t, "named") {
		p.Name = genName(t, "prog", 0)
	}
	p.Launch = schedule.Launch{
		SMs:         rapid.IntRange(1, 200).Draw(t, "sms"),
		PerSM:       rapid.IntRange(1, 4).Draw(t, "per_sm"),
		Workers:     rapid.IntRange(1, 6).Draw(t, "workers"),
		Cooperative: rapid.Bool().Draw(t, "cooperative"),
	}
	if rapid.Bool().Draw(t, "has_target") {
		p.Launch.Target = rapid.SampledFrom([]string{"H200", "B200", "RTX 4090", "A100-80GB"}).Draw(t, "target")
	}
	for i := range rapid.IntRange(0, 2).Draw(t, "arenas") {
		p.Arenas = append(p.Arenas, schedule.Arena{Name: genName(t, "arena", i), Size: genUint(t, "arena_size", 1, maxExtent)})
	}
	kinds := []schedule.BufferKind{schedule.KindInput, schedule.KindWeight, schedule.KindOutput, schedule.KindScratch, schedule.KindState}
	for i := range rapid.IntRange(1, 4).Draw(t, "buffers") {
		b := schedule.Buffer{Name: genName(t, "buf", i), Kind: rapid.SampledFrom(kinds).Draw(t, "kind"), Arena: schedule.NoArena}
		if len(p.Arenas) > 0 && rapid.Bool().Draw(t, "in_arena") {
			a := rapid.IntRange(0, len(p.Arenas)-1).Draw(t, "arena")
			size := p.Arenas[a].Size
			b.Arena = int32(a)
			b.Offset = genUint(t, "offset", 0, size-1)
			b.Size = genUint(t, "size", 1, size-b.Offset)
		} else {
			b.Size = genUint(t, "size", 1, maxExtent)
		}
		p.Buffers = append(p.Buffers, b)
	}
	for i := range rapid.IntRange(0, 3).Draw(t, "counters") {
		c := schedule.Counter{Name: genName(t, "ctr", i), Width: rapid.SampledFrom([]uint8{32, 64}).Draw(t, "width")}
		c.Init = genUint(t, "init", 0, c.Max())
		p.Counters = append(p.Counters, c)
	}
	for i := range rapid.IntRange(0, 2).Draw(t, "barriers") {
		p.Barriers = append(p.Barriers, schedule.Barrier{Name: genName(t, "bar", i), Parties: rapid.IntRange(1, 8).Draw(t, "parties")})
	}
	for i := range rapid.IntRange(0, 2).Draw(t, "semaphores") {
		p.Semaphores = append(p.Semaphores, schedule.Semaphore{Name: genName(t, "sem", i), Tokens: genUint(t, "tokens", 0, maxExtent)})
	}
	scopes := []schedule.Scope{schedule.ScopeGPU, schedule.ScopeCTA, schedule.ScopeSys}
	// Per semaphore: initial tokens plus releases so far, kept within
	// schedule.MaxTokens as validation requires.
	semTotal := make([]uint64, len(p.Semaphores))
	for i, sm := range p.Semaphores {
		semTotal[i] = sm.Tokens
	}
	genStep := func(t *rapid.T) schedule.Step {
		var avail []schedule.StepKind
		if len(p.Counters) > 0 {
			avail = append(avail, schedule.Wait, schedule.Signal)
		}
		if len(p.Barriers) > 0 {
			avail = append(avail, schedule.Sync, schedule.Arrive)
		}
		if len(p.Semaphores) > 0 {
			avail = append(avail, schedule.Acquire, schedule.Release)
		}
		avail = append(avail, schedule.Fence)
		s := schedule.Step{Kind: rapid.SampledFrom(avail).Draw(t, "step_kind")}
		switch s.Kind {
		case schedule.Wait:
			s.Object = int32(rapid.IntRange(0, len(p.Counters)-1).Draw(t, "counter"))
			s.Value = genUint(t, "ge", 1, p.Counters[s.Object].Max())
			s.Relaxed = rapid.Bool().Draw(t, "relaxed")
			s.Scope = rapid.SampledFrom(scopes).Draw(t, "scope")
		case schedule.Signal:
			s.Object = int32(rapid.IntRange(0, len(p.Counters)-1).Draw(t, "counter"))
			s.Value = genUint(t, "add", 1, maxExtent)
			s.Relaxed = rapid.Bool().Draw(t, "relaxed")
			s.Scope = rapid.SampledFrom(scopes).Draw(t, "scope")
		case schedule.Sync, schedule.Arrive:
			s.Object = int32(rapid.IntRange(0, len(p.Barriers)-1).Draw(t, "barrier"))
		case schedule.Acquire, schedule.Release:
			s.Object = int32(rapid.IntRange(0, len(p.Semaphores)-1).Draw(t, "semaphore"))
			room := min(uint64(maxExtent), schedule.MaxTokens-semTotal[s.Object])
			if s.Kind == schedule.Release && room == 0 {
				s.Kind = schedule.Acquire
			}
			if s.Kind == schedule.Release {
				s.Value = genUint(t, "n", 1, room)
				semTotal[s.Object] += s.Value
			} else {
				s.Value = genUint(t, "n", 1, maxExtent)
			}
			s.Scope = rapid.SampledFrom(scopes).Draw(t, "scope")
		case schedule.Fence:
			s.Scope = rapid.SampledFrom(scopes).Draw(t, "scope")
		}
		return s
	}
	genAccess := func(t *rapid.T) schedule.Access {
		a := schedule.Access{Buffer: int32(rapid.IntRange(0, len(p.Buffers)-1).Draw(t, "buffer"))}
		a.Offset = rapid.OneOf(rapid.Int64Range(-64, 4096), rapid.Int64Range(-maxExtent, maxExtent)).Draw(t, "offset")
		a.Length = genUint(t, "length", 1, 1<<20)
		switch rapid.IntRange(0, 2).Draw(t, "shape") {
		case 0: // 1-D
		case 1: // one row, any stride
			a.Rows = 1
			a.Stride = genUint(t, "stride", 0, maxExtent)
		case 2: // 2-D tile
			a.Rows = genUint(t, "rows", 2, 64)
			a.Stride = genUint(t, "stride", 1, 1<<20)
		}
		return a
	}
	for i := range rapid.IntRange(0, 6).Draw(t, "tasks") {
		tk := schedule.Task{Name: genName(t, "task", i), Worker: schedule.Dynamic}
		if rapid.Bool().Draw(t, "has_op") {
			tk.Op = rapid.SampledFrom([]string{"gemv", "rmsnorm", "attention", "kv_append", "silu_mul"}).Draw(t, "op")
		}
		if rapid.Bool().Draw(t, "has_params") {
			for k, v := range rapid.MapOfN(rapid.StringMatching(`[a-z_]{1,8}`), rapid.Int64(), 1, 4).Draw(t, "params") {
				tk.Params.Set(k, v)
			}
		}
		if rapid.Bool().Draw(t, "pinned") {
			tk.Worker = int32(rapid.IntRange(0, p.Launch.Workers-1).Draw(t, "worker"))
		}
		tk.Before = rapid.SliceOfN(rapid.Custom(genStep), 0, 4).Draw(t, "before")
		tk.Reads = rapid.SliceOfN(rapid.Custom(genAccess), 0, 3).Draw(t, "reads")
		tk.Writes = rapid.SliceOfN(rapid.Custom(genAccess), 0, 3).Draw(t, "writes")
		tk.After = rapid.SliceOfN(rapid.Custom(genStep), 0, 4).Draw(t, "after")
		p.Tasks = append(p.Tasks, tk)
	}
	return p
})

// programDiff compares programs, treating nil and empty slices and maps alike.
func programDiff(want, got *schedule.Program) string {
	return cmp.Diff(want, got, cmpopts.EquateEmpty())
}

func TestRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := genProgram.Draw(t, "program")
		if err := p.Validate(); err != nil {
			t.Fatalf("generator produced an invalid program: %v", err)
		}
		enc1, err := schedule.Marshal(p)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		q, err := schedule.Unmarshal(enc1)
		if err != nil {
			t.Fatalf("Unmarshal of canonical form: %v\n%s", err, enc1)
		}
		if d := programDiff(p, q); d != "" {
			t.Fatalf("decode(encode(p)) differs from p (-want +got):\n%s\n%s", d, enc1)
		}
		enc2, err := schedule.Marshal(q)
		if err != nil {
			t.Fatalf("Marshal after decode: %v", err)
		}
		if !bytes.Equal(enc1, enc2) {
			t.Fatalf("encode is not stable:\n%s\n---\n%s", enc1, enc2)
		}
	})
}

// TestEncodeDecodeReader covers the io.Reader/io.Writer entry points.
func TestEncodeDecodeReader(t *testing.T) {
	p := handoff(t, true)
	var buf bytes.Buffer
	if err := schedule.Encode(&buf, p); err != nil {
		t.Fatal(err)
	}
	q, err := schedule.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if d := programDiff(p, q); d != "" {
		t.Fatalf("round trip (-want +got):\n%s", d)
	}
}

// TestMarshalInvalid checks that Marshal refuses a malformed program with
// the validation error rather than writing it.
func TestMarshalInvalid(t *testing.T) {
	p := handoff(t, true)
	p.Tasks[0].Worker = 7
	_, err := schedule.Marshal(p)
	var se *schedule.Error
	if !errors.As(err, &se) || se.Diagnostics[0].Code != schedule.CodeWorker {
		t.Fatalf("Marshal of a task on worker 7 of 2: err = %v; want %s", err, schedule.CodeWorker)
	}
}

// oneByteReader reads one byte per call, so that every token straddles
// the reader's refills.
type oneByteReader struct{ r io.Reader }

func (o oneByteReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}

// reorder rewrites a canonical document with its top-level keys, and the
// keys of every list element, in an order drawn by t, and some integers
// written as integral floats (512 as 512.0 or 5.12e2).
func reorder(t *rapid.T, doc []byte) []byte {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(doc, &top); err != nil {
		t.Fatal(err)
	}
	keys := slices.Sorted(maps.Keys(top))
	keys = rapid.Permutation(keys).Draw(t, "top keys")
	var out bytes.Buffer
	out.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			out.WriteString(", ")
		}
		fmt.Fprintf(&out, "%q: ", k)
		var list []map[string]json.RawMessage
		if json.Unmarshal(top[k], &list) != nil {
			out.Write(top[k])
			continue
		}
		out.WriteByte('[')
		for j, el := range list {
			if j > 0 {
				out.WriteByte(',')
			}
			ek := rapid.Permutation(slices.Sorted(maps.Keys(el))).Draw(t, "element keys")
			out.WriteByte('{')
			for n, e := range ek {
				if n > 0 {
					out.WriteByte(',')
				}
				v := el[e]
				if len(v) > 0 && v[0] >= '1' && v[0] <= '9' && bytes.IndexAny(v, ".eE") < 0 && rapid.IntRange(0, 3).Draw(t, "float") == 0 {
					v = append(append([]byte(nil), v...), ".0"...)
				}
				fmt.Fprintf(&out, "%q:%s", e, v)
			}
			out.WriteByte('}')
		}
		out.WriteByte(']')
	}
	out.WriteByte('}')
	return out.Bytes()
}

// TestReaderAgainstTree requires the one-pass reader, from bytes and
// streamed one byte at a time, to give exactly the program or the
// diagnostics of the reference tree reader: on generated programs with
// their keys reordered (lists before the lists they name: elements read
// at the end) and integers written as integral floats, and on those
// documents with one byte changed, dropped or inserted.
func TestReaderAgainstTree(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := genProgram.Draw(t, "program")
		enc, err := schedule.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		doc := reorder(t, enc)
		got, err := schedule.Unmarshal(doc)
		if err != nil {
			t.Fatalf("reordered document does not decode: %v\n%s", err, doc)
		}
		if d := programDiff(p, got); d != "" {
			t.Fatalf("reordered document decodes to another program (-want +got):\n%s", d)
		}
		if rapid.Bool().Draw(t, "corrupt") {
			at := rapid.IntRange(0, len(doc)-1).Draw(t, "at")
			switch rapid.IntRange(0, 2).Draw(t, "edit") {
			case 0:
				doc = slices.Delete(slices.Clone(doc), at, at+1)
			case 1:
				doc = slices.Insert(slices.Clone(doc), at, rapid.SampledFrom([]byte(`{}[],:"0-.e\ x`)).Draw(t, "byte"))
			case 2:
				doc = slices.Clone(doc)
				doc[at] = rapid.SampledFrom([]byte(`{}[],:"0-.e\ x`)).Draw(t, "byte")
			}
		}
		p1, e1 := schedule.Unmarshal(doc)
		p2, e2 := schedule.UnmarshalTree(doc)
		p3, e3 := schedule.DecodeLimit(oneByteReader{bytes.NewReader(doc)}, 0)
		for _, other := range []struct {
			name string
			p    *schedule.Program
			err  error
		}{{"reference", p2, e2}, {"streaming", p3, e3}} {
			if !reflect.DeepEqual(e1, other.err) || (e1 == nil && !reflect.DeepEqual(p1, other.p)) {
				t.Fatalf("one-pass and %s readers differ:\n%v\n%v\n%s", other.name, e1, other.err, doc)
			}
		}
	})
}

// TestDecodeStrict covers what the readers reject as malformed bytes, and
// the integral floats they accept.
func TestDecodeStrict(t *testing.T) {
	const ok = `{"format":"megaproof/v1","launch":{"sms":1,"workers":1},"buffers":[{"name":"b","kind":"input","size":512.0}],"tasks":[{"name":"t","worker":0e3,"reads":[{"buffer":"b","length":5.12e2}]}]}`
	p, err := schedule.Unmarshal([]byte(ok))
	if err != nil {
		t.Fatalf("integral floats: %v", err)
	}
	if p.Buffers[0].Size != 512 || p.Tasks[0].Reads[0].Length != 512 || p.Tasks[0].Worker != 0 {
		t.Fatalf("integral floats read as %+v", p)
	}
	for _, c := range []struct {
		name, doc, code, path, msg string
	}{
		{"fraction", strings.Replace(ok, "512.0", "512.5", 1), schedule.CodeType, "$.buffers[0].size", "want an integer, have 512.5"},
		{"huge float", strings.Replace(ok, "512.0", "1.5e30", 1), schedule.CodeSize, "$.buffers[0].size", "value 1.5e30 overflows"},
		{"negative float", strings.Replace(ok, "512.0", "-2.0", 1), schedule.CodeSize, "$.buffers[0].size", "negative value -2.0"},
		{"invalid UTF-8", strings.Replace(ok, `"name":"b"`, "\"name\":\"b\xff\"", 1), schedule.CodeSyntax, "$.buffers[0].name", "invalid UTF-8 (byte 0xff) in a string (at byte 77)"},
		{"lone surrogate", strings.Replace(ok, `"name":"t"`, `"name":"\udc00"`, 1), schedule.CodeSyntax, "$.tasks[0].name", `lone UTF-16 surrogate \udc00 in a string (at byte 127)`},
		{"BOM", "\xef\xbb\xbf" + ok, schedule.CodeSyntax, "$", "the input starts with a UTF-8 byte order mark (EF BB BF); JSON text must be UTF-8 without one (at byte 0)"},
		{"UTF-16", "{\x00\"\x00f\x00", schedule.CodeSyntax, "$", "the input looks like UTF-16 little-endian text (a NUL byte after each ASCII character); JSON text must be UTF-8 (at byte 0)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := schedule.Unmarshal([]byte(c.doc))
			var se *schedule.Error
			if !errors.As(err, &se) || se.Diagnostics[0] != (schedule.Diagnostic{Code: c.code, Path: c.path, Message: c.msg}) {
				t.Fatalf("got %v\nwant %s at %s: %s", err, c.code, c.path, c.msg)
			}
		})
	}
}

// endless is an endless stream of one byte.
type endless byte

func (e endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(e)
	}
	return len(p), nil
}

// TestDecodeLimit checks the input limit of the streaming reader: a
// document within it decodes, one beyond it is invalid.limit after no more
// than the limit is read, and an endless stream that cannot be JSON stops
// at its first byte.
func TestDecodeLimit(t *testing.T) {
	doc := []byte(`{"format":"megaproof/v1","launch":{"sms":1,"workers":1}}`)
	if _, err := schedule.DecodeLimit(bytes.NewReader(doc), int64(len(doc))); err != nil {
		t.Fatalf("within the limit: %v", err)
	}
	_, err := schedule.DecodeLimit(bytes.NewReader(doc), int64(len(doc)-1))
	var se *schedule.Error
	if !errors.As(err, &se) || se.Diagnostics[0].Code != schedule.CodeLimit {
		t.Fatalf("beyond the limit: %v", err)
	}
	// An endless object: `{"a":[0,0,0,...`
	r := &countingReader{r: io.MultiReader(strings.NewReader(`{"a":[0`), &endlessList{})}
	_, err = schedule.DecodeLimit(r, 1<<20)
	if !errors.As(err, &se) || se.Diagnostics[0].Code != schedule.CodeLimit || se.Diagnostics[0].Path != "$.a[524285]" {
		t.Fatalf("endless list: %v", err)
	}
	if r.n > 1<<20+1 {
		t.Fatalf("read %d bytes of a stream limited to 1 MiB", r.n)
	}
	// /dev/zero
	r = &countingReader{r: endless(0)}
	_, err = schedule.DecodeLimit(r, schedule.DefaultMaxInput)
	if !errors.As(err, &se) || se.Diagnostics[0].Code != schedule.CodeSyntax {
		t.Fatalf("zeros: %v", err)
	}
	if r.n > 1<<20 {
		t.Fatalf("read %d bytes of zeros", r.n)
	}
}

// endlessList is an endless ",0,0,0...".
type endlessList struct{ odd bool }

func (e *endlessList) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ",0"[b2i(e.odd)]
		e.odd = !e.odd
	}
	return len(p), nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
