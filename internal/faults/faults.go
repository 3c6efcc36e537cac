package faults

// Variant is one deliberately wrong verifier; 0 is the correct one.
type Variant uint8

// The variants, each named by what the wrong verifier does.
const (
	None                   Variant = iota // the correct verifier
	RelaxedSignalRelease                  // a relaxed signal counts as a release
	RelaxedWaitAcquire                    // a relaxed wait counts as an acquire
	ScopeIgnored                          // every scope counts as gpu, and race.scope is not checked
	PartialJoinAll                        // a partial wait joins every signal run before it, like an all-join
	UninitSkipped                         // uninitialized reads are not checked
	AdjacentOverlap                       // the pair sweep takes adjacent byte ranges as overlapping
	SweepOneByteMissed                    // the pair sweep misses overlaps of exactly one byte
	ShadowOneByteMissed                   // the shadow pass misses overlaps of exactly one byte
	ResidencyIgnored                      // every worker counts as resident from the start
	KOfNAsNOfN                            // a k-of-N wait counts as waiting for all N signals in the proof clocks
	FencesIgnored                         // fences give relaxed signals and waits no release or acquire
	BarrierGenOffByOne                    // a barrier's k-th sync waits for generation k−1
	BarrierAsCycle                        // a barrier deadlock is coded deadlock.cycle
	OOBOffByOne                           // an access that ends one byte past its buffer is in bounds
	CapacityOffByOne                      // the target holds one more co-resident worker than it does
	OverflowByOneMissed                   // a counter one past its width has not overflowed
	OutputUnwrittenSkipped                // output bytes nobody writes are not checked
	LargePathStatic                       // from 65,536 tasks, the static findings computed beside the greedy run are lost
	SweepIgnoresRows                      // the pair sweep compares columns only, whatever the rows
	CTAFenceAsGPU                         // a cta fence orders like a gpu fence
	BarrierPartiesIgnored                 // a barrier counts one party, whatever its parties
	RelaxedWaitEarly                      // a relaxed wait acquires where it reads, not at its fence
	RelaxedAddLate                        // a relaxed signal releases where it adds, not at its fence
	numVariants
)

// Info documents one variant.
type Info struct {
	Variant Variant
	Name    string // stable, e.g. "relaxed-signal-release"
	Doc     string // what the wrong verifier does
	Where   string // the hook's place in verify
}

var infos = [numVariants]Info{
	{None, "none", "the correct verifier", ""},
	{RelaxedSignalRelease, "relaxed-signal-release", "a relaxed signal counts as a release", "form.go lowerStep"},
	{RelaxedWaitAcquire, "relaxed-wait-acquire", "a relaxed wait counts as an acquire", "form.go lowerStep"},
	{ScopeIgnored, "scope-ignored", "every scope orders like gpu, and race.scope is not checked", "form.go lowerStep, scope.go"},
	{PartialJoinAll, "partial-join-all", "a partial wait joins the clocks of every signal the greedy run made before it, as an all-join does", "clocks.go joins"},
	{UninitSkipped, "uninit-skipped", "reads of scratch and output bytes are not checked", "races.go checkUninitialized"},
	{AdjacentOverlap, "adjacent-overlap", "the pair sweep takes byte ranges that only touch as overlapping", "races.go conflict sweep"},
	{SweepOneByteMissed, "sweep-one-byte-missed", "the pair sweep misses two ranges that share exactly one byte", "races.go conflict sweep"},
	{ShadowOneByteMissed, "shadow-one-byte-missed", "the shadow pass misses an access that shares exactly one byte with an earlier one", "shadow.go read, write"},
	{ResidencyIgnored, "residency-ignored", "every worker of a non-cooperative launch counts as resident from the start", "engine.go, form.go, taint.go"},
	{KOfNAsNOfN, "k-of-n-as-n-of-n", "a wait for k of N signals counts, in the proof clocks, as one whose crossing needs every one of them", "clocks.go crossing"},
	{FencesIgnored, "fences-ignored", "fences give relaxed signals and waits no release or acquire", "form.go linkPoints"},
	{BarrierGenOffByOne, "barrier-generation-off-by-one", "a thread's k-th sync on a barrier waits for generation k−1", "form.go lowerStep"},
	{BarrierAsCycle, "barrier-as-cycle", "a thread stuck at a barrier is reported as deadlock.cycle", "deadlock.go deadlocks"},
	{OOBOffByOne, "oob-off-by-one", "an access ending one byte past its buffer is in bounds", "static.go"},
	{CapacityOffByOne, "capacity-off-by-one", "the target keeps one more worker co-resident than SMs × blocks per SM", "static.go, engine.go"},
	{OverflowByOneMissed, "overflow-by-one-missed", "a counter that reaches exactly one past its width's maximum has not overflowed", "engine.go add"},
	{OutputUnwrittenSkipped, "output-unwritten-skipped", "output bytes no task writes are not checked", "static.go"},
	{LargePathStatic, "large-path-static", "in programs of 65,536 tasks or more, the static findings (bounds, read-only writes, unwritten output, capacity) computed beside the greedy run are lost", "run.go joinStatic"},
	{SweepIgnoresRows, "sweep-ignores-rows", "the pair sweep compares the column ranges of two accesses, not their rows", "races.go conflict sweep"},
	{CTAFenceAsGPU, "cta-fence-as-gpu", "a cta-scoped fence orders across workers like a gpu fence", "form.go lowerStep"},
	{BarrierPartiesIgnored, "barrier-parties-ignored", "a barrier's generation completes with one arrival, whatever its parties", "form.go lowerStep"},
	{RelaxedWaitEarly, "relaxed-wait-early", "a relaxed wait followed by a fence acquires at the wait, before the fence", "form.go linkPoints"},
	{RelaxedAddLate, "relaxed-add-late", "a relaxed signal after a fence releases at the signal, after the fence", "form.go linkPoints"},
}

// Variants returns every wrong variant (not None), in order.
func Variants() []Info { return append([]Info(nil), infos[1:]...) }

// Lookup returns the variant of a name.
func Lookup(name string) (Variant, bool) {
	for _, in := range infos {
		if in.Name == name {
			return in.Variant, true
		}
	}
	return None, false
}

// String returns the variant's name.
func (v Variant) String() string {
	if v < numVariants {
		return infos[v].Name
	}
	return "faults.Variant(?)"
}
