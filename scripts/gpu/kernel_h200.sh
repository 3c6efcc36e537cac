#!/bin/bash
# One device call for a change to the kernel (docs/GPU.md): the kernel image's registers and stack,
# per-op checks, the byte programs, the rolled-head references of the three models (made by PyTorch
# while NVRTC compiles the kernel), decode checks at batch 1, REPS timed runs of every model and
# strategy, traces of Llama-3.2-1B and the sync benchmarks of docs/GPU.md (3) (SYNC=0: not).
# From the repository root on the GPU machine, with the test binary built here (Go is not there):
#   go test -c -o .gpu/runner.test ./runner
#   OUT=/some/dir bash scripts/gpu/kernel_h200.sh
# Knobs: LIMIT (seconds: later stages are left out past it), STRATEGIES (timed), POS (1024), REPS
# (2), DECODE_STRATEGIES, MODELS, BENCH_MODELS, PROFILE (1), PROFILE_STRATEGY (fused-split2). Files in $OUT: log.txt, env.txt,
# resource.txt, decode.json, bench.json (every run, with its rep), profile.json.
set -u
S=$PWD/.gpu; L=$OUT/log.txt
MODELS=${MODELS:-smollm2-135m,llama-3.2-1b,llama-3-8b}
BENCH_MODELS=${BENCH_MODELS:-llama-3.2-1b,llama-3-8b,smollm2-135m}
STRATEGIES=${STRATEGIES:-fused-split8c256,fused-split2}; POS=${POS:-1024}; REPS=${REPS:-2}; LIMIT=${LIMIT:-540}
DECODE_STRATEGIES=${DECODE_STRATEGIES:-fused-split8c256,fused-split2}
export MEGAPROOF_KERNEL_CACHE=${MEGAPROOF_KERNEL_CACHE:-/tmp/kc} PYTHONUNBUFFERED=1
mkdir -p $MEGAPROOF_KERNEL_CACHE
log() { tee -a $L; }
strip() { grep -v '^=== RUN' | grep -v -- "--- PASS" | sed 's/^ *gpu_llama_test.go:[0-9]*: //'; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv
  python3 -c 'import torch,transformers;print("torch",torch.__version__,"transformers",transformers.__version__,"cuda",torch.version.cuda)'
  echo "cpus $(nproc)"; } > $OUT/env.txt 2>&1
# The references (inits of docs/GPU.md sections 6-7), on the GPU while the kernel compiles.
R=/tmp/ref; mkdir -p $R
(for m in ${MODELS//,/ }; do
   case $m in smollm2-135m) a="--embed-shift 5 --untie";; llama-3.2-1b) a="--embed-shift 6 --untie";; *) a="--embed-shift 6";; esac
   python3 scripts/gpu/llama_ref.py --model $m --out $R $a --head-from-embed --head-roll 1001 > /tmp/ref-$m.log 2>&1
 done) &
rpid=$!
cd runner
MEGAPROOF_CUBIN=/tmp/k.cubin $S/runner.test -test.run 'TestGPUInfo' -test.v 2>&1 | grep -E -- '--- |device:|FAIL|panic' | cut -c1-400 | log
cuobjdump --dump-resource-usage /tmp/k.cubin > $OUT/resource.txt 2>&1
grep -A1 "mp_interp" $OUT/resource.txt | tail -1 | log
echo "local-memory loads/stores in mp_interp: $(cuobjdump -sass -fun mp_interp /tmp/k.cubin 2>/dev/null | grep -cE 'STL|LDL')" | log
timeout 120 $S/runner.test -test.run 'TestGPUNumericOps' -test.v 2>&1 | grep -E -- '--- |runs per op|FAIL|panic' | cut -c1-400 | log
timeout 90 $S/runner.test -test.run 'TestGPUSafe' -test.short -test.v 2>&1 | grep -E -- '^--- |^ok|FAIL|panic' | head -5 | log
cd ..
wait $rpid
for m in ${MODELS//,/ }; do tail -1 /tmp/ref-$m.log | cut -c1-300 | log; done
echo "stage decode at $SECONDS s" | log
D=/tmp/dec; mkdir -p $D
timeout 200 env MEGAPROOF_OUT=$D MEGAPROOF_LLAMA_REF=$R MEGAPROOF_LLAMA_MODELS=$MODELS MEGAPROOF_LLAMA_STRATEGIES=$DECODE_STRATEGIES \
  $S/runner.test -test.run 'TestGPULlamaDecode$' -test.v -test.timeout 200s 2>&1 | strip | cut -c1-600 | log
python3 -c 'import json,sys,glob; print(json.dumps([json.load(open(f)) for f in sorted(glob.glob(sys.argv[1]+"/*.json"))], indent=1))' $D > $OUT/decode.json
echo "stage bench at $SECONDS s" | log
B=/tmp/bench; mkdir -p $B
for r in $(seq $REPS); do
  [ $SECONDS -gt $((LIMIT - 45)) ] && break
  mkdir -p $B/r$r
  timeout 120 env MEGAPROOF_BENCH_LLAMA=1 MEGAPROOF_OUT=$B/r$r MEGAPROOF_LLAMA_MODELS=$BENCH_MODELS MEGAPROOF_BENCH_POS=$POS MEGAPROOF_BENCH_BATCH=1 \
    MEGAPROOF_LLAMA_STRATEGIES=$STRATEGIES $S/runner.test -test.run TestGPULlamaBench -test.v -test.timeout 120s 2>&1 | grep -E 'per token|FAIL|panic' | strip | log
  python3 -c 'import json,sys,glob; print(json.dumps([dict(json.load(open(f)), rep=f.split("/")[-2]) for f in sorted(glob.glob(sys.argv[1]+"/r*/*.json"))], indent=1))' $B > $OUT/bench.json
done
if [ "${PROFILE:-1}" = 1 ] && [ $SECONDS -lt $((LIMIT - 15)) ]; then
  echo "stage profile at $SECONDS s" | log
  P=/tmp/prof; mkdir -p $P
  timeout 40 env MEGAPROOF_PROFILE=1 MEGAPROOF_OUT=$P MEGAPROOF_LLAMA_MODELS=llama-3.2-1b MEGAPROOF_LLAMA_STRATEGIES=${PROFILE_STRATEGY:-fused-split2} \
    $S/runner.test -test.run TestGPULlamaProfile -test.v -test.timeout 40s 2>&1 | strip | log
  python3 -c 'import json,sys,glob; print(json.dumps([json.load(open(f)) for f in sorted(glob.glob(sys.argv[1]+"/*.json"))], indent=1))' $P > $OUT/profile.json
fi
if [ "${SYNC:-1}" = 1 ] && [ $SECONDS -lt $((LIMIT - 70)) ]; then
  echo "stage sync benchmarks at $SECONDS s" | log
  (cd runner && timeout 65 env MEGAPROOF_BENCH=1 $S/runner.test -test.run 'TestGPUBench$' -test.v -test.timeout 65s 2>&1 |
    grep -E 'handoff|barrier|overhead|^chain|^fan|megakernel|stream launches|CUDA graph|ratios|FAIL|panic' | cut -c1-300 | log)
fi
{ nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv; date -u; } >> $OUT/env.txt 2>&1
echo "done at $SECONDS s" | log
