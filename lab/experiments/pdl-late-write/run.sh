#!/usr/bin/env bash
# Build pdl_late_write.cu with the nvcc on PATH and run it on GPU 0 under
# `timeout 120`. Arguments go to the program: [launches-per-config]
# [seconds-per-config] [variant-name-substrings, comma-separated] (defaults
# 10000, 0.6, all). MODES, when set, runs the program once per word, each
# word a comma-separated list of the program's mode variables
# (`PDL_SYNC_EACH=1,PDL_GATE=1`; `-` for none), each run under its own
# `timeout 120`.
# When OUT is set, everything (machine, compiler, build and program output)
# also goes to $OUT/pdl-late-write.log (or a timestamped name beside it when
# that file exists already). If the cp.async.bulk PTX does not assemble, the
# program is rebuilt with -DPDL_NO_BULK and reports those variants as
# not_built. Exit status: the program's (124 on timeout), or 2 when it could
# not be built.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
log=/dev/null
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  log="$OUT/pdl-late-write.log"
  if [ -e "$log" ]; then
    log="$OUT/pdl-late-write.$(date +%Y%m%dT%H%M%S).$$.log"
  fi
fi

{
  echo "# pdl-late-write $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version,compute_cap,uuid --format=csv,noheader 2>&1 \
    || echo "# nvidia-smi failed"
  if ! command -v nvcc >/dev/null; then
    echo "# not run: no nvcc on PATH"
    exit 2
  fi
  nvcc --version | tail -n 2
  flags=(-arch=sm_90 -O2)
  if ! nvcc "${flags[@]}" -o "$build/pdl_late_write" "$here/pdl_late_write.cu" 2>&1; then
    echo "# full build failed; rebuilding without the cp.async.bulk variants"
    if ! nvcc "${flags[@]}" -DPDL_NO_BULK -o "$build/pdl_late_write" "$here/pdl_late_write.cu" 2>&1; then
      echo "# not run: build failed"
      exit 2
    fi
  fi
  rc=0
  for m in ${MODES:--}; do
    env_args=()
    if [ "$m" != "-" ]; then
      IFS=, read -r -a env_args <<<"$m"
    fi
    echo "# modes: $m"
    start=$(date +%s%N)
    timeout 120 env "${env_args[@]}" "$build/pdl_late_write" "$@" 2>&1
    r=$?
    echo "# exit code $r, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"
    [ "$r" -ne 0 ] && rc=$r
  done
  exit "$rc"
} 2>&1 | tee "$log"
exit "${PIPESTATUS[0]}"
