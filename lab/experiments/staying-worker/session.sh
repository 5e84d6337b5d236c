#!/usr/bin/env bash
# One GPU session (carry .gpu-bundle): the GPU tier run three ways on the
# same machine, one after the other, and the known hangs classified by the
# harness itself. Each step under `timeout`; everything lands in $OUT.
#  a-staying   the default: one staying worker a device (conformance/src/server.rs)
#  b-fresh     --fresh-context: a process and CUDA context a trial (the old way)
#  c-late      a-staying plus the late-write environment in the litmus trials
#              (32 launches of 64 instances, no delays, the line burst on)
#  d-hangs     the known hangs at the instances the lab measured them with
#              (1 024 a launch), --classify-timeouts, a 10 s timeout
set -uo pipefail
cd "$(dirname "$0")/../../.."
out=${OUT:-target/gridcheck}
mkdir -p "$out"
run() { # name timeout-seconds harness-args...
  local name=$1 t=$2; shift 2
  echo "== $name"
  OUT="$out/$name" timeout "$t" bash conformance/gpu-run.sh -q --tier gpu --model-timeout 100 "$@" \
    >"$out/$name.txt" 2>&1
  echo "exit $?"
  grep -E "tier:|harness exit" "$out/$name/conformance.log" | tail -n 3
}
late='{"name":"late-write","instances":64,"launches":32,"max_delay_cycles":0,"stress_words":0,"stress_iters":65536,"permute":true,"line_burst":8192,"mutant_budget_s":0.5}'
run a-staying 240 --timeout 30
run b-fresh 240 --timeout 30 --fresh-context
run c-late 240 --timeout 30 --extra-environment "$late"
for t in c2-event-two-records-null-stream c2-event-records-null-and-named-stream c2-tail-trigger-before-tail-launch; do
  run "d-$t" 90 --timeout 10 --classify-timeouts --instances 1024 --launches 32 "$t"
done
for f in "$out"/*/results.jsonl; do
  echo "$f: $(grep -c . "$f") records"
done
