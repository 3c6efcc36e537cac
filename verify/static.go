package verify

import (
	"fmt"
	"slices"

	"github.com/megaproof/megaproof/schedule"
)

// checkStatic reports the findings that need no execution: accesses out of
// bounds, writes to read-only buffers, output bytes nobody writes, and a
// cooperative launch beyond the target's capacity.
func (v *verifier) checkStatic() { v.findings = append(v.findings, staticFindings(v.f.p)...) }

func staticFindings(p *schedule.Program) []Finding {
	var out []Finding
	add := func(f Finding) { out = append(out, f) }
	l := p.Launch
	if l.Cooperative && l.Workers > l.Capacity() {
		add(Finding{
			Code:    CodeOccupancy,
			Message: fmt.Sprintf("cooperative launch of %d workers exceeds the %d co-resident workers %s holds (%d SMs × %d); the launch fails", l.Workers, l.Capacity(), targetName(l.Target), l.SMs, l.PerSM),
			Fix:     fmt.Sprintf("launch at most %d workers", l.Capacity()),
		})
	}
	written := make([][][2]int64, len(p.Buffers))
	for i := range p.Tasks {
		t := &p.Tasks[i]
		check := func(a schedule.Access, what string) {
			lo, hi := a.Extent()
			b := &p.Buffers[a.Buffer]
			if lo < 0 || uint64(hi) > b.Size {
				add(Finding{
					Code:    CodeOutOfBounds,
					Message: fmt.Sprintf("task %q %s bytes [%d, %d) of %s, which has %d bytes", t.Name, what, lo, hi, b.Name, b.Size),
					Tasks:   []int{i},
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
					Message: fmt.Sprintf("task %q writes %s buffer %s", t.Name, b.Kind, b.Name),
					Tasks:   []int{i},
					Fix:     fmt.Sprintf("write a scratch or output buffer instead of %s", b.Name),
				})
			}
			if b.Kind == schedule.KindOutput {
				for lo, hi := range a.Spans() {
					written[a.Buffer] = append(written[a.Buffer], [2]int64{lo, hi})
				}
			}
		}
	}
	for bi, b := range p.Buffers {
		if b.Kind != schedule.KindOutput {
			continue
		}
		if gap, ok := firstGap(written[bi], 0, int64(b.Size)); ok {
			add(Finding{
				Code:    CodeOutputUnwritten,
				Message: fmt.Sprintf("output %s: bytes [%d, %d) are never written", b.Name, gap[0], gap[1]),
				Fix:     "add the missing tile",
			})
		}
	}
	return out
}

// firstGap returns the first sub-range of [lo, hi) not covered by spans.
func firstGap(spans [][2]int64, lo, hi int64) ([2]int64, bool) {
	slices.SortFunc(spans, func(a, b [2]int64) int { return int(min(max(a[0]-b[0], -1), 1)) })
	at := lo
	for _, s := range spans {
		if s[0] > at {
			return [2]int64{at, min(s[0], hi)}, at < hi
		}
		at = max(at, s[1])
		if at >= hi {
			return [2]int64{}, false
		}
	}
	if at < hi {
		return [2]int64{at, hi}, true
	}
	return [2]int64{}, false
}
