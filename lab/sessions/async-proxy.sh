#!/usr/bin/env bash
# One GPU session for the asynchronous proxy and warp roles
# (spec/pdl/async-proxy.yaml, spec/pdl/warp-roles.yaml), on an H100 or H200,
# from a bundle made by `cargo xtask gpu-bundle` (its kernels and the
# mutants' CUDA; carry .gpu-bundle). Every step runs under `timeout`;
# everything goes to $OUT and comes back packed in $OUT/runs.tar.xz.
#  1. the whole GPU tier (run/, publish with `cargo xtask record`): the new
#     tests among the others, with the suite's environment;
#  2. the new tests again with eight times the launches, rules `pdl.async`
#     and `pdl.roles` (focus-async/, focus-roles/): an allowed outcome that
#     did not show in step 1 gets a second chance, a forbidden one eight
#     times the instances to show;
#  3. their mutants (mutants-async.*, mutants-roles.*): a forbidden test
#     whose mutant never shows its weak outcome proves nothing on this GPU.
# What each result means is in the decisions of the rules; in short: a
# `fail` of a `*-sees*` or `*-waits*` test (a forbidden outcome observed)
# refutes the decision of its rule, a quality-warning of a `*-may-*` test
# is an allowed outcome not provoked.
set -u
cd "$(dirname "$0")/../.."
root=${OUT:?set OUT}
start=$(date +%s)
nvidia-smi > "$root/nvidia-smi.txt" 2>&1
OUT=$root/run timeout -k 10 300 bash conformance/gpu-run.sh -q --tier gpu --model-timeout 100 --timeout 30 \
  > "$root/run.log" 2>&1
echo "suite: exit $?, $(( $(date +%s) - start )) s" | tee -a "$root/session.txt"
for rules in async roles; do
  OUT=$root/focus-$rules timeout -k 10 240 bash conformance/gpu-run.sh --tier gpu --launches 256 \
    --timeout 60 "pdl.$rules." > "$root/focus-$rules.log" 2>&1
  echo "focus pdl.$rules: exit $?" | tee -a "$root/session.txt"
  grep -E "^(pass|fail|quality-warning|unmodeled|timeout|crash|xfail|known) " \
    "$root/focus-$rules/conformance.log" | cut -c1-160 | tee -a "$root/session.txt"
done
for tests in pdl-async pdl-roles; do
  RESULTS=mutants-$tests.jsonl LOG=mutants-$tests.log OUT=$root timeout -k 10 300 \
    bash conformance/mutants-gpu.sh --timeout 60 --model-timeout 100 "$tests" > "$root/mutants-$tests.out" 2>&1
  echo "mutants $tests: exit $?" | tee -a "$root/session.txt"
  tail -5 "$root/mutants-$tests.out" | tee -a "$root/session.txt"
done
grep -E "^(fail|unmodeled|timeout|crash|quality-warning) .*(pdl-async|pdl-roles)" "$root/run/conformance.log" \
  | cut -c1-160 | tee -a "$root/session.txt"
grep "harness exit code" "$root/run/conformance.log" | tee -a "$root/session.txt"
echo "session: $(( $(date +%s) - start )) s" | tee -a "$root/session.txt"
tar -C "$root" -cJf "$root/runs.tar.xz" run focus-async focus-roles && rm -rf "$root/run" "$root"/focus-*/
