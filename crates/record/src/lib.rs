//! The record vocabulary: what a trial's record is. The names of trials
//! and tests ([`TrialId`], [`TestKey`]: their only builders and parsers),
//! the verdict diff ([`diff`], [`Status`]), the per-trial record
//! ([`TrialRecord`]) and what it carries: the environment and its tuning
//! ([`Tuning`]), the toolchain, an escalation and the bound on an unseen
//! outcome's rate, a library case; a mutant's record; a device name's
//! [`slug`].
//!
//! It imports nothing from the crates that store, judge or render records
//! (`crates/store` stores and reads them, `crates/judge` judges them with
//! the known facts, `crates/report` renders them); they all speak these
//! types.

mod escalation;
mod library;
mod mutant;
mod rate_bound;
mod record;
mod slug;
mod stale;
mod toolchain;
mod trial;
mod tuning;
mod verdict;

pub use escalation::{Escalation, EscalationStep};
pub use library::{LibraryControl, LibraryResult, LibraryRun, Reproducer};
pub use mutant::{Count, MutantRecord, MutantRun, MutantStatus};
pub use rate_bound::{RATE_Z, rate_upper, rate_upper_95, two_proportion_z};
pub use record::{
    Binary, CompileSummary, Device, Environment, ModelSummary, Oracles, TrialRecord,
    under_current_names,
};
pub use slug::slug;
pub use stale::StaleWords;
pub use toolchain::{TOOLCHAIN_FILE, ToolchainRecord, major_minor};
pub use trial::{Subject, TestKey, Tier, TrialId, USER_PROGRAMS};
pub use tuning::{
    MAX_BUDGET_LAUNCHES, MAX_LINE_BURST, SearchPoint, TUNING_DIR, Tuning, parse_search,
};
pub use verdict::{Diff, HardwareResult, Observation, Row, Severity, Status, diff};

#[cfg(test)]
mod tests;
