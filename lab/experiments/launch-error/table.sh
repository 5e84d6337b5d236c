#!/usr/bin/env bash
# Here, after the session: the table of lab/sessions/launch-error.toml's runs from what came
# back ($OUT/session.tar.xz, or its work folder unpacked): one row a launcherr run (its
# instances, record and wait calls, failures and their rate, the 95 % upper bound where none
# failed, whether F014's first launch after the context failed, where it stalled), each harness
# run's launch errors, then the comparisons the README's conclusion rests on (README.md,
# "Results"), each with its p-value (exact: Fisher, conditional binomial, Poisson).
#   bash lab/experiments/launch-error/table.sh SESSION.tar.xz|DIR
set -euo pipefail
src=${1:?the session tar.xz or its work folder}
dir=$src
if [ -f "$src" ]; then
  dir=$(mktemp -d)
  tar -xJf "$src" -C "$dir"
fi
python3 - "$dir" <<'EOF'
import glob, json, math, os, sys

root = sys.argv[1]
Z95 = -math.log(0.05)  # none seen in n: the rate is below 3.0 / n at 95 %


def runs():
    out = []
    for f in sorted(glob.glob(os.path.join(root, "**", "run.json"), recursive=True)):
        text = open(f).read().strip()
        name = os.path.basename(os.path.dirname(f))
        d = json.loads(text.splitlines()[-1]) if text else {"error": "no line"}
        out.append((name, d))
    return out


def first_f014(d):
    """Whether the process's first F014 launch came after C1..C5 in its context, and failed:
    (True | False, failed), or None where the run has no such launch."""
    o = d["options"]
    if o["order"] != "all" or "launch" in o["drop"].split(",") or o["between"] == "reset":
        return None
    return any(x["program"] == "F014" and x["round"] == 0 and x["launch"] == 0
               for x in d["failures"])


def alone_f014(d):
    """F014 launches first in their context with no other program before them there: (launches
    of that kind, failed)."""
    o = d["options"]
    fails = lambda r: any(x["program"] == "F014" and x["round"] == r and x["launch"] == 0
                          for x in d["failures"])
    if o["order"] in ("leads", "F014"):
        return 1, int(fails(0))
    if o["order"] == "all" and o["between"] == "reset":
        rounds = min(o["rounds"], d["launches"] // (14 * o["launches"]) + 1)
        return rounds, sum(fails(r) for r in range(rounds))
    return None


def fisher_one_sided(a, b, c, d):
    """P(at least a in the first row's first cell) with the margins fixed."""
    n1, k, n = a + b, a + c, a + b + c + d
    comb = math.comb
    return sum(comb(n1, i) * comb(n - n1, k - i) for i in range(a, min(n1, k) + 1)) / comb(n, k)


def binom_le(k, n, p):
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))


def poisson_ci(k, level=0.95):
    """Exact (Garwood) interval for a Poisson count, by bisection."""
    def cdf(k, mu):
        return sum(math.exp(-mu) * mu**i / math.factorial(i) for i in range(k + 1))
    def root(g):  # g increasing in mu, negative at 0
        lo, hi = 0.0, 10.0 * k + 10.0
        for _ in range(100):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if g(mid) < 0 else (lo, mid)
        return lo
    a = (1 - level) / 2
    low = 0.0 if k == 0 else root(lambda mu: (1 - cdf(k - 1, mu)) - a)
    return low, root(lambda mu: a - cdf(k, mu))


rs = runs()
print("| run | result | instances | event calls | failed | per 10^6 calls | 95 % bound per 10^6 (none failed) "
      "| F014's first launch after C1..C5 | programs that failed | first event ordinals |")
print("|---|---|---|---|---|---|---|---|---|---|")
for name, d in rs:
    if "error" in d:
        print(f"| {name} | error: {d['error']} | | | | | | | | |")
        continue
    t = d["totals"]
    rate = 1e6 * t["event_fails"] / t["event_calls"] if t["event_calls"] else 0
    bound = f"{1e6 * Z95 / t['event_calls']:.1f}" if t["event_fails"] == 0 and t["event_calls"] else ""
    progs = ", ".join(f"{p['name']} {p['event_fails']}" for p in d["programs"] if p["event_fails"])
    result = d["result"]
    if "hung" in d:
        result += f" at launch {d['launches'] + 1} ({d['hung']['program']} launch {d['hung']['launch']})"
    f = first_f014(d)
    first = "-" if f is None or d["options"]["instances"] != 512 else ("failed" if f else "no")
    ords = ", ".join(str(x["event_ord"]) for x in d["failures"][:5])
    print(f"| {d['label']} | {result} | {t['instances']} | {t['event_calls']} | {t['event_fails']} "
          f"| {rate:.1f} | {bound} | {first} | {progs} | {ords} |")
harness = {}
for f in sorted(glob.glob(os.path.join(root, "**", "campaign.jsonl"), recursive=True)):
    recs = [json.loads(l) for l in open(f) if l.strip()]
    errs = [r for r in recs if r["class"] == "launch-error"]
    harness[os.path.relpath(os.path.dirname(f), root)] = (len(errs), len(recs))
    workers = len({r.get("worker") for r in recs})
    print(f"\n{os.path.relpath(os.path.dirname(f), root)}: {len(recs)} programs in {workers} workers, "
          f"{len(errs)} launch errors")
    for r in errs:
        print(f"  {r['name']} (worker {r.get('worker')}, place {r.get('seq')}): {r['detail']}")

ok = [d for _, d in rs if "error" not in d]
print("\nComparisons (one session, one GPU; exact tests):")
# 1. F014's first launch after the context, against F014 first in its context.
ctx = [first_f014(d) for d in ok if first_f014(d) is not None and d["options"]["instances"] == 512]
alone = [alone_f014(d) for d in ok if alone_f014(d) is not None]
a, b = sum(ctx), len(ctx) - sum(ctx)
c, n_alone = sum(x[1] for x in alone), sum(x[0] for x in alone)
print(f"- F014's first launch after C1..C5 in its context (512 instances): failed in {a} of {a + b} runs; "
      f"first in its context (leads-only, self-f014, reset): {c} of {n_alone}; one-sided Fisher "
      f"p = {fisher_one_sided(a, b, c, n_alone - c):.3f}")
p_first = a / (a + b) if a + b else 0
# 2. The background: every failure but F014's first launch, in the mixed order.
bg_calls = bg_fails = 0
for d in ok:
    o = d["options"]
    if o["order"] != "all" or o["between"] == "reset":
        continue
    skip = first_f014(d) is not None
    bg_calls += d["totals"]["event_calls"] - (2 * o["instances"] if skip else 0)
    bg_fails += sum(1 for x in d["failures"]
                    if not (x["program"] == "F014" and x["round"] == 0 and x["launch"] == 0))
bg = bg_fails / bg_calls if bg_calls else 0
print(f"- the mixed order apart from F014's first launch: {bg_fails} failed of {bg_calls} calls "
      f"({1e6 * bg:.1f} per 10^6)")
# 3. F005 after itself against F005 in the mixed order.
def prog(d, name):
    return next(((p["event_calls"], p["event_fails"]) for p in d["programs"] if p["name"] == name), (0, 0))
self5 = [prog(d, "F005") for d in ok if d["options"]["order"] == "F005"]
mix5 = [prog(d, "F005") for d in ok if d["options"]["order"] == "all"]
s_calls, s_fails = map(sum, zip(*self5)) if self5 else (0, 0)
m_calls, m_fails = map(sum, zip(*mix5)) if mix5 else (0, 0)
if s_calls and m_calls:
    lo, hi = poisson_ci(s_fails)
    p = binom_le(m_fails, s_fails + m_fails, m_calls / (s_calls + m_calls))
    print(f"- F005 after itself: {s_fails} of {s_calls} calls ({1e6 * s_fails / s_calls:.1f} per 10^6, "
          f"95 % {1e6 * lo / s_calls:.1f} to {1e6 * hi / s_calls:.1f}); in the mixed order: {m_fails} of "
          f"{m_calls} ({1e6 * m_fails / m_calls:.1f}); P(so few in the mix at one rate) = {p:.1e}")
self14 = [prog(d, "F014") for d in ok if d["options"]["order"] == "F014"]
if self14 and s_calls:
    c14, f14 = map(sum, zip(*self14))
    p = binom_le(f14, f14 + s_fails, c14 / (c14 + s_calls))
    print(f"- F014 after itself: {f14} of {c14} calls, against F005's {s_fails} of {s_calls}: p = {p:.1e}")
# 4. Each run with none: the chance of none at the mixed order's rates (F014's first launch
#    failing in {p_first} of runs where it comes after the context, the background elsewhere).
print(f"- runs with none, and the chance of none at the mixed order's rates (F014's first launch "
      f"after the context {p_first:.2f}, elsewhere {1e6 * bg:.1f} per 10^6 calls):")
for d in ok:
    t = d["totals"]
    if t["event_fails"] or not t["event_calls"]:
        continue
    chance = math.exp(-bg * t["event_calls"])
    if first_f014(d) is not None and d["options"]["instances"] == 512:
        chance *= 1 - p_first
    print(f"  {d['label']}: 0 of {t['event_calls']} (95 % bound {1e6 * Z95 / t['event_calls']:.1f} "
          f"per 10^6), P(none) = {chance:.2f}")
# 5. The harness in one worker against a worker a program (the same programs).
if len(harness) == 2:
    (n1, (e1, _)), (n2, (e2, _)) = sorted(harness.items())
    p = 1 - binom_le(max(e1, e2) - 1, e1 + e2, 0.5) if e1 + e2 else 1.0
    print(f"- the harness: {n1} {e1} launch errors, {n2} {e2}, in the same programs: p = {p:.2f}")
# 6. The stalls: where each run stopped.
stalls = sorted((d["launches"] + 1, d["label"], d["limits"]["pending"], d["options"]["instances"])
                for d in ok if d["result"] == "hung")
done = [(d["label"], d["launches"], d["limits"]["pending"], d["options"]["instances"])
        for d in ok if d["result"] == "completed"]
print(f"- stalled: {len(stalls)} runs, at launch " + ", ".join(f"{s[0]} ({s[1]})" for s in stalls))
print("- completed: " + ", ".join(f"{l} ({n} launches, pending {p}, {i} instances)" for l, n, p, i in done))
EOF
