#!/usr/bin/env python3
"""Builds docs/gpu/decode-h200.json from a decode_h200.sh output folder.

Usage: python3 scripts/gpu/collect.py docs/gpu/h200-2026-12-01b/final > docs/gpu/decode-h200.json

The folder holds decode.json (TestGPULlamaDecode, one object per model,
strategy and init), bench.json (TestGPULlamaBench), torch.jsonl
(scripts/gpu/torch_bench.py), refs.json (llama_ref.py's ref.json files),
profile.json (TestGPULlamaProfile) and env.txt, all from one device call.

One object per measured configuration: the decode checks (positions 0-63)
and the timed runs. A decode check's tokens_match is strict greedy equality
with PyTorch bf16 over 64 tokens. A timed run's tokens_match and logit error
are those of the decode check of the same model and strategy family
(round-robin; split-KV: the split2 check; the init with matching tokens),
named in correctness_from. The baseline is the fastest PyTorch path measured
in the same call for the same model, batch and position.
"""
import json
import os
import sys

d = sys.argv[1]
load = lambda n: json.load(open(os.path.join(d, n)))
decode = load("decode.json")
bench = load("bench.json")
refs = load("refs.json")
profiles = load("profile.json") if os.path.exists(os.path.join(d, "profile.json")) else []
torch_runs = [json.loads(l) for l in open(os.path.join(d, "torch.jsonl"))]
env_lines = open(os.path.join(d, "env.txt")).read().splitlines()
floor_ms = {"smollm2-135m": 0.063, "llama-3.2-1b": 0.58, "llama-3-8b": 3.53}
target_ms = {"smollm2-135m": 0.12, "llama-3.2-1b": 0.70, "llama-3-8b": 3.7}


def init_name(x):
    s = "std 0.018 (seed 1)" if not x["EmbedShift"] else f"embedding x2^{x['EmbedShift']}"
    if x.get("HeadFromEmbed"):
        s += ", lm_head = embedding"
    return s


def ref_for(x):
    for k, r in refs.items():
        if r["model"] == x["Model"] and r.get("embed_shift", 0) == x["EmbedShift"] and bool(r.get("head_from_embed")) == bool(x.get("HeadFromEmbed")):
            return r
    return {}


def baseline(model, batch, pos):
    ok = [r for r in torch_runs if r["model"] == model and r["batch"] == batch and r["pos"] == pos and "error" not in r]
    if not ok:
        return None, None
    b = min(ok, key=lambda r: r["ms_per_token_median"])
    return b["path"], b["ms_per_token_median"]


out = []
checks = {}
for x in decode:
    r = ref_for(x)
    row = {
        "kind": "decode-check", "model": x["Model"], "strategy": x["Strategy"], "batch": 1, "pos": "0-63",
        "init": init_name(x), "embed_shift": x["EmbedShift"], "head_from_embed": bool(x.get("HeadFromEmbed")),
        "weights": x["Weights"], "tasks": x["Tasks"],
        "tokens_match": x["TokensMatch"], "first_mismatch": x["FirstMismatch"],
        "distinct_reference_tokens": len(set(r.get("tokens_bf16", []))) or None,
        "pytorch_fp32_equals_bf16_tokens": (r.get("tokens_fp32") == r.get("tokens_bf16")) if r else None,
        "teacher_forced_equal": x["ForcedEqual"], "teacher_forced_ties": x["ForcedTies"], "teacher_forced_other": x["ForcedOther"],
        "logits_max_abs_err": x["BF16MaxAbs"], "logits_rel_err": x["BF16Rel"],
        "logits_max_abs_err_fp32": x["FP32MaxAbs"], "logits_rel_err_fp32": x["FP32Rel"],
        "logits_rel_err_teacher_forced": x["ForcedBF16Rel"], "logits_rel_err_fp32_teacher_forced": x["ForcedFP32Rel"],
        "pytorch_bf16_vs_fp32_rel": x["RefNoiseRel"], "bound_rel_bf16": x["BoundBF16Rel"], "bound_rel_fp32": x["BoundFP32Rel"],
        "ms_per_token_median": x["StepMedianMS"], "kernel_ms_median": x["KernelMedianMS"],
        "prepare_seconds": x["PrepareSeconds"],
    }
    out.append(row)
    fam = "split" if x["Strategy"].startswith("split") else x["Strategy"]
    if x["TokensMatch"] or (x["Model"], fam) not in checks:
        checks[(x["Model"], fam)] = row
for b in sorted(bench, key=lambda b: (b["Model"], b["Batch"], b["Pos"], b["Strategy"], b["PrefetchBytes"])):
    name, ms = baseline(b["Model"], b["Batch"], b["Pos"])
    fam = "split" if b["Strategy"].startswith("split") else b["Strategy"]
    c = checks.get((b["Model"], fam), {})
    fl = floor_ms[b["Model"]] if b["Batch"] == 1 else None
    out.append({
        "kind": "timed", "model": b["Model"], "strategy": b["Strategy"], "tile": b["Tile"], "prefetch_bytes": b["PrefetchBytes"],
        "threads": b["Threads"], "batch": b["Batch"], "pos": b["Pos"], "tasks": b["Tasks"],
        "tokens_match": c.get("tokens_match"), "logits_max_abs_err": c.get("logits_max_abs_err"),
        "correctness_from": f"decode-check {b['Model']} {c.get('strategy')} ({c.get('init')}), batch 1, positions 0-63" if c else None,
        "ms_per_token_median": b["MedianMS"], "ms_per_token_p10": b["P10MS"], "ms_per_token_p90": b["P90MS"], "ms_per_token_max": b["MaxMS"],
        "kernel_ms_median": b["KernelMedianMS"], "nop_bodies_kernel_ms": b["NopKernelMS"] or None,
        "cold_ms": b["ColdMS"], "warm_ms": b["WarmMS"], "timed_steps": b["Steps"],
        "verify_ms": b["VerifyMS"], "prepare_seconds": b["PrepareSeconds"], "tables_upload_seconds": b["LoadSeconds"],
        "baseline": name, "baseline_ms_per_token": ms,
        "ratio_to_baseline": (b["MedianMS"] / ms) if ms else None,
        "weight_floor_ms": fl, "ratio_to_weight_floor": b["MedianMS"] / fl if fl else None,
        "target_ms": target_ms[b["Model"]] if b["Batch"] == 1 and b["Pos"] == 1024 else None,
    })
doc = {
    "environment": {
        "gpu": "NVIDIA H200 (132 SMs, sm_90)", "nvidia_smi": env_lines,
        "runner": "persistent interpreter kernel compiled by NVRTC 13.0 (at most 512 threads per block, 128 registers), 512 threads per block, 132 workers, llamagen AutoTile",
        "host_binary": "go test -c with Go 1.26.8 on the CPU machine, cgo on",
        "kv_cache_for_timed_runs": "rows below the position as the heap holds them (zeros); timing does not depend on values",
        "timed_weights": "seeded init, seed 1, std 0.018 (timing does not depend on the values)",
        "pytorch_paths_measured": sorted({r["path"] for r in torch_runs}),
        "pytorch_paths_not_measured_in_this_call": "eager, hf-generate-static and torch.compile(max-autotune): the call ran out of its 600 s (see docs/GPU.md)",
    },
    "pytorch_runs": torch_runs,
    "profiles": profiles,
    "configurations": out,
}
json.dump(doc, sys.stdout, indent=1)
print()
