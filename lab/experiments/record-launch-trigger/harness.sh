#!/usr/bin/env bash
# The campaign's six hangs shown again alone (their original programs, one
# batch each, in .gpu-bundle/rlt from records/<gpu>/campaigns/...), run by the
# campaign under four environments: built-in, no stress warps, no delays,
# neither; and at 64 instances. Each run under `timeout`; $OUT/<name>/.
set -uo pipefail
cd "$(dirname "$0")/../../.."
out=${OUT:-target/gridcheck}
mkdir -p "$out"
run() { # name args...
  local name=$1; shift
  echo "== $name"
  OUT=$out/$name timeout 120 bash conformance/fuzz-gpu.sh .gpu-bundle/rlt --budget 60 --shrink 0 "$@" \
    >"$out/$name.txt" 2>&1
  grep -E "^  (pass|hang|launch-error|unmodeled|violation) " "$out/$name/summary.txt"
  grep -E "^budget" "$out/$name/summary.txt"
}
run builtin
run nostress --stress-words 0
run nodelay --max-delay 0
run neither --stress-words 0 --max-delay 0
run i64 --instances 64
