#!/bin/bash
# The device run behind docs/GPU.md section (5) and docs/gpu/decode-h200.json, in one call:
# per-op checks, references, decode checks (3 models x 3 strategies), megaproof-run and its
# refusal of a faulted schedule, the timed matrix, traces, PyTorch baselines. Run from the
# repository root on the GPU machine with the binaries built here (Go is not there):
#   go test -c -o .gpu/runner.test ./runner && go build -o .gpu/megaproof-run ./cmd/megaproof-run
#   OUT=/some/dir scripts/gpu/decode_h200.sh
#   python3 scripts/gpu/collect.py /some/dir > docs/gpu/decode-h200.json
set -u
S=.gpu; L=$OUT/log.txt; export MEGAPROOF_KERNEL_CACHE=/tmp/kc
log() { tee -a $L; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv;
  python3 -c 'import torch,transformers;print("torch",torch.__version__,"transformers",transformers.__version__,"cuda",torch.version.cuda)'; } > $OUT/env.txt 2>&1
cd runner
MEGAPROOF_CUBIN=/tmp/k.cubin ../$S/runner.test -test.run 'TestGPUInfo|TestGPUNumericOps' -test.v 2>&1 | grep -v '^=== RUN' | tail -4 | log
cuobjdump --dump-resource-usage /tmp/k.cubin 2>&1 | grep -A1 "mp_interp" | tail -1 | log
../$S/runner.test -test.run 'TestGPUSafe' -test.short 2>&1 | tail -2 | log
cd ..
R=/tmp/ref; D=/tmp/dec; mkdir -p $D
agree() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(int(r["tokens_bf16"]==r["tokens_fp32"]))' $1; }
ref() { python3 scripts/gpu/llama_ref.py "$@" 2>&1 | tail -1 | log; }
dec() { env MEGAPROOF_OUT=$D MEGAPROOF_LLAMA_STRATEGIES=round-robin,split2,dynamic "$@" $S/runner.test -test.run TestGPULlamaDecode -test.v -test.timeout 400s 2>&1 | grep -v '^=== RUN' | grep -v -- "--- PASS" | sed 's/^ *gpu_llama_test.go:[0-9]*: //' | log; }
allmatch() { python3 -c 'import json,sys,glob; fs=glob.glob(sys.argv[1]); print(int(bool(fs) and all(json.load(open(f))["TokensMatch"] for f in fs)))' "$1"; }
echo "stage refs+decode at $SECONDS s" | log
ref --model smollm2-135m --out $R/s0 --safetensors
dec MEGAPROOF_LLAMA_REF=$R/s0 MEGAPROOF_LLAMA_MODELS=smollm2-135m
if [ "$(allmatch "$D/decode-smollm2-135m-*-s0.json")" != 1 ]; then
  ref --model smollm2-135m --out $R/s3 --embed-shift 3 --safetensors
  dec MEGAPROOF_LLAMA_REF=$R/s3 MEGAPROOF_LLAMA_MODELS=smollm2-135m
fi
ref --model llama-3.2-1b --out $R/s4 --embed-shift 4
dec MEGAPROOF_LLAMA_REF=$R/s4 MEGAPROOF_LLAMA_MODELS=llama-3.2-1b
for s in 6 5 7; do
  ref --model llama-3-8b --out $R/h$s --embed-shift $s --head-from-embed
  [ "$(agree $R/h$s/llama-3-8b/ref.json)" = 1 ] && break
done
dec MEGAPROOF_LLAMA_REF=$R/h$s MEGAPROOF_LLAMA_MODELS=llama-3-8b
python3 -c 'import json,sys,glob; print(json.dumps([json.load(open(f)) for f in sorted(glob.glob(sys.argv[1]+"/*.json"))], indent=1))' $D > $OUT/decode.json
for d in $R/*/*; do cp $d/ref.json $D/ref-$(basename $(dirname $d))-$(basename $d).json; done
python3 -c 'import json,sys,glob; print(json.dumps({f.split("/")[-1]:json.load(open(f)) for f in sorted(glob.glob(sys.argv[1]+"/ref-*.json"))}, indent=1))' $D > $OUT/refs.json
echo "stage run at $SECONDS s" | log
$S/megaproof-run -model llama-3.2-1b -embed-shift 4 -tokens 64 -ref $R/s4/llama-3.2-1b/ref.json 2>&1 | log
$S/megaproof-run -model llama-3.2-1b -tokens 4 -fault drop-wait 2>&1 | tail -1 | log; echo "exit ${PIPESTATUS[0]}" | log
B=/tmp/bench; mkdir -p $B
bench() { env MEGAPROOF_BENCH_LLAMA=1 MEGAPROOF_OUT=$B "$@" $S/runner.test -test.run TestGPULlamaBench -test.v -test.timeout 400s 2>&1 | grep 'per token' | sed 's/^ *gpu_llama_test.go:[0-9]*: //' | log; }
echo "stage bench at $SECONDS s" | log
bench MEGAPROOF_LLAMA_MODELS=smollm2-135m,llama-3.2-1b,llama-3-8b MEGAPROOF_BENCH_POS=128,1024,4096 MEGAPROOF_BENCH_BATCH=1 MEGAPROOF_LLAMA_STRATEGIES=round-robin,split8c256 MEGAPROOF_BENCH_NOP=1
bench MEGAPROOF_LLAMA_MODELS=llama-3.2-1b MEGAPROOF_BENCH_POS=1024 MEGAPROOF_PREFETCH=1
bench MEGAPROOF_LLAMA_MODELS=smollm2-135m,llama-3.2-1b,llama-3-8b MEGAPROOF_BENCH_POS=128,1024,4096 MEGAPROOF_BENCH_BATCH=4,16
python3 -c 'import json,sys,glob; print(json.dumps([json.load(open(f)) for f in sorted(glob.glob(sys.argv[1]+"/*.json"))], indent=1))' $B > $OUT/bench.json
P=/tmp/prof; mkdir -p $P
MEGAPROOF_PROFILE=1 MEGAPROOF_OUT=$P MEGAPROOF_LLAMA_MODELS=smollm2-135m,llama-3.2-1b,llama-3-8b $S/runner.test -test.run TestGPULlamaProfile -test.v -test.timeout 100s 2>&1 | grep -v '^=== RUN' | grep -v -- '--- PASS' | sed 's/^ *gpu_llama_test.go:[0-9]*: //' | grep -E "tasks, kernel|  (q|attn|gate|up|down|lm|o) " | log
python3 -c 'import json,sys,glob; print(json.dumps([json.load(open(f)) for f in sorted(glob.glob(sys.argv[1]+"/*.json"))], indent=1))' $P > $OUT/profile.json
echo "stage torch at $SECONDS s" | log
T=$OUT/torch.jsonl
tb() { local lim=$1; shift; local left=$((575 - SECONDS)); [ $left -lt 20 ] && { echo "torch $*: not run ($left s left)" | log; return; }
  [ $lim -gt $left ] && lim=$left
  timeout $lim python3 scripts/gpu/torch_bench.py "$@" --out $T > /tmp/tb.log 2>&1; local rc=$?
  echo "torch $* (limit $lim s): exit $rc at $SECONDS s: $(grep -c ms_per_token /tmp/tb.log) results" | log; }
for m in smollm2-135m llama-3.2-1b llama-3-8b; do tb 60 --model $m --batch 1,4,16 --paths graph; done
for m in smollm2-135m llama-3.2-1b llama-3-8b; do tb 60 --model $m --batch 1 --paths eager,hf-generate-static; done
tb 150 --model llama-3.2-1b --batch 1 --pos 1024 --paths compile
for m in smollm2-135m llama-3.2-1b llama-3-8b; do tb 40 --model $m --batch 4,16 --paths eager; done
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> $OUT/env.txt; date -u >> $OUT/env.txt
