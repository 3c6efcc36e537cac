#!/bin/bash
# The device run behind docs/GPU.md's decode section and docs/gpu/decode-h200.json.
# Run from the repository root on the GPU machine with the binaries built
# here (Go is not there):
#   go test -c -o .gpu/runner.test ./runner && go build -o .gpu/megaproof-run ./cmd/megaproof-run
#   OUT=/some/dir scripts/gpu/decode_h200.sh
# Stages write into $OUT as they finish: log.txt, env.txt, decode.json,
# bench.json, torch.jsonl.
set -u
OUT=${OUT:?}
R=/tmp/mp-res; REF=/tmp/mp-ref; mkdir -p $R/decode $R/bench $REF
log() { tee -a $OUT/log.txt; }
combine() { python3 -c 'import json,sys,glob; print(json.dumps([json.load(open(f)) for f in sorted(glob.glob(sys.argv[1]+"/*.json"))], indent=1))' $1; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv;
  python3 -c 'import torch,transformers;print("torch",torch.__version__,"transformers",transformers.__version__,"cuda",torch.version.cuda)'; } > $OUT/env.txt 2>&1
MODELS=${MODELS:-smollm2-135m,llama-3.2-1b,llama-3-8b}
for m in ${MODELS//,/ }; do
  python3 scripts/gpu/llama_ref.py --model $m --out $REF $([ $m = smollm2-135m ] && echo --safetensors) 2>&1 | tail -2 | log
  cp $REF/$m/ref.json $R/decode/ref-$m.json
done
MEGAPROOF_LLAMA_REF=$REF MEGAPROOF_OUT=$R/decode MEGAPROOF_LLAMA_MODELS=$MODELS .gpu/runner.test -test.run TestGPULlamaDecode -test.v -test.timeout 400s 2>&1 | grep -v '^=== RUN' | log
combine $R/decode > $OUT/decode.json
.gpu/megaproof-run -model smollm2-135m -weights $REF/smollm2-135m/model.safetensors -tokens 64 -ref $REF/smollm2-135m/ref.json 2>&1 | log
.gpu/megaproof-run -model smollm2-135m -tokens 4 -fault drop-wait 2>&1 | log
echo "exit $?" | log
MEGAPROOF_BENCH_LLAMA=1 MEGAPROOF_OUT=$R/bench MEGAPROOF_LLAMA_MODELS=$MODELS MEGAPROOF_BENCH_BATCH=1 .gpu/runner.test -test.run TestGPULlamaBench -test.v -test.timeout 300s 2>&1 | grep -v '^=== RUN' | log
MEGAPROOF_BENCH_LLAMA=1 MEGAPROOF_OUT=$R/bench MEGAPROOF_LLAMA_MODELS=smollm2-135m,llama-3.2-1b MEGAPROOF_BENCH_BATCH=4,16 .gpu/runner.test -test.run TestGPULlamaBench -test.v -test.timeout 300s 2>&1 | grep -v '^=== RUN' | log
combine $R/bench > $OUT/bench.json
for m in ${MODELS//,/ }; do
  python3 scripts/gpu/torch_bench.py --model $m --batch 1 --out $OUT/torch.jsonl 2>&1 | tail -12 | log
done
for m in smollm2-135m llama-3.2-1b; do
  python3 scripts/gpu/torch_bench.py --model $m --batch 4,16 --paths eager,graph --out $OUT/torch.jsonl 2>&1 | tail -12 | log
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> $OUT/env.txt; date -u >> $OUT/env.txt
