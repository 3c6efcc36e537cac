#!/usr/bin/env python3
"""PyTorch baselines for the runner's decode benchmark (TestGPULlamaBench).

Same models, seeded weights (scripts/gpu/llama_ref.py) and positions. Paths:
  eager    a hand-written bf16 decode step (static KV cache, SDPA with GQA),
           one step per Python call
  graph    the same step captured once as a CUDA graph (token and position
           advance inside the graph) and replayed
  compile  torch.compile(mode="max-autotune", dynamic=False) of the same step
           (inductor's CUDA graphs included); compile time is reported as
           compile_s and excluded from the per-token figures
  hf-generate-static-compile  transformers' generate with a StaticCache,
           whose decode steps transformers compiles itself (CompileConfig()
           defaults); the dynamo counters and model._compiled_call show that
           it compiled
  hf-generate-static  the same with disable_compile=True
Every path starts from the same state: the KV cache of a prompt of `pos`
ones (one Hugging Face prefill), the prefill's greedy token as input at
position `pos`. Every step's time includes copying the next token to the
host, as a generation loop must. For generate, the per-token time is the
interval between the streamer's consecutive puts (each put receives the
next token on the host), and (t(N) - t(1)) / (N - 1) is reported beside it.
Each path's greedy tokens of its first 8 steps are compared with the eager
path's (tokens_match_eager).

One JSON line per (model, path, batch, pos), written as soon as measured;
a path that fails or does not fit the time left is written with "error".
A rerun with the same --out skips what is there (resume after a crash).

Usage (on the GPU machine):
  python3 scripts/gpu/torch_bench.py --out FILE [--budget SECONDS]
  python3 scripts/gpu/torch_bench.py --out FILE --models llama-3.2-1b --batch 1 --pos 1024 --paths eager,compile
"""
import argparse
import contextlib
import gc
import json
import os
import signal
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
import llama_ref  # noqa: E402

MODELS = ["smollm2-135m", "llama-3.2-1b", "llama-3-8b"]
CHEAP = ["eager", "graph", "hf-generate-static"]
CHECK = 8  # steps whose tokens are compared with the eager path's
T0 = time.time()


class Step:
    """A static-cache decode step over the state dict of llama_ref.build."""

    def __init__(self, name, sd, batch, cap):
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
        # The cache holds cap positions; a State attends over its first maxlen
        # (views of one allocation, so that one compiled step, whose cache
        # length is dynamic, serves every position of a batch size).
        self.cap = cap
        self.kfull = torch.zeros(L, batch, KV, cap, D, dtype=torch.bfloat16, device="cuda")
        self.vfull = torch.zeros_like(self.kfull)
        self.arfull = torch.arange(cap, device="cuda")
        self.inv = 1.0 / (float(theta) ** (torch.arange(0, D, 2, dtype=torch.int64, device="cuda").float() / D))
        self.length(cap)

    def length(self, maxlen, dynamic=True):
        """Attend over the cache's first maxlen positions from now on (views
        whose length a compile takes as dynamic, unless dynamic is false)."""
        if maxlen > self.cap:
            raise ValueError(f"cache length {maxlen} above its capacity {self.cap}")
        self.kc = self.kfull[:, :, :, :maxlen]
        self.vc = self.vfull[:, :, :, :maxlen]
        self.ar = self.arfull[:maxlen]
        if dynamic:
            for t in (self.kc, self.vc):
                torch._dynamo.maybe_mark_dynamic(t, 3)
            torch._dynamo.maybe_mark_dynamic(self.ar, 0)

    def weights(self):
        """The tensors whose address and shape never change."""
        out = [self.emb, self.lm, self.normf, self.inv]
        for ws in self.layers:
            out.extend(ws)
        return out

    def views(self):
        """The cache's views of the current length: same addresses at every
        length (they start at the allocation), sizes marked dynamic."""
        return [self.kc, self.vc, self.ar]

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


class TimeLimit(Exception):
    pass


@contextlib.contextmanager
def limit(seconds, what):
    """Raises TimeLimit in the main thread after `seconds` (a compile that
    does not fit the call must not eat it)."""
    def fire(signum, frame):
        raise TimeLimit(f"{what} exceeded its {seconds:.0f} s limit")
    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, max(1.0, seconds))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def dynamo_counts():
    from torch._dynamo.utils import counters
    return {"unique_graphs": counters["stats"]["unique_graphs"], "graph_breaks": sum(counters["graph_break"].values()),
            "cudagraph_skips": counters["inductor"]["cudagraph_skips"]}


def delta(a, b):
    return {k: b[k] - a[k] for k in a}


def kv_of(cache, l):
    """Layer l's (keys, values) of a transformers cache of any recent layout."""
    if hasattr(cache, "layers"):
        return cache.layers[l].keys, cache.layers[l].values
    if hasattr(cache, "key_cache"):
        return cache.key_cache[l], cache.value_cache[l]
    return cache[l][0], cache[l][1]


class State:
    """One (model, batch, pos): the prompt, its prefill into the step's KV
    cache, and the first token."""

    def __init__(self, m, batch, pos, steps, cap):
        self.m, self.batch, self.pos, self.steps = m, batch, pos, steps
        self.maxlen = pos + steps + 16
        self.ids = torch.ones(batch, pos, dtype=torch.long, device="cuda")
        self.st = m.step(batch, max(cap, self.maxlen))
        self.st.length(self.maxlen)
        kw = dict(input_ids=self.ids, attention_mask=torch.ones_like(self.ids), use_cache=True)
        try:
            out = m.model(logits_to_keep=1, **kw)
        except TypeError:
            out = m.model(**kw)
        for l in range(self.st.L):
            k, v = kv_of(out.past_key_values, l)
            self.st.kc[l, :, :, :pos].copy_(k[:, :, :pos])
            self.st.vc[l, :, :, :pos].copy_(v[:, :, :pos])
        self.first = torch.argmax(out.logits[:, -1].float(), -1)
        del out
        self.ref = None  # eager tokens of the first CHECK steps: [[row tokens] per step]
        self.tok = torch.empty(batch, dtype=torch.long, device="cuda")
        self.p = torch.empty(1, dtype=torch.long, device="cuda")

    def reset(self):
        self.tok.copy_(self.first)
        self.p.fill_(self.pos)

    def reference(self):
        if self.ref is None:
            self.reset()
            toks = []
            for _ in range(CHECK):
                nxt = self.st(self.tok, self.p)
                self.tok.copy_(nxt)
                toks.append(nxt.cpu().tolist())
                self.p.add_(1)
            self.ref = toks
        return self.ref


def check(r, state, toks):
    """Adds the token comparison with the eager path to result r."""
    r["tokens"] = [t[0] for t in toks[:CHECK]]
    if r["path"] == "eager":
        return
    ref = state.reference()
    r["tokens_match_eager"] = toks[:CHECK] == ref
    if not r["tokens_match_eager"]:
        i = next((i for i, (a, b) in enumerate(zip(toks, ref)) if a != b), min(len(toks), len(ref)))
        r["first_mismatch"] = {"step": i, "got": toks[i] if i < len(toks) else None, "eager": ref[i] if i < len(ref) else None}


def loop(fn, state, n, mark=False):
    times, toks = [], []
    for _ in range(n):
        t0 = time.perf_counter()
        if mark:
            torch.compiler.cudagraph_mark_step_begin()
        nxt = fn(state.tok, state.p)
        state.tok.copy_(nxt)
        host = nxt.cpu()
        times.append((time.perf_counter() - t0) * 1e3)
        toks.append(host.tolist())
        state.p.add_(1)
    return times, toks


def run_step_path(state, path, left):
    st, steps = state.st, state.steps
    r = {}
    state.reset()
    if path == "eager":
        times, toks = loop(st, state, steps + 2)
        state.ref = toks[:CHECK]
    elif path == "graph":
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(2):
                st(state.tok, state.p)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            nxt = st(state.tok, state.p)
            state.tok.copy_(nxt)
            state.p.add_(1)
        state.reset()
        times, toks = [], []
        for _ in range(steps + 2):
            t0 = time.perf_counter()
            g.replay()
            host = nxt.cpu()
            times.append((time.perf_counter() - t0) * 1e3)
            toks.append(host.tolist())
        del g
    elif path == "compile-static":
        # torch.compile(mode="max-autotune", dynamic=False) of this position
        # alone: every size static, as in a serving system that compiles per
        # cache length; a compile per position.
        torch._dynamo.reset()
        state.m.compiled.pop(state.batch, None)
        st.length(state.maxlen, dynamic=False)
        for t in st.weights() + st.views():
            torch._dynamo.mark_static_address(t)
        fn = torch.compile(st.__call__, mode="max-autotune", dynamic=False)
        c0 = dynamo_counts()
        t0 = time.perf_counter()
        with limit(left, "torch.compile(mode=max-autotune, dynamic=False)"):
            for _ in range(3):
                torch.compiler.cudagraph_mark_step_begin()
                fn(state.tok, state.p).cpu()
        r["compile_s"] = round(time.perf_counter() - t0, 2)
        r["dynamo"] = delta(c0, dynamo_counts())
        state.reset()
        times, toks = loop(fn, state, steps + 2, mark=True)
        r["dynamo_after_timed"] = delta(c0, dynamo_counts())
        torch._dynamo.reset()
        st.length(state.maxlen)
    elif path == "compile":
        # One compile per (model, batch): the cache length is a dynamic size
        # (Step.length), everything else static; a later position of the same
        # batch reuses the compiled step (dynamo's unique_graphs stays 0) and
        # only records its CUDA graph.
        for t in st.views():
            torch._dynamo.mark_static_address(t, guard=False)
        fn = state.m.compiled.get(state.batch)
        r["compiled_before"] = fn is not None
        if fn is None:
            for t in st.weights():
                torch._dynamo.mark_static_address(t)
            fn = torch.compile(st.__call__, mode="max-autotune")
            state.m.compiled[state.batch] = fn
        r["dynamic_dims"] = "cache length (key/value cache views, position range)"
        try:
            r["mode_options"] = {k: str(v) for k, v in torch._inductor.list_mode_options("max-autotune").items()}
        except Exception as e:  # noqa: BLE001
            r["mode_options"] = f"{type(e).__name__}: {e}"
        c0 = dynamo_counts()
        t0 = time.perf_counter()
        with limit(left, "torch.compile(mode=max-autotune)"):
            for _ in range(3):  # compile + warm-up run, CUDA-graph recording, first replay
                torch.compiler.cudagraph_mark_step_begin()
                fn(state.tok, state.p).cpu()
        r["compile_s" if not r["compiled_before"] else "warmup_s"] = round(time.perf_counter() - t0, 2)
        r["dynamo"] = delta(c0, dynamo_counts())
        state.reset()
        times, toks = loop(fn, state, steps + 2, mark=True)
        r["dynamo_after_timed"] = delta(c0, dynamo_counts())
    else:
        raise ValueError(path)
    r.update({"cold_ms": times[0], **stats(times[2:])})
    return r, toks


try:
    from transformers.generation.streamers import BaseStreamer
except ImportError:  # pragma: no cover
    BaseStreamer = object


class Clock(BaseStreamer):
    """A generate streamer that stamps each put: put 0 is the prompt, put 1
    the prefill's token, put k >= 2 the token of decode step k - 1 (already
    on the host)."""

    def __init__(self):
        self.t = []

    def put(self, value):
        self.t.append(time.perf_counter())

    def end(self):
        pass


def run_generate(state, path, left):
    from transformers import StaticCache
    m, steps, pos = state.m, state.steps, state.pos
    compiled = path == "hf-generate-static-compile"
    cache = StaticCache(config=m.model.config, max_cache_len=state.maxlen)
    am = torch.ones_like(state.ids)

    def gen(n, clock=None):
        cache.reset()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        out = m.model.generate(input_ids=state.ids, attention_mask=am, past_key_values=cache, max_new_tokens=n,
                               do_sample=False, streamer=clock, disable_compile=not compiled)
        torch.cuda.synchronize()
        return out, (time.perf_counter() - t0) * 1e3

    r = {"cache": type(cache).__name__, "max_cache_len": state.maxlen}
    c0 = dynamo_counts()
    had = getattr(m.model, "_compiled_call", None) is not None
    first = Clock()
    t0 = time.perf_counter()
    with limit(left, path):
        gen(4, first)
    r["first_call_s"] = round(time.perf_counter() - t0, 2)
    r["first_call_decode_ms"] = [(b - a) * 1e3 for a, b in zip(first.t[1:], first.t[2:])]
    if compiled:
        r["compiled_call"] = getattr(m.model, "_compiled_call", None) is not None
        r["compiled_call_before"] = had
        try:
            from transformers import CompileConfig
            r["compile_config"] = {k: v for k, v in vars(CompileConfig()).items() if isinstance(v, (str, bool, int, float, type(None)))}
        except Exception as e:  # noqa: BLE001
            r["compile_config"] = f"{type(e).__name__}: {e}"
    r["dynamo"] = delta(c0, dynamo_counts())
    _, t1 = gen(1)
    n = steps + 3
    clock = Clock()
    out, tn = gen(n, clock)
    iv = [(b - a) * 1e3 for a, b in zip(clock.t[1:], clock.t[2:])]  # decode steps 1 .. n-1
    r["dynamo_after_timed"] = delta(c0, dynamo_counts())
    r.update({"cold_ms": iv[0], **stats(iv[2:]), "t1_ms": t1, "tn_ms": tn, "ms_per_token_tn_t1": (tn - t1) / (n - 1),
              "puts": len(clock.t)})
    if compiled:  # the first call less a warm call of the same length (t(1) and 3 warm steps)
        r["compile_s"] = round(r["first_call_s"] - (t1 + 3 * r["ms_per_token_median"]) / 1e3, 2)
    new = out[:, pos:].cpu()
    r["prefill_token_match"] = new[:, 0].tolist() == state.first.cpu().tolist()
    toks = [new[:, k].tolist() for k in range(1, new.shape[1])]
    return r, toks


class Model:
    def __init__(self, name):
        self.name = name
        t0 = time.time()
        self.model, self.sd, _ = llama_ref.build(name, torch.bfloat16, 1, "cuda")
        gcfg = self.model.generation_config
        gcfg.eos_token_id = None  # no stop token: every path decodes the same number of steps
        gcfg.pad_token_id = 0
        self.model.config.eos_token_id = None
        self.build_s = round(time.time() - t0, 1)
        self.steps, self.compiled = {}, {}

    def step(self, batch, cap):
        """The decode step of this batch size, with a cache of at least cap
        positions (a larger one replaces it, and its compiled form)."""
        st = self.steps.get(batch)
        if st is None or st.cap < cap:
            self.steps.pop(batch, None)
            self.compiled.pop(batch, None)
            gc.collect()
            torch.cuda.empty_cache()
            st = self.steps[batch] = Step(self.name, self.sd, batch, cap)
        return st


def plan(a):
    """(model, batch, pos, paths) in the order of the acceptance priorities."""
    if a.batch or a.pos or a.paths:
        paths = (a.paths or ",".join(CHEAP + ["hf-generate-static-compile", "compile"])).split(",")
        return [(m, b, p, paths) for m in a.models for b in map(int, (a.batch or "1").split(","))
                for p in map(int, (a.pos or "128,1024,4096").split(","))]
    jobs = []
    for m in a.models:  # 1: batch 1, position 1024, all but max-autotune
        jobs.append((m, 1, 1024, CHEAP + ["hf-generate-static-compile"]))
    for m in a.models:  # 2: max-autotune there
        jobs.append((m, 1, 1024, ["compile"]))
    for m in a.models:  # 3: batch 1 at 128 and 4096
        for p in (128, 4096):
            jobs.append((m, 1, p, CHEAP))
    for m in a.models:
        for p in (128, 4096):
            jobs.append((m, 1, p, ["hf-generate-static-compile", "compile"]))
    for b in (4, 16):  # 4: batches 4 and 16
        for m in a.models:
            for p in (128, 1024, 4096):
                jobs.append((m, b, p, CHEAP))
    for b in (4, 16):
        for m in a.models:
            for p in (128, 1024, 4096):
                jobs.append((m, b, p, ["hf-generate-static-compile", "compile"]))
    return jobs


CAP = {"compile": 200, "compile-static": 200, "hf-generate-static-compile": 120}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--batch", default="")
    ap.add_argument("--pos", default="")
    ap.add_argument("--paths", default="")
    ap.add_argument("--steps", type=int, default=32)
    ap.add_argument("--budget", type=float, default=1e9, help="seconds this process may run")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    a.models = a.models.split(",")
    for k, v in (("cache_size_limit", 512), ("recompile_limit", 512), ("accumulated_cache_size_limit", 4096),
                 ("accumulated_recompile_limit", 4096)):
        if hasattr(torch._dynamo.config, k):
            setattr(torch._dynamo.config, k, v)
    import transformers
    env = {"torch": torch.__version__, "transformers": transformers.__version__, "gpu": torch.cuda.get_device_name(0)}
    done, started = set(), set()
    if os.path.exists(a.out):
        for line in open(a.out):
            try:
                r = json.loads(line)
            except ValueError:
                continue
            key = (r.get("model"), r.get("path"), r.get("batch"), r.get("pos"))
            (started if r.get("started") else done).add(key)
    f = open(a.out, "a")

    def emit(r):
        f.write(json.dumps(r) + "\n")
        f.flush()  # a process stopped by a time limit keeps what it measured
        if not r.get("started"):
            print(json.dumps({k: v for k, v in r.items() if k not in ("dynamo_after_timed", "compile_config")}), flush=True)

    for key in sorted(started - done, key=str):
        emit({"model": key[0], "path": key[1], "batch": key[2], "pos": key[3], **env,
              "error": "the process ended during this measurement (crash or time limit); not retried"})
        done.add(key)
    models = {}
    jobs = plan(a)
    # One cache capacity per (model, batch): the largest position planned for
    # it, with room to spare: a view as long as its allocation is contiguous,
    # which the compiled step's guards tell apart from the shorter views (a
    # recompile).
    caps = {}
    for mname, b, pos, _ in jobs:
        caps[(mname, b)] = max(caps.get((mname, b), 0), pos + a.steps + 16 + 64)
    for i, (mname, b, pos, paths) in enumerate(jobs):
        todo = [p for p in paths if (mname, p, b, pos) not in done]
        if not todo:
            continue
        state = None
        left = a.budget - (time.time() - T0)
        if left < 15:
            for path in todo:
                emit({"model": mname, "path": path, "batch": b, "pos": pos, **env, "error": f"not run: {left:.0f} s left in the call"})
                done.add((mname, path, b, pos))
            continue
        try:
            if mname not in models:
                models.clear()  # one model on the GPU at a time
                gc.collect()
                torch.cuda.empty_cache()
                models[mname] = Model(mname)
                print(f"built {mname} in {models[mname].build_s} s at {time.time() - T0:.0f} s", flush=True)
            with torch.no_grad():
                state = State(models[mname], b, pos, a.steps, caps[(mname, b)])
                for path in todo:
                    left = a.budget - (time.time() - T0)
                    r = {"model": mname, "path": path, "batch": b, "pos": pos, **env}
                    need = 45 if path in CAP else 15
                    if left < need:
                        r["error"] = f"not run: {left:.0f} s left in the call"
                        emit(r)
                        done.add((mname, path, b, pos))
                        continue
                    lim = left - 10
                    if path in CAP:
                        lim = min(CAP[path], lim)
                    emit({**r, "started": True})
                    t0 = time.time()
                    try:
                        if path.startswith("hf-"):
                            res, toks = run_generate(state, path, lim)
                        else:
                            res, toks = run_step_path(state, path, lim)
                        r.update(res)
                        check(r, state, toks)
                    except Exception as e:  # a path that does not run is reported, not hidden
                        r["error"] = f"{type(e).__name__}: {e}"[:400]
                    r["wall_s"] = round(time.time() - t0, 1)
                    r["at_s"] = round(time.time() - T0, 1)
                    emit(r)
                    done.add((mname, path, b, pos))
                    if "error" in r and (path in CAP or "CUDA" in r["error"]):
                        # A compile cut off by its limit (or a CUDA error) can leave the
                        # process in a state no later measurement should trust: the
                        # driver starts a fresh process, which skips what is written.
                        f.close()
                        os._exit(3)
                    torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001
            for path in todo:
                if (mname, path, b, pos) not in done:
                    emit({"model": mname, "path": path, "batch": b, "pos": pos, **env,
                          "error": f"setup: {type(e).__name__}: {e}"[:400]})
                    done.add((mname, path, b, pos))
        del state
        if jobs[i + 1:i + 2] and jobs[i + 1][:2] == (mname, b):
            continue  # the next position of the same model and batch reuses the compiled step
        if mname in models:
            models[mname].compiled.clear()
        torch._dynamo.reset()
        gc.collect()
        torch.cuda.empty_cache()
    f.close()


if __name__ == "__main__":
    main()
