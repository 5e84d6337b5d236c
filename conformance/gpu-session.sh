#!/usr/bin/env bash
# A whole GPU session in one command, on a GPU machine without Rust, from a
# bundle made by `cargo xtask gpu-bundle` (carry .gpu-bundle):
#  1. the conformance run, every tier (gpu-run.sh; arguments go to the
#     harness, e.g. --model-timeout 120 --timeout 30);
#  2. the fault fixtures and a killed-then-resumed run (fault-check.sh);
#  3. litmus instance rates, every litmus test built for the device, with and
#     without incantations (litmus_smoke, 65 536 instances x 4 launches),
#     summarised for CDP and PDL tests.
# Everything lands in $OUT (default target/gridcheck). Exits non-zero when a
# step fails. The benchmarks have their own bundle: conformance/bench/run.sh.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-target/gridcheck}
mkdir -p "$out"
export OUT=$out
rc=0

echo "== conformance"
bash conformance/gpu-run.sh -q "$@" >/dev/null 2>&1 || rc=1
grep -E "tier:|harness exit" "$out/conformance.log"

echo "== fault check"
bash conformance/fault-check.sh >"$out/fault-check.txt" 2>&1 || rc=1
grep -E "^(ok|FAILED|fixture run|resumed|killed)" "$out/fault-check.txt"

echo "== litmus rates"
# One process a test, each under its own time limit (GC_RATE_TIMEOUT, default
# 120 s): a test that runs long or hangs loses only its own rates, and the
# log says which (`rc=124`). GC_ONLY selects by substring, so a test whose
# name holds another's may run twice; the rate table keeps every line.
: >"$out/rates-raw.txt"
. conformance/bundle-kernels.sh   # GC_ARCH: the GPU's architecture
for cubin in .gpu-bundle/kernels/"$GC_ARCH"/*.cubin; do
  name=$(basename "$cubin" .cubin)
  grep -q "name: $name\$" spec/*/*.yaml 2>/dev/null || continue
  GC_ONLY=$name timeout -k 10 "${GC_RATE_TIMEOUT:-120}" \
    ./.gpu-bundle/litmus_smoke spec .gpu-bundle/kernels/"$GC_ARCH" 65536 4 >>"$out/rates-raw.txt" 2>&1
  st=$?
  if [ "$st" -ne 0 ]; then
    echo "== $name: litmus_smoke rc=$st$([ "$st" -eq 124 ] && echo " (time limit)")" | tee -a "$out/rates-raw.txt"
    rc=1
  fi
done
grep '^RATE' "$out/rates-raw.txt" | cut -f2- >"$out/rates.tsv"
# Columns of rates.tsv: test, mode, instances, whole run (s), instances/s,
# condition hits, hits/s, launches only (s), instances/s over the launches.
for mode in plain incantations; do
  for family in cdp pdl; do
    awk -F'\t' -v m="$mode" -v f="$family" '
      $2 == m && ((f == "pdl") == ($1 ~ /^pdl-/)) { print $9, $5, $1 }' "$out/rates.tsv" |
      sort -n | awk -v m="$mode" -v f="$family" '
        { r[NR] = $1; w[NR] = $2; n[NR] = $3 }
        END {
          if (NR == 0) { print f, m, "no tests"; exit }
          printf "%s %-12s %2d tests: launches-only instances/s median %.0f (min %.0f %s, max %.0f %s); that test over its whole run %.0f/s\n",
            f, m, NR, r[int((NR + 1) / 2)], r[1], n[1], r[NR], n[NR], w[int((NR + 1) / 2)]
        }'
  done
done | tee "$out/rates-summary.txt"
# At most 8 files come back from a GPU machine: the fault check's and the
# rate run's raw files travel in one archive.
tar -C "$out" -czf "$out/extras.tar.gz" --remove-files \
  fixtures.jsonl fixtures.log resume.jsonl resume.log rates-raw.txt 2>/dev/null
exit "$rc"
