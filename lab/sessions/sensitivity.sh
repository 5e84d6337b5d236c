#!/usr/bin/env bash
# The GPU sessions of the suite's sensitivity work, on a GPU machine without
# Rust (carry .gpu-bundle from `cargo xtask gpu-bundle`; its kernels travel
# packed as .gpu-bundle/kernels.tar.xz, which gpu-run.sh unpacks for the
# whole-suite runs; the other steps run litmus tests and mutants only).
# Every step runs under `timeout`.
# Results go to $OUT (default target/gridcheck).
#   search: every mutant under each point of conformance/tuning/search.toml
#           (mutants-tune.jsonl, mutants-tune.log).
#   run:    1. the allowed outcomes never provoked (the tests named
#              `*may-be-stale`) under sharper environments: one to 64
#              instances a launch, no delay (the secondary reads first
#              thing), no stress (qw.jsonl, qw.log);
#           2. the mutants under the GPU's tuned environment, 1 GPU s each
#              (mutants.jsonl, mutants.log);
#           3. the whole suite under the tuned environment (results.jsonl,
#              conformance.log, machine.txt) and under the built-in one
#              (builtin.tar.xz), to compare statuses and wall times.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-target/gridcheck}
mkdir -p "$out"
h=./.gpu-bundle/conformance
case "${1:-run}" in
search)
  RESULTS=mutants-tune.jsonl LOG=mutants-tune.log OUT=$out timeout 540 \
    bash conformance/mutants-gpu.sh --tune conformance/tuning/search.toml --tuning none \
    --timeout 120 --model-timeout 120
  echo "search exit code $?"
  ;;
run)
  : >"$out/qw.log"
  for env in "1 8192 0 0" "16 4096 0 0" "64 1024 0 0" "64 1024 1024 0" "256 256 1048576 65536"; do
    set -- $env
    echo "== instances $1 x launches $2, delay < $3, stress words $4" >>"$out/qw.log"
    timeout 60 ./.gpu-bundle/conformance --root . --cubins .gpu-bundle/kernels --tier gpu \
      --tuning none --instances "$1" --launches "$2" --max-delay "$3" --stress-words "$4" \
      --timeout 50 --results "$out/qw.jsonl" -q may-be-stale >>"$out/qw.log" 2>&1
    echo "exit code $?" >>"$out/qw.log"
  done
  # One summary a run of qw.jsonl (an environment each).
  "$h" report summary "$out/qw.jsonl" --all-runs --format text
  OUT=$out timeout 200 bash conformance/mutants-gpu.sh --timeout 60 --model-timeout 120
  echo "mutants exit code $?"
  OUT=$out timeout 150 bash conformance/gpu-run.sh -q --model-timeout 120 --timeout 30 >/dev/null
  echo "tuned run exit code $?"; cat "$out/run.json"
  "$h" report summary "$out/results.jsonl" --format text
  mkdir -p "$out/builtin"
  OUT=$out/builtin timeout 150 bash conformance/gpu-run.sh -q --tuning none --model-timeout 120 \
    --timeout 30 >/dev/null
  echo "built-in run exit code $?"; cat "$out/builtin/run.json"
  "$h" report summary "$out/builtin/results.jsonl" --format text
  tar cJf "$out/builtin.tar.xz" -C "$out" builtin && rm -r "$out/builtin"
  ;;
esac
