package mpk_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/schedule/mpk"
	"github.com/megaproof/megaproof/verify"
)

// Verifying an MPK task graph: the hand-derived example 4, where MPK
// stripped the edge from A to the residual consumer C because a path
// through B remains, but the events are partitioned per task, so task A1
// is unordered with task C0, which reads all of A's output.
func ExampleUnmarshal() {
	data, err := os.ReadFile("testdata/ex4_stripped_residual_hazard.json")
	if err != nil {
		panic(err)
	}
	p, err := mpk.Unmarshal(data)
	if err != nil {
		panic(err)
	}
	res, err := verify.Run(context.Background(), p, verify.Config{})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Verdict)
	f := res.Findings[1]
	fmt.Println(f.Code, p.Tasks[f.Tasks[0]].Name, p.Tasks[f.Tasks[1]].Name)
	// Output:
	// unsafe
	// race.raw t3.IDENTITY@1 t6.LINEAR_WITH_RESIDUAL@1
}

// The residency of MPK's scheduler blocks: when each takes an SM before
// the workers are resident (MPK issue #761), 128 workers and 16
// schedulers do not fit 132 SMs, and a graph with tasks on the last
// workers deadlocks.
func ExampleOptions_Unmarshal() {
	op := func(n string, d int) mpk.Operand { return mpk.Operand{Tensor: n, Dim: d} }
	b := mpk.NewBuilder()
	b.Tensor("x", mpk.DTBF16, 1, 8192)
	b.Tensor("y", mpk.DTBF16, 1, 8192)
	b.Layer(mpk.TaskIdentity, 128, []mpk.Operand{op("x", 1)}, []mpk.Operand{op("y", 1)})
	g, err := b.Graph()
	if err != nil {
		panic(err)
	}
	data := mpk.Marshal(g)
	for _, r := range []mpk.Residency{mpk.Beside, mpk.Exclusive} {
		p, err := mpk.Options{Residency: r}.Unmarshal(data)
		if err != nil {
			panic(err)
		}
		res, err := verify.Run(context.Background(), p, verify.Config{})
		if err != nil {
			panic(err)
		}
		fmt.Print(res.Verdict)
		for _, f := range res.Findings {
			fmt.Print(" ", f.Code)
		}
		fmt.Println()
	}
	// Output:
	// safe
	// unsafe occupancy
}

// Building an MPK-shaped graph: a linear layer of four tiles feeding a
// second one that reads its whole output (the hand-derived example 1), written
// as MPK writes it.
func ExampleBuilder() {
	op := func(n string, d int) mpk.Operand { return mpk.Operand{Tensor: n, Dim: d} }
	b := mpk.NewBuilder()
	b.Tensor("x", mpk.DTBF16, 1, 1024)
	b.Tensor("w1", mpk.DTBF16, 512, 1024)
	b.Tensor("y", mpk.DTBF16, 1, 512)
	b.Tensor("w2", mpk.DTBF16, 256, 512)
	b.Tensor("z", mpk.DTBF16, 1, 256)
	b.Layer(mpk.TaskLinear, 4, []mpk.Operand{op("x", mpk.Whole), op("w1", 0)}, []mpk.Operand{op("y", 1)})
	b.Layer(mpk.TaskLinear, 2, []mpk.Operand{op("y", mpk.Whole), op("w2", 0)}, []mpk.Operand{op("z", 1)})
	g, err := b.Graph()
	if err != nil {
		panic(err)
	}
	for i, e := range g.Events {
		fmt.Printf("event %d: type %d, %d triggers, tasks [%d, %d)\n", i, e.Type, e.NumTriggers, e.FirstTask, e.LastTask)
	}
	fmt.Println(len(mpk.Marshal(g)), "bytes")
	// Output:
	// event 0: type 911, 1 triggers, tasks [0, 0)
	// event 1: type 903, 1 triggers, tasks [2, 8)
	// event 2: type 900, 4 triggers, tasks [6, 8)
	// event 3: type 910, 2 triggers, tasks [0, 0)
	// 7243 bytes
}

// Deciding a graph: every dispatch history whose verdict can differ is
// one program, and the graph is safe only when each is, and when Programs
// has no error beside them (an error with an unsafe program still leaves
// the graph unsafe). In history_dangling_writer.json a task that triggers
// nothing writes X in both iterations: safe when the default scheduler
// ends iteration 1, a race when scheduler 0 does. In
// end_undercount_readonly.json END counts fewer triggers than it has,
// which MPK's exact-count END can turn into a hang.
func ExampleOptions_Programs() {
	for _, file := range []string{"history_dangling_writer.json", "end_undercount_readonly.json"} {
		data, err := os.ReadFile("testdata/" + file)
		if err != nil {
			panic(err)
		}
		g, err := mpk.Parse(data)
		if err != nil {
			panic(err)
		}
		ps, refusal := mpk.Options{}.Programs(g)
		fmt.Print(file, ":")
		for _, p := range ps {
			res, err := verify.Run(context.Background(), p, verify.Config{})
			if err != nil {
				panic(err)
			}
			fmt.Print(" ", res.Verdict)
		}
		var se *schedule.Error
		if errors.As(refusal, &se) {
			d := se.Diagnostics[0]
			fmt.Print("; ", d.Code, " at ", d.Path, ": ", strings.SplitN(d.Message, ":", 2)[0])
		}
		fmt.Println()
	}
	// Output:
	// history_dangling_writer.json: safe unsafe
	// end_undercount_readonly.json: safe; invalid.value at $.all_events[2].num_triggers: unsupported
}
