package schedule_test

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/megaproof/megaproof/schedule"
)

// A producer on worker 0 writes a tile and signals; a consumer on worker 1
// waits for the signal and reads it.
func ExampleBuilder() {
	b := schedule.NewBuilder("handoff", schedule.Launch{Target: "H200", SMs: 132, PerSM: 1, Workers: 2, Cooperative: true})
	x := b.Buffer("x", schedule.KindScratch, 256)
	y := b.Buffer("y", schedule.KindOutput, 256)
	ready := b.Counter("ready")
	b.Task("produce").On(0).Op("fill").Write(x, 0, 256).Signal(ready, 1)
	b.Task("consume").On(1).Op("copy").Wait(ready, 1).Read(x, 0, 256).Write(y, 0, 256)
	p, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	schedule.Encode(os.Stdout, p)
	// Output:
	// {
	//   "format": "megaproof/v1",
	//   "name": "handoff",
	//   "launch": {"target":"H200","sms":132,"blocks_per_sm":1,"workers":2,"cooperative":true},
	//   "buffers": [
	//     {"name":"x","kind":"scratch","size":256},
	//     {"name":"y","kind":"output","size":256}
	//   ],
	//   "counters": [
	//     {"name":"ready"}
	//   ],
	//   "tasks": [
	//     {"name":"produce","op":"fill","worker":0,"writes":[{"buffer":"x","length":256}],"after":[{"signal":"ready"}]},
	//     {"name":"consume","op":"copy","worker":1,"before":[{"wait":"ready","ge":1}],"reads":[{"buffer":"x","length":256}],"writes":[{"buffer":"y","length":256}]}
	//   ]
	// }
}

// Replay executes a trace and reports why an event is refused.
func ExampleReplay() {
	b := schedule.NewBuilder("handoff", schedule.Launch{SMs: 2, PerSM: 1, Workers: 2})
	ready := b.Counter("ready")
	b.Task("produce").On(0).Signal(ready, 1)
	b.Task("consume").On(1).Wait(ready, 1)
	p, _ := b.Build()
	// Worker 1 tries to pass its wait first.
	_, err := schedule.Replay(p, []schedule.Event{{Thread: 1, Step: 0}})
	fmt.Println(err)
	st, err := schedule.Replay(p, []schedule.Event{{Thread: 0, Step: 0}, {Thread: 0, Step: 1}, {Thread: 0, Step: 2}, {Thread: 1, Step: 0}})
	fmt.Println(err, st.Counters[ready], st.Pos)
	// Output:
	// event 0 (thread 1, step 0): worker 1: counter ready is 0, below 1
	// <nil> 1 [3 1]
}

// A compact witness of a race: hold both writers right after their bodies
// begin, then advance. The replay expands it into the steps it stands for,
// and the judge decides on those.
func ExampleAdvance() {
	b := schedule.NewBuilder("two-writers", schedule.Launch{SMs: 2, PerSM: 1, Workers: 2, Cooperative: true})
	y := b.Buffer("y", schedule.KindOutput, 64)
	done := b.Counter("done")
	b.Task("a").On(0).Write(y, 0, 64).Signal(done, 1)
	b.Task("b").On(1).Write(y, 0, 64).Signal(done, 1)
	p, _ := b.Build()
	w := []schedule.Event{schedule.Hold(0, 1), schedule.Hold(1, 1), schedule.Advance()}
	js, _ := json.Marshal(w)
	fmt.Println(string(js))
	st, _ := schedule.Replay(p, w)
	fmt.Println(st.Trace(), st.InFlight)
	fmt.Println(schedule.CheckWitness(p, "race.waw", []int{0, 1}, w))
	// Output:
	// [{"hold":0,"at":1},{"hold":1,"at":1},{"advance":true}]
	// [{0 0} {1 0}] [true true]
	// <nil>
}

// Paths and Form.StepSource locate an operation of the normal form in the
// megaproof/v1 document: its task and step.
func ExamplePaths() {
	b := schedule.NewBuilder("handoff", schedule.Launch{SMs: 2, PerSM: 1, Workers: 2, Cooperative: true})
	ready := b.Counter("ready")
	b.Task("produce").On(0).Signal(ready, 1)
	b.Task("consume").On(1).Wait(ready, 1)
	p, _ := b.Build()
	form := schedule.Lower(p)
	var loc schedule.Locator = schedule.Paths{}
	for th, t := range form.Threads {
		for s, op := range t.Ops {
			task, after, j, _ := form.StepSource(p, th, s)
			path := loc.TaskPath(task)
			if j >= 0 {
				path = loc.StepPath(task, after, j)
			}
			fmt.Println(form.ThreadName(p, th), op.Kind, path)
		}
	}
	// Output:
	// worker 0 begin $.tasks[0]
	// worker 0 end $.tasks[0]
	// worker 0 signal $.tasks[0].after[0]
	// worker 1 wait $.tasks[1].before[0]
	// worker 1 begin $.tasks[1]
	// worker 1 end $.tasks[1]
}
