#!/usr/bin/env bash
# Compiles generated litmus kernels on a GPU machine without Rust, as
# `cargo xtask build` does (nvcc -arch=sm_90 -rdc=true -c, then -dlink -cubin
# -lcudadevrt), in parallel, each nvcc under a time limit:
#   compile-kernels.sh DIR    builds DIR/generated/*.cu into DIR/kernels/sm_90/*.cubin
# A cubin newer than its source and the header is kept (DIR/kernels.tar.xz, the
# cubins compiled where the bundle was made, is unpacked first); a file calling device-side
# cudaDeviceSynchronize (CDP1, which sm_90 does not have) is skipped.
# Used by mutants-gpu.sh. NVCC names the compiler (default nvcc).
set -uo pipefail
cd "$(dirname "$0")/.."
dir=$1
nvcc=${NVCC:-nvcc}
mkdir -p "$dir/obj" "$dir/kernels/sm_90"
# Cubins compiled before the bundle travelled (mutants-kernels.tar.xz), unpacked
# with the time of unpacking: newer than the sources they were built from.
if [ -f "$dir/kernels.tar.xz" ] && [ ! -f "$dir/kernels.unpacked" ]; then
  tar -xmJf "$dir/kernels.tar.xz" -C "$dir" && touch "$dir/kernels.unpacked"
fi
devrt=$(dirname "$(dirname "$(command -v "$nvcc")")")/lib64
# A toolchain installed from PyPI keeps libcudadevrt.a in lib/.
[ -f "$devrt/libcudadevrt.a" ] || devrt=${devrt%64}
export nvcc dir devrt
echo "== compiling $(ls "$dir"/generated/*.cu | wc -l) kernels with $nvcc"
start=$(date +%s)
ls "$dir"/generated/*.cu | xargs -P "$(nproc)" -I{} bash -c '
  n=$(basename {} .cu)
  c="$dir/kernels/sm_90/$n.cubin"
  [ -s "$c" ] && [ "$c" -nt {} ] && [ "$c" -nt kernels/include/gridcheck.cuh ] && exit 0
  grep -q "cudaDeviceSynchronize()" {} && exit 0
  timeout 120 "$nvcc" -arch=sm_90 -rdc=true -Ikernels/include -c {} -o "$dir/obj/$n.o" &&
  timeout 120 "$nvcc" -arch=sm_90 -dlink -cubin "$dir/obj/$n.o" -L"$devrt" -lcudadevrt \
    -o "$dir/kernels/sm_90/$n.cubin" || echo "compile of $n failed"' 2>&1 | tail -n 20
echo "compiled $(ls "$dir"/kernels/sm_90/*.cubin 2>/dev/null | wc -l) cubins in $(( $(date +%s) - start )) s"
