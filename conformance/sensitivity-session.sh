#!/usr/bin/env bash
# The GPU session of the suite's sensitivity work, on a GPU machine without
# Rust (carry .gpu-bundle from `cargo xtask gpu-bundle`). Every step runs
# under `timeout`. Results go to $OUT (default target/gridcheck):
#  1. the search for the testing environment: every mutant under each point
#     of conformance/tuning/search.toml (mutants-tune.jsonl, mutants-tune.log);
#  2. the allowed outcomes never provoked (the tests named `*may-be-stale`)
#     under sharper environments: few blocks, no delay (the secondary reads
#     first thing), no stress, 65536 instances each (qw.jsonl, qw.log).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-target/gridcheck}
mkdir -p "$out"
RESULTS=mutants-tune.jsonl LOG=mutants-tune.log OUT=$out timeout 480 \
  bash conformance/mutants-gpu.sh --tune conformance/tuning/search.toml --tuning none \
  --timeout 120 --model-timeout 120
echo "search exit code $?"
: >"$out/qw.log"
for env in "1 0 0" "16 0 0" "64 0 0" "64 1024 0" "1024 0 65536" "256 1048576 65536"; do
  set -- $env
  echo "== instances $1, delay < $2, stress words $3: $((65536 / $1)) launches" >>"$out/qw.log"
  timeout 120 ./.gpu-bundle/conformance --root . --cubins .gpu-bundle/kernels --tier gpu \
    --tuning none --instances "$1" --launches "$((65536 / $1))" --max-delay "$2" \
    --stress-words "$3" --timeout 100 --results "$out/qw.jsonl" -q may-be-stale >>"$out/qw.log" 2>&1
  echo "exit code $?" >>"$out/qw.log"
done
grep -E "^(pass|quality-warning|fail|timeout|crash) |exit code|^==" "$out/qw.log" | head -80
