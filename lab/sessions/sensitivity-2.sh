#!/usr/bin/env bash
# The GPU sessions of sensitivity that travels (escalation, trial order,
# each GPU's environment, the held-out share, the spread), from a bundle
# made by `cargo xtask gpu-bundle` (carry .gpu-bundle); everything into $OUT,
# every step under `timeout`, each step's records packed at the end:
#   search      every mutant under each point of conformance/tuning/search.toml
#               (at most SEARCH_S seconds, 420 by default)
#               (the held-out share reported apart): mutants-tune.jsonl, .log
#   suite NAME [ARGS]  the GPU tier at --timeout 30 into $OUT/NAME (ARGS: e.g.
#               --shuffle 2 for another trial order)
#   mutants     every mutant under the GPU's environment: mutants.jsonl, .log
#   rates       the late-write environment's stale reads at 48 launches ten
#               times and at 480 once (is the rate a launch's or a run's?)
#   points FILE [FILTER]  the mutants (whose names have FILTER) under each
#               point of FILE: $POINTS_NAME.jsonl, .log (default points)
#   choose      the GPU's tuned file from the search (`conformance report
#               tuning`), into $OUT and into conformance/tuning/ (the later
#               steps of the same call run under it)
#   watch       the fixture litmus hang no fact covers, in the staying worker
#               and with --fresh-context, and the known hang alone: each
#               ended by the watch, with its wall time (watch.txt)
#   alone       the new tests alone: the asynchronous proxy and warp roles
#               at 256 launches, the real-world shapes' host tests three
#               times each (alone/)
#   campaign STEP [ARGS]  lab/sessions/campaign.sh STEP [ARGS], its results
#               folder packed as campaign-STEP-<folder>.tar.xz
# Several steps in one call: `sensitivity-2.sh suite a -- suite b --shuffle 2`.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-target/sensitivity}
mkdir -p "$out"
h=./.gpu-bundle/conformance
. conformance/json.sh
step() {
  local what=$1 i; shift
  local start=$(date +%s)
  case "$what" in
  search)
    RESULTS=mutants-tune.jsonl LOG=mutants-tune.log OUT=$out timeout -k 10 "${SEARCH_S:-420}" \
      bash conformance/mutants-gpu.sh --tune conformance/tuning/search.toml --tuning none \
      --timeout 120 --model-timeout 120 | tail -n 40 ;;
  suite)
    local name=$1; shift
    OUT=$out/$name timeout -k 10 150 bash conformance/gpu-run.sh -q --tier gpu --timeout 30 \
      --model-timeout 120 "$@" >/dev/null 2>&1
    $h report summary "$out/$name/results.jsonl" --format text | tail -n 12
    # Where the time went (the harness's device timeline, timeline.rs).
    grep -A 5 '^device [0-9]*: held' "$out/$name/conformance.log"
    cat "$out/$name/run.json"; echo
    # One file a step comes back (the device tool returns at most eight).
    tar cJf "$out/$name.tar.xz" -C "$out" "$name" && rm -r "${out:?}/$name" ;;
  mutants)
    OUT=$out timeout -k 10 300 bash conformance/mutants-gpu.sh --timeout 60 --model-timeout 120 \
      | tail -n 30 ;;
  rates)
    . conformance/bundle-kernels.sh
    for i in 1 2 3 4 5 6 7 8 9 10; do
      timeout -k 5 60 $h --root . --cubins .gpu-bundle/kernels --tier gpu --tuning none \
        --instances 64 --launches 48 --max-delay 0 --stress-words 0 --line-burst 8192 \
        --no-escalate --timeout 30 --results "$out/rates.jsonl" -q may-be-stale >/dev/null 2>&1
    done
    timeout -k 5 60 $h --root . --cubins .gpu-bundle/kernels --tier gpu --tuning none \
      --instances 64 --launches 480 --max-delay 0 --stress-words 0 --line-burst 8192 \
      --no-escalate --timeout 30 --results "$out/rates-480.jsonl" -q may-be-stale >/dev/null 2>&1
    # Stale reads a trial (one line a run of each test).
    python3 - "$out/rates.jsonl" "$out/rates-480.jsonl" <<'PY'
import json, sys
for path in sys.argv[1:]:
    seen = {}
    for line in open(path):
        r = json.loads(line)
        hw = r.get("hardware") or {}
        key = (r["run_id"], r["test"])
        if "stale" in r["test"] and key not in seen:
            seen[key] = (hw.get("positive"), hw.get("instances"))
    by_test = {}
    for (run, test), v in seen.items():
        by_test.setdefault(test, []).append(v)
    for test, v in sorted(by_test.items()):
        print(path.rsplit("/", 1)[-1], test, " ".join(f"{p}/{n}" for p, n in v))
PY
    ;;
  points)
    # Every mutant whose name has FILTER under each point of FILE (a search
    # file), at most POINTS_S seconds: points.jsonl, points.log.
    local file=$1 filter=${2:-}
    local name=${POINTS_NAME:-points}
    RESULTS=$name.jsonl LOG=$name.log OUT=$out timeout -k 10 "${POINTS_S:-200}" \
      bash conformance/mutants-gpu.sh --tune "$file" --tuning none --timeout 60 \
      --model-timeout 120 ${filter:+"$filter"} | tail -n 40 ;;
  choose)
    # The GPU's slug as the harness names tuned files (gridcheck_report::slug).
    local slug
    slug=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1 |
      python3 -c 'import re, sys; print(re.sub("[^a-z0-9]+", "-", sys.stdin.read().strip().lower()).strip("-"))')
    $h report tuning "$out/mutants-tune.jsonl" --search conformance/tuning/search.toml \
      --base conformance/tuning/sm_90.toml >"$out/$slug.toml" &&
      cp "$out/$slug.toml" conformance/tuning/
    cat "$out/$slug.toml" ;;
  watch)
    . conformance/bundle-kernels.sh
    local fix=(--root . --spec conformance/fixtures/spec --cubins .gpu-bundle/fixtures --tier gpu --timeout 60)
    for mode in staying fresh; do
      local extra=(); [ $mode = fresh ] && extra=(--fresh-context)
      local t0=$(date +%s%N)
      timeout -k 10 120 $h "${fix[@]}" ${extra[@]+"${extra[@]}"} --results "$out/watch-$mode.jsonl" \
        fault-litmus-hang >/dev/null 2>&1
      echo "$mode: $(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a "$out/watch.txt"
      $h report summary "$out/watch-$mode.jsonl" --every-trial --format text | tee -a "$out/watch.txt"
    done
    local t0=$(date +%s%N)
    OUT=$out/known timeout -k 10 120 bash conformance/gpu-run.sh --tier gpu --timeout 30 \
      c2-trigger-record-wait-launch >/dev/null 2>&1
    echo "known hang alone: $(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a "$out/watch.txt"
    $h report summary "$out/known/results.jsonl" --every-trial --format text | tee -a "$out/watch.txt"
    tar cJf "$out/watch.tar.xz" -C "$out" known watch-staying.jsonl watch-fresh.jsonl watch.txt &&
      rm -r "${out:?}/known" "$out"/watch-*.jsonl ;;
  alone)
    for rules in pdl.async. pdl.roles.; do
      OUT=$out/alone/$rules timeout -k 10 200 bash conformance/gpu-run.sh -q --tier gpu \
        --launches 256 --timeout 60 "$rules" >/dev/null 2>&1
      $h report summary "$out/alone/$rules/results.jsonl" --format text | tail -n 8
    done
    for filter in guarded-wait pdl.runtime-api; do
      for i in 1 2 3; do
        OUT=$out/alone/$filter-$i timeout -k 10 150 bash conformance/gpu-run.sh --tier gpu \
          --timeout 60 "$filter" >/dev/null 2>&1
        $h report summary "$out/alone/$filter-$i/results.jsonl" --every-trial --format text \
          | grep -v "^ *pass" | tail -n 12
      done
    done
    tar cJf "$out/alone.tar.xz" -C "$out" alone && rm -r "${out:?}/alone" ;;
  campaign)
    # lab/sessions/campaign.sh STEP [ARGS], its results folder (the one its
    # last JSON line names) packed as one file.
    local log res
    log=$(mktemp)
    OUT= bash lab/sessions/campaign.sh "$@" | tee "$log" | tail -n 25
    res=$(tail -n 1 "$log" | jsonl_values results -)
    rm -f "$log"
    [ -n "$res" ] && tar cJf "$out/campaign-$1-$(basename "$res").tar.xz" "$res" ;;
  *) echo "unknown step $what" >&2; return 2 ;;
  esac
  echo "== $what: $(( $(date +%s) - start )) s"
}
args=("$@")
i=0   # the steps' own loops keep their counters local (step's `local i`)
while [ $i -lt ${#args[@]} ]; do
  cur=()
  while [ $i -lt ${#args[@]} ] && [ "${args[$i]}" != -- ]; do cur+=("${args[$i]}"); i=$((i+1)); done
  i=$((i+1))
  [ ${#cur[@]} -gt 0 ] && step "${cur[@]}"
done
# What is left unpacked comes back as one more file.
tar cJf "$out/session.tar.xz" -C "$out" --exclude session.tar.xz --exclude '*.tar.xz' . 2>/dev/null
