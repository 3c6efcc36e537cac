#!/bin/bash
# The device call x1 of docs/GPU.md section (9): Llama-3.2-1B's fastest batch-1 shape of the sweeps,
# fused-split2, checked and timed with the committed kernel in one call: the rolled-head reference
# and decode checks (fused-split2 and fused-split8c256), the timed runs at positions 128, 1024 and
# 4096, the PyTorch CUDA graph at the same positions, and a trace of fused-split2 at 1024.
# From the repository root on the GPU machine, with the test binary built here and the kernel image
# carried in .gpu/kc when it is there:
#   go test -c -o .gpu/runner.test ./runner
#   OUT=/some/dir bash scripts/gpu/split2_h200.sh
set -u
S=$PWD/.gpu; L=$OUT/log.txt; LIMIT=${LIMIT:-560}; M=llama-3.2-1b
export MEGAPROOF_KERNEL_CACHE=/tmp/kc PYTHONUNBUFFERED=1
mkdir -p /tmp/kc; [ -d $S/kc ] && cp $S/kc/*.img /tmp/kc/ 2>/dev/null
log() { tee -a $L; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv
  python3 -c 'import torch,transformers;print("torch",torch.__version__,"transformers",transformers.__version__,"cuda",torch.version.cuda)'; } > $OUT/env.txt 2>&1
collect() { python3 -c 'import json,sys,glob; print(json.dumps([json.load(open(f)) for f in sorted(glob.glob(sys.argv[1]+"/*.json"))], indent=1))' $1 > $OUT/$2; }
R=/tmp/ref; D=/tmp/dec; B=/tmp/bench; P=/tmp/prof; mkdir -p $D $B $P $OUT/refs
good() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(int(r["tokens_bf16"]==r["tokens_fp32"] and len(set(r["tokens_bf16"]))>=32))' $1; }
r=""
for s in 4 6; do
  python3 scripts/gpu/llama_ref.py --model $M --out $R/r$s --embed-shift $s --head-from-embed --head-roll 1001 --untie 2>&1 | tail -1 | log
  cp $R/r$s/$M/ref.json $OUT/refs/$M-r$s.json; r=$R/r$s
  [ "$(good $R/r$s/$M/ref.json)" = 1 ] && break
done
echo "stage decode at $SECONDS s" | log
env MEGAPROOF_OUT=$D MEGAPROOF_LLAMA_REF=$r MEGAPROOF_LLAMA_MODELS=$M MEGAPROOF_LLAMA_STRATEGIES=fused-split2,fused-split8c256 \
  $S/runner.test -test.run TestGPULlamaDecode -test.v -test.timeout 300s 2>&1 | grep -v '^=== RUN' | grep -v -- "--- PASS" | sed 's/^ *gpu_llama_test.go:[0-9]*: //' | log
collect $D decode.json
echo "stage bench at $SECONDS s" | log
env MEGAPROOF_BENCH_LLAMA=1 MEGAPROOF_OUT=$B MEGAPROOF_LLAMA_MODELS=$M MEGAPROOF_BENCH_POS=128,1024,4096 MEGAPROOF_BENCH_BATCH=1 \
  MEGAPROOF_LLAMA_STRATEGIES=fused-split2,fused-split8c256 $S/runner.test -test.run TestGPULlamaBench -test.v -test.timeout 200s 2>&1 \
  | grep -E 'per token|FAIL|panic' | sed 's/^ *gpu_llama_test.go:[0-9]*: //' | log
collect $B bench.json
echo "stage torch at $SECONDS s" | log
left=$((LIMIT - 60 - SECONDS))
[ $left -gt 40 ] && timeout --kill-after=5 $left python3 scripts/gpu/torch_bench.py --out $OUT/torch.jsonl --budget $((left - 10)) \
  --models $M --batch 1 --pos 128,1024,4096 --paths graph > /tmp/tb.log 2>&1; echo "torch: exit $? at $SECONDS s" | log
echo "stage profile at $SECONDS s" | log
[ $SECONDS -lt $((LIMIT - 30)) ] && MEGAPROOF_PROFILE=1 MEGAPROOF_OUT=$P MEGAPROOF_LLAMA_MODELS=$M MEGAPROOF_LLAMA_STRATEGIES=fused-split2 \
  $S/runner.test -test.run TestGPULlamaProfile -test.v -test.timeout 50s 2>&1 | grep -v '^=== RUN' | grep -v -- '--- PASS' | sed 's/^ *gpu_llama_test.go:[0-9]*: //' | log
collect $P profile.json
echo "done at $SECONDS s" | log
