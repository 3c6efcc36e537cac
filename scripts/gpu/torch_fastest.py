#!/usr/bin/env python3
"""Summarises scripts/gpu/torch_bench.py's JSON lines: per (model, batch, pos)
every path's median per-token ms (or its error), and the fastest path among
those that ran and whose tokens equal the eager path's.

Usage: python3 scripts/gpu/torch_fastest.py torch.jsonl > fastest.json
       python3 scripts/gpu/torch_fastest.py torch.jsonl --table   (one line per configuration)
"""
import json
import sys

MODELS = ["smollm2-135m", "llama-3.2-1b", "llama-3-8b"]
PATHS = ["eager", "graph", "compile", "compile-static", "hf-generate-static", "hf-generate-static-compile"]


def main():
    rows = {}
    for line in open(sys.argv[1]):
        r = json.loads(line)
        if r.get("started"):
            continue
        rows.setdefault((r["model"], r["batch"], r["pos"]), []).append(r)
    for m in MODELS:  # the whole grid, so that what was not measured is listed as such
        for b in (1, 4, 16):
            for p in (128, 1024, 4096):
                rows.setdefault((m, b, p), [])
    out = []
    order = lambda k: (MODELS.index(k[0]) if k[0] in MODELS else 99, k[1], k[2])
    for key in sorted(rows, key=order):
        paths, errors, mismatch = {}, {}, []
        for r in rows[key]:
            if "error" in r:
                errors[r["path"]] = r["error"]
                continue
            paths[r["path"]] = round(r["ms_per_token_median"], 4)
            if r.get("tokens_match_eager") is False:
                mismatch.append(r["path"])
        ok = {p: v for p, v in paths.items() if p not in mismatch}
        best = min(ok, key=ok.get) if ok else None
        out.append({"model": key[0], "batch": key[1], "pos": key[2], "fastest": best,
                    "fastest_ms_per_token_median": ok.get(best), "ms_per_token_median": paths,
                    "tokens_differ_from_eager": mismatch, "errors": errors,
                    "not_measured": [p for p in PATHS if p not in paths and p not in errors]})
    if sys.argv[2:] == ["--table"]:
        for o in out:
            ms = " ".join(f"{p}={v:.3f}" for p, v in sorted(o["ms_per_token_median"].items()))
            err = " ".join(f"{p}:ERR" for p in sorted(o["errors"]))
            print(f'{o["model"]} b{o["batch"]} p{o["pos"]}: fastest {o["fastest"]} | {ms} {err} differ={o["tokens_differ_from_eager"]} not measured={o["not_measured"]}')
        return
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
