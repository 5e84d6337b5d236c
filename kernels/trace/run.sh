#!/bin/bash
# The launch trace end to end, on a GPU machine (no Rust needed):
#   bash kernels/trace/run.sh [OUT_DIR] [CHECK_BINARY]
#   bash kernels/trace/run.sh --interposer OUT_DIR   # only builds OUT_DIR/libgridcheck_trace.so
# builds the interposer (gcc) and the two-kernel program (nvcc, sm_90),
# runs the program under LD_PRELOAD with GRIDCHECK_TRACE set, then runs the
# check on the program with the trace. Expected: the check exits 1 with one
# finding, the secondary's load of p (pdl_pair.cu:25), and the load of the
# weights w (line 26) listed but not a finding. Prints PASS or FAIL.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
only_interposer=
[ "${1:-}" = --interposer ] && { only_interposer=1; shift; }
out=${1:-$root/target/trace-run}
# The check: the bundle's `gridcheck check` (a second argument names another command).
check=${2:-$root/.gpu-bundle/gridcheck check}
mkdir -p "$out"
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
cuda=$(dirname "$(dirname "$(readlink -f "$nvcc")")")
include=$cuda/include
[ -f "$include/cuda.h" ] || include=$(dirname "$(find "$cuda" -name cuda.h | head -1)")
gcc -shared -fPIC -O2 -Wall -I"$include" "$here/trace.c" -o "$out/libgridcheck_trace.so" -ldl -lpthread \
  || { echo "FAIL: the interposer did not build"; exit 2; }
[ -n "$only_interposer" ] && { echo "built $out/libgridcheck_trace.so"; exit 0; }
"$nvcc" -lineinfo -arch=sm_90 "$here/pdl_pair.cu" -o "$out/pdl_pair" \
  || { echo "FAIL: pdl_pair did not build"; exit 2; }
rm -f "$out/trace.jsonl"
GRIDCHECK_TRACE="$out/trace.jsonl" LD_PRELOAD="$out/libgridcheck_trace.so" "$out/pdl_pair" | tee "$out/pdl_pair.log"
echo "--- trace"
cat "$out/trace.jsonl"
echo "--- check"
$check --trace "$out/trace.jsonl" "$out/pdl_pair" | tee "$out/check.txt"
rc=${PIPESTATUS[0]}
$check --format sarif --trace "$out/trace.jsonl" "$out/pdl_pair" > "$out/check.sarif"
if [ "$rc" = 1 ] && grep -q "pdl_pair.cu:25\]: global load of parameter 0" "$out/check.txt" \
   && [ "$(grep -c ': warning: ' "$out/check.txt")" = 1 ]; then
  echo "PASS: the trace turned the early load of p into a finding, and only it"
else
  echo "FAIL: expected exit 1 and one finding at pdl_pair.cu:25 (exit $rc)"
  exit 1
fi
