#!/bin/bash
# The device run behind docs/GPU.md "PyTorch paths compared" (docs/gpu/h200-2026-12-01c/torch/):
# every path of scripts/gpu/torch_bench.py in one call, in the order of its plan (batch 1,
# position 1024 first), within SECONDS (default 560). A process that crashes or leaves a cut-off
# compile behind is followed by a fresh one that skips what is written. Run from the repository
# root on the GPU machine:
#   OUT=/some/dir scripts/gpu/torch_h200.sh [SECONDS]
#   python3 scripts/gpu/torch_fastest.py /some/dir/torch.jsonl > docs/gpu/h200-2026-12-01c/torch/fastest.json
set -u
B=${1:-560}
export PYTHONUNBUFFERED=1
T=$OUT/torch.jsonl; L=$OUT/log.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv
  python3 -c 'import torch,transformers,triton; print("torch", torch.__version__, "transformers", transformers.__version__, "triton", triton.__version__, "cuda", torch.version.cuda)'
  echo "cpus $(nproc)"; } > $OUT/env.txt 2>&1
while :; do
  left=$((B - SECONDS)); [ $left -lt 40 ] && break
  timeout --kill-after=5 $left python3 $(dirname $0)/torch_bench.py --out $T --budget $((left - 20)) >> $L 2>&1; rc=$?
  echo "torch_bench exit $rc at $SECONDS s: $(grep -vc '"started": true' $T) results" | tee -a $L
  [ $rc = 0 ] && break
done
{ nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv; date -u; } >> $OUT/env.txt 2>&1
