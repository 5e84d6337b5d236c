//! `cargo xtask report diff`: the difference of two runs
//! ([`gridcheck_report::run_diff::RunDiff`]) as Markdown or JSON. A test
//! listed by several rules is one line with the other rules named, as in
//! the summary; the JSON has every trial.

use std::collections::BTreeMap;

use gridcheck_report::TestKey;
use gridcheck_report::run_diff::{
    ChangeKind, HistogramChange, HistogramKind, OneSided, RATE_FACTOR, RATE_Z, RunDiff, Side,
    StatusChange,
};
use serde::Serialize;

use crate::text::{cell, code};

/// The diff as JSON: the two inputs' names, whether it fails and why, and
/// every change.
pub fn json(d: &RunDiff, base: &str, new: &str, fails: bool) -> String {
    #[derive(Serialize)]
    struct Out<'a> {
        base_input: &'a str,
        new_input: &'a str,
        regressions: usize,
        fails: bool,
        #[serde(flatten)]
        diff: &'a RunDiff,
    }
    let out = Out {
        base_input: base,
        new_input: new,
        regressions: d.regressions(),
        fails,
        diff: d,
    };
    serde_json::to_string_pretty(&out).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

/// Items grouped by test and what changed (`detail`): the first trial's
/// line, then the other rules.
fn by_test<T>(
    items: &[T],
    trial: impl Fn(&T) -> &gridcheck_report::TrialId,
    detail: impl Fn(&T) -> String,
) -> Vec<(&T, Vec<String>)> {
    let mut groups: Vec<(&T, Vec<String>)> = Vec::new();
    let mut index: BTreeMap<(TestKey, String), usize> = BTreeMap::new();
    for it in items {
        let key = (trial(it).test_key(), detail(it));
        match index.get(&key) {
            Some(&i) => groups[i].1.push(trial(it).rule.clone()),
            None => {
                index.insert(key, groups.len());
                groups.push((it, Vec::new()));
            }
        }
    }
    groups
}

fn also(rules: &[String]) -> String {
    if rules.is_empty() {
        String::new()
    } else {
        format!(" (also rules {})", rules.join(", "))
    }
}

fn status_rows(changes: &[&StatusChange]) -> String {
    let owned: Vec<StatusChange> = changes.iter().map(|c| (*c).clone()).collect();
    let groups = by_test(
        &owned,
        |c| &c.trial,
        |c| format!("{} {} {} {}", c.base, c.new, c.test_changed, c.message),
    );
    let mut s = String::from("| trial | before | now | message |\n|---|---|---|---|\n");
    for (c, rules) in groups {
        let changed = if c.test_changed {
            " (the test changed between the runs)"
        } else {
            ""
        };
        s += &format!(
            "| {}{}{} | {} | {} | {} |\n",
            code(&c.trial.to_string()),
            cell(&also(rules.as_slice())),
            changed,
            c.base,
            c.new,
            cell(&shorten(&c.message))
        );
    }
    s
}

/// A message cut to a table cell's length (the JSON has it whole).
fn shorten(message: &str) -> String {
    const MAX: usize = 200;
    match message.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &message[..i]),
        None => message.to_string(),
    }
}

fn rate(count: u64, n: u64) -> String {
    if n == 0 {
        "no instances".into()
    } else {
        format!("{count} / {n} ({:.3}%)", 100.0 * count as f64 / n as f64)
    }
}

fn histogram_rows(changes: &[HistogramChange]) -> String {
    let groups = by_test(
        changes,
        |c| &c.trial,
        |c| {
            format!(
                "{:?} {:?} {} {}",
                c.kind, c.state, c.base_count, c.new_count
            )
        },
    );
    let mut s = String::from("| trial | change | before | now |\n|---|---|---|---|\n");
    for (c, rules) in groups {
        let what = match c.kind {
            HistogramKind::ForbiddenObserved => format!(
                "**REGRESSION**: {} observed, a state the model cannot reach",
                code(c.state.as_deref().unwrap_or(""))
            ),
            HistogramKind::AllowedGone => format!(
                "{} (allowed) no longer seen",
                code(c.state.as_deref().unwrap_or(""))
            ),
            HistogramKind::RateMoved => {
                format!("the condition's rate moved (z = {:.1})", c.z.unwrap_or(0.0))
            }
        } + &c
            .spread
            .as_ref()
            .map(|n| format!("; {n}"))
            .unwrap_or_default();
        s += &format!(
            "| {}{} | {what} | {} | {} |\n",
            code(&c.trial.to_string()),
            cell(&also(&rules)),
            rate(c.base_count, c.base_instances),
            rate(c.new_count, c.new_instances)
        );
    }
    s
}

fn one_sided(items: &[OneSided]) -> String {
    let groups = by_test(items, |o| &o.trial, |o| o.status.to_string());
    let mut s = String::from("| trial | status |\n|---|---|\n");
    for (o, rules) in groups {
        s += &format!(
            "| {}{} | {} |\n",
            code(&o.trial.to_string()),
            cell(&also(&rules)),
            o.status
        );
    }
    s
}

/// One side's environment, row by row.
fn fields(s: &Side) -> Vec<(&'static str, String)> {
    let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "not recorded".into());
    let list = |v: &[String]| {
        if v.is_empty() {
            "not recorded".to_string()
        } else {
            v.join(", ")
        }
    };
    let driver = match (&s.driver_version, &s.driver_api) {
        (Some(v), Some(a)) => format!("{v} (CUDA {a} API)"),
        (None, Some(a)) => format!("CUDA {a} API"),
        (v, _) => opt(v),
    };
    vec![
        ("run id", s.run_id.clone()),
        (
            "started",
            s.started
                .clone()
                .unwrap_or_else(|| "not recorded (a run before start times were)".into()),
        ),
        ("GPU", opt(&s.gpu)),
        ("architecture", opt(&s.sm)),
        ("driver", driver),
        (
            "kernels built by (nvcc, device runtime)",
            list(&s.kernels.iter().map(|k| k.to_string()).collect::<Vec<_>>()),
        ),
        (
            "nvcc found where the harness ran (not what built the kernels)",
            opt(&s.nvcc),
        ),
        ("devices", list(&s.devices)),
        ("commit", list(&s.commits)),
        ("tuning", opt(&s.tuning)),
        ("trials", s.trials.to_string()),
    ]
}

fn environments(d: &RunDiff) -> String {
    let mut s = String::from("| | BASE | NEW | |\n|---|---|---|---|\n");
    for ((name, b), (_, n)) in fields(&d.base).into_iter().zip(fields(&d.new)) {
        let mark = if b != n { "differs" } else { "" };
        s += &format!("| {name} | {} | {} | {mark} |\n", cell(&b), cell(&n));
    }
    s
}

/// A diff's changes by kind, as the Markdown shows them.
struct Grouped<'a> {
    /// Status regressions beyond the spread, and within it.
    reg: Vec<&'a StatusChange>,
    within: Vec<&'a StatusChange>,
    known: Vec<&'a StatusChange>,
    fix: Vec<&'a StatusChange>,
    other: Vec<&'a StatusChange>,
    /// Within a fact that reproduces only sometimes.
    sometimes: Vec<&'a StatusChange>,
    hist_reg: Vec<HistogramChange>,
    hist_other: Vec<HistogramChange>,
}

impl<'a> Grouped<'a> {
    fn of(d: &'a RunDiff) -> Grouped<'a> {
        let of = |k: ChangeKind| -> Vec<&StatusChange> {
            d.status_changes.iter().filter(|c| c.kind == k).collect()
        };
        let (reg, within) = of(ChangeKind::Regression)
            .into_iter()
            .partition(|c| !c.within_spread);
        let (hist_reg, hist_other) = d
            .histogram_changes
            .iter()
            .cloned()
            .partition(|c| c.regression);
        Grouped {
            reg,
            within,
            known: of(ChangeKind::KnownChanged),
            fix: of(ChangeKind::Fix),
            other: of(ChangeKind::Changed),
            sometimes: of(ChangeKind::WithinFact),
            hist_reg,
            hist_other,
        }
    }
}

/// The verdict line, and the baseline it was judged against.
fn headline(d: &RunDiff, g: &Grouped) -> String {
    let mut s = if d.is_empty() {
        format!(
            "**No change**: the same {} trials, with the same statuses and histograms.\n\n",
            d.unchanged
        )
    } else {
        let forbidden = g
            .hist_reg
            .iter()
            .filter(|c| c.kind == HistogramKind::ForbiddenObserved)
            .count();
        let beyond = match g.hist_reg.len() - forbidden {
            0 => String::new(),
            n => format!(", {n} histogram change(s) beyond the spread"),
        };
        format!(
            "**{} regression(s)** ({} status, {forbidden} forbidden state(s) newly observed{beyond}); {} known \
             discrepancy(ies) no longer reproducing; {} within a fact that reproduces only \
             sometimes; {} fix(es); {} other status change(s); {} \
             other histogram change(s); {} trial(s) added, {} removed; {} unchanged (counted by \
             trial; below, a test listed by several rules is one line).\n\n",
            d.regressions(),
            g.reg.len(),
            g.known.len(),
            g.sometimes.len(),
            g.fix.len(),
            g.other.len() + g.within.len(),
            g.hist_other.len(),
            d.added.len(),
            d.removed.len(),
            d.unchanged
        )
    };
    if let Some(spread) = &d.spread {
        s += &format!(
            "Judged against the run-to-run spread of {spread} (`conformance/spread/`): a rate \
             change is a regression only beyond it, an allowed state gone only if no baseline run \
             missed it and no escalation provoked it, a status the baseline saw is within it.\n\n"
        );
    }
    s
}

/// The diff as Markdown: a one-line verdict, the environments side by
/// side, then each kind of change (regressions first).
pub fn markdown(d: &RunDiff, base: &str, new: &str) -> String {
    let g = Grouped::of(d);
    let Grouped {
        reg,
        within,
        known,
        fix,
        other,
        sometimes,
        hist_reg,
        hist_other,
    } = &g;
    let mut s = format!(
        "# What changed from BASE to NEW\n\nBASE: {}  \nNEW: {}\n\n",
        code(base),
        code(new)
    );
    s += &headline(d, &g);
    s += "## Environments\n\n";
    s += &environments(d);
    let mut section = |title: &str, note: &str, body: String| {
        s += &format!("\n## {title}\n\n{note}{body}");
    };
    if !reg.is_empty() || !hist_reg.is_empty() {
        let mut body = String::new();
        if !reg.is_empty() {
            body += &status_rows(reg);
        }
        if !hist_reg.is_empty() {
            if !body.is_empty() {
                body.push('\n');
            }
            body += &histogram_rows(hist_reg);
        }
        section(
            "Regressions",
            "A status worse than before (pass, xfail, quality warning, not run, failing, in that \
             order), or a state the model cannot reach observed now and not before.\n\n",
            body,
        );
    }
    if !within.is_empty() {
        section(
            "Within the run-to-run spread",
            "A status worse than before that the baseline's runs of this GPU also recorded for \
             the trial: not a regression.\n\n",
            status_rows(within),
        );
    }
    if !sometimes.is_empty() {
        section(
            "Within a fact that reproduces only sometimes",
            "A trial of a known fact with `reproduces = \"sometimes\"` that showed its behaviour \
             in one run and not in the other: within the fact (sometimes), not a regression.\n\n",
            status_rows(sometimes),
        );
    }
    if !known.is_empty() {
        section(
            "Known discrepancies no longer reproducing",
            "Listed as known failures in BASE; NEW did not reproduce them. Check the \
             expectations file's entry.\n\n",
            status_rows(known),
        );
    }
    if !fix.is_empty() {
        section("Fixes", "", status_rows(fix));
    }
    if !other.is_empty() {
        section(
            "Other status changes",
            "A status of the same rank.\n\n",
            status_rows(other),
        );
    }
    if !hist_other.is_empty() {
        section(
            "Histogram changes",
            &format!(
                "An allowed state seen before and not now, or the rate of the condition \
                 (positive / instances) moving beyond the run-to-run spread: |z| >= {RATE_Z} in a \
                 two-proportion test and a factor of at least {RATE_FACTOR}.\n\n"
            ),
            histogram_rows(hist_other),
        );
    }
    if !d.added.is_empty() {
        section("Trials added", "", one_sided(&d.added));
    }
    if !d.removed.is_empty() {
        section("Trials removed", "", one_sided(&d.removed));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use gridcheck_report::run_diff::diff_runs;
    use gridcheck_report::{Status, TrialRecord};

    fn rec(trial: &str, status: Status) -> TrialRecord {
        TrialRecord::new(trial.parse().unwrap(), status, format!("{status}\nmore"))
    }

    /// A known hang that reproduces only sometimes, shown in NEW and not in
    /// BASE: its own section, not a regression (without the facts, one).
    #[test]
    fn a_sometimes_fact_is_within_the_fact() {
        let facts = gridcheck_report::Facts {
            entries: gridcheck_report::Facts::parse(
                "[\"gpu/sm_90/t\"]\nkind = \"hang\"\nsummary = \"s\"\ndepends_on = [\"driver\"]\n\
                 reproduces = \"sometimes\"\nmeasured = [{ sm = \"sm_90\", driver = \"580\", date = \"2026-11-26\" }]\n\
                 evidence = \"e\"\n",
                std::path::Path::new("f.toml"),
                std::path::Path::new("."),
            )
            .unwrap(),
        };
        let (b, n) = (
            [rec("gpu/sm_90/r.a/t", Status::Pass)],
            [rec("gpu/sm_90/r.a/t", Status::KnownHang)],
        );
        let md = markdown(&diff_runs(&b, &n).within_facts(&facts, None), "a", "b");
        let at = md.find("## Within a fact that reproduces only sometimes");
        assert!(
            at.is_some_and(|at| md[at..].contains("gpu/sm_90/r.a/t")),
            "{md}"
        );
        assert!(md.contains("**0 regression(s)**") && !md.contains("## Regressions"));
        let md = markdown(&diff_runs(&b, &n), "a", "b");
        assert!(md.contains("**1 regression(s)**"), "{md}");
    }

    /// Against a baseline: a status the baseline saw is shown within the
    /// spread, not as a regression, and the header names the baseline.
    #[test]
    fn markdown_against_a_spread() {
        let on_gpu = |status: Status, run: &str| {
            let mut r = rec("gpu/sm_90/r.a/t", status);
            r.environment = Some(gridcheck_report::Environment {
                gpu: "H100".into(),
                sm: "sm_90".into(),
                driver: "13.0".into(),
                nvcc: None,
                driver_version: None,
                tuning: None,
                tuning_file: None,
                device: None,
                binary: None,
                toolchain: None,
            });
            r.run_id = Some(run.into());
            vec![r]
        };
        let runs: Vec<(String, gridcheck_report::RunRecords)> =
            [on_gpu(Status::Pass, "a"), on_gpu(Status::Timeout, "b")]
                .into_iter()
                .map(|r| ("f".to_string(), gridcheck_report::split_runs(r).remove(0)))
                .collect();
        let spread = gridcheck_report::spread::Spread::of(&runs).unwrap();
        let (base, new) = (on_gpu(Status::Pass, "x"), on_gpu(Status::Timeout, "y"));
        let d = gridcheck_report::run_diff::diff_runs_with(&base, &new, Some(&spread));
        let md = markdown(&d, "a", "b");
        assert!(md.contains("**0 regression(s)** (0 status"), "{md}");
        assert!(
            md.contains("Judged against the run-to-run spread of H100, 2 runs"),
            "{md}"
        );
        assert!(
            md.contains("## Within the run-to-run spread")
                && md.contains("| `gpu/sm_90/r.a/t` | pass | timeout |")
                && !md.contains("## Regressions"),
            "{md}"
        );
        let plain = markdown(&diff_runs(&base, &new), "a", "b");
        assert!(
            plain.contains("## Regressions") && !plain.contains("spread of"),
            "{plain}"
        );
    }

    #[test]
    fn markdown_names_regressions_first_and_groups_rules() {
        let base = vec![
            rec("gpu/sm_90/r.a/t", Status::Pass),
            rec("gpu/sm_90/r.b/t", Status::Pass),
            rec("model/r.a/u", Status::Xfail),
            rec("model/r.a/gone", Status::Pass),
        ];
        let mut new = base.clone();
        new[0].status = Status::Fail;
        new[0].message = "VIOLATION".into();
        new[1].status = Status::Fail;
        new[1].message = "VIOLATION".into();
        new[2].status = Status::Pass;
        new.remove(3);
        let d = diff_runs(&base, &new);
        let md = markdown(&d, "a.jsonl", "b.jsonl");
        assert!(
            md.contains("**2 regression(s)** (2 status, 0 forbidden"),
            "{md}"
        );
        assert!(
            md.contains("| `gpu/sm_90/r.a/t` (also rules r.b) | pass | fail | VIOLATION |"),
            "{md}"
        );
        let reg = md.find("## Regressions").unwrap();
        let known = md
            .find("## Known discrepancies no longer reproducing")
            .unwrap();
        assert!(reg < known, "{md}");
        assert!(
            md.contains(
                "## Trials removed\n\n| trial | status |\n|---|---|\n| `model/r.a/gone` | pass |"
            ),
            "{md}"
        );
        let js: serde_json::Value = serde_json::from_str(&json(&d, "a", "b", true)).unwrap();
        assert_eq!(js["regressions"], 2);
        assert_eq!(js["status_changes"][0]["kind"], "regression");
        assert_eq!(js["status_changes"].as_array().unwrap().len(), 3);
        assert_eq!(js["removed"][0]["trial"], "model/r.a/gone");

        assert_eq!(shorten(&"é".repeat(300)).chars().count(), 201);
        assert_eq!(shorten("short"), "short");
        // Two runs of one GPU, the driver changed: the row says so.
        let on = |mut r: TrialRecord, driver: &str| {
            r.environment = Some(gridcheck_report::Environment {
                gpu: "H100".into(),
                sm: "sm_90".into(),
                driver: "13.0".into(),
                nvcc: Some("13.0.88".into()),
                driver_version: Some(driver.into()),
                tuning: None,
                tuning_file: None,
                binary: None,
                toolchain: None,
                device: None,
            });
            r
        };
        let b: Vec<TrialRecord> = base.iter().cloned().map(|r| on(r, "580.1")).collect();
        let n: Vec<TrialRecord> = new.iter().cloned().map(|r| on(r, "590.2")).collect();
        let md = markdown(&diff_runs(&b, &n), "a", "b");
        assert!(
            md.contains("| driver | 580.1 (CUDA 13.0 API) | 590.2 (CUDA 13.0 API) | differs |"),
            "{md}"
        );
        assert!(md.contains("| GPU | H100 | H100 |  |"), "{md}");
        // Two runs that differ by the kernels' toolchain only.
        let built = |mut r: TrialRecord, release: &str, nvcc: &str| {
            r = on(r, "580.1");
            if let Some(e) = r.environment.as_mut() {
                e.toolchain = Some(gridcheck_report::ToolchainRecord {
                    release: release.into(),
                    nvcc: nvcc.into(),
                    devrt: format!(
                        "nvidia-cuda-runtime {nvcc}, /t/libcudadevrt.a (1 bytes, fnv1a64 0a)"
                    ),
                    source: ".toolchains".into(),
                    disassembler: None,
                });
            }
            r
        };
        let b: Vec<TrialRecord> = base.iter().cloned().map(|r| on(r, "580.1")).collect();
        let n: Vec<TrialRecord> = base
            .iter()
            .cloned()
            .map(|r| built(r, "13.5", "13.5.37"))
            .collect();
        let md = markdown(&diff_runs(&b, &n), "a", "b");
        assert!(
            md.contains(
                "| kernels built by (nvcc, device runtime) | not recorded | 13.5: nvcc 13.5.37, \
                 device runtime nvidia-cuda-runtime 13.5.37 (fnv1a64 0a) | differs |"
            ),
            "{md}"
        );
        assert!(
            md.contains(
                "| nvcc found where the harness ran (not what built the kernels) | 13.0.88 | 13.0.88 |  |"
            ),
            "{md}"
        );
        assert!(md.contains("**No change**"), "{md}");
        let js: serde_json::Value =
            serde_json::from_str(&json(&diff_runs(&b, &n), "a", "b", false)).unwrap();
        assert_eq!(js["new"]["kernels"][0]["nvcc"], "13.5.37");
        assert_eq!(js["base"]["kernels"].as_array().map(Vec::len), Some(0));
        let same = markdown(&diff_runs(&base, &base), "a", "a");
        assert!(same.contains("**No change**: the same 4 trials"), "{same}");
        assert!(!same.contains("## Regressions"), "{same}");
    }
}
