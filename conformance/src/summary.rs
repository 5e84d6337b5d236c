//! The terminal summary printed after a run: one line a trial that did not
//! simply pass (a known fact's status with its message: xfail, known,
//! known-hang, changed), then the litmus7 block of every hardware result,
//! then the counts, with what did not run counted by reason (each reason
//! once), and last, loudly, every known fact that did not reproduce
//! (`changed`).

use std::collections::BTreeMap;

use gridcheck_report::{Status, Tier, TrialRecord, litmus_block};
use gridcheck_spec::TestBody;

use crate::ctx::Ctx;

/// One summary line: status, trial, model verdict, hardware observation.
pub fn line(r: &TrialRecord) -> String {
    let model = r
        .model
        .as_ref()
        .map(|m| m.verdict.to_string())
        .unwrap_or_else(|| "-".into());
    let hw = r
        .hardware
        .as_ref()
        .map(|h| format!("{} (P {} / N {})", h.observation, h.positive, h.negative))
        .unwrap_or_else(|| "-".into());
    let detail = match r.trial.tier {
        // The model's and the compiler's findings fit on the line; GPU
        // findings get their own lines and a histogram below.
        Tier::Model | Tier::Static if !r.message.contains('\n') && !from_a_fact(r.status) => {
            format!("  ({})", r.message)
        }
        _ => String::new(),
    };
    format!(
        "{:<15} {:<10} {:<32} {}{detail}",
        r.status.as_str(),
        model,
        hw,
        r.trial
    )
}

pub fn print(ctx: &Ctx) {
    let records = ctx.sink.records();
    if records.is_empty() {
        return;
    }
    println!(
        "\ngridcheck summary (run {}, started {})",
        ctx.sink.run.id, ctx.sink.run.started
    );
    // Passes are counted below, trials that did not run counted by reason;
    // the results file has every trial.
    let notable: Vec<&TrialRecord> = records.iter().filter(|r| listed(r)).collect();
    // A blank line before the counts only under a list or a block.
    let above = !notable.is_empty();
    if above {
        println!("{:<15} {:<10} {:<32} trial", "status", "model", "hardware");
    }
    for r in notable {
        println!("{}", line(r));
        if matches!(r.trial.tier, Tier::Gpu | Tier::Library)
            && matches!(
                r.status,
                Status::Fail | Status::QualityWarning | Status::Unmodeled
            )
            || matches!(
                r.status,
                Status::Fail | Status::OracleConflict | Status::Timeout | Status::Crash
            ) && r.message.contains('\n')
            || from_a_fact(r.status)
        {
            for l in r.message.lines() {
                println!("{:15} {l}", "");
            }
        }
    }
    let mut shown = std::collections::BTreeSet::new();
    for r in records.iter().filter(|r| r.hardware.is_some()) {
        // One hardware run a test, whatever number of rules list it.
        if !shown.insert(r.trial.test_key()) {
            continue;
        }
        if let (Some(hw), Some(t)) = (&r.hardware, ctx.plan.spec.test(&r.trial.test))
            && let TestBody::Litmus(l) = &t.body
        {
            let env = r
                .environment
                .as_ref()
                .map(|e| format!(" on {} (CUDA driver API {})", e.gpu, e.driver))
                .unwrap_or_default();
            println!("\n{}{env}", r.trial.test);
            print!("{}", litmus_block(&r.trial.test, l, hw));
        }
    }
    let mut counts: BTreeMap<(&str, Status), usize> = BTreeMap::new();
    for r in records.iter().filter(|r| !not_run(r)) {
        *counts.entry((r.trial.tier.as_str(), r.status)).or_default() += 1;
    }
    if above || !shown.is_empty() {
        println!();
    }
    for ((tier, status), n) in &counts {
        println!("{tier:>6} tier: {n} {status}");
    }
    for l in not_run_by_reason(&records) {
        println!("{l}");
    }
    if ctx.plan.opts.runs(Tier::Gpu) && ctx.runner.device.is_ok() {
        let e = &ctx.plan.tuned.tuning;
        println!(
            "GPU environment: {}; from {}",
            describe_environment(e),
            ctx.plan.tuned.from
        );
        for x in &e.extra {
            let what = if x.tuning.launches == 0 {
                "for the mutants only"
            } else {
                "then"
            };
            println!("  {what} `{}`: {}", x.name, describe_environment(&x.tuning));
        }
    }
    println!("Results: {}", ctx.plan.opts.results.display());
    let mutants = ctx.sink.mutants.records();
    match covers(
        &ctx.plan.spec,
        &ctx.plan.facts,
        &mutants,
        &ctx.plan.opts.root,
    ) {
        Ok(c) => {
            let counts: Vec<_> = c.iter().map(gridcheck_report::FactCover::counts).collect();
            print!("\n{}", gridcheck_report::cover_text(&counts));
        }
        Err(e) => eprintln!("warning: what each fact covers is not shown: {e}"),
    }
    let changed = changed(&records);
    if !changed.is_empty() {
        println!("\n{changed}");
    }
}

/// What each fact of `facts` covers: the tests of `spec`, the mutants of
/// `mutants` (their programs as `spec` makes them) and the campaign
/// findings recorded under `root/records` (`gridcheck_report::Facts::cover`,
/// what the site's discrepancies page shows too).
pub(crate) fn covers(
    spec: &gridcheck_spec::Spec,
    facts: &gridcheck_report::Facts,
    mutants: &[gridcheck_report::MutantRecord],
    root: &std::path::Path,
) -> Result<Vec<gridcheck_report::FactCover>, String> {
    let findings = gridcheck_report::recorded_findings(root)?;
    let programs = gridcheck_mutate::programs(spec);
    Ok(facts.cover(&gridcheck_report::CoverInputs {
        spec,
        mutants,
        programs: &programs,
        findings: &findings,
    }))
}

/// A status a known fact gave: its message says which fact.
fn from_a_fact(s: Status) -> bool {
    matches!(
        s,
        Status::Xfail | Status::Known | Status::KnownHang | Status::Changed
    )
}

/// The known facts that did not reproduce, one a test, loudly; empty when
/// none. They do not fail the run, and must not pass unseen.
pub fn changed(records: &[TrialRecord]) -> String {
    let mut seen = std::collections::BTreeSet::new();
    let lines: Vec<String> = records
        .iter()
        .filter(|r| r.status == Status::Changed && seen.insert(r.trial.test_key()))
        .map(|r| format!("  {}: {}", r.trial, r.message.lines().next().unwrap_or("")))
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    format!(
        "CHANGED: {} known fact(s) did not reproduce on this machine (not a failure of the run; \
         update conformance/facts/):\n{}\n",
        lines.len(),
        lines.join("\n")
    )
}

/// Whether a trial did not run (not-supported or not-run): counted by
/// reason, never listed one by one.
fn not_run(r: &TrialRecord) -> bool {
    matches!(r.status, Status::NotRun | Status::NotSupported)
}

/// Whether the summary lists a trial on a line of its own: everything but
/// a plain pass and a trial that did not run.
fn listed(r: &TrialRecord) -> bool {
    !not_run(r) && r.status != Status::Pass
}

/// The most reasons a tier's not-run trials are listed under; the rest are
/// counted in one line.
const MAX_REASONS: usize = 8;

/// The trials that did not run, a line per tier, status and reason, with
/// their count: each reason is written once, however many trials it
/// stopped.
fn not_run_by_reason(records: &[TrialRecord]) -> Vec<String> {
    let mut by: BTreeMap<(&str, Status), BTreeMap<&str, usize>> = BTreeMap::new();
    for r in records.iter().filter(|r| not_run(r)) {
        let reason = r.message.trim_start_matches("not run: ").trim();
        let reason = reason.lines().next().unwrap_or("");
        *by.entry((r.trial.tier.as_str(), r.status))
            .or_default()
            .entry(reason)
            .or_default() += 1;
    }
    let mut out = Vec::new();
    for ((tier, status), reasons) in by {
        let mut reasons: Vec<(&str, usize)> = reasons.into_iter().collect();
        reasons.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let rest = reasons.split_off(reasons.len().min(MAX_REASONS));
        for (reason, n) in reasons {
            out.push(format!("{tier:>6} tier: {n} {status}: {reason}"));
        }
        if !rest.is_empty() {
            let n: usize = rest.iter().map(|(_, n)| n).sum();
            out.push(format!(
                "{tier:>6} tier: {n} {status} for {} other reasons (each in the results file)",
                rest.len()
            ));
        }
    }
    out
}

/// One environment in a line: its size and incantations.
pub(crate) fn describe_environment(e: &gridcheck_report::Tuning) -> String {
    format!(
        "{} instances x {} launches, delay < {} cycles, {} stress words, \
         stress on the test's lines {}, line burst {}, permute {}",
        e.instances,
        e.launches,
        e.max_delay_cycles,
        e.stress_words,
        e.stress_lines,
        e.line_burst,
        e.permute
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(trial: &str, status: Status, message: &str) -> TrialRecord {
        TrialRecord::new(trial.parse().unwrap(), status, message)
    }

    #[test]
    fn changed_facts_are_listed_once_a_test() {
        let rs = [
            rec(
                "gpu/sm_90/a.b/t",
                Status::Changed,
                "changed: the known x\nmore",
            ),
            rec("gpu/sm_90/c.d/t", Status::Changed, "changed: the known x"),
            rec("gpu/sm_90/a.b/u", Status::Known, "known (y)"),
        ];
        let c = changed(&rs);
        assert!(
            c.starts_with("CHANGED: 1 known fact(s) did not reproduce"),
            "{c}"
        );
        assert!(
            c.contains("  gpu/sm_90/a.b/t: changed: the known x\n"),
            "{c}"
        );
        assert!(!c.contains("more") && !c.contains("c.d"), "{c}");
        assert_eq!(changed(&rs[2..]), "");
        assert!(line(&rs[2]).starts_with("known "), "{}", line(&rs[2]));
    }

    use gridcheck_report::TrialId;

    fn not_supported(rule: &str, test: &str, reason: &str) -> TrialRecord {
        TrialRecord::new(
            TrialId::compile(rule, test),
            Status::NotSupported,
            format!("not run: {reason}"),
        )
    }

    #[test]
    fn trials_that_did_not_run_are_counted_by_reason_each_reason_once() {
        let mut records: Vec<TrialRecord> = (0..118)
            .map(|i| {
                not_supported(
                    "r",
                    &format!("t{i}"),
                    "no nvcc found. gridcheck looks at ...",
                )
            })
            .collect();
        records.push(not_supported("r", "odd", "kernels not built"));
        records.push(TrialRecord::new(
            TrialId::compile("r", "ok"),
            Status::Pass,
            "fine",
        ));
        let lines = not_run_by_reason(&records);
        assert_eq!(
            lines,
            [
                "static tier: 118 not-supported: no nvcc found. gridcheck looks at ...",
                "static tier: 1 not-supported: kernels not built",
            ]
        );
        // Neither a pass nor a trial that did not run gets a line of its own.
        assert!(!records.iter().any(listed));
        let fail = TrialRecord::new(TrialId::compile("r", "bad"), Status::Fail, "wrong");
        assert!(listed(&fail));
    }

    #[test]
    fn many_reasons_end_in_one_line_for_the_rest() {
        let records: Vec<TrialRecord> = (0..MAX_REASONS + 3)
            .map(|i| not_supported("r", &format!("t{i}"), &format!("reason {i}")))
            .collect();
        let lines = not_run_by_reason(&records);
        assert_eq!(lines.len(), MAX_REASONS + 1);
        assert_eq!(
            lines.last().map(String::as_str),
            Some("static tier: 3 not-supported for 3 other reasons (each in the results file)")
        );
    }
}
