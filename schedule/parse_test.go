package schedule

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseTree requires the direct reading of valid documents to give
// exactly what encoding/json's tokens give: the same tree, or the same
// diagnostic.
func FuzzParseTree(f *testing.F) {
	for _, s := range []string{
		`{"format":"megaproof/v1","launch":{"sms":1,"workers":1}}`,
		`{"a":[1,-2.5e3,true,false,null,"x\u00e9\n",{}],"b":{"c":[]}}`,
		`{"a":1,"a":2}`, `[[[[[]]]]]`, ` {"k" : "v" } `, `{"s":"\ud800"}`, "{\"s\":\"\xff\"}",
		`{"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k1":0}`,
		strings.Repeat("[", 70) + strings.Repeat("]", 70),
	} {
		f.Add([]byte(s))
	}
	// Every stored input of FuzzDecode.
	files, _ := filepath.Glob("testdata/fuzz/FuzzDecode/*")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		// The corpus format: a header line, then []byte("...") lines.
		for _, line := range strings.Split(string(b), "\n")[1:] {
			if q, ok := strings.CutPrefix(line, "[]byte("); ok {
				if s, err := strconv.Unquote(strings.TrimSuffix(q, ")")); err == nil {
					f.Add([]byte(s))
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, gotD := parseTree(data)
		want, wantD := parseTokens(data)
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotD, wantD) {
			t.Fatalf("direct: %+v %+v\ntokens: %+v %+v", got, gotD, want, wantD)
		}
	})
}
