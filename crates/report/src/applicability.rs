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

use crate::{
    Dependency, Fact, FactKind, Facts, Place, Status, Subject, TrialId, TrialRecord, slug,
};

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
}

impl Here {
    /// Where a record's trial ran: its GPU environment (the device runtime
    /// and toolkit of the toolchain that built its kernels, when the record
    /// names one), else its compiler.
    pub fn of(rec: &TrialRecord) -> Here {
        let mut h = Here::default();
        if let Some(e) = &rec.environment {
            h.gpu = Some(e.gpu.clone());
            h.sm = Some(e.sm.clone());
            h.driver = e.driver_version.clone();
            // The kernels' toolchain when the record names it (its
            // libcudadevrt is the one linked in), else the harness's nvcc.
            let built_by = e
                .toolchain
                .as_ref()
                .map(|t| t.nvcc.clone())
                .or(e.nvcc.clone());
            h.device_runtime = built_by.clone();
            h.toolkit = built_by;
        }
        if let Some(c) = &rec.compile {
            h.toolkit = Some(c.nvcc.clone());
        }
        // A machine-code trial ran on no GPU: its architecture is its own.
        if h.sm.is_none() {
            h.sm = rec.trial.sm.clone();
        }
        h
    }
}

/// `13.0.88` → `13.0`.
fn major_minor(v: &str) -> String {
    v.split('.').take(2).collect::<Vec<_>>().join(".")
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
    fn rank(&self) -> u8 {
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
        let (tier, sm, rule, test) = match &self.subject {
            Subject::Trial(t) => (t.tier, &t.sm, Some(&t.rule), &t.test),
            Subject::Test(k) => (k.tier, &k.sm, None, &k.test),
        };
        let arch = match (&trial.sm, self.arch_range()) {
            (Some(here), Some(r)) => r.contains(here),
            _ => *sm == trial.sm,
        };
        tier == trial.tier && *test == trial.test && rule.is_none_or(|r| *r == trial.rule) && arch
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
            if self.subject.tier() == crate::Tier::Gpu {
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

    /// The status and message a finished trial gets from the facts (the
    /// table of the module docs).
    pub fn apply(&self, rec: &TrialRecord) -> (Status, String) {
        let (status, message) = (rec.status, rec.message.clone());
        let covering = self.covering(&rec.trial);
        if covering.is_empty() {
            return (status, message);
        }
        let here = Here::of(rec);
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
        let (summary, at) = (&f.summary, f.at());
        let Some((place, beyond)) = a.place() else {
            unreachable!("facts that do not apply are filtered above")
        };
        // Where it was measured, as a message says it.
        let where_ = match (a, beyond) {
            (Applies::Measured(p), _) => format!("measured here: {p}"),
            (_, Some(why)) => format!(
                "first measured on {place}, not under this configuration: {why}; the same here"
            ),
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
                    format!(
                        "known, stronger than the guide ({summary}; {where_}; {at}): {message}"
                    ),
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
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::{CompileSummary, Environment};

    const H100: &str = "NVIDIA H100 80GB HBM3";

    fn facts(depends_on: &str, kind: &str) -> Facts {
        let text = format!(
            "[\"gpu/sm_90/t\"]\nkind = \"{kind}\"\nsummary = \"It wrote zeros.\"\n\
             depends_on = [{depends_on}]\nevidence = \"e\"\nmeasured = [\n\
             {{ gpu = \"{H100}\", sm = \"sm_90\", driver = \"580.159.04\", device_runtime = \"13.0\", date = \"2026-11-24\" }},\n]\n"
        );
        Facts {
            entries: Facts::parse(&text, Path::new("f.toml"), Path::new("/")).unwrap(),
        }
    }

    fn rec(sm: &str, gpu: &str, driver: &str, nvcc: &str, status: Status) -> TrialRecord {
        let mut r = TrialRecord::new(TrialId::gpu(sm, "a.b", "t"), status, "what ran");
        r.environment = Some(Environment {
            gpu: gpu.into(),
            sm: sm.into(),
            driver: "13.0".into(),
            nvcc: Some(nvcc.into()),
            driver_version: Some(driver.into()),
            tuning: None,
            tuning_file: None,
            binary: None,
            toolchain: None,
            device: None,
        });
        r
    }

    fn h100(status: Status) -> TrialRecord {
        rec("sm_90", H100, "580.159.04", "13.0.88", status)
    }

    fn h200(status: Status) -> TrialRecord {
        rec("sm_90", "NVIDIA H200", "580.159.04", "13.0.88", status)
    }

    const RUNTIME: &str = "\"driver\", \"device-runtime\"";

    #[test]
    fn xfail_where_it_was_measured() {
        let f = facts(RUNTIME, "discrepancy");
        for s in [Status::Fail, Status::Crash, Status::Unmodeled] {
            let (status, m) = f.apply(&h100(s));
            assert_eq!(status, Status::Xfail, "{s}");
            assert!(
                m.starts_with("expected failure (It wrote zeros.; measured here: NVIDIA H100"),
                "{m}"
            );
            assert!(m.contains("f.toml:1): what ran"), "{m}");
        }
    }

    #[test]
    fn the_kernels_toolchain_is_the_device_runtime_judged() {
        let f = facts(RUNTIME, "discrepancy");
        // The harness's nvcc says 13.0, but the kernels were built (and
        // their device runtime linked) by 13.5, where the fact, which
        // depends on the device runtime, was never measured: the same
        // failure is known, naming the device runtime.
        let mut r = h100(Status::Fail);
        if let Some(e) = r.environment.as_mut() {
            e.toolchain = Some(crate::ToolchainRecord {
                release: "13.5".into(),
                nvcc: "13.5.37".into(),
                devrt: "nvidia-cuda-runtime 13.5.37".into(),
                source: ".toolchains/13.5".into(),
                disassembler: None,
            });
        }
        let (status, m) = f.apply(&r);
        assert_eq!(status, Status::Known);
        assert!(m.contains("the device runtime here is 13.5.37"), "{m}");
        // Without the toolchain, the harness's nvcc decides: measured here.
        assert_eq!(f.apply(&h100(Status::Fail)).0, Status::Xfail);
    }

    #[test]
    fn known_where_it_applies_but_was_never_measured() {
        let f = facts(RUNTIME, "discrepancy");
        let (status, m) = f.apply(&h200(Status::Fail));
        assert_eq!(status, Status::Known);
        assert!(
            m.contains("first measured on NVIDIA H100 80GB HBM3 (sm_90), driver 580.159.04"),
            "{m}"
        );
        // Another device runtime of the same minor version: the same.
        let r = rec(
            "sm_90",
            "NVIDIA H200",
            "580.159.04",
            "13.0.40",
            Status::Fail,
        );
        assert_eq!(f.apply(&r).0, Status::Known);
        // The trial's own fact is found, whatever rule lists the test.
        let mut other = h200(Status::Fail);
        other.trial.rule = "c.d".into();
        assert_eq!(f.apply(&other).0, Status::Known);
    }

    #[test]
    fn an_outcome_never_observed_is_known_until_it_shows() {
        let f = facts(RUNTIME, "unobserved");
        let (status, m) = f.apply(&h100(Status::QualityWarning));
        assert_eq!(status, Status::Xfail, "{m}");
        assert!(m.starts_with("known, stronger than the guide"), "{m}");
        assert_eq!(f.apply(&h200(Status::QualityWarning)).0, Status::Known);
        // Observed at last: the fact no longer holds.
        assert_eq!(f.apply(&h100(Status::Pass)).0, Status::Changed);
        // It explains no failure.
        assert_eq!(f.apply(&h100(Status::Fail)).0, Status::Fail);
    }

    #[test]
    fn a_rare_fact_not_seen_in_a_run_is_not_changed() {
        let mut f = facts(RUNTIME, "hang");
        f.entries[0].sometimes = true;
        let (status, m) = f.apply(&h100(Status::Pass));
        assert_eq!(status, Status::Pass, "{m}");
        assert!(m.contains("shows only in some runs"), "{m}");
        // When it does show, it is known as ever.
        assert_eq!(f.apply(&h100(Status::Timeout)).0, Status::KnownHang);
        // The file's spelling; a misspelling is an error.
        let text = "[\"gpu/sm_90/t\"]\nkind = \"hang\"\nsummary = \"s\"\nreproduces = \"sometimes\"\n\
                    depends_on = [\"driver\"]\nevidence = \"e\"\nmeasured = [{ gpu = \"G\", sm = \"sm_90\", driver = \"1\", date = \"2026-11-24\" }]\n";
        let parsed = Facts::parse(text, Path::new("f.toml"), Path::new("/")).unwrap();
        assert!(parsed[0].sometimes);
        let bad = text.replace("sometimes", "often");
        assert!(Facts::parse(&bad, Path::new("f.toml"), Path::new("/")).is_err());
    }

    #[test]
    fn changed_where_it_applies_and_no_longer_fails() {
        for (f, r) in [
            (facts(RUNTIME, "discrepancy"), h100(Status::Pass)),
            (facts(RUNTIME, "discrepancy"), h200(Status::QualityWarning)),
            (facts(RUNTIME, "hang"), h200(Status::Pass)),
        ] {
            let (status, m) = f.apply(&r);
            assert_eq!(status, Status::Changed, "{m}");
            assert!(m.starts_with("changed: the known"), "{m}");
            assert!(
                m.contains("did not reproduce") && m.contains("f.toml:1"),
                "{m}"
            );
        }
    }

    #[test]
    fn known_hang_for_a_timeout_a_hang_covers() {
        let f = facts(RUNTIME, "hang");
        let (status, m) = f.apply(&h100(Status::Timeout));
        assert_eq!(status, Status::KnownHang);
        assert!(
            m.starts_with("known hang (It wrote zeros.; measured here"),
            "{m}"
        );
        let (status, m) = f.apply(&h200(Status::Timeout));
        assert_eq!(status, Status::KnownHang);
        assert!(m.contains("not yet on this machine"), "{m}");
        // A hang explains no fail, a discrepancy no timeout.
        let (status, m) = f.apply(&h100(Status::Fail));
        assert_eq!(status, Status::Fail);
        assert!(m.contains("f.toml:1 is a hang, not a fail"), "{m}");
        let d = facts(RUNTIME, "discrepancy");
        assert_eq!(d.apply(&h100(Status::Timeout)).0, Status::Timeout);
    }

    #[test]
    fn unmodeled_is_a_failure_facts_can_explain() {
        let f = facts(RUNTIME, "discrepancy");
        assert_eq!(f.apply(&h200(Status::Unmodeled)).0, Status::Known);
        assert_eq!(
            Facts::default().apply(&h100(Status::Unmodeled)).0,
            Status::Unmodeled
        );
    }

    #[test]
    fn a_fact_travels_where_its_dependencies_differ() {
        // Another driver: the same failure is known, naming the driver.
        let f = facts(RUNTIME, "discrepancy");
        let r = rec("sm_90", H100, "590.1", "13.0.88", Status::Fail);
        let (status, m) = f.apply(&r);
        assert_eq!(status, Status::Known, "{m}");
        assert!(
            m.starts_with("known (It wrote zeros.; first measured on NVIDIA H100"),
            "{m}"
        );
        assert!(
            m.contains("not under this configuration") && m.contains("the driver here is 590.1"),
            "{m}"
        );
        // Another device runtime; a timeout under a hang fact.
        let r = rec("sm_90", H100, "580.159.04", "13.1.0", Status::Fail);
        assert_eq!(f.apply(&r).0, Status::Known);
        let h = facts(RUNTIME, "hang");
        let r = rec("sm_90", H100, "580.159.04", "13.1.0", Status::Timeout);
        let (status, m) = h.apply(&r);
        assert_eq!(status, Status::KnownHang, "{m}");
        assert!(m.contains("the device runtime here is 13.1.0"), "{m}");
        // The GPU model: an H100 fact on an H200.
        let g = facts("\"gpu-model\", \"driver\"", "discrepancy");
        let (status, m) = g.apply(&h200(Status::Fail));
        assert_eq!(status, Status::Known);
        assert!(m.contains("the GPU here is NVIDIA H200"), "{m}");
        assert_eq!(g.apply(&h100(Status::Fail)).0, Status::Xfail);
        // Not reproducing there is a change, shown with the difference:
        // never a silent pass.
        let (status, m) = g.apply(&h200(Status::Pass));
        assert_eq!(status, Status::Changed, "{m}");
        assert!(
            m.contains("did not reproduce here (pass), where it depends on")
                && m.contains("the GPU here is NVIDIA H200"),
            "{m}"
        );
        // A fact that applies is preferred to one measured elsewhere only.
        let both = Facts {
            entries: [g.entries.clone(), facts(RUNTIME, "discrepancy").entries].concat(),
        };
        assert_eq!(both.apply(&h200(Status::Fail)).0, Status::Known);
        assert!(
            both.apply(&h200(Status::Fail))
                .1
                .contains("not yet on this machine")
        );
        // An unknown driver matches nothing: known, saying so.
        let mut r = h100(Status::Fail);
        r.environment.as_mut().unwrap().driver_version = None;
        let (status, m) = f.apply(&r);
        assert_eq!(status, Status::Known);
        assert!(m.contains("the driver here is unknown"), "{m}");
        // A kind that does not explain the status leaves it as it is.
        assert_eq!(
            h.apply(&rec("sm_90", H100, "590.1", "13.0.88", Status::Fail))
                .0,
            Status::Fail
        );
    }

    #[test]
    fn architectures_the_key_and_a_range() {
        let f = facts(RUNTIME, "discrepancy");
        // No range: the key's architecture only.
        let r = rec(
            "sm_100",
            "NVIDIA B200",
            "580.159.04",
            "13.0.88",
            Status::Fail,
        );
        assert!(f.covering(&r.trial).is_empty());
        assert_eq!(f.apply(&r).0, Status::Fail);
        let g = facts("\"driver\", \"sm>=90\"", "discrepancy");
        assert_eq!(g.apply(&r).0, Status::Known);
        let old = rec(
            "sm_80",
            "NVIDIA A100",
            "580.159.04",
            "13.0.88",
            Status::Fail,
        );
        assert!(g.covering(&old.trial).is_empty());
        assert_eq!(g.apply(&old).0, Status::Fail);
    }

    #[test]
    fn trial_facts_first_and_statuses_that_did_not_run_are_left_alone() {
        let text = "[\"gpu/sm_90/t\"]\nkind = \"discrepancy\"\nsummary = \"test\"\ndepends_on = [\"driver\"]\nevidence = \"e\"\nmeasured = [{ sm = \"sm_90\", driver = \"580.159.04\", date = \"2026-11-24\" }]\n\
                    [\"gpu/sm_90/a.b/t\"]\nkind = \"discrepancy\"\nsummary = \"trial\"\ndepends_on = [\"driver\"]\nevidence = \"e\"\nmeasured = [{ sm = \"sm_90\", driver = \"580.159.04\", date = \"2026-11-24\" }]\n";
        let f = Facts {
            entries: Facts::parse(text, Path::new("f.toml"), Path::new("/")).unwrap(),
        };
        let r = h200(Status::Fail);
        assert_eq!(f.covering(&r.trial)[0].summary, "trial");
        // No GPU model in the place: never "measured here", so known.
        let (status, m) = f.apply(&r);
        assert_eq!(status, Status::Known);
        assert!(m.starts_with("known (trial;"), "{m}");
        for s in [Status::NotRun, Status::NotSupported, Status::OracleConflict] {
            assert_eq!(f.apply(&h100(s)).0, s);
        }
    }

    #[test]
    fn a_compile_fact_depends_on_the_toolkit() {
        let text = "[\"static/c\"]\nkind = \"discrepancy\"\nsummary = \"accepted\"\ndepends_on = [\"toolkit\"]\nevidence = \"e\"\nmeasured = [{ toolkit = \"13.0.88\", date = \"2026-11-22\" }]\n";
        let f = Facts {
            entries: Facts::parse(text, Path::new("f.toml"), Path::new("/")).unwrap(),
        };
        let compiled = |nvcc: &str| {
            let mut r = TrialRecord::new(TrialId::compile("r.s", "c"), Status::Fail, "m");
            r.compile = Some(CompileSummary {
                nvcc: nvcc.into(),
                command: String::new(),
                success: true,
                output: String::new(),
                toolchain: None,
            });
            r
        };
        assert_eq!(f.apply(&compiled("13.0.88")).0, Status::Xfail);
        assert_eq!(f.apply(&compiled("13.0.40")).0, Status::Known);
        // Another release: known, naming it.
        let (status, m) = f.apply(&compiled("13.2.1"));
        assert_eq!(status, Status::Known);
        assert!(m.contains("nvcc here is 13.2.1"), "{m}");
    }
}
