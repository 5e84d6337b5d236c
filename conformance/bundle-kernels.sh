#!/usr/bin/env bash
# Sourced by the bundle scripts (gpu-run.sh, gpu-session.sh, fault-check.sh):
# unpacks the kernels of a bundle made by `cargo xtask gpu-bundle`
# (.gpu-bundle/kernels.tar.xz: <arch>/<test>.cubin, .host and .ptx for every
# architecture built, and libcudadevrt.a) into .gpu-bundle/kernels, once
# per archive, and sets GC_ARCH to the first GPU's architecture (sm_90, ...)
# for the scripts that run one architecture's kernels directly.
if [ -f .gpu-bundle/kernels.tar.xz ] &&
   [ ! .gpu-bundle/kernels/.unpacked -nt .gpu-bundle/kernels.tar.xz ]; then
  rm -rf .gpu-bundle/kernels
  mkdir -p .gpu-bundle/kernels
  tar xJf .gpu-bundle/kernels.tar.xz -C .gpu-bundle/kernels && touch .gpu-bundle/kernels/.unpacked
fi
GC_ARCH=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .')
[ "$GC_ARCH" = sm_ ] && GC_ARCH=sm_90
export GC_ARCH
