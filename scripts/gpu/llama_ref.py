#!/usr/bin/env python3
"""Reference decode of a Llama-shaped model with Hugging Face transformers.

Builds LlamaForCausalLM from a config (no download), fills it with the
seeded initialization that runner.SeededTensors computes in Go (the same
bits: checked against golden values), and writes, for the runner's GPU
test (runner/gpu_llama_test.go, MEGAPROOF_LLAMA_REF=DIR):

  DIR/MODEL/ref.json        config, tokens of greedy decoding in bf16 and
                            fp32, top-2 gaps, environment
  DIR/MODEL/logits_bf16.f32 [steps, vocab] float32: the bf16 model's logits
                            at each greedy step (teacher forcing = its own
                            tokens)
  DIR/MODEL/logits_fp32.f32 [steps, vocab] float32: the fp32 model's logits
                            for the same input tokens (one causal forward)
  DIR/MODEL/model.safetensors  (with --safetensors) the bf16 weights
  DIR/MODEL/batch-B.json    (with --batches B,...) greedy decoding of B
                            sequences in one batch by the bf16 model,
                            sequence r from token first + 97 r: tokens and
                            top-2 gaps per sequence (with --min-gap G, a
                            sequence whose greedy path has a top-2 gap below
                            G starts again from another token, up to
                            --tries times; "firsts" holds the tokens used)
  DIR/MODEL/logits_batchB_bf16.f32 [B, steps, vocab] float32: their logits

Usage (on the GPU machine):
  python3 scripts/gpu/llama_ref.py --model smollm2-135m --out /tmp/ref --safetensors
"""
import argparse
import json
import math
import os
import time

import torch

# Shapes of examples/llama/llamagen.Models(): hidden, intermediate, layers,
# heads, kv_heads, head_dim, vocab, eps, theta, tied.
MODELS = {
    "smollm2-135m": (576, 1536, 30, 9, 3, 64, 49152, 1e-5, 100000, True),
    "llama-3.2-1b": (2048, 8192, 16, 32, 8, 64, 128256, 1e-5, 500000, True),
    "llama-3-8b": (4096, 14336, 32, 32, 8, 128, 128256, 1e-5, 500000, False),
    "tinyllama-1.1b": (2048, 5632, 22, 32, 4, 64, 32000, 1e-5, 10000, False),
}

M32 = 0xFFFFFFFF


def fnv1a32(s):
    h = 2166136261
    for c in s.encode():
        h ^= c
        h = (h * 16777619) & M32
    return h


def mulmod32(x, c):
    """(x * c) mod 2^32 for an int64 tensor x < 2^32, without overflow."""
    lo = x * (c & 0xFFFF)
    hi = ((x * (c >> 16)) & 0xFFFF) << 16
    return (lo + hi) & M32


def mix32(x):
    x = x ^ (x >> 16)
    x = mulmod32(x, 0x85EBCA6B)
    x = x ^ (x >> 13)
    x = mulmod32(x, 0xC2B2AE35)
    x = x ^ (x >> 16)
    return x


def seeded(name, n, seed, device, embed_shift=0, head_shift=0, head_from_embed=False, head_roll=0):
    """runner.SeededTensors: element i of tensor `name`, as bf16 (the
    embedding scaled by 2**embed_shift, lm_head by 2**head_shift; with
    head_from_embed an lm_head equal to the embedding, rolled by head_roll
    elements: element i is the embedding's element (i + head_roll) mod n)."""
    roll = 0
    if head_from_embed and name == "lm_head.weight":
        name = "model.embed_tokens.weight"
        roll = head_roll % n
    key = (fnv1a32(name) + seed * 0x85EBCA6B) & M32
    out = torch.empty(n, dtype=torch.bfloat16, device=device)
    chunk = 1 << 26
    for lo in range(0, n, chunk):
        i = torch.arange(lo, min(n, lo + chunk), dtype=torch.int64, device=device)
        x = (key + mulmod32((i + roll) % n, 0x9E3779B9)) & M32
        u = (mix32(x) >> 8) - (1 << 23)
        if name.endswith("norm.weight") or name.endswith("layernorm.weight"):
            v = 1.0 + u.to(torch.float32) * (2.0 ** -26)
        else:
            shift = embed_shift if name == "model.embed_tokens.weight" else head_shift if name == "lm_head.weight" else 0
            v = u.to(torch.float32) * (2.0 ** (shift - 28))
        out[lo:lo + len(i)] = v.to(torch.bfloat16)
    return out


# runner/llama_test.go seededGolden: SeededTensors{Seed: 1}'s first four elements.
GOLDEN = {
    "model.layers.0.self_attn.q_proj.weight": [0xBC42, 0xBC73, 0x3C81, 0xBC04],
    "model.norm.weight": [0x3F68, 0x3F83, 0x3F85, 0x3F8C],
}


def check_golden(device):
    for name, want in GOLDEN.items():
        got = seeded(name, 4, 1, device).view(torch.int16).to(torch.int64) & 0xFFFF
        got = [int(v) for v in got.cpu()]
        if got != want:
            raise SystemExit(f"seeded init differs from Go for {name}: {[hex(v) for v in got]} != {[hex(v) for v in want]}")


def build(name, dtype, seed, device, embed_shift=0, head_shift=0, head_from_embed=False, head_roll=0, untie=False):
    from transformers import LlamaConfig, LlamaForCausalLM

    H, I, L, NH, KV, D, V, eps, theta, tied = MODELS[name]
    tied = tied and not untie
    kw = dict(vocab_size=V, hidden_size=H, intermediate_size=I, num_hidden_layers=L,
              num_attention_heads=NH, num_key_value_heads=KV, head_dim=D, rms_norm_eps=eps,
              max_position_embeddings=8192, tie_word_embeddings=tied, attention_bias=False,
              mlp_bias=False)
    try:
        cfg = LlamaConfig(rope_parameters={"rope_type": "default", "rope_theta": float(theta)}, **kw)
    except TypeError:
        cfg = LlamaConfig(rope_theta=float(theta), **kw)
    torch.set_default_device(device)
    prev = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        model = LlamaForCausalLM(cfg)
    finally:
        torch.set_default_dtype(prev)
        torch.set_default_device("cpu")
    model.eval()
    sd = {}
    for pname, p in model.state_dict().items():
        if tied and pname == "lm_head.weight":
            continue
        sd[pname] = seeded(pname, p.numel(), seed, device, embed_shift, head_shift, head_from_embed, head_roll * H).view(p.shape)
    with torch.no_grad():
        for pname, p in model.named_parameters():
            if pname in sd:
                p.copy_(sd[pname].to(dtype))
        if tied:
            model.lm_head.weight = model.model.embed_tokens.weight
    # The rotary frequencies must be Hugging Face's default for theta.
    inv = model.model.rotary_emb.inv_freq.float().cpu()
    want = 1.0 / (float(theta) ** (torch.arange(0, D, 2, dtype=torch.int64).float() / D))
    if not torch.allclose(inv, want, rtol=1e-6):
        raise SystemExit(f"unexpected rotary frequencies: {inv[:4]} vs {want[:4]}")
    return model, sd, cfg


@torch.no_grad()
def greedy(model, first, steps, device):
    toks, logits, gaps = [], [], []
    past = None
    tok = first
    for pos in range(steps):
        out = model(input_ids=torch.tensor([[tok]], device=device), past_key_values=past, use_cache=True,
                    position_ids=torch.tensor([[pos]], device=device))
        past = out.past_key_values
        lg = out.logits[0, -1].float()
        top = torch.topk(lg, 2)
        gaps.append(float(top.values[0] - top.values[1]))
        tok = int(torch.argmax(lg))
        toks.append(tok)
        logits.append(lg.cpu())
    return toks, torch.stack(logits), gaps


@torch.no_grad()
def greedy_batch(model, firsts, steps, device):
    """greedy for len(firsts) sequences decoded together in one batch."""
    B = len(firsts)
    toks, gaps, logits = [[] for _ in firsts], [[] for _ in firsts], []
    past = None
    tok = torch.tensor(firsts, device=device)[:, None]
    for pos in range(steps):
        out = model(input_ids=tok, past_key_values=past, use_cache=True,
                    position_ids=torch.full((B, 1), pos, device=device))
        past = out.past_key_values
        lg = out.logits[:, -1].float()
        top = torch.topk(lg, 2, dim=-1).values.cpu()
        nxt = torch.argmax(lg, -1)
        for b, t in enumerate(nxt.cpu().tolist()):
            toks[b].append(t)
            gaps[b].append(float(top[b, 0] - top[b, 1]))
        logits.append(lg.cpu())
        tok = nxt[:, None]
    return toks, torch.stack(logits, 1), gaps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True, choices=sorted(MODELS))
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--steps", type=int, default=64)
    ap.add_argument("--first", type=int, default=1, help="token at position 0")
    ap.add_argument("--safetensors", action="store_true")
    ap.add_argument("--embed-shift", type=int, default=0, help="embedding scaled by 2**N (SeededTensors.EmbedShift)")
    ap.add_argument("--head-shift", type=int, default=0, help="lm_head scaled by 2**N (SeededTensors.HeadShift)")
    ap.add_argument("--head-from-embed", action="store_true", help="untied lm_head equal to the embedding (SeededTensors.HeadFromEmbed)")
    ap.add_argument("--head-roll", type=int, default=0, help="with --head-from-embed: lm_head row j is embedding row j+N (SeededTensors.HeadRoll = N x hidden)")
    ap.add_argument("--untie", action="store_true", help="an untied lm_head for a tied shape (SmolLM2, Llama-3.2)")
    ap.add_argument("--batches", default="", help="batch sizes B,... of batch-B.json (sequence r from token first + 97 r)")
    ap.add_argument("--min-gap", type=float, default=0, help="batch-B.json: restart a sequence whose smallest top-2 gap is below this")
    ap.add_argument("--tries", type=int, default=16, help="with --min-gap: start tokens tried per sequence")
    a = ap.parse_args()
    dev = "cuda"
    t0 = time.time()
    check_golden(dev)
    d = os.path.join(a.out, a.model)
    os.makedirs(d, exist_ok=True)
    model, sd, cfg = build(a.model, torch.bfloat16, a.seed, dev, a.embed_shift, a.head_shift, a.head_from_embed, a.head_roll, a.untie)
    if a.safetensors:
        from safetensors.torch import save_file
        save_file({k: v.contiguous() for k, v in sd.items()}, os.path.join(d, "model.safetensors"))
    tb, lb, gaps = greedy(model, a.first, a.steps, dev)
    lb.numpy().astype("float32").tofile(os.path.join(d, "logits_bf16.f32"))
    batches = []
    for B in [int(x) for x in a.batches.split(",") if x]:
        firsts = [a.first + 97 * r for r in range(B)]
        bt, bl, bg = greedy_batch(model, firsts, a.steps, dev)
        # A near-tie of the reference is decided by rounding order, not by
        # the computation: restart such sequences from other tokens, keeping
        # each sequence's best start (the largest smallest gap).
        best = [min(g) for g in bg]
        for t in range(1, a.tries if a.min_gap > 0 else 0):
            low = [r for r in range(B) if best[r] < a.min_gap]
            if not low:
                break
            trial = list(firsts)
            for r in low:
                trial[r] = (a.first + 97 * r + 7919 * t) % MODELS[a.model][6]
            tt, tl, tg = greedy_batch(model, trial, a.steps, dev)
            for r in low:
                if min(tg[r]) > best[r]:
                    firsts[r], best[r] = trial[r], min(tg[r])
                    bt[r], bg[r], bl[r] = tt[r], tg[r], tl[r]
        bl.numpy().astype("float32").tofile(os.path.join(d, f"logits_batch{B}_bf16.f32"))
        with open(os.path.join(d, f"batch-{B}.json"), "w") as f:
            json.dump({"batch": B, "firsts": firsts, "steps": a.steps, "vocab": MODELS[a.model][6],
                       "tokens_bf16": bt, "top2_gap_bf16": bg, "row0_equals_unbatched": bt[0] == tb,
                       "min_gap": a.min_gap}, f)
        batches.append(f"batch {B}: sequence 0 equals the unbatched tokens {bt[0] == tb}, "
                       f"{len({t for row in bt for t in row})} distinct tokens, min top-2 gap {min(min(g) for g in bg):.4g}, "
                       f"first tokens {firsts}")
    attn = getattr(model.config, "_attn_implementation", "?")
    del model
    torch.cuda.empty_cache()
    m32, _, _ = build(a.model, torch.float32, a.seed, dev, a.embed_shift, a.head_shift, a.head_from_embed, a.head_roll, a.untie)
    with torch.no_grad():
        seq = torch.tensor([[a.first] + tb[:-1]], device=dev)
        lf = m32(input_ids=seq).logits[0].float().cpu()
    lf.numpy().astype("float32").tofile(os.path.join(d, "logits_fp32.f32"))
    # PyTorch's own bf16 error: its bf16 logits against its fp32 logits,
    # the largest |difference| and that over the step's largest |fp32 logit|.
    diff = (lb - lf).abs().amax(-1)
    noise_abs = float(diff.max())
    noise_rel = float((diff / lf.abs().amax(-1)).max())
    tf, _, _ = greedy(m32, a.first, a.steps, dev)
    import transformers
    ref = {
        "model": a.model, "seed": a.seed, "embed_shift": a.embed_shift, "head_shift": a.head_shift,
        "head_from_embed": a.head_from_embed, "head_roll": a.head_roll, "untie": a.untie,
        "first": a.first, "steps": a.steps, "vocab": MODELS[a.model][6],
        "tokens_bf16": tb, "tokens_fp32": tf, "top2_gap_bf16": gaps, "attn_implementation": attn,
        "bf16_vs_fp32_max_abs": noise_abs, "bf16_vs_fp32_rel": noise_rel,
        "torch": torch.__version__, "transformers": transformers.__version__,
        "gpu": torch.cuda.get_device_name(0), "seconds": round(time.time() - t0, 1),
    }
    with open(os.path.join(d, "ref.json"), "w") as f:
        json.dump(ref, f)
    agree = sum(x == y for x, y in zip(tb, tf))
    prefix = next((i for i, (x, y) in enumerate(zip(tb, tf)) if x != y), a.steps)
    print(f"{a.model} embed_shift {a.embed_shift} head_shift {a.head_shift} head_from_embed {a.head_from_embed} head_roll {a.head_roll} untie {a.untie}: bf16 tokens {tb[:16]}... {len(set(tb))} distinct; "
          f"fp32 agrees on {agree}/{a.steps} (first {prefix} equal); min top-2 gap {min(gaps):.4g}; "
          f"PyTorch bf16 vs fp32 logits: max abs {noise_abs:.4g}, rel {noise_rel:.4g}; {ref['seconds']} s")
    for line in batches:
        print(f"{a.model} {line}")


if __name__ == "__main__":
    main()
