#!/bin/bash
# The device call behind docs/gpu/h200-2026-12-01e/m3: torch.compile(mode="max-autotune") with
# every size static (compile-static, one compile per position) at batch 1, position 4096, where
# the compile with a dynamic cache length lost to the CUDA graph; then the PyTorch paths at batch
# 4 (eager, graph, max-autotune with a dynamic cache length). Run from the repository root on the
# GPU machine:  OUT=/some/dir scripts/gpu/compile_h200.sh
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
tb ${STATIC_UNTIL:-260} --models ${STATIC_MODELS:-smollm2-135m,llama-3-8b} --batch 1 --pos 4096 --paths compile-static
tb $LIMIT --models ${B4_MODELS:-smollm2-135m,llama-3.2-1b} --batch 4 --pos 1024,128,4096 --paths eager,graph,compile
python3 scripts/gpu/torch_fastest.py $T --table 2>&1 | grep -v "fastest None" | log
grep -E "Error|error" /tmp/torch.log | grep -v '"error": "not run' | tail -5 | cut -c1-400 | log
{ nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv; date -u; } >> $OUT/env.txt 2>&1
echo "done at $SECONDS s" | log
