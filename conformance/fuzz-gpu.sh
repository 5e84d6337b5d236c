#!/usr/bin/env bash
# Random programs on the GPU machine (no Rust): the batches come from `cargo xtask fuzz gpu`
# (default .gpu-bundle/fuzz), the harness from `cargo xtask gpu-bundle`. `conformance campaign`
# compiles each batch once, runs each in one worker process and writes campaign.jsonl,
# findings.jsonl, findings/*.yaml and summary.txt into $OUT (conformance/README.md, "Random programs").
set -uo pipefail; cd "$(dirname "$0")/.."
[ -s .gpu-bundle/commit ] && export GRIDCHECK_COMMIT=$(cat .gpu-bundle/commit)
dir=${1:-.gpu-bundle/fuzz}; shift || true
exec ./.gpu-bundle/conformance campaign "$dir" --root . --out "${OUT:-target/gridcheck/campaign}" "$@"
