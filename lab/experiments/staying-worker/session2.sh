#!/usr/bin/env bash
# The second GPU session (carry .gpu-bundle): the suite as tuned now (the
# staying worker, the late-write environment in the litmus trials, new
# timeouts classified), then the allowed outcomes the suite did not provoke,
# each alone with 8 times the instances (64 x 4 096 launches), as tuned and
# without delays. Each step under `timeout`; everything lands in $OUT.
set -uo pipefail
cd "$(dirname "$0")/../../.."
out=${OUT:-target/gridcheck}
mkdir -p "$out"
run() { # name timeout-seconds harness-args...
  local name=$1 t=$2; shift 2
  echo "== $name"
  OUT="$out/$name" timeout "$t" bash conformance/gpu-run.sh -q --model-timeout 100 "$@" \
    >"$out/$name.txt" 2>&1
  echo "exit $?"
  grep -E "tier:|harness exit" "$out/$name/conformance.log" | tail -n 4
}
run suite 300 --tier gpu --timeout 30
for t in pdl-implicit-trigger-cdp-child-may-be-missed pdl-trigger-before-cdp-launch-child-may-be-missed \
  pdl-trigger-cdp-primary-secondary-may-start-early c2-blocks-null-streams-unordered; do
  run "long-$t" 120 --tier gpu --timeout 60 --launches 4096 "$t"
  run "nodelay-$t" 120 --tier gpu --timeout 60 --launches 4096 --max-delay 0 "$t"
done
