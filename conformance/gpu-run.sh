#!/usr/bin/env bash
# A whole GPU run on a machine without Rust, from a bundle made by
# `cargo xtask gpu-bundle` (the release harness and the kernels of every
# architecture built, packed, with their PTX; built where Rust and nvcc are).
# The harness picks each test's binary for the GPU in hand (its own cubin, a
# lower minor's of its major, or the PTX through the driver's JIT, linked
# with the bundle's libcudadevrt.a; `--binary ptx` forces the PTX). Results
# and the log go to $OUT (default
# target/gridcheck), and run.json: the harness's exit code and wall time,
# for the session scripts (`cargo xtask record` keeps it). Extra arguments go to the harness, e.g. `--tier gpu`,
# `--devices all` (every GPU of the host at once) or `--shard 3/8` (one
# shard of a job array; conformance/README.md, "Every GPU of a host" and "Fleets of machines").
# `--toolchain 13.5` runs the kernels another toolchain built
# (`cargo xtask gpu-bundle --toolchain 13.5`); the records name it.
set -uo pipefail
cd "$(dirname "$0")/.."
# The records name the commit the bundle was built from.
[ -s .gpu-bundle/commit ] && export GRIDCHECK_COMMIT=$(cat .gpu-bundle/commit)
out=${OUT:-target/gridcheck}
mkdir -p "$out"
if [ ! -x .gpu-bundle/conformance ]; then
  echo "no .gpu-bundle/conformance: run \`cargo xtask gpu-bundle\` first and carry .gpu-bundle" >&2
  exit 2
fi
# The kernels travel packed (host programs are most of their size).
. conformance/bundle-kernels.sh
kernels=.gpu-bundle/kernels
args=()
while [ $# -gt 0 ]; do
  if [ "$1" = --toolchain ]; then
    [ $# -ge 2 ] || { echo "--toolchain needs a release, such as 13.5" >&2; exit 2; }
    kernels=.gpu-bundle/kernels-nvcc-$2
    if [ ! -d "$kernels" ]; then
      have=$(cd .gpu-bundle && ls -d kernels-nvcc-* 2>/dev/null | sed 's/kernels-nvcc-//' | tr '\n' ' ')
      echo "no kernels of toolchain $2 in the bundle (it has: ${have:-none}); build it with \`cargo xtask gpu-bundle --toolchain $2\`" >&2
      exit 2
    fi
    shift 2
  else
    args+=("$1")
    shift
  fi
done
{
  nvidia-smi --query-gpu=name,driver_version,compute_cap,uuid,pci.bus_id --format=csv,noheader || echo "nvidia-smi failed"
  command -v nvcc >/dev/null && nvcc --version | tail -n 2
} 2>&1 | tee "$out/machine.txt"
start=$(date +%s%N)
./.gpu-bundle/conformance --root . --cubins "$kernels" \
  --results "$out/results.jsonl" ${args[@]+"${args[@]}"} 2>&1 | tee "$out/conformance.log"
rc=${PIPESTATUS[0]}
ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "harness exit code $rc, wall ${ms} ms" | tee -a "$out/conformance.log"
# What a session script reads of the run beside `conformance report summary`
# (which reads the results): the exit code and the wall time.
printf '{"exit_code":%d,"wall_ms":%d,"kernels":"%s"}\n' "$rc" "$ms" "$kernels" >"$out/run.json"
exit "$rc"
