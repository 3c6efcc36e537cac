package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify"
)

const dotDoc = `Prints the task graph of the schedule in FILE (- reads standard input) in
Graphviz form: tasks are nodes; an edge runs from each task that signals a
counter to each task that waits on it, labelled with the threshold, and
through a node for each barrier and semaphore; each worker's static queue
is a cluster. Names are printed as Go-quoted text, without control
characters. Pipe it to dot -Tsvg.`

func runDot(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("dot", "[flags] FILE", dotDoc, stderr)
	maxBytes := int64(defaultMaxBytes)
	fs.Var((*byteSize)(&maxBytes), "max-bytes", "the input size `limit`, in bytes (suffixes KiB, MiB, GiB)")
	files, status, done := parseFlags(fs, args, 1, 1)
	if done {
		return status
	}
	v := &verifier{stdin: stdin, stdout: stdout, stderr: stderr, maxBytes: maxBytes}
	var p *schedule.Program
	r := v.guard(files[0], func() *verify.Report {
		data, rep := v.read(files[0])
		if rep != nil {
			return rep
		}
		var derr error
		if p, _, derr = decode(data); derr != nil {
			rep := verify.InvalidReport(derr)
			rep.File = files[0]
			return rep
		}
		return nil
	})
	if r != nil {
		writeText(stderr, r, false)
		return reportStatus(r)
	}
	writeDot(stdout, p)
	return exitSafe
}

// fanoutLimit is the number of producer × consumer edges above which a sync
// object is drawn as its own node, so a counter with 128 producers and 128
// consumers adds 256 edges rather than 16384.
const fanoutLimit = 64

// writeDot renders p's task graph in Graphviz form. Tasks are nodes; an
// edge runs from each task that signals a counter to each task that waits
// on it (labelled with the threshold), and through a node for each barrier
// and semaphore. Each worker's static queue is a cluster whose tasks are
// linked by dotted edges in queue order; dynamic tasks stand outside. The
// output depends only on p.
func writeDot(w io.Writer, p *schedule.Program) {
	name := p.Name
	if name == "" {
		name = "schedule"
	}
	fmt.Fprintf(w, "digraph %s {\n", quote(name))
	fmt.Fprintf(w, "  label=%s;\n  labelloc=t;\n  rankdir=LR;\n  node [shape=box, fontsize=10];\n", quote(fmt.Sprintf("%s — %d tasks, %d workers on %s", name, len(p.Tasks), p.Launch.Workers, targetName(p))))

	queues := make(map[int32][]int)
	var workers []int32
	for i := range p.Tasks {
		wk := p.Tasks[i].Worker
		if wk == schedule.Dynamic {
			continue
		}
		if len(queues[wk]) == 0 {
			workers = append(workers, wk)
		}
		queues[wk] = append(queues[wk], i)
	}
	slices.Sort(workers)
	for _, wk := range workers {
		fmt.Fprintf(w, "  subgraph cluster_w%d {\n    label=%s;\n    style=rounded;\n", wk, quote(fmt.Sprintf("worker %d", wk)))
		for _, t := range queues[wk] {
			fmt.Fprintf(w, "    %s;\n", taskNode(p, t))
		}
		for k := 1; k < len(queues[wk]); k++ {
			fmt.Fprintf(w, "    t%d -> t%d [style=dotted, color=gray, arrowhead=none];\n", queues[wk][k-1], queues[wk][k])
		}
		fmt.Fprintln(w, "  }")
	}
	for i := range p.Tasks {
		if p.Tasks[i].Worker == schedule.Dynamic {
			fmt.Fprintf(w, "  %s;\n", taskNode(p, i))
		}
	}

	// Producers and consumers of each sync object, in task order.
	type use struct {
		task  int
		label string
	}
	nc, nb := len(p.Counters), len(p.Barriers)
	prod := make([][]use, nc+nb+len(p.Semaphores))
	cons := make([][]use, len(prod))
	for i := range p.Tasks {
		t := &p.Tasks[i]
		for _, s := range append(append([]schedule.Step(nil), t.Before...), t.After...) {
			o := int(s.Object)
			switch s.Kind {
			case schedule.Signal:
				prod[o] = append(prod[o], use{i, fmt.Sprintf("+%d", s.Value)})
			case schedule.Wait:
				cons[o] = append(cons[o], use{i, fmt.Sprintf("%s ≥ %d", p.Counters[o].Name, s.Value)})
			case schedule.Arrive:
				prod[nc+o] = append(prod[nc+o], use{i, "arrive"})
			case schedule.Sync:
				prod[nc+o] = append(prod[nc+o], use{i, "arrive"})
				cons[nc+o] = append(cons[nc+o], use{i, "sync"})
			case schedule.Release:
				prod[nc+nb+o] = append(prod[nc+nb+o], use{i, fmt.Sprintf("release %d", s.Value)})
			case schedule.Acquire:
				cons[nc+nb+o] = append(cons[nc+nb+o], use{i, fmt.Sprintf("acquire %d", s.Value)})
			}
		}
	}
	for o := range prod {
		var objName, shape, style string
		switch {
		case o < nc:
			objName, shape, style = p.Counters[o].Name, "ellipse", "solid"
		case o < nc+nb:
			objName, shape, style = p.Barriers[o-nc].Name, "diamond", "dashed"
		default:
			objName, shape, style = p.Semaphores[o-nc-nb].Name, "hexagon", "dashed"
		}
		ps, cs := prod[o], cons[o]
		if len(ps) == 0 && len(cs) == 0 {
			continue
		}
		if o < nc && len(ps)*len(cs) <= fanoutLimit {
			for _, c := range cs {
				for _, pr := range ps {
					if pr.task != c.task {
						fmt.Fprintf(w, "  t%d -> t%d [label=%s];\n", pr.task, c.task, quote(c.label))
					}
				}
			}
			continue
		}
		node := fmt.Sprintf("o%d", o)
		fmt.Fprintf(w, "  %s [shape=%s, label=%s];\n", node, shape, quote(objName))
		for _, pr := range ps {
			fmt.Fprintf(w, "  t%d -> %s [style=%s, label=%s];\n", pr.task, node, style, quote(pr.label))
		}
		for _, c := range cs {
			fmt.Fprintf(w, "  %s -> t%d [style=%s, label=%s];\n", node, c.task, style, quote(c.label))
		}
	}
	fmt.Fprintln(w, "}")
}

func targetName(p *schedule.Program) string {
	if p.Launch.Target != "" {
		return p.Launch.Target
	}
	return fmt.Sprintf("%d SMs", p.Launch.SMs)
}

func taskNode(p *schedule.Program, i int) string {
	t := &p.Tasks[i]
	lines := []string{t.Name}
	if t.Op != "" {
		lines = append(lines, t.Op)
	}
	attrs := "label=" + quote(lines...)
	if t.Worker == schedule.Dynamic {
		attrs += ", style=rounded"
	}
	return fmt.Sprintf("t%d [%s]", i, attrs)
}

// quote renders lines as one DOT double-quoted string, a line break
// between them. Each line is cleaned first (see clean): a newline, a
// control or bidi character in a name shows as its Go escape and cannot
// break the label or the graph.
func quote(lines ...string) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for i, s := range lines {
		if i > 0 {
			sb.WriteString(`\n`)
		}
		for _, r := range clean(s) {
			if r == '"' || r == '\\' {
				sb.WriteByte('\\')
			}
			sb.WriteRune(r)
		}
	}
	sb.WriteByte('"')
	return sb.String()
}
