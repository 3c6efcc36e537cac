package verify

import (
	"github.com/megaproof/megaproof/internal/faults"
	"github.com/megaproof/megaproof/internal/geom"
	"github.com/megaproof/megaproof/schedule"
)

// Hooks of the deliberately wrong verifiers of internal/faults. Each hook
// site in the analyses is one line that calls faults.On or one of these
// helpers; in a build without the megaproof_faults tag faults.On is a
// constant false, these helpers inline to the correct expression, and the
// hooks cost nothing.

// faultStrengthens reports whether a relaxed step of kind k is taken as
// a release signal or an acquire wait.
func faultStrengthens(k schedule.StepKind) bool {
	return k == schedule.Signal && faults.On(faults.RelaxedSignalRelease) ||
		k == schedule.Wait && faults.On(faults.RelaxedWaitAcquire)
}

// faultWidens reports whether a step of kind k is taken to order across
// workers whatever its scope.
func faultWidens(k schedule.StepKind) bool {
	return faults.On(faults.ScopeIgnored) || k == schedule.Fence && faults.On(faults.CTAFenceAsGPU)
}

// barrierTarget is the arrivals a thread's gen-th sync on a barrier of
// the given parties waits for: gen × parties.
func barrierTarget(gen, parties uint64) uint64 {
	if faults.On(faults.BarrierGenOffByOne) {
		gen--
	}
	if faults.On(faults.BarrierPartiesIgnored) {
		parties = 1
	}
	return gen * parties
}

// capacity is the number of workers the target keeps co-resident.
func capacity(l schedule.Launch) int {
	if faults.On(faults.CapacityOffByOne) {
		return l.Capacity() + 1
	}
	return l.Capacity()
}

// pastMax reports whether a counter value v is past the counter's maximum.
func pastMax(v, max uint64) bool {
	if faults.On(faults.OverflowByOneMissed) {
		return v > max && v-max > 1
	}
	return v > max
}

// boundsSlack is how far past its buffer an access may end unreported: 0.
func boundsSlack() uint64 {
	if faults.On(faults.OOBOffByOne) {
		return 1
	}
	return 0
}

// barrierCode is the code of a thread stuck at a barrier.
func barrierCode() string {
	if faults.On(faults.BarrierAsCycle) {
		return CodeDeadlockCycle
	}
	return CodeDeadlockBarrier
}

// releasePoint is a relaxed add x's release point, given the latest
// cross-worker fence before it (or -1).
func releasePoint(x, fence int32) int32 {
	if faults.On(faults.RelaxedAddLate) && fence >= 0 {
		return x
	}
	return fence
}

// acquirePoint is a relaxed wait x's acquire point, given the next
// cross-worker fence after it (or -1).
func acquirePoint(x, fence int32) int32 {
	if faults.On(faults.RelaxedWaitEarly) && fence >= 0 {
		return x
	}
	return fence
}

// rectsMeet reports whether two rectangles of one arena share a byte, as
// the pair analysis decides it.
func rectsMeet(a, b geom.Rect) bool {
	switch {
	case faults.On(faults.SweepIgnoresRows):
		return a.Off < b.End() && b.Off < a.End()
	case faults.On(faults.AdjacentOverlap) && (a.End() == b.Off || b.End() == a.Off):
		return true
	case faults.On(faults.SweepOneByteMissed) && a.Rows == 1 && b.Rows == 1 && min(a.End(), b.End())-max(a.Off, b.Off) == 1:
		return false
	}
	return geom.Overlap(a, b)
}

// spansTouch reports whether the sweep keeps an open span ending at hi
// for a span starting at lo (they overlap, or touch under a fault).
func spansTouch(hi, lo int64) bool {
	return hi > lo || faults.On(faults.AdjacentOverlap) && hi == lo
}

// spansMeet reports whether two spans of the sweep, whose columns meet,
// overlap as the sweep decides it.
func spansMeet(o, s span) bool {
	if faults.On(faults.SweepOneByteMissed) && min(o.hi, s.hi)-max(o.lo, s.lo) == 1 {
		return false
	}
	return o.rlo < s.rhi && s.rlo < o.rhi || faults.On(faults.SweepIgnoresRows)
}

// shadowMisses reports whether the shadow pass overlooks segment s for an
// access of columns [lo, hi).
func shadowMisses(s *segment, lo, hi int64) bool {
	return faults.On(faults.ShadowOneByteMissed) && min(s.hi, hi)-max(s.lo, lo) == 1
}

// largeStatic is what joinStatic keeps of the static findings computed
// beside the greedy run: all of them, but none from 65,536 tasks on under
// the large-program fault.
func largeStatic(p *schedule.Program, static []Finding) []Finding {
	if faults.On(faults.LargePathStatic) && len(p.Tasks) >= 1<<16 {
		return nil
	}
	return static
}

// residencyIgnored reports whether every worker is taken as resident from
// the start.
func residencyIgnored() bool { return faults.On(faults.ResidencyIgnored) }
