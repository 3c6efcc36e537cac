"""AutoMegaKernel's own lowerings beyond E2's shape: batched decode (GEMM tiles,
rank-3 q, rank-4 caches), weight-only int4/int8 quantization (symmetric and
asymmetric, two group sizes) and split-KV attention (ATTENTION_COMBINE), written
by AMK's own lower() and to_json(), for megaproof to verify.

AMK (github.com/RightNow-AI/AutoMegaKernel) is not a dependency: point this
script at a checkout of it (its IR and lowering are stdlib-only Python; its
quantizer needs torch, so the quantization metadata is built here from the
graph's shapes, as the quantizer would describe them). Every program but the
asymmetric ones is also accepted by AMK's validate() (which refuses the four
inputs of an asymmetric tile, while AMK's own kernel takes them).

    python3 scripts/amk/lowerings.py --amk /path/to/AutoMegaKernel --out amkx
    megaproof verify --json amkx/*.json      # every one is safe
"""

import argparse
import dataclasses
import os
import sys


class QuantMeta:
    """What AMK's lowering reads of schedule.quantize.QuantMeta."""

    def __init__(self, bits, group, symmetric, keys):
        self.bits, self.group, self.symmetric, self.keys = bits, group, symmetric, keys

    def is_quantized(self, key):
        return key in self.keys

    @property
    def qdtype_name(self):
        return "I4" if self.bits == 4 else "I8"

    def to_dict(self):
        return {"group": self.group, "bits": self.bits, "symmetric": self.symmetric, "keys": self.keys}


def quant_meta(graph, bits, group, symmetric):
    keys = {}
    for node in graph.nodes:
        if node.op == "linear":
            k, n = node.attrs["K"], node.attrs["N"]
            ng = (k + group - 1) // group
            keys[node.weights[0]] = {"N": n, "K": k, "n_groups": ng, "has_zeros": not symmetric,
                                     "packed_shape": [n, (k + 1) // 2 if bits == 4 else k],
                                     "scales_shape": [n, ng]}
    return QuantMeta(bits, group, symmetric, keys)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--amk", required=True, help="a checkout of AutoMegaKernel")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    sys.path.insert(0, args.amk)
    from schedule.graph import ModelConfig, _ToyKeys, _build_decoder_graph
    from schedule.ir import TARGETS, ScheduleConfig, validate
    from schedule.lower import lower

    os.makedirs(args.out, exist_ok=True)
    n = 0

    def write(name, prog, check=True):
        nonlocal n
        res = validate(prog)
        if check and not res:
            sys.exit(f"AMK rejects its own lowering {name}:\n{res.report()}")
        with open(os.path.join(args.out, name + ".json"), "w", encoding="utf-8") as f:
            f.write(prog.to_json())
        n += 1

    for layers in (1, 2):
        for hidden in (64, 128):
            cfg = ModelConfig(hidden=hidden, n_heads=4, n_kv_heads=2, head_dim=hidden // 4,
                              intermediate=2 * hidden, vocab=256, n_layers=layers)
            graph = _build_decoder_graph(cfg, _ToyKeys())
            target = dataclasses.replace(TARGETS["h100"], num_sms=132)
            for tile in (16, 64):
                conf = ScheduleConfig(tiling={"gemv": {"N_tile": tile}})
                for pos in (0, 3, 7):
                    tag = f"l{layers}-h{hidden}-t{tile}-p{pos}"
                    for b in (1, 2, 4):
                        write(f"b{b}-{tag}", lower(graph, target=target, config=conf, pos=pos, B=b))
                    for bits in (4, 8):
                        for sym in (True, False):
                            for group in (32, 64):
                                q = quant_meta(graph, bits, group, sym)
                                write(f"q{bits}{'s' if sym else 'a'}g{group}-{tag}",
                                      lower(graph, target=target, config=conf, pos=pos, quant=q), check=sym)
            for npart in (2, 4, 8):
                for pos in (15, 40, 100):
                    for sms in (4, 82, 132):
                        conf = ScheduleConfig(tiling={"gemv": {"N_tile": 32}, "attention": {"n_partitions": npart}})
                        t = dataclasses.replace(TARGETS["h100"], num_sms=sms)
                        write(f"s{npart}-l{layers}-h{hidden}-p{pos}-m{sms}", lower(graph, target=t, config=conf, pos=pos))
    print(f"{n} programs written to {args.out}")


if __name__ == "__main__":
    main()
