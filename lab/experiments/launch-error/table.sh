#!/usr/bin/env bash
# Here, after the session: the table of lab/sessions/launch-error.toml's runs from what came
# back ($OUT/session.tar.xz, or its work folder unpacked): one row a launcherr run (its
# instances, record and wait calls, failures and their rate, where they came, whether it
# hung), then each harness run's launch errors.
#   bash lab/experiments/launch-error/table.sh SESSION.tar.xz|DIR
set -euo pipefail
src=${1:?the session tar.xz or its work folder}
dir=$src
if [ -f "$src" ]; then
  dir=$(mktemp -d)
  tar -xJf "$src" -C "$dir"
fi
python3 - "$dir" <<'EOF'
import glob, json, os, sys

root = sys.argv[1]
print("| run | result | instances | event calls | failed | per 10^6 calls | programs that failed | by launch | first event ordinals |")
print("|---|---|---|---|---|---|---|---|---|")
for f in sorted(glob.glob(os.path.join(root, "**", "run.json"), recursive=True)):
    text = open(f).read().strip()
    if not text:
        print(f"| {os.path.basename(os.path.dirname(f))} | no line | | | | | | | |")
        continue
    d = json.loads(text.splitlines()[-1])
    if "error" in d:
        print(f"| {os.path.basename(os.path.dirname(f))} | error: {d['error']} | | | | | | | |")
        continue
    t = d["totals"]
    rate = 1e6 * t["event_fails"] / t["event_calls"] if t["event_calls"] else 0
    progs = ", ".join(f"{p['name']} {p['event_fails']}" for p in d["programs"] if p["event_fails"])
    result = d["result"]
    if "hung" in d:
        result += f" ({d['hung']['program']} launch {d['hung']['launch']})"
    ords = ", ".join(str(x["event_ord"]) for x in d["failures"][:5])
    print(f"| {d['label']} | {result} | {t['instances']} | {t['event_calls']} | {t['event_fails']} "
          f"| {rate:.1f} | {progs} | {d['by_launch'][:8]} | {ords} |")
for f in sorted(glob.glob(os.path.join(root, "**", "campaign.jsonl"), recursive=True)):
    rs = [json.loads(l) for l in open(f) if l.strip()]
    errs = [r for r in rs if r["class"] == "launch-error"]
    workers = len({r.get("worker") for r in rs})
    print(f"\n{os.path.relpath(os.path.dirname(f), root)}: {len(rs)} programs in {workers} workers, "
          f"{len(errs)} launch errors")
    for r in errs:
        print(f"  {r['name']} (worker {r.get('worker')}, place {r.get('seq')}): {r['detail']}")
EOF
