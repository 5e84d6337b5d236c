#!/usr/bin/env bash
# trigger-tail (README.md): builds trigger_tail.cu (executable and cubin) and
# five generated litmus kernels under lab/hangs/litmus_driver.cu with the
# nvcc on PATH (sm_90), then runs every case in its own process under
# `timeout`: a case whose launch has not completed after HANG_MS (default
# 2000) prints HANG with where the grid stopped and exits 2.
#
#   OUT=DIR bash lab/experiments/trigger-tail/run.sh [SUBSTRING...]
#
# Only the cases whose name contains one of the SUBSTRINGs run (default all).
# BUILD_ONLY=1 builds and stops (a check on a machine without a GPU; NVCC
# names the compiler, and its libcudadevrt must be on its library path).
# Output, all under $OUT (default lab/experiments/trigger-tail/out):
#   machine.txt     nvidia-smi, nvcc --version, the commit
#   build.log       the compiler's output
#   trigger-tail.log every line of every case, time-stamped
#   summary.tsv     one row a case: name, rc, verdict, counts, where it stopped
# About 3.5 to 4 minutes on an H100 when every hang case hangs (each costs
# HANG_MS plus the process's start and exit).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=${OUT:-$here/out}
nvcc=${NVCC:-nvcc}
hang_ms=${HANG_MS:-2000}
case_limit=$((hang_ms / 1000 + 10)) # a case's `timeout`; the program exits by itself 2 s before
filters=("$@")
mkdir -p "$out"
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
log=$out/trigger-tail.log
sum=$out/summary.tsv
: >"$log"
printf 'name\trc\tverdict\twall_ms\tlaunches\tblocks\tchild_ran\tmissed_y\tmissed_x\tafter_ran\tlaunch_err\tworst_launch_ms\twhere\targs\tbefore_slow\tmissed_y_slow\n' >"$sum"

{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,driver_version,compute_cap,uuid --format=csv,noheader 2>&1 || echo "nvidia-smi failed"
  "$nvcc" --version 2>&1 | tail -n 2
  git -C "$root" rev-parse HEAD 2>/dev/null || cat "$root/.gpu-bundle/commit" 2>/dev/null || echo "commit unknown"
  echo "HANG_MS=$hang_ms filters=${filters[*]:-all}"
} >"$out/machine.txt" 2>&1

# Build: the experiment (executable, and the cubin by the harness's chain),
# and the generated kernels through the hang reproducers' litmus driver.
nv() { "$nvcc" -O2 -arch=sm_90 -rdc=true "$@" -lcudadevrt; }
gen_driver() {  # NAME TEST ENTRY BLOCK
  nv -I"$root/kernels/include" -I"$root/kernels/generated" -I"$root/lab/hangs" \
    -DTEST_CU="\"$2.cu\"" -DENTRY="$3" -DBLOCK="$4" -DPENDING=1 "$root/lab/hangs/litmus_driver.cu" -o "$bin/$1"
}
{
  echo "== build with $nvcc"
  nv "$here/trigger_tail.cu" -o "$bin/trigger_tail" &
  { "$nvcc" -O2 -arch=sm_90 -rdc=true -DTT_MODULE_ONLY -c "$here/trigger_tail.cu" -o "$bin/tt.o" &&
    "$nvcc" -arch=sm_90 -dlink -cubin "$bin/tt.o" -lcudadevrt -o "$bin/trigger_tail.cubin"; } &
  gen_driver gen-tf c2-tail-trigger-before-tail-launch c2_tail_trigger_before_tail_launch__parent 96 &
  gen_driver gen-lf c2-tail-trigger-after-tail-launch c2_tail_trigger_after_tail_launch__parent 128 &
  gen_driver gen-other c2-tail-sees-other-thread-write-after-trigger \
    c2_tail_sees_other_thread_write_after_trigger__parent 128 &
  gen_driver gen-ev2 c2-event-two-records-null-stream c2_event_two_records_null_stream__parent 96 &
  gen_driver gen-evn c2-event-records-null-and-named-stream \
    c2_event_records_null_and_named_stream__parent 96 &
  wait
} >"$out/build.log" 2>&1
for b in trigger_tail trigger_tail.cubin gen-tf gen-lf gen-other gen-ev2 gen-evn; do
  if [ ! -e "$bin/$b" ]; then
    echo "build of $b failed (see $out/build.log)" | tee -a "$out/machine.txt"
    exit 2
  fi
done
if [ -n "${BUILD_ONLY:-}" ]; then
  echo "built: $(ls "$bin" | tr '\n' ' ')"
  exit 0
fi
cd "$bin"

stamp() { while IFS= read -r l; do printf '%s %s\n' "$(date +%H:%M:%S.%3N)" "$l"; done; }
selected() {
  [ ${#filters[@]} -eq 0 ] && return 0
  local f
  for f in "${filters[@]}"; do case "$1" in *"$f"*) return 0 ;; esac; done
  return 1
}
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2" | head -n 1; }
# record NAME RC WALL-MS OUTPUT-FILE ARGS: one row of summary.tsv.
record() {
  local name=$1 rc=$2 wall=$3 f=$4 args=$5 verdict res where=""
  res=$(grep -m1 '^RESULT ' "$f" || true)
  case $rc in
    0) verdict=completed ;;
    2) verdict=hang; where=$(grep -m1 -E '^(HANG|STALL) ' "$f" | cut -d' ' -f3-) ;;
    3) verdict=error; where=$(grep -v '^END ' "$f" | tail -n 1) ;;
    124) verdict=limit; where=$(grep -v '^END ' "$f" | tail -n 1) ;;
    137) verdict=killed; where=$(grep -v '^END ' "$f" | tail -n 1) ;;
    *) verdict="exit-$rc"; where=$(grep -v '^END ' "$f" | tail -n 1) ;;
  esac
  where=$(tr '\t' ' ' <<<"$where")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$rc" "$verdict" "$wall" \
    "$(field launches "$res")" "$(field blocks "$res")" "$(field child_ran "$res")" \
    "$(field missed_y "$res")" "$(field missed_x "$res")" "$(field after_ran "$res")" \
    "$(field launch_err "$res")" "$(field worst_launch_ms "$res")" "$where" "$args" \
    "$(field before_slow "$res")" "$(field missed_y_slow "$res")" >>"$sum"
}
# tt NAME ARGS...: one case of trigger_tail in its own process.
tt() {
  local name=$1
  shift
  selected "$name" || return 0
  local f="$bin/case.out" start rc wall envs=() a args=()
  for a in "$@"; do  # ENV:VAR=VALUE sets VAR in the case's environment
    case $a in ENV:*) envs+=("${a#ENV:}") ;; *) args+=("$a") ;; esac
  done
  start=$(date +%s%N)
  timeout -k 2 "$case_limit" env "${envs[@]}" ./trigger_tail name="$name" hang_ms="$hang_ms" \
    limit=$((case_limit - 2)) "${args[@]}" >"$f" 2>&1
  rc=$?
  wall=$((($(date +%s%N) - start) / 1000000))
  echo "END name=$name rc=$rc wall_ms=$wall" >>"$f"
  stamp <"$f" >>"$log"
  record "$name" "$rc" "$wall" "$f" "$*"
  printf '%-34s rc=%-3s %s\n' "$name" "$rc" "$(tail -n 2 "$f" | head -n 1 | cut -c1-150)"
}
# gen NAME BINARY ARGS...: a generated kernel run as the harness runs it
# (litmus_driver: fresh buffers, seeds, slot permutation); STALL = no status
# word changed for `stall` s.
gen() {
  local name=$1 b=$2
  shift 2
  selected "$name" || return 0
  local f="$bin/case.out" start rc wall
  echo "CASE name=$name driver=$b $*" >"$f"
  start=$(date +%s%N)
  timeout -k 2 "$case_limit" "./$b" stall=2 limit=$((case_limit - 2)) "$@" >>"$f" 2>&1
  rc=$?
  wall=$((($(date +%s%N) - start) / 1000000))
  echo "END name=$name rc=$rc wall_ms=$wall" >>"$f"
  stamp <"$f" >>"$log"
  record "$name" "$rc" "$wall" "$f" "$*"
  printf '%-34s rc=%-3s %s\n' "$name" "$rc" "$(tail -n 2 "$f" | head -n 1 | cut -c1-150)"
}

TF="order=trigger-first who=same"
LF="order=launch-first who=same"
echo "== plain: the parent launched from the host with <<<>>> into the legacy stream, 64 threads"
tt p-none-b1 order=none blocks=1 launches=50 delay=20000
tt p-none-b1024 order=none blocks=1024 launches=5 delay=20000
for b in 1 2 132 1024; do tt "p-tf-same-b$b" $TF blocks=$b; done
tt p-tf-same-b1-seed2 $TF blocks=1 seed=2
tt p-tf-same-b1-seed3 $TF blocks=1 seed=3
tt p-tf-other-b1 order=trigger-first who=other blocks=1
tt p-tf-other-b1024 order=trigger-first who=other blocks=1024
tt p-tf-same-b1-lanes32 $TF blocks=1 lanes=32
tt p-tf-same-b1-pss $TF blocks=1 api=ex attr=pss
tt p-tf-same-b1-after $TF blocks=1 after=1
for d in 0 20000 200000; do tt "p-lf-same-b1-d$d" $LF blocks=1 launches=50 delay=$d; done
tt p-lf-same-b1024-d20000 $LF blocks=1024 launches=5 delay=20000
tt p-lf-same-b1-d20000-lanes32 $LF blocks=1 launches=50 delay=20000 lanes=32
tt p-lf-other-b1-d20000 order=launch-first who=other blocks=1 launches=50 delay=20000
tt p-lf-other-b1024-d20000 order=launch-first who=other blocks=1024 launches=5 delay=20000
tt p-none-b1-d200000 order=none blocks=1 launches=50 delay=200000

echo "== device-launched parent: one thread of a host-launched grid launches it into its NULL stream"
tt d-none-b1 launch=device order=none blocks=1 launches=50 delay=20000
tt d-tf-same-b1 launch=device $TF blocks=1
tt d-tf-same-b1024 launch=device $TF blocks=1024
tt d-tf-other-b1 launch=device order=trigger-first who=other blocks=1
tt d-lf-same-b1-d20000 launch=device $LF blocks=1 launches=50 delay=20000
tt d-lf-same-b1-d200000 launch=device $LF blocks=1 launches=50 delay=200000
tt d-lf-same-b1024-d20000 launch=device $LF blocks=1024 launches=5 delay=20000

echo "== other children: fire-and-forget, a named stream, the NULL stream (host-launched parent)"
for c in ff named null; do
  tt "c-none-b1-$c" order=none child=$c blocks=1 launches=20 delay=20000
  tt "c-tf-same-b1-$c" $TF child=$c blocks=1
  tt "c-tf-same-b1024-$c" $TF child=$c blocks=1024
  tt "c-lf-same-b1-d20000-$c" $LF child=$c blocks=1 launches=50 delay=20000
done

# The harness's differences from the plain program (README.md lists them),
# one at a time, on the hanging shape (trigger, then the tail launch) and on
# the early-start shape (the tail launch, then the trigger, a write 20 000
# cycles later); then all of them together.
all="ENV:CUDA_MODULE_LOADING=EAGER loader=cubin cubin=$bin/trigger_tail.cubin stream=nonblocking bs=128 stress=1 rnd=131072 fresh=1 after=1"
harness_variants=(
  "stream-nonblocking|stream=nonblocking"
  "stream-blocking|stream=blocking"
  "api-ex|api=ex"
  "cubin|loader=cubin cubin=$bin/trigger_tail.cubin"
  "cubin-nonblocking|loader=cubin cubin=$bin/trigger_tail.cubin stream=nonblocking"
  "bs128-stress|bs=128 stress=1"
  "bs128-idle|bs=128"
  "rnd17|rnd=131072 launches=20"
  "rnd20|rnd=1048576 launches=20"
  "pre2000|pre=2000"
  "pre20000|pre=20000"
  "pre200000|pre=200000"
  "eager|ENV:CUDA_MODULE_LOADING=EAGER"
  "fresh|fresh=1 launches=8"
  "after|after=1"
  "pool|pool=33792"
  "b64-l8|blocks=64 launches=8"
  "b32768|blocks=32768 pool=33792 launches=2"
  "all-b1|$all launches=20"
  "all-b64|$all blocks=64 launches=8"
)
echo "== harness-shaped: each difference alone, then all"
for v in "${harness_variants[@]}"; do
  tag=${v%%|*}
  args=${v#*|}
  # shellcheck disable=SC2086 # the variant's words are separate arguments
  tt "h-tf-$tag" $TF blocks=1 $args
done
for v in "${harness_variants[@]}"; do
  tag=${v%%|*}
  args=${v#*|}
  # shellcheck disable=SC2086
  tt "h-lf-$tag" $LF blocks=1 launches=50 delay=20000 $args
done
# shellcheck disable=SC2086
tt h-tf-other-all-b64 order=trigger-first who=other $all blocks=64 launches=8

echo "== generated kernels (kernels/generated/) through lab/hangs/litmus_driver.cu"
gen g-tf-tuned gen-tf instances=64 launches=32 delay=131072 stress=0
gen g-tf-builtin gen-tf instances=1024 launches=4 delay=1048576 stress=65536
gen g-tf-plain-b1 gen-tf instances=1 launches=20 delay=0 stress=0
gen g-lf-tuned gen-lf instances=64 launches=32 delay=131072 stress=0
gen g-lf-plain-b1 gen-lf instances=1 launches=50 delay=0 stress=0
gen g-other-tuned gen-other instances=64 launches=32 delay=131072 stress=0

echo "== the event-record tests (spec/cdp2/events.yaml) as the harness runs them: do they stall?"
gen g-ev2-tuned gen-ev2 instances=64 launches=512 delay=131072 stress=0
gen g-ev2-1024 gen-ev2 instances=1024 launches=32 delay=1048576 stress=65536
gen g-evn-tuned gen-evn instances=64 launches=512 delay=131072 stress=0
gen g-evn-1024 gen-evn instances=1024 launches=32 delay=1048576 stress=65536

# The follow-up (README.md, "The follow-up"): the hypothesis that a tail
# launch never starts when every block of its grid has triggered (or exited)
# before the grid's first tail launch, and that a tail launched before that
# starts once every block has triggered. `fu-` only: about 40 s with the build.
echo "== follow-up: which blocks trigger, which launch, and when"
tt fu-tf-b64-slow0-wait $TF blocks=64 slowb=0 slowwait=1 launches=8
tt fu-tf-b2-slow1-wait $TF blocks=2 slowb=1 slowwait=1 launches=20
tt fu-tf-b64-slow0-200k $TF blocks=64 slowb=0 slow=200000 launches=8
tt fu-tf-b64-slow0-20k $TF blocks=64 slowb=0 slow=20000 launches=8
tt fu-tf-b2-trig0 $TF blocks=2 trigb=0 launches=20
tt fu-tf-b2-trig0-launch1 $TF blocks=2 trigb=0 launchb=1 launches=20
tt fu-tf-b2-launch0-slow0 $TF blocks=2 launchb=0 slowb=0 slow=200000
tt fu-tf-b2-trig0-launch0-slow0 $TF blocks=2 trigb=0 launchb=0 slowb=0 slow=200000
tt fu-tf-b1-lanesall $TF blocks=1 lanes=1024
tt fu-tf-b64-lanesall $TF blocks=64 lanes=1024
tt fu-tf-b64-lanesall-slow0-wait $TF blocks=64 lanes=1024 slowb=0 slowwait=1 launches=8
for b in 2 8 64; do
  tt "fu-lf-b$b-d200000" $LF blocks=$b launches=20 delay=200000
  tt "fu-lf-b$b-slowlast" $LF blocks=$b launches=20 delay=200000 slowb=$((b - 1)) slow=2000000
done
tt fu-lf-b1024-d2000000 $LF blocks=1024 launches=3 delay=2000000

echo "== summary ($sum)"
cut -f1-4,7-9,13 "$sum" | column -t -s $'\t' 2>/dev/null || cat "$sum"
