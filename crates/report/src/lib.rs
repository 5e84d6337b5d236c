//! Records rendered: the summary (`summary.rs`, with the block of what
//! each fact covers), the litmus7-style text block (`block.rs`), JUnit,
//! `report diff` (`run_diff.rs`, with the spread of a GPU's baseline and
//! the facts that reproduce only sometimes: `within_facts.rs`), two CCCL
//! releases' diff, the tuning report (`tune.rs`), the mutation score's
//! text (`score_text.rs`), litmus instance rates.
//!
//! Judging with the known facts is `gridcheck-judge` (`crates/judge`), the
//! record vocabulary (trial names, the verdict diff, `TrialRecord` and what
//! it carries) `gridcheck-record` (`crates/record`), storing and reading
//! records (the results file, recorded runs, runs, goldens, campaign
//! findings, benchmark baselines, record dates) `gridcheck-store`
//! (`crates/store`). All three are re-exported here, so that a user of
//! this crate names them from here as before; none of them depends on
//! this crate.
//!
//! The diff follows the table of ARCHITECTURE.md, "The verdict diff" (the
//! one place it is written; the site's *How to read a verdict* shows it).

mod block;
mod junit;
pub mod rates;
mod release_diff;
pub mod run_diff;
mod score_text;
pub mod spread;
pub mod summary;
mod tune;
mod within_facts;

pub use block::litmus_block;
pub use junit::junit;
pub use release_diff::{ReleaseDiff, release_diff};
pub use score_text::score_text;
pub use summary::{Summary, cover_text};
pub use tune::{PointFigures, choose, figures, tuned_file};

// Judging with the facts, the record vocabulary and the storage of
// records, re-exported: every crate that names them through this crate
// keeps doing so.
pub use gridcheck_judge::{
    Applies, ArchRange, CoverCounts, CoverInputs, Dependency, Envelope, Equivalence, Equivalent,
    FACTS_DIR, Fact, FactCover, FactKind, Facts, FindingCover, HOLD_OUT_PERCENT, Here, Inside,
    LOCATION_WORDS, MutantCover, NamedTest, Place, Score, facts, held_out, program_of, slug,
    sm_number,
};
pub use gridcheck_record::{
    Binary, CompileSummary, Count, Device, Diff, Environment, Escalation, EscalationStep,
    HardwareResult, LibraryControl, LibraryResult, LibraryRun, MAX_BUDGET_LAUNCHES, MAX_LINE_BURST,
    ModelSummary, MutantRecord, MutantRun, MutantStatus, Observation, Oracles, Reproducer, Row,
    SearchPoint, StaleWords, Status, Subject, TOOLCHAIN_FILE, TUNING_DIR, TestKey, Tier,
    ToolchainRecord, TrialId, TrialRecord, Tuning, USER_PROGRAMS, diff, major_minor, parse_search,
    rate_upper, rate_upper_95, under_current_names,
};
pub use gridcheck_store::{
    GOLDEN_HEADER, GZ_SUFFIX, LinesRead, MAX_DECOMPRESSED, RUN_BUDGET, RecordedFinding,
    ResultsRead, RunChoice, RunRecords, RunStamp, Skipped, append_json_line, append_record,
    baseline, find_stored, golden, gzip, now_secs, read_json_lines, read_results,
    read_results_file, read_stored, recorded_findings, repair_tail, runs, split_runs, stored_name,
    utc_date, valid_date,
};

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
