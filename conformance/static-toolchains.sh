#!/usr/bin/env bash
# The static (compile) and machine-code (sass) tiers under several installed
# toolchains (`cargo xtask toolchain install`), no GPU needed: the first
# toolchain named into $OUT, each other into $OUT/toolchains/nvcc-<release>/,
# the layout `cargo xtask record $OUT --gpu no-gpu` publishes (a run with
# its toolchain variants, each diffed against the first). Usage:
#   OUT=target/tc bash conformance/static-toolchains.sh 13.0 13.1 ... [-- harness args]
# Each toolchain's run is under `timeout` (GC_RUN_TIMEOUT seconds, default
# 1800); the exit code is the first failing run's, else 0.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-target/gridcheck/toolchains}
limit=${GC_RUN_TIMEOUT:-1800}
releases=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do releases+=("$1"); shift; done
[ $# -gt 0 ] && shift
[ ${#releases[@]} -gt 0 ] || { echo "name the toolchains, such as 13.0 13.5" >&2; exit 2; }
rc=0
first=1
for release in "${releases[@]}"; do
  if [ $first = 1 ]; then dir=$out; first=0; else dir=$out/toolchains/nvcc-$release; fi
  mkdir -p "$dir"
  echo "== toolchain $release into $dir"
  start=$(date +%s)
  timeout -k 10 "$limit" cargo xtask conformance --tier static --tier sass --toolchain "$release" \
    --results "$dir/results.jsonl" -- -q "$@" > "$dir/conformance.log" 2>&1
  r=$?
  echo "toolchain $release: exit $r, $(( $(date +%s) - start )) s" | tee -a "$dir/conformance.log"
  cargo xtask report summary "$dir/results.jsonl" 2>/dev/null | head -n 12
  [ $r -ne 0 ] && [ $rc -eq 0 ] && rc=$r
done
exit "$rc"
