#!/usr/bin/env bash
# Here (no GPU): builds tec.cu with every installed toolchain
# (.toolchains/<release>, `cargo xtask toolchain install`), each linked with
# its own libcudadevrt.a, into .gpu-bundle/tec/tec-<release> for sweep.sh.
set -euo pipefail
cd "$(dirname "$0")/../../.."
mkdir -p .gpu-bundle/tec
for d in .toolchains/*/; do
  r=$(basename "$d")
  cu=$(echo "$d"lib/python3*/site-packages/nvidia/cu13)
  timeout 120 "$cu/bin/nvcc" -arch=sm_90 -rdc=true lab/experiments/trigger-event-child/tec.cu \
    -L"$cu/lib" -lcudadevrt -o ".gpu-bundle/tec/tec-$r"
done
ls -la .gpu-bundle/tec
