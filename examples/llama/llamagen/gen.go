package llamagen

import (
	"fmt"
	"math"

	"github.com/megaproof/megaproof/schedule"
)

// FusedNormElems is the most batch × hidden inputs that a fused stage
// normalizes in one task (Config.Fuse): the runner keeps them in 16 KiB of
// shared memory (runner.MaxNormElems).
const FusedNormElems = 8192

// FusedCombineRows is the most partial rows (batch × heads × splits) an o
// tile merges with Config.FuseCombine: the runner keeps a coefficient of
// each in shared memory (runner.MaxCombineRows).
const FusedCombineRows = 1024

// Element sizes in bytes.
const (
	actBytes   = 2 // bf16 activations and weights
	accBytes   = 4 // fp32 logits and split-KV partials
	tokenBytes = 4 // int32 token ids
	pairBytes  = 8 // an fp32 logit and its int32 index
)

// Config selects what [Generate] builds. The zero value of every knob but
// Model and Target has a default.
type Config struct {
	Model  Model
	Target Target
	// Strategy places and synchronizes tasks.
	Strategy Strategy
	// Tile is the number of output columns per GEMV tile (default 64).
	Tile int
	// AutoTile chooses the GEMV tiles for the target instead of Tile: per
	// stage, the smallest multiple of 16 columns that gives at most one
	// tile per worker, counting the q, k and v projections together and
	// gate and up together (each pair of stages runs at once), so that
	// every stage spreads over the whole launch with as few, as large,
	// tasks as that allows.
	AutoTile bool
	// Batch is the number of sequences decoded together (default 1); with
	// more than one, activations are matrices and tiles are 2-D.
	Batch int
	// Pos is the decode position: the step appends KV row Pos and attends
	// over rows [0, Pos] (default 511; see PosSet).
	Pos int
	// PosSet makes Pos be used as given, 0 included (without it a zero Pos
	// means the default).
	PosSet bool
	// Numeric writes the scalars that runner's numeric bodies need as task
	// params: dims (batch, hidden, vocab, head_dim, heads, kv_heads,
	// heads_per_group, max_seq, out, width), RMSNorm's eps_e9, the rotary
	// theta, the attention scale_e9 (1/√head_dim), the split index, and
	// the lm-head tiles' fp32 output rounded to bf16 (out_elem 4,
	// round_bf16 1). Synchronization and footprints are the same with or
	// without it.
	Numeric bool
	// MaxSeq is the number of rows of each KV-cache plane (default the
	// smallest power of two above Pos, at least 1024).
	MaxSeq int
	// Splits splits each head's attention window into that many chunks
	// with a combine step (split-KV, flash-decoding); 0 or 1 attends over
	// the whole window in one task.
	Splits int
	// SplitChunk, when positive, splits a window into min(Splits,
	// ⌈window/SplitChunk⌉) chunks: short windows stay whole and long ones
	// spread over more workers. The heap layout is that of Splits at every
	// position, so one generation runs on one heap.
	SplitChunk int
	// Workers is the number of workers launched (default the target's
	// capacity, SMs × PerSM).
	Workers int
	// Cooperative requests a cooperative launch. Barrier always uses one.
	Cooperative bool
	// Epoch shares one counter per kind across layers, with thresholds
	// scaled by the layer (MPK's iteration-scaled thresholds), instead of
	// fresh counters per layer (Hazy's [layer, opcode, index] counters).
	Epoch bool
	// Pages, when positive, places each layer's scratch in slot
	// layer mod Pages of one arena, so that pages alias across layers; the
	// writers of a reused slot wait on a credit counter that the slot's
	// previous layer signals when it is done (bounded pipelining depth).
	Pages int
	// Fuse emits each layer in five dependent stages instead of twelve:
	// RMSNorm fused into the GEMVs that read it (q/k/v: norm_gemv; gate
	// and up with SiLU·mul: norm_gate_up; the lm head), RoPE and the KV
	// append in one task per kv-head group (rope_append), and the residual
	// adds fused into the o and down projections (gemv_add); the lm-head
	// tiles (norm_gemv_argmax) each pick their best token and one task
	// picks among their pairs (argmax_tiles). The numbers computed are the
	// same; the tasks between the stages, and their
	// hops, are gone. It needs Batch × Hidden ≤ FusedNormElems and no
	// Pages.
	Fuse bool
	// FuseCombine, with Fuse and split-KV attention, merges the partials
	// in the o projection's tiles (combine_gemv_add) instead of in combine
	// tasks: every o tile merges all heads itself, into the input it
	// projects, so the stage of combine tasks and its hop are gone. The
	// numbers computed are the same. It needs Batch × Heads × HeadDim ≤
	// FusedNormElems and Batch × Heads × Splits ≤ FusedCombineRows.
	FuseCombine bool
	// RowAttention emits attention per sequence at Batch > 1: each head's
	// attention (each split chunk and combine with split-KV) is Batch
	// tasks, one per sequence (params row and rows), instead of one task
	// that loops over the sequences, so that the batch spreads over the
	// workers. The numbers computed are the same.
	RowAttention bool

	reqSplits int // Splits before clipping to the window
}

func (c *Config) setDefaults() error {
	m := c.Model
	if m.Hidden < 1 || m.Intermediate < 1 || m.Layers < 1 || m.Heads < 1 || m.KVHeads < 1 || m.HeadDim < 1 || m.Vocab < 1 {
		return fmt.Errorf("llamagen: model %q has a non-positive dimension", m.Name)
	}
	if m.Heads%m.KVHeads != 0 {
		return fmt.Errorf("llamagen: model %q: %d heads are not a multiple of %d kv heads", m.Name, m.Heads, m.KVHeads)
	}
	if c.Target.SMs < 1 || c.Target.PerSM < 1 {
		return fmt.Errorf("llamagen: target %q needs SMs and PerSM", c.Target.Name)
	}
	if c.Tile == 0 {
		c.Tile = 64
	}
	if c.Batch == 0 {
		c.Batch = 1
	}
	if c.Pos == 0 && !c.PosSet {
		c.Pos = 511
	}
	if c.MaxSeq == 0 {
		c.MaxSeq = 1024
		for c.MaxSeq <= c.Pos {
			c.MaxSeq *= 2
		}
	}
	if c.Splits == 0 {
		c.Splits = 1
	}
	if c.Workers == 0 {
		c.Workers = c.Target.Capacity()
	}
	switch {
	case c.Tile < 1:
		return fmt.Errorf("llamagen: tile %d", c.Tile)
	case c.Batch < 1:
		return fmt.Errorf("llamagen: batch %d", c.Batch)
	case c.Pos < 0 || c.Pos >= c.MaxSeq:
		return fmt.Errorf("llamagen: position %d outside a KV cache of %d rows", c.Pos, c.MaxSeq)
	case c.Splits < 1:
		return fmt.Errorf("llamagen: %d splits", c.Splits)
	case c.Workers < 1:
		return fmt.Errorf("llamagen: %d workers", c.Workers)
	case c.SplitChunk < 0:
		return fmt.Errorf("llamagen: split chunk %d", c.SplitChunk)
	case c.Pages < 0:
		return fmt.Errorf("llamagen: %d pages", c.Pages)
	case c.Strategy > Barrier:
		return fmt.Errorf("llamagen: unknown strategy %d", c.Strategy)
	case c.Fuse && c.Batch*m.Hidden > FusedNormElems:
		return fmt.Errorf("llamagen: fused stages normalize batch %d × hidden %d = %d inputs in a task, more than %d", c.Batch, m.Hidden, c.Batch*m.Hidden, FusedNormElems)
	case c.Fuse && c.Pages > 0:
		return fmt.Errorf("llamagen: fused stages do not reuse page slots (pages %d)", c.Pages)
	case c.FuseCombine && !c.Fuse:
		return fmt.Errorf("llamagen: the combine in the o tiles needs fused stages")
	case c.FuseCombine && c.Batch*m.Heads*m.HeadDim > FusedNormElems:
		return fmt.Errorf("llamagen: o tiles that combine hold batch %d × heads %d × head_dim %d = %d inputs, more than %d", c.Batch, m.Heads, m.HeadDim, c.Batch*m.Heads*m.HeadDim, FusedNormElems)
	case c.FuseCombine && c.Batch*m.Heads*c.Splits > FusedCombineRows:
		return fmt.Errorf("llamagen: o tiles that combine merge batch %d × heads %d × splits %d = %d partial rows, more than %d", c.Batch, m.Heads, c.Splits, c.Batch*m.Heads*c.Splits, FusedCombineRows)
	}
	c.reqSplits = c.Splits
	if c.SplitChunk > 0 {
		c.Splits = min(c.Splits, (c.Pos+c.SplitChunk)/c.SplitChunk)
	}
	if c.Splits > c.Pos+1 {
		c.Splits = c.Pos + 1
	}
	if c.Strategy == Barrier {
		c.Cooperative = true
	}
	return nil
}

// Name is a short description of the configuration, used as the program's
// name: "llama-3.2-1b/h200/round-robin/t64/b1/p511".
func (c Config) Name() string {
	_ = c.setDefaults() // name what Generate would build; errors surface there
	tile := fmt.Sprintf("t%d", c.Tile)
	if c.AutoTile {
		tile = "tauto"
	}
	s := fmt.Sprintf("%s/%s/%s/%s/b%d/p%d", c.Model.Name, c.Target.Name, c.Strategy, tile, c.Batch, c.Pos)
	if c.Splits > 1 {
		s += fmt.Sprintf("/split%d", c.Splits)
	}
	if c.Epoch {
		s += "/epoch"
	}
	if c.Pages > 0 {
		s += fmt.Sprintf("/pages%d", c.Pages)
	}
	if c.Fuse {
		s += "/fused"
	}
	if c.FuseCombine {
		s += "/o-combine"
	}
	if c.RowAttention && c.Batch > 1 {
		s += "/rows"
	}
	return s
}

// Generate builds the decode-step schedule that cfg describes.
func Generate(cfg Config) (*schedule.Program, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	launch := schedule.Launch{
		Target:      cfg.Target.Name,
		SMs:         cfg.Target.SMs,
		PerSM:       cfg.Target.PerSM,
		Workers:     cfg.Workers,
		Cooperative: cfg.Cooperative,
	}
	g := &gen{cfg: cfg, b: schedule.NewBuilder(cfg.Name(), launch)}
	g.graph()
	g.lower()
	return g.b.Build()
}

// DefaultConfig is the configuration of [Default]: Llama-3.2-1B on an H200,
// 256-column tiles, static round-robin queues, decode position 511.
func DefaultConfig() Config {
	m, _ := LookupModel("llama-3.2-1b")
	t, _ := LookupTarget("h200")
	return Config{Model: m, Target: t, Strategy: RoundRobin, Tile: 256, Pos: 511}
}

// Default returns the schedule of [DefaultConfig], a few thousand tasks.
func Default() (*schedule.Program, error) { return Generate(DefaultConfig()) }

// The generator first builds a task graph (nodes in a topological order,
// each with exact footprints, the producer groups it signals and the
// signal counts it needs), then lowers it for the strategy.

type group struct {
	name  string // counter name without epoch sharing
	kind  string // counter name with epoch sharing
	total uint64 // signals into the group
}

type need struct {
	g int32
	n uint64
}

type access struct {
	buf                       schedule.BufferRef
	off, length, rows, stride uint64
}

type param struct {
	key string
	v   int64
}

type node struct {
	name    string
	op      string
	params  []param
	layer   int // -1 outside layers
	stage   int // antichain index, increasing along every dependency
	reads   []access
	writes  []access
	needs   []need
	signals []int32
	slot    bool // writes scratch in a reused page slot
	release bool // releases its layer's page slot when done
	cost    uint64
}

type gen struct {
	cfg    Config
	b      *schedule.Builder
	nodes  []node
	groups []group
	stage  int
}

func (g *gen) group(layer int, kind string) int32 {
	name := kind
	if layer >= 0 {
		name = fmt.Sprintf("L%d.%s", layer, kind)
	}
	g.groups = append(g.groups, group{name: name, kind: kind})
	return int32(len(g.groups) - 1)
}

func (g *gen) add(n node) *node {
	n.stage = g.stage
	for _, a := range n.reads {
		n.cost += a.length * max(a.rows, 1)
	}
	for _, a := range n.writes {
		n.cost += a.length * max(a.rows, 1)
	}
	for _, s := range n.signals {
		g.groups[s].total++
	}
	g.nodes = append(g.nodes, n)
	return &g.nodes[len(g.nodes)-1]
}

// next starts a new stage: every node added afterwards may depend on nodes
// of earlier stages only.
func (g *gen) next() { g.stage++ }

// num returns ps when the configuration writes numeric params, else nil.
func (g *gen) num(ps ...param) []param {
	if !g.cfg.Numeric {
		return nil
	}
	return append([]param{{"batch", int64(g.cfg.Batch)}}, ps...)
}

// e9 is a real param in fixed point (× 10⁹).
func e9(v float64) int64 { return int64(math.Round(v * 1e9)) }

// all is the need of every signal of group gr so far.
func (g *gen) all(gr int32) need { return need{gr, g.groups[gr].total} }

func whole(buf schedule.BufferRef, size uint64) access { return access{buf: buf, length: size} }

// cols is the column slice [c, c+n) of a row-major [rows, width] matrix of
// elem-byte elements.
func cols(buf schedule.BufferRef, rows, width, c, n, elem int) access {
	a := access{buf: buf, off: uint64(c * elem), length: uint64(n * elem)}
	if rows > 1 {
		a.rows, a.stride = uint64(rows), uint64(width*elem)
	}
	return a
}

// tiles splits [0, n) into tiles of at most t: it returns the start of
// each tile and n itself.
func tiles(n, t int) []int {
	var s []int
	for c := 0; c < n; c += t {
		s = append(s, c)
	}
	return append(s, n)
}

// layerBufs are one layer's activations.
type layerBufs struct {
	h, q, k, v, qr, kr, part, lse, att, o, xm, h2, gate, up, act, d, xout schedule.BufferRef
}

type scratchSpec struct {
	name string
	size uint64
	ref  *schedule.BufferRef
}

func (g *gen) graph() {
	c, m, b := g.cfg, g.cfg.Model, g.b
	B := c.Batch
	qw, kvw := m.Heads*m.HeadDim, m.KVHeads*m.HeadDim
	rep := m.Heads / m.KVHeads
	S := c.MaxSeq
	planes := uint64(B * m.KVHeads * S * m.HeadDim * actBytes)
	vec := func(n, elem int) uint64 { return uint64(B * n * elem) }

	token := b.Buffer("token", schedule.KindInput, vec(1, tokenBytes))
	embedW := b.Buffer("w.embed", schedule.KindWeight, uint64(m.Vocab*m.Hidden*actBytes))
	rope := b.Buffer("w.rope", schedule.KindWeight, uint64(S*m.HeadDim*actBytes))
	x0 := b.Buffer("x0", schedule.KindScratch, vec(m.Hidden, actBytes))

	// Per-layer scratch, in a fixed order so that page slots line up.
	specs := func(l *layerBufs) []scratchSpec {
		s := []scratchSpec{
			{"h", vec(m.Hidden, actBytes), &l.h},
			{"q", vec(qw, actBytes), &l.q},
			{"k", vec(kvw, actBytes), &l.k},
			{"v", vec(kvw, actBytes), &l.v},
			{"qr", vec(qw, actBytes), &l.qr},
			{"kr", vec(kvw, actBytes), &l.kr},
		}
		// With numeric params a window clipped to one split keeps the
		// (unused) partial buffers, so that every decode position of a
		// split-KV configuration has one heap layout.
		sb := c.Splits
		if c.Numeric && c.reqSplits > sb {
			sb = c.reqSplits
		}
		if sb > 1 {
			s = append(s,
				scratchSpec{"part", vec(m.Heads*sb*m.HeadDim, accBytes), &l.part},
				scratchSpec{"lse", vec(m.Heads*sb, accBytes), &l.lse})
		}
		return append(s,
			scratchSpec{"att", vec(qw, actBytes), &l.att},
			scratchSpec{"o", vec(m.Hidden, actBytes), &l.o},
			scratchSpec{"xm", vec(m.Hidden, actBytes), &l.xm},
			scratchSpec{"h2", vec(m.Hidden, actBytes), &l.h2},
			scratchSpec{"gate", vec(m.Intermediate, actBytes), &l.gate},
			scratchSpec{"up", vec(m.Intermediate, actBytes), &l.up},
			scratchSpec{"act", vec(m.Intermediate, actBytes), &l.act},
			scratchSpec{"d", vec(m.Hidden, actBytes), &l.d},
			scratchSpec{"x", vec(m.Hidden, actBytes), &l.xout})
	}
	var arena schedule.ArenaRef
	var slotSize uint64
	if c.Pages > 0 {
		var probe layerBufs
		for _, s := range specs(&probe) {
			slotSize += align(s.size)
		}
		arena = b.Arena("pages", slotSize*uint64(c.Pages))
	}

	// Embedding: the row read depends on the token's value, so the task
	// reads the whole table.
	embedG := g.group(-1, "embed")
	g.add(node{name: "embed", op: "embed", layer: -1,
		params:  g.num(param{"hidden", int64(m.Hidden)}, param{"vocab", int64(m.Vocab)}),
		reads:   []access{whole(token, vec(1, tokenBytes)), whole(embedW, uint64(m.Vocab*m.Hidden*actBytes))},
		writes:  []access{whole(x0, vec(m.Hidden, actBytes))},
		signals: []int32{embedG}})
	g.next()

	x, xG := x0, embedG
	iTile, qkvTile := c.tileFor(2*m.Intermediate), c.tileFor(qw+2*kvw)
	if c.Fuse { // one task computes a tile of gate and of up
		iTile = c.tileFor(m.Intermediate)
	}
	qT, kvT, hT, iT := tiles(qw, qkvTile), tiles(kvw, qkvTile), tiles(m.Hidden, c.tileFor(m.Hidden)), tiles(m.Intermediate, iTile)
	window := c.Pos + 1
	// headP are the head-shape params, then extra.
	headP := func(extra ...any) []param {
		ps := []param{{"heads", int64(m.Heads)}, {"kv_heads", int64(m.KVHeads)}, {"heads_per_group", int64(rep)}, {"head_dim", int64(m.HeadDim)}}
		for i := 0; i+1 < len(extra); i += 2 {
			ps = append(ps, param{extra[i].(string), extra[i+1].(int64)})
		}
		return ps
	}
	attnP := append(headP("max_seq", int64(S)), param{"scale_e9", e9(1 / math.Sqrt(float64(m.HeadDim)))})
	// P is the number of partials laid out per head: Splits, or with
	// numeric params the requested splits (the window may clip Splits).
	P := c.Splits
	if c.Numeric && c.reqSplits > P {
		P = c.reqSplits
	}
	var partP []param
	if P != c.Splits {
		partP = g.num(param{"part_splits", int64(P)})[1:]
	}
	for l := 0; l < m.Layers; l++ {
		var lb layerBufs
		var off uint64 = slotSize * uint64(l%max(c.Pages, 1))
		for _, s := range specs(&lb) {
			name := fmt.Sprintf("L%d.%s", l, s.name)
			if c.Pages > 0 {
				*s.ref = b.BufferIn(name, schedule.KindScratch, s.size, arena, off)
				off += align(s.size)
			} else {
				*s.ref = b.Buffer(name, schedule.KindScratch, s.size)
			}
		}
		lw := func(n string, size int) schedule.BufferRef {
			return b.Buffer(fmt.Sprintf("w.L%d.%s", l, n), schedule.KindWeight, uint64(size*actBytes))
		}
		norm1W, wq, wk, wv := lw("norm1", m.Hidden), lw("wq", qw*m.Hidden), lw("wk", kvw*m.Hidden), lw("wv", kvw*m.Hidden)
		wo, norm2W := lw("wo", m.Hidden*qw), lw("norm2", m.Hidden)
		wg, wu, wd := lw("wgate", m.Intermediate*m.Hidden), lw("wup", m.Intermediate*m.Hidden), lw("wdown", m.Hidden*m.Intermediate)
		kc := b.Buffer(fmt.Sprintf("L%d.kcache", l), schedule.KindState, planes)
		vc := b.Buffer(fmt.Sprintf("L%d.vcache", l), schedule.KindState, planes)
		slot := c.Pages > 0
		name := func(f string, a ...any) string { return fmt.Sprintf("L%d.", l) + fmt.Sprintf(f, a...) }

		// RMSNorm 1 (fused: in the q/k/v tiles).
		normP := g.num(param{"hidden", int64(m.Hidden)}, param{"eps_e9", e9(m.eps())})
		qkvIn, qkvNeed, qkvOp := lb.h, g.all(xG), "gemv"
		var qkvNorm []access
		if c.Fuse {
			qkvIn, qkvOp, qkvNorm = x, "norm_gemv", []access{whole(norm1W, uint64(m.Hidden*actBytes))}
		} else {
			n1G := g.group(l, "norm1")
			g.add(node{name: name("norm1"), op: "rmsnorm", layer: l, slot: slot, params: normP,
				reads:  []access{whole(x, vec(m.Hidden, actBytes)), whole(norm1W, uint64(m.Hidden*actBytes))},
				writes: []access{whole(lb.h, vec(m.Hidden, actBytes))},
				needs:  []need{g.all(xG)}, signals: []int32{n1G}})
			g.next()
			qkvNeed = g.all(n1G)
		}
		epsP := g.num(param{"eps_e9", e9(m.eps())})
		if epsP != nil {
			epsP = epsP[1:]
		}

		// q/k/v GEMV tiles; each signals the kv-head group(s) it overlaps.
		qG, kG, vG := make([]int32, m.KVHeads), make([]int32, m.KVHeads), make([]int32, m.KVHeads)
		for h := range m.KVHeads {
			qG[h], kG[h], vG[h] = g.group(l, fmt.Sprintf("q.g%d", h)), g.group(l, fmt.Sprintf("k.g%d", h)), g.group(l, fmt.Sprintf("v.g%d", h))
		}
		// gemvOp emits the tiles of one GEMV stage as op, each reading the
		// input, its weight rows and then extra(lo, hi), with params eps.
		gemvOp := func(op, what string, bounds []int, in schedule.BufferRef, inW int, w, out schedule.BufferRef, outW int, needs []need, sig func(lo, hi int) []int32, eps []param, extra func(lo, hi int) []access) {
			for t := 0; t+1 < len(bounds); t++ {
				lo, hi := bounds[t], bounds[t+1]
				reads := []access{whole(in, vec(inW, actBytes)), {buf: w, off: uint64(lo * inW * actBytes), length: uint64((hi - lo) * inW * actBytes)}}
				if extra != nil {
					reads = append(reads, extra(lo, hi)...)
				}
				g.add(node{name: name("%s.t%d", what, t), op: op, layer: l, slot: slot,
					params: append(append([]param{{"n_off", int64(lo)}, {"n", int64(hi - lo)}, {"k", int64(inW)}}, g.num(param{"out", int64(outW)})...), eps...),
					reads:  reads, writes: []access{cols(out, B, outW, lo, hi-lo, actBytes)},
					needs: needs, signals: sig(lo, hi)})
			}
		}
		gemv := func(what string, bounds []int, in schedule.BufferRef, inW int, w, out schedule.BufferRef, outW int, needs []need, sig func(lo, hi int) []int32) {
			gemvOp("gemv", what, bounds, in, inW, w, out, outW, needs, sig, nil, nil)
		}
		fixed := func(as []access) func(int, int) []access { return func(int, int) []access { return as } }
		var qkvEps []param
		var qkvExtra func(int, int) []access
		if c.Fuse {
			qkvEps, qkvExtra = epsP, fixed(qkvNorm)
		}
		byGroup := func(gs []int32, width int) func(lo, hi int) []int32 {
			return func(lo, hi int) []int32 {
				var r []int32
				for h := range m.KVHeads {
					if lo < (h+1)*width && hi > h*width {
						r = append(r, gs[h])
					}
				}
				return r
			}
		}
		gemvOp(qkvOp, "q", qT, qkvIn, m.Hidden, wq, lb.q, qw, []need{qkvNeed}, byGroup(qG, rep*m.HeadDim), qkvEps, qkvExtra)
		gemvOp(qkvOp, "k", kvT, qkvIn, m.Hidden, wk, lb.k, kvw, []need{qkvNeed}, byGroup(kG, m.HeadDim), qkvEps, qkvExtra)
		gemvOp(qkvOp, "v", kvT, qkvIn, m.Hidden, wv, lb.v, kvw, []need{qkvNeed}, byGroup(vG, m.HeadDim), qkvEps, qkvExtra)
		g.next()

		// RoPE per kv-head group: rotates the group's q heads and its k head;
		// then the KV append: row pos of kv head h's plane in every
		// sequence (fused: one rope_append task per group does both).
		rowsAt := func(cache schedule.BufferRef, h, lo, n int) access {
			a := access{buf: cache, off: uint64((h*S + lo) * m.HeadDim * actBytes), length: uint64(n * m.HeadDim * actBytes)}
			if B > 1 {
				a.rows, a.stride = uint64(B), uint64(m.KVHeads*S*m.HeadDim*actBytes)
			}
			return a
		}
		ropeRow := func() access {
			return access{buf: rope, off: uint64(c.Pos * m.HeadDim * actBytes), length: uint64(m.HeadDim * actBytes)}
		}
		ropeG, kvG := make([]int32, m.KVHeads), make([]int32, m.KVHeads)
		for h := range m.KVHeads {
			ropeG[h] = g.group(l, fmt.Sprintf("rope.g%d", h))
			qlo, qn := h*rep*m.HeadDim, rep*m.HeadDim
			klo := h * m.HeadDim
			if c.Fuse {
				kvG[h] = ropeG[h]
				g.add(node{name: name("rope.g%d", h), op: "rope_append", layer: l, slot: slot,
					params: append([]param{{"group", int64(h)}, {"pos", int64(c.Pos)}}, g.num(headP("theta", int64(math.Round(m.theta())), "max_seq", int64(S))...)...),
					reads: []access{cols(lb.q, B, qw, qlo, qn, actBytes), cols(lb.k, B, kvw, klo, m.HeadDim, actBytes),
						cols(lb.v, B, kvw, klo, m.HeadDim, actBytes), ropeRow()},
					writes:  []access{cols(lb.qr, B, qw, qlo, qn, actBytes), rowsAt(kc, h, c.Pos, 1), rowsAt(vc, h, c.Pos, 1)},
					needs:   []need{g.all(qG[h]), g.all(kG[h]), g.all(vG[h])},
					signals: []int32{ropeG[h]}})
				continue
			}
			g.add(node{name: name("rope.g%d", h), op: "rope", layer: l, slot: slot,
				params:  append([]param{{"group", int64(h)}, {"pos", int64(c.Pos)}}, g.num(headP("theta", int64(math.Round(m.theta())))...)...),
				reads:   []access{cols(lb.q, B, qw, qlo, qn, actBytes), cols(lb.k, B, kvw, klo, m.HeadDim, actBytes), ropeRow()},
				writes:  []access{cols(lb.qr, B, qw, qlo, qn, actBytes), cols(lb.kr, B, kvw, klo, m.HeadDim, actBytes)},
				needs:   []need{g.all(qG[h]), g.all(kG[h])},
				signals: []int32{ropeG[h]}})
		}
		g.next()
		if !c.Fuse {
			for h := range m.KVHeads {
				kvG[h] = g.group(l, fmt.Sprintf("kv.g%d", h))
				g.add(node{name: name("kv.g%d", h), op: "kv_append", layer: l,
					params:  append([]param{{"group", int64(h)}, {"pos", int64(c.Pos)}}, g.num(headP("max_seq", int64(S))...)...),
					reads:   []access{cols(lb.kr, B, kvw, h*m.HeadDim, m.HeadDim, actBytes), cols(lb.v, B, kvw, h*m.HeadDim, m.HeadDim, actBytes)},
					writes:  []access{rowsAt(kc, h, c.Pos, 1), rowsAt(vc, h, c.Pos, 1)},
					needs:   []need{g.all(ropeG[h]), g.all(vG[h])},
					signals: []int32{kvG[h]}})
			}
			g.next()
		}
		// attNeeds are what attention over kv head kh waits for: the
		// rotated queries and, where it reads row pos, the append.
		attNeeds := func(kh int, appended bool) []need {
			n := []need{g.all(ropeG[kh])}
			if appended && kvG[kh] != ropeG[kh] {
				n = append(n, g.all(kvG[kh]))
			}
			return n
		}

		// Attention per query head over rows [0, pos]; with split-KV each
		// chunk is a task and only the chunk holding row pos waits for the
		// append (the others read prior state only).
		attG := g.group(l, "att")
		// A task per head covers all B sequences, or with RowAttention one
		// sequence each: seq lists (first row, rows) per task of a head.
		seq := [][2]int{{0, B}}
		if c.RowAttention && B > 1 {
			seq = seq[:0]
			for b := range B {
				seq = append(seq, [2]int{b, 1})
			}
		}
		// rowsOf is access a narrowed to rows [r[0], r[0]+r[1]) of its
		// batch (a stride apart).
		rowsOf := func(a access, r [2]int, stride uint64) access {
			if r[1] == B {
				return a
			}
			a.off += uint64(r[0]) * stride
			a.rows, a.stride = 0, 0
			if r[1] > 1 {
				a.rows, a.stride = uint64(r[1]), stride
			}
			return a
		}
		seqName := func(base string, r [2]int) string {
			if len(seq) == 1 {
				return base
			}
			return fmt.Sprintf("%s.b%d", base, r[0])
		}
		seqP := func(r [2]int) []param {
			if len(seq) == 1 || !c.Numeric {
				return nil
			}
			return []param{{"row", int64(r[0])}, {"rows", int64(r[1])}}
		}
		qStride := uint64(qw * actBytes)
		kvStride := uint64(m.KVHeads * S * m.HeadDim * actBytes)
		partStride, lseStride := uint64(m.Heads*P*m.HeadDim*accBytes), uint64(m.Heads*P*accBytes)
		partG := make([]int32, m.Heads*len(seq))
		for h := range m.Heads {
			kh := h / rep
			for i, r := range seq {
				q := rowsOf(cols(lb.qr, B, qw, h*m.HeadDim, m.HeadDim, actBytes), r, qStride)
				if c.Splits == 1 {
					g.add(node{name: name(seqName("attn.h%d", r), h), op: "attention", layer: l, slot: slot,
						params:  append(append([]param{{"head", int64(h)}, {"kv_start", 0}, {"kv_len", int64(window)}}, g.num(attnP...)...), seqP(r)...),
						reads:   []access{q, rowsOf(rowsAt(kc, kh, 0, window), r, kvStride), rowsOf(rowsAt(vc, kh, 0, window), r, kvStride)},
						writes:  []access{rowsOf(cols(lb.att, B, qw, h*m.HeadDim, m.HeadDim, actBytes), r, qStride)},
						needs:   attNeeds(kh, true),
						signals: []int32{attG}})
					continue
				}
				pg := g.group(l, seqName(fmt.Sprintf("part.h%d", h), r))
				partG[h*len(seq)+i] = pg
				partSig := pg
				if c.FuseCombine { // the o tiles wait for every partial
					partSig = attG
				}
				for s := range c.Splits {
					lo, hi := s*window/c.Splits, (s+1)*window/c.Splits
					needs := attNeeds(kh, hi == window)
					g.add(node{name: name(seqName("attn.h%d.s%d", r), h, s), op: "attn_partial", layer: l, slot: slot,
						params: append(append(append([]param{{"head", int64(h)}, {"kv_start", int64(lo)}, {"kv_len", int64(hi - lo)}}, g.num(append(attnP, param{"split", int64(s)}, param{"splits", int64(c.Splits)})...)...), partP...), seqP(r)...),
						reads:  []access{q, rowsOf(rowsAt(kc, kh, lo, hi-lo), r, kvStride), rowsOf(rowsAt(vc, kh, lo, hi-lo), r, kvStride)},
						writes: []access{
							rowsOf(cols(lb.part, B, m.Heads*P*m.HeadDim, (h*P+s)*m.HeadDim, m.HeadDim, accBytes), r, partStride),
							rowsOf(cols(lb.lse, B, m.Heads*P, h*P+s, 1, accBytes), r, lseStride)},
						needs: needs, signals: []int32{partSig}})
				}
			}
		}
		if c.Splits > 1 && !c.FuseCombine {
			g.next()
			for h := range m.Heads {
				for i, r := range seq {
					g.add(node{name: name(seqName("combine.h%d", r), h), op: "attn_combine", layer: l, slot: slot,
						params: append(append(append([]param{{"head", int64(h)}, {"splits", int64(c.Splits)}}, g.num(headP()...)...), partP...), seqP(r)...),
						reads: []access{
							rowsOf(cols(lb.part, B, m.Heads*P*m.HeadDim, h*P*m.HeadDim, c.Splits*m.HeadDim, accBytes), r, partStride),
							rowsOf(cols(lb.lse, B, m.Heads*P, h*P, c.Splits, accBytes), r, lseStride)},
						writes:  []access{rowsOf(cols(lb.att, B, qw, h*m.HeadDim, m.HeadDim, actBytes), r, qStride)},
						needs:   []need{g.all(partG[h*len(seq)+i])},
						signals: []int32{attG}})
				}
			}
		}
		g.next()

		oG := g.group(l, "o")
		resid := func(r schedule.BufferRef) func(lo, hi int) []access {
			return func(lo, hi int) []access { return []access{cols(r, B, m.Hidden, lo, hi-lo, actBytes)} }
		}
		if c.Fuse && c.FuseCombine && c.Splits > 1 {
			// o with the combine of every head's partials in its prologue
			// and the residual add: xm = x + o(combine(part, lse)).
			for t := 0; t+1 < len(hT); t++ {
				lo, hi := hT[t], hT[t+1]
				g.add(node{name: name("o.t%d", t), op: "combine_gemv_add", layer: l, slot: slot,
					params: append(append([]param{{"n_off", int64(lo)}, {"n", int64(hi - lo)}, {"k", int64(qw)}},
						g.num(param{"out", int64(m.Hidden)}, param{"heads", int64(m.Heads)}, param{"head_dim", int64(m.HeadDim)}, param{"splits", int64(c.Splits)})...), partP...),
					reads: []access{
						cols(lb.part, B*m.Heads, P*m.HeadDim, 0, c.Splits*m.HeadDim, accBytes),
						cols(lb.lse, B*m.Heads, P, 0, c.Splits, accBytes),
						{buf: wo, off: uint64(lo * qw * actBytes), length: uint64((hi - lo) * qw * actBytes)},
						cols(x, B, m.Hidden, lo, hi-lo, actBytes)},
					writes: []access{cols(lb.xm, B, m.Hidden, lo, hi-lo, actBytes)},
					needs:  []need{g.all(attG)}, signals: []int32{oG}})
			}
		} else if c.Fuse {
			// o with the residual add: xm = x + o.
			gemvOp("gemv_add", "o", hT, lb.att, qw, wo, lb.xm, m.Hidden, []need{g.all(attG)}, func(int, int) []int32 { return []int32{oG} }, nil, resid(x))
		}
		if c.Fuse {
			g.next()
			// RMSNorm 2, gate, up and SiLU·mul per intermediate tile.
			actG := g.group(l, "act")
			for j := 0; j+1 < len(iT); j++ {
				lo, n := iT[j], iT[j+1]-iT[j]
				wrows := func(w schedule.BufferRef) access {
					return access{buf: w, off: uint64(lo * m.Hidden * actBytes), length: uint64(n * m.Hidden * actBytes)}
				}
				g.add(node{name: name("gu.t%d", j), op: "norm_gate_up", layer: l, slot: slot,
					params: append(append([]param{{"n_off", int64(lo)}, {"n", int64(n)}, {"k", int64(m.Hidden)}}, g.num(param{"width", int64(m.Intermediate)})...), epsP...),
					reads:  []access{whole(lb.xm, vec(m.Hidden, actBytes)), wrows(wg), wrows(wu), whole(norm2W, uint64(m.Hidden*actBytes))},
					writes: []access{cols(lb.gate, B, m.Intermediate, lo, n, actBytes), cols(lb.up, B, m.Intermediate, lo, n, actBytes),
						cols(lb.act, B, m.Intermediate, lo, n, actBytes)},
					needs: []need{g.all(oG)}, signals: []int32{actG}})
			}
			g.next()
			// down with the residual add: x' = xm + down.
			dG := g.group(l, "down")
			gemvOp("gemv_add", "down", hT, lb.act, m.Intermediate, wd, lb.xout, m.Hidden, []need{g.all(actG)}, func(int, int) []int32 { return []int32{dG} }, nil, resid(lb.xm))
			g.next()
			x, xG = lb.xout, dG
			continue
		}
		gemv("o", hT, lb.att, qw, wo, lb.o, m.Hidden, []need{g.all(attG)}, func(int, int) []int32 { return []int32{oG} })
		g.next()
		add1G := g.group(l, "add1")
		addP := g.num(param{"n", int64(m.Hidden)})
		g.add(node{name: name("add1"), op: "add", layer: l, slot: slot, params: addP,
			reads:  []access{whole(x, vec(m.Hidden, actBytes)), whole(lb.o, vec(m.Hidden, actBytes))},
			writes: []access{whole(lb.xm, vec(m.Hidden, actBytes))},
			needs:  []need{g.all(oG)}, signals: []int32{add1G}})
		g.next()

		n2G := g.group(l, "norm2")
		g.add(node{name: name("norm2"), op: "rmsnorm", layer: l, slot: slot, params: normP,
			reads:  []access{whole(lb.xm, vec(m.Hidden, actBytes)), whole(norm2W, uint64(m.Hidden*actBytes))},
			writes: []access{whole(lb.h2, vec(m.Hidden, actBytes))},
			needs:  []need{g.all(add1G)}, signals: []int32{n2G}})
		g.next()

		// gate/up tile j both signal counter gu.j; SiLU·mul tile j waits
		// for exactly those two.
		guG := make([]int32, len(iT)-1)
		for j := range guG {
			guG[j] = g.group(l, fmt.Sprintf("gu.t%d", j))
		}
		one := func(gs []int32) func(lo, hi int) []int32 {
			return func(lo, _ int) []int32 { return []int32{gs[lo/iTile]} }
		}
		gemv("gate", iT, lb.h2, m.Hidden, wg, lb.gate, m.Intermediate, []need{g.all(n2G)}, one(guG))
		gemv("up", iT, lb.h2, m.Hidden, wu, lb.up, m.Intermediate, []need{g.all(n2G)}, one(guG))
		g.next()

		actG := g.group(l, "act")
		for j := 0; j+1 < len(iT); j++ {
			lo, n := iT[j], iT[j+1]-iT[j]
			g.add(node{name: name("silu.t%d", j), op: "silu_mul", layer: l, slot: slot,
				params:  append([]param{{"n_off", int64(lo)}, {"n", int64(n)}}, g.num(param{"width", int64(m.Intermediate)})...),
				reads:   []access{cols(lb.gate, B, m.Intermediate, lo, n, actBytes), cols(lb.up, B, m.Intermediate, lo, n, actBytes)},
				writes:  []access{cols(lb.act, B, m.Intermediate, lo, n, actBytes)},
				needs:   []need{g.all(guG[j])},
				signals: []int32{actG}})
		}
		g.next()

		dG := g.group(l, "down")
		gemv("down", hT, lb.act, m.Intermediate, wd, lb.d, m.Hidden, []need{g.all(actG)}, func(int, int) []int32 { return []int32{dG} })
		g.next()

		add2G := g.group(l, "add2")
		g.add(node{name: name("add2"), op: "add", layer: l, slot: slot, release: slot, params: addP,
			reads:  []access{whole(lb.xm, vec(m.Hidden, actBytes)), whole(lb.d, vec(m.Hidden, actBytes))},
			writes: []access{whole(lb.xout, vec(m.Hidden, actBytes))},
			needs:  []need{g.all(dG)}, signals: []int32{add2G}})
		g.next()
		x, xG = lb.xout, add2G
	}

	hf := b.Buffer("hf", schedule.KindScratch, vec(m.Hidden, actBytes))
	normW := b.Buffer("w.normf", schedule.KindWeight, uint64(m.Hidden*actBytes))
	lmW := b.Buffer("w.lm_head", schedule.KindWeight, uint64(m.Vocab*m.Hidden*actBytes))
	logits := b.Buffer("logits", schedule.KindOutput, vec(m.Vocab, accBytes))
	next := b.Buffer("next_token", schedule.KindOutput, vec(1, tokenBytes))
	lmG := g.group(-1, "lm")
	vT := tiles(m.Vocab, c.tileFor(m.Vocab))
	lmIn, lmNeed, lmOp := hf, need{}, "gemv"
	var lmNorm []access
	var lmEps []param
	if c.Fuse { // the final RMSNorm in every lm-head tile
		lmIn, lmNeed, lmOp = x, g.all(xG), "norm_gemv"
		lmNorm, lmEps = []access{whole(normW, uint64(m.Hidden*actBytes))}, g.num(param{"eps_e9", e9(m.eps())})
		if lmEps != nil {
			lmEps = lmEps[1:]
		}
	} else {
		nfG := g.group(-1, "normf")
		g.add(node{name: "normf", op: "rmsnorm", layer: -1, params: g.num(param{"hidden", int64(m.Hidden)}, param{"eps_e9", e9(m.eps())}),
			reads:  []access{whole(x, vec(m.Hidden, actBytes)), whole(normW, uint64(m.Hidden*actBytes))},
			writes: []access{whole(hf, vec(m.Hidden, actBytes))},
			needs:  []need{g.all(xG)}, signals: []int32{nfG}})
		g.next()
		lmNeed = g.all(nfG)
	}
	// Fused, every lm-head tile also writes its best (logit, index) pair,
	// and the final argmax reads one pair per tile.
	nt := len(vT) - 1
	var best schedule.BufferRef
	if c.Fuse {
		lmOp = "norm_gemv_argmax"
		best = b.Buffer("lm.best", schedule.KindScratch, vec(nt, pairBytes))
	}
	for t := 0; t < nt; t++ {
		lo, n := vT[t], vT[t+1]-vT[t]
		writes := []access{cols(logits, B, m.Vocab, lo, n, accBytes)}
		ps := append(append([]param{{"n_off", int64(lo)}, {"n", int64(n)}, {"k", int64(m.Hidden)}}, g.num(param{"out", int64(m.Vocab)}, param{"out_elem", accBytes}, param{"round_bf16", 1})...), lmEps...)
		if c.Fuse {
			writes = append(writes, cols(best, B, nt, t, 1, pairBytes))
			ps = append(ps, param{"tile", int64(t)}, param{"tiles", int64(nt)})
		}
		g.add(node{name: fmt.Sprintf("lm.t%d", t), op: lmOp, layer: -1, params: ps,
			reads:  append([]access{whole(lmIn, vec(m.Hidden, actBytes)), {buf: lmW, off: uint64(lo * m.Hidden * actBytes), length: uint64(n * m.Hidden * actBytes)}}, lmNorm...),
			writes: writes, needs: []need{lmNeed}, signals: []int32{lmG}})
	}
	if c.Fuse {
		g.next()
		g.add(node{name: "argmax", op: "argmax_tiles", layer: -1, params: g.num(param{"tiles", int64(nt)}),
			reads:  []access{whole(best, vec(nt, pairBytes))},
			writes: []access{whole(next, vec(1, tokenBytes))},
			needs:  []need{g.all(lmG)}})
		return
	}
	g.next()
	g.add(node{name: "argmax", op: "argmax", layer: -1, params: g.num(param{"vocab", int64(m.Vocab)}),
		reads:  []access{whole(logits, vec(m.Vocab, accBytes))},
		writes: []access{whole(next, vec(1, tokenBytes))},
		needs:  []need{g.all(lmG)}})
}

// tileFor is the tile of a GEMV stage with n output columns in all: Tile,
// or with AutoTile the smallest multiple of 16 giving at most Workers
// tiles.
func (c Config) tileFor(n int) int {
	if !c.AutoTile {
		return c.Tile
	}
	t := (n + c.Workers - 1) / c.Workers
	return max(16, (t+15)/16*16)
}

// align rounds a page-slot member up to 256 bytes.
func align(n uint64) uint64 { return (n + 255) &^ 255 }
