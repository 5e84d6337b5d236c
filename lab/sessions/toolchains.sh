#!/usr/bin/env bash
# One GPU session: the GPU tier under the kernels of every toolchain in the
# bundle (`cargo xtask gpu-bundle --arch sm_90 --toolchain 13.1,...,13.5`),
# twice, so that a difference between toolchains can be told from the
# run-to-run variation: $OUT/run (published with `cargo xtask record`) and,
# while the session has time, $OUT/again (the same, for comparison). Every
# run is under `timeout`. Both folders come back packed, in $OUT/runs.tar.xz
# (the device tool returns only a few files and shallow folders).
set -u
cd "$(dirname "$0")/../.."
root=${OUT:?set OUT}
start=$(date +%s)
nvidia-smi > "$root/nvidia-smi.txt" 2>&1
args=(-q --tier gpu --model-timeout 100 --timeout 30)
OUT=$root/run GC_RUN_TIMEOUT=150 bash conformance/gpu-toolchains.sh "${args[@]}" > "$root/run.log" 2>&1
echo "first pass: exit $?, $(( $(date +%s) - start )) s" | tee -a "$root/session.txt"
if [ $(( $(date +%s) - start )) -lt 260 ]; then
  OUT=$root/again GC_RUN_TIMEOUT=150 bash conformance/gpu-toolchains.sh "${args[@]}" > "$root/again.log" 2>&1
  echo "second pass: exit $?, $(( $(date +%s) - start )) s" | tee -a "$root/session.txt"
fi
# Each run's exit code and wall time (gpu-run.sh's run.json).
for f in "$root"/run/run.json "$root"/run/toolchains/*/run.json \
  "$root"/again/run.json "$root"/again/toolchains/*/run.json; do
  [ -f "$f" ] && echo "${f#"$root"/}: $(cat "$f")"
done | tee -a "$root/session.txt"
tar -C "$root" -cJf "$root/runs.tar.xz" run again 2>/dev/null
rm -rf "$root/run" "$root/again"
