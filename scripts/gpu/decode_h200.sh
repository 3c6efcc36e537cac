#!/bin/bash
# The device run behind docs/GPU.md section (6) and docs/gpu/decode-h200.json, in one call:
# per-op checks, the rolled-head reference and decode checks of Llama-3.2-1B (SmolLM2-135M and
# Llama-3-8B: scripts/gpu/fused_check_h200.sh, the call before), megaproof-run and its refusal of
# a faulted schedule, the timed batch-1 matrix, the PyTorch CUDA graph at every batch and
# position and torch.compile(max-autotune) where it was the fastest PyTorch path, traces.
# Run from the repository root on the GPU machine with the binaries built here (Go is not there):
#   go test -c -o .gpu/runner.test ./runner && go build -o .gpu/megaproof-run ./cmd/megaproof-run
#   OUT=/some/dir scripts/gpu/decode_h200.sh
#   python3 scripts/gpu/collect.py /some/dir [earlier dirs] > docs/gpu/decode-h200.json
set -u
S=.gpu; L=$OUT/log.txt; export MEGAPROOF_KERNEL_CACHE=/tmp/kc PYTHONUNBUFFERED=1
LIMIT=${LIMIT:-560}
log() { tee -a $L; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv;
  python3 -c 'import torch,transformers;print("torch",torch.__version__,"transformers",transformers.__version__,"cuda",torch.version.cuda)'; } > $OUT/env.txt 2>&1
cd runner
MEGAPROOF_CUBIN=/tmp/k.cubin ../$S/runner.test -test.run 'TestGPUInfo|TestGPUNumericOps' -test.v 2>&1 | grep -v '^=== RUN' | tail -4 | log
cuobjdump --dump-resource-usage /tmp/k.cubin 2>&1 | grep -A1 "mp_interp" | tail -1 | log
cd ..
echo "stage refs+decode at $SECONDS s" | log
R=/tmp/ref; D=/tmp/dec; mkdir -p $D $OUT/refs
# An init is used when PyTorch's fp32 and bf16 greedy tokens agree, they are at least 32
# distinct tokens, and the smallest top-2 gap is at least 1.
good() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(int(r["tokens_bf16"]==r["tokens_fp32"] and len(set(r["tokens_bf16"]))>=32 and min(r["top2_gap_bf16"])>=1))' $1; }
pick() { local m=$1 extra=$2; shift 2
  for s in "$@"; do
    python3 scripts/gpu/llama_ref.py --model $m --out $R/r$s --embed-shift $s --head-from-embed --head-roll 1001 $extra 2>&1 | tail -1 | tee -a $L >&2
    cp $R/r$s/$m/ref.json $OUT/refs/$m-r$s.json
    [ "$(good $R/r$s/$m/ref.json)" = 1 ] && { echo $s; return; }
  done; echo $s; }
dec() { env MEGAPROOF_OUT=$D MEGAPROOF_LLAMA_STRATEGIES=round-robin,fused,fused-split2,fused-dynamic "$@" $S/runner.test -test.run TestGPULlamaDecode -test.v -test.timeout 300s 2>&1 | grep -v '^=== RUN' | grep -v -- "--- PASS" | sed 's/^ *gpu_llama_test.go:[0-9]*: //' | log; }
s1=$(pick llama-3.2-1b --untie 6 7 5); dec MEGAPROOF_LLAMA_REF=$R/r$s1 MEGAPROOF_LLAMA_MODELS=llama-3.2-1b
python3 -c 'import json,sys,glob; print(json.dumps([json.load(open(f)) for f in sorted(glob.glob(sys.argv[1]+"/*.json"))], indent=1))' $D > $OUT/decode.json
echo "stage run at $SECONDS s" | log
$S/megaproof-run -model llama-3.2-1b -fuse -splits 2 -embed-shift $s1 -head-from-embed -head-roll 1001 -untie -tokens 64 -ref $R/r$s1/llama-3.2-1b/ref.json 2>&1 | log
timeout 120 $S/megaproof-run -model llama-3.2-1b -fuse -tokens 4 -fault drop-wait 2>&1 | tail -1 | log; echo "exit ${PIPESTATUS[0]}" | log
B=/tmp/bench; mkdir -p $B
bench() { env MEGAPROOF_BENCH_LLAMA=1 MEGAPROOF_OUT=$B "$@" $S/runner.test -test.run TestGPULlamaBench -test.v -test.timeout 300s 2>&1 | grep -E 'per token|not fused|FAIL|panic' | sed 's/^ *gpu_llama_test.go:[0-9]*: //' | log; }
echo "stage bench at $SECONDS s" | log
bench MEGAPROOF_LLAMA_MODELS=smollm2-135m,llama-3.2-1b,llama-3-8b MEGAPROOF_BENCH_POS=128,1024,4096 MEGAPROOF_BENCH_BATCH=1 MEGAPROOF_LLAMA_STRATEGIES=fused-split8c256,split8c256
python3 -c 'import json,sys,glob; print(json.dumps([json.load(open(f)) for f in sorted(glob.glob(sys.argv[1]+"/*.json"))], indent=1))' $B > $OUT/bench.json
echo "stage torch at $SECONDS s" | log
T=$OUT/torch.jsonl
tb() { local left=$((LIMIT - 40 - SECONDS)); [ $left -lt 30 ] && { echo "torch $*: not run ($left s left)" | log; return; }
  timeout --kill-after=5 $left python3 scripts/gpu/torch_bench.py --out $T --budget $((left - 10)) "$@" > /tmp/tb.log 2>&1
  echo "torch $*: exit $? at $SECONDS s" | log; }
tb --models smollm2-135m,llama-3.2-1b,llama-3-8b --batch 1 --pos 128,1024,4096 --paths graph
# max-autotune where it was PyTorch's fastest path at batch 1, position 1024 (docs/GPU.md,
# "PyTorch paths compared"); its compiles take 87 and 129 s.
tb --models smollm2-135m,llama-3-8b --batch 1 --pos 1024 --paths compile
tb --models smollm2-135m,llama-3.2-1b,llama-3-8b --batch 4,16 --pos 128,1024,4096 --paths graph
echo "stage profile at $SECONDS s" | log
P=/tmp/prof; mkdir -p $P
MEGAPROOF_PROFILE=1 MEGAPROOF_OUT=$P MEGAPROOF_LLAMA_MODELS=smollm2-135m,llama-3.2-1b,llama-3-8b MEGAPROOF_LLAMA_STRATEGIES=fused-split8c256 $S/runner.test -test.run TestGPULlamaProfile -test.v -test.timeout 60s 2>&1 | grep -E "tasks, kernel|^ +[a-z]+ +[0-9]+ tasks" | sed 's/^ *gpu_llama_test.go:[0-9]*: //' | log
python3 -c 'import json,sys,glob; print(json.dumps([json.load(open(f)) for f in sorted(glob.glob(sys.argv[1]+"/*.json"))], indent=1))' $P > $OUT/profile.json
if [ $SECONDS -lt $((LIMIT - 45)) ]; then
  bench MEGAPROOF_LLAMA_MODELS=smollm2-135m,llama-3.2-1b MEGAPROOF_BENCH_POS=1024 MEGAPROOF_BENCH_BATCH=4 MEGAPROOF_LLAMA_STRATEGIES=fused-split8c256
  python3 -c 'import json,sys,glob; print(json.dumps([json.load(open(f)) for f in sorted(glob.glob(sys.argv[1]+"/*.json"))], indent=1))' $B > $OUT/bench.json
fi
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> $OUT/env.txt; date -u >> $OUT/env.txt
echo "done at $SECONDS s" | log
