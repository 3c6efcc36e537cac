#!/usr/bin/env python3
"""Builds docs/gpu/decode-h200.json from the output folders of device calls.

Usage: python3 scripts/gpu/collect.py DIR... > docs/gpu/decode-h200.json
  (today: docs/gpu/h200-2026-12-01b/final docs/gpu/h200-2026-12-01c/torch
   docs/gpu/h200-2026-12-01d/c1 docs/gpu/h200-2026-12-01d/c2
   docs/gpu/h200-2026-12-01e/m1 docs/gpu/h200-2026-12-01e/m2
   docs/gpu/h200-2026-12-01e/m3 docs/gpu/h200-2026-12-01f/n1
   docs/gpu/h200-2026-12-01f/n2 docs/gpu/h200-2026-12-01f/n3
   docs/gpu/h200-2026-12-01g/p1 ... docs/gpu/h200-2026-12-01g/p5
   docs/gpu/h200-2026-12-02d/sweep docs/gpu/h200-2026-12-02d/prefetch
   docs/gpu/h200-2026-12-02d/x1 docs/gpu/h200-2026-12-02f/s1
   docs/gpu/h200-2026-12-02f/k2)

A folder may hold decode.json (TestGPULlamaDecode, one object per model,
strategy and init), decode-batch.json (TestGPULlamaDecodeBatch: B sequences
decoded together against PyTorch's batched greedy decoding), bench.json
(TestGPULlamaBench), torch.jsonl
(scripts/gpu/torch_bench.py), refs.json or refs/*.json (llama_ref.py's
ref.json files), profile.json (TestGPULlamaProfile) and env.txt. Every row
names the call (folder) it comes from.

One object per measured configuration: the decode checks (positions 0-63)
and the timed runs. A decode check's tokens_match is strict greedy equality
with PyTorch bf16 over 64 tokens. A timed run's tokens_match and logit error
are those of the decode check of the same model and strategy family (fused
or not; round-robin, split-KV or dynamic; attention per sequence or not) at
the same batch, else at the nearest batch with a check of that family (the
larger of two as near); among several checks, one that teacher forcing
finds wrong beyond a near-tie of the reference is taken first (a real
error is never hidden by a later pass), then one whose tokens match (a
later check against a reference without near-ties, llama_ref.py
--min-gap), then, among batch-1 checks, one whose reference steps through
64 distinct tokens (the rolled lm head); the latest of equals. It is named in
correctness_from. The baseline is the fastest PyTorch path measured for the
same model, batch and position in any of the calls, named with its call;
baseline_same_call says whether it ran in the timed run's own call, and
pytorch_paths_measured lists every path measured there (fastest of each).
A decode check whose tokens differ only after a near-tie of the reference
(teacher forcing finds ties, no other difference) says so in "note".
"""
import glob
import json
import os
import sys

floor_ms = {"smollm2-135m": 0.063, "llama-3.2-1b": 0.58, "llama-3-8b": 3.53}
target_ms = {"smollm2-135m": 0.12, "llama-3.2-1b": 0.70, "llama-3-8b": 3.7}


def load(d, n, default):
    p = os.path.join(d, n)
    return json.load(open(p)) if os.path.exists(p) else default


def refs_of(d):
    out = list(load(d, "refs.json", {}).values())
    for f in sorted(glob.glob(os.path.join(d, "refs", "*.json"))):
        out.append(json.load(open(f)))
    return out


def tie_note(row, x):
    """Says in row["note"] when a decode check's tokens differ from the
    reference only after near-ties of it (teacher forcing finds ties and no
    other difference)."""
    if not x["TokensMatch"] and x["ForcedTies"] > 0 and x["ForcedOther"] == 0:
        row["note"] = (f"greedy tokens part after a near-tie of the reference (teacher forcing: {x['ForcedTies']} ties, "
                       "no other difference; a tie is a top-2 gap of the reference within the logit error)")


def first_tokens(x):
    """A batched check's start tokens: "F + 97 r" when sequence r started
    from F + 97 r, else the list (llama_ref.py --min-gap restarted some)."""
    fs = x.get("Firsts")
    if fs and fs != [fs[0] + 97 * r for r in range(len(fs))]:
        return fs
    return f"{x.get('First') or 1} + 97 r"


def family(strategy):
    """(attention per sequence, fused, round-robin / split / dynamic / ...)
    of a strategy name: [rows-][fused-]kind, "fused" alone being fused
    round-robin."""
    rows = strategy.startswith("rows-")
    if rows:
        strategy = strategy[len("rows-"):]
    fused = strategy.startswith("fused")
    s = strategy[len("fused-"):] if strategy.startswith("fused-") else ("round-robin" if strategy == "fused" else strategy)
    return rows, fused, "split" if s.startswith("split") else s


calls = []
for d in sys.argv[1:]:
    torch_runs = []
    if os.path.exists(os.path.join(d, "torch.jsonl")):
        torch_runs = [json.loads(l) for l in open(os.path.join(d, "torch.jsonl")) if l.strip()]
        torch_runs = [r for r in torch_runs if not r.get("started")]
    env = open(os.path.join(d, "env.txt")).read().splitlines() if os.path.exists(os.path.join(d, "env.txt")) else []
    calls.append({"call": d, "decode": load(d, "decode.json", []), "batch": load(d, "decode-batch.json", []),
                  "bench": load(d, "bench.json", []), "refs": refs_of(d),
                  "profiles": load(d, "profile.json", []), "torch": torch_runs, "env": env})


def ref_for(c, x):
    for r in c["refs"]:
        if r["model"] == x["Model"] and r.get("embed_shift", 0) == x["EmbedShift"] and bool(r.get("head_from_embed")) == bool(x.get("HeadFromEmbed")):
            return r
    return {}


def init_name(x, r):
    s = "std 0.018 (seed 1)" if not x["EmbedShift"] else f"embedding x2^{x['EmbedShift']}"
    if x.get("HeadFromEmbed"):
        s += ", lm_head = embedding"
        if r.get("head_roll"):
            s += f" rolled {r['head_roll']} rows"
        if r.get("untie"):
            s += " (untied)"
    return s


def path_name(r):
    """A PyTorch run's path; a max-autotune compile says whether its cache
    length was dynamic (one compile for every position) or static."""
    if r["path"] == "compile":
        return "compile-dynamic-length" if r.get("dynamic_dims") else "compile-static"
    return r["path"]


def baseline(c, model, batch, pos):
    best, paths = None, {}
    for cc in calls:
        for r in cc["torch"]:
            if r["model"] == model and r["batch"] == batch and r["pos"] == pos and "error" not in r and r.get("ms_per_token_median"):
                if r.get("tokens_match_eager") is False:
                    continue
                n, ms = path_name(r), r["ms_per_token_median"]
                paths[n] = round(min(paths.get(n, ms), ms), 4)
                if best is None or ms < best[1]["ms_per_token_median"]:
                    best = (cc["call"], r)
    if best is None:
        return None, None, None, None, paths
    return path_name(best[1]), best[1]["ms_per_token_median"], best[0], best[0] == c["call"], paths


out, checks = [], {}
for c in calls:
    for x in c["decode"]:
        r = ref_for(c, x)
        distinct = len(set(r.get("tokens_bf16", []) or x.get("RefTokens", []))) or None
        row = {
            "kind": "decode-check", "call": c["call"], "model": x["Model"], "strategy": x["Strategy"], "batch": 1, "pos": "0-63",
            "init": init_name(x, r), "embed_shift": x["EmbedShift"], "head_from_embed": bool(x.get("HeadFromEmbed")),
            "head_roll": r.get("head_roll", 0), "weights": x["Weights"], "tasks": x["Tasks"],
            "tokens_match": x["TokensMatch"], "first_mismatch": x["FirstMismatch"],
            "distinct_reference_tokens": distinct,
            "pytorch_fp32_equals_bf16_tokens": (r.get("tokens_fp32") == r.get("tokens_bf16")) if r else None,
            "teacher_forced_equal": x["ForcedEqual"], "teacher_forced_ties": x["ForcedTies"], "teacher_forced_other": x["ForcedOther"],
            "logits_max_abs_err": x["BF16MaxAbs"], "logits_rel_err": x["BF16Rel"],
            "logits_max_abs_err_fp32": x["FP32MaxAbs"], "logits_rel_err_fp32": x["FP32Rel"],
            "logits_rel_err_teacher_forced": x["ForcedBF16Rel"], "logits_rel_err_fp32_teacher_forced": x["ForcedFP32Rel"],
            "pytorch_bf16_vs_fp32_rel": x["RefNoiseRel"], "bound_rel_bf16": x["BoundBF16Rel"], "bound_rel_fp32": x["BoundFP32Rel"],
            "ms_per_token_median": x["StepMedianMS"], "kernel_ms_median": x["KernelMedianMS"],
            "prepare_seconds": x["PrepareSeconds"],
        }
        tie_note(row, x)
        out.append(row)
        key = (x["Model"],) + family(x["Strategy"])
        rank = (x["ForcedOther"] > 0, bool(x["TokensMatch"]), distinct or 0)
        if key not in checks or rank >= checks[key][0]:
            checks[key] = (rank, row)
bchecks = {}
for c in calls:
    for x in c["batch"]:
        row = {
            "kind": "decode-check-batch", "call": c["call"], "model": x["Model"], "strategy": x["Strategy"], "batch": x["Batch"],
            "pos": "0-63", "init": f"embedding x2^{x['EmbedShift']}, lm_head = embedding rolled {x['HeadRoll']} rows (untied)",
            "first_tokens": first_tokens(x),
            "reference_min_top2_gap": x.get("RefMinGap"),
            "weights": x["Weights"], "tasks": x["Tasks"], "tokens_match": x["TokensMatch"], "sequences_matching": x["RowsMatching"],
            "first_mismatch": x["FirstMismatch"], "teacher_forced_equal": x["ForcedEqual"], "teacher_forced_ties": x["ForcedTies"],
            "teacher_forced_other": x["ForcedOther"], "logits_max_abs_err": x["BF16MaxAbs"], "logits_rel_err": x["BF16Rel"],
            "logits_rel_err_teacher_forced": x["ForcedBF16Rel"], "bound_rel_bf16": x["BoundBF16Rel"],
            "ms_per_token_median": x["StepMedianMS"], "kernel_ms_median": x["KernelMedianMS"], "prepare_seconds": x["PrepareSeconds"],
        }
        tie_note(row, x)
        out.append(row)
        key = (x["Model"], x["Batch"]) + family(x["Strategy"])
        rank = (x["ForcedOther"] > 0, bool(x["TokensMatch"]))
        if key not in bchecks or rank >= bchecks[key][0]:
            bchecks[key] = (rank, row)


def correctness(model, batch, fam):
    """The decode check a timed run takes its correctness from: the check of
    the same model and strategy family at the same batch (the batch-1 check
    at batch 1), else the check of that family at the nearest other batch
    (the larger of two as near); {} when there is none."""
    have = {k[1]: r for k, (_, r) in bchecks.items() if k[0] == model and k[2:] == fam}
    if (model,) + fam in checks:
        have[1] = checks[(model,) + fam][1]
    if not have:
        return {}
    return have[min(have, key=lambda b: (abs(b - batch), -b))]


for c in calls:
    for b in sorted(c["bench"], key=lambda b: (b["Model"], b["Batch"], b["Pos"], b["Strategy"], b["PrefetchBytes"])):
        name, ms, bcall, same, measured = baseline(c, b["Model"], b["Batch"], b["Pos"])
        ck = correctness(b["Model"], b["Batch"], family(b["Strategy"]))
        fl = floor_ms[b["Model"]] if b["Batch"] == 1 else None
        row = {
            "kind": "timed", "call": c["call"], "model": b["Model"], "strategy": b["Strategy"], "tile": b["Tile"], "prefetch_bytes": b["PrefetchBytes"],
            "threads": b["Threads"], "batch": b["Batch"], "pos": b["Pos"], "tasks": b["Tasks"],
            "tokens_match": ck.get("tokens_match"), "logits_max_abs_err": ck.get("logits_max_abs_err"),
            "correctness_from": f"{ck.get('kind')} {b['Model']} {ck.get('strategy')} ({ck.get('init')}), batch {ck.get('batch')}, positions 0-63, {ck.get('call')}" if ck else None,
            "ms_per_token_median": b["MedianMS"], "ms_per_token_p10": b["P10MS"], "ms_per_token_p90": b["P90MS"], "ms_per_token_max": b["MaxMS"],
            "kernel_ms_median": b["KernelMedianMS"], "nop_bodies_kernel_ms": b["NopKernelMS"] or None,
            "cold_ms": b["ColdMS"], "warm_ms": b["WarmMS"], "timed_steps": b["Steps"],
            "verify_ms": b["VerifyMS"], "prepare_seconds": b["PrepareSeconds"], "tables_upload_seconds": b["LoadSeconds"],
            "baseline": name, "baseline_ms_per_token": ms, "baseline_call": bcall, "baseline_same_call": same,
            "pytorch_paths_measured": measured,
            "pytorch_paths_not_measured": [p for p, have in (
                ("eager", "eager" in measured), ("graph", "graph" in measured),
                ("compile (max-autotune)", any(k.startswith("compile") for k in measured)),
                ("hf-generate-static-compile", "hf-generate-static-compile" in measured)) if not have],
            "ratio_to_baseline": (b["MedianMS"] / ms) if ms else None,
            "weight_floor_ms": fl, "ratio_to_weight_floor": b["MedianMS"] / fl if fl else None,
            "target_ms": target_ms[b["Model"]] if b["Batch"] == 1 and b["Pos"] == 1024 else None,
        }
        if "NoStaging" in b:
            # attention's K and V rows staged in shared memory or read in place
            row["staging"] = not b["NoStaging"]
        out.append(row)
doc = {
    "environment": {
        "gpu": "NVIDIA H200 (132 SMs, sm_90), driver 580.159.04, CUDA 13.0; torch 2.11.0+cu130, transformers 5.17.0",
        "calls": {c["call"]: c["env"] for c in calls},
        "runner": "persistent interpreter kernel compiled by NVRTC 13.0 (at most 512 threads per block, 128 registers), 512 threads per block, 132 workers, llamagen AutoTile",
        "host_binary": "go test -c with Go 1.26.8 on the CPU machine, cgo on",
        "kv_cache_for_timed_runs": "rows below the position as the heap holds them (zeros); timing does not depend on values",
        "timed_weights": "seeded init, seed 1, std 0.018 (timing does not depend on the values)",
        "pytorch_paths_measured": sorted({path_name(r) for c in calls for r in c["torch"] if "error" not in r}),
    },
    "pytorch_runs": [dict(r, call=c["call"]) for c in calls for r in c["torch"]],
    "profiles": [dict(p, call=c["call"]) for c in calls for p in c["profiles"]],
    "configurations": out,
}
json.dump(doc, sys.stdout, indent=1)
print()
