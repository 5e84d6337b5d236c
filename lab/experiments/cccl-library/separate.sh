#!/usr/bin/env bash
# Separating runs for the CCCL 13.0 merge-sort failures under load (README.md
# here, section 6). On a GPU machine, from the checkout with target/library
# unpacked (the bundle's library.tar.xz):
#   bash lab/experiments/cccl-library/separate.sh OUT [PART...]
# Parts: jit (the same code path with and without the driver's JIT),
# load (what beside the sort matters: the load kernel, a kernel touching no
# memory, the allocations alone), sync (which call fails: one call a batch),
# wait (the sm_90 build's failures against the wait-first patch and PDL
# off), thrust (the sm_90 thrust_sort_custom burst failure), jitcache (the JIT's
# SASS, kept for disassembly), histogram (CCCL 13.2's compute_80 histogram
# under load), timing (where a run's time goes), producer (a user's kernel
# writing the keys just before CCCL 13.3's radix sort). Every run is under `timeout`; each writes one
# JSON line to OUT/runs.jsonl: the program's line with the run's settings.
set -uo pipefail
cd "$(dirname "$0")/../../.."
out=${1:?usage: separate.sh OUT [PART...]}; shift
mkdir -p "$out"
parts=${*:-jit load sync thrust jitcache}
lib=target/library/13.0
export CUDA_MODULE_LOADING=EAGER

# run TAG EXE ARGS...: one program run, its line tagged.
run() {
  local tag=$1 exe=$2; shift 2
  local t0=$(date +%s%N) line rc
  line=$(timeout 90 "$exe" "$@" 2>>"$out/stderr.log"); rc=$?
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  line=$(printf '%s\n' "$line" | grep '^{' | tail -n 1)
  [ -n "$line" ] || line='{}'
  printf '%s\n' "${line%\}}$( [ "$line" = '{}' ] && echo '' || echo ',')\"tag\":\"$tag\",\"exe\":\"$exe\",\"args\":\"$*\",\"rc\":$rc,\"wall_ms\":$ms,\"load_knob\":\"${GRIDCHECK_LIB_LOAD:-}\",\"sync_knob\":\"${GRIDCHECK_LIB_SYNC:-}\"}" >>"$out/runs.jsonl"
  echo "$tag rc=$rc ${ms}ms $(printf '%s' "$line" | head -c 220)"
}

ms() { echo "--algorithm $1 --size 1000000 --reps 20 --env $2 --seed $3"; }

for part in $parts; do
  case $part in
  jit)
    for bin in compute_80/merge_sort compute_80/merge_sort-nopdl compute_80/merge_sort-sass80 \
               compute_80/merge_sort-ptx90 sm_90/merge_sort; do
      for env in back-to-back stress burst delay; do
        for alg in merge_sort_keys merge_sort_pairs; do
          for seed in 1 2 3; do run "jit $bin $env" "$lib/$bin" $(ms $alg $env $seed); done
        done
      done
    done ;;
  load)
    for knob in none spin; do
      for bin in compute_80/merge_sort compute_80/merge_sort-sass80; do
        for env in stress burst delay; do
          for alg in merge_sort_keys merge_sort_pairs; do
            for seed in 1 2 3; do
              GRIDCHECK_LIB_LOAD=$knob run "load=$knob $bin $env" "$lib/$bin" $(ms $alg $env $seed)
            done
          done
        done
      done
    done ;;
  sync)
    for bin in compute_80/merge_sort compute_80/merge_sort-sass80 compute_80/merge_sort-ptx90; do
      for env in stress burst delay; do
        for alg in merge_sort_keys merge_sort_pairs; do
          for seed in 1 2 3; do GRIDCHECK_LIB_SYNC=1 run "sync $bin $env" "$lib/$bin" $(ms $alg $env $seed); done
        done
      done
    done ;;
  wait)
    # The sm_90 build, which waits: as shipped, the wait moved to each
    # kernel's first line (the wait-first patch) and PDL off, seeds
    # SEED0..SEEDS; BUILDS narrows the builds (`wait-first` for only those).
    for seed in $(seq "${SEED0:-1}" "${SEEDS:-5}"); do
      for bin in $(printf 'sm_90/merge_sort%s ' ${BUILDS:-"" -wait-first -nopdl}); do
        for env in burst delay; do
          for alg in merge_sort_keys merge_sort_pairs; do run "wait $bin $env" "$lib/$bin" $(ms $alg $env $seed); done
        done
      done
      for bin in $(printf 'sm_90/thrust%s ' ${BUILDS:-"" -wait-first -nopdl}); do
        run "wait $bin stress" "$lib/$bin" $(ms thrust_sort_custom stress $seed)
      done
    done ;;
  thrust)
    for bin in sm_90/thrust sm_90/thrust-nopdl; do
      for env in back-to-back burst stress; do
        for seed in 1 2 3 4 5; do run "thrust $bin $env" "$lib/$bin" $(ms thrust_sort_custom $env $seed); done
      done
    done
    for knob in none spin; do
      for seed in 1 2 3; do
        GRIDCHECK_LIB_LOAD=$knob run "thrust load=$knob burst" "$lib/sm_90/thrust" $(ms thrust_sort_custom burst $seed)
      done
    done
    for seed in 1 2 3; do
      GRIDCHECK_LIB_SYNC=1 run "thrust sync burst" "$lib/sm_90/thrust" $(ms thrust_sort_custom burst $seed)
    done ;;
  histogram)
    # CCCL 13.2's histogram as compute_80 code (its -sass80 build: this
    # driver cannot JIT 13.2's PTX; one PDL edge, init kernel to sweep
    # kernel, and no wait in either) against PDL off, and 13.3's, which
    # launches it without PDL; then what beside it matters (the load's
    # kinds) and which call fails (one call a batch). Seeds SEED0..SEEDS.
    for seed in $(seq "${SEED0:-1}" "${SEEDS:-5}"); do
      for bin in 13.2/compute_80/histogram-sass80 13.2/compute_80/histogram-sass80-nopdl \
                 13.3/compute_80/histogram-sass80 13.2/sm_90/histogram; do
        for env in burst stress; do
          for alg in histogram_even histogram_range; do
            run "histogram $bin $env" "target/library/$bin" $(ms $alg $env $seed)
          done
        done
      done
    done
    for seed in 1 2 3; do
      for knob in none spin; do
        GRIDCHECK_LIB_LOAD=$knob run "histogram load=$knob burst" target/library/13.2/compute_80/histogram-sass80 $(ms histogram_even burst $seed)
      done
      GRIDCHECK_LIB_SYNC=1 run "histogram sync burst" target/library/13.2/compute_80/histogram-sass80 $(ms histogram_even burst $seed)
    done ;;
  timing)
    # Where a run's time goes: the same runs with the modules loaded
    # eagerly (as the tier) and lazily, small and large, quiet and loaded,
    # and a bad command line (the process alone, no CUDA call).
    for case in "13.3/sm_90/thrust thrust_sort_custom" "13.3/sm_90/merge_sort merge_sort_keys" \
                "13.3/sm_90/radix_sort radix_sort_onesweep_pairs" "13.0/sm_90/merge_sort merge_sort_pairs"; do
      set -- $case
      run "timing process $1" "target/library/$1" --algorithm none --size 1 --reps 1 --env quiet --seed 1
      for mode in EAGER LAZY; do
        for size_env in "1000 back-to-back" "1000000 back-to-back" "1000000 burst"; do
          set -- $case $size_env
          CUDA_MODULE_LOADING=$mode run "timing $mode $1 n$3 $4" "target/library/$1" --algorithm "$2" --size "$3" --reps 20 --env "$4" --seed 1
        done
      done
    done ;;
  producer)
    # A user's kernel writes the keys, CCCL 13.3's radix sort sorts them
    # next (producer.cu; built here for sm_90 with 13.3's nvcc, as
    # $PRODUCER_DIR/producer-13.3-pdl and, -DCCCL_DISABLE_PDL,
    # producer-13.3-nopdl): the producer triggering early or not (TRIGGERS;
    # 2: early, then 200 us before it writes), with and without the burst
    # on the keys' lines, seeds SEED0..SEEDS.
    for seed in $(seq "${SEED0:-1}" "${SEEDS:-3}"); do
      for build in pdl nopdl; do
        for trigger in ${TRIGGERS:-1 0}; do
          for burst in 0 1; do
            exe=${PRODUCER_DIR:-target/producer}/producer-13.3-$build
            t0=$(date +%s%N)
            line=$(timeout 90 "$exe" 1000000 20 $trigger $burst $seed 2>>"$out/stderr.log"); rc=$?
            ms=$(( ($(date +%s%N) - t0) / 1000000 ))
            line=$(printf '%s\n' "$line" | grep '^{' | tail -n 1)
            [ -n "$line" ] || line='{"error":"no line"}'
            printf '%s\n' "${line%\}},\"build\":\"$build\",\"rc\":$rc,\"wall_ms\":$ms}" >>"$out/runs.jsonl"
            echo "producer $build trigger=$trigger burst=$burst seed=$seed rc=$rc $line"
          done
        done
      done
    done ;;
  jitcache)
    # The driver's JIT output of the compute_80 and compute_90 PTX, kept in
    # a fresh cache folder each (disassembled where nvdisasm is).
    for bin in merge_sort merge_sort-ptx90; do
      rm -rf "$out/jit-$bin"; mkdir -p "$out/jit-$bin"
      CUDA_CACHE_PATH=$PWD/$out/jit-$bin run "jitcache $bin" "$lib/compute_80/$bin" $(ms merge_sort_keys back-to-back 1)
    done ;;
  *) echo "unknown part $part" >&2; exit 2 ;;
  esac
done
echo "done: $(wc -l <"$out/runs.jsonl") runs"
