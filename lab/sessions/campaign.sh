#!/usr/bin/env bash
# The random-program campaign on one GPU, in parts of bounded time: every step
# runs under `timeout`, keeps its state in its results folder RES (in the
# checkout, so that a warm machine, or a fresh one given RES back, resumes
# it), copies RES to $OUT when it ends, and prints one JSON line last
# ("done": false: run the same step again). conformance/README.md, "Random
# programs at scale", says what each phase does; lab/campaigns/README.md how
# the results are kept.
#
# Here (Rust), once before `cargo xtask gpu-bundle`:
#   bash lab/sessions/campaign.sh prepare [COUNT] [SEED]
#     .gpu-bundle/fuzz (COUNT random programs, default 10000, seed 2027),
#     .gpu-bundle/enum3 (every program of at most 3 operations), and
#     .gpu-bundle/old/ (the H100 campaigns of 2026-11-26: their programs drawn
#     again, only the batches of their findings kept, with their records)
#   bash lab/sessions/campaign.sh plain-toolchains RES...   (after `leads`)
#     each shrunk test's plain program built by every installed toolchain
#     (.toolchains/, `cargo xtask toolchain install`) into .gpu-bundle/plain/
# There (nvcc, no Rust; carry .gpu-bundle), each one call of at most ~9 min:
#   bash lab/sessions/campaign.sh run [DIR] [OPTIONS]     the programs (DIR: .gpu-bundle/fuzz)
#   bash lab/sessions/campaign.sh leads [DIR] [OPTIONS]   every finding to its end
#   bash lab/sessions/campaign.sh old-leads random|enum   the 2026-11-26 H100 findings, the same path
#   bash lab/sessions/campaign.sh plain RES               each shrunk test as a plain program:
#                                                        instances swept, each call left out
#   bash lab/sessions/campaign.sh merge RES RES... [--into DIR]   the GPUs side by side
# Environment: RES (results folder; default records/<gpu>/campaigns/<date>/<DIR's
# name>),
# TUNING (a tuned file; default conformance/tuning/<gpu>.toml, else
# sm_90.toml; `none`: the built-in environment), PART_S (seconds a part may
# take, 520), LEAD_S (seconds a lead may take, 10). OPTIONS go to
# gridcheck campaign (`.gpu-bundle/gridcheck campaign --help`).
set -uo pipefail
cd "$(dirname "$0")/../.."
step=${1:-help}; shift || true
part_s=${PART_S:-520}
bin="./.gpu-bundle/gridcheck campaign"
[ -s .gpu-bundle/commit ] && export GRIDCHECK_COMMIT=$(cat .gpu-bundle/commit)

# The GPU's slug as the records name it: gridcheck says it (one home).
gpu_slug() { ./.gpu-bundle/gridcheck info slug; }

# The tuned environment's flag: TUNING, else the GPU's file, else sm_90's.
tuning_flag() {
  local t=${TUNING:-}
  if [ "$t" = none ]; then return; fi
  if [ -z "$t" ]; then
    t=conformance/tuning/$(gpu_slug).toml
    [ -f "$t" ] || t=conformance/tuning/sm_90.toml
  fi
  printf -- '--tuning\n%s\n' "$t"
}

# Copies the results folder to $OUT (what comes back from the GPU machine).
give_back() {
  [ -n "${OUT:-}" ] || return 0
  mkdir -p "$OUT/$(basename "$1")" && cp -r "$1/." "$OUT/$(basename "$1")/"
}

# The batches compiled by `prepare`, unpacked once where they travelled.
unpack_cubins() {
  if [ -f .gpu-bundle/cubins.tar.xz ] && [ ! -f .gpu-bundle/cubins.unpacked ]; then
    tar -xJf .gpu-bundle/cubins.tar.xz && touch .gpu-bundle/cubins.unpacked
  fi
}

# The campaign's records and the plain programs' lines are JSON: read as
# JSON (conformance/json.sh), never as text.
. conformance/json.sh

case "$step" in
prepare)
  count=${1:-10000}; seed=${2:-2027}
  set -e
  cargo xtask fuzz gpu --count "$count" --seed "$seed" --batch 200 --out .gpu-bundle/fuzz
  cargo xtask fuzz gpu --count 0 --enumerate 3 --batch 300 --out .gpu-bundle/enum3
  old=records/nvidia-h100-80gb-hbm3/campaigns/2026-11-26
  rm -rf .gpu-bundle/old && mkdir -p .gpu-bundle/old
  tar -xJf "$old/campaign-jsonl.tar.xz" -C .gpu-bundle/old
  for run in random-10000:"--count 10000 --seed 2026 --batch 200" \
             enumerated-3:"--count 0 --enumerate 3 --batch 300"; do
    name=${run%%:*}
    # The generator is deterministic: the same arguments draw the same programs.
    cargo xtask fuzz gpu ${run#*:} --out ".gpu-bundle/old/$name"
    mv ".gpu-bundle/old/$name.jsonl" ".gpu-bundle/old/$name/records.jsonl"
    keep=$(jsonl_values batch "$old/$name/findings.jsonl")
    for b in .gpu-bundle/old/"$name"/batches/*/; do
      case $'\n'"$keep"$'\n' in *$'\n'"$(basename "$b")"$'\n'*) ;; *) rm -rf "$b" ;; esac
    done
  done
  rm -f .gpu-bundle/old/*.jsonl
  # Compiled here where nvcc is found: a batch's cubin is kept by its key
  # (the source, header, architecture and nvcc's version), so the GPU
  # machine, with the same nvcc, compiles nothing again.
  if [ -n "${GRIDCHECK_NVCC:-}" ] || command -v nvcc >/dev/null; then
    cargo build --release -p gridcheck-cli --bin gridcheck
    for d in .gpu-bundle/fuzz .gpu-bundle/enum3 .gpu-bundle/old/*/; do
      ./target/release/gridcheck campaign run "$d" --root . --out "$(mktemp -d)" --dry-run
    done
    # A cubin is 30 times its size packed; the sources are written again
    # there (the same text, so the keys match).
    find .gpu-bundle/fuzz .gpu-bundle/enum3 .gpu-bundle/old \( -name batch.cubin -o -name batch.key \) \
      -print0 | tar --null -cJf .gpu-bundle/cubins.tar.xz -T -
    find .gpu-bundle/fuzz .gpu-bundle/enum3 .gpu-bundle/old \( -name batch.cubin -o -name batch.cu \) -delete
  fi
  du -sh .gpu-bundle/fuzz .gpu-bundle/enum3 .gpu-bundle/old
  echo '{"step": "prepare", "done": true}'
  ;;
plain-toolchains)
  for res in "$@"; do
    for cu in "$res"/findings/*.cu; do
      [ -f "$cu" ] || continue
      f=$(basename "$cu" .cu)
      for d in .toolchains/*/; do
        r=$(basename "$d")
        cu13=$(echo "$d"lib/python3*/site-packages/nvidia/cu13)
        mkdir -p ".gpu-bundle/plain/$(basename "$res")"
        timeout 300 "$cu13/bin/nvcc" -arch=sm_90 -rdc=true "$cu" -L"$cu13/lib" -lcudadevrt \
          -o ".gpu-bundle/plain/$(basename "$res")/$f-nvcc-$r" || echo "$f: nvcc $r failed"
      done
    done
  done
  echo '{"step": "plain-toolchains", "done": true}'
  ;;
run|leads)
  dir=${1:-.gpu-bundle/fuzz}; shift || true
  res=${RES:-records/$(gpu_slug)/campaigns/$(date -u +%F)/$(basename "$dir")}
  mkdir -p "$res"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  mapfile -t tun < <(tuning_flag)
  unpack_cubins
  if [ "$step" = run ]; then
    # The first part compiles (about 100 s for 10 000 programs on 16 cores).
    timeout "$part_s" $bin run "$dir" --root . --out "$res" --resume "${tun[@]}" \
      --budget $((part_s - 150)) "$@"
  else
    timeout "$part_s" $bin leads "$dir" --root . --out "$res" "${tun[@]}" \
      --leads-budget $((part_s - 60)) --lead-budget "${LEAD_S:-10}" "$@"
  fi
  rc=$?
  give_back "$res"
  left=$([ "$step" = run ] && jsonl_count detail "not reached" "$res/campaign.jsonl" \
    || jsonl_count ended open "$res/findings.jsonl")
  [ -s "$res/summary.json" ] && [ "$left" = 0 ] && done=true || done=false
  echo "{\"step\": \"$step\", \"results\": \"$res\", \"exit\": $rc, \"left\": ${left:-0}, \"done\": $done}"
  ;;
old-leads)
  which=${1:-random}; shift || true
  case "$which" in
  random) name=random-10000 dir=.gpu-bundle/old/random-10000 ;;
  enum) name=enumerated-3 dir=.gpu-bundle/old/enumerated-3 ;;
  *) echo "old-leads random|enum"; exit 2 ;;
  esac
  res=${RES:-records/nvidia-h100-80gb-hbm3/campaigns/2026-11-26/leads-$name}
  mkdir -p "$res"
  unpack_cubins
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  # The environment the old campaign ran under: the built-in one.
  timeout "$part_s" $bin leads "$dir" --root . --records "$dir/records.jsonl" --out "$res" \
    --leads-budget $((part_s - 90)) --lead-budget "${LEAD_S:-10}" "$@"
  rc=$?
  give_back "$res"
  left=$(jsonl_count ended open "$res/findings.jsonl")
  [ -s "$res/summary.json" ] && [ "$left" = 0 ] && done=true || done=false
  echo "{\"step\": \"old-leads\", \"results\": \"$res\", \"exit\": $rc, \"left\": ${left:-0}, \"done\": $done}"
  ;;
plain)
  res=${1:?the results folder}
  start=$(date +%s)
  mkdir -p "$res/plain" .gpu-bundle/plain
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  left=0
  for cu in "$res"/findings/*.cu; do
    [ -f "$cu" ] || continue
    f=$(basename "$cu" .cu)
    log=$res/plain/$f.jsonl
    jsonl_has done true "$log" && continue
    if [ $(($(date +%s) - start)) -gt $((part_s - 120)) ]; then left=$((left + 1)); continue; fi
    : >"$log"
    bins=(".gpu-bundle/plain/$f")
    timeout 120 nvcc -arch=sm_90 -rdc=true "$cu" -lcudadevrt -o "${bins[0]}" || {
      echo '{"error": "nvcc failed", "done": true}' >>"$log"; continue; }
    for b in .gpu-bundle/plain/"$(basename "$res")"/"$f"-nvcc-*; do [ -x "$b" ] && bins+=("$b"); done
    # One run: its exit code and the program's JSON lines.
    one() {
      local out rc
      out=$(PLAIN_WAIT_S=2 timeout 60 "$1" "$2" 20 "$3" 2>&1); rc=$?
      echo "{\"binary\": \"$(basename "$1")\", \"instances\": $2, \"drop\": $3, \"exit\": $rc, \"lines\": [$(echo "$out" | jsonl_objects)]}" >>"$log"
      # Shown: it hung (3, or killed at the timeout), or a call failed.
      case $rc in 3|124|137) return 0 ;; esac
      echo "$out" | jsonl_has count -
    }
    shown_at=
    for b in "${bins[@]}"; do
      for n in 1 8 32 64 512; do
        if one "$b" "$n" -1 && [ -z "$shown_at" ] && [ "$b" = "${bins[0]}" ]; then shown_at=$n; fi
      done
    done
    if [ -n "$shown_at" ]; then
      # Each call left out, at the fewest instances that showed it.
      # `list` prints one JSON array of the program's calls.
      for d in $("${bins[0]}" list | python3 -c '
import json, sys
for c in json.load(sys.stdin):
    if c.get("droppable") is True:
        print(c["call"])'); do
        one "${bins[0]}" "$shown_at" "$d" >/dev/null
      done
    fi
    echo "{\"finding\": \"$f\", \"shown_at_instances\": ${shown_at:-null}, \"done\": true}" >>"$log"
  done
  give_back "$res"
  [ "$left" = 0 ] && done=true || done=false
  for log in "$res"/plain/*.jsonl; do [ -f "$log" ] && tail -n 1 "$log"; done
  echo "{\"step\": \"plain\", \"results\": \"$res\", \"left\": $left, \"done\": $done}"
  ;;
merge)
  args=("$@")
  printf '%s\n' "${args[@]}" | grep -q -- --into || args+=(--into "lab/campaigns/merged")
  timeout 60 $bin merge "${args[@]}"
  rc=$?
  echo "{\"step\": \"merge\", \"exit\": $rc, \"done\": $([ $rc = 0 ] && echo true || echo false)}"
  ;;
*)
  sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  ;;
esac
