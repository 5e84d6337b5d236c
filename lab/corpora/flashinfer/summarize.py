#!/usr/bin/env python3
"""The counts of the check's JSON reports of the FlashInfer corpus
(run.sh's reports folder; the batches it finished): files, errors, architectures, kernels with PDL
instructions and with a load before the wait, the early loads by access
kind and by provenance, tensor-map prefetches of a parameter apart.

    python3 lab/corpora/flashinfer/summarize.py REPORTS_DIR [TIMES_TXT]
"""
import collections
import glob
import json
import os
import sys

reports = sys.argv[1]
files = errors = 0
arch = collections.Counter()
kernels = pdl = with_early = with_data_early = 0
access = collections.Counter()
prov = collections.Counter()
family = collections.Counter()
done = sorted(p[: -len(".done")] + ".json" for p in glob.glob(os.path.join(reports, "part-*.done")))
for path in done:
    with open(path) as f:
        rep = json.load(f)
    for fr in rep["files"]:
        files += 1
        errors += len(fr.get("errors", []))
        fam = fr["path"].split("/cubins/")[-1].split("/")[1] if "/cubins/" in fr["path"] else "?"
        for u in fr.get("units", []):
            arch[u.get("arch", "?")] += 1
            kernels += len(u.get("kernels", [])) + int(u.get("other_kernels", 0))
            for k in u.get("kernels", []):
                pdl += 1
                early = k.get("early", [])
                if early:
                    with_early += 1
                    family[fam] += 1
                if any(not l.get("reads_params_only") for l in early):
                    with_data_early += 1
                for l in early:
                    access[l["access"] + (" (of a parameter)" if l.get("reads_params_only") else "")] += 1
                    prov[l["provenance"]["kind"]] += 1
batches = len(done)
print(f"batches {batches} files {files} errors {errors}")
print(f"architectures {dict(arch)}")
print(f"kernels {kernels} with PDL instructions {pdl} with a load before the wait {with_early} "
      f"(beyond tensor-map prefetches of a parameter: {with_data_early})")
print(f"kernels with a load before the wait, by family {dict(family)}")
print(f"early loads by access {dict(access)}")
print(f"early loads by provenance {dict(prov)}")
if len(sys.argv) > 2:
    secs = [float(l.split()[3]) for l in open(sys.argv[2]) if l.startswith("part-") and len(l.split()) > 3]
    print(f"time: {len(secs)} batches in {sum(secs):.0f} s, {sum(secs) / max(1, 500 * len(secs)):.3f} s a file")
