package amk

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParse checks that the fast parser builds exactly the tree (or the
// diagnostic) of the json.Decoder-based one on every valid JSON input.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.json")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		`{"a":"\u00e9\ud83d\ude00\n\"","b":[1,-2.5e3,true,false,null,{}],"c":[]}`,
		"{\"\xff\":\"\xfe\"}",
		`{"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k1":0}`,
		`{"a":1,"a":2}`, ` [ [ ] , { } ] `, `"s"`, `0`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		fast, fd := parseFast(data)
		slow, sd := parseSlow(data)
		if !cmp.Equal(fd, sd) {
			t.Fatalf("diagnostics differ: fast %v, slow %v", fd, sd)
		}
		if !cmp.Equal(fast, slow, cmp.AllowUnexported(node{})) {
			t.Fatalf("trees differ:\n%s", cmp.Diff(fast, slow, cmp.AllowUnexported(node{})))
		}
	})
}
