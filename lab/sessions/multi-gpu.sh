#!/usr/bin/env bash
# One GPU session on a host with two or more GPUs, from a bundle (carry
# .gpu-bundle from `cargo xtask gpu-bundle`; its kernels travel packed as
# .gpu-bundle/kernels.tar.xz, which gpu-run.sh unpacks), on a
# machine without Rust.
# Every step runs under `timeout`, the whole session under SESSION_LIMIT
# seconds (default 420); everything is written into $OUT/session (default
# target/gridcheck/session) and packed into $OUT/session.tar.xz once the
# session ends or is cut short, so that a step cut short loses only itself.
#   1. machine.txt: every GPU of the host, and nvcc.
#   2. the whole suite (every tier) with the GPU tier on every GPU at once
#      (--devices all, the tuned environment): devices-all/ (results.jsonl,
#      conformance.log with the wall time). The tests that need two GPUs
#      run here.
#   3. the same on device 0 alone (--devices 0): devices-0/, to compare
#      statuses and wall times with step 2.
#   4. the line burst on the PDL mutants that no environment killed before
#      (the mutants of the `*-wait-sees-writes` tests), one run a point of
#      LINE_BURSTS (default "2048 8192 32768"), each BURST[:INSTANCES[:DELAY]]
#      (the tuned file gives what a point leaves out): burst-<point>.jsonl/.log.
#   5. every mutant under the tuned environment with the point that killed
#      the most in step 4 (the first of equals): mutants.jsonl/.log; skipped
#      when no point killed any.
#   6. the whole suite, every tier, on device 0 with that point:
#      burst-suite/ (statuses and wall time of the environment it would make).
# STEPS (default "1 2 3 4 5 6") picks the steps; 5 and 6 need 4.
set -uo pipefail
cd "$(dirname "$0")/../.."
base=${OUT:-target/gridcheck}
out=$base/session
mkdir -p "$out"
if [ -z "${GC_SESSION_INNER:-}" ]; then
  GC_SESSION_INNER=1 timeout "${SESSION_LIMIT:-420}" bash "$0" "$@"
  echo "session exit code $? (124: cut at SESSION_LIMIT)"
  tar cJf "$base/session.tar.xz" -C "$base" session
  exit 0
fi
bursts=${LINE_BURSTS:-2048 8192 32768}
harness=./.gpu-bundle/gridcheck
# What each step reports comes from the records through `gridcheck
# report` (JSON, read with json_get), and from gpu-run.sh's run.json.
. conformance/json.sh
if [ ! -x "$harness" ]; then
  echo "no $harness: run \`cargo xtask gpu-bundle\` first and carry .gpu-bundle" >&2
  exit 2
fi
step() { echo "== $(date -u +%H:%M:%S) $*"; }
steps=" ${STEPS:-1 2 3 4 5 6} "
on() { [[ "$steps" == *" $1 "* ]]; }

if on 1; then
  step "1. machine"
  {
    nvidia-smi --query-gpu=index,name,driver_version,compute_cap,uuid,pci.bus_id --format=csv,noheader
    nvidia-smi topo -m 2>/dev/null | head -n 6
    nvcc --version | tail -n 2
  } >"$out/machine.txt" 2>&1
  cat "$out/machine.txt"
fi

if on 2; then
  step "2. the suite, GPU tier on every GPU"
  mkdir -p "$out/devices-all"
  OUT=$out/devices-all timeout 150 bash conformance/gpu-run.sh -q --devices all \
    --model-timeout 120 --timeout 30 >/dev/null 2>&1
  echo "exit code $?"
  cat "$out/devices-all/run.json"
  "$harness" report summary "$out/devices-all/results.jsonl" --format text
fi

if on 3; then
  step "3. the suite, GPU tier on device 0"
  mkdir -p "$out/devices-0"
  OUT=$out/devices-0 timeout 150 bash conformance/gpu-run.sh -q --devices 0 \
    --model-timeout 120 --timeout 30 >/dev/null 2>&1
  echo "exit code $?"
  cat "$out/devices-0/run.json"
  "$harness" report summary "$out/devices-0/results.jsonl" --format text
fi
on 4 || exit 0

step "4. line burst on the surviving PDL mutants"
timeout 90 bash conformance/compile-kernels.sh .gpu-bundle/mutants
# The harness flags of a point BURST[:INSTANCES[:DELAY]].
point_args() {
  local b i d
  IFS=: read -r b i d <<<"$1"
  echo "--line-burst $b${i:+ --instances $i}${d:+ --max-delay $d}"
}
best=0
best_kills=-1
for b in $bursts; do
  n=${b//:/-}
  RESULTS=burst-$n.jsonl LOG=burst-$n.log OUT=$out timeout 60 bash conformance/mutants-gpu.sh \
    $(point_args "$b") --timeout 30 --model-timeout 60 -- -wait-sees-writes~ >"$out/burst-$n.out" 2>&1
  # Killed mutants, from the records.
  kills=$("$harness" report mutants "$out/burst-$n.jsonl" 2>/dev/null | json_get killed)
  echo "$b: ${kills:-no} mutants killed"
  if [ -n "$kills" ] && [ "$kills" -gt "$best_kills" ]; then
    best=$b
    best_kills=$kills
  fi
done
echo "burst with the most kills: $best ($best_kills)"
if [ "$best_kills" -le 0 ]; then
  step "no burst size killed a mutant: steps 5 and 6 skipped"
  exit 0
fi

if on 5; then
  step "5. every mutant, tuned environment, line burst $best"
  OUT=$out timeout 240 bash conformance/mutants-gpu.sh $(point_args "$best") --devices all \
    --timeout 30 --model-timeout 60 >"$out/mutants.out" 2>&1
  "$harness" report mutants "$out/mutants.jsonl" --format text
fi
on 6 || exit 0

step "6. the whole suite on device 0, line burst $best"
mkdir -p "$out/burst-suite"
OUT=$out/burst-suite timeout 120 bash conformance/gpu-run.sh -q --devices 0 $(point_args "$best") \
  --model-timeout 120 --timeout 30 >/dev/null 2>&1
echo "exit code $?"
cat "$out/burst-suite/run.json"
"$harness" report summary "$out/burst-suite/results.jsonl" --format text

step "done"
