#!/usr/bin/env bash
# The hang reproducers (README.md): builds them with nvcc for sm_90 and runs
# each step under `timeout`, every output line time-stamped; the logs go to
# $OUT (default conformance/hangs/out). Nothing here can hang a session: each
# step is killed at its limit and the next one runs.
#
#   conformance/hangs/run.sh            the reproducers (about 6 minutes at most)
#   conformance/hangs/run.sh smoke      also litmus_smoke on the pdl- tests,
#                                       under the watchdog (needs .gpu-bundle/)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${OUT:-$here/out}
nvcc=${NVCC:-nvcc}
mkdir -p "$out"
cd "$here"
stamp() { while IFS= read -r l; do printf '%s %s\n' "$(date +%H:%M:%S.%3N)" "$l"; done; }

echo "== build ($nvcc)"
for p in tail2 pdl_no_attribute; do
  "$nvcc" -O2 -arch=sm_90 -rdc=true -I"$root/kernels/include" -I"$here" "$p.cu" -o "$out/$p" -lcudadevrt \
    || { echo "build of $p failed"; exit 1; }
done

step() {
  local name=$1 limit=$2
  shift 2
  echo "== $name (limit ${limit}s): $*"
  timeout -k 10 "$limit" "$@" 2>&1 | stamp | tee "$out/$name.log"
  echo "== $name rc=${PIPESTATUS[0]} (124: the limit; 2: a stall the counters saw)" | tee -a "$out/$name.log"
}

# (a) Two tail launches a block: time per launch against the instance count,
# with the suite's incantations (delays up to 2^20 cycles, stress) and
# without. Linear growth with moving counters: a long run; counters that
# stop: a deadlock.
for n in 1024 4096 16384 65536; do
  step "tail2-$n-incantations" 240 "$out/tail2" instances=$n launches=4 stall=30
done
for n in 1024 4096 16384 65536; do
  step "tail2-$n-plain" 60 "$out/tail2" instances=$n launches=4 delay=0 stress=0 stall=30
done

# (b) pdl-no-attribute-sees-all-without-wait, 1000 x 4 launches of 65536
# instances (about 46 s at the rate step's 0.046 s per 4 launches).
step pdl-repeat 300 "$out/pdl_no_attribute" instances=65536 launches=4 repeat=1000 stall=30

# (c) Optional: the rate step itself on the PDL tests, watched.
if [ "${1:-}" = smoke ] && [ -x "$root/.gpu-bundle/litmus_smoke" ]; then
  echo "== litmus_smoke pdl- (limit 300s, watched)"
  (cd "$root" && GC_ONLY=pdl- timeout -k 10 300 "$here/watch.sh" 30 "$out/smoke-pdl.log" -- \
    ./.gpu-bundle/litmus_smoke spec .gpu-bundle/kernels/sm_90 65536 4)
fi

echo "== summary"
grep -h ' \(RESULT\|STALL\|WATCH\)' "$out"/*.log
grep -h '^== .* rc=' "$out"/*.log
