package mpk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/schedule/mpk"
	"github.com/megaproof/megaproof/verify"
)

// read returns a testdata file.
func read(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// edit decodes a testdata file, applies f to it, and re-encodes it.
func edit(t testing.TB, name string, f func(doc map[string]any)) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(read(t, name)))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	f(doc)
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// at walks a decoded JSON document: keys for objects, ints for arrays.
func at(doc any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			doc = doc.(map[string]any)[k]
		case int:
			doc = doc.([]any)[k]
		}
	}
	return doc
}

func obj(doc any, path ...any) map[string]any { return at(doc, path...).(map[string]any) }

// run maps data with o and verifies it.
func run(t testing.TB, data []byte, o mpk.Options) (*schedule.Program, *verify.Result) {
	t.Helper()
	p, err := o.Unmarshal(data)
	if err != nil {
		t.Fatalf("map: %v", err)
	}
	res, err := verify.Run(context.Background(), p, verify.Config{})
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	return p, res
}

// parse parses data as an MPK graph.
func parse(t testing.TB, data []byte) *mpk.Graph {
	t.Helper()
	g, err := mpk.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// verdicts verifies each program.
func verdicts(t testing.TB, ps []*schedule.Program) []verify.Verdict {
	t.Helper()
	var out []verify.Verdict
	for _, p := range ps {
		res, err := verify.Run(context.Background(), p, verify.Config{})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, res.Verdict)
	}
	return out
}
