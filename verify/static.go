package verify

import (
	"fmt"
	"slices"

	"github.com/megaproof/megaproof/internal/faults"
	"github.com/megaproof/megaproof/internal/geom"
	"github.com/megaproof/megaproof/schedule"
)

// checkStatic reports the findings that need no execution: accesses out of
// bounds, writes to read-only buffers, output bytes nobody writes, and a
// cooperative launch beyond the target's capacity.
func (v *verifier) checkStatic() { v.addStatic(len(v.findings), staticFindings(v.f.p)) }

// addStatic inserts static findings at position at of the findings; an
// inconclusive one (a coverage question beyond its budget) becomes an
// undecided question instead.
func (v *verifier) addStatic(at int, static []Finding) {
	kept := static[:0:0]
	for _, f := range static {
		if f.Code == CodeInconclusive {
			v.inconclusive(f.Message)
			continue
		}
		kept = append(kept, f)
	}
	v.findings = slices.Insert(v.findings, at, kept...)
}

// staticBudget bounds the pieces and work of deciding which bytes of one
// output buffer its writes cover (see internal/geom), for that many
// writes; tests shrink it.
var staticBudget = func(writes int) int64 { return 64*int64(writes) + 1<<21 }

// unwrittenRun returns the bytes [lo, hi) of the first run of an output of
// size bytes that no rectangle of written covers, the whole run: up to the
// next written byte or the output's end; found is false when every byte is
// written, ok false when deciding it needs more than the static budget.
func unwrittenRun(written []geom.Rect, size uint64) (lo, hi int64, found, ok bool) {
	whole := geom.Strided(geom.Pos(0, 0), size, 1, 0)
	gap, found, ok := geom.Uncovered([]geom.Rect{whole}, written, staticBudget(len(written)))
	if !found || !ok {
		return 0, 0, found, ok
	}
	return geom.Byte(0, gap.Lo), geom.Byte(0, geom.UncoveredUntil(written, gap.Lo, whole.End())), true, true
}

// unwrittenMessage is the message of an output-unwritten finding.
func unwrittenMessage(buffer string, lo, hi int64) string {
	return newMsg().s("output ").s(buffer).s(": bytes [").i(lo).s(", ").i(hi).s(") are never written").String()
}

// boundsMessage is the message of an out-of-bounds finding: task name's
// access (what: "reads" or "writes") of bytes [lo, hi) of buffer b. An
// access may end at 2^63 (offset and extent are each at most 2^62), which
// wraps hi below lo: it is then hi as an unsigned number; otherwise hi as
// it is, negative for an access that ends below the buffer.
func boundsMessage(name, what string, lo, hi int64, b *schedule.Buffer) string {
	m := newMsg().s("task ").q(name).s(" ").s(what).s(" bytes [").i(lo).s(", ")
	if hi < lo {
		m = m.u(uint64(hi))
	} else {
		m = m.i(hi)
	}
	return m.s(") of ").s(b.Name).s(", which has ").u(b.Size).s(" bytes").String()
}

// staticFindings computes the static findings. Bounds are decided on each
// access's extent, output coverage on the writes' rectangles: neither
// depends on rows or sizes. An output buffer whose coverage needs more than
// its budget gets an inconclusive finding (see addStatic).
func staticFindings(p *schedule.Program) []Finding {
	var out []Finding
	add := func(f Finding) { out = append(out, f) }
	l := p.Launch
	if l.Cooperative && l.Workers > capacity(l) {
		add(Finding{
			Code:    CodeOccupancy,
			Message: newMsg().s("cooperative launch of ").i(int64(l.Workers)).s(" workers exceeds the ").i(int64(l.Capacity())).s(" co-resident workers ").s(targetName(l.Target)).s(" holds (").i(int64(l.SMs)).s(" SMs × ").i(int64(l.PerSM)).s("); the launch fails").String(),
			Fix:     newMsg().s("launch at most ").i(int64(l.Capacity())).s(" workers").String(),
		})
	}
	rect := func(a schedule.Access) geom.Rect {
		return geom.Strided(geom.Pos(0, a.Offset), a.Length, a.Rows, a.Stride)
	}
	written := make([][]geom.Rect, len(p.Buffers))
	for i := range p.Tasks {
		t := &p.Tasks[i]
		check := func(a schedule.Access, what string) {
			r := rect(a)
			lo, hi := geom.Byte(0, r.Off), geom.Byte(0, r.End())
			b := &p.Buffers[a.Buffer]
			if lo < 0 || hi < 0 || uint64(hi) > b.Size+boundsSlack() {
				add(Finding{
					Code:    CodeOutOfBounds,
					Message: boundsMessage(t.Name, what, lo, hi, b),
					Tasks:   []int{i},
					Fix:     newMsg().s("keep the access within the ").u(b.Size).s(" bytes of ").s(b.Name).s(": fix its offset, length or rows").String(),
				})
			}
		}
		for _, a := range t.Reads {
			check(a, "reads")
		}
		for _, a := range t.Writes {
			check(a, "writes")
			b := &p.Buffers[a.Buffer]
			if b.Kind.ReadOnly() {
				add(Finding{
					Code:    CodeReadonlyWrite,
					Message: newMsg().s("task ").q(t.Name).s(" writes ").s(b.Kind.String()).s(" buffer ").s(b.Name).String(),
					Tasks:   []int{i},
					Fix:     "write a scratch or output buffer instead of " + b.Name + ", or declare " + b.Name + " a state buffer (initialized and writable)",
				})
			}
			if b.Kind == schedule.KindOutput {
				written[a.Buffer] = append(written[a.Buffer], rect(a))
			}
		}
	}
	for bi, b := range p.Buffers {
		if b.Kind != schedule.KindOutput || faults.On(faults.OutputUnwrittenSkipped) {
			continue
		}
		lo, hi, found, ok := unwrittenRun(written[bi], b.Size)
		switch {
		case !ok:
			add(Finding{Code: CodeInconclusive, Message: fmt.Sprintf("output %s: whether its writes cover every byte is not decided: the strides of its writes need more than %d pieces", b.Name, staticBudget(len(written[bi])))})
		case found:
			add(Finding{
				Code:    CodeOutputUnwritten,
				Message: unwrittenMessage(b.Name, lo, hi),
				Fix:     newMsg().s("write bytes [").i(lo).s(", ").i(hi).s(") of ").s(b.Name).s(" in the task that produces them (the missing tile)").String(),
			})
		}
	}
	return out
}
