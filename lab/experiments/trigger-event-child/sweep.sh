#!/usr/bin/env bash
# The second run: tec built here by each toolchain (nvcc 13.0 to 13.5, each
# with its own libcudadevrt.a and static cudart: `build.sh`), carried in
# .gpu-bundle/tec/: mode 0 at 1 to 64 blocks, modes 0 and 7 five times at
# 64 blocks, each process under `timeout`. Output: $OUT/sweep.log.
set -uo pipefail
cd "$(dirname "$0")/../../.."
out=${OUT:-/tmp}
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  for bin in .gpu-bundle/tec/tec-*; do
    echo "== $(basename "$bin")"
    for blocks in 1 2 3 4 8 16 32 64; do
      timeout 20 "$bin" 0 "$blocks" 20 || echo "exit $?"
    done
  done
  echo "== repeats, tec-13.0"
  for i in 1 2 3 4 5; do
    for mode in 0 7; do timeout 20 .gpu-bundle/tec/tec-13.0 "$mode" 64 20 || echo "exit $?"; done
  done
} 2>&1 | tee "$out/sweep.log"
