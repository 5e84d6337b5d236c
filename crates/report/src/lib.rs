//! Records stored, judged and rendered. The record vocabulary (trial
//! names, the verdict diff, `TrialRecord` and what it carries) is the
//! `gridcheck-record` crate (`crates/record`), re-exported here whole, so
//! that a user of this crate names it from here as before. What stays:
//!
//! - storing and reading records: the results file (`results_file.rs`),
//!   recorded runs kept compressed (`stored.rs`), runs (`runs.rs`), the
//!   golden file (`golden.rs`);
//! - judging with the known facts (`conformance/facts/`, `facts.rs`), which
//!   turn a status into `xfail`, `known`, `known-hang` or `changed` where
//!   they apply (`applicability.rs` has that table), what each covers
//!   (`cover.rs`), the mutation score (`score.rs`), `sometimes.rs`;
//! - renderers: the summary, the litmus7-style text block (`block.rs`),
//!   JUnit, `report diff` (`run_diff.rs`), two CCCL releases' diff, the
//!   spread, the tuning report (`tune.rs`).
//!
//! The diff follows the table of ARCHITECTURE.md, "The verdict diff" (the
//! one place it is written; the site's *How to read a verdict* shows it).

mod applicability;
pub mod baseline;
mod block;
mod campaign_findings;
mod cover;
mod date;
pub mod facts;
mod golden;
mod junit;
pub mod rates;
mod release_diff;
mod results_file;
pub mod run_diff;
pub mod runs;
mod score;
mod sometimes;
pub mod spread;
mod stored;
pub mod summary;
mod tune;

// The record vocabulary, re-exported: every crate that names these types
// through this crate keeps doing so.
pub use applicability::{Applies, Here, program_of};
pub use block::litmus_block;
pub use campaign_findings::{RecordedFinding, recorded_findings};
pub use cover::{
    CoverCounts, CoverInputs, FactCover, FindingCover, MutantCover, NamedTest, cover_text,
};
pub use date::{utc_date, valid_date};
pub use facts::{
    ArchRange, Dependency, Envelope, FACTS_DIR, Fact, FactKind, Facts, LOCATION_WORDS, Place, slug,
    sm_number,
};
pub use golden::{GOLDEN_HEADER, golden};
pub use gridcheck_record::{
    Binary, CompileSummary, Count, Device, Diff, Environment, Escalation, EscalationStep,
    HardwareResult, LibraryControl, LibraryResult, LibraryRun, MAX_BUDGET_LAUNCHES, MAX_LINE_BURST,
    ModelSummary, MutantRecord, MutantRun, MutantStatus, Observation, Oracles, Reproducer, Row,
    SearchPoint, Status, Subject, TOOLCHAIN_FILE, TUNING_DIR, TestKey, Tier, ToolchainRecord,
    TrialId, TrialRecord, Tuning, USER_PROGRAMS, diff, major_minor, parse_search, rate_upper,
    rate_upper_95, under_current_names,
};
pub use junit::junit;
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
pub use tune::{HOLD_OUT_PERCENT, PointFigures, choose, figures, held_out, tuned_file};

#[cfg(test)]
mod tests {
    use super::*;
    use gridcheck_spec::{Litmus, State, load_sources};
    use std::collections::{BTreeMap, BTreeSet};

    fn litmus() -> Litmus {
        let spec = load_sources(
            &[("a.yaml".into(), gridcheck_fixture::ONE_LOAD_SPEC.into())],
            None,
        )
        .unwrap();
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
}
