#!/usr/bin/env bash
# On the GPU machine (nvcc on PATH): builds rlt.cu and runs every mode at 1
# and 64 blocks, 20 launches each, one process a run, each under `timeout`.
# Output: $OUT/record-launch-trigger.log.
set -uo pipefail
cd "$(dirname "$0")"
out=${OUT:-/tmp}
log="$out/record-launch-trigger.log"
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  nvcc --version | tail -n 1
  timeout 120 nvcc -arch=sm_90 -rdc=true rlt.cu -lcudadevrt -o "$out/rlt" || exit 1
  for mode in ${MODES:-0 1 2 3 4 5 6 7 8 9 10}; do
    for blocks in 1 64; do
      timeout 20 "$out/rlt" "$mode" "$blocks" 20 || echo "mode=$mode blocks=$blocks exit $?"
    done
  done
} 2>&1 | tee "$log"
