#!/usr/bin/env bash
# A whole GPU run on a machine without Rust, from a bundle made by `cargo xtask gpu-bundle`
# (`gridcheck run`, the harness, with the kernels of every architecture built, packed, and their
# PTX). Results and the log go to $OUT (default target/gridcheck), with machine.txt and run.json
# (the harness's exit code and wall time, which `cargo xtask record` keeps). Extra arguments go to
# the harness (`--tier gpu`, `--devices all`, `--shard 3/8`: conformance/README.md); `--toolchain
# 13.5` runs the kernels another toolchain built (`cargo xtask gpu-bundle --toolchain 13.5`).
set -uo pipefail
cd "$(dirname "$0")/.."
g=./.gpu-bundle/gridcheck
[ -x $g ] || { echo "no $g: run \`cargo xtask gpu-bundle\` first and carry .gpu-bundle" >&2; exit 2; }
[ -s .gpu-bundle/commit ] && export GRIDCHECK_COMMIT=$(cat .gpu-bundle/commit)
out=${OUT:-target/gridcheck}
mkdir -p "$out"
. conformance/bundle-kernels.sh
kernels=.gpu-bundle/kernels args=()
while [ $# -gt 0 ]; do
  if [ "$1" = --toolchain ] && [ $# -ge 2 ]; then
    kernels=.gpu-bundle/$($g info kernels-folder "$2") || exit 2
    [ -d "$kernels" ] || { echo "no kernels of toolchain $2 in the bundle: cargo xtask gpu-bundle --toolchain $2" >&2; exit 2; }
    shift 2
  else args+=("$1"); shift; fi
done
{ nvidia-smi --query-gpu=name,driver_version,compute_cap,uuid,pci.bus_id --format=csv,noheader || echo "nvidia-smi failed"
  command -v nvcc >/dev/null && nvcc --version | tail -n 2; } 2>&1 | tee "$out/machine.txt"
start=$(date +%s%N)
$g run --root . --cubins "$kernels" --results "$out/results.jsonl" ${args[@]+"${args[@]}"} 2>&1 | tee "$out/conformance.log"
rc=${PIPESTATUS[0]} ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "harness exit code $rc, wall ${ms} ms" | tee -a "$out/conformance.log"
printf '{"exit_code":%d,"wall_ms":%d,"kernels":"%s"}\n' "$rc" "$ms" "$kernels" >"$out/run.json"
exit "$rc"
