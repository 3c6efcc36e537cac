package jsontree

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// FuzzParse requires the direct reading of valid documents to give exactly
// what encoding/json's tokens give: the same tree, or the same error.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"format":"megaproof/v1","launch":{"sms":1,"workers":1}}`,
		`{"a":"\u00e9\ud83d\ude00\n\"","b":[1,-2.5e3,true,false,null,{}],"c":[]}`,
		"{\"\xff\":\"\xfe\"}", `{"s":"\ud800"}`,
		`{"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k1":0}`,
		`{"a":1,"a":2}`, ` [ [ ] , { } ] `, `"s"`, `0`, `[1,2`, `{"a" 1}`,
		strings.Repeat("[", 70) + strings.Repeat("]", 70),
	} {
		f.Add([]byte(s))
	}
	// The example documents of both formats and the stored fuzz inputs of
	// their readers.
	for _, pattern := range []string{"../../schedule/amk/testdata/*.json", "../../schedule/testdata/*.json", "../../schedule/testdata/fuzz/FuzzDecode/*", "../../schedule/amk/testdata/fuzz/*/*"} {
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
		for _, depth := range []int{64, 128} {
			tokens, te := parseTokens(data, depth)
			if !json.Valid(data) {
				if te == nil {
					t.Fatalf("json.Valid rejects what the tokens accept")
				}
				continue
			}
			fast, fe := parseFast(data, depth)
			// reflect, not cmp: cmp takes exponential time on deep trees.
			if !reflect.DeepEqual(fe, te) || !reflect.DeepEqual(fast, tokens) {
				t.Fatalf("depth %d: direct %v %v, tokens %v %v", depth, fast, fe, tokens, te)
			}
		}
	})
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in        string
		path, msg string
		dup       bool
	}{
		{`{"a":[{"c":1,"c":2}]}`, "$.a[0].c", `key "c" appears twice`, true},
		{`{"a":[1,}`, "$.a[1]", "invalid character '}' looking for beginning of value (at byte 8)", false},
		{strings.Repeat("[", 5) + strings.Repeat("]", 5), "$[0][0][0][0]", "nesting deeper than 3", false},
		{`{} {}`, "$", "trailing data after the JSON value", false},
	} {
		_, err := Parse([]byte(c.in), 3)
		if err == nil || err.Path != c.path || err.Message != c.msg || err.Duplicate != c.dup {
			t.Errorf("%s: got %+v; want %s %q duplicate %v", c.in, err, c.path, c.msg, c.dup)
		}
	}
	n, err := Parse([]byte(` {"k":[true,null,"s",-1.5e3]} `), 64)
	want := &Node{Kind: 'o', Keys: []string{"k"}, Vals: []*Node{{Kind: 'a', Vals: []*Node{{Kind: 'b', B: true}, {Kind: 'z'}, {Kind: 's', Str: "s"}, {Kind: 'n', Str: "-1.5e3"}}}}}
	if err != nil || !reflect.DeepEqual(n, want) {
		t.Fatalf("got %+v %v", n, err)
	}
}

// BenchmarkParse parses a document of 100,000 task-like objects, directly
// and through encoding/json's tokens.
func BenchmarkParse(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"format":"megaproof/v1","tasks":[`)
	for i := range 100000 {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `{"name":"t%d","op":"gemv","worker":%d,"before":[{"wait":"c","ge":%d}],"reads":[{"buffer":"w","offset":%d,"length":64}],"writes":[{"buffer":"x","offset":%d,"length":64,"rows":4,"stride":8192}],"after":[{"signal":"c"}]}`, i, i%128, i/128*128+1, i%1024*64, i%128*64)
	}
	sb.WriteString(`]}`)
	data := []byte(sb.String())
	for _, c := range []struct {
		name  string
		parse func([]byte, int) (*Node, *Error)
	}{{"direct", parseFast}, {"tokens", parseTokens}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := c.parse(data, 64); err != nil {
					b.Fatal(err.Message)
				}
			}
		})
	}
}

func TestIsInteger(t *testing.T) {
	for lit, want := range map[string]bool{"0": true, "-12": true, "123456789012345678901234567890": true, "": false, "-": false, "1.0": false, "1e3": false, "-1.5e3": false} {
		if got := IsInteger(lit); got != want {
			t.Errorf("IsInteger(%q) = %v, want %v", lit, got, want)
		}
	}
}
