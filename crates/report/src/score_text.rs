//! The mutation score as text (`gridcheck_judge::Score` is its computation): what
//! `conformance --mutants` prints after a run and `conformance report
//! mutants` prints of a recorded one.

use std::collections::BTreeMap;
use std::fmt::Write;

use gridcheck_judge::{HOLD_OUT_PERCENT, Score};

use crate::tune::environments_text;
use crate::{MutantRecord, MutantStatus};

/// The score as the harness prints it after a `--mutants` run (and
/// `conformance report mutants`): the score, what was left out, per
/// operator and per test, the equivalent survivors with their facts, the
/// other survivors (misses), and after `--tune` each environment's kills
/// per GPU second.
pub fn score_text(records: &[MutantRecord], s: &Score, tune: bool, tuned_from: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nmutation score: {} killed; {} equivalent on their GPU (by {}); {} candidates are not mutants; {:.2} GPU s in all; slowest kill {:.3} GPU s",
        s.overall,
        s.equivalent.len(),
        s.equivalence,
        s.not_mutants,
        s.gpu_s,
        s.slowest_kill_s
    );
    let _ = writeln!(out, "environment: {tuned_from}");
    let _ = writeln!(
        out,
        "  held out of a tuning search ({} % of the tests, by name): {}",
        HOLD_OUT_PERCENT, s.held_out
    );
    for (what, v) in &s.left_out {
        let _ = writeln!(out, "  left out of the score: {v} {what}");
    }
    let _ = writeln!(out, "per operator:");
    for (op, c) in &s.per_operator {
        let _ = writeln!(out, "  {op:<26} {c}");
    }
    let _ = writeln!(out, "per test:");
    for (t, c) in &s.per_test {
        let _ = writeln!(out, "  {t:<56} {c}");
    }
    if !s.equivalent.is_empty() {
        let _ = writeln!(out, "equivalent on their GPU (not in the score):");
        for e in &s.equivalent {
            let _ = writeln!(
                out,
                "  {}: {} by {} ({}; {}): {}",
                e.mutant, e.fact, e.by, e.at, e.place, e.summary
            );
        }
    }
    let equivalent = |m: &str| s.equivalent.iter().any(|e| e.mutant == m);
    let mut last: BTreeMap<&str, &MutantRecord> = BTreeMap::new();
    for r in records {
        last.insert(&r.mutant, r);
    }
    let survivors: Vec<&&MutantRecord> = last
        .values()
        .filter(|r| r.status == MutantStatus::Survived && !equivalent(&r.mutant))
        .collect();
    if !survivors.is_empty() {
        let _ = writeln!(out, "survivors:");
        for r in survivors {
            let _ = writeln!(out, "  {} [{}]: {}", r.mutant, r.site, r.message);
        }
    }
    if tune {
        out += &environments_text(records);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Count;
    use gridcheck_judge::Equivalent;
    use gridcheck_spec::Verdict;

    fn rec(mutant: &str, status: MutantStatus) -> MutantRecord {
        MutantRecord {
            mutant: mutant.into(),
            test: mutant.split('~').next().unwrap_or_default().into(),
            operator: "x".into(),
            site: format!("site of {mutant}"),
            original: Verdict::Forbidden,
            status,
            message: "m".into(),
            verdict: Some(Verdict::Allowed),
            decided_by: "both".into(),
            kill_states: Vec::new(),
            runs: Vec::new(),
            budget_s: 1.0,
            environment: None,
            commit: None,
        }
    }

    #[test]
    fn the_text_lists_equivalent_survivors_with_their_facts_apart_from_the_misses() {
        let records = vec![
            rec("a~x", MutantStatus::Survived),
            rec("c~x", MutantStatus::Survived),
            rec("d~x", MutantStatus::Survived),
            rec("e~x", MutantStatus::Killed),
        ];
        let s = Score {
            overall: Count {
                killed: 1,
                mutants: 3,
            },
            equivalent: vec![Equivalent {
                mutant: "a~x".into(),
                fact: "gpu/sm_90/a".into(),
                at: "f.toml:1".into(),
                summary: "never shown".into(),
                place: "measured here: H100".into(),
                by: "name".into(),
            }],
            equivalence: "name",
            ..Score::default()
        };
        let text = score_text(&records, &s, false, "tuned");
        assert!(
            text.contains("1/3 (33.3 %) killed; 1 equivalent on their GPU (by name)"),
            "{text}"
        );
        assert!(
            text.contains(
                "equivalent on their GPU (not in the score):\n  a~x: gpu/sm_90/a by name (f.toml:1; measured here: H100): never shown"
            ),
            "{text}"
        );
        let survivors = &text[text.find("survivors:").unwrap()..];
        assert!(
            survivors.contains("c~x [site of c~x]: m")
                && survivors.contains("d~x")
                && !survivors.contains("a~x")
                && !survivors.contains("e~x"),
            "{text}"
        );
        // Without `--tune`, no environments; with it, their table.
        assert!(!text.contains("environments ("), "{text}");
        let tuned = score_text(&records, &s, true, "tuned");
        assert!(tuned.contains("environments (chosen on:"), "{tuned}");
    }
}
