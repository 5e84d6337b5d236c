//! Where a fact applies, and the status a finished trial gets from the facts
//! that cover it. A fact covers a trial when its key names the trial, or
//! the trial's test on the same tier (on a GPU, the key's architecture, or
//! every architecture of the fact's `sm` range). It applies where the trial
//! ran when one place it was measured agrees with that machine on
//! everything its `depends_on` names. Then:
//!
//! | the trial | the fact | status |
//! |---|---|---|
//! | fail, crash or unmodeled | a discrepancy measured on this GPU model with this driver (a compile-time fact: this nvcc release, and the place's architecture if it gives one) | xfail |
//! | fail, crash or unmodeled | a discrepancy that applies, never measured here | known (names where it was first measured) |
//! | fail, crash or unmodeled | a discrepancy measured only where what it depends on differs (another driver, device runtime, nvcc, GPU model) | known (names the difference: the fact travels, it is not a new failure) |
//! | timeout | a hang, as for a discrepancy | known-hang |
//! | quality-warning | an `unobserved` fact, as for a discrepancy | xfail or known |
//! | pass or quality-warning | any other fact that covers it | changed (not a failure of the run, shown loudly; it names the difference where there is one) |
//! | anything | a fact outside its architecture range | unchanged, the message says why |
//! | not-run, not-supported, oracle-conflict | any | unchanged |
//!
//! A fail with only a hang, or a timeout with only a discrepancy, stays as
//! it is: the fact says something else happened. A fact that applies (its
//! dependencies agree with a place) is preferred to one measured only
//! under other values.

use gridcheck_record::{Environment, Status, Subject, Tier, TrialId, TrialRecord, major_minor};
use gridcheck_spec::Litmus;

use crate::{Dependency, Fact, FactKind, Facts, Place, slug};

/// The machine a trial ran on, as far as the facts care.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Here {
    pub gpu: Option<String>,
    pub sm: Option<String>,
    /// The kernel driver's release.
    pub driver: Option<String>,
    /// The device runtime's CUDA version: the toolkit's (the harness's nvcc
    /// builds the kernels and links its `libcudadevrt`).
    pub device_runtime: Option<String>,
    pub toolkit: Option<String>,
    /// The CCCL release a library trial's program was built from.
    pub cccl: Option<String>,
}

impl Here {
    /// Where a record's trial ran: its GPU environment (the device runtime
    /// and toolkit of the toolchain that built its kernels, when the record
    /// names one), else its compiler.
    pub fn of(rec: &TrialRecord) -> Here {
        let mut h = rec
            .environment
            .as_ref()
            .map(Here::of_environment)
            .unwrap_or_default();
        if let Some(c) = &rec.compile {
            h.toolkit = Some(c.nvcc.clone());
        }
        // A machine-code trial ran on no GPU: its architecture is its own.
        if h.sm.is_none() {
            h.sm = rec.trial.sm.clone();
        }
        h.cccl = rec.library.as_ref().map(|l| l.release.clone());
        h
    }

    /// Where a GPU environment is: its GPU, architecture and driver, and
    /// the kernels' toolchain when it names one (its libcudadevrt is the
    /// one linked in), else the harness's nvcc.
    pub fn of_environment(e: &Environment) -> Here {
        let built_by = e
            .toolchain
            .as_ref()
            .map(|t| t.nvcc.clone())
            .or(e.nvcc.clone());
        Here {
            gpu: Some(e.gpu.clone()),
            sm: Some(e.sm.clone()),
            driver: e.driver_version.clone(),
            device_runtime: built_by.clone(),
            toolkit: built_by,
            cccl: None,
        }
    }
}

/// Whether a place agrees with the machine on one dependency (an
/// architecture range is checked on the trial, not on places).
fn agrees(d: &Dependency, p: &Place, here: &Here) -> bool {
    let same = |a: &Option<String>, b: &Option<String>, f: fn(&str) -> String| match (a, b) {
        (Some(a), Some(b)) => f(a) == f(b),
        _ => false,
    };
    match d {
        Dependency::GpuModel => same(&p.gpu, &here.gpu, slug),
        Dependency::Driver => same(&p.driver, &here.driver, |s| s.to_string()),
        Dependency::DeviceRuntime => same(&p.device_runtime, &here.device_runtime, major_minor),
        Dependency::Toolkit => same(&p.toolkit, &here.toolkit, major_minor),
        Dependency::Cccl => same(&p.cccl, &here.cccl, major_minor),
        Dependency::Arch(_) => true,
    }
}

/// What `depends_on` says of a dependency the machine does not match.
fn mismatch(d: &Dependency, here: &Here) -> String {
    let or_unknown = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
    match d {
        Dependency::GpuModel => format!("the GPU here is {}", or_unknown(&here.gpu)),
        Dependency::Driver => format!("the driver here is {}", or_unknown(&here.driver)),
        Dependency::DeviceRuntime => format!(
            "the device runtime here is {}",
            or_unknown(&here.device_runtime)
        ),
        Dependency::Toolkit => format!("nvcc here is {}", or_unknown(&here.toolkit)),
        Dependency::Cccl => format!("the CCCL here is {}'s", or_unknown(&here.cccl)),
        Dependency::Arch(_) => format!("the architecture here is {}", or_unknown(&here.sm)),
    }
}

/// Where a fact stands on one machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Applies<'a> {
    /// Measured on this GPU model with this driver (the place).
    Measured(&'a Place),
    /// It applies; first measured at the place.
    Elsewhere(&'a Place),
    /// It was measured only where something it depends on differs from
    /// here (first at the place; why: what differs). It still travels:
    /// the same failure here is known, its absence a change.
    Beyond(&'a Place, String),
    /// It does not apply (outside its architecture range, or never
    /// measured), and why.
    No(String),
}

impl Applies<'_> {
    /// Preference among the facts that cover a trial: measured here, then
    /// applying, then measured under other dependencies.
    pub(crate) fn rank(&self) -> u8 {
        match self {
            Applies::Measured(_) => 0,
            Applies::Elsewhere(_) => 1,
            Applies::Beyond(..) => 2,
            Applies::No(_) => 3,
        }
    }

    /// Where the fact was measured, and for `Beyond`, what differs.
    fn place(&self) -> Option<(&Place, Option<&str>)> {
        match self {
            Applies::Measured(p) | Applies::Elsewhere(p) => Some((p, None)),
            Applies::Beyond(p, why) => Some((p, Some(why.as_str()))),
            Applies::No(_) => None,
        }
    }
}

impl Fact {
    /// Whether the fact is about this trial (its test, or itself), on this
    /// architecture.
    pub fn covers(&self, trial: &TrialId) -> bool {
        let (tier, rule, test) = match &self.subject {
            Subject::Trial(t) => (t.tier, Some(&t.rule), &t.test),
            // A library test key names the algorithm: every case of it.
            Subject::Test(k) if k.tier == Tier::Library => (k.tier, Some(&k.test), &trial.test),
            Subject::Test(k) => (k.tier, None, &k.test),
        };
        tier == trial.tier
            && *test == trial.test
            && rule.is_none_or(|r| *r == trial.rule)
            && self.covers_arch(trial.sm.as_deref())
    }

    /// Whether a trial it covers ran on a release it was measured on: a
    /// library fact's trial of a CCCL release among its places' `cccl`;
    /// any trial of any other fact. A library fact covers every release's
    /// cases of its algorithm (another release is `known` or `changed`),
    /// but is shown by its own releases' runs first.
    pub fn on_measured_release(&self, trial: &TrialId) -> bool {
        trial.tier != Tier::Library
            || self
                .measured
                .iter()
                .any(|p| p.cccl.is_some() && p.cccl == trial.toolchain)
    }

    /// Whether a trial on `sm` is on the fact's architecture: its key's, or
    /// one of its range.
    pub fn covers_arch(&self, sm: Option<&str>) -> bool {
        let key = match &self.subject {
            Subject::Trial(t) => t.sm.as_deref(),
            Subject::Test(k) => k.sm.as_deref(),
        };
        match (sm, self.arch_range()) {
            (Some(here), Some(r)) => r.contains(here),
            _ => key == sm,
        }
    }

    /// Whether it applies on the machine `here`.
    pub fn applies(&self, here: &Here) -> Applies<'_> {
        if let (Some(r), Some(sm)) = (self.arch_range(), &here.sm)
            && !r.contains(sm)
        {
            return Applies::No(format!(
                "{}, outside `{}`",
                mismatch(&Dependency::Arch(r), here),
                Dependency::Arch(r)
            ));
        }
        let fits = |p: &&Place| self.depends_on.iter().all(|d| agrees(d, p, here));
        let Some(first) = self.measured.iter().find(fits) else {
            let d = self
                .depends_on
                .iter()
                .find(|d| !self.measured.iter().any(|p| agrees(d, p, here)))
                .or(self.depends_on.first());
            let why = d.map(|d| mismatch(d, here)).unwrap_or_default();
            let why = format!(
                "it depends on {} and no place it was measured agrees ({why})",
                self.depends_on_text()
            );
            return match self.measured.first() {
                Some(p) => Applies::Beyond(p, why),
                None => Applies::No(why),
            };
        };
        // This exact environment: the GPU model and driver, or for a
        // compile-time fact the same nvcc release.
        let exact = self.measured.iter().filter(fits).find(|p| {
            if matches!(self.subject.tier(), Tier::Gpu | Tier::Library) {
                agrees(&Dependency::GpuModel, p, here) && agrees(&Dependency::Driver, p, here)
            } else {
                p.toolkit.is_some()
                    && p.toolkit == here.toolkit
                    && (p.sm.is_none() || p.sm == here.sm)
            }
        });
        match exact {
            Some(p) => Applies::Measured(p),
            None => Applies::Elsewhere(first),
        }
    }
}

impl Facts {
    /// The facts about a trial: those naming the trial first, then those
    /// naming its test.
    pub fn covering<'a>(&'a self, trial: &TrialId) -> Vec<&'a Fact> {
        let mut v: Vec<&Fact> = self.entries.iter().filter(|f| f.covers(trial)).collect();
        v.sort_by_key(|f| matches!(f.subject, Subject::Test(_)));
        v
    }

    /// The status and message a finished trial gets from the facts that
    /// cover it by their keys (the table of the module docs).
    pub fn apply(&self, rec: &TrialRecord) -> (Status, String) {
        self.apply_to(rec, None)
    }

    /// As [`Facts::apply`], with the trial's litmus program (its test's, as
    /// the spec has it now): a failure, timeout or unobserved outcome that
    /// no fact of its key explains is judged by a fact whose shape covers
    /// the program (`known by shape of fact <key>`), where that fact
    /// applies and, for an `unobserved` fact, where its envelope covers
    /// the run. A pass is never judged by shape: the fact was measured on
    /// its own tests, and another of the mechanism need not show it.
    pub fn apply_to(&self, rec: &TrialRecord, program: Option<&Litmus>) -> (Status, String) {
        let (status, message) = (rec.status, rec.message.clone());
        let here = Here::of(rec);
        let by_shape = || program.and_then(|p| self.by_shape(rec, p, &here));
        let covering = self.covering(&rec.trial);
        if covering.is_empty() {
            return by_shape().unwrap_or((status, message));
        }
        let mut applying: Vec<(&Fact, Applies)> = covering
            .iter()
            .map(|f| (*f, f.applies(&here)))
            .filter(|(_, a)| !matches!(a, Applies::No(_)))
            .collect();
        applying.sort_by_key(|(_, a)| a.rank());
        let of_kind = |k: FactKind| applying.iter().find(|(f, _)| f.kind == k);
        let found = match status {
            Status::Fail | Status::Crash | Status::Unmodeled => of_kind(FactKind::Discrepancy),
            Status::Timeout => of_kind(FactKind::Hang),
            Status::QualityWarning => of_kind(FactKind::Unobserved).or(applying.first()),
            Status::Pass => applying.first(),
            _ => return (status, message),
        };
        let Some((f, a)) = found else {
            if let Some(j) = by_shape() {
                return j;
            }
            let why: Vec<String> = covering
                .iter()
                .map(|f| match f.applies(&here) {
                    Applies::No(why) => format!(
                        "{} ({}) does not apply here: {why}",
                        f.at(),
                        f.kind.as_str()
                    ),
                    _ => format!("{} is a {}, not a {status}", f.at(), f.kind.as_str()),
                })
                .collect();
            if matches!(status, Status::Pass | Status::QualityWarning) {
                return (status, message);
            }
            return (
                status,
                format!(
                    "{message}\n(a known fact covers this test: {})",
                    why.join("; ")
                ),
            );
        };
        judged(f, a, status, &message, None)
    }

    /// The judgement of a failure, timeout or unobserved outcome by the
    /// facts whose shape covers `program` (not their key: those came
    /// first), the most applicable first.
    fn by_shape(
        &self,
        rec: &TrialRecord,
        program: &Litmus,
        here: &Here,
    ) -> Option<(Status, String)> {
        let kind = match rec.status {
            Status::Fail | Status::Crash | Status::Unmodeled => FactKind::Discrepancy,
            Status::Timeout => FactKind::Hang,
            Status::QualityWarning => FactKind::Unobserved,
            _ => return None,
        };
        let env = rec.environment.as_ref();
        let mut found: Vec<(&Fact, Applies)> = self
            .entries
            .iter()
            .filter(|f| f.kind == kind && !f.covers(&rec.trial))
            .filter(|f| f.shape_covers(&rec.trial, program))
            .filter(|f| {
                f.envelope.as_ref().is_none_or(|e| {
                    env.is_some_and(|env| {
                        e.covers(
                            &env.gpu,
                            env.tuning_file.as_deref(),
                            program.largest_location_words(),
                        )
                        .is_ok()
                    })
                })
            })
            .map(|f| (f, f.applies(here)))
            .filter(|(_, a)| !matches!(a, Applies::No(_)))
            .collect();
        found.sort_by_key(|(_, a)| a.rank());
        let (f, a) = found.into_iter().next()?;
        Some(judged(f, &a, rec.status, &rec.message, Some(program)))
    }
}

/// The status and message a fact that applies gives a trial (the table of
/// the module docs); `by_shape`: the program its shape covers, when the
/// fact covers the trial by shape, not by its key.
fn judged(
    f: &Fact,
    a: &Applies,
    status: Status,
    message: &str,
    by_shape: Option<&Litmus>,
) -> (Status, String) {
    let summary = &f.summary;
    let at = match by_shape.and_then(|p| f.shape_of(p)) {
        Some(shape) => format!(
            "known by shape of fact {} (shape `{shape}`), {}",
            f.subject,
            f.at()
        ),
        None => f.at(),
    };
    let Some((place, beyond)) = a.place() else {
        unreachable!("facts that do not apply are filtered above")
    };
    // Where it was measured, as a message says it.
    let where_ = match (a, beyond) {
        (Applies::Measured(p), _) => format!("measured here: {p}"),
        (_, Some(why)) => {
            format!("first measured on {place}, not under this configuration: {why}; the same here")
        }
        _ => format!("first measured on {place}, not yet on this machine"),
    };
    match (status, a) {
        (Status::Pass | Status::QualityWarning, _) if f.sometimes => (
            status,
            format!(
                "{message}\n(the known {} \"{summary}\" ({at}) shows only in some runs; not in this one)",
                f.kind.as_str()
            ),
        ),
        (Status::QualityWarning, a) if f.kind == FactKind::Unobserved => {
            let status = match a {
                Applies::Measured(_) => Status::Xfail,
                _ => Status::Known,
            };
            (
                status,
                format!("known, stronger than the guide ({summary}; {where_}; {at}): {message}"),
            )
        }
        (Status::Pass | Status::QualityWarning, _) => {
            let how = match beyond {
                Some(why) => format!(
                    "did not reproduce here ({status}), where {why}: fixed here, or the fact \
                         needs this place"
                ),
                None => {
                    format!("applies here but did not reproduce ({status}): update the fact")
                }
            };
            (
                Status::Changed,
                format!(
                    "changed: the known {} \"{summary}\" ({at}, measured on {place}) {how}. {message}",
                    f.kind.as_str()
                ),
            )
        }
        (Status::Timeout, _) => (
            Status::KnownHang,
            format!("known hang ({summary}; {where_}; {at}): {message}"),
        ),
        (_, Applies::Measured(_)) => (
            Status::Xfail,
            format!("expected failure ({summary}; {where_}; {at}): {message}"),
        ),
        _ => (
            Status::Known,
            format!("known ({summary}; {where_}; {at}): {message}"),
        ),
    }
}

mod rejudge;
pub use rejudge::program_of;

#[cfg(test)]
mod tests;
