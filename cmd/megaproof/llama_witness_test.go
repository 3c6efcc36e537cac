package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/megaproof/megaproof/examples/llama/llamagen"
	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify"
)

// droppedWait picks, in the given layer of a Llama schedule, the first
// task whose first before-step waits on a counter that a task on another
// worker signals, and returns it with that wait removed.
func droppedWait(t *testing.T, p *schedule.Program, layer int) (*schedule.Program, string) {
	t.Helper()
	signalers := map[int32][]int32{} // counter -> workers of its signalling tasks
	for _, tk := range p.Tasks {
		for _, s := range slices.Concat(tk.Before, tk.After) {
			if s.Kind == schedule.Signal {
				signalers[s.Object] = append(signalers[s.Object], tk.Worker)
			}
		}
	}
	prefix := fmt.Sprintf("L%d.", layer)
	for i, tk := range p.Tasks {
		if !strings.HasPrefix(tk.Name, prefix) || len(tk.Before) == 0 || tk.Before[0].Kind != schedule.Wait {
			continue
		}
		if !slices.ContainsFunc(signalers[tk.Before[0].Object], func(w int32) bool { return w != tk.Worker }) {
			continue
		}
		q := p.Clone()
		q.Tasks[i].Before = q.Tasks[i].Before[1:]
		return q, tk.Name
	}
	t.Fatalf("no task of layer %d waits on another worker first", layer)
	return nil, ""
}

// On the 5,805-task Llama-3.2-1B schedule (128-column tiles) with one
// wait removed from a task of the first, a middle and the last layer,
// every witness has at most 30 events, and megaproof replay confirms it.
// Under static queues a deep task runs only after everything before it
// in its worker's queue, so a trace of ordinary steps to a race in the
// last layer has about 19,000 events: the witnesses are compact (holds
// and an advance).
func TestLlamaDroppedWaitWitnesses(t *testing.T) {
	cfg := llamagen.DefaultConfig()
	cfg.Tile = 128
	p, err := llamagen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Tasks) != 5805 || cfg.Model.Layers != 16 {
		t.Fatalf("%d tasks, %d layers; want the 5,805-task, 16-layer schedule", len(p.Tasks), cfg.Model.Layers)
	}
	for _, layer := range []int{0, cfg.Model.Layers / 2, cfg.Model.Layers - 1} {
		q, task := droppedWait(t, p, layer)
		file := writeProgram(t, fmt.Sprintf("llama-L%d.json", layer), q)
		status, out, errOut := runCLI(t, "", "verify", "--json", file)
		if status != exitUnsafe {
			t.Fatalf("layer %d (%s): verify status %d\n%s", layer, task, status, errOut)
		}
		reps := decodeReports(t, out)
		races := 0
		for k, f := range reps[0].Findings {
			if !f.HasWitness() {
				continue
			}
			if verify.Family(f.Code) == "race" {
				races++
			}
			if f.WitnessLength > 30 {
				t.Errorf("layer %d (%s): %s %v: witness of %d events, want at most 30", layer, task, f.Code, f.Tasks, f.WitnessLength)
			}
			t0 := time.Now()
			status, out, errOut := runCLI(t, "", "replay", "--json", "--finding", fmt.Sprint(k+1), file)
			var r replayReport
			if err := json.Unmarshal([]byte(out), &r); status != exitSafe || err != nil || !r.Confirmed {
				t.Fatalf("layer %d (%s): replay --finding %d: status %d, %v, %+v\n%s", layer, task, k+1, status, err, r.Error, errOut)
			}
			t.Logf("layer %d (%s): %s %v: %d events, replayed in %v", layer, task, f.Code, f.Tasks, f.WitnessLength, time.Since(t0).Round(time.Millisecond))
			if layer != cfg.Model.Layers-1 || !slices.ContainsFunc(f.Witness, func(e verify.ReportEvent) bool { return e.Advance }) {
				continue
			}
			// --expand gives the steps the advances run, one by one: as
			// many as they say, and a witness of steps the judge accepts.
			status, out, errOut = runCLI(t, "", "replay", "--json", "--expand", "--finding", fmt.Sprint(k+1), file)
			var x replayReport
			if err := json.Unmarshal([]byte(out), &x); status != exitSafe || err != nil {
				t.Fatalf("replay --expand: status %d, %v\n%s", status, err, errOut)
			}
			want := 0
			for _, e := range f.Witness {
				switch {
				case e.Advance:
					want += e.Executed
				case e.Event().IsStep():
					want++
				}
			}
			steps := make([]schedule.Event, len(x.Expanded))
			for i, e := range x.Expanded {
				steps[i] = e.Event()
			}
			if len(steps) != want || schedule.Expands(steps) {
				t.Errorf("replay --expand: %d events, want %d steps", len(steps), want)
			}
			tasks := make([]int, len(f.Tasks))
			for i, name := range f.Tasks {
				tasks[i] = slices.IndexFunc(q.Tasks, func(tk schedule.Task) bool { return tk.Name == name })
			}
			if err := schedule.CheckWitness(q, f.Code, tasks, steps); err != nil {
				t.Errorf("the expanded witness is refused: %v", err)
			}
			_, text, _ := runCLI(t, "", "replay", "--expand", "--finding", fmt.Sprint(k+1), file)
			if !strings.Contains(text, fmt.Sprintf("expanded: %d steps", want)) {
				t.Errorf("replay --expand prints no expanded steps:\n%.2000s", text)
			}
		}
		if races == 0 {
			t.Errorf("layer %d (%s): no race among %d findings", layer, task, len(reps[0].Findings))
		}
	}
}
