#!/usr/bin/env bash
# On a GPU machine, from a bundle made by `cargo xtask gpu-bundle`:
#  1. the fault fixtures (conformance/fixtures/spec) each get their own status
#     (a hang: timeout, at the test's own gpu_timeout when it has one; an
#     illegal address: fail or crash; a module that does not load: fail)
#     while the healthy fixtures beside them pass;
#  2. a run of the real suite killed midway (SIGKILL) and then resumed with
#     --resume ends with a result for every trial.
# The statuses and messages come from the results files through
# `gridcheck report summary --every-trial` (JSON), never from the logs.
# Exits non-zero when either check fails.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-target/gridcheck}
mkdir -p "$out"
h="./.gpu-bundle/gridcheck run"
. conformance/bundle-kernels.sh
. conformance/json.sh   # report_trials, trial_field, holds, jsonl_count
status=0

expect() { # test status...
  local test=$1 got
  shift
  got=$(trial_field "$test" status <"$fix_trials")
  for want in "$@"; do
    if [ "$got" = "$want" ]; then echo "ok: $test -> $got"; return; fi
  done
  echo "FAILED: $test is '${got:-missing}', expected one of: $*"
  status=1
}

echo "== fault fixtures"
fix="$out/fixtures.jsonl"
fix_trials="$out/fixtures-trials.jsonl"
rm -f "$fix"
start=$(date +%s%N)
$h --root . --spec conformance/fixtures/spec --cubins .gpu-bundle/fixtures --tier gpu \
  --timeout 10 --results "$fix" >"$out/fixtures.log" 2>&1
echo "fixture run: exit $?, $(( ($(date +%s%N) - start) / 1000000 )) ms"
report_trials "$fix" >"$fix_trials"
expect fault-hang timeout
expect fault-hang-own-timeout timeout
# The harness's message for a trial killed at its own gpu_timeout
# (conformance/src/timeouts.rs).
if trial_field fault-hang-own-timeout message <"$fix_trials" |
  holds "killed after 3 s, the test's gpu_timeout"; then
  echo "ok: fault-hang-own-timeout was killed at its own gpu_timeout (3 s, --timeout 10)"
else
  echo "FAILED: fault-hang-own-timeout's record does not say it was killed at its gpu_timeout of 3 s"
  status=1
fi
expect fault-illegal-address fail crash
expect fault-load fail
expect fixture-ok pass
expect fixture-ok-after pass

echo "== killed midway, then resumed"
# A small, fast slice of the real suite: every tier of the cdp2.memory rules
# with a reduced litmus budget.
slice=(--root . --cubins .gpu-bundle/kernels --launches 2 --instances 256 --model-timeout 60)
res="$out/resume.jsonl"
rm -f "$res"
timeout -s KILL 2 $h "${slice[@]}" --results "$res" cdp2.memory >/dev/null 2>&1
before=$(report_trials "$res" 2>/dev/null | wc -l)
$h "${slice[@]}" --results "$res" --resume cdp2.memory >"$out/resume.log" 2>&1
echo "resumed run exit $?"
# The harness's listing as JSON, one object a trial.
listed=$($h "${slice[@]}" --list --format json cdp2.memory 2>/dev/null | jsonl_count name "" -)
have=$(report_trials "$res" | python3 -c '
import json, sys
print(len({json.loads(l)["trial"] for l in sys.stdin}))')
echo "trials with a result before the kill: $before; trials listed: $listed; trials with a result: $have"
if [ "$have" -ne "$listed" ] || [ "$before" -ge "$listed" ] || [ "$before" -eq 0 ]; then
  echo "FAILED: the resumed run does not account for every trial (or the kill did not land midway)"
  status=1
fi
exit $status
