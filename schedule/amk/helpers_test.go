package amk_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/schedule/amk"
)

// load maps a testdata file, failing the test on any error.
func load(t *testing.T, name string) *schedule.Program {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	p, err := amk.Unmarshal(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return p
}

// edit decodes a testdata file, applies f to it, and re-encodes it.
func edit(t *testing.T, name string, f func(doc map[string]any)) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
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

// access renders an access as "buffer offset+length" with " xROWS/STRIDE"
// for tiles.
func access(p *schedule.Program, a schedule.Access) string {
	s := fmt.Sprintf("%s %d+%d", p.Buffers[a.Buffer].Name, a.Offset, a.Length)
	if a.Rows > 0 {
		s += fmt.Sprintf(" x%d/%d", a.Rows, a.Stride)
	}
	return s
}

func accesses(p *schedule.Program, as []schedule.Access) string {
	var parts []string
	for _, a := range as {
		parts = append(parts, access(p, a))
	}
	return strings.Join(parts, "; ")
}

// steps renders a task's steps as "wait c0>=2, signal c1+1".
func steps(p *schedule.Program, ss []schedule.Step) string {
	var parts []string
	for _, s := range ss {
		switch s.Kind {
		case schedule.Wait:
			parts = append(parts, fmt.Sprintf("wait %s>=%d", p.Counters[s.Object].Name, s.Value))
		case schedule.Signal:
			parts = append(parts, fmt.Sprintf("signal %s+%d", p.Counters[s.Object].Name, s.Value))
		default:
			parts = append(parts, s.Kind.String())
		}
		if s.Relaxed || s.Scope != schedule.ScopeGPU {
			parts[len(parts)-1] += fmt.Sprintf(" (relaxed=%v scope=%v)", s.Relaxed, s.Scope)
		}
	}
	return strings.Join(parts, ", ")
}

func task(t *testing.T, p *schedule.Program, name string) *schedule.Task {
	t.Helper()
	for i := range p.Tasks {
		if p.Tasks[i].Name == name {
			return &p.Tasks[i]
		}
	}
	t.Fatalf("no task %q", name)
	return nil
}

func buffer(t *testing.T, p *schedule.Program, name string) *schedule.Buffer {
	t.Helper()
	for i := range p.Buffers {
		if p.Buffers[i].Name == name {
			return &p.Buffers[i]
		}
	}
	t.Fatalf("no buffer %q", name)
	return nil
}

// signature renders a program independently of ids, names of counters and
// tasks, and list order: each counter is named by the footprints of the
// tasks that signal it, and the task lines are sorted.
func signature(p *schedule.Program) string {
	body := func(tk *schedule.Task) string {
		return fmt.Sprintf("%s %v w%d R[%s] W[%s]", tk.Op, tk.Params, tk.Worker, accesses(p, tk.Reads), accesses(p, tk.Writes))
	}
	producers := make([][]string, len(p.Counters))
	for i := range p.Tasks {
		for _, s := range p.Tasks[i].After {
			producers[s.Object] = append(producers[s.Object], body(&p.Tasks[i]))
		}
	}
	ctr := func(c int32) string {
		ps := append([]string(nil), producers[c]...)
		sort.Strings(ps)
		return fmt.Sprintf("{init %d: %s}", p.Counters[c].Init, strings.Join(ps, " | "))
	}
	var lines []string
	for i := range p.Tasks {
		tk := &p.Tasks[i]
		line := body(tk)
		for _, s := range tk.Before {
			line += fmt.Sprintf("\n  wait %s >= %d", ctr(s.Object), s.Value)
		}
		for _, s := range tk.After {
			line += fmt.Sprintf("\n  signal +%d", s.Value)
		}
		lines = append(lines, line)
	}
	sort.Strings(lines)
	var bufs []string
	for _, b := range p.Buffers {
		bufs = append(bufs, fmt.Sprintf("%s %v %d", b.Name, b.Kind, b.Size))
	}
	sort.Strings(bufs)
	return fmt.Sprintf("%+v\n%s\n%s", p.Launch, strings.Join(bufs, "\n"), strings.Join(lines, "\n"))
}
