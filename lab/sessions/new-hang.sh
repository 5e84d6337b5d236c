#!/usr/bin/env bash
# One GPU session: the suite with c2-trigger-record-wait-launch added
# (published with `cargo xtask record $OUT/run`), then that test alone three
# times, each run under `timeout`; everything packed in $OUT/runs.tar.xz.
set -u
cd "$(dirname "$0")/../.."
root=${OUT:?set OUT}
h=./.gpu-bundle/conformance
OUT=$root/run timeout -k 10 300 bash conformance/gpu-run.sh -q --tier gpu --model-timeout 100 --timeout 30 \
  > "$root/run.log" 2>&1
echo "suite: exit $?" | tee -a "$root/session.txt"
for i in 1 2 3; do
  OUT=$root/alone-$i timeout -k 10 120 bash conformance/gpu-run.sh --tier gpu -- c2-trigger-record-wait-launch \
    > "$root/alone-$i.log" 2>&1
  echo "alone $i: exit $?" | tee -a "$root/session.txt"
  "$h" report summary "$root/alone-$i/results.jsonl" --format text | tee -a "$root/session.txt"
done
"$h" report summary "$root/run/results.jsonl" --format text | tee -a "$root/session.txt"
cat "$root/run/run.json" | tee -a "$root/session.txt"
mv "$root"/alone-* "$root/run/" 2>/dev/null
tar -C "$root" -cJf "$root/runs.tar.xz" run && rm -rf "$root/run"
