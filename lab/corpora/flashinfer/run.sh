#!/bin/bash
# The check over FlashInfer's shipped cubins, one command:
#   lab/corpora/flashinfer/run.sh
# Checks every cubin under $CUBINS in a seeded random order (list.txt, made
# once), in batches of $BATCH files (one JSON report a batch, out/), each
# cubin's result cached by its content hash ($CACHE): a batch already done
# is skipped, and a run with a fresh $OUT re-reads the cache (no nvdisasm).
# Times: times.txt (a line a batch, then the total).
#   CUBINS  the unzipped flashinfer_cubin/cubins (default /work/flashinfer/x/flashinfer_cubin/cubins)
#   RUN     the working directory (default /work/flashinfer/run)
#   BIN     gridcheck-check (default: this checkout's target/release build, built first)
#   CACHE   the cache (default $RUN/cache)   OUT  the reports (default $RUN/reports)
#   JOBS    nvdisasm runs at once (default 2)   BATCH  files a report (default 500)
set -eu
HERE=$(cd "$(dirname "$0")/../../.." && pwd)
CUBINS=${CUBINS:-/work/flashinfer/x/flashinfer_cubin/cubins}
RUN=${RUN:-/work/flashinfer/run}
CACHE=${CACHE:-$RUN/cache}
OUT=${OUT:-$RUN/reports}
JOBS=${JOBS:-2}
BATCH=${BATCH:-500}
if [ -z "${BIN:-}" ]; then
  (cd "$HERE" && cargo build --release -q -p gridcheck-check)
  BIN=$HERE/target/release/gridcheck-check
fi
mkdir -p "$RUN" "$OUT"
cd "$RUN"
if [ ! -f list.txt ]; then
  find "$CUBINS" -name '*.cubin' | sort | python3 -c '
import random, sys
l = sys.stdin.read().split()
random.Random(2024).shuffle(l)
print("\n".join(l))' > list.txt
fi
rm -f part-*
split -l "$BATCH" -d -a 3 list.txt part-
start=$(date +%s.%N)
for b in part-*; do
  [ -f "$OUT/$b.done" ] && continue
  s=$(date +%s.%N)
  "$BIN" --format json --cache "$CACHE" --jobs "$JOBS" $(cat "$b") > "$OUT/$b.json" 2> "$OUT/$b.err" || true  # 1: findings, 2: a file with an error (in the report)
  echo "$b $(wc -l < "$b") files $(echo "$(date +%s.%N) - $s" | bc) s" >> times.txt
  touch "$OUT/$b.done"
done
echo "total $(wc -l < list.txt) files $(echo "$(date +%s.%N) - $start" | bc) s (jobs $JOBS)" >> times.txt
tail -1 times.txt
