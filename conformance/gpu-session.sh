#!/usr/bin/env bash
# A whole GPU session in one command, on a GPU machine without Rust, from a
# bundle made by `cargo xtask gpu-bundle` (carry .gpu-bundle):
#  1. the conformance run, every tier (gpu-run.sh; arguments go to the
#     harness, e.g. --model-timeout 120 --timeout 30);
#  2. the fault fixtures and a killed-then-resumed run (fault-check.sh);
#  3. litmus instance rates, every litmus test built for the device, with and
#     without incantations (litmus_smoke, 65 536 instances x 4 launches),
#     summarised for CDP and PDL tests (rates.jsonl, rates-summary.json).
# What it prints comes from `gridcheck report` (the results, the rates)
# and the scripts' own run.json, never from parsing a log.
# Everything lands in $OUT (default target/gridcheck). Exits non-zero when a
# step fails. The benchmarks have their own bundle: conformance/bench/run.sh.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-target/gridcheck}
mkdir -p "$out"
export OUT=$out
rc=0

h=./.gpu-bundle/gridcheck
echo "== conformance"
bash conformance/gpu-run.sh -q "$@" >/dev/null 2>&1 || rc=1
cat "$out/run.json"
"$h" report summary "$out/results.jsonl" --format text

echo "== fault check"
bash conformance/fault-check.sh >"$out/fault-check.txt" 2>&1 || rc=1
cat "$out/fault-check.txt"

echo "== litmus rates"
# One process a test, each under its own time limit (GC_RATE_TIMEOUT, default
# 120 s): a test that runs long or hangs loses only its own rates, and the
# log says which (`rc=124`). litmus_smoke runs the spec's test of that name
# (GC_TEST; a cubin of no litmus or runtime test runs nothing) and appends
# each run's rate to rates.jsonl (GC_RATES).
: >"$out/rates-raw.txt"
: >"$out/rates.jsonl"
. conformance/bundle-kernels.sh   # GC_ARCH: the GPU's architecture
for cubin in .gpu-bundle/kernels/"$GC_ARCH"/*.cubin; do
  name=$(basename "$cubin" .cubin)
  GC_TEST=$name GC_RATES=$out/rates.jsonl timeout -k 10 "${GC_RATE_TIMEOUT:-120}" \
    ./.gpu-bundle/litmus_smoke spec .gpu-bundle/kernels/"$GC_ARCH" 65536 4 >>"$out/rates-raw.txt" 2>&1
  st=$?
  if [ "$st" -ne 0 ]; then
    echo "== $name: litmus_smoke rc=$st$([ "$st" -eq 124 ] && echo " (time limit)")" | tee -a "$out/rates-raw.txt"
    rc=1
  fi
done
# Per family (CDP, PDL) and mode: the median test's launches-only
# instances/s, the slowest and fastest, the median test over its whole run.
"$h" report rates "$out/rates.jsonl" --format json >"$out/rates-summary.json"
"$h" report rates "$out/rates.jsonl" --format text
# At most 8 files come back from a GPU machine: the fault check's and the
# rate run's raw files travel in one archive.
tar -C "$out" -czf "$out/extras.tar.gz" --remove-files \
  fixtures.jsonl fixtures-trials.jsonl fixtures.log resume.jsonl resume.log rates-raw.txt 2>/dev/null
exit "$rc"
