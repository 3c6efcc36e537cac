#!/usr/bin/env python3
"""PyTorch baselines for the runner's decode benchmark (TestGPULlamaBench).

Same models, seeded weights (scripts/gpu/llama_ref.py) and positions. Paths:
  eager   a hand-written bf16 decode step (static KV cache, SDPA with GQA),
          one step per Python call
  graph   the same step captured once as a CUDA graph (token and position
          advance inside the graph) and replayed
  hf-generate-static  transformers' generate with cache_implementation="static"
          (per token: (t(N) - t(1)) / (N - 1), so the prefill cancels)
  compile torch.compile(mode="max-autotune") of the step (with --compile)
Every step's time includes copying the next token to the host, as a
generation loop must. Writes one JSON line per (model, path, batch, pos).

Usage: python3 scripts/gpu/torch_bench.py --model smollm2-135m --pos 128,1024 --batch 1 --out FILE
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
import llama_ref  # noqa: E402


class Step:
    """A static-cache decode step over the state dict of llama_ref.build."""

    def __init__(self, name, sd, batch, maxlen):
        H, I, L, NH, KV, D, V, eps, theta, tied = llama_ref.MODELS[name]
        self.L, self.NH, self.KV, self.D, self.eps, self.B = L, NH, KV, D, eps, batch
        g = lambda k: sd[k]
        self.emb = g("model.embed_tokens.weight")
        self.lm = self.emb if tied else g("lm_head.weight")
        self.normf = g("model.norm.weight")
        self.layers = []
        for l in range(L):
            p = f"model.layers.{l}."
            self.layers.append([g(p + n) for n in (
                "input_layernorm.weight", "self_attn.q_proj.weight", "self_attn.k_proj.weight",
                "self_attn.v_proj.weight", "self_attn.o_proj.weight", "post_attention_layernorm.weight",
                "mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight")])
        self.kc = torch.zeros(L, batch, KV, maxlen, D, dtype=torch.bfloat16, device="cuda")
        self.vc = torch.zeros_like(self.kc)
        self.inv = 1.0 / (float(theta) ** (torch.arange(0, D, 2, dtype=torch.int64, device="cuda").float() / D))
        self.ar = torch.arange(maxlen, device="cuda")

    def norm(self, x, w):
        v = x.float().pow(2).mean(-1, keepdim=True)
        return w * (x.float() * torch.rsqrt(v + self.eps)).to(x.dtype)

    def rope(self, x, cos, sin):
        h = x.shape[-1] // 2
        return x * cos + torch.cat((-x[..., h:], x[..., :h]), -1) * sin

    def __call__(self, tok, pos):
        B, NH, KV, D = self.B, self.NH, self.KV, self.D
        x = self.emb[tok]  # [B, H]
        ang = pos.float()[:, None] * self.inv[None, :]
        emb = torch.cat((ang, ang), -1)
        cos, sin = emb.cos().to(torch.bfloat16), emb.sin().to(torch.bfloat16)
        mask = (self.ar <= pos)[None, None, None, :]
        for l, (n1, wq, wk, wv, wo, n2, wg, wu, wd) in enumerate(self.layers):
            h = self.norm(x, n1)
            q = self.rope((h @ wq.T).view(B, NH, 1, D), cos, sin)
            k = self.rope((h @ wk.T).view(B, KV, 1, D), cos, sin)
            v = (h @ wv.T).view(B, KV, 1, D)
            self.kc[l].index_copy_(2, pos, k)
            self.vc[l].index_copy_(2, pos, v)
            a = F.scaled_dot_product_attention(q, self.kc[l], self.vc[l], attn_mask=mask, enable_gqa=True)
            x = x + a.reshape(B, NH * D) @ wo.T
            h = self.norm(x, n2)
            x = x + (F.silu(h @ wg.T) * (h @ wu.T)) @ wd.T
        logits = self.norm(x, self.normf) @ self.lm.T
        return torch.argmax(logits, -1)


def stats(ms):
    s = sorted(ms)
    return {"ms_per_token_median": s[len(s) // 2], "p10": s[len(s) // 10], "p90": s[len(s) * 9 // 10], "max": s[-1], "n": len(s)}


def bench_step(name, sd, batch, pos, steps, mode):
    st = Step(name, sd, batch, pos + steps + 16)
    tok = torch.ones(batch, dtype=torch.long, device="cuda")
    p = torch.tensor([pos], device="cuda")
    fn = st
    if mode == "compile":
        fn = torch.compile(st.__call__, mode="max-autotune")
    times = []
    if mode == "graph":
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(2):
                st(tok, p)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            nxt = st(tok, p)
            tok.copy_(nxt)
            p.add_(1)
        p.fill_(pos)
        for i in range(steps + 2):
            t0 = time.perf_counter()
            g.replay()
            nxt.cpu()
            times.append((time.perf_counter() - t0) * 1e3)
    else:
        for i in range(steps + 2):
            t0 = time.perf_counter()
            nxt = fn(tok, p)
            tok.copy_(nxt)
            nxt.cpu()
            times.append((time.perf_counter() - t0) * 1e3)
            p.add_(1)
    return {"cold_ms": times[0], **stats(times[2:])}


def bench_generate(model, batch, pos, steps):
    ids = torch.ones(batch, pos, dtype=torch.long, device="cuda")

    def run(n):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=n, min_new_tokens=n,
                       do_sample=False, cache_implementation="static", pad_token_id=0)
        torch.cuda.synchronize()
        return (time.perf_counter() - t0) * 1e3

    run(2)
    t1 = min(run(1) for _ in range(3))
    tn = [run(steps) for _ in range(3)]
    per = [(t - t1) / (steps - 1) for t in tn]
    return {"ms_per_token_median": sorted(per)[1], "p10": min(per), "p90": max(per), "max": max(per), "n": len(per) * steps}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--pos", default="128,1024,4096")
    ap.add_argument("--batch", default="1")
    ap.add_argument("--steps", type=int, default=32)
    ap.add_argument("--paths", default="eager,graph,hf-generate-static")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    model, sd, _ = llama_ref.build(a.model, torch.bfloat16, 1, "cuda")
    env = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(0)}
    with open(a.out, "a") as f:
        for b in map(int, a.batch.split(",")):
            for pos in map(int, a.pos.split(",")):
                for path in a.paths.split(","):
                    try:
                        with torch.no_grad():
                            r = bench_generate(model, b, pos, a.steps) if path == "hf-generate-static" else bench_step(a.model, sd, b, pos, a.steps, path)
                    except Exception as e:  # a path that does not run is reported, not hidden
                        r = {"error": f"{type(e).__name__}: {e}"[:300]}
                    r.update({"model": a.model, "path": path, "batch": b, "pos": pos, **env})
                    print(json.dumps(r), flush=True)
                    f.write(json.dumps(r) + "\n")
                    f.flush()  # a run stopped by a time limit keeps what it measured


if __name__ == "__main__":
    main()
