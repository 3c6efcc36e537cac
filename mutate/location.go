package mutate

import (
	"reflect"
	"slices"

	"github.com/megaproof/megaproof/schedule"
)

// locating declares, per operator, the codes of [Operator.Locates]. The
// declaration rests on the seed being free of findings:
//
//   - shift-tile, widen-oob, kv-beyond-cache and write-readonly change the
//     accesses of one task and no synchronization, so two unchanged tasks
//     keep their footprints and their order: every race between them, and
//     every out-of-bounds or read-only write of one of them, was already a
//     finding of the seed. Each race.raw, race.war, race.waw,
//     race.unsynchronized, out-of-bounds and readonly-write finding of the
//     mutant therefore names the changed task.
//   - raise-threshold raises one wait past its counter's initial value plus
//     every signal; no other wait or signal changes, and every wait of a
//     seed that runs to completion is satisfiable, so the only wait a
//     deadlock.unsatisfiable finding can name is the raised one.
//
// Other operators change synchronization, and with it the order of tasks
// they do not touch (a dropped wait can leave two downstream tasks
// unordered), or program-wide state (capacity, counters, buffers): their
// findings need not name a changed task, and they declare nothing.
var locating = map[string][]string{
	"shift-tile":      footprintCodes,
	"widen-oob":       footprintCodes,
	"kv-beyond-cache": footprintCodes,
	"write-readonly":  footprintCodes,
	"raise-threshold": {"deadlock.unsatisfiable"},
}

var footprintCodes = []string{"out-of-bounds", "race.raw", "race.unsynchronized", "race.war", "race.waw", "readonly-write"}

// Changed returns the indices of the tasks of mutant q that differ from
// the task of the same index in p, in increasing order, or nil when the
// two programs do not have the same number of tasks (no index names the
// same task in both then).
func Changed(p, q *schedule.Program) []int {
	if p == nil || q == nil || len(p.Tasks) != len(q.Tasks) {
		return nil
	}
	var out []int
	for i := range q.Tasks {
		if !reflect.DeepEqual(p.Tasks[i], q.Tasks[i]) {
			out = append(out, i)
		}
	}
	return out
}

func setLocates(ops []*Operator) {
	for _, op := range ops {
		if codes, ok := locating[op.Name]; ok {
			op.Locates = slices.Clone(codes)
		}
	}
}
