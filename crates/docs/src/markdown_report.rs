//! A Markdown report of any results file: where it ran, a status table per
//! tier, the failures, known failures and quality warnings with their
//! messages, what did not run and why, and the litmus histograms.

use std::collections::BTreeMap;

use gridcheck_report::{HardwareResult, Status, TestKey, TrialRecord};
use gridcheck_spec::{Spec, State, TestBody, render_state};

use crate::results::Machine;
use crate::summary::counts;
use crate::text::{cell, code, fenced};

const ORDER: [Status; 13] = [
    Status::Pass,
    Status::Fail,
    Status::OracleConflict,
    Status::Unmodeled,
    Status::QualityWarning,
    Status::Changed,
    Status::Xfail,
    Status::Known,
    Status::KnownHang,
    Status::Timeout,
    Status::Crash,
    Status::NotSupported,
    Status::NotRun,
];

/// The state as `k=v; ...`: in the test's observable order when the spec
/// knows the test, else in key order.
fn state_text(spec: Option<&Spec>, test: &str, state: &State) -> String {
    if let Some(t) = spec.and_then(|s| s.test(test))
        && let TestBody::Litmus(l) = &t.body
    {
        return render_state(&l.observables(), state);
    }
    state
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// A histogram as a Markdown table, most frequent state first: `*` marks a
/// state satisfying the condition, `!` one the model cannot reach.
pub fn histogram_table(spec: Option<&Spec>, test: &str, hw: &HardwareResult) -> String {
    let mut rows: Vec<_> = hw.rows.iter().collect();
    rows.sort_by(|a, b| b.count.cmp(&a.count).then(a.state.cmp(&b.state)));
    let mut s =
        String::from("| count | condition | model | final state |\n|---:|:---:|:---:|---|\n");
    for r in rows {
        s += &format!(
            "| {} | {} | {} | {} |\n",
            r.count,
            if r.satisfies { "*" } else { "" },
            if r.modeled {
                "reachable"
            } else {
                "! unmodeled"
            },
            code(&state_text(spec, test, &r.state))
        );
    }
    s += &format!(
        "\nPositive {}, negative {}: observation **{}** in {} instances ({:.0}/s, seed {:#x}).\n",
        hw.positive,
        hw.negative,
        hw.observation,
        hw.instances,
        hw.rate(),
        hw.seed
    );
    s
}

/// The report. `spec`, when given, orders histogram states as the tests
/// declare them; `driver_version` is the driver's version when the records
/// do not carry it (from the run's `machine.txt`).
pub fn markdown(
    title: &str,
    records: &[TrialRecord],
    spec: Option<&Spec>,
    driver_version: Option<&str>,
) -> String {
    let mut s = format!("# {title}\n\n");
    s += &machines_list(records, driver_version);
    s += &counts_table(records);
    s += &status_sections(records, spec);
    s += &not_run_table(records);
    s += &litmus_histograms(records, spec);
    s
}

/// The GPUs the trials ran on, or that none ran.
fn machines_list(records: &[TrialRecord], driver_version: Option<&str>) -> String {
    let mut s = String::new();
    let mut machines: Vec<Machine> = records
        .iter()
        .filter_map(|r| Machine::of(r, driver_version))
        .collect();
    machines.sort();
    machines.dedup();
    if machines.is_empty() {
        s += "No GPU trial ran: these results are from the model and compile tiers only.\n\n";
    } else {
        for m in &machines {
            s += &format!("- GPU trials on {}\n", m.label());
        }
        s += "\n";
    }
    s
}

/// Trials per tier and status, and in all.
fn counts_table(records: &[TrialRecord]) -> String {
    let mut s = String::new();
    let c = counts(records);
    let tiers: Vec<&String> = {
        let mut t: Vec<&String> = c.keys().map(|(t, _)| t).collect();
        t.dedup();
        t
    };
    let present: Vec<Status> = ORDER
        .into_iter()
        .filter(|st| c.keys().any(|(_, s2)| s2 == st))
        .collect();
    s += "| tier | trials |";
    for st in &present {
        s += &format!(" {st} |");
    }
    s += "\n|---|---:|";
    s += &"---:|".repeat(present.len());
    s += "\n";
    for tier in &tiers {
        let total: usize = c
            .iter()
            .filter(|((t, _), _)| t == *tier)
            .map(|(_, n)| n)
            .sum();
        s += &format!("| {tier} | {total} |");
        for st in &present {
            s += &format!(
                " {} |",
                c.get(&((*tier).clone(), *st)).copied().unwrap_or(0)
            );
        }
        s += "\n";
    }
    s += &format!("| all | {} |", records.len());
    for st in &present {
        let n: usize = c
            .iter()
            .filter(|((_, s2), _)| s2 == st)
            .map(|(_, n)| n)
            .sum();
        s += &format!(" {n} |");
    }
    s += "\n";
    s
}

/// A section per group of statuses that needs a reader (failures, changed
/// facts, xfails, known facts, quality warnings), each trial's message and
/// histogram.
fn status_sections(records: &[TrialRecord], spec: Option<&Spec>) -> String {
    let mut s = String::new();
    let sections: [(&str, &[Status]); 5] = [
        (
            "Failures",
            &[
                Status::Fail,
                Status::OracleConflict,
                Status::Unmodeled,
                Status::Crash,
                Status::Timeout,
            ],
        ),
        (
            "Changed facts (a known fact that did not reproduce)",
            &[Status::Changed],
        ),
        ("Known failures (xfail)", &[Status::Xfail]),
        (
            "Known facts measured elsewhere (known, known-hang)",
            &[Status::Known, Status::KnownHang],
        ),
        ("Quality warnings", &[Status::QualityWarning]),
    ];
    for (heading, statuses) in sections {
        let rs: Vec<&TrialRecord> = records
            .iter()
            .filter(|r| statuses.contains(&r.status))
            .collect();
        s += &format!("\n## {heading} ({})\n\n", rs.len());
        if rs.is_empty() {
            s += "None.\n";
        }
        for r in rs {
            s += &format!("### `{}`\n\n**{}**\n\n", r.trial, r.status);
            s += &fenced("text", &r.message);
            if let Some(hw) = &r.hardware {
                s += "\n";
                s += &histogram_table(spec, &r.trial.test, hw);
            }
            s += "\n";
        }
    }
    s
}

/// The trials not run, by status and reason.
fn not_run_table(records: &[TrialRecord]) -> String {
    let mut s = String::new();
    let mut not_run: BTreeMap<(Status, &str), usize> = BTreeMap::new();
    for r in records
        .iter()
        .filter(|r| matches!(r.status, Status::NotRun | Status::NotSupported))
    {
        *not_run.entry((r.status, r.message.as_str())).or_default() += 1;
    }
    s += &format!("\n## Not run ({})\n\n", not_run.values().sum::<usize>());
    if not_run.is_empty() {
        s += "Every trial ran.\n";
    } else {
        s += "| status | trials | reason |\n|---|---:|---|\n";
        for ((st, why), n) in &not_run {
            s += &format!("| {st} | {n} | {} |\n", cell(why));
        }
    }
    s
}

/// One histogram a hardware run: a test listed by several rules ran once.
fn litmus_histograms(records: &[TrialRecord], spec: Option<&Spec>) -> String {
    let mut s = String::new();
    let mut litmus: Vec<(TestKey, Vec<&TrialRecord>)> = Vec::new();
    for r in records.iter().filter(|r| r.hardware.is_some()) {
        let key = r.trial.test_key();
        match litmus.iter_mut().find(|(k, _)| *k == key) {
            Some((_, rs)) => rs.push(r),
            None => litmus.push((key, vec![r])),
        }
    }
    s += &format!("\n## Litmus histograms ({})\n", litmus.len());
    for (key, rs) in litmus {
        let r = rs[0];
        if let Some(hw) = &r.hardware {
            let rules: Vec<&str> = rs.iter().map(|r| r.trial.rule.as_str()).collect();
            s += &format!(
                "\n### `{key}`: {}\n\nRules: {}.\n\n",
                r.status,
                rules.join(", ")
            );
            s += &histogram_table(spec, &r.trial.test, hw);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use gridcheck_report::{Observation, Row};

    fn rec(trial: &str, status: Status, message: &str) -> TrialRecord {
        TrialRecord::new(trial.parse().unwrap(), status, message)
    }

    #[test]
    fn tables_sections_and_histograms() {
        let mut warn = rec(
            "gpu/sm_90/r/t",
            Status::QualityWarning,
            "unobserved: never provoked",
        );
        let st = |v: u32| -> State { [("k.t0.r0".to_string(), v)].into() };
        warn.hardware = Some(HardwareResult {
            rows: vec![
                Row {
                    state: st(0),
                    count: 3,
                    satisfies: false,
                    modeled: true,
                },
                Row {
                    state: st(1),
                    count: 9,
                    satisfies: true,
                    modeled: false,
                },
            ],
            positive: 9,
            negative: 3,
            observation: Observation::Sometimes,
            instances: 12,
            launch_failures: 0,
            first_launch_error: None,
            elapsed_s: 0.0,
            seed: 1,
            stale: Vec::new(),
        });
        let rs = vec![
            rec("model/r/t", Status::Pass, "forbidden"),
            warn.clone(),
            TrialRecord {
                trial: "gpu/sm_90/r2/t".parse().unwrap(),
                ..warn
            },
            rec(
                "gpu/sm_90/r/u",
                Status::NotSupported,
                "not run: CDP1 only below 9.0",
            ),
            rec(
                "gpu/sm_90/r/v",
                Status::NotSupported,
                "not run: CDP1 only below 9.0",
            ),
        ];
        let m = markdown("Run", &rs, None, None);
        assert!(m.starts_with("# Run\n\nNo GPU trial ran"), "{m}");
        assert!(
            m.contains("| tier | trials | pass | quality-warning | not-supported |\n"),
            "{m}"
        );
        assert!(
            m.contains(
                "| gpu | 4 | 0 | 2 | 2 |\n| model | 1 | 1 | 0 | 0 |\n| all | 5 | 1 | 2 | 2 |"
            ),
            "{m}"
        );
        assert!(m.contains("## Failures (0)\n\nNone."), "{m}");
        assert!(m.contains("## Quality warnings (2)"), "{m}");
        // The two rules' trials of one test show its histogram once.
        assert!(
            m.contains(
                "## Litmus histograms (1)\n\n### `gpu/sm_90/t`: quality-warning\n\nRules: r, r2."
            ),
            "{m}"
        );
        assert!(
            m.contains("```text\nunobserved: never provoked\n```"),
            "{m}"
        );
        assert!(
            m.contains("| not-supported | 2 | not run: CDP1 only below 9.0 |"),
            "{m}"
        );
        // Most frequent first, marked.
        let hi = m.find("| 9 | * | ! unmodeled | `k.t0.r0=1` |").unwrap();
        let lo = m.find("| 3 |  | reachable | `k.t0.r0=0` |").unwrap();
        assert!(hi < lo, "{m}");
        assert!(
            m.contains("observation **Sometimes** in 12 instances"),
            "{m}"
        );
    }
}
