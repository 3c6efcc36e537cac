package runner

import (
	"fmt"
	"math"
	"regexp"

	"github.com/megaproof/megaproof/schedule"
)

// A Source gives the initial contents of a program's initialized buffers
// (inputs, weights and state; see [schedule.BufferKind.Initialized]) in
// place of the runner's byte pattern. Set it as [Options.Init].
type Source interface {
	// Fill writes the initial bytes of buffer buf of p into dst, which has
	// the buffer's size.
	Fill(p *schedule.Program, buf int, dst []byte) error
}

// Tensors gives named tensors as little-endian bfloat16 bytes.
type Tensors interface {
	// Tensor returns the n elements of the tensor called name (a Hugging
	// Face name such as "model.layers.0.self_attn.q_proj.weight"), or an
	// error when there is no such tensor or it has another size.
	Tensor(name string, n int) ([]byte, error)
	// Has reports whether the tensor exists.
	Has(name string) bool
}

var (
	layerBuf = regexp.MustCompile(`^w\.L(\d+)\.(norm1|wq|wk|wv|wo|norm2|wgate|wup|wdown)$`)
	hfLayer  = map[string]string{
		"norm1": "input_layernorm.weight", "norm2": "post_attention_layernorm.weight",
		"wq": "self_attn.q_proj.weight", "wk": "self_attn.k_proj.weight", "wv": "self_attn.v_proj.weight", "wo": "self_attn.o_proj.weight",
		"wgate": "mlp.gate_proj.weight", "wup": "mlp.up_proj.weight", "wdown": "mlp.down_proj.weight",
	}
)

// HFName maps a llamagen weight buffer ("w.L3.wq", "w.embed", ...) to its
// Hugging Face LlamaForCausalLM tensor name. Llamagen lays every weight out
// as Hugging Face does ([out, in] row-major), so the bytes are the
// tensor's. "w.rope" has no tensor (see [RoPETable]); w.lm_head falls back
// to the embedding when the tensors have no lm_head (tied embeddings).
func HFName(buf string) (string, bool) {
	switch buf {
	case "w.embed":
		return "model.embed_tokens.weight", true
	case "w.normf":
		return "model.norm.weight", true
	case "w.lm_head":
		return "lm_head.weight", true
	}
	if m := layerBuf.FindStringSubmatch(buf); m != nil {
		return "model.layers." + m[1] + "." + hfLayer[m[2]], true
	}
	return "", false
}

// LlamaSource fills a llamagen program's buffers: weights from ts by
// their Hugging Face names ([HFName]), the rotary table from the theta and
// head_dim params of the rope tasks that read it ([RoPETable]), and every
// input and state buffer (token ids, KV caches) with zeros.
func LlamaSource(ts Tensors) Source { return llamaSource{ts} }

type llamaSource struct{ ts Tensors }

func (s llamaSource) Fill(p *schedule.Program, buf int, dst []byte) error {
	b := p.Buffers[buf]
	if b.Kind != schedule.KindWeight {
		clear(dst)
		return nil
	}
	if b.Name == "w.rope" {
		return fillRoPE(p, buf, dst)
	}
	name, ok := HFName(b.Name)
	if !ok {
		return fmt.Errorf("runner: weight buffer %q has no Hugging Face tensor", b.Name)
	}
	if name == "lm_head.weight" && !s.ts.Has(name) {
		name = "model.embed_tokens.weight"
	}
	if b.Size%2 != 0 {
		return fmt.Errorf("runner: weight buffer %q: %d bytes are not bf16 elements", b.Name, b.Size)
	}
	t, err := s.ts.Tensor(name, int(b.Size/2))
	if err != nil {
		return fmt.Errorf("runner: weight buffer %q: %w", b.Name, err)
	}
	copy(dst, t)
	return nil
}

// ropeTable is the buffer of the rotary table that a rope or rope_append
// task reads (its last read).
func ropeTable(t *schedule.Task) (int, bool) {
	n := map[string]int{"rope": 3, "rope_append": 4}[t.Op]
	if n == 0 || len(t.Reads) != n {
		return 0, false
	}
	return int(t.Reads[n-1].Buffer), true
}

// fillRoPE fills a rotary table from the params of the rope and
// rope_append tasks reading it; they must agree.
func fillRoPE(p *schedule.Program, buf int, dst []byte) error {
	theta, d := int64(-1), int64(-1)
	for i := range p.Tasks {
		t := &p.Tasks[i]
		if tab, ok := ropeTable(t); !ok || tab != buf {
			continue
		}
		th, _ := t.Params.Get("theta")
		d2, _ := t.Params.Get("head_dim")
		if theta >= 0 && (th != theta || d2 != d) {
			return fmt.Errorf("runner: task %q reads rotary table %q with theta %d and head_dim %d, another rope task with %d and %d", t.Name, p.Buffers[buf].Name, th, d2, theta, d)
		}
		theta, d = th, d2
	}
	if theta < 1 || d < 2 || uint64(len(dst))%uint64(2*d) != 0 {
		return fmt.Errorf("runner: rotary table %q: no rope task gives theta and head_dim for its %d bytes", p.Buffers[buf].Name, len(dst))
	}
	copy(dst, RoPETable(len(dst)/int(2*d), int(d), float64(theta)))
	return nil
}

// SeededTensors is a deterministic pseudo-random initialization of
// Hugging Face Llama tensors, the same in Go and in
// scripts/gpu/llama_ref.py, so that a model of any size needs no file.
// Element i of the tensor called name is built from the 24-bit integer
// u = mix32(key + i·0x9E3779B9) >> 8, where key = fnv1a32(name) +
// Seed·0x85EBCA6B (mod 2³², mix32 is MurmurHash3's finalizer): norm
// weights ("...norm.weight", "..._layernorm.weight") are 1 + (u − 2²³)·2⁻²⁶
// (within 1 ± 1/8), every other tensor (u − 2²³)·2⁻²⁸ (uniform in
// ±1/32, standard deviation 0.018), each computed in fp32 and rounded to
// bf16 to nearest even. EmbedShift and HeadShift scale the embedding and
// the lm head by powers of two (exact in fp32, so both sides still agree
// bit for bit).
type SeededTensors struct {
	Seed uint64
	// Untied makes Has report an lm_head separate from the embedding
	// (otherwise the embedding is tied, as in SmolLM2 and Llama-3.2).
	Untied bool
	// EmbedShift multiplies model.embed_tokens.weight by 2^EmbedShift
	// (with tied embeddings the lm head too); HeadShift multiplies
	// lm_head.weight by 2^HeadShift. Zero keeps the standard deviation
	// 0.018 of every other tensor. A larger embedding makes the token's
	// own embedding a larger part of the residual stream, as in trained
	// models, and the logits more peaked (see docs/GPU.md).
	EmbedShift, HeadShift int
	// HeadFromEmbed gives an untied lm_head.weight the embedding's values
	// (its name's key and EmbedShift): a separate tensor with the same
	// bytes, for untied shapes.
	HeadFromEmbed bool
	// HeadRoll, with HeadFromEmbed, rolls the lm head against the
	// embedding by that many elements: element i of lm_head.weight is the
	// embedding's element (i + HeadRoll) mod its size. A roll of r rows
	// (r × hidden elements) makes the logit of token j the embedding of
	// token j + r against the residual stream, so that under a large
	// EmbedShift greedy decoding steps through the vocabulary (t, t − r,
	// t − 2r, ...) instead of repeating one token: a token test that a
	// wrong token or position fed back would fail (docs/GPU.md).
	HeadRoll int
}

// Has reports whether the tensor exists: every name does, except
// lm_head.weight with tied embeddings.
func (s SeededTensors) Has(name string) bool { return name != "lm_head.weight" || s.Untied }

// Tensor returns the n elements of the named tensor.
func (s SeededTensors) Tensor(name string, n int) ([]byte, error) {
	out := make([]byte, 2*n)
	s.fill(name, out)
	return out, nil
}

func (s SeededTensors) fill(name string, out []byte) {
	n := len(out) / 2
	roll := 0
	if name == "lm_head.weight" && s.HeadFromEmbed {
		name = "model.embed_tokens.weight"
		if n > 0 {
			roll = ((s.HeadRoll % n) + n) % n
		}
	}
	key := fnv1a32(name) + uint32(s.Seed)*0x85EBCA6B
	norm := isNorm(name)
	scale := float32(1.0 / (1 << 28))
	switch name {
	case "model.embed_tokens.weight":
		scale = float32(math.Ldexp(1, s.EmbedShift-28))
	case "lm_head.weight":
		scale = float32(math.Ldexp(1, s.HeadShift-28))
	}
	parallelFor(n, 1<<16, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			j := i + roll
			if j >= n {
				j -= n
			}
			u := int32(mix32(key+uint32(j)*0x9E3779B9)>>8) - 1<<23
			var v float32
			if norm {
				v = 1 + float32(u)*(1.0/(1<<26))
			} else {
				v = float32(u) * scale
			}
			h := f32ToBF16(v)
			out[2*i], out[2*i+1] = byte(h), byte(h>>8)
		}
	})
}

func isNorm(name string) bool {
	for _, suf := range []string{"norm.weight", "layernorm.weight"} {
		if len(name) >= len(suf) && name[len(name)-len(suf):] == suf {
			return true
		}
	}
	return false
}

func fnv1a32(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}
