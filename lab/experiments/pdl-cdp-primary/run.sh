#!/usr/bin/env bash
# On the GPU machine (nvcc on PATH): builds pdl_cdp.cu and runs every mode,
# each run under `timeout`. Output to $OUT/pdl-cdp-primary.log.
set -uo pipefail
cd "$(dirname "$0")"
out=${OUT:-/tmp}
log="$out/pdl-cdp-primary.log"
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  nvcc --version | tail -n 1
  timeout 120 nvcc -arch=sm_90 -rdc=true pdl_cdp.cu -lcudadevrt -o "$out/pdl_cdp" || exit 1
  for mode in 0 1 2 3; do
    for blocks in 1 8 132; do
      timeout 60 "$out/pdl_cdp" "$mode" "$blocks" 50 || echo "mode=$mode blocks=$blocks exit $?"
    done
  done
} 2>&1 | tee "$log"
