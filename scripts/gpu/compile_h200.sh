#!/bin/bash
# PyTorch paths in one device call, in two phases (docs/gpu/h200-2026-12-01e/m3 ran the defaults):
#  1. torch.compile(mode="max-autotune") with every size static (compile-static, one compile per
#     position) for STATIC_MODELS at batch STATIC_BATCH (1), positions STATIC_POS (4096), until
#     STATIC_UNTIL seconds (STATIC_MODELS= skips it);
#  2. eager, the CUDA graph and max-autotune with a dynamic cache length (one compile per model and
#     batch) for B4_MODELS at batch MATRIX_BATCH (4), positions 1024, 128 and 4096, until LIMIT.
# The batch-4 and batch-16 max-autotune figures docs/GPU.md section (7) lists as not measured:
#   OUT=/tmp/a STATIC_MODELS= MATRIX_BATCH=4 B4_MODELS=smollm2-135m,llama-3-8b scripts/gpu/compile_h200.sh
#   OUT=/tmp/b STATIC_MODELS= MATRIX_BATCH=16 B4_MODELS=smollm2-135m,llama-3.2-1b,llama-3-8b scripts/gpu/compile_h200.sh
# (a compile takes 100-150 s; the second call's three need LIMIT=560 and may not all fit).
# Run from the repository root on the GPU machine:  OUT=/some/dir scripts/gpu/compile_h200.sh
set -u
LIMIT=${LIMIT:-540}; L=$OUT/log.txt; T=$OUT/torch.jsonl; export PYTHONUNBUFFERED=1
log() { tee -a $L; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv
  python3 -c 'import torch,transformers,triton;print("torch",torch.__version__,"transformers",transformers.__version__,"triton",triton.__version__,"cuda",torch.version.cuda)'
  echo "cpus $(nproc)"; } > $OUT/env.txt 2>&1
tb() { local until=$1; shift
  while :; do
    local tl=$((until - SECONDS)); [ $tl -lt 40 ] && break
    timeout --kill-after=5 $tl python3 scripts/gpu/torch_bench.py --out $T --budget $((tl - 10)) "$@" >> /tmp/torch.log 2>&1; rc=$?
    echo "torch $*: exit $rc at $SECONDS s" | log
    [ $rc = 0 ] && break
  done; }
STATIC_MODELS=${STATIC_MODELS-smollm2-135m,llama-3-8b}
[ -n "$STATIC_MODELS" ] && tb ${STATIC_UNTIL:-260} --models $STATIC_MODELS --batch ${STATIC_BATCH:-1} --pos ${STATIC_POS:-4096} --paths compile-static
tb $LIMIT --models ${B4_MODELS:-smollm2-135m,llama-3.2-1b} --batch ${MATRIX_BATCH:-4} --pos 1024,128,4096 --paths eager,graph,compile
python3 scripts/gpu/torch_fastest.py $T --table 2>&1 | grep -v "fastest None" | log
grep -E "Error|error" /tmp/torch.log | grep -v '"error": "not run' | tail -5 | cut -c1-400 | log
{ nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv; date -u; } >> $OUT/env.txt 2>&1
echo "done at $SECONDS s" | log
