#!/bin/bash
# One batch size of the decode matrix behind docs/GPU.md section (7) and docs/gpu/decode-h200.json,
# in one device call: the PyTorch paths (eager, CUDA graph, torch.compile max-autotune) at positions
# 1024, 128 and 4096, then the verified megakernel's timed runs at the same batch and positions
# (TestGPULlamaBench), then, as time allows, the per-op checks and batched decode checks against
# PyTorch (TestGPULlamaDecodeBatch). The kernel is compiled (NVRTC, on the CPU) while PyTorch runs.
# Run from the repository root on the GPU machine with the binaries built here (Go is not there):
#   go test -c -o .gpu/runner.test ./runner
#   OUT=/some/dir BATCH=1 scripts/gpu/matrix_h200.sh
#   python3 scripts/gpu/collect.py /some/dir [earlier dirs] > docs/gpu/decode-h200.json
# Knobs: BATCH (1, 4 or 16), LIMIT (seconds, default 560), MODELS; TORCH_MODELS, TORCH_BATCH and
# PATHS (the PyTorch runs; TORCH_MODELS= runs none), BENCH_MODELS, BENCH_BATCH and STRATEGIES (the
# megakernel's; BENCH_MODELS= runs none), REFS (models of the batched decode checks, empty: none),
# DECODE_BATCH, DECODE_STRATEGIES, REF_FIRST (sequence r of the checks starts from token REF_FIRST + 97 r,
# default 1), MIN_GAP (llama_ref.py --min-gap: sequences whose reference path has a smaller top-2 gap restart from
# other tokens). MEGAPROOF_KERNEL_CACHE may name a folder holding the compiled
# kernel (default $OUT/kc, which comes back). At most 8 files come back from a call: the outputs
# are log.txt, env.txt, torch.jsonl, bench.json, decode-batch.json, refs.tgz and the kernel image.
set -u
S=$PWD/.gpu; L=$OUT/log.txt
BATCH=${BATCH:-1}; LIMIT=${LIMIT:-560}
MODELS=${MODELS:-smollm2-135m,llama-3.2-1b,llama-3-8b}
TORCH_MODELS=${TORCH_MODELS-$MODELS}; TORCH_BATCH=${TORCH_BATCH:-$BATCH}
BENCH_MODELS=${BENCH_MODELS-$MODELS}; BENCH_BATCH=${BENCH_BATCH:-$BATCH}
STRATEGIES=${STRATEGIES:-fused-split8c256,fused,round-robin,split8c256}
PATHS=${PATHS:-eager,graph,compile}
REFS=${REFS:-}; DECODE_BATCH=${DECODE_BATCH:-4}; DECODE_STRATEGIES=${DECODE_STRATEGIES:-round-robin,split2,fused,fused-split2}
export MEGAPROOF_KERNEL_CACHE=${MEGAPROOF_KERNEL_CACHE:-$OUT/kc} PYTHONUNBUFFERED=1
mkdir -p $MEGAPROOF_KERNEL_CACHE
log() { tee -a $L; }
left() { echo $((LIMIT - SECONDS)); }
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv
  python3 -c 'import torch,transformers,triton;print("torch",torch.__version__,"transformers",transformers.__version__,"triton",triton.__version__,"cuda",torch.version.cuda)'
  echo "cpus $(nproc)"; } > $OUT/env.txt 2>&1
echo "limit $LIMIT s; torch: $TORCH_MODELS batch $TORCH_BATCH paths $PATHS; megakernel: $BENCH_MODELS batch $BENCH_BATCH strategies $STRATEGIES; refs $REFS" | log
(cd runner && $S/runner.test -test.run 'TestGPUInfo' -test.v 2>&1 | grep device: > /tmp/kernel.txt) &
kpid=$!
echo "stage torch at $SECONDS s" | log
T=$OUT/torch.jsonl
# A process that crashes or leaves a cut-off compile behind is followed by a fresh one that
# skips what is written.
while [ -n "$TORCH_MODELS" ]; do
  tl=$(( $(left) - ${RESERVE:-150} )); [ $tl -lt 40 ] && break
  timeout --kill-after=5 $tl python3 scripts/gpu/torch_bench.py --out $T --models $TORCH_MODELS --batch $TORCH_BATCH --pos 1024,128,4096 --paths $PATHS --budget $((tl - 10)) >> /tmp/torch.log 2>&1; rc=$?
  echo "torch exit $rc at $SECONDS s: $(grep -vc '"started": true' $T) results" | log
  [ $rc = 0 ] && break
done
[ -s $T ] && python3 scripts/gpu/torch_fastest.py $T --table 2>&1 | grep "b$TORCH_BATCH " | log
grep -E "Error|error" /tmp/torch.log | grep -v '"error": "not run' | tail -5 | cut -c1-400 | log
wait $kpid; cat /tmp/kernel.txt | log
B=/tmp/bench; mkdir -p $B
echo "stage bench at $SECONDS s" | log
[ -n "$BENCH_MODELS" ] && timeout --kill-after=5 $(( $(left) - ${BENCH_RESERVE:-20} )) env MEGAPROOF_BENCH_LLAMA=1 MEGAPROOF_OUT=$B MEGAPROOF_LLAMA_MODELS=$BENCH_MODELS MEGAPROOF_BENCH_POS=1024,128,4096 MEGAPROOF_BENCH_BATCH=$BENCH_BATCH MEGAPROOF_LLAMA_STRATEGIES=$STRATEGIES \
  $S/runner.test -test.run TestGPULlamaBench -test.v -test.timeout 600s 2>&1 | grep -E 'per token|not fused|FAIL|panic|Error' | sed 's/^ *gpu_llama_test.go:[0-9]*: //' | log
python3 -c 'import json,sys,glob; print(json.dumps([json.load(open(f)) for f in sorted(glob.glob(sys.argv[1]+"/*.json"))], indent=1))' $B > $OUT/bench.json
if [ $(left) -gt 40 ] && [ -n "${OPS:-}" ]; then
  echo "stage ops at $SECONDS s" | log
  (cd runner && timeout 60 $S/runner.test -test.run 'TestGPUNumericOps' -test.v 2>&1 | grep -E -- '--- |runs per op' | log)
fi
if [ -n "$REFS" ]; then
  R=/tmp/ref; D=/tmp/decode; mkdir -p $D /tmp/refs
  echo "stage batched decode at $SECONDS s" | log
  # The inits of the batch-1 checks (docs/GPU.md section 5): embedding x2^s, lm head = embedding
  # rolled 1001 rows, untied.
  for m in ${REFS//,/ }; do
    [ $(left) -lt 60 ] && { echo "$m: not run ($(left) s left)" | log; continue; }
    case $m in smollm2-135m) s=5;; *) s=6;; esac
    timeout $(( $(left) - 30 )) python3 scripts/gpu/llama_ref.py --model $m --out $R --embed-shift $s --head-from-embed --head-roll 1001 --untie --first ${REF_FIRST:-1} --min-gap ${MIN_GAP:-0} --batches $DECODE_BATCH 2>&1 | tail -3 | log
    cp $R/$m/ref.json /tmp/refs/$m.json
    for f in $R/$m/batch-*.json; do cp $f /tmp/refs/$m-$(basename $f); done
    timeout $(( $(left) - 10 )) env MEGAPROOF_OUT=$D MEGAPROOF_LLAMA_REF=$R MEGAPROOF_LLAMA_MODELS=$m MEGAPROOF_LLAMA_BATCH=$DECODE_BATCH MEGAPROOF_LLAMA_STRATEGIES=$DECODE_STRATEGIES \
      $S/runner.test -test.run TestGPULlamaDecodeBatch -test.v -test.timeout 600s 2>&1 | grep -v '^=== RUN' | grep -v -- "--- PASS" | sed 's/^ *gpu_llama_test.go:[0-9]*: //' | log
    rm -rf $R/$m
  done
  python3 -c 'import json,sys,glob; print(json.dumps([json.load(open(f)) for f in sorted(glob.glob(sys.argv[1]+"/*.json"))], indent=1))' $D > $OUT/decode-batch.json
  tar czf $OUT/refs.tgz -C /tmp refs
fi
{ nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv; date -u; } >> $OUT/env.txt 2>&1
echo "done at $SECONDS s" | log
