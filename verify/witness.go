package verify

import "github.com/megaproof/megaproof/schedule"

// events converts a trace of op indices into schedule events (normal form
// of schedule.Lower, where a body is a Begin and an End), then begins the
// bodies in flight (ops at which their threads stand).
func (f *form) events(trace []int32, inflight ...int32) []schedule.Event {
	step := make(map[int32]int32) // thread -> next schedule step
	out := make([]schedule.Event, 0, len(trace)+len(trace)/4+len(inflight))
	lowered := func(x int32) int32 {
		t := f.opThread[x]
		s, ok := step[t]
		if !ok {
			// Steps before x in its thread that are not in the trace cannot
			// exist: traces execute each thread in order from its start.
			s = 0
		}
		return s
	}
	for _, x := range trace {
		if f.is(x, fCheck) {
			continue // no step of the schedule
		}
		t := f.opThread[x]
		s := lowered(x)
		out = append(out, schedule.Event{Thread: t, Step: s})
		s++
		if f.kind[x] == kBody {
			out = append(out, schedule.Event{Thread: t, Step: s})
			s++
		}
		step[t] = s
	}
	for _, x := range inflight {
		t := f.opThread[x]
		out = append(out, schedule.Event{Thread: t, Step: lowered(x)})
		step[t] = lowered(x) + 1
	}
	return out
}
