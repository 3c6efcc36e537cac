package mpk_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/schedule/mpk"
)

// TestParseMarshal reads each example and writes it back byte for byte.
func TestParseMarshal(t *testing.T) {
	for _, name := range []string{ex1, ex2, ex3, ex4} {
		data := read(t, name)
		g, err := mpk.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		if got := mpk.Marshal(g); !bytes.Equal(got, data) {
			t.Errorf("%s: Marshal(Parse(file)) differs from the file", name)
		}
	}
}

func TestDetect(t *testing.T) {
	cases := []struct {
		doc  string
		want bool
	}{
		{string(read(t, ex1)), true},
		{`{"all_tasks": [], "all_events": []}`, true},
		{`{"first_tasks": null, "all_events": [{"event_type": 911}], "all_tasks": [`, true}, // truncated
		{`{"all_events": [`, true},
		{`{"all_events": []}`, false},
		{`{"format": "megaproof/v1", "all_events": [], "all_tasks": []}`, false},
		{`{"ir_version": "0.2.0", "tasks": []}`, false},
		{`{"tasks": [], "all_events": [], "all_tasks": []}`, false},
		{`[]`, false},
		{``, false},
		{`{"all_events": "}", "x": {"a": [1, {"b": "]"}]}, "all_tasks": 1}`, true},
		// Keys are compared decoded.
		{`{"\u0061ll_events": [], "all_tasks": []}`, true},
		{`{"all_events": [], "all_t\u0061sks": []}`, true},
		{`{"n\u00e9": 1, "all_events": [], "all_tasks": []}`, true},
		{"{\"n\u00e9\": 1, \"all_events\": [], \"all_tasks\": []}", true},
		{`{"\u0061ll_events": [`, true},
		{`{"\u0066ormat": "megaproof/v1", "all_events": [], "all_tasks": []}`, false},
		{`{"all_events": [], "\u0074asks": [], "all_tasks": []}`, false},
	}
	for _, c := range cases {
		if got := mpk.Detect([]byte(c.doc)); got != c.want {
			t.Errorf("Detect(%.60q) = %v, want %v", c.doc, got, c.want)
		}
	}
}

// steps renders steps as "wait e2>=8/sys, signal e3+1".
func steps(p *schedule.Program, ss []schedule.Step) string {
	var parts []string
	for _, s := range ss {
		c := p.Counters[s.Object].Name
		switch s.Kind {
		case schedule.Wait:
			parts = append(parts, fmt.Sprintf("wait %s>=%d/%v", c, s.Value, s.Scope))
		case schedule.Signal:
			parts = append(parts, fmt.Sprintf("signal %s+%d/%v", c, s.Value, s.Scope))
		}
		if s.Relaxed {
			parts[len(parts)-1] += "/relaxed"
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

// TestMapping checks the mapping of example 1 over three iterations: the
// prelaunched tasks wait on their dependent event at num_triggers × k
// (acquire, sys scope) and signal their trigger event (release, gpu
// scope), each worker's first task of an iteration waits for the launch
// event, BEGIN(k) waits for END(k-1), TERMINATE for the last END, and
// the queue counters hold the entries of each worker.
func TestMapping(t *testing.T) {
	p, err := mpk.Options{Iterations: 3}.Unmarshal(read(t, ex1))
	if err != nil {
		t.Fatal(err)
	}
	if l := p.Launch; l.SMs != 132 || l.PerSM != 1 || l.Workers != 128 || l.Cooperative {
		t.Errorf("launch %+v", l)
	}
	// 3 iterations of BEGIN and six tasks, and 128 TERMINATEs.
	if len(p.Tasks) != 3*7+128 {
		t.Errorf("%d tasks", len(p.Tasks))
	}
	cases := []struct{ task, worker, before, after string }{
		{"t1.BEGIN_TASK_GRAPH@1", "0", "", "signal e1+1/gpu, signal bqueue.s1+1/gpu, signal bqueue.s2+1/gpu, signal bqueue.s3+1/gpu, signal bqueue.s4+1/gpu, signal bqueue.s5+1/gpu, signal bqueue.s6+1/gpu, signal bqueue.s7+1/gpu, signal bqueue.s8+1/gpu, signal bqueue.s9+1/gpu, signal bqueue.s10+1/gpu, signal bqueue.s11+1/gpu, signal bqueue.s12+1/gpu, signal bqueue.s13+1/gpu, signal bqueue.s14+1/gpu, signal bqueue.s15+1/gpu, signal queue.w0.i1+1/gpu, signal queue.w1.i1+1/gpu, signal queue.w2.i1+1/gpu, signal queue.w3.i1+1/gpu, signal queue.w4.i1+1/gpu, signal queue.w5.i1+1/gpu, signal queue.w6.i1+1/gpu"},
		{"t2.LINEAR@1", "1", "wait e1>=1/gpu", "signal e2+1/gpu"},
		{"t6.LINEAR@1", "5", "wait e1>=1/gpu, wait e2>=4/sys", "signal e3+1/gpu"},
		{"t7.LINEAR@1", "6", "wait e1>=1/gpu, wait e2>=4/sys", "signal e3+1/gpu"},
		// END(1) comes from worker 6 (scheduler 0), whose cursor is at 7.
		{"t1.BEGIN_TASK_GRAPH@2", "7", "wait e3>=2/gpu", ""},
		{"t2.LINEAR@2", "0", "wait e1>=2/gpu", "signal e2+1/gpu"},
		{"t7.LINEAR@2", "5", "wait e1>=2/gpu, wait e2>=8/sys", "signal e3+1/gpu"},
		{"t7.LINEAR@3", "4", "wait e1>=3/gpu, wait e2>=12/sys", "signal e3+1/gpu"},
		{"t1.BEGIN_TASK_GRAPH@3", "6", "wait e3>=4/gpu", ""},
		{"w0.TERMINATE", "0", "wait e3>=6/gpu", ""},
		{"w127.TERMINATE", "127", "wait e3>=6/gpu", ""},
	}
	for _, c := range cases {
		tk := task(t, p, c.task)
		if w := fmt.Sprint(tk.Worker); w != c.worker {
			t.Errorf("%s on worker %s, want %s", c.task, w, c.worker)
		}
		if got := steps(p, tk.Before); got != c.before {
			t.Errorf("%s before: %s\nwant %s", c.task, got, c.before)
		}
		if got := steps(p, tk.After); c.after != "" && got != c.after {
			t.Errorf("%s after: %s\nwant %s", c.task, got, c.after)
		}
	}
	for _, b := range p.Buffers {
		got := fmt.Sprintf("%s %v %d", b.Name, b.Kind, b.Size)
		want := map[string]string{"x": "x input 2048", "w1": "w1 input 1048576", "y": "y state 1024", "w2": "w2 input 262144", "z": "z state 512"}[b.Name]
		if got != want {
			t.Errorf("buffer %s, want %s", got, want)
		}
	}
	q := p.Counters[slicesIndex(p, "queue.w0.i1")]
	if q.Init != 1<<32-8192 || q.Width != 32 {
		t.Errorf("queue counter %+v", q)
	}
}

func slicesIndex(p *schedule.Program, counter string) int {
	for i, c := range p.Counters {
		if c.Name == counter {
			return i
		}
	}
	return -1
}

// TestMappingExclusive checks the scheduler threads of the Exclusive
// residency: they come first, relay END to BEGIN and dispatch their
// workers' tasks.
func TestMappingExclusive(t *testing.T) {
	p, err := mpk.Options{SMs: 10, Workers: 4, Schedulers: 2, Residency: mpk.Exclusive}.Unmarshal(read(t, ex1))
	if err != nil {
		t.Fatal(err)
	}
	if l := p.Launch; l.Workers != 6 || l.SMs != 10 {
		t.Errorf("launch %+v", l)
	}
	cases := []struct{ task, worker, before, after string }{
		{"s0.begin@1", "0", "", "signal begin+1/gpu, signal queue.w0.i1+1/gpu"},
		{"s0.dispatch@1", "0", "wait e1>=1/gpu", "signal dispatch.s0+1/gpu, signal queue.w0.i1+2/gpu, signal queue.w1.i1+2/gpu"},
		{"s1.dispatch@1", "1", "wait e1>=1/gpu", "signal dispatch.s1+1/gpu, signal queue.w2.i1+1/gpu, signal queue.w3.i1+1/gpu"},
		{"t1.BEGIN_TASK_GRAPH@1", "2", "wait begin>=1/gpu", "signal e1+1/gpu"},
		{"t2.LINEAR@1", "3", "wait dispatch.s0>=1/gpu", ""},
		{"t4.LINEAR@1", "4", "wait dispatch.s1>=1/gpu", ""},
		{"s0.end", "0", "wait e3>=4/gpu", "signal terminate.s0+1/gpu"},
		{"w3.TERMINATE", "5", "wait terminate.s1>=1/gpu", ""},
	}
	for _, c := range cases {
		tk := task(t, p, c.task)
		if w := fmt.Sprint(tk.Worker); w != c.worker {
			t.Errorf("%s on worker %s, want %s", c.task, w, c.worker)
		}
		if got := steps(p, tk.Before); got != c.before {
			t.Errorf("%s before: %s\nwant %s", c.task, got, c.before)
		}
		if got := steps(p, tk.After); c.after != "" && got != c.after {
			t.Errorf("%s after: %s\nwant %s", c.task, got, c.after)
		}
	}
}
