#!/usr/bin/env bash
# Here, after `cargo xtask gpu-bundle`, where nvcc is found (GRIDCHECK_NVCC,
# else nvcc on PATH): the mutants' kernels compiled as the GPU machine would
# (conformance/compile-kernels.sh) and packed into
# .gpu-bundle/mutants/kernels.tar.xz, which compile-kernels.sh unpacks there
# before compiling what is missing: the GPU machine's time goes to the GPU.
# The batches of a campaign are compiled by `cargo xtask campaign prepare`.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=.gpu-bundle/mutants
NVCC=${GRIDCHECK_NVCC:-nvcc} bash conformance/compile-kernels.sh "$dir"
rm -f "$dir/kernels.tar.xz" "$dir/kernels.unpacked"
tar -cJf "$dir/kernels.tar.xz" -C "$dir" kernels
rm -rf "$dir/kernels" "$dir/obj"
du -sh "$dir/kernels.tar.xz"
