#!/usr/bin/env bash
# Random programs on the GPU, on a GPU machine without Rust: the programs and
# their kernels come from `cargo xtask fuzz gpu` (default .gpu-bundle/fuzz),
# the harness from `cargo xtask gpu-bundle` (carry .gpu-bundle).
#  1. compiles each generated kernel here, as `cargo xtask build` does
#     (nvcc -arch=sm_90 -rdc=true -c, then -dlink -cubin -lcudadevrt), in
#     parallel, each nvcc under a time limit;
#  2. runs the harness's model tier (both oracles) and GPU tier on them, each
#     trial in its worker process with the harness's timeouts
#     (--timeout/--model-timeout, passed through);
#  3. lists the findings: every GPU trial that observed a state outside the
#     model's set (`unmodeled`), or a forbidden condition (`fail`), with the
#     histogram, and each one's reproduce command.
# Results go to $OUT (default target/gridcheck): fuzz.jsonl, fuzz.log,
# fuzz-findings.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
dir=${1:-.gpu-bundle/fuzz}
shift || true
out=${OUT:-target/gridcheck}
mkdir -p "$out" "$dir/obj" "$dir/kernels/sm_90"
if [ ! -d "$dir/generated" ] || [ ! -x .gpu-bundle/conformance ]; then
  echo "need $dir/generated (cargo xtask fuzz gpu) and .gpu-bundle/conformance (cargo xtask gpu-bundle)" >&2
  exit 2
fi
bash conformance/compile-kernels.sh "$dir"

echo "== harness: model and GPU tiers"
start=$(date +%s)
./.gpu-bundle/conformance --root . --spec "$dir/spec" --cubins "$dir/kernels" \
  --tier model --tier gpu --results "$out/fuzz.jsonl" -q "$@" >"$out/fuzz.log" 2>&1
rc=$?
echo "harness exit code $rc in $(( $(date +%s) - start )) s"
grep -E "tier:" "$out/fuzz.log"

echo "== findings (GPU states outside the model's set, forbidden conditions observed)"
# The harness's record of each GPU trial says `unmodeled` for states the model
# cannot reach; a fail is a forbidden condition observed.
grep -E '"tier":"gpu"' "$out/fuzz.jsonl" |
  grep -E '"status":"(fail|crash|timeout|oracle-conflict)"|unmodeled' >"$out/fuzz-findings.txt" || true
n=$(wc -l <"$out/fuzz-findings.txt")
echo "$n finding(s) in $out/fuzz-findings.txt"
awk '/^(fail|unmodeled|quality-warning|crash|timeout|oracle-conflict) /' "$out/fuzz.log" | head -n 40
[ "$n" -eq 0 ] && exit 0 || exit 1
