#!/usr/bin/env bash
# Random programs on the GPU machine (no Rust): the batches come from `cargo xtask fuzz gpu`
# (default .gpu-bundle/fuzz), gridcheck from `cargo xtask gpu-bundle`.
# `gridcheck campaign DIR` compiles each batch once, runs its programs in worker processes,
# takes every finding to its end (alone, with its context, closed) and writes campaign.jsonl,
# findings.jsonl, findings/, summary.json and summary.txt into $OUT (conformance/README.md,
# "Random programs at scale"). lab/sessions/campaign.toml runs it in parts of bounded time.
set -uo pipefail; cd "$(dirname "$0")/.."
[ -s .gpu-bundle/commit ] && export GRIDCHECK_COMMIT=$(cat .gpu-bundle/commit)
dir=${1:-.gpu-bundle/fuzz}; shift || true
exec ./.gpu-bundle/gridcheck campaign "$dir" --root . --out "${OUT:-target/gridcheck/campaign}" "$@"
