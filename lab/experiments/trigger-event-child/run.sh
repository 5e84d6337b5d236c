#!/usr/bin/env bash
# On the GPU machine (nvcc on PATH): builds tec.cu and runs every mode at 1,
# 64 and 512 blocks, 20 launches each, one process a run, each under
# `timeout`. Output: $OUT/trigger-event-child.log.
set -uo pipefail
cd "$(dirname "$0")"
out=${OUT:-/tmp}
log="$out/trigger-event-child.log"
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  nvcc --version | tail -n 1
  timeout 120 nvcc -arch=sm_90 -rdc=true tec.cu -lcudadevrt -o "$out/tec" || exit 1
  for mode in ${MODES:-0 1 2 3 4 5 6 7 8 9}; do
    for blocks in ${BLOCKS:-1 64 512}; do
      timeout 20 "$out/tec" "$mode" "$blocks" 20 || echo "mode=$mode blocks=$blocks exit $?"
    done
  done
} 2>&1 | tee "$log"
