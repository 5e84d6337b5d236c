#!/usr/bin/env bash
# Sourced by the GPU-machine scripts: they read what the harness recorded
# through `conformance report ... ` (JSON), never by parsing a log.
#   json_get KEY...   the value at KEY... of the JSON on stdin (an object's
#                     key, or a list's index, negative from the end); an
#                     object or list is printed as JSON, nothing if absent
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
