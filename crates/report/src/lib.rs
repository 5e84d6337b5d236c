//! Results: the diff of the model's verdict against the hardware's
//! observation, the per-trial record written as JSON lines, and the
//! litmus7-style text block.
//!
//! The diff follows the table of ARCHITECTURE.md, "The verdict diff" (the
//! one place it is written; the site's *How to read a verdict* shows it).
//!
//! Then the known facts (`conformance/facts/`, `facts.rs`) turn a status
//! into `xfail`, `known`, `known-hang` or `changed` where they apply
//! (`applicability.rs` has that table).

mod applicability;
pub mod baseline;
mod block;
mod campaign_findings;
mod cover;
mod escalation;
pub mod facts;
mod golden;
mod junit;
mod library;
mod mutant;
mod rate_bound;
pub mod rates;
mod record;
mod release_diff;
mod results_file;
pub mod run_diff;
pub mod runs;
mod score;
mod sometimes;
pub mod spread;
mod stored;
pub mod summary;
mod toolchain;
mod trial;
mod tune;
mod tuning;
mod verdict;

pub use applicability::{Applies, Here, program_of};
pub use block::litmus_block;
pub use campaign_findings::{RecordedFinding, recorded_findings};
pub use cover::{
    CoverCounts, CoverInputs, FactCover, FindingCover, MutantCover, NamedTest, cover_text,
};
pub use escalation::{Escalation, EscalationStep};
pub use facts::{
    ArchRange, Dependency, Envelope, FACTS_DIR, Fact, FactKind, Facts, LOCATION_WORDS, Place, slug,
    sm_number, valid_date,
};
pub use golden::{GOLDEN_HEADER, golden};
pub use junit::junit;
pub use library::{LibraryControl, LibraryResult, LibraryRun, Reproducer};
pub use mutant::{Count, MutantRecord, MutantRun, MutantStatus};
pub use rate_bound::{rate_upper, rate_upper_95};
pub use record::{
    Binary, CompileSummary, Device, Environment, ModelSummary, Oracles, TrialRecord,
    under_current_names,
};
pub use release_diff::{ReleaseDiff, release_diff};
pub use results_file::{
    LinesRead, ResultsRead, Skipped, append_json_line, append_record, read_json_lines,
    read_results, read_results_file, repair_tail,
};
pub use runs::{RunChoice, RunRecords, RunStamp, split_runs};
pub use score::{Equivalence, Equivalent, Inside, Score, score_text};
pub use stored::{
    GZ_SUFFIX, MAX_DECOMPRESSED, RUN_BUDGET, find_stored, gzip, read_stored, stored_name,
};
pub use summary::Summary;
pub use toolchain::{TOOLCHAIN_FILE, ToolchainRecord, major_minor};
pub use trial::{Subject, TestKey, Tier, TrialId, USER_PROGRAMS};
pub use tune::{HOLD_OUT_PERCENT, PointFigures, choose, figures, held_out, tuned_file};
pub use tuning::{
    MAX_BUDGET_LAUNCHES, MAX_LINE_BURST, SearchPoint, TUNING_DIR, Tuning, parse_search,
};
pub use verdict::{Diff, HardwareResult, Observation, Row, Status, diff};

#[cfg(test)]
mod tests {
    use super::*;
    use gridcheck_spec::{Litmus, State, Verdict, load_sources};
    use std::collections::{BTreeMap, BTreeSet};

    fn litmus() -> Litmus {
        let yaml = "rules:
  - id: cdp2.a.b
    source: { seed: s, section: s }
    quote: q
    profile: cdp2
    tests: [t]
tests:
  - name: t
    kind: litmus
    memory: { x: 0 }
    kernels:
      - kernel: k
        launch: host
        threads:
          t0: [load r0 x]
    condition: exists k.t0.r0 == 1
    expect: forbidden
";
        let spec = load_sources(&[("a.yaml".into(), yaml.into())], None).unwrap();
        match &spec.tests[0].body {
            gridcheck_spec::TestBody::Litmus(l) => l.clone(),
            _ => unreachable!(),
        }
    }

    fn st(r0: u32) -> State {
        [("k.t0.r0".to_string(), r0), ("x".to_string(), 0)].into()
    }

    fn hw(counts: &[(u32, u64)], modeled: &[u32]) -> HardwareResult {
        let h: BTreeMap<State, u64> = counts.iter().map(|&(v, c)| (st(v), c)).collect();
        let m: BTreeSet<State> = modeled.iter().map(|&v| st(v)).collect();
        HardwareResult::classify(&litmus(), &h, &m).unwrap()
    }

    #[test]
    fn the_diff_table() {
        use Verdict::*;
        let never = hw(&[(0, 10)], &[0]);
        let sometimes = hw(&[(0, 5), (1, 5)], &[0, 1]);
        let always = hw(&[(1, 10)], &[1]);
        assert_eq!(never.observation, Observation::Never);
        assert_eq!(sometimes.observation, Observation::Sometimes);
        assert_eq!((sometimes.positive, sometimes.negative), (5, 5));
        assert_eq!(always.observation, Observation::Always);
        assert_eq!(diff(Forbidden, &never).status, Status::Pass);
        assert_eq!(diff(Forbidden, &sometimes).status, Status::Fail);
        assert_eq!(diff(Forbidden, &always).status, Status::Fail);
        assert_eq!(diff(Required, &always).status, Status::Pass);
        assert_eq!(diff(Required, &sometimes).status, Status::Fail);
        assert_eq!(diff(Allowed, &sometimes).status, Status::Pass);
        assert_eq!(diff(Allowed, &never).status, Status::QualityWarning);
        assert!(diff(Allowed, &never).findings[0].starts_with("unobserved"));
    }

    #[test]
    fn unmodeled_states_fail_but_never_hide_a_failure() {
        let h = hw(&[(0, 5), (1, 5)], &[0]);
        let d = diff(Verdict::Allowed, &h);
        assert_eq!(d.status, Status::Unmodeled);
        assert!(d.findings.iter().any(|f| f.starts_with("unmodeled")));
        assert_eq!(diff(Verdict::Forbidden, &h).status, Status::Fail);
        // Unobserved and unmodeled at once: the unmodeled state wins.
        let h = hw(&[(0, 5)], &[1]);
        assert_eq!(h.observation, Observation::Never);
        assert_eq!(diff(Verdict::Allowed, &h).status, Status::Unmodeled);
        // All states modeled: no unmodeled finding.
        let h = hw(&[(0, 5)], &[0]);
        assert_eq!(diff(Verdict::Allowed, &h).status, Status::QualityWarning);
    }

    #[test]
    fn nothing_measured_is_a_failure() {
        let mut h = hw(&[], &[]);
        h.launch_failures = 4;
        h.first_launch_error = Some("cudaErrorLaunchPendingCountExceeded".into());
        let d = diff(Verdict::Forbidden, &h);
        assert_eq!(d.status, Status::Fail);
        assert!(d.findings[0].contains("cudaErrorLaunchPendingCountExceeded"));
    }

    #[test]
    fn block_marks_satisfying_states() {
        let b = litmus_block("t", &litmus(), &hw(&[(0, 7), (1, 3)], &[0]));
        assert!(
            b.starts_with("Test t forbidden\n  Histogram (2 states"),
            "{b}"
        );
        assert!(b.contains("3 *! k.t0.r0=1; x=0"), "{b}");
        assert!(b.contains("7 :> k.t0.r0=0; x=0"), "{b}");
        assert!(b.contains("Positive: 3, Negative: 7"), "{b}");
    }

    #[test]
    fn statuses_are_kebab_case_in_json() {
        for (s, text) in [
            (Status::Known, "known"),
            (Status::Changed, "changed"),
            (Status::KnownHang, "known-hang"),
            (Status::Unmodeled, "unmodeled"),
            (Status::QualityWarning, "quality-warning"),
        ] {
            assert_eq!(s.as_str(), text);
            assert_eq!(serde_json::to_string(&s).unwrap(), format!("\"{text}\""));
            assert_eq!(
                serde_json::from_str::<Status>(&format!("\"{text}\"")).unwrap(),
                s
            );
        }
        assert!(serde_json::from_str::<Status>("\"knownhang\"").is_err());
    }

    #[test]
    fn records_round_trip_as_json() {
        let mut r = TrialRecord::new(TrialId::gpu("sm_90", "a", "b"), Status::QualityWarning, "m");
        r.hardware = Some(hw(&[(0, 1)], &[0]));
        let line = r.to_json_line();
        assert!(line.contains("\"status\":\"quality-warning\""), "{line}");
        assert!(
            line.starts_with(
                "{\"trial\":\"gpu/sm_90/a/b\",\"tier\":\"gpu\",\"rule\":\"a\",\"test\":\"b\","
            ),
            "{line}"
        );
        let back: TrialRecord = serde_json::from_str(&line).unwrap();
        assert_eq!(back, r);
        assert!(!line.contains("escalation"), "{line}");
        // With an escalation: written, and read back.
        let mut escalated = r.clone();
        escalated.escalation = Some(Escalation::of(vec![EscalationStep {
            environment: "alone".into(),
            instances: 64,
            observed: 0,
            budget_s: 1.0,
            histogram: Vec::new(),
        }]));
        let line2 = escalated.to_json_line();
        assert!(
            line2.contains("\"escalation\":{\"steps\":[{\"environment\":\"alone\""),
            "{line2}"
        );
        assert_eq!(
            serde_json::from_str::<TrialRecord>(&line2).unwrap(),
            escalated
        );
        let bad = line.replace("\"rule\":\"a\"", "\"rule\":\"z\"");
        let e = serde_json::from_str::<TrialRecord>(&bad).unwrap_err();
        assert!(e.to_string().contains("says tier `gpu`, rule `z`"), "{e}");
    }
}
