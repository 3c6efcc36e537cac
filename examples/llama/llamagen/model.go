package llamagen

import (
	"fmt"
	"sort"
	"strings"
)

// Model is the shape of a Llama-family decoder.
type Model struct {
	Name         string
	Hidden       int // model width
	Intermediate int // MLP width
	Layers       int
	Heads        int // query heads
	KVHeads      int // key/value heads (grouped-query attention when fewer than Heads)
	HeadDim      int
	Vocab        int
	// Eps is RMSNorm's ε and Theta the rotary base (0: 1e-5 and 10000).
	// They reach the schedule only with Config.Numeric.
	Eps   float64
	Theta float64
	// Tied reports that the language-model head shares the embedding's
	// weights (SmolLM2, Llama-3.2); the schedule reads w.lm_head either way.
	Tied bool
}

// eps and theta with their defaults.
func (m Model) eps() float64 {
	if m.Eps == 0 {
		return 1e-5
	}
	return m.Eps
}

func (m Model) theta() float64 {
	if m.Theta == 0 {
		return 10000
	}
	return m.Theta
}

// Models lists the built-in model shapes, smallest first.
func Models() []Model {
	return []Model{
		{Name: "smollm2-135m", Hidden: 576, Intermediate: 1536, Layers: 30, Heads: 9, KVHeads: 3, HeadDim: 64, Vocab: 49152, Eps: 1e-5, Theta: 100000, Tied: true},
		{Name: "qwen2.5-0.5b", Hidden: 896, Intermediate: 4864, Layers: 24, Heads: 14, KVHeads: 2, HeadDim: 64, Vocab: 151936, Eps: 1e-6, Theta: 1000000, Tied: true},
		{Name: "tinyllama-1.1b", Hidden: 2048, Intermediate: 5632, Layers: 22, Heads: 32, KVHeads: 4, HeadDim: 64, Vocab: 32000, Eps: 1e-5, Theta: 10000},
		{Name: "llama-3.2-1b", Hidden: 2048, Intermediate: 8192, Layers: 16, Heads: 32, KVHeads: 8, HeadDim: 64, Vocab: 128256, Eps: 1e-5, Theta: 500000, Tied: true},
		{Name: "llama-3-8b", Hidden: 4096, Intermediate: 14336, Layers: 32, Heads: 32, KVHeads: 8, HeadDim: 128, Vocab: 128256, Eps: 1e-5, Theta: 500000},
		{Name: "llama-2-13b", Hidden: 5120, Intermediate: 13824, Layers: 40, Heads: 40, KVHeads: 40, HeadDim: 128, Vocab: 32000, Eps: 1e-5, Theta: 10000},
	}
}

// Target is a GPU: its SM count and how many megakernel workers (thread
// blocks of a persistent interpreter using most of an SM's shared memory)
// fit on one SM.
type Target struct {
	Name  string
	SMs   int
	PerSM int
}

// Capacity is the number of workers the target keeps co-resident.
func (t Target) Capacity() int { return t.SMs * t.PerSM }

// Targets lists the built-in GPUs.
func Targets() []Target {
	return []Target{
		{Name: "h100", SMs: 132, PerSM: 1},
		{Name: "h200", SMs: 132, PerSM: 1},
		{Name: "b200", SMs: 148, PerSM: 1},
		{Name: "a100", SMs: 108, PerSM: 2},
		{Name: "l4", SMs: 58, PerSM: 2},
		{Name: "l40s", SMs: 142, PerSM: 2},
		{Name: "rtx5090", SMs: 170, PerSM: 2},
	}
}

// LookupModel returns the built-in model with the given name (case and
// punctuation insensitive: "Llama-3.2-1B", "llama32-1b").
func LookupModel(name string) (Model, error) {
	for _, m := range Models() {
		if squash(m.Name) == squash(name) {
			return m, nil
		}
	}
	var names []string
	for _, m := range Models() {
		names = append(names, m.Name)
	}
	return Model{}, fmt.Errorf("llamagen: unknown model %q (have %s)", name, strings.Join(names, ", "))
}

// LookupTarget returns the built-in target with the given name ("H200",
// "rtx-5090").
func LookupTarget(name string) (Target, error) {
	for _, t := range Targets() {
		if squash(t.Name) == squash(name) {
			return t, nil
		}
	}
	var names []string
	for _, t := range Targets() {
		names = append(names, t.Name)
	}
	sort.Strings(names)
	return Target{}, fmt.Errorf("llamagen: unknown target %q (have %s)", name, strings.Join(names, ", "))
}

func squash(s string) string {
	var sb strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

// Strategy is how tasks are placed on workers and synchronized.
type Strategy uint8

// Strategies.
const (
	// RoundRobin pins the i-th task of a global topological order to worker
	// i mod workers (Hazy's "rr").
	RoundRobin Strategy = iota
	// Balanced sorts each stage's tasks by cost, longest first, and pins
	// each to the least-loaded worker (LPT list scheduling).
	Balanced
	// Dynamic leaves every task unpinned: any worker claims it once ready
	// (MPK's and AutoMegaKernel's VM dispatch).
	Dynamic
	// Barrier pins tasks round-robin and orders stages with per-layer grid
	// barriers instead of fine-grained counters.
	Barrier
)

var strategyNames = [...]string{RoundRobin: "round-robin", Balanced: "balanced", Dynamic: "dynamic", Barrier: "barrier"}

func (s Strategy) String() string {
	if int(s) < len(strategyNames) {
		return strategyNames[s]
	}
	return fmt.Sprintf("Strategy(%d)", uint8(s))
}

// ParseStrategy parses a strategy name: "round-robin" (or "rr"),
// "balanced" ("lpt"), "dynamic", "barrier".
func ParseStrategy(s string) (Strategy, error) {
	switch squash(s) {
	case "roundrobin", "rr", "static":
		return RoundRobin, nil
	case "balanced", "lpt":
		return Balanced, nil
	case "dynamic", "dyn":
		return Dynamic, nil
	case "barrier", "barriers", "grid":
		return Barrier, nil
	}
	return 0, fmt.Errorf("llamagen: unknown strategy %q (have round-robin, balanced, dynamic, barrier)", s)
}
