package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/dominikbraun/graph"
	"github.com/dominikbraun/graph/draw"

	"github.com/megaproof/megaproof/schedule"
	"github.com/megaproof/megaproof/verify"
)

const dotDoc = `Prints the task graph of the schedule in FILE (- reads standard input; no
FILE: the embedded default schedule) in Graphviz form, with the findings
of verify drawn on it. Tasks are nodes, labelled with their name, op and
worker; an edge runs from each task that signals a counter to each task
that waits on it, labelled with the threshold, and through a node for each
barrier, each semaphore and each counter with many producers and
consumers; dotted gray edges give each worker's static queue order. A
racing pair of tasks is joined by a red edge named by its finding code;
the tasks of a deadlock or any other finding are outlined in red. Names
are printed as Go-quoted text, without control characters. Pipe it to
dot -Tsvg.

A real schedule has thousands of tasks, more than Graphviz lays out in
reasonable time: --focus, --worker and --layer select tasks, and --radius
adds every task within that many sync edges of them (either direction).
--focus takes a task name, or finding:N for the tasks of the N-th finding
(from 0, in verify's order). --worker N selects the tasks of worker N's
static queue. --layer N selects the tasks whose "layer" parameter is N;
in a program where no task has a "layer" parameter, the tasks at
happens-before depth N, the length of the longest chain of sync edges
that reaches the task (0 for a task that waits for no other task). Given
together, the selectors intersect.`

// dotOptions are the flags of dot.
type dotOptions struct {
	focus  string
	worker *int32
	layer  *int64
	radius int
}

func runDot(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("dot", "[flags] [FILE]", dotDoc, stderr)
	maxBytes := int64(defaultMaxBytes)
	var o dotOptions
	fs.Var((*byteSize)(&maxBytes), "max-bytes", "the input size `limit`, in bytes (suffixes KiB, MiB, GiB)")
	fs.StringVar(&o.focus, "focus", "", "draw the neighbourhood of a `TASK` name or of finding:N, the N-th finding")
	fs.IntVar(&o.radius, "radius", 1, "with a selector, add the tasks within this many sync edges of the selected `n`")
	fs.Func("worker", "draw the tasks of worker `N`'s static queue (and their neighbourhood)", func(s string) error {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil || n < 0 {
			return errors.New("want a worker number")
		}
		w := int32(n)
		o.worker = &w
		return nil
	})
	fs.Func("layer", "draw the tasks of layer `N`: its \"layer\" parameter, else its happens-before depth", func(s string) error {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return errors.New("want a layer number")
		}
		o.layer = &n
		return nil
	})
	files, status, done := parseFlags(fs, args, 0, 1)
	if done {
		return status
	}
	if o.radius < 0 {
		fmt.Fprintln(stderr, "megaproof dot: --radius must not be negative")
		return exitInvalid
	}
	v := &verifier{stdin: stdin, stdout: stdout, stderr: stderr, maxBytes: maxBytes}
	file := defaultFile
	if len(files) == 1 {
		file = files[0]
	}
	p, r := loadProgram(v, file)
	if r != nil {
		writeText(stderr, r, false)
		return reportStatus(r)
	}
	var rep *verify.Report
	if r := v.guard(file, func() *verify.Report {
		res, err := runProgram(context.Background(), p, verify.Config{MaxStates: verify.DefaultMaxStates})
		if err != nil {
			return &verify.Report{File: file, Verdict: verify.Inconclusive}
		}
		rep = res.Report(p)
		return nil
	}); r != nil {
		writeText(stderr, r, false)
		return reportStatus(r)
	}
	g := newTaskGraph(p)
	sel, err := g.selectTasks(rep, o)
	if err != nil {
		fmt.Fprintf(stderr, "megaproof dot: %v\n", err)
		return exitInvalid
	}
	bw := bufio.NewWriterSize(stdout, 1<<16)
	err = g.draw(bw, rep, sel)
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		fmt.Fprintf(stderr, "megaproof dot: %v\n", err)
		return exitInvalid
	}
	return exitSafe
}

// loadProgram reads and decodes one file, or the embedded default for
// defaultFile; a report says why it cannot.
func loadProgram(v *verifier, file string) (*schedule.Program, *verify.Report) {
	var p *schedule.Program
	r := v.guard(file, func() *verify.Report {
		var err error
		if file == defaultFile {
			p, err = defaultProgram()
		} else {
			data, rep := v.read(file, nil)
			if rep != nil {
				return rep
			}
			p, _, err = decode(data, verify.Config{MaxStates: verify.DefaultMaxStates})
		}
		if err != nil {
			rep := verify.InvalidReport(err)
			rep.File = file
			return rep
		}
		return nil
	})
	return p, r
}

// fanoutLimit is the number of producer × consumer edges above which a sync
// object is drawn as its own node, so a counter with 128 producers and 128
// consumers adds 256 edges rather than 16384.
const fanoutLimit = 64

// syncUse is one step of a task on a sync object.
type syncUse struct {
	task  int
	label string
}

// taskGraph is a program's sync structure on dense task ids: the
// producers and consumers of each sync object (counters, then barriers,
// then semaphores) and, from them, each task's sync neighbours.
type taskGraph struct {
	p          *schedule.Program
	prod, cons [][]syncUse
	adj        [][]int32 // sync neighbours, either direction, deduplicated
	succ       [][]int32 // sync successors
	names      map[string]int
}

// index is the index of the task named name, -1 if there is none.
func (g *taskGraph) index(name string) int {
	if i, ok := g.names[name]; ok {
		return i
	}
	return -1
}

func newTaskGraph(p *schedule.Program) *taskGraph {
	nc, nb := len(p.Counters), len(p.Barriers)
	g := &taskGraph{p: p, prod: make([][]syncUse, nc+nb+len(p.Semaphores))}
	g.cons = make([][]syncUse, len(g.prod))
	g.names = make(map[string]int, len(p.Tasks))
	for i := range p.Tasks {
		t := &p.Tasks[i]
		if _, dup := g.names[t.Name]; !dup {
			g.names[t.Name] = i
		}
		for _, steps := range [][]schedule.Step{t.Before, t.After} {
			for _, s := range steps {
				o := int(s.Object)
				switch s.Kind {
				case schedule.Signal:
					g.prod[o] = append(g.prod[o], syncUse{i, fmt.Sprintf("+%d", s.Value)})
				case schedule.Wait:
					g.cons[o] = append(g.cons[o], syncUse{i, fmt.Sprintf("%s ≥ %d", p.Counters[o].Name, s.Value)})
				case schedule.Arrive:
					g.prod[nc+o] = append(g.prod[nc+o], syncUse{i, "arrive"})
				case schedule.Sync:
					g.prod[nc+o] = append(g.prod[nc+o], syncUse{i, "arrive"})
					g.cons[nc+o] = append(g.cons[nc+o], syncUse{i, "sync"})
				case schedule.Release:
					g.prod[nc+nb+o] = append(g.prod[nc+nb+o], syncUse{i, fmt.Sprintf("release %d", s.Value)})
				case schedule.Acquire:
					g.cons[nc+nb+o] = append(g.cons[nc+nb+o], syncUse{i, fmt.Sprintf("acquire %d", s.Value)})
				}
			}
		}
	}
	g.adj = make([][]int32, len(p.Tasks))
	g.succ = make([][]int32, len(p.Tasks))
	for o := range g.prod {
		for _, c := range g.cons[o] {
			for _, pr := range g.prod[o] {
				if pr.task != c.task {
					g.succ[pr.task] = append(g.succ[pr.task], int32(c.task))
					g.adj[pr.task] = append(g.adj[pr.task], int32(c.task))
					g.adj[c.task] = append(g.adj[c.task], int32(pr.task))
				}
			}
		}
	}
	for i := range g.adj {
		slices.Sort(g.adj[i])
		g.adj[i] = slices.Compact(g.adj[i])
		slices.Sort(g.succ[i])
		g.succ[i] = slices.Compact(g.succ[i])
	}
	return g
}

// depths returns each task's happens-before depth, the length of the
// longest chain of sync edges reaching it, or -1 for a task on or behind
// a cycle of sync edges (a deadlocked program).
func (g *taskGraph) depths() []int64 {
	n := len(g.p.Tasks)
	indeg := make([]int, n)
	for _, ss := range g.succ {
		for _, s := range ss {
			indeg[s]++
		}
	}
	depth := make([]int64, n)
	queue := make([]int32, 0, n)
	for i := range n {
		if indeg[i] == 0 {
			queue = append(queue, int32(i))
		}
	}
	for k := 0; k < len(queue); k++ {
		t := queue[k]
		for _, s := range g.succ[t] {
			depth[s] = max(depth[s], depth[t]+1)
			if indeg[s]--; indeg[s] == 0 {
				queue = append(queue, s)
			}
		}
	}
	for i := range n {
		if indeg[i] > 0 {
			depth[i] = -1
		}
	}
	return depth
}

// layers returns each task's layer: its "layer" parameter (-1 without
// one) when some task has one, else its happens-before depth.
func (g *taskGraph) layers() []int64 {
	has := false
	for i := range g.p.Tasks {
		if _, ok := g.p.Tasks[i].Params.Get("layer"); ok {
			has = true
			break
		}
	}
	if !has {
		return g.depths()
	}
	out := make([]int64, len(g.p.Tasks))
	for i := range g.p.Tasks {
		l, ok := g.p.Tasks[i].Params.Get("layer")
		if !ok {
			l = -1
		}
		out[i] = l
	}
	return out
}

// selectTasks returns the tasks to draw (nil: all of them): those the
// selectors of o pick, all of them intersected, and every task within
// o.radius sync edges of one.
func (g *taskGraph) selectTasks(rep *verify.Report, o dotOptions) ([]bool, error) {
	if o.focus == "" && o.worker == nil && o.layer == nil {
		return nil, nil
	}
	n := len(g.p.Tasks)
	seed := make([]bool, n)
	for i := range seed {
		seed[i] = true
	}
	if o.focus != "" {
		picked, err := g.focus(rep, o.focus)
		if err != nil {
			return nil, err
		}
		for i := range seed {
			seed[i] = seed[i] && picked[i]
		}
	}
	if o.worker != nil {
		if int(*o.worker) >= g.p.Launch.Workers {
			return nil, fmt.Errorf("--worker %d: the launch has %d workers", *o.worker, g.p.Launch.Workers)
		}
		for i := range seed {
			seed[i] = seed[i] && g.p.Tasks[i].Worker == *o.worker
		}
	}
	if o.layer != nil {
		ls := g.layers()
		for i := range seed {
			seed[i] = seed[i] && ls[i] == *o.layer
		}
	}
	sel := slices.Clone(seed)
	frontier := make([]int32, 0)
	for i, s := range seed {
		if s {
			frontier = append(frontier, int32(i))
		}
	}
	if len(frontier) == 0 {
		return nil, errors.New("the selectors pick no task")
	}
	for r := 0; r < o.radius && len(frontier) > 0; r++ {
		var next []int32
		for _, t := range frontier {
			for _, u := range g.adj[t] {
				if !sel[u] {
					sel[u] = true
					next = append(next, u)
				}
			}
		}
		frontier = next
	}
	return sel, nil
}

// focus picks the task named name, or the tasks of finding:N.
func (g *taskGraph) focus(rep *verify.Report, name string) ([]bool, error) {
	picked := make([]bool, len(g.p.Tasks))
	if i := g.index(name); i >= 0 {
		picked[i] = true
		return picked, nil
	}
	rest, ok := strings.CutPrefix(name, "finding:")
	if !ok {
		return nil, fmt.Errorf("--focus %s: no task of that name (finding:N names a finding)", quoteName(name))
	}
	k, err := strconv.Atoi(rest)
	if err != nil || k < 0 || rep == nil || k >= len(rep.Findings) {
		nf := 0
		if rep != nil {
			nf = len(rep.Findings)
		}
		return nil, fmt.Errorf("--focus %s: the program has %d findings", quoteName(name), nf)
	}
	f := &rep.Findings[k]
	any := false
	for _, t := range f.Tasks {
		if i := g.index(t); i >= 0 {
			picked[i], any = true, true
		}
	}
	if !any {
		return nil, fmt.Errorf("--focus %s: finding %s names no task", quoteName(name), f.Code)
	}
	return picked, nil
}

// Colours of findings on the graph.
const (
	dotRaceColor  = "red"
	dotStuckColor = "red"
)

// draw renders the tasks of sel (all of them for nil) in Graphviz form:
// the graph is built with dominikbraun/graph and written by its draw.DOT.
func (g *taskGraph) draw(w io.Writer, rep *verify.Report, sel []bool) error {
	p := g.p
	in := func(t int) bool { return sel == nil || sel[t] }
	name := p.Name
	if name == "" {
		name = "schedule"
	}
	dg := graph.New(graph.StringHash, graph.Directed())

	// Findings: racing pairs and outlined tasks.
	outline := map[int]string{}
	type pair struct{ a, b int }
	races := map[pair]string{}
	if rep != nil {
		for k, f := range rep.Findings {
			ids := make([]int, 0, len(f.Tasks))
			for _, t := range f.Tasks {
				if i := g.index(t); i >= 0 {
					ids = append(ids, i)
				}
			}
			tag := fmt.Sprintf("finding:%d %s", k, f.Code)
			if strings.HasPrefix(f.Code, "race.") && len(ids) >= 2 && ids[0] != ids[1] {
				races[pair{ids[0], ids[1]}] = tag
			}
			for _, i := range ids {
				if outline[i] == "" {
					outline[i] = tag
				}
			}
		}
	}

	drawn := 0
	for i := range p.Tasks {
		if !in(i) {
			continue
		}
		drawn++
		t := &p.Tasks[i]
		lines := []string{t.Name}
		if t.Op != "" {
			lines = append(lines, t.Op)
		}
		if t.Worker == schedule.Dynamic {
			lines = append(lines, "dynamic")
		} else {
			lines = append(lines, fmt.Sprintf("worker %d", t.Worker))
		}
		attrs := map[string]string{"label": dotValue(lines...), "shape": "box", "fontsize": "10"}
		if t.Worker == schedule.Dynamic {
			attrs["style"] = "rounded"
		}
		if tag, ok := outline[i]; ok {
			attrs["color"] = dotStuckColor
			attrs["penwidth"] = "3"
			attrs["tooltip"] = dotValue(tag)
			attrs["class"] = "finding"
		}
		if err := dg.AddVertex(taskID(i), graph.VertexAttributes(attrs)); err != nil {
			return err
		}
	}
	addEdge := func(from, to string, attrs map[string]string) error {
		err := dg.AddEdge(from, to, graph.EdgeAttributes(attrs), graph.EdgeWeight(1))
		if errors.Is(err, graph.ErrEdgeAlreadyExists) {
			e, _ := dg.Edge(from, to)
			if l := e.Properties.Attributes["label"]; l != "" && attrs["label"] != "" && !strings.Contains(l, attrs["label"]) {
				e.Properties.Attributes["label"] = l + ", " + attrs["label"]
			}
			return nil
		}
		return err
	}

	nc, nb := len(p.Counters), len(p.Barriers)
	for o := range g.prod {
		var objName, shape, style string
		switch {
		case o < nc:
			objName, shape, style = p.Counters[o].Name, "ellipse", "solid"
		case o < nc+nb:
			objName, shape, style = p.Barriers[o-nc].Name, "diamond", "dashed"
		default:
			objName, shape, style = p.Semaphores[o-nc-nb].Name, "hexagon", "dashed"
		}
		var ps, cs []syncUse
		for _, u := range g.prod[o] {
			if in(u.task) {
				ps = append(ps, u)
			}
		}
		for _, u := range g.cons[o] {
			if in(u.task) {
				cs = append(cs, u)
			}
		}
		if len(ps) == 0 && len(cs) == 0 {
			continue
		}
		if o < nc && len(g.prod[o])*len(g.cons[o]) <= fanoutLimit {
			for _, c := range cs {
				for _, pr := range ps {
					if pr.task != c.task {
						if err := addEdge(taskID(pr.task), taskID(c.task), map[string]string{"label": dotValue(c.label), "fontsize": "9"}); err != nil {
							return err
						}
					}
				}
			}
			continue
		}
		node := "o" + strconv.Itoa(o)
		label := objName
		if sel != nil && (len(ps) < len(g.prod[o]) || len(cs) < len(g.cons[o])) {
			label += fmt.Sprintf(" (%d of %d producers, %d of %d consumers drawn)", len(ps), len(g.prod[o]), len(cs), len(g.cons[o]))
		}
		if err := dg.AddVertex(node, graph.VertexAttributes(map[string]string{"shape": shape, "label": dotValue(label), "fontsize": "10"})); err != nil {
			return err
		}
		for _, pr := range ps {
			if err := addEdge(taskID(pr.task), node, map[string]string{"style": style, "label": dotValue(pr.label)}); err != nil {
				return err
			}
		}
		for _, c := range cs {
			if err := addEdge(node, taskID(c.task), map[string]string{"style": style, "label": dotValue(c.label)}); err != nil {
				return err
			}
		}
	}

	// Queue order among the drawn tasks of each worker, where no sync edge
	// already joins them.
	last := map[int32]int{}
	for i := range p.Tasks {
		wk := p.Tasks[i].Worker
		if !in(i) || wk == schedule.Dynamic {
			continue
		}
		if prev, ok := last[wk]; ok {
			if err := addEdge(taskID(prev), taskID(i), map[string]string{"style": "dotted", "color": "gray", "arrowhead": "none"}); err != nil {
				return err
			}
		}
		last[wk] = i
	}

	for pr, tag := range races {
		if !in(pr.a) || !in(pr.b) {
			continue
		}
		attrs := map[string]string{"color": dotRaceColor, "fontcolor": dotRaceColor, "penwidth": "3", "dir": "both", "constraint": "false", "label": dotValue(tag), "class": "race"}
		if err := dg.AddEdge(taskID(pr.a), taskID(pr.b), graph.EdgeAttributes(attrs), graph.EdgeWeight(1)); err != nil {
			if !errors.Is(err, graph.ErrEdgeAlreadyExists) {
				return err
			}
			// The pair is also ordered one way in the graph: draw the
			// race the other way round.
			if err := addEdge(taskID(pr.b), taskID(pr.a), attrs); err != nil {
				return err
			}
		}
	}

	title := fmt.Sprintf("%s — %d tasks, %d workers on %s", name, len(p.Tasks), p.Launch.Workers, targetName(p))
	if sel != nil {
		title += fmt.Sprintf(" — %d tasks drawn", drawn)
	}
	if rep != nil {
		title += fmt.Sprintf(" — %s", rep.Verdict)
		switch n := len(rep.Findings); {
		case n == 1:
			title += ", 1 finding"
		case n > 1:
			title += fmt.Sprintf(", %d findings", n)
		}
	}
	var buf bytes.Buffer
	if err := draw.DOT(dg, &buf,
		draw.GraphAttribute("label", dotValue(title)),
		draw.GraphAttribute("labelloc", "t"),
		draw.GraphAttribute("rankdir", "LR")); err != nil {
		return err
	}
	_, err := w.Write(sortStatements(buf.Bytes()))
	return err
}

// sortStatements puts the statements draw.DOT writes (in the order of a
// map, so differently on each run) in a fixed order: by source id, each
// node before its edges, edges by target. The output then depends only on
// the program and the flags, and so does the layout Graphviz makes of it.
// Every statement is one line: values are cleaned, so none holds a
// newline.
func sortStatements(dot []byte) []byte {
	lines := bytes.Split(dot, []byte("\n"))
	type stmt struct {
		src, dst idKey
		line     []byte
	}
	var head, tail [][]byte
	var stmts []stmt
	for _, l := range lines {
		t := bytes.TrimSpace(l)
		switch {
		case len(t) == 0:
		case t[0] == '"':
			src, rest := cutID(t)
			st := stmt{src: src, line: t}
			if r := bytes.TrimSpace(rest); bytes.HasPrefix(r, []byte("->")) {
				st.dst, _ = cutID(bytes.TrimSpace(r[2:]))
			}
			stmts = append(stmts, st)
		case len(stmts) == 0:
			head = append(head, t)
		default:
			tail = append(tail, t)
		}
	}
	slices.SortFunc(stmts, func(a, b stmt) int {
		if c := a.src.cmp(b.src); c != 0 {
			return c
		}
		return a.dst.cmp(b.dst)
	})
	var out bytes.Buffer
	for i, l := range head {
		if i > 0 {
			out.WriteString("  ")
		}
		out.Write(l)
		out.WriteByte('\n')
	}
	for _, s := range stmts {
		out.WriteString("  ")
		out.Write(s.line)
		out.WriteByte('\n')
	}
	for _, l := range tail {
		out.Write(l)
		out.WriteByte('\n')
	}
	return out.Bytes()
}

// idKey orders the node ids of the graph: task nodes (t12) before object
// nodes (o3), each by number; the zero key (no target: a node statement)
// first.
type idKey struct {
	kind byte
	n    int
}

func (a idKey) cmp(b idKey) int {
	if a.kind != b.kind {
		if a.kind == 0 || b.kind == 0 {
			return int(a.kind) - int(b.kind)
		}
		if a.kind == 't' {
			return -1
		}
		return 1
	}
	return a.n - b.n
}

// cutID reads the quoted node id that starts line.
func cutID(line []byte) (idKey, []byte) {
	end := bytes.IndexByte(line[1:], '"')
	if end < 0 {
		return idKey{}, nil
	}
	id := line[1 : end+1]
	k := idKey{kind: 'o'}
	if len(id) > 0 {
		k.kind = id[0]
		k.n, _ = strconv.Atoi(string(id[1:]))
	}
	return k, line[end+2:]
}

func taskID(i int) string { return "t" + strconv.Itoa(i) }

func targetName(p *schedule.Program) string {
	if p.Launch.Target != "" {
		return p.Launch.Target
	}
	return fmt.Sprintf("%d SMs", p.Launch.SMs)
}

// dotValue renders lines as the inside of one DOT double-quoted string
// (draw.DOT adds the quotes and escapes nothing), a line break between
// them. Each line is cleaned first (see clean): a newline, a control or
// bidi character in a name shows as its Go escape and cannot break the
// label or the graph.
func dotValue(lines ...string) string {
	q := quote(lines...)
	return q[1 : len(q)-1]
}

// quote renders lines as one DOT double-quoted string, a line break
// between them. Each line is cleaned first (see clean).
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
