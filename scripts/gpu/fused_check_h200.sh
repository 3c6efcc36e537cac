#!/bin/bash
# The device call c1 of docs/GPU.md section (6): per-op checks, rolled-head references and decode
# checks of the three models (unfused and fused strategies), batch-1 timings at position 1024, 1B at
# batch 4 and 16, traces of fused-split8c256. From the repository root on the GPU machine, with the
# binaries of docs/GPU.md section (6) in .gpu:  OUT=/some/dir bash scripts/gpu/fused_check_h200.sh
set -u
S=.gpu; L=$OUT/log.txt; export MEGAPROOF_KERNEL_CACHE=/tmp/kc
log() { tee -a $L; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv; } > $OUT/env.txt 2>&1
cd runner
MEGAPROOF_CUBIN=/tmp/k.cubin ../$S/runner.test -test.run 'TestGPUInfo|TestGPUNumericOps' -test.v 2>&1 | grep -v '^=== RUN' | tail -6 | log
cuobjdump --dump-resource-usage /tmp/k.cubin 2>&1 | grep -A1 "mp_interp" | tail -1 | log
cd ..
echo "stage refs at $SECONDS s" | log
R=/tmp/ref; D=/tmp/dec; mkdir -p $D $OUT/refs
good() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(int(r["tokens_bf16"]==r["tokens_fp32"] and len(set(r["tokens_bf16"]))>=32))' $1; }
pick() { local m=$1; shift; local extra=$1; shift
  for s in "$@"; do
    python3 scripts/gpu/llama_ref.py --model $m --out $R/r$s --embed-shift $s --head-from-embed --head-roll 1001 $extra 2>&1 | tail -1 | tee -a $L >&2
    cp $R/r$s/$m/ref.json $OUT/refs/$m-r$s.json
    [ "$(good $R/r$s/$m/ref.json)" = 1 ] && { echo $R/r$s; return; }
  done; echo $R/r$s; }
dec() { env MEGAPROOF_OUT=$D MEGAPROOF_LLAMA_STRATEGIES=round-robin,fused,fused-split2,fused-dynamic "$@" $S/runner.test -test.run TestGPULlamaDecode -test.v -test.timeout 300s 2>&1 | grep -v '^=== RUN' | grep -v -- "--- PASS" | sed 's/^ *gpu_llama_test.go:[0-9]*: //' | log; }
r=$(pick smollm2-135m --untie 3 5); dec MEGAPROOF_LLAMA_REF=$r MEGAPROOF_LLAMA_MODELS=smollm2-135m
echo "at $SECONDS s" | log
r=$(pick llama-3.2-1b --untie 4 6); dec MEGAPROOF_LLAMA_REF=$r MEGAPROOF_LLAMA_MODELS=llama-3.2-1b
echo "at $SECONDS s" | log
r=$(pick llama-3-8b "" 6 4); dec MEGAPROOF_LLAMA_REF=$r MEGAPROOF_LLAMA_MODELS=llama-3-8b
python3 -c 'import json,sys,glob; print(json.dumps([json.load(open(f)) for f in sorted(glob.glob(sys.argv[1]+"/*.json"))], indent=1))' $D > $OUT/decode.json
echo "stage bench at $SECONDS s" | log
B=/tmp/bench; mkdir -p $B
bench() { env MEGAPROOF_BENCH_LLAMA=1 MEGAPROOF_OUT=$B "$@" $S/runner.test -test.run TestGPULlamaBench -test.v -test.timeout 200s 2>&1 | grep -E 'per token|not fused|FAIL|panic' | sed 's/^ *gpu_llama_test.go:[0-9]*: //' | log; }
bench MEGAPROOF_LLAMA_MODELS=smollm2-135m,llama-3.2-1b,llama-3-8b MEGAPROOF_BENCH_POS=1024 MEGAPROOF_BENCH_BATCH=1 MEGAPROOF_LLAMA_STRATEGIES=split8c256,fused-split8c256,fused
echo "at $SECONDS s" | log
[ $SECONDS -lt 470 ] && bench MEGAPROOF_LLAMA_MODELS=llama-3.2-1b MEGAPROOF_BENCH_POS=1024 MEGAPROOF_BENCH_BATCH=4,16 MEGAPROOF_LLAMA_STRATEGIES=round-robin,fused
python3 -c 'import json,sys,glob; print(json.dumps([json.load(open(f)) for f in sorted(glob.glob(sys.argv[1]+"/*.json"))], indent=1))' $B > $OUT/bench.json
echo "stage profile at $SECONDS s" | log
P=/tmp/prof; mkdir -p $P
[ $SECONDS -lt 540 ] && MEGAPROOF_PROFILE=1 MEGAPROOF_OUT=$P MEGAPROOF_LLAMA_MODELS=llama-3.2-1b,smollm2-135m MEGAPROOF_LLAMA_STRATEGIES=fused-split8c256 $S/runner.test -test.run TestGPULlamaProfile -test.v -test.timeout 50s 2>&1 | grep -v '^=== RUN' | grep -v -- '--- PASS' | sed 's/^ *gpu_llama_test.go:[0-9]*: //' | log
python3 -c 'import json,sys,glob; print(json.dumps([json.load(open(f)) for f in sorted(glob.glob(sys.argv[1]+"/*.json"))], indent=1))' $P > $OUT/profile.json
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> $OUT/env.txt; date -u >> $OUT/env.txt
echo "done at $SECONDS s" | log
