package llamagen

// Named is a named configuration.
type Named struct {
	Name   string
	Config Config
	// Big marks configurations of tens of thousands of tasks or more, which
	// tests sample only without -short.
	Big bool
	// Reason says what the configuration exercises.
	Reason string
}

// Configs returns the table of named configurations the tests verify safe.
// It covers every model, target and strategy, split-KV, batching (2-D
// tiles), epoch counters, page reuse, tiles that straddle head groups, and
// the first and a late decode position.
func Configs() []Named {
	m := func(name string) Model { v, _ := LookupModel(name); return v }
	t := func(name string) Target { v, _ := LookupTarget(name); return v }
	return []Named{
		{Name: "smollm2-h100-rr", Reason: "smallest model, static round-robin queues",
			Config: Config{Model: m("smollm2-135m"), Target: t("h100"), Strategy: RoundRobin, Tile: 64}},
		{Name: "smollm2-l4-epoch-split3-t96", Reason: "tiles straddling kv-head groups, layer-scaled thresholds, uneven split-KV",
			Config: Config{Model: m("smollm2-135m"), Target: t("l4"), Strategy: RoundRobin, Tile: 96, Splits: 3, Pos: 100, Epoch: true}},
		{Name: "qwen05b-a100-lpt-split4", Reason: "LPT queues, split-KV with combine, 2 workers per SM",
			Config: Config{Model: m("qwen2.5-0.5b"), Target: t("a100"), Strategy: Balanced, Tile: 128, Splits: 4}},
		{Name: "qwen05b-l40s-barrier-pages1-pos0", Reason: "grid barriers, one page slot reused by every layer, window of one row",
			Config: Config{Model: m("qwen2.5-0.5b"), Target: t("l40s"), Strategy: Barrier, Tile: 256, Pages: 1, Pos: 0}},
		{Name: "tinyllama-l4-dynamic", Reason: "dynamic dispatch",
			Config: Config{Model: m("tinyllama-1.1b"), Target: t("l4"), Strategy: Dynamic, Tile: 128}},
		{Name: "llama32-1b-h200-barrier", Reason: "per-layer grid barriers",
			Config: Config{Model: m("llama-3.2-1b"), Target: t("h200"), Strategy: Barrier, Tile: 128}},
		{Name: "llama32-1b-h200-epoch-pages2", Reason: "page reuse with credit counters, epoch counters",
			Config: Config{Model: m("llama-3.2-1b"), Target: t("h200"), Strategy: RoundRobin, Tile: 128, Epoch: true, Pages: 2}},
		{Name: "llama32-1b-rtx5090-dynamic-b4-split2", Reason: "batched decode (2-D tiles), dynamic dispatch, split-KV",
			Config: Config{Model: m("llama-3.2-1b"), Target: t("rtx5090"), Strategy: Dynamic, Tile: 256, Batch: 4, Splits: 2, Pos: 2047}},
		{Name: "llama3-8b-b200-lpt-b2", Reason: "over 10^4 tasks, LPT queues, batch 2",
			Config: Config{Model: m("llama-3-8b"), Target: t("b200"), Strategy: Balanced, Tile: 128, Batch: 2}},
		{Name: "llama3-8b-h100-dynamic-epoch-pages3", Big: true, Reason: "dynamic dispatch with page reuse and epoch counters",
			Config: Config{Model: m("llama-3-8b"), Target: t("h100"), Strategy: Dynamic, Tile: 128, Epoch: true, Pages: 3, Splits: 2}},
		{Name: "llama2-13b-h100-rr-t32", Big: true, Reason: "about 10^5 tasks",
			Config: Config{Model: m("llama-2-13b"), Target: t("h100"), Strategy: RoundRobin, Tile: 32, Pos: 4095}},
	}
}
