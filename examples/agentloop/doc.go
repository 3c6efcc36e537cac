// Command agentloop is a schedule search loop of the kind AI agents run
// over megakernel tilings and placements, with megaproof as the frozen
// gate. Each round it proposes a variant of a small Llama-family decode
// schedule (tile size, strategy, split-KV, target, workers, epoch counters,
// page reuse), and some proposals are deliberately broken the way a
// careless search step breaks them (a dropped wait, a lowered threshold, an
// overlapping tile, a worker beyond the GPU's capacity). Every proposal goes
// through verify.Run: rejected ones print their finding code, message and
// witness length; accepted ones are kept and scored with a simple cost
// model, and the best is reported at the end.
//
// The loop is deterministic for a seed:
//
//	go run ./examples/agentloop -seed 1 -n 12
package main
