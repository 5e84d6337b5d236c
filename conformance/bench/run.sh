#!/usr/bin/env bash
# The benchmarks on a GPU machine without Rust, from a bundle made by
# `cargo xtask bench --bundle` (gridcheck-bench, the cubins and this script).
#   OUT=<dir> [BENCH_TIMEOUT=s] bash <bundle>/run.sh [--runs N] [--quick] [--compare BASELINE.json]
# Each run writes $OUT/run-<i>.json and run-<i>.log; with two runs or more,
# run 2 is compared against run 1 ($OUT/compare-2-vs-1.txt), and with
# --compare every run is compared against that baseline.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/out}
mkdir -p "$out"
runs=1
pass=()
baseline=
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --quick) pass+=(--quick); shift ;;
    --compare) baseline=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
{
  nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv || echo "nvidia-smi failed"
  command -v nvcc >/dev/null && nvcc --version | tail -n 2
  echo "cubins built with nvcc $(cat "$here/kernels/nvcc-version.txt" 2>/dev/null)"
} 2>&1 | tee "$out/machine.txt"
rc=0
for i in $(seq 1 "$runs"); do
  start=$(date +%s%N)
  timeout "${BENCH_TIMEOUT:-290}" "$here/gridcheck-bench" run --cubins "$here/kernels" --out "$out/run-$i.json" \
    --command "cargo xtask bench --bundle && bash run.sh --runs $runs ${pass[*]} (run $i)" \
    "${pass[@]}" >"$out/run-$i.log" 2>&1
  r=$?
  echo "run $i: exit $r, wall $(( ($(date +%s%N) - start) / 1000000 )) ms" | tee -a "$out/run-$i.log"
  [ $r -ne 0 ] && rc=$r
  if [ -n "$baseline" ] && [ -f "$out/run-$i.json" ]; then
    "$here/gridcheck-bench" compare "$out/run-$i.json" "$baseline" >"$out/compare-$i-vs-baseline.txt" 2>&1 || rc=1
  fi
done
if [ "$runs" -ge 2 ] && [ -f "$out/run-1.json" ] && [ -f "$out/run-2.json" ]; then
  "$here/gridcheck-bench" compare "$out/run-2.json" "$out/run-1.json" >"$out/compare-2-vs-1.txt" 2>&1
  echo "compare run 2 vs run 1: exit $?" | tee -a "$out/compare-2-vs-1.txt"
fi
tail -n 5 "$out"/run-*.log
exit "$rc"
