//! Records judged with the known facts (`conformance/facts/`). The record
//! vocabulary is `gridcheck-record` (`crates/record`), the storage of
//! records `gridcheck-store` (`crates/store`); rendering what is judged is
//! `gridcheck-report` (`crates/report`), which depends on this crate and
//! re-exports it: this crate never depends on it. What this crate holds:
//!
//! - the facts' file format (`facts.rs`), where each fact applies and the
//!   status it gives a finished trial (`xfail`, `known`, `known-hang` or
//!   `changed`; `applicability.rs` has that table), and today's facts
//!   applied again to a recorded trial (the rejudge);
//! - what each fact covers: the spec's tests, the recorded mutants and
//!   campaign findings (`cover.rs`);
//! - the mutation score, with the survivors a fact makes equivalent on
//!   their GPU (`score.rs`), and the tests a tuning search holds out
//!   (`held_out.rs`);
//! - the facts that reproduce only sometimes, which `report diff` asks
//!   about a trial that moved between showing a fact and not
//!   (`sometimes.rs`).

mod applicability;
mod cover;
pub mod facts;
mod held_out;
mod score;
mod sometimes;

pub use applicability::{Applies, Here, program_of};
pub use cover::{CoverCounts, CoverInputs, FactCover, FindingCover, MutantCover, NamedTest};
pub use facts::{
    ArchRange, Dependency, Envelope, FACTS_DIR, Fact, FactKind, Facts, LOCATION_WORDS, Place, slug,
    sm_number,
};
pub use held_out::{HOLD_OUT_PERCENT, held_out};
pub use score::{Equivalence, Equivalent, Inside, Score};
