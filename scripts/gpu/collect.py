#!/usr/bin/env python3
"""Builds docs/gpu/decode-h200.json from a decode_h200.sh output folder.

Usage: python3 scripts/gpu/collect.py docs/gpu/h200-2026-12-01 > docs/gpu/decode-h200.json

One object per measured configuration: the decode checks (positions 0-63,
every strategy) and the timed runs (round-robin, positions 128/1024/4096,
batches 1/4/16). tokens_match is strict greedy equality with PyTorch bf16
over 64 tokens for the model and strategy; the baseline is the fastest
PyTorch path measured for the same model, batch and position (none where
none ran).
"""
import json
import os
import sys

d = sys.argv[1]
decode = [x for x in json.load(open(os.path.join(d, "decode.json"))) if "Strategy" in x]
bench = json.load(open(os.path.join(d, "bench.json")))
torch_runs = [json.loads(l) for l in open(os.path.join(d, "torch.jsonl"))]
env_lines = open(os.path.join(d, "env.txt")).read().splitlines()
floor_ms = {"smollm2-135m": 0.063, "llama-3.2-1b": 0.58, "llama-3-8b": 3.53}
dec = {(x["Model"], x["Strategy"]): x for x in decode}


def baseline(model, batch, pos):
    ok = [r for r in torch_runs if r["model"] == model and r["batch"] == batch and r["pos"] == pos and "error" not in r]
    if not ok:
        return None, None
    b = min(ok, key=lambda r: r["ms_per_token_median"])
    return b["path"], b["ms_per_token_median"]


out = []
for x in decode:
    out.append({
        "kind": "decode-check", "model": x["Model"], "strategy": x["Strategy"], "batch": 1, "pos": "0-63",
        "weights": x["Weights"], "tasks": x["Tasks"],
        "tokens_match": x["TokensMatch"], "first_mismatch": x["FirstMismatch"],
        "teacher_forced_equal": x["ForcedEqual"], "teacher_forced_ties": x["ForcedTies"], "teacher_forced_other": x["ForcedOther"],
        "logits_max_abs_err": x["BF16MaxAbs"], "logits_rel_err": x["BF16Rel"],
        "logits_max_abs_err_fp32": x["FP32MaxAbs"], "logits_rel_err_fp32": x["FP32Rel"],
        "logits_rel_err_teacher_forced": x["ForcedBF16Rel"], "logits_rel_err_fp32_teacher_forced": x["ForcedFP32Rel"],
        "pytorch_bf16_vs_fp32_rel": x["RefNoiseRel"], "bound_rel_bf16": x["BoundBF16Rel"], "bound_rel_fp32": x["BoundFP32Rel"],
        "ms_per_token_median": x["StepMedianMS"], "kernel_ms_median": x["KernelMedianMS"],
    })
for b in bench:
    name, ms = baseline(b["Model"], b["Batch"], b["Pos"])
    c = dec.get((b["Model"], b["Strategy"]), {})
    out.append({
        "kind": "timed", "model": b["Model"], "strategy": b["Strategy"], "batch": b["Batch"], "pos": b["Pos"], "tasks": b["Tasks"],
        "tokens_match": c.get("TokensMatch"), "logits_max_abs_err": c.get("BF16MaxAbs"),
        "correctness_from": "decode-check of the same model and strategy at batch 1, positions 0-63",
        "ms_per_token_median": b["MedianMS"], "ms_per_token_p10": b["P10MS"], "ms_per_token_p90": b["P90MS"], "ms_per_token_max": b["MaxMS"],
        "kernel_ms_median": b["KernelMedianMS"], "cold_ms": b["ColdMS"], "warm_ms": b["WarmMS"], "timed_steps": b["Steps"],
        "baseline": name, "baseline_ms_per_token": ms,
        "ratio_to_baseline": (b["MedianMS"] / ms) if ms else None,
        "weight_floor_ms": floor_ms.get(b["Model"]) if b["Batch"] == 1 else None,
        "ratio_to_weight_floor": b["MedianMS"] / floor_ms[b["Model"]] if b["Batch"] == 1 else None,
    })
doc = {
    "environment": {
        "gpu": "NVIDIA H200 (132 SMs, sm_90)", "nvidia_smi": env_lines,
        "runner": "persistent interpreter kernel compiled by NVRTC 13.0, 512 threads per block, 132 workers",
        "host_binary": "go test -c with Go 1.26.8 on the CPU machine, cgo on",
        "kv_cache_for_timed_runs": "rows below the position as the heap holds them (zeros); timing does not depend on values",
        "pytorch_paths": sorted({r["path"] for r in torch_runs}),
    },
    "pytorch_runs": torch_runs,
    "configurations": out,
}
json.dump(doc, sys.stdout, indent=1)
print()
