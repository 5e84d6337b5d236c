//! The key of a result: [`TrialId`], one rule's claim about one test on a
//! tier (`model/<rule>/<test>`, `static/<rule>/<test>`,
//! `gpu/<sm>/<rule>/<test>`, `sass/<toolchain>/<sm>/<rule>/<test>`), and
//! [`TestKey`], the test on a tier whatever rule lists it (`model/<test>`,
//! `static/<test>`, `gpu/<sm>/<test>`, `sass/<toolchain>/<sm>/<test>`). The
//! machine-code tier's user programs are trials of the rule-like name
//! [`USER_PROGRAMS`]: `sass/<toolchain>/<sm>/user/<program>`. The
//! library tier's trials are `lib/<release>/<target>/<algorithm>/<case>`
//! (a CCCL release, a build target `sm_90` or `compute_80`, a CUB
//! algorithm and a case such as `n100000-stress`): the release sits where
//! a machine-code trial's toolchain does, the algorithm where a rule does,
//! and the test key of a library trial is its algorithm
//! (`lib/<release>/<target>/<algorithm>`), what a fact about it names.
//!
//! A rule and a test are many-to-many: a test listed by eight rules makes
//! eight trials but one model exploration and one hardware run. A fact about
//! what the model or the hardware did (a histogram, a known failure of the
//! GPU) is a fact about the [`TestKey`]; a status is a trial's. The harness
//! builds names with these types and the site takes them apart with them;
//! nobody splits a name by hand.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A tier of trials.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tier {
    /// The loom model against each litmus test's expected verdict.
    Model,
    /// Compile tests with nvcc (no GPU needed).
    Static,
    /// Litmus, runtime and host tests on the GPU.
    Gpu,
    /// The machine code of the generated kernels and the user programs:
    /// program order kept around PDL and launch primitives (no GPU).
    Sass,
    /// CCCL's PDL algorithms run as a user runs them, release by release,
    /// their results checked on the host (trials named `lib/...`).
    Library,
}

/// The rule part of a user program's machine-code trial.
pub const USER_PROGRAMS: &str = "user";

impl Tier {
    pub const ALL: [Tier; 5] = [
        Tier::Model,
        Tier::Static,
        Tier::Gpu,
        Tier::Sass,
        Tier::Library,
    ];

    /// The tier's name: what `--tier` takes and records say.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Model => "model",
            Tier::Static => "static",
            Tier::Gpu => "gpu",
            Tier::Sass => "sass",
            Tier::Library => "library",
        }
    }

    /// The first part of its trials' names: the name, but `lib` for the
    /// library tier.
    pub fn prefix(self) -> &'static str {
        match self {
            Tier::Library => "lib",
            t => t.as_str(),
        }
    }

    /// Whether the tier's names carry a release after the prefix (the
    /// machine-code tier's toolchain, the library tier's CCCL release).
    fn has_release(self) -> bool {
        matches!(self, Tier::Sass | Tier::Library)
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Tier {
    type Err = String;

    fn from_str(s: &str) -> Result<Tier, String> {
        Tier::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| {
                format!("unknown tier `{s}`: expected model, static, gpu, sass or library")
            })
    }
}

/// A test on a tier (and, on the GPU tier, an architecture): what the
/// model's verdict, a hardware run and a known failure of a GPU are about.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TestKey {
    pub tier: Tier,
    /// `sm_90`: set on the GPU and machine-code tiers, and only there.
    pub sm: Option<String>,
    /// The release: the toolchain's on the machine-code tier (`13.5`), the
    /// CUDA release whose CCCL was built on the library tier (`13.3`); unset
    /// elsewhere.
    pub toolchain: Option<String>,
    pub test: String,
}

/// One trial: a rule's claim checked by one test on a tier.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TrialId {
    pub tier: Tier,
    /// `sm_90`: set on the GPU and machine-code tiers, and only there.
    pub sm: Option<String>,
    /// The release: the toolchain's on the machine-code tier (`13.5`), the
    /// CUDA release whose CCCL was built on the library tier (`13.3`); unset
    /// elsewhere.
    pub toolchain: Option<String>,
    pub rule: String,
    pub test: String,
}

impl TrialId {
    /// The trial as it is compared across toolchains: a machine-code
    /// trial's id without its toolchain (`sass/13.5/sm_90/r/t` as
    /// `sass/sm_90/r/t`); any other trial as it is.
    pub fn without_toolchain(&self) -> TrialId {
        TrialId {
            toolchain: None,
            ..self.clone()
        }
    }

    pub fn model(rule: &str, test: &str) -> TrialId {
        TrialId::new(Tier::Model, None, rule, test)
    }

    pub fn compile(rule: &str, test: &str) -> TrialId {
        TrialId::new(Tier::Static, None, rule, test)
    }

    pub fn gpu(sm: &str, rule: &str, test: &str) -> TrialId {
        TrialId::new(Tier::Gpu, Some(sm), rule, test)
    }

    /// A library trial: `lib/<release>/<target>/<algorithm>/<case>` (the
    /// CCCL release, `sm_90` or `compute_80`, the CUB algorithm, the case).
    pub fn library(release: &str, target: &str, algorithm: &str, case: &str) -> TrialId {
        TrialId {
            toolchain: Some(release.to_string()),
            ..TrialId::new(Tier::Library, Some(target), algorithm, case)
        }
    }

    /// The name of a mutant's trial (`--mutants`):
    /// `mutant/<sm>/<test>~<operator>`. A mutant is no tier's trial (its
    /// record is a `MutantRecord`, keyed by the mutant's name), so it has
    /// a name and no id.
    pub fn mutant_name(sm: &str, mutant: &str) -> String {
        format!("mutant/{sm}/{mutant}")
    }

    /// A machine-code trial: `sass/<toolchain>/<sm>/<rule>/<test>`.
    pub fn sass(toolchain: &str, sm: &str, rule: &str, test: &str) -> TrialId {
        TrialId {
            toolchain: Some(toolchain.to_string()),
            ..TrialId::new(Tier::Sass, Some(sm), rule, test)
        }
    }

    fn new(tier: Tier, sm: Option<&str>, rule: &str, test: &str) -> TrialId {
        TrialId {
            tier,
            toolchain: None,
            sm: sm.map(str::to_string),
            rule: rule.to_string(),
            test: test.to_string(),
        }
    }

    /// The test this trial runs, on its tier: the key of the facts the
    /// trial shares with every other rule that lists the test. A library
    /// trial's is its algorithm (every case of it).
    pub fn test_key(&self) -> TestKey {
        TestKey {
            tier: self.tier,
            sm: self.sm.clone(),
            toolchain: self.toolchain.clone(),
            test: match self.tier {
                Tier::Library => self.rule.clone(),
                _ => self.test.clone(),
            },
        }
    }
}

impl fmt::Display for TrialId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.tier.prefix())?;
        if let Some(t) = &self.toolchain {
            write!(f, "/{t}")?;
        }
        if let Some(sm) = &self.sm {
            write!(f, "/{sm}")?;
        }
        write!(f, "/{}/{}", self.rule, self.test)
    }
}

impl fmt::Display for TestKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.tier.prefix())?;
        if let Some(t) = &self.toolchain {
            write!(f, "/{t}")?;
        }
        if let Some(sm) = &self.sm {
            write!(f, "/{sm}")?;
        }
        write!(f, "/{}", self.test)
    }
}

/// Trials sort as their names do, so that lists keep the order they had
/// when names were strings.
impl Ord for TrialId {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.to_string().cmp(&other.to_string())
    }
}

impl PartialOrd for TrialId {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for TestKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.to_string().cmp(&other.to_string())
    }
}

impl PartialOrd for TestKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// What a name is about: a trial, or a test whatever rule lists it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Subject {
    Trial(TrialId),
    Test(TestKey),
}

impl Subject {
    /// Whether a trial is this subject, or runs it.
    pub fn covers(&self, trial: &TrialId) -> bool {
        match self {
            Subject::Trial(t) => t == trial,
            Subject::Test(k) => *k == trial.test_key(),
        }
    }

    pub fn tier(&self) -> Tier {
        match self {
            Subject::Trial(t) => t.tier,
            Subject::Test(k) => k.tier,
        }
    }

    pub fn test(&self) -> &str {
        match self {
            Subject::Trial(t) => &t.test,
            Subject::Test(k) => &k.test,
        }
    }

    pub fn test_key(&self) -> TestKey {
        match self {
            Subject::Trial(t) => t.test_key(),
            Subject::Test(k) => k.clone(),
        }
    }

    /// The rule, when the subject is one rule's trial.
    pub fn rule(&self) -> Option<&str> {
        match self {
            Subject::Trial(t) => Some(&t.rule),
            Subject::Test(_) => None,
        }
    }
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Subject::Trial(t) => t.fmt(f),
            Subject::Test(k) => k.fmt(f),
        }
    }
}

/// A name's parts after its tier, its toolchain (machine-code tier) and
/// architecture (GPU and machine-code tiers).
type Head<'a> = (Tier, Option<String>, Option<String>, Vec<&'a str>);

fn split(s: &str) -> Result<Head<'_>, String> {
    let mut parts = s.split('/');
    let first = parts.next().unwrap_or_default();
    let tier: Tier = Tier::ALL
        .into_iter()
        .find(|t| t.prefix() == first)
        .ok_or_else(|| {
            format!("`{s}`: unknown tier `{first}`: expected model, static, gpu, sass or lib")
        })?;
    let toolchain = match tier {
        Tier::Sass | Tier::Library => match parts.next() {
            Some(t) if is_release(t) => Some(t.to_string()),
            _ if tier == Tier::Library => {
                return Err(format!(
                    "`{s}`: a library name starts `lib/<release>/<target>/` (a CCCL release such as 13.3)"
                ));
            }
            _ => {
                return Err(format!(
                    "`{s}`: a machine-code name starts `sass/<toolchain>/sm_XX/` (a release such as 13.5)"
                ));
            }
        },
        _ => None,
    };
    let sm = match tier {
        Tier::Gpu | Tier::Sass | Tier::Library => match parts.next() {
            Some(sm) if sm.starts_with("sm_") && sm.len() > 3 => Some(sm.to_string()),
            // A machine-code or library trial of PTX: a virtual architecture.
            Some(v) if tier.has_release() && v.starts_with("compute_") && v.len() > 8 => {
                Some(v.to_string())
            }
            _ if tier == Tier::Library => {
                return Err(format!(
                    "`{s}`: a library name has the target `sm_XX` (or, for PTX, `compute_XX`) after the release"
                ));
            }
            _ if tier == Tier::Gpu => {
                return Err(format!(
                    "`{s}`: a GPU name starts `gpu/sm_XX/` (the architecture)"
                ));
            }
            _ => {
                return Err(format!(
                    "`{s}`: a machine-code name has the architecture `sm_XX` (or, for PTX, `compute_XX`) after the toolchain"
                ));
            }
        },
        Tier::Model | Tier::Static => None,
    };
    let rest: Vec<&str> = parts.collect();
    if rest.iter().any(|p| p.is_empty() || p.trim() != *p) {
        return Err(format!("`{s}`: an empty or padded part"));
    }
    Ok((tier, toolchain, sm, rest))
}

/// `13.5`: digits, a dot, digits.
fn is_release(t: &str) -> bool {
    let mut p = t.split('.');
    let num =
        |x: Option<&str>| x.is_some_and(|x| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit()));
    num(p.next()) && num(p.next()) && p.next().is_none()
}

fn form(tier: Tier) -> &'static str {
    match tier {
        Tier::Gpu => "gpu/<sm>/",
        Tier::Sass => "sass/<toolchain>/<sm>/",
        Tier::Library => "lib/<release>/<target>/",
        Tier::Model => "model/",
        Tier::Static => "static/",
    }
}

/// The parts after the head, as a trial of the tier names them.
fn trial_form(tier: Tier) -> &'static str {
    match tier {
        Tier::Library => "<algorithm>/<case>",
        _ => "<rule>/<test>",
    }
}

impl FromStr for TrialId {
    type Err = String;

    fn from_str(s: &str) -> Result<TrialId, String> {
        let (tier, toolchain, sm, rest) = split(s)?;
        match rest.as_slice() {
            [rule, test] => Ok(TrialId {
                tier,
                toolchain,
                sm,
                rule: rule.to_string(),
                test: test.to_string(),
            }),
            _ => Err(format!(
                "`{s}` is not a trial name: expected {}{}",
                form(tier),
                trial_form(tier)
            )),
        }
    }
}

impl FromStr for TestKey {
    type Err = String;

    fn from_str(s: &str) -> Result<TestKey, String> {
        let (tier, toolchain, sm, rest) = split(s)?;
        match rest.as_slice() {
            [test] => Ok(TestKey {
                tier,
                toolchain,
                sm,
                test: test.to_string(),
            }),
            _ => Err(format!(
                "`{s}` is not a test key: expected {}{}",
                form(tier),
                if tier == Tier::Library {
                    "<algorithm>"
                } else {
                    "<test>"
                }
            )),
        }
    }
}

impl FromStr for Subject {
    type Err = String;

    fn from_str(s: &str) -> Result<Subject, String> {
        let (tier, _, _, rest) = split(s)?;
        match rest.len() {
            1 => s.parse().map(Subject::Test),
            2 => s.parse().map(Subject::Trial),
            _ => Err(format!(
                "`{s}` names neither a test ({f}<test>) nor a trial ({f}<rule>/<test>)",
                f = form(tier)
            )),
        }
    }
}

macro_rules! serde_as_string {
    ($t:ty) => {
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

serde_as_string!(Tier);
serde_as_string!(TrialId);
serde_as_string!(TestKey);
serde_as_string!(Subject);

#[cfg(test)]
mod tests;
