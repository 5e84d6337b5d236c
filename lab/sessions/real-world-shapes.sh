#!/usr/bin/env bash
# One GPU session for the real-world shapes (spec/pdl/real-world.yaml,
# spec/shapes.yaml), from a bundle (carry .gpu-bundle): the GPU tier of the
# whole suite, the new tests with it (published with `cargo xtask record
# $OUT/run`), then the new tests alone three times each, to see how their
# allowed outcomes (the stale reads a compiled-out wait allows, the
# launch-completion event's early start) and the load test's counts vary
# from run to run. Each step under `timeout`; the logs and results into
# $OUT, the repeats packed into $OUT/alone.tar.xz.
#   OUT=DIR bash lab/sessions/real-world-shapes.sh
set -u
cd "$(dirname "$0")/../.."
root=${OUT:?set OUT}
mkdir -p "$root"
# The records through `conformance report` (JSON), not the logs.
. conformance/json.sh   # report_trials
# Each trial's status and the first line of its message (the outputs).
show() {
  report_trials "$1" 2>/dev/null | python3 -c '
import json, sys
for l in sys.stdin:
    t = json.loads(l)
    if sys.argv[1] == "all" or t["status"] not in ("pass", "not-supported"):
        m = (t.get("message") or "").splitlines()
        print("  %-15s %s: %s" % (t["status"], t["trial"], m[0][:400] if m else ""))' "$2"
}
OUT=$root/run timeout -k 10 400 bash conformance/gpu-run.sh -q --tier gpu --model-timeout 100 --timeout 30 \
  > "$root/run.log" 2>&1
echo "suite: exit $?" | tee -a "$root/session.txt"
show "$root/run/results.jsonl" notable | tee -a "$root/session.txt"
mkdir -p "$root/alone"
# The shapes' trials: their names hold one of these.
for filter in guarded-wait pdl.runtime-api; do
  for i in 1 2 3; do
    dir=$root/alone/$filter-$i
    OUT=$dir timeout -k 10 150 bash conformance/gpu-run.sh --tier gpu --timeout 60 -- "$filter" \
      > "$dir.log" 2>&1
    echo "$filter alone $i: exit $?" | tee -a "$root/session.txt"
    show "$dir/results.jsonl" all | tee -a "$root/session.txt"
  done
done
tar -C "$root" -cJf "$root/alone.tar.xz" alone && rm -rf "$root/alone"
