//! What each fact covers ([`Facts::cover`]): the spec's tests, the
//! recorded mutants and the recorded campaign findings, by the same
//! matcher that judges them (`Fact::shape_of`, `Fact::shape_covers_mutant`).
//! The site's discrepancies page and the run's summary both show it, from
//! this one list, so their counts agree:
//!
//! - tests: those the fact names (its key's test), apart from those its
//!   shape matches beyond them;
//! - mutants: the mutants of the mutation records given (the last record
//!   of a mutant on a GPU, candidates that are not mutants left out) whose
//!   program its shape matches, each within or outside its envelope;
//! - findings: the recorded campaign findings whose program its shape
//!   matches and whose class its kind explains (`FactKind::of_finding`);
//!   a finding without a recorded program cannot be matched, and is
//!   counted apart.

use std::collections::BTreeMap;
use std::fmt;

use gridcheck_record::{MutantRecord, MutantStatus, Tier};
use gridcheck_spec::{Litmus, Spec, TestBody};
use gridcheck_store::RecordedFinding;
use serde::Serialize;

use crate::score::Inside;
use crate::{Fact, FactKind, Facts};

/// What the facts are matched against.
#[derive(Debug, Clone, Copy)]
pub struct CoverInputs<'a> {
    pub spec: &'a Spec,
    /// Mutation records (`mutants.jsonl`), of one run or several GPUs'.
    pub mutants: &'a [MutantRecord],
    /// Every mutant's program by name (`gridcheck_mutate::programs`).
    pub programs: &'a BTreeMap<String, Litmus>,
    /// The recorded campaign findings (`recorded_findings`).
    pub findings: &'a [RecordedFinding],
}

/// A test the fact names, and whether its shape matches it too.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NamedTest {
    pub test: String,
    /// `false` for a fact without a shape, or whose shape misses its own
    /// test (a shape to fix).
    pub shape_matches: bool,
}

/// A mutant the fact's shape covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MutantCover {
    pub mutant: String,
    /// The GPU it ran on, when recorded.
    pub gpu: Option<String>,
    pub status: MutantStatus,
    #[serde(flatten)]
    pub inside: Inside,
}

/// A campaign finding the fact covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FindingCover {
    pub campaign: String,
    pub line: usize,
    pub class: String,
    pub first: String,
    pub ended: String,
}

impl FactKind {
    /// The kind of fact that explains a campaign finding of `class`: a
    /// hang a hang, a violation or an unmodeled state a discrepancy; none
    /// another (a launch error).
    pub fn of_finding(class: &str) -> Option<FactKind> {
        match class {
            "hang" => Some(FactKind::Hang),
            "violation" | "unmodeled" => Some(FactKind::Discrepancy),
            "launch-error" => Some(FactKind::LaunchError),
            _ => None,
        }
    }
}

/// What one fact covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FactCover {
    /// The fact's key and `file:line`.
    pub fact: String,
    pub at: String,
    pub kind: &'static str,
    /// Whether it states a shape (without one it covers its key only).
    pub shape: bool,
    /// Whether it states an envelope (an `unobserved` fact does).
    pub envelope: bool,
    pub named: Vec<NamedTest>,
    /// The spec's tests its shape matches that it does not name.
    pub by_shape: Vec<String>,
    pub mutants: Vec<MutantCover>,
    pub findings: Vec<FindingCover>,
    /// Recorded findings of a class its kind explains whose program is not
    /// recorded: not matched either way.
    pub findings_unmatched: usize,
}

/// The counts of a [`FactCover`]: what the summary's line and the page's
/// count line both print.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CoverCounts {
    pub fact: String,
    pub kind: &'static str,
    pub shape: bool,
    pub by_name: usize,
    pub by_shape: usize,
    pub mutants: usize,
    /// Of those, within the envelope and outside it; `None` for a fact
    /// without an envelope.
    pub within: Option<usize>,
    pub outside: Option<usize>,
    pub findings: usize,
    pub findings_unmatched: usize,
}

impl Facts {
    /// What each fact covers, in the facts' order.
    pub fn cover(&self, inputs: &CoverInputs) -> Vec<FactCover> {
        self.entries.iter().map(|f| f.cover(inputs)).collect()
    }
}

impl Fact {
    /// What this fact covers (see the module docs).
    pub fn cover(&self, inputs: &CoverInputs) -> FactCover {
        let named = self.subject.test().to_string();
        fn litmus(t: &gridcheck_spec::Test) -> Option<&Litmus> {
            match &t.body {
                TestBody::Litmus(l) => Some(l),
                _ => None,
            }
        }
        let matches = |l: &Litmus| self.subject.tier() == Tier::Gpu && self.shape_of(l).is_some();
        let named_matches = inputs
            .spec
            .test(&named)
            .and_then(litmus)
            .is_some_and(matches);
        let by_shape = inputs
            .spec
            .tests
            .iter()
            .filter(|t| t.name != named && litmus(t).is_some_and(matches))
            .map(|t| t.name.clone())
            .collect();
        let kind_fits = |f: &&RecordedFinding| FactKind::of_finding(&f.class) == Some(self.kind);
        let (with, without): (Vec<&RecordedFinding>, Vec<&RecordedFinding>) = inputs
            .findings
            .iter()
            .filter(kind_fits)
            .partition(|f| f.program.is_ok());
        FactCover {
            fact: self.subject.to_string(),
            at: self.at(),
            kind: self.kind.as_str(),
            shape: !self.shape.is_empty(),
            envelope: self.envelope.is_some(),
            named: vec![NamedTest {
                test: named,
                shape_matches: named_matches,
            }],
            by_shape,
            mutants: self.mutants_covered(inputs),
            findings: with
                .into_iter()
                .filter(|f| f.program.as_ref().is_ok_and(&matches))
                .map(|f| FindingCover {
                    campaign: f.campaign.clone(),
                    line: f.line,
                    class: f.class.clone(),
                    first: f.first.clone(),
                    ended: f.ended.clone(),
                })
                .collect(),
            findings_unmatched: if self.shape.is_empty() {
                0
            } else {
                without.len()
            },
        }
    }

    /// The mutants its shape covers: the last record of each mutant on each
    /// GPU, in name then GPU order; a candidate the oracles found is not a
    /// mutant is left out, as the score leaves it out.
    fn mutants_covered(&self, inputs: &CoverInputs) -> Vec<MutantCover> {
        let mut last: BTreeMap<(&str, Option<&str>), &MutantRecord> = BTreeMap::new();
        for m in inputs.mutants {
            let gpu = m.environment.as_ref().map(|e| e.gpu.as_str());
            last.insert((&m.mutant, gpu), m);
        }
        last.into_iter()
            .filter(|(_, m)| m.status != MutantStatus::NotAMutant)
            .filter_map(|((name, gpu), m)| {
                let inside = self.shape_covers_mutant(m, inputs.programs)?;
                Some(MutantCover {
                    mutant: name.to_string(),
                    gpu: gpu.map(str::to_string),
                    status: m.status,
                    inside,
                })
            })
            .collect()
    }
}

impl FactCover {
    /// Its counts, for a line.
    pub fn counts(&self) -> CoverCounts {
        let envelope = self.envelope;
        let within = self
            .mutants
            .iter()
            .filter(|m| m.inside == Inside::Within)
            .count();
        CoverCounts {
            fact: self.fact.clone(),
            kind: self.kind,
            shape: self.shape,
            by_name: self.named.len(),
            by_shape: self.by_shape.len(),
            mutants: self.mutants.len(),
            within: envelope.then_some(within),
            outside: envelope.then_some(self.mutants.len() - within),
            findings: self.findings.len(),
            findings_unmatched: self.findings_unmatched,
        }
    }
}

impl fmt::Display for CoverCounts {
    /// `tests 1 by name, 2 by shape only; mutants 3 (2 within the
    /// envelope, 1 outside); findings 1`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.shape {
            return write!(
                f,
                "tests {} by name (no shape: its key only); no mutant or finding matched",
                self.by_name
            );
        }
        write!(
            f,
            "tests {} by name, {} by shape only; mutants {}",
            self.by_name, self.by_shape, self.mutants
        )?;
        if let (Some(w), Some(o)) = (self.within, self.outside) {
            write!(f, " ({w} within the envelope, {o} outside)")?;
        }
        match self.findings {
            0 => write!(f, "; no recorded finding")?,
            n => write!(f, "; findings {n}")?,
        }
        if self.findings_unmatched > 0 {
            write!(
                f,
                " ({} of its kind without a recorded program)",
                self.findings_unmatched
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
