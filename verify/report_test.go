package verify

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/schedule"
)

// On every code example, the report's findings carry locations into the
// document, witnesses keep the empty trace apart from none, and every
// event is annotated with the state a replay of the witness leaves.
func TestReportAnnotatesCodeExamples(t *testing.T) {
	files, err := filepath.Glob("testdata/codes/*.json")
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			p, err := schedule.Unmarshal(data)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Run(context.Background(), p, Config{})
			if err != nil {
				t.Fatal(err)
			}
			rep := r.Report(p)
			b, err := json.Marshal(rep)
			if err != nil {
				t.Fatal(err)
			}
			var raw struct {
				Findings []map[string]json.RawMessage `json:"findings"`
			}
			if err := json.Unmarshal(b, &raw); err != nil {
				t.Fatal(err)
			}
			for i, f := range rep.Findings {
				rf := r.Findings[i]
				_, hasKey := raw.Findings[i]["witness"]
				_, hasLen := raw.Findings[i]["witness_length"]
				if hasKey != rf.HasWitness() || hasLen != rf.HasWitness() || f.HasWitness() != rf.HasWitness() {
					t.Errorf("%s: witness key %v, length key %v, report %v, finding has witness %v", f.Code, hasKey, hasLen, f.HasWitness(), rf.HasWitness())
				}
				if want := !staticFinding(p, &rf); rf.HasWitness() != want {
					t.Errorf("%s: has witness %v, want %v", f.Code, rf.HasWitness(), want)
				}
				if len(f.Locations) == 0 {
					t.Errorf("%s: no locations", f.Code)
				}
				for _, l := range f.Locations {
					onTask := strings.HasPrefix(l.Path, "$.tasks[")
					if l.Role == "" || onTask != (l.Task != "") || (!onTask && l.Path != "$.launch" && !strings.HasPrefix(l.Path, "$.buffers[")) {
						t.Errorf("%s: location %+v", f.Code, l)
					}
					if !resolves(t, data, l.Path) {
						t.Errorf("%s: location %s is not in the document", f.Code, l.Path)
					}
				}
				if err := schedule.CheckWitness(p, f.Code, rf.Tasks, f.Events()); err != nil {
					t.Errorf("%s: report's witness: %v", f.Code, err)
				}
				marked := 0
				for k, e := range f.Witness {
					if e.ThreadName == "" || e.Task == "" || e.Op == "" || e.Path == "" || !resolves(t, data, e.Path) {
						t.Errorf("%s: event %d not annotated: %+v", f.Code, k, e)
					}
					if (e.Object == "") != (e.Value == nil) {
						t.Errorf("%s: event %d: object %q with value %v", f.Code, k, e.Object, e.Value)
					}
					if e.Value != nil {
						st, err := schedule.Replay(p, f.Events()[:k+1])
						if err != nil {
							t.Fatal(err)
						}
						name, _ := strings.CutPrefix(e.Object, "counter ")
						for c, ctr := range p.Counters {
							if ctr.Name == name && st.Counters[c] != *e.Value {
								t.Errorf("%s: event %d: %s is %d, annotated %d", f.Code, k, e.Object, st.Counters[c], *e.Value)
							}
						}
					}
					if e.Marked {
						marked++
					}
				}
				if len(f.Witness) > 0 && marked == 0 {
					t.Errorf("%s: no event of %d is marked", f.Code, len(f.Witness))
				}
			}
		})
	}
}

// resolves reports whether a JSON path of the form $.a[1].b... names a
// member of the document.
func resolves(t *testing.T, data []byte, path string) bool {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	rest, ok := strings.CutPrefix(path, "$")
	if !ok {
		return false
	}
	for rest != "" {
		switch rest[0] {
		case '.':
			end := strings.IndexAny(rest[1:], ".[")
			if end < 0 {
				end = len(rest) - 1
			}
			key := rest[1 : 1+end]
			rest = rest[1+end:]
			o, ok := v.(map[string]any)
			if !ok {
				return false
			}
			if v, ok = o[key]; !ok {
				return false
			}
		case '[':
			end := strings.IndexByte(rest, ']')
			i, err := strconv.Atoi(rest[1:end])
			if err != nil {
				return false
			}
			rest = rest[end+1:]
			a, ok := v.([]any)
			if !ok || i < 0 || i >= len(a) {
				return false
			}
			v = a[i]
		default:
			return false
		}
	}
	return true
}

// A report event takes the JSON form of its schedule.Event, and reads
// back to the same value; a record mixing the forms is refused.
func TestReportEventForms(t *testing.T) {
	v := uint64(7)
	h := schedule.Hold(3, 5)
	for _, tt := range []struct {
		e    ReportEvent
		want string
	}{
		{ReportEvent{Thread: 1, Step: 2, Op: "signal c += 1", Object: "counter c", Value: &v, Marked: true},
			`{"thread":1,"step":2,"op":"signal c += 1","object":"counter c","value":7,"marked":true}`},
		{ReportEvent{Thread: h.Thread, Step: h.Step, ThreadName: "worker 3", Op: "hold before step 5 (end)", Marked: true},
			`{"hold":3,"at":5,"thread_name":"worker 3","op":"hold before step 5 (end)","marked":true}`},
		{ReportEvent{Thread: -1, Advance: true, Op: "advance: 4 steps of 2 threads", Executed: 4,
			Spans: []ReportSpan{{Thread: 0, From: 0, To: 3}, {Thread: 2, ThreadName: "worker 2", From: 1, To: 2}},
			Marks: []ReportEvent{{Thread: 2, Step: 1, Op: "begin", Marked: true}}, Marked: true},
			`{"advance":true,"op":"advance: 4 steps of 2 threads","marked":true,"executed":4,"spans":[{"thread":0,"from":0,"to":3},{"thread":2,"thread_name":"worker 2","from":1,"to":2}],"marks":[{"thread":2,"step":1,"op":"begin","marked":true}]}`},
	} {
		got, err := json.Marshal(tt.e)
		if err != nil || string(got) != tt.want {
			t.Errorf("Marshal = %s, %v;\nwant %s", got, err, tt.want)
			continue
		}
		var back ReportEvent
		if err := json.Unmarshal(got, &back); err != nil || !reflect.DeepEqual(back, tt.e) {
			t.Errorf("Unmarshal(%s) = %+v, %v; want %+v", got, back, err, tt.e)
		}
		if back.Event() != (schedule.Event{Thread: tt.e.Thread, Step: tt.e.Step}) {
			t.Errorf("Event() = %+v", back.Event())
		}
	}
	for _, bad := range []string{`{"thread":1}`, `{"thread":1,"step":0,"hold":1,"at":0}`, `{"advance":true,"thread":0,"step":0}`, `{}`} {
		var e ReportEvent
		if err := json.Unmarshal([]byte(bad), &e); err == nil {
			t.Errorf("Unmarshal(%s) = %+v; want an error", bad, e)
		}
	}
}
