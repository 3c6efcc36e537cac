package amk

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/megaproof/megaproof/internal/jsontree"
	"github.com/megaproof/megaproof/schedule"
)

// unmarshalTree is the reference reader: it parses the whole document into
// a tree, then maps its parts in a fixed order. The one-pass reader must
// give the same program or the same diagnostics.
func unmarshalTree(data []byte) (*schedule.Program, error) {
	s := jsontree.NewScanner(data, 0, maxDepth)
	root := s.Value()
	s.End()
	if e := s.Err(); e != nil {
		return nil, fatal(e)
	}
	var ds jsontree.Diags
	m := newMapper(&ds)
	if m.root(root) {
		for _, key := range []string{"ir_version", "abi_version"} {
			if v := optional(root, key); v != nil {
				m.version(key, v)
			}
		}
		if v := optional(root, "meta"); v != nil {
			m.meta(v)
		}
		if v := optional(root, "target"); v != nil {
			m.target(v)
		}
		if list, ok := m.list(rBuffers, "buffers", field(root, "buffers")); ok {
			for i, n := range list {
				m.buffer(n, i)
			}
		}
		if list, ok := m.list(rCounters, "counters", field(root, "counters")); ok {
			for i, n := range list {
				m.counter(n, i)
			}
		}
		if v := optional(root, "pages"); v != nil {
			m.pages(v)
		}
		if list, ok := m.list(rTasks, "tasks", field(root, "tasks")); ok {
			for i, n := range list {
				m.task(n, i)
			}
		}
		m.launch()
	}
	if err := diagError(ds.List(-1)); err != nil {
		return nil, err
	}
	if err := m.p.Validate(); err != nil {
		return nil, err
	}
	return m.p, nil
}

// oneByte reads one byte per call.
type oneByte struct{ r io.Reader }

func (o oneByte) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}

func differ(p1 *schedule.Program, e1 error, p2 *schedule.Program, e2 error) bool {
	if (e1 == nil) != (e2 == nil) {
		return true
	}
	if e1 != nil {
		return !reflect.DeepEqual(e1, e2)
	}
	return !reflect.DeepEqual(p1, p2)
}

// FuzzUnmarshal checks that the one-pass reader gives exactly the program
// or the diagnostics of the reference reader, streamed one byte at a time
// as well as from bytes; that no input panics; that every error is a
// *schedule.Error of invalid.* diagnostics with JSON paths; and that every
// accepted program is valid and survives megaproof's JSON round trip.
// Seeds: the testdata programs, E2-shaped toys and
// testdata/fuzz/FuzzUnmarshal.
func FuzzUnmarshal(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.json")
	unsafe, _ := filepath.Glob("testdata/unsafe/*.json")
	for _, name := range append(files, unsafe...) {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add(e2Toy(1, 64, 64, 82))
	var indented bytes.Buffer
	json.Indent(&indented, e2Toy(1, 64, 32, 82), "", "  ")
	f.Add(indented.Bytes()) // as AMK writes its files
	f.Add([]byte(`{"tasks":[{"id":0,"op":"NOP","inputs":[0],"outputs":[],"out_counter":0}],"counters":[{"id":0}],"buffers":[{"id":0,"name":"b","kind":"WEIGHT","dtype":"I4","shape":[3]}]}`))
	// Keys the mapping skips, repeated or of any type; params as small
	// integers, other integer forms, floats, beyond int32 and repeated.
	const bufs = `"counters":[{"id":0,"note":"c"}],"buffers":[{"id":0,"name":"x","kind":"ACTIVATION","dtype":"F16","shape":[1,64]},{"id":1,"name":"w","kind":"WEIGHT","dtype":"F16","shape":[64,64]},{"id":2,"name":"o","kind":"ACTIVATION","dtype":"F16","shape":[1,64]}]`
	for _, buf := range []string{
		`"id":0,"name":"x","kind":"ACTIVATION","dtype":"F16","shape":[1,64],"source":null,"source":null`,
		`"id":0,"name":"x","kind":"ACTIVATION","dtype":"F16","shape":[1,64],"space":null,"source":"w.x"`,
		`"id":0,"name":"x\u0041","kind":"ACTIVATION","dtype":"F16","shape":[1,64]`,
		`"id":0,"name":"x","kind":"ACTIVATION","dtype":"F16","shape":[1,-64]`,
		`"id":0,"name":"x","kind":"ACTIVATION","dtype":"F16","shape":[1,64],"space":"SMEM","extra":1`,
		`"id":0,"name":"x","kind":"NOPE","dtype":"F16","shape":[1,64],"source":{"a":1}`,
	} {
		f.Add([]byte(`{"counters":[{"id":0}],"buffers":[{` + buf + `}],"tasks":[{"id":0,"op":"NOP","inputs":[0],"outputs":[],"out_counter":0}]}`))
	}
	// Counters with AMK's keys and others, repeated, out of range or of
	// other types.
	for _, ctr := range []string{
		`"id":0,"init":null`, `"id":0,"init":0,"note":"c"`, `"id":0,"note":{"a":1}`, `"id":0,"init":-1`,
		`"id":0,"note":1,"note":2`, `"init":5`, `"id":0,"init":4294967296`, `"id":0,"init":1.0`,
		`"id":0,"id":1`, `"id":0, "init" : 3 ,"x":1`, `"id":00`, `"id":0,"init":4294967295,"note":null`,
	} {
		f.Add([]byte(`{"counters":[{` + ctr + `}],"buffers":[{"id":0,"name":"b","kind":"WEIGHT","dtype":"F16","shape":[1]}],"tasks":[{"id":0,"op":"NOP","inputs":[0],"outputs":[],"out_counter":0}]}`))
	}
	for _, task := range []string{
		`"est_bytes":1,"est_flops":2,"label":"t","label":"u"`,
		`"est_bytes":1,"est_bytes":2`,
		`"est_flops":null,"est_flops":[1]`,
		`"label":{"a":1,"a":2}`,
		`"est_bytes":{},"label":null,"est_flops":"x"`,
		`"params":{"K":64,"N_tile":16.0,"n_off":1e1}`,
		`"params":{"K":64,"N_tile":16,"n_off":-16}`,
		`"params":{"K":64,"N_tile":16,"n_off":2147483648}`,
		`"params":{"K":64,"N_tile":16,"n_off":0,"n_off":16}`,
		`"params":{"K":64,"N_tile":16,"n_off":007}`,
		`"params":{"K":64,"N_tile":16,"n_off":1234567890123456789012}`,
		`"params":{"z":1,"K":64,"N_tile":16,"eps":1e-5,"n_off":16,"a":"s"}`,
	} {
		f.Add([]byte(`{` + bufs + `,"tasks":[{"id":0,"op":"GEMV_TILE","inputs":[0,1],"outputs":[2],"out_counter":0,"params":{"K":64,"N_tile":16,"n_off":0},` + task + `}]}`))
		f.Add([]byte(`{` + bufs + `,"tasks":[{"id":0,"op":"GEMV_TILE","inputs":[0,1],"outputs":[2],"out_counter":0,` + task + `}]}`))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		Detect(data)
		p, err := Unmarshal(data)
		rp, rerr := unmarshalTree(data)
		if differ(p, err, rp, rerr) {
			t.Fatalf("one-pass and reference readers differ\none-pass: %v\nreference: %v", err, rerr)
		}
		sp, serr := DecodeLimit(oneByte{bytes.NewReader(data)}, schedule.DefaultMaxInput)
		if differ(p, err, sp, serr) {
			t.Fatalf("streaming and bytes differ\nbytes: %v\nstreaming: %v", err, serr)
		}
		if err != nil {
			var se *schedule.Error
			if !errors.As(err, &se) || len(se.Diagnostics) == 0 {
				t.Fatalf("error %T %v is not a *schedule.Error with diagnostics", err, err)
			}
			for _, d := range se.Diagnostics {
				if !strings.HasPrefix(d.Code, "invalid.") || !strings.HasPrefix(d.Path, "$") {
					t.Fatalf("diagnostic %v: want an invalid.* code and a JSON path", d)
				}
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("accepted an invalid program: %v", err)
		}
		enc, err := schedule.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		back, err := schedule.Unmarshal(enc)
		if err != nil {
			t.Fatalf("megaproof JSON of a mapped program does not decode: %v", err)
		}
		// schedule.Unmarshal decodes an absent list as empty, not nil.
		if !cmp.Equal(p, back, cmpopts.EquateEmpty()) {
			t.Fatalf("round trip differs:\n%s", cmp.Diff(p, back, cmpopts.EquateEmpty()))
		}
	})
}

// TestFastTasks checks that the usual task and buffer objects are read by hand (the
// fast path is taken, compact or indented, from bytes or streamed), that
// what it gives is what the reference reader gives, and that a task it
// does not handle (a key AMK does not write) falls back to the scanner.
func TestFastTasks(t *testing.T) {
	doc := e2Toy(2, 128, 32, 132)
	var indented bytes.Buffer
	if err := json.Indent(&indented, doc, "", "  "); err != nil {
		t.Fatal(err)
	}
	odd := bytes.Replace(doc, []byte(`"label":`), []byte(`"note":1,"label":`), 1)
	for _, c := range []struct {
		name string
		data []byte
		slow int // tasks the scanner reads
	}{{"compact", doc, 0}, {"indented", indented.Bytes(), 0}, {"odd key", odd, 1}} {
		d := new(decoder)
		d.sc.Reset(c.data, 0, maxDepth)
		p, err := d.decode()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got, want := d.fastRead, len(p.Tasks)-c.slow; got != want || got == 0 {
			t.Errorf("%s: %d of %d tasks read by hand, want %d", c.name, got, len(p.Tasks), want)
		}
		if d.fastBufs != len(p.Buffers) {
			t.Errorf("%s: %d of %d buffers read by hand", c.name, d.fastBufs, len(p.Buffers))
		}
		if d.fastCtrs != len(p.Counters) {
			t.Errorf("%s: %d of %d counters read by hand", c.name, d.fastCtrs, len(p.Counters))
		}
		rp, rerr := unmarshalTree(c.data)
		if differ(p, err, rp, rerr) {
			t.Errorf("%s: one-pass and reference readers differ:\n%s", c.name, cmp.Diff(rp, p, cmpopts.EquateEmpty()))
		}
	}
}

// TestLearnedSeparators reads documents of several layouts in turn with
// one decoder, so that the separators learned from one layout meet the
// bytes of the next (and a document whose objects are not all written
// alike), and checks that every object is still read by hand and gives
// what the reference reader gives.
func TestLearnedSeparators(t *testing.T) {
	doc := e2Toy(2, 96, 32, 108)
	indent := func(prefix, by string) []byte {
		var b bytes.Buffer
		if err := json.Indent(&b, doc, prefix, by); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	two := indent("", "  ")
	// The fifth task, the first buffers, waits and params objects written
	// otherwise than those after them.
	mixed := bytes.Replace(two, []byte(`"op": `), []byte(`"op" :  `), 5)
	mixed = bytes.Replace(mixed, []byte(`"op" :  `), []byte(`"op": `), 4)
	mixed = bytes.Replace(mixed, []byte("\"shape\": [\n"), []byte("\"shape\":\t[\n"), 3)
	mixed = bytes.Replace(mixed, []byte(`"eps": `), []byte(`"eps":   `), 1)
	mixed = bytes.Replace(mixed, []byte(`"threshold": `), []byte(`"threshold":`), 2)
	d := new(decoder)
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"indented", two}, {"compact", doc}, {"tabs", indent("", "\t")}, {"indented", two},
		{"four", indent("  ", "    ")}, {"mixed", mixed}, {"indented", two}, {"mixed", mixed},
	} {
		d.sc.Reset(c.data, 0, maxDepth)
		d.fastRead, d.fastBufs = 0, 0
		p, err := d.decode()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if d.fastRead != len(p.Tasks) || d.fastBufs != len(p.Buffers) {
			t.Errorf("%s: %d of %d tasks and %d of %d buffers read by hand", c.name, d.fastRead, len(p.Tasks), d.fastBufs, len(p.Buffers))
		}
		rp, rerr := unmarshalTree(c.data)
		if differ(p, err, rp, rerr) {
			t.Errorf("%s: one-pass and reference readers differ:\n%s", c.name, cmp.Diff(rp, p, cmpopts.EquateEmpty()))
		}
	}
}

// TestKeyWords checks the words taskKey compares with the bytes of each
// key in its compact form.
func TestKeyWords(t *testing.T) {
	le := func(s string) uint64 {
		var w uint64
		for i := len(s) - 1; i >= 0; i-- {
			w = w<<8 | uint64(s[i])
		}
		return w
	}
	for _, c := range []struct {
		got  uint64
		want string
	}{
		{wID, `id":`}, {wOp, `op":`}, {wSM, `sm":`}, {wInputs, `inputs":`}, {wOutputs, `outputs"`},
		{wOutCoun, `out_coun`}, {wTer, `ter":`}, {wWaits, `waits":`}, {wParams, `params":`},
		{wEstByte, `est_byte`}, {wEstFlop, `est_flop`}, {wS, `s":`}, {wLabel, `label":`},
		{mask3, "\xff\xff\xff"}, {mask4, "\xff\xff\xff\xff"}, {mask5, "\xff\xff\xff\xff\xff"}, {mask7, "\xff\xff\xff\xff\xff\xff\xff"},
	} {
		if c.got != le(c.want) {
			t.Errorf("word %#x, want %#x (%q)", c.got, le(c.want), c.want)
		}
	}
	// Every key, compact or not, at the end of the buffer or not, gives
	// its bit and its value's index, or nothing for another key.
	keys := map[string]uint32{"id": tID, "op": tOp, "inputs": tInputs, "outputs": tOutputs, "out_counter": tOutCtr,
		"waits": tWaits, "sm": tSM, "params": tParams, "est_bytes": tEstBytes, "est_flops": tEstFlops, "label": tLabel,
		"i": 0, "ids": 0, "out_count": 0, "out_counterx": 0, "est_byte": 0, "est_bytesx": 0, "labe": 0, "outputs_": 0, "x": 0}
	for k, bit := range keys {
		for _, sep := range []string{`":`, `" :`, "\"\n:\t", `":  `} {
			for _, tail := range []string{"1", "1,\"id\":2}", "                 1}"} {
				doc := []byte(`"` + k + sep + tail)
				gotBit, j := taskKey(doc, 0)
				wantJ := -1
				if bit != 0 {
					wantJ = len(doc) - len(tail)
					for doc[wantJ-1] == ' ' {
						wantJ--
					}
					wantJ = ws(doc, wantJ)
				}
				if gotBit != bit || j != wantJ {
					t.Errorf("taskKey(%q) = %d, %d; want %d, %d", doc, gotBit, j, bit, wantJ)
				}
				if sb, sj := taskKeySlow(doc, 0); sb != gotBit || sj != j {
					t.Errorf("taskKeySlow(%q) = %d, %d; taskKey %d, %d", doc, sb, sj, gotBit, j)
				}
			}
		}
	}
}
