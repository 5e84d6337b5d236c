#!/usr/bin/env bash
# Compiles generated litmus kernels on a GPU machine without Rust with nvcc's flags as `cargo
# xtask build` gives them (`gridcheck info nvcc-flags ARCH [--dlink]`), in parallel, each nvcc
# under a time limit: `compile-kernels.sh DIR` builds DIR/generated/*.cu into
# DIR/kernels/$ARCH/*.cubin (ARCH default sm_90). A cubin newer than its source and the header is
# kept (DIR/kernels.tar.xz, compiled where the bundle was made, is unpacked first); a file calling
# device-side cudaDeviceSynchronize (CDP1, which sm_90 does not have) is skipped. NVCC names the
# compiler (default nvcc). Used by mutants-gpu.sh.
set -uo pipefail
cd "$(dirname "$0")/.."
dir=$1 nvcc=${NVCC:-nvcc} arch=${ARCH:-sm_90}
mkdir -p "$dir/obj" "$dir/kernels/$arch"
if [ -f "$dir/kernels.tar.xz" ] && [ ! -f "$dir/kernels.unpacked" ]; then
  tar -xmJf "$dir/kernels.tar.xz" -C "$dir" && touch "$dir/kernels.unpacked"
fi
cflags=$(./.gpu-bundle/gridcheck info nvcc-flags "$arch") &&
  lflags=$(GRIDCHECK_NVCC=$(command -v "$nvcc") ./.gpu-bundle/gridcheck info nvcc-flags "$arch" --dlink) || exit 2
export nvcc dir arch cflags lflags
echo "== compiling $(ls "$dir"/generated/*.cu | wc -l) kernels with $nvcc $cflags"
start=$(date +%s)
ls "$dir"/generated/*.cu | xargs -P "$(nproc)" -I{} bash -c '
  n=$(basename {} .cu) c="$dir/kernels/$arch/$(basename {} .cu).cubin"
  [ -s "$c" ] && [ "$c" -nt {} ] && [ "$c" -nt kernels/include/gridcheck.cuh ] && exit 0
  grep -q "cudaDeviceSynchronize()" {} && exit 0
  timeout 120 "$nvcc" $cflags -cubin {} -o "$dir/obj/$n.rdc.cubin" &&
    timeout 120 "$nvcc" $lflags "$dir/obj/$n.rdc.cubin" -o "$c" || echo "compile of $n failed"' 2>&1 | tail -n 20
echo "compiled $(ls "$dir/kernels/$arch"/*.cubin 2>/dev/null | wc -l) cubins in $(( $(date +%s) - start )) s"
