#!/usr/bin/env bash
# One GPU session for the run-to-run spread (conformance/spread/README.md):
# the GPU tier of the suite RUNS times (default 10) from one bundle, one run
# after another on one GPU, each into $OUT/runs/run-<i>/ (gpu-run.sh's
# results.jsonl, run.json, machine.txt, conformance.log) under `timeout`
# (GC_RUN_TIMEOUT, default 150 s); no run starts that the session's time
# (SESSION_LIMIT, default 540 s) cannot finish. Each run's summary comes
# from `conformance report summary`. Everything comes back packed in
# $OUT/runs.tar.xz; then, where Rust is:
#   tar xJf runs.tar.xz -C target/spread && \
#     cargo xtask report spread target/spread/runs/run-*/results.jsonl
set -u
cd "$(dirname "$0")/../.."
root=${OUT:?set OUT}
runs=${RUNS:-10}
limit=${GC_RUN_TIMEOUT:-150}
budget=${SESSION_LIMIT:-540}
h=./.gpu-bundle/conformance
start=$(date +%s)
for i in $(seq 1 "$runs"); do
  if [ $(( $(date +%s) - start + limit )) -gt "$budget" ]; then
    echo "run $i not started: the session's time ($budget s) would not cover it"
    break
  fi
  dir=$root/runs/run-$i
  OUT=$dir timeout -k 10 "$limit" bash conformance/gpu-run.sh -q --tier gpu \
    --model-timeout 100 --timeout 30 >/dev/null 2>&1
  echo "== run $i: exit $?, $(cat "$dir/run.json" 2>/dev/null)"
  "$h" report summary "$dir/results.jsonl" --format text 2>&1 | head -n 8
done
tar -C "$root" -cJf "$root/runs.tar.xz" runs && rm -rf "$root/runs"
