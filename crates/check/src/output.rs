//! Findings made from the kernels, and the report as a compiler prints it
//! (text), as JSON and as SARIF 2.1.0.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::kernel::{Kernel, Provenance};
use crate::pair;
use crate::report::{FileReport, Finding, Options, Report};

fn short(loc: &str) -> &str {
    loc.rsplit('/').next().unwrap_or(loc)
}

fn kernel_title(k: &Kernel) -> String {
    match &k.demangled {
        Some(d) => format!("`{}` ({d})", k.name),
        None => format!("`{}`", k.name),
    }
}

/// Every finding: early loads paired with the previous kernel's writes,
/// and PTX entries that lost a wait the SASS has.
pub fn findings(files: &[FileReport], opts: &Options) -> Vec<Finding> {
    let all: Vec<&Kernel> = files.iter().flat_map(|f| f.all.iter()).collect();
    let trace = opts
        .trace
        .as_ref()
        .map(|(t, file)| pair::TraceIndex::new(t, file, &all));
    let mut out = Vec::new();
    for f in files {
        for u in &f.units {
            for k in &u.kernels {
                let mut hits = Vec::new();
                if let Some(t) = &trace {
                    hits.extend(pair::by_trace(k, t));
                }
                if let Some((p, file)) = &opts.produced {
                    hits.extend(pair::by_produced(k, p, file));
                }
                for h in hits {
                    let l = k.early.iter().find(|l| l.addr == h.addr);
                    let loc = l.and_then(|l| l.loc.clone());
                    let what = l.map(|l| l.access.as_str()).unwrap_or("load");
                    let wait = if k.waits.is_empty() {
                        "the kernel has no griddepcontrol.wait"
                    } else {
                        "before griddepcontrol.wait"
                    };
                    let at = loc
                        .as_deref()
                        .map(|l| format!(" [{}]", short(l)))
                        .unwrap_or_default();
                    out.push(Finding {
                        rule: "pdl-early-load".into(),
                        path: f.path.clone(),
                        unit: u.label.clone(),
                        arch: u.arch.clone(),
                        kernel: k.name.clone(),
                        addr: Some(h.addr),
                        loc,
                        message: format!(
                            "kernel {} at SASS 0x{:04x}{at}: {what} of {} {wait}; {}: a stale read is possible; move the wait before it",
                            kernel_title(k),
                            h.addr,
                            h.param,
                            h.why
                        ),
                    });
                }
            }
        }
        for p in &f.ptx {
            if !p.sass_wait || !p.waits.is_empty() || p.undecided.is_some() {
                continue;
            }
            out.push(Finding {
                rule: "pdl-ptx-missing-wait".into(),
                path: f.path.clone(),
                unit: p.unit.clone(),
                arch: p.arch.clone(),
                kernel: p.kernel.clone(),
                addr: None,
                loc: None,
                message: format!(
                    "kernel `{}`: its {} PTX has no griddepcontrol.wait while its SASS for another target has one: \
                     a GPU that JIT-compiles this PTX runs it without the wait; guard the wait for this target too",
                    p.kernel, p.arch
                ),
            });
        }
    }
    out
}

fn provenance_text(p: &Provenance) -> String {
    match p {
        Provenance::Param {
            params,
            also_memory,
        } => {
            let list: Vec<String> = params.iter().map(ToString::to_string).collect();
            let mem = if *also_memory {
                " (and a value loaded from memory)"
            } else {
                ""
            };
            format!("{}{mem}", list.join(", "))
        }
        Provenance::Loaded { through } => {
            let list: Vec<String> = through.iter().map(ToString::to_string).collect();
            format!("unknown: a pointer loaded through {}", list.join(", "))
        }
        Provenance::Unknown { why } => format!("unknown: {why}"),
    }
}

/// The table of one kernel: its wait and trigger, its early loads by
/// parameter, its stores.
fn kernel_text(out: &mut String, k: &Kernel) {
    let addrs = |v: &[u64]| -> String {
        if v.is_empty() {
            "none".into()
        } else {
            v.iter()
                .map(|a| format!("0x{a:04x}"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    let early_trigger = if k.early_triggers.is_empty() || k.waits.is_empty() {
        String::new()
    } else {
        format!(" ({} before the wait)", addrs(&k.early_triggers))
    };
    let _ = writeln!(
        out,
        "  kernel {}: wait {}, trigger {}{early_trigger}; {} load(s) can run before the {}",
        kernel_title(k),
        addrs(&k.waits),
        addrs(&k.triggers),
        k.early.len(),
        if k.waits.is_empty() {
            "kernel's end (it has no wait)"
        } else {
            "first wait"
        }
    );
    for l in &k.early {
        let at = l
            .loc
            .as_deref()
            .map(|l| format!(" [{}]", short(l)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "    0x{:04x} {}{at}: {}{}",
            l.addr,
            l.access,
            provenance_text(&l.provenance),
            if l.reads_params_only {
                " (the tensor map itself, a kernel parameter: only the host writes it)"
            } else {
                ""
            }
        );
    }
    let writes: Vec<String> = k.writes.iter().map(ToString::to_string).collect();
    let _ = writeln!(
        out,
        "    stores: {} ({} through {}, {} unknown){}",
        k.stores,
        k.stores - k.unknown_stores,
        if writes.is_empty() {
            "no parameter".into()
        } else {
            writes.join(", ")
        },
        k.unknown_stores,
        if k.triggers.is_empty() {
            String::new()
        } else {
            format!("; {} can run after the trigger", k.stores_after_trigger)
        }
    );
    for n in &k.notes {
        let _ = writeln!(out, "    note: {n}");
    }
}

/// Counts of early loads by what their address comes from.
pub fn counts(r: &Report) -> BTreeMap<&'static str, usize> {
    let mut c = BTreeMap::new();
    for k in r
        .files
        .iter()
        .flat_map(|f| f.units.iter().flat_map(|u| &u.kernels))
    {
        *c.entry("kernels with PDL instructions").or_default() += 1;
        if !k.early.is_empty() {
            *c.entry("kernels with a load before the wait").or_default() += 1;
        }
        for l in &k.early {
            let key = match &l.provenance {
                _ if l.reads_params_only => "early tensor-map prefetches of a parameter",
                Provenance::Param { .. } => "early loads from a parameter",
                Provenance::Loaded { .. } => "early loads through a loaded pointer",
                Provenance::Unknown { .. } => "early loads of unknown provenance",
            };
            *c.entry(key).or_default() += 1;
        }
    }
    c
}

/// The report as text: errors and findings like a compiler's, then each
/// PDL kernel's table, then the counts.
pub fn text(r: &Report, table: bool) -> String {
    let mut out = String::new();
    for f in &r.files {
        for e in &f.errors {
            let _ = writeln!(out, "{}: error: {e}", f.path);
        }
    }
    for x in &r.findings {
        let _ = writeln!(
            out,
            "{}: {} ({}): warning: {}",
            x.path, x.unit, x.arch, x.message
        );
    }
    if table {
        for f in &r.files {
            for u in f.units.iter().filter(|u| !u.kernels.is_empty()) {
                let _ = writeln!(out, "{}: {} ({}):", f.path, u.label, u.arch);
                for k in &u.kernels {
                    kernel_text(&mut out, k);
                }
            }
            for p in f.ptx.iter().filter(|p| p.sass_wait) {
                let state = match (&p.undecided, p.waits.is_empty()) {
                    (Some(why), _) => format!("undecided: {why}"),
                    (None, true) => "no griddepcontrol.wait".into(),
                    (None, false) => format!("wait at {}", p.waits.join("; ")),
                };
                let _ = writeln!(
                    out,
                    "{}: {} ({}): PTX entry `{}`: {state}",
                    f.path, p.unit, p.arch, p.kernel
                );
            }
        }
    }
    let units: usize = r.files.iter().map(|f| f.units.len()).sum();
    let errors: usize = r.files.iter().map(|f| f.errors.len()).sum();
    let _ = write!(out, "checked {} file(s), {units} cubin(s)", r.files.len());
    for (k, v) in counts(r) {
        let _ = write!(out, "; {k}: {v}");
    }
    let _ = writeln!(
        out,
        "; {} finding(s), {errors} error(s); pairing: {}",
        r.findings.len(),
        r.pairing
    );
    if r.pairing == "none" {
        let _ = writeln!(
            out,
            "note: no --trace or --produced file: loads before the wait are listed, not judged"
        );
    }
    out
}

pub fn json(r: &Report) -> String {
    serde_json::to_string_pretty(r).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

/// SARIF 2.1.0: one result a finding, and one an error (level `error`).
pub fn sarif(r: &Report) -> String {
    let mut results: Vec<Value> = r
        .findings
        .iter()
        .map(|f| {
            let mut loc = json!({
                "physicalLocation": {"artifactLocation": {"uri": f.path}},
                "logicalLocations": [{"name": f.kernel, "kind": "function"}]
            });
            if let Some((file, line)) = f.loc.as_deref().and_then(|l| l.rsplit_once(':'))
                && let Ok(line) = line.parse::<u64>()
            {
                loc["physicalLocation"] = json!({
                    "artifactLocation": {"uri": file},
                    "region": {"startLine": line}
                });
            }
            json!({
                "ruleId": f.rule,
                "level": "warning",
                "message": {"text": f.message},
                "locations": [loc],
                "properties": {"binary": f.path, "unit": f.unit, "arch": f.arch, "sassOffset": f.addr}
            })
        })
        .collect();
    for f in &r.files {
        for e in &f.errors {
            results.push(json!({
                "ruleId": "input-error",
                "level": "error",
                "message": {"text": e},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": f.path}}}]
            }));
        }
    }
    let doc = json!({
        "version": "2.1.0",
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "runs": [{
            "tool": {"driver": {
                "name": "gridcheck-check",
                "rules": [
                    {"id": "pdl-early-load", "shortDescription": {"text": "a PDL secondary loads what the previous kernel writes before griddepcontrol.wait"}},
                    {"id": "pdl-ptx-missing-wait", "shortDescription": {"text": "a PTX entry lacks the griddepcontrol.wait its SASS has"}},
                    {"id": "input-error", "shortDescription": {"text": "a file that could not be checked"}}
                ]
            }},
            "results": results
        }]
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}
