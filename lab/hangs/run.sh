#!/usr/bin/env bash
# The hang reproducers (README.md): builds them with nvcc for sm_90 and runs
# each step under `timeout`, every output line time-stamped; the logs go to
# $OUT (default lab/hangs/out). Nothing here can hang a session: each
# step is killed at its limit and the next one runs, and every program also
# exits by itself at its own `limit=` and when its parent dies.
#
#   lab/hangs/run.sh [PART...]   the parts named, default all but smoke:
#     tail2        two tail launches a block, against the instance count (~2 min)
#     pdl          pdl-no-attribute-sees-all-without-wait, 4000 launches (~5 min)
#     fuzz466      fuzz-7-466 and its reductions (~6 min)
#     contention   tail tests alone, beside another process, after a kill (~2 min)
#     smoke        litmus_smoke on the pdl- tests, watched (needs .gpu-bundle/)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${OUT:-$here/out}
nvcc=${NVCC:-nvcc}
parts=${*:-tail2 pdl fuzz466 contention}
mkdir -p "$out"
cd "$here"
stamp() { while IFS= read -r l; do printf '%s %s\n' "$(date +%H:%M:%S.%3N)" "$l"; done; }
want() { case " $parts " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

nv() { "$nvcc" -O2 -arch=sm_90 -rdc=true -I"$root/kernels/include" -I"$root/kernels/generated" -I"$here" "$@" -lcudadevrt; }
# driver NAME TEST_CU ENTRY BLOCK PENDING [flags]: litmus_driver.cu around one kernel
driver() {
  local name=$1 cu=$2 entry=$3 block=$4 pending=$5
  shift 5
  nv -DTEST_CU="\"$cu\"" -DENTRY="$entry" -DBLOCK="$block" -DPENDING="$pending" "$@" litmus_driver.cu -o "$out/$name"
}
echo "== build ($nvcc): $parts"
{
  nv tail2.cu -o "$out/tail2" &
  nv pdl_no_attribute.cu -o "$out/pdl_no_attribute" &
  nv event_two_streams.cu -o "$out/event_two_streams" &
  driver f466 fuzz-7-466.cu fuzz_7_466__k0 96 1 &
  driver f466parts fuzz466_parts.cu parts_k0 96 1 -DHAS_MASK &
  driver tailnamed c2-tail-sees-named-stream-child.cu c2_tail_sees_named_stream_child__parent 96 2 &
  driver tailother c2-tail-sees-other-thread-child.cu c2_tail_sees_other_thread_child__parent 128 2 &
  driver mp mp-parent-child-own-write.cu mp_parent_child_own_write__parent 96 1 &
  wait
} || true
for p in tail2 pdl_no_attribute event_two_streams f466 f466parts tailnamed tailother mp; do
  [ -x "$out/$p" ] || { echo "build of $p failed"; exit 1; }
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
if want tail2; then
  for n in 1024 4096 16384 65536; do
    step "tail2-$n-incantations" 240 "$out/tail2" instances=$n launches=4 stall=30 limit=230
  done
  for n in 1024 4096 16384 65536; do
    step "tail2-$n-plain" 60 "$out/tail2" instances=$n launches=4 delay=0 stress=0 stall=30 limit=55
  done
fi

# (b) pdl-no-attribute-sees-all-without-wait, 1000 x 4 launches of 65536
# instances (0.150 s a launch on the H100: the step's limit cuts it at 300 s).
if want pdl; then
  step pdl-repeat 300 "$out/pdl_no_attribute" instances=65536 launches=4 repeat=1000 stall=30 limit=290
fi

# (c) fuzz-7-466: the generated kernel as the harness runs it (20 processes
# of 32 launches of 1024 instances, then one of 3000 launches, then 32768
# instances), its parts (mask bits: fuzz466_parts.cu) and the reduced program
# (event_two_streams.cu modes). A stall stops a step after a few seconds.
if want fuzz466; then
  for s in $(seq 1 20); do step "f466-proc-$s" 12 "$out/f466" instances=1024 launches=32 seed=$((100 + s)) stall=5 limit=10; done
  step f466-long 45 "$out/f466" instances=1024 launches=3000 seed=1 stall=6 limit=40
  step f466-32768 30 "$out/f466" instances=32768 launches=64 seed=7 stall=6 limit=28
  for m in 63 15 47 31 51 55 59 79; do
    step "f466-mask-$m" 25 "$out/f466parts" instances=1024 launches=1000 seed=1 stall=6 limit=22 mask=$m
  done
  step f466-mask-63-plain 25 "$out/f466parts" instances=1024 launches=1000 seed=1 delay=0 stress=0 stall=6 limit=22 mask=63
  for m in 0 1 2 3 4 5 6; do
    step "event-two-streams-mode$m" 25 "$out/event_two_streams" instances=1024 launches=3000 mode=$m stall=6 limit=20
  done
fi

# (d) The tail tests that timed out after a killed reproducer: alone, beside
# another process's kernels, and right after a SIGKILL of such a process.
if want contention; then
  for t in tailnamed tailother mp; do step "alone-$t" 20 "$out/$t" instances=1024 launches=32 seed=1 stall=15 limit=18; done
  "$out/pdl_no_attribute" instances=65536 launches=4 repeat=1000 stall=60 limit=60 >"$out/competitor.log" 2>&1 &
  cpid=$!
  sleep 4
  for t in tailnamed tailother mp; do step "contended-$t" 22 "$out/$t" instances=1024 launches=8 seed=1 stall=15 limit=20; done
  kill -9 "$cpid" 2>/dev/null
  wait "$cpid" 2>/dev/null
  "$out/pdl_no_attribute" instances=65536 launches=4 repeat=1000 stall=60 limit=60 >"$out/killed.log" 2>&1 &
  cpid=$!
  sleep 5
  kill -9 "$cpid" 2>/dev/null
  wait "$cpid" 2>/dev/null
  for t in tailnamed tailother; do step "after-kill-$t" 20 "$out/$t" instances=1024 launches=32 seed=2 stall=15 limit=18; done
fi

# (e) Optional: the rate step itself on the PDL tests, watched.
if want smoke && [ -x "$root/.gpu-bundle/litmus_smoke" ]; then
  echo "== litmus_smoke pdl- (limit 300s, watched)"
  (cd "$root" && GC_ONLY=pdl- timeout -k 10 300 "$here/watch.sh" 30 "$out/smoke-pdl.log" -- \
    ./.gpu-bundle/litmus_smoke spec .gpu-bundle/kernels/sm_90 65536 4)
fi

echo "== summary"
grep -h ' \(RESULT\|STALL\|WATCH\|LIMIT\)' "$out"/*.log
grep -h '^== .* rc=' "$out"/*.log
