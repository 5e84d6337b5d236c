#!/usr/bin/env bash
# Mutation testing on a GPU machine without Rust: the mutants' kernels come
# from `cargo xtask gpu-bundle` (.gpu-bundle/mutants/generated), the harness
# too (carry .gpu-bundle).
#  1. compiles each mutant's kernel here with nvcc's flags as `cargo xtask
#     build` gives them (compile-kernels.sh), in parallel, each nvcc under a
#     time limit (CDP1 mutants do not build for sm_90 and are reported not run);
#  2. runs `gridcheck run --mutants`: both oracles judge each candidate, each
#     mutant runs on the GPU until an outcome kills it or its budget is spent,
#     each in its worker process under the harness's timeouts;
#  3. prints the mutation score from the records (`gridcheck report
#     mutants`; also at the end of mutants.log).
# Extra arguments go to the harness (e.g. `--tune conformance/tuning/search.toml`,
# `--mutant-budget 1`). Results go to $OUT (default target/gridcheck):
# $RESULTS (default mutants.jsonl) and $LOG (default mutants.log).
set -uo pipefail
cd "$(dirname "$0")/.."
# The records name the commit the bundle was built from.
[ -s .gpu-bundle/commit ] && export GRIDCHECK_COMMIT=$(cat .gpu-bundle/commit)
dir=.gpu-bundle/mutants
out=${OUT:-target/gridcheck}
results=${RESULTS:-mutants.jsonl}
log=${LOG:-mutants.log}
mkdir -p "$out" "$dir/obj" "$dir/kernels/sm_90"
if [ ! -d "$dir/generated" ] || [ ! -x .gpu-bundle/gridcheck ]; then
  echo "need $dir/generated and .gpu-bundle/gridcheck (cargo xtask gpu-bundle)" >&2
  exit 2
fi
bash conformance/compile-kernels.sh "$dir"
echo "== mutants"
start=$(date +%s)
./.gpu-bundle/gridcheck run --root . --cubins "$dir/kernels" --mutants \
  --mutant-results "$out/$results" -q "$@" >"$out/$log" 2>&1
rc=$?
echo "harness exit code $rc in $(( $(date +%s) - start )) s"
./.gpu-bundle/gridcheck report mutants "$out/$results" --format text
exit "$rc"
