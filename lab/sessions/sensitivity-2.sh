#!/usr/bin/env bash
# The GPU sessions of sensitivity that travels (escalation, trial order,
# each GPU's environment, the held-out share, the spread), from a bundle
# made by `cargo xtask gpu-bundle` (carry .gpu-bundle); everything into $OUT,
# every step under `timeout`, each step's records packed at the end:
#   search      every mutant under each point of conformance/tuning/search.toml
#               (the held-out share reported apart): mutants-tune.jsonl, .log
#   suite NAME [ARGS]  the GPU tier at --timeout 30 into $OUT/NAME (ARGS: e.g.
#               --shuffle 2 for another trial order)
#   mutants     every mutant under the GPU's environment: mutants.jsonl, .log
#   rates       the late-write environment's stale reads at 48 launches ten
#               times and at 480 once (is the rate a launch's or a run's?)
# Several steps in one call: `sensitivity-2.sh suite a -- suite b --shuffle 2`.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-target/sensitivity}
mkdir -p "$out"
h=./.gpu-bundle/conformance
step() {
  local what=$1; shift
  local start=$(date +%s)
  case "$what" in
  search)
    RESULTS=mutants-tune.jsonl LOG=mutants-tune.log OUT=$out timeout -k 10 420 \
      bash conformance/mutants-gpu.sh --tune conformance/tuning/search.toml --tuning none \
      --timeout 120 --model-timeout 120 | tail -n 40 ;;
  suite)
    local name=$1; shift
    OUT=$out/$name timeout -k 10 150 bash conformance/gpu-run.sh -q --tier gpu --timeout 30 \
      --model-timeout 120 "$@" >/dev/null 2>&1
    $h report summary "$out/$name/results.jsonl" --format text | tail -n 12
    cat "$out/$name/run.json"; echo ;;
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
  *) echo "unknown step $what" >&2; return 2 ;;
  esac
  echo "== $what: $(( $(date +%s) - start )) s"
}
args=("$@")
i=0
while [ $i -lt ${#args[@]} ]; do
  cur=()
  while [ $i -lt ${#args[@]} ] && [ "${args[$i]}" != -- ]; do cur+=("${args[$i]}"); i=$((i+1)); done
  i=$((i+1))
  [ ${#cur[@]} -gt 0 ] && step "${cur[@]}"
done
# Everything but the packed folders comes back as one file.
tar cJf "$out/session.tar.xz" -C "$out" --exclude session.tar.xz . 2>/dev/null
