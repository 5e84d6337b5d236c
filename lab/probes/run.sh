#!/usr/bin/env bash
# The diagnosis probes (README.md): builds each with nvcc for sm_90 and runs
# it under `timeout`; logs in $OUT (default lab/probes/out).
#
#   lab/probes/run.sh
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${OUT:-$here/out}
nvcc=${NVCC:-nvcc}
mkdir -p "$out"
build() {  # build NAME ARGS...
  local name=$1
  shift
  "$nvcc" -O2 -arch=sm_90 -rdc=true -I"$root/kernels/include" -I"$root/kernels/generated" "$@" -o "$out/$name" \
    -lcudadevrt || echo "build of $name failed"
}
build memset_probe "$here/memset_probe.cu"
build deviceapi_probe "$here/deviceapi_probe.cu"
build memspace_probe "$here/memspace_probe.cu"
# A runtime test's kernel run as the harness runs it (entry<<<1, 1>>>(out), out zeroed).
build pbuf64 -DTEST_CU='"c2-ptx-parameter-buffer-64-byte-aligned.cu"' -DNWORDS=11 "$here/runtime_main.cu"
for p in memset_probe deviceapi_probe memspace_probe pbuf64; do
  [ -x "$out/$p" ] || continue
  echo "== $p"
  timeout -k 5 30 "$out/$p" 2>&1 | tee "$out/$p.log"
  echo "== $p rc=${PIPESTATUS[0]}"
done
