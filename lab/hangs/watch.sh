#!/usr/bin/env bash
# watch.sh SECONDS_QUIET LOG -- COMMAND...: runs COMMAND, prefixes each line
# of its output with a timestamp (into LOG and the terminal), and each time
# the output has been quiet for SECONDS_QUIET seconds writes a snapshot of
# the GPU (utilization, clocks, running processes) into LOG: a stalled run
# with the GPU busy is a kernel still running (a long run, or a spin that
# never ends); with the GPU idle it is the host or the driver waiting.
# The caller bounds the whole with `timeout`.
set -uo pipefail
quiet=$1
log=$2
shift 3
stamp() { while IFS= read -r l; do printf '%s %s\n' "$(date +%H:%M:%S.%3N)" "$l"; done; }
: >"$log"
("$@" 2>&1 | stamp | tee -a "$log") &
pid=$!
last=$(stat -c %Y "$log")
while kill -0 "$pid" 2>/dev/null; do
  sleep 5
  now=$(date +%s)
  mod=$(stat -c %Y "$log")
  if [ "$mod" -gt "$last" ]; then last=$mod; continue; fi
  if [ $((now - last)) -ge "$quiet" ]; then
    {
      echo "$(date +%H:%M:%S.%3N) WATCH quiet for $((now - last)) s; GPU:"
      nvidia-smi --query-gpu=utilization.gpu,clocks.sm,power.draw,memory.used --format=csv,noheader 2>&1
      nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader 2>&1
    } | tee -a "$log"
    last=$(stat -c %Y "$log")
  fi
done
wait "$pid"
