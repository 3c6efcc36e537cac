#!/bin/bash
# A timing sweep of llamagen's schedule shapes in one device call: TestGPULlamaBench for MODELS ×
# STRATEGIES × BLOCKS (threads per block) × PREFETCHES (Options.PrefetchBytes, 0: off) at batch
# BATCH and positions POS, every schedule verified
# before it is timed. The kernel image is compiled once (MEGAPROOF_KERNEL_CACHE, .gpu/kc when carried)
# and copied to $OUT/kc so that a later call can carry it. Token checks are TestGPULlamaDecode's
# (scripts/gpu/decode_h200.sh); a sweep only times.
# Run from the repository root on the GPU machine with the test binary built here:
#   go test -c -o .gpu/runner.test ./runner
#   OUT=/some/dir STRATEGIES=fused-split8c256,fused-split16c128 scripts/gpu/sweep_h200.sh
set -u
S=$PWD/.gpu; L=$OUT/log.txt; LIMIT=${LIMIT:-560}
export MEGAPROOF_KERNEL_CACHE=/tmp/kc
mkdir -p /tmp/kc; [ -d $S/kc ] && cp $S/kc/*.img /tmp/kc/ 2>/dev/null
log() { tee -a $L; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit --format=csv; } > $OUT/env.txt 2>&1
B0=/tmp/bench
for blk in ${BLOCKS:-512}; do
 for pf in ${PREFETCHES:-0}; do
  B=$B0/$blk-$pf; mkdir -p $B
  for m in ${MODELS:-smollm2-135m llama-3.2-1b llama-3-8b}; do
    left=$((LIMIT - SECONDS)); [ $left -lt 30 ] && { echo "$m block $blk: not run ($left s left)" | log; continue; }
    env MEGAPROOF_BENCH_LLAMA=1 MEGAPROOF_OUT=$B MEGAPROOF_BLOCK=$blk MEGAPROOF_PREFETCH=$pf MEGAPROOF_LLAMA_MODELS=$m \
      MEGAPROOF_BENCH_POS=${POS:-1024} MEGAPROOF_BENCH_BATCH=${BATCH:-1} MEGAPROOF_LLAMA_STRATEGIES=$STRATEGIES \
      timeout $left $S/runner.test -test.run TestGPULlamaBench -test.v -test.timeout ${left}s 2>&1 \
      | grep -E 'per token|not fused|FAIL|panic|compil' | sed 's/^ *gpu_llama_test.go:[0-9]*: //' | sed "s/^/block $blk prefetch $pf: /" | log
    echo "at $SECONDS s" | log
  done
 done
done
python3 -c 'import json,sys,glob; print(json.dumps([json.load(open(f)) for f in sorted(glob.glob(sys.argv[1]+"/*/*.json"))], indent=1))' $B0 > $OUT/bench.json
mkdir -p $OUT/kc && cp /tmp/kc/*.img $OUT/kc/ 2>/dev/null; ls -la $OUT/kc | log
