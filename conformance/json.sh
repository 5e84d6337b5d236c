#!/usr/bin/env bash
# Sourced by the GPU-machine scripts: they read what the harness recorded
# through `gridcheck report ...` (JSON, read here with python3), never by
# parsing a log or the results file's text.
#   json_get KEY...        the value at KEY... of the JSON on stdin (an
#                          object's key, or a list's index, negative from
#                          the end); an object or list as JSON, nothing if
#                          absent
#   report_trials RESULTS  each trial's last record (every run of the file),
#                          one JSON object a line: trial, test, status,
#                          message (`gridcheck report summary --every-trial`)
#   trial_field TEST FIELD the field of TEST's last record, from
#                          report_trials' lines on stdin
#   holds TEXT             whether stdin holds TEXT (exit status)
json_get() {
  python3 -c '
import json, sys
v = json.load(sys.stdin)
for k in sys.argv[1:]:
    if isinstance(v, list) and k.lstrip("-").isdigit() and -len(v) <= int(k) < len(v):
        v = v[int(k)]
    elif isinstance(v, dict) and k in v:
        v = v[k]
    else:
        sys.exit(0)
print(json.dumps(v) if isinstance(v, (dict, list)) else v)' "$@"
}

report_trials() {
  ./.gpu-bundle/gridcheck report summary "$1" --all-runs --every-trial | python3 -c '
import json, sys
for run in json.load(sys.stdin)["runs"]:
    for t in run.get("every_trial", []):
        print(json.dumps(t))'
}

trial_field() {
  python3 -c '
import json, sys
last = [t for t in map(json.loads, sys.stdin) if t["test"] == sys.argv[1]]
print(last[-1][sys.argv[2]] if last else "")' "$1" "$2"
}

holds() {
  python3 -c 'import sys; sys.exit(sys.argv[1] not in sys.stdin.read())' "$1"
}

# JSON lines (a file, or stdin for `-`), read as JSON, never as text:
#   jsonl_count KEY PREFIX FILE  how many lines' KEY is a string starting
#                                with PREFIX (0 for a missing file)
jsonl_count() {
  python3 -c '
import json, sys
def lines(path):
    try:
        f = sys.stdin if path == "-" else open(path)
    except OSError:
        return
    for line in f:
        try:
            v = json.loads(line)
        except ValueError:
            continue
        if isinstance(v, dict):
            yield v
print(sum(isinstance(v.get(sys.argv[1]), str) and v[sys.argv[1]].startswith(sys.argv[2])
          for v in lines(sys.argv[3])))' "$@"
}
