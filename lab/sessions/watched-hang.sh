#!/usr/bin/env bash
# One GPU session for the watch of every litmus launch (a new hang costs
# seconds, not the timeout), from a bundle made by `cargo xtask gpu-bundle`;
# everything into $OUT, each step under `timeout`:
#  1. the fixture litmus hang (fault-litmus-hang: no fact covers it, no
#     gpu_timeout) alone at --timeout 60, in the staying worker and with
#     --fresh-context: each must be `timeout`, its message a `stall:` that
#     says where, the whole harness run (process, context, model, module,
#     stall) under 5 s;
#  2. the whole fixture spec at --timeout 60 (the runtime hangs still wait
#     for their timeout; the litmus one does not);
#  3. the known hang c2-trigger-record-wait-launch alone: `known-hang`, its
#     message the watch's stall;
#  4. the suite's GPU tier at --timeout 30 (its wall time and statuses, to
#     set beside the same run of the previous bundle on the same machine:
#     `cargo xtask report diff BASE/results.jsonl $OUT/suite/results.jsonl`).
# Exits non-zero when step 1 or 3 does not hold.
set -u
cd "$(dirname "$0")/../.."
root=${OUT:?set OUT}
mkdir -p "$root"
h=./.gpu-bundle/gridcheck
. conformance/bundle-kernels.sh
# The records through `gridcheck report` (JSON), not the logs.
. conformance/json.sh   # report_trials, trial_field, holds
[ -s .gpu-bundle/commit ] && export GRIDCHECK_COMMIT=$(cat .gpu-bundle/commit)
status=0
fix=(--root . --spec conformance/fixtures/spec --cubins .gpu-bundle/fixtures --tier gpu --timeout 60)

last() { # results-file test -> its last record, one JSON line
  report_trials "$1" 2>/dev/null | python3 -c '
import json, sys
last = [l for l in sys.stdin if json.loads(l)["test"] == sys.argv[1]]
print(last[-1].strip() if last else "{}")' "$2"
}

for mode in staying fresh; do
  extra=(); [ $mode = fresh ] && extra=(--fresh-context)
  res="$root/litmus-hang-$mode.jsonl"; rm -f "$res"
  start=$(date +%s%N)
  timeout -k 10 120 $h run "${fix[@]}" ${extra[@]+"${extra[@]}"} --results "$res" fault-litmus-hang \
    > "$root/litmus-hang-$mode.log" 2>&1
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  rec=$(last "$res" fault-litmus-hang)
  got=$(echo "$rec" | json_get status)
  echo "$mode: ${ms} ms: $got" | tee -a "$root/session.txt"
  echo "$rec" | json_get message | tee -a "$root/session.txt"
  if [ "$got" != timeout ] || ! echo "$rec" | json_get message | holds 'stall:' || [ "$ms" -ge 5000 ]; then
    echo "FAILED: $mode: fault-litmus-hang is not a stall within 5 s" | tee -a "$root/session.txt"
    status=1
  fi
done

res="$root/fixtures.jsonl"; rm -f "$res"
start=$(date +%s%N)
timeout -k 10 300 $h run "${fix[@]}" --results "$res" > "$root/fixtures.log" 2>&1
echo "fixture spec: exit $?, $(( ($(date +%s%N) - start) / 1000000 )) ms" | tee -a "$root/session.txt"
$h report summary "$res" --format text | tee -a "$root/session.txt"

OUT=$root/known timeout -k 10 120 bash conformance/gpu-run.sh --tier gpu c2-trigger-record-wait-launch \
  > "$root/known.log" 2>&1
rec=$(last "$root/known/results.jsonl" c2-trigger-record-wait-launch)
got=$(echo "$rec" | json_get status)
echo "known hang: $got" | tee -a "$root/session.txt"
if [ "$got" != known-hang ] || ! echo "$rec" | json_get message | holds 'stall:'; then
  echo "FAILED: c2-trigger-record-wait-launch is not a known hang ended by the watch" | tee -a "$root/session.txt"
  status=1
fi

OUT=$root/suite timeout -k 10 600 bash conformance/gpu-run.sh -q --tier gpu --timeout 30 \
  > "$root/suite.log" 2>&1
echo "suite: exit $?" | tee -a "$root/session.txt"
$h report summary "$root/suite/results.jsonl" --format text | tee -a "$root/session.txt"
cat "$root/suite/run.json" | tee -a "$root/session.txt"
exit $status
