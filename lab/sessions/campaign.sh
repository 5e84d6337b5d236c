#!/usr/bin/env bash
# Random programs at scale on one GPU (carry .gpu-bundle with the batches of
# `cargo xtask fuzz gpu` in .gpu-bundle/fuzz, or in DIR): a smoke run of the
# first batch, then the whole campaign; each under `timeout`. Results into
# $OUT/smoke and $OUT/campaign (conformance/README.md, "Random programs").
#   bash lab/sessions/campaign.sh [DIR] [BUDGET_S]
set -uo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-.gpu-bundle/fuzz}
budget=${2:-280}
out=${OUT:-target/gridcheck}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvcc --version | tail -n 1
smoke=$(mktemp -d)
mkdir -p "$smoke/batches" && cp -r "$dir/batches/b0000" "$smoke/batches/"
echo "== smoke: the first batch"
OUT=$out/smoke timeout 100 bash conformance/fuzz-gpu.sh "$smoke" --budget 60 --shrink 10
echo "exit $?"; cat "$out/smoke/summary.txt" 2>/dev/null | head -n 20
echo "== campaign: $dir"
OUT=$out/campaign timeout $((budget + 190)) bash conformance/fuzz-gpu.sh "$dir" --budget "$budget" --shrink 45
echo "exit $?"; cat "$out/campaign/summary.txt" 2>/dev/null | head -n 40
