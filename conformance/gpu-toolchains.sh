#!/usr/bin/env bash
# The GPU tier under every toolchain in the bundle (`cargo xtask gpu-bundle
# --toolchain 13.1,...,13.5`): the bundle's own kernels into $OUT, then the
# kernels of each other toolchain into $OUT/toolchains/nvcc-<release>/, the
# layout `cargo xtask record $OUT` publishes (a run with its toolchain
# variants, each diffed against the run). Extra arguments go to every run
# (`--tier gpu -q`). Each run is under `timeout` (GC_RUN_TIMEOUT seconds,
# default 600); the exit code is the first failing run's, else 0.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-target/gridcheck}
limit=${GC_RUN_TIMEOUT:-600}
. conformance/bundle-kernels.sh
rc=0
OUT=$out timeout -k 10 "$limit" bash conformance/gpu-run.sh "$@"
r=$?; [ $r -ne 0 ] && [ $rc -eq 0 ] && rc=$r
for dir in .gpu-bundle/*/; do
  # gridcheck names a toolchain's kernels folder (one home for the name).
  release=$(./.gpu-bundle/gridcheck info kernels-folder-release "$(basename "$dir")") || continue
  echo "== kernels of toolchain $release"
  OUT=$out/toolchains/nvcc-$release timeout -k 10 "$limit" \
    bash conformance/gpu-run.sh --toolchain "$release" "$@"
  r=$?; [ $r -ne 0 ] && [ $rc -eq 0 ] && rc=$r
done
exit "$rc"
