#!/usr/bin/env bash
# Does a trial's rate depend on what ran before it? The allowed stale reads
# of the `*may-be-stale` PDL tests, inside the whole GPU tier and alone, on
# one machine one step after another, each step changing one thing:
#   suite-1, suite-2   the whole GPU tier, staying worker (the default)
#   alone-1..3         the may-be-stale trials alone, a fresh worker each run
#   fresh              the whole GPU tier, a process and context a trial
#                      (--fresh-context): the staying worker's state removed
#   pdl                the PDL trials only, one staying worker
#   late-write         the may-be-stale trials alone in the late-write
#                      environment only, ten times its launches (the rate)
# The GPU's clocks, temperature and power are read before every step.
# Run from a checkout that carries .gpu-bundle (cargo xtask gpu-bundle).
set -uo pipefail
cd "$(dirname "$0")/../../.."
out=${OUT:-target/suite-order}
mkdir -p "$out/steps"
smi() {
  echo "== $1 $(date +%T.%N | cut -c1-12)" >>"$out/steps/clocks.csv"
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw,clocks_throttle_reasons.active \
    --format=csv,noheader >>"$out/steps/clocks.csv" 2>&1
}
step() { # name, seconds, harness arguments...
  local name=$1 limit=$2; shift 2
  smi "$name"
  local start=$(date +%s%N)
  OUT="$out/steps/$name" timeout "$limit" bash conformance/gpu-run.sh "$@" >/dev/null 2>&1
  echo "$name exit $? wall $(( ($(date +%s%N) - start) / 1000000 )) ms" | tee -a "$out/steps/walls.txt"
}
step suite-1 120 --tier gpu -q --timeout 30
for i in 1 2 3; do step alone-$i 60 --tier gpu -q --timeout 30 may-be-stale; done
step fresh 200 --tier gpu -q --timeout 30 --fresh-context
step pdl 120 --tier gpu -q --timeout 30 gpu/sm_90/pdl
step late-write 120 --tier gpu -q --timeout 30 --tuning none --instances 64 --launches 480 \
  --max-delay 0 --stress-words 0 --line-burst 8192 may-be-stale
step suite-2 120 --tier gpu -q --timeout 30
smi end
# One line a (step, trial) for the trials that can read stale: status,
# positive and instances.
python3 - "$out/steps" >"$out/summary.txt" <<'PY'
import json, os, sys
root = sys.argv[1]
for step in sorted(os.listdir(root)):
    path = os.path.join(root, step, "results.jsonl")
    if not os.path.exists(path):
        continue
    for line in open(path):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if "may-be-stale" not in r.get("trial", "") or r.get("tier") != "gpu":
            continue
        hw = r.get("hardware") or {}
        print(f'{step:12} {r["status"]:16} {hw.get("positive")}/{hw.get("instances")} {r["trial"]}')
PY
cat "$out/steps/walls.txt" "$out/summary.txt"
tar cJf "$out/steps.tar.xz" -C "$out" steps && rm -r "$out/steps"
