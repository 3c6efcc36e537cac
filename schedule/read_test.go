package schedule

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/internal/jsontree"
)

// unmarshalTree is the reference reader: it parses the whole document into
// a tree, then converts it in the fixed order of the format's parts. The
// one-pass reader must give the same program or the same diagnostics.
func unmarshalTree(data []byte) (*Program, error) {
	s := jsontree.NewScanner(data, 0, maxDepth)
	root := s.Value()
	s.End()
	if e := s.Err(); e != nil {
		return nil, fatal(e)
	}
	var ds jsontree.Diags
	p := &Program{}
	c := conv{ds: &ds, p: p}
	top := c.top(root)
	if top == nil || !c.format(top["format"]) {
		return nil, diagError(ds.List(-1))
	}
	if n := top["name"]; n != nil {
		c.progName(n)
	}
	if n := top["launch"]; n != nil {
		c.launch(n)
	}
	for sec := range nSections {
		for i, n := range c.list(sec, top[sectionKeys[sec]]) {
			c.element(sec, n, i)
		}
		c.finish(sec)
	}
	if err := diagError(ds.List(-1)); err != nil {
		err.(*Error).Diagnostics = withValidate(err.(*Error).Diagnostics, p)
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// oneByte reads one byte per call.
type oneByte struct{ r io.Reader }

func (o oneByte) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}

// sameResult reports how two reads differ, or "".
func sameResult(p1 *Program, e1 error, p2 *Program, e2 error) string {
	if (e1 == nil) != (e2 == nil) {
		return "one read fails, the other does not"
	}
	if e1 != nil {
		if !reflect.DeepEqual(e1, e2) {
			return "different errors"
		}
		return ""
	}
	if !reflect.DeepEqual(p1, p2) {
		return "different programs"
	}
	return ""
}

// FuzzDecode checks that the one-pass reader gives exactly the program or
// the diagnostics of the reference reader, streamed one byte at a time as
// well as from bytes; that it never panics; that every error is a *Error
// of invalid.* diagnostics with paths; and that whatever decodes
// re-encodes to a canonical form that decodes to the same program and
// encodes to the same bytes.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"format":"megaproof/v1","launch":{"sms":1,"workers":1}}`))
	f.Add([]byte(`{"tasks":[{"name":"t","before":[{"wait":"c","ge":1}],"reads":[{"buffer":"b","length":1}]}],"buffers":[{"name":"b","kind":"input","size":1}],"counters":[{"name":"c","init":1}],"format":"megaproof/v1","launch":{"sms":1,"workers":1}}`))
	f.Add([]byte(`{"format":"megaproof/v1","launch":{"sms":1.0,"workers":1e0},"buffers":[{"name":"b","kind":"input","size":512.0}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Unmarshal(data)
		rp, rerr := unmarshalTree(data)
		if d := sameResult(p, err, rp, rerr); d != "" {
			t.Fatalf("one-pass and reference readers differ: %s\none-pass: %v\nreference: %v", d, err, rerr)
		}
		sp, serr := DecodeLimit(oneByte{bytes.NewReader(data)}, DefaultMaxInput)
		if d := sameResult(p, err, sp, serr); d != "" {
			t.Fatalf("streaming and bytes differ: %s\nbytes: %v\nstreaming: %v", d, err, serr)
		}
		if err != nil {
			var se *Error
			if !errors.As(err, &se) || len(se.Diagnostics) == 0 {
				t.Fatalf("Unmarshal error is not a *Error with diagnostics: %v", err)
			}
			for _, d := range se.Diagnostics {
				if !strings.HasPrefix(d.Code, "invalid.") || d.Path == "" || d.Path[0] != '$' {
					t.Fatalf("diagnostic without code or path: %+v", d)
				}
			}
			return
		}
		enc1, err := Marshal(p)
		if err != nil {
			t.Fatalf("decoded program does not encode: %v", err)
		}
		q, err := Unmarshal(enc1)
		if err != nil {
			t.Fatalf("canonical form does not decode: %v\n%s", err, enc1)
		}
		if !reflect.DeepEqual(normal(p), normal(q)) {
			t.Fatalf("decode(encode(p)) differs:\n%+v\n%+v", p, q)
		}
		enc2, err := Marshal(q)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enc1, enc2) {
			t.Fatalf("encode not stable:\n%s\n---\n%s", enc1, enc2)
		}
	})
}

// normal returns a copy of p with empty lists and maps nil.
func normal(p *Program) *Program {
	q := p.Clone()
	if len(q.Arenas) == 0 {
		q.Arenas = nil
	}
	if len(q.Buffers) == 0 {
		q.Buffers = nil
	}
	if len(q.Counters) == 0 {
		q.Counters = nil
	}
	if len(q.Barriers) == 0 {
		q.Barriers = nil
	}
	if len(q.Semaphores) == 0 {
		q.Semaphores = nil
	}
	if len(q.Tasks) == 0 {
		q.Tasks = nil
	}
	for i := range q.Tasks {
		t := &q.Tasks[i]
		if len(t.Params) == 0 {
			t.Params = nil
		}
		if len(t.Before) == 0 {
			t.Before = nil
		}
		if len(t.Reads) == 0 {
			t.Reads = nil
		}
		if len(t.Writes) == 0 {
			t.Writes = nil
		}
		if len(t.After) == 0 {
			t.After = nil
		}
	}
	return q
}

// TestNameIndex checks the name index against a map, through its small
// and table forms and a reset.
func TestNameIndex(t *testing.T) {
	var x nameIndex
	for round := range 3 {
		want := map[string]int32{}
		n := []int{5, 300, 40}[round]
		for i := range n {
			name := fmt.Sprintf("n%d", (i*7919)%(n/2+1))
			if i%5 == 0 {
				name = ""
			}
			_, had := want[name]
			if added := x.add(name, int32(i)); added == had {
				t.Fatalf("round %d: add(%q) = %v with the name there: %v", round, name, added, had)
			}
			if !had {
				want[name] = int32(i)
			}
		}
		for name, i := range want {
			if got, ok := x.find([]byte(name)); !ok || got != i {
				t.Fatalf("round %d: find(%q) = %d %v, want %d", round, name, got, ok, i)
			}
		}
		if _, ok := x.find([]byte("absent")); ok {
			t.Fatalf("round %d: found an absent name", round)
		}
		x.reset()
		if _, ok := x.find([]byte("n1")); ok {
			t.Fatal("found a name after reset")
		}
	}
}
