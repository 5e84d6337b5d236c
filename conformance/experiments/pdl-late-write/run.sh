#!/usr/bin/env bash
# Build pdl_late_write.cu with the nvcc on PATH and run it on GPU 0 under
# `timeout 120`. Arguments go to the program: [launches-per-config]
# [seconds-per-config] [variant-name-substring] (defaults 10000, 0.6, all).
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
  start=$(date +%s%N)
  timeout 120 "$build/pdl_late_write" "$@" 2>&1
  rc=$?
  echo "# exit code $rc, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"
  exit "$rc"
} 2>&1 | tee "$log"
exit "${PIPESTATUS[0]}"
