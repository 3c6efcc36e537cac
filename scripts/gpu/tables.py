#!/usr/bin/env python3
"""Prints docs/GPU.md section (7)'s tables from docs/gpu/decode-h200.json:
the batched decode checks, every PyTorch path per (model, batch, position),
and the megakernel's latest timed run of every strategy with its baseline.

Usage: python3 scripts/gpu/tables.py docs/gpu/decode-h200.json
"""
import json
import sys

M = {"smollm2-135m": "SmolLM2-135M", "llama-3.2-1b": "Llama-3.2-1B", "llama-3-8b": "Llama-3-8B"}
ORDER = list(M)
CALLS = ["01b", "01c", "c1", "c2", "m1", "m2", "m3", "n1", "n2", "n3", "p1", "p2", "p3", "p4", "p5"]  # in time order


def call(c):
    """A call folder's short name: docs/gpu/h200-2026-12-01b/final -> 01b."""
    day, sub = c.rstrip("/").split("/")[-2:]
    return day[len("h200-2026-12-"):] if sub in ("final", "torch") else sub


def path_name(r):
    if r["path"] == "compile":
        return "max-autotune, dynamic length" if r.get("dynamic_dims") else "max-autotune, static"
    if r["path"] == "compile-static":
        return "max-autotune, static"
    return r["path"]


def main():
    d = json.load(open(sys.argv[1]))
    cf = d["configurations"]
    print("#### Batched decode checks (positions 0–63; first tokens 1 + 97 r, or restarted where the reference's top-2 gap fell below 32)\n")
    print("| model | strategy | batch | tasks | first tokens; reference's min top-2 gap | sequences whose 64 tokens = PyTorch bf16 | teacher-forced equal / tie / other | max abs err (rel; forced) | bound | ms per token (kernel) | call |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for c in sorted((c for c in cf if c["kind"] == "decode-check-batch"), key=lambda c: (ORDER.index(c["model"]), c["batch"], c["strategy"])):
        first = c["first_tokens"] if isinstance(c["first_tokens"], str) else "restarted by llama_ref.py --min-gap 32"
        gap = f"; {c['reference_min_top2_gap']:.3g}" if c.get("reference_min_top2_gap") else ""
        print(f"| {M[c['model']]} | {c['strategy']} | {c['batch']} | {c['tasks']:,} | {first}{gap} | **{c['sequences_matching']}/{c['batch']}** | "
              f"{c['teacher_forced_equal']} / {c['teacher_forced_ties']} / {c['teacher_forced_other']} | {c['logits_max_abs_err']:.3g} "
              f"({c['logits_rel_err']:.4f}; {c['logits_rel_err_teacher_forced']:.4f}) | {c['bound_rel_bf16']:.4f} | "
              f"{c['ms_per_token_median']:.3f} ({c['kernel_ms_median']:.3f}) | {call(c['call'])} |")
    print("\n#### PyTorch paths (median ms per token over 32 steps, the call in brackets; fastest in bold)\n")
    runs = {}
    for r in d["pytorch_runs"]:
        if "error" in r or not r.get("ms_per_token_median") or r.get("tokens_match_eager") is False:
            continue
        cur = runs.setdefault((r["model"], r["batch"], r["pos"]), {})
        n = path_name(r)
        if n not in cur or r["ms_per_token_median"] < cur[n][0]:
            cur[n] = (r["ms_per_token_median"], call(r["call"]))
    cols = ["eager", "graph", "max-autotune, static", "max-autotune, dynamic length", "hf-generate-static", "hf-generate-static-compile"]
    print("| model | batch | pos | " + " | ".join(cols) + " |")
    print("|---|---|---|" + "---|" * len(cols))
    for k in sorted(runs, key=lambda k: (ORDER.index(k[0]), k[1], k[2])):
        cur = runs[k]
        best = min(v[0] for v in cur.values())
        cells = []
        for c in cols:
            if c not in cur:
                cells.append("—")
                continue
            v, cl = cur[c]
            cells.append((f"**{v:.3f}**" if v == best else f"{v:.3f}") + f" ({cl})")
        print(f"| {M[k[0]]} | {k[1]} | {k[2]} | " + " | ".join(cells) + " |")
    print("\n#### The verified megakernel, latest timed run of every strategy (32 steps in the generation loop)\n")
    print("| model | batch | pos | strategy | tasks | ours, median [p10, p90, max] | cold / warm | verify ms | fastest PyTorch | ours / PyTorch | ours / floor | PyTorch paths not measured there | call |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    latest = {}
    for c in cf:
        if c["kind"] != "timed" or c["prefetch_bytes"] != 0:
            continue
        k = (c["model"], c["batch"], c["pos"], c["strategy"])
        if k not in latest or CALLS.index(call(c["call"])) >= CALLS.index(call(latest[k]["call"])):
            latest[k] = c
    for k in sorted(latest, key=lambda k: (ORDER.index(k[0]), k[1], k[2], k[3])):
        c = latest[k]
        fl = f"{c['ratio_to_weight_floor']:.2f}" if c["ratio_to_weight_floor"] else "—"
        base = f"{c['baseline']} {c['baseline_ms_per_token']:.3f} ({call(c['baseline_call'])})" if c["baseline"] else "—"
        rat = f"{c['ratio_to_baseline']:.2f}" if c["ratio_to_baseline"] else "—"
        print(f"| {M[k[0]]} | {k[1]} | {k[2]} | {k[3]} | {c['tasks']:,} | {c['ms_per_token_median']:.3f} [{c['ms_per_token_p10']:.3f}, "
              f"{c['ms_per_token_p90']:.3f}, {c['ms_per_token_max']:.3f}] | {c['cold_ms']:.3f} / {c['warm_ms']:.3f} | {c['verify_ms']:.0f} | "
              f"{base} | {rat} | {fl} | {', '.join(c['pytorch_paths_not_measured']) or 'none'} | {call(c['call'])} |")


if __name__ == "__main__":
    main()
