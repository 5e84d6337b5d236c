//! Facts: what the hardware, its driver or nvcc did that the guide does not
//! say (`kind = "discrepancy"`), a hang (`kind = "hang"`), an outcome never
//! observed (`"unobserved"`) or a call that fails in some instances
//! (`"launch-error"`, `facts/kind.rs`), each keyed by a test or one trial,
//! in `conformance/facts/*.toml`
//! (`conformance/facts/README.md` is the format's reference). A fact
//! carries a one-line `summary`, the full `evidence`, the places it was
//! `measured` (GPU, architecture, driver, device runtime, toolkit, date)
//! and what it is believed to depend on (`depends_on`), from which
//! `applicability.rs` decides where it applies and what status a trial
//! gets. The harness and the site both read the files here.
//!
//! ```toml
//! ["gpu/sm_90/c2-memset-async-diagnosis"]
//! kind = "discrepancy"
//! summary = "A device cudaMemsetAsync writes zeros whatever the value."
//! depends_on = ["driver", "device-runtime"]
//! measured = [
//!   { gpu = "NVIDIA H100 80GB HBM3", sm = "sm_90", driver = "580.159.04", device_runtime = "13.0", date = "2026-11-24" },
//! ]
//! evidence = """Measured 2026-11-24 on the H100 ..."""
//! ```
//!
//! Every error names the file, the line and the field; an unknown field is
//! an error.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use gridcheck_record::{Subject, Tier};
use gridcheck_store::valid_date;
use serde::{Deserialize, Deserializer};
use toml::Spanned;

mod kind;
mod shape;
mod text;

pub use gridcheck_record::slug;
pub use kind::FactKind;
pub use shape::{Envelope, LOCATION_WORDS};
pub use text::sm_number;
use text::{field_line, field_named_on, line_of};

/// Where the facts live, relative to the repository root.
pub const FACTS_DIR: &str = "conformance/facts";

/// A comparison of architectures: `sm>=90`, `sm==90`, `sm<100`, ...
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArchRange {
    pub op: &'static str,
    pub sm: u32,
}

impl ArchRange {
    /// Whether `sm_NN` is in the range; a name that is not `sm_NN` is not.
    pub fn contains(&self, sm: &str) -> bool {
        let Some(n) = sm_number(sm) else {
            return false;
        };
        match self.op {
            ">=" => n >= self.sm,
            ">" => n > self.sm,
            "<=" => n <= self.sm,
            "<" => n < self.sm,
            _ => n == self.sm,
        }
    }
}

/// What a fact is believed to depend on: it applies on a machine that
/// agrees, on every one of these, with a place where it was measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dependency {
    /// The GPU model (`NVIDIA H100 80GB HBM3`).
    GpuModel,
    /// The kernel driver's release (`580.159.04`).
    Driver,
    /// The device runtime linked into the kernels (`libcudadevrt` of the
    /// CUDA toolkit that built them), by major.minor (`13.0`).
    DeviceRuntime,
    /// The compiler, nvcc, by major.minor (`13.0`).
    Toolkit,
    /// The CCCL headers a library trial's program was built from, by the
    /// release that ships them (`13.3`): the library tier only.
    Cccl,
    /// The architecture, a range (`sm>=90`): the fact covers the test on
    /// every architecture in it. Without one, only the key's architecture.
    Arch(ArchRange),
}

impl FromStr for Dependency {
    type Err = String;

    fn from_str(s: &str) -> Result<Dependency, String> {
        Ok(match s {
            "gpu-model" => Dependency::GpuModel,
            "driver" => Dependency::Driver,
            "device-runtime" => Dependency::DeviceRuntime,
            "toolkit" => Dependency::Toolkit,
            "cccl" => Dependency::Cccl,
            _ => {
                let bad = || {
                    format!(
                        "`{s}` is none of `gpu-model`, `driver`, `device-runtime`, `toolkit`, \
                         `cccl` or an architecture range such as `sm>=90`"
                    )
                };
                let rest = s.strip_prefix("sm").ok_or_else(bad)?;
                let op = [">=", "<=", "==", ">", "<"]
                    .into_iter()
                    .find(|op| rest.starts_with(op))
                    .ok_or_else(bad)?;
                let n = &rest[op.len()..];
                if n.is_empty() || !n.chars().all(|c| c.is_ascii_digit()) {
                    return Err(bad());
                }
                Dependency::Arch(ArchRange {
                    op,
                    sm: n.parse().map_err(|_| bad())?,
                })
            }
        })
    }
}

impl fmt::Display for Dependency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dependency::GpuModel => f.write_str("gpu-model"),
            Dependency::Driver => f.write_str("driver"),
            Dependency::DeviceRuntime => f.write_str("device-runtime"),
            Dependency::Toolkit => f.write_str("toolkit"),
            Dependency::Cccl => f.write_str("cccl"),
            Dependency::Arch(r) => write!(f, "sm{}{}", r.op, r.sm),
        }
    }
}

impl<'de> Deserialize<'de> for Dependency {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// One place a fact was measured. Only `date` is required; a fact needs
/// every field its `depends_on` names.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Place {
    /// The GPU's name as the driver gives it.
    pub gpu: Option<String>,
    /// `sm_90`.
    pub sm: Option<String>,
    /// The kernel driver's release, `580.159.04`.
    pub driver: Option<String>,
    /// The device runtime's CUDA version, `13.0`.
    pub device_runtime: Option<String>,
    /// nvcc's version, `13.0.88`.
    pub toolkit: Option<String>,
    /// The CCCL release a library trial's program was built from, `13.3`.
    pub cccl: Option<String>,
    /// `YYYY-MM-DD`.
    pub date: String,
    /// Where its records are, `records/<gpu>/<date>/`.
    pub record: Option<String>,
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        match (&self.gpu, &self.sm) {
            (Some(g), Some(s)) => parts.push(format!("{g} ({s})")),
            (Some(g), None) => parts.push(g.clone()),
            (None, Some(s)) => parts.push(s.clone()),
            (None, None) => {}
        }
        if let Some(d) = &self.driver {
            parts.push(format!("driver {d}"));
        }
        if let Some(d) = &self.device_runtime {
            parts.push(format!("device runtime {d}"));
        }
        if let Some(t) = &self.toolkit {
            parts.push(format!("nvcc {t}"));
        }
        if let Some(c) = &self.cccl {
            parts.push(format!("CCCL of {c}"));
        }
        parts.push(self.date.clone());
        f.write_str(&parts.join(", "))
    }
}

/// One fact, as the harness and the site use it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fact {
    /// A test on a tier (every rule that lists it), or one trial.
    pub subject: Subject,
    pub kind: FactKind,
    /// One line: what the hardware did.
    pub summary: String,
    /// What was measured, what was ruled out and by which experiment.
    pub evidence: String,
    pub depends_on: Vec<Dependency>,
    /// Where it was measured, first measurement first.
    pub measured: Vec<Place>,
    /// `reproduces = "sometimes"`: a rare behaviour (a hang in some runs
    /// only, the rate in its evidence); a run that does not show it keeps
    /// its own status with a note, rather than `changed`. Default: always.
    pub sometimes: bool,
    /// An `unobserved` fact's `mutants`: surviving mutants (`<test>~<operator>`)
    /// whose killing outcome is the behaviour it says the GPU never shows;
    /// the mutation score lists them as equivalent where it applies.
    pub mutants: Vec<String>,
    /// `shape`: the mechanism as patterns over a litmus program
    /// (`facts/shape.rs`); the fact covers every GPU trial of a program one
    /// of them matches, beside its key. Empty: its key only.
    pub shape: Vec<gridcheck_shape::Pattern>,
    /// An `unobserved` fact's `envelope`: what was tried.
    pub envelope: Option<Envelope>,
    /// The file, relative to the repository root when under it.
    pub file: PathBuf,
    /// The line of the fact's key.
    pub line: usize,
}

impl Fact {
    /// `file:line`, how messages name it.
    pub fn at(&self) -> String {
        format!("{}:{}", self.file.display(), self.line)
    }

    /// The architecture range it depends on, if any.
    pub fn arch_range(&self) -> Option<ArchRange> {
        self.depends_on.iter().find_map(|d| match d {
            Dependency::Arch(r) => Some(*r),
            _ => None,
        })
    }

    /// `depends_on` as written: `driver, device-runtime`.
    pub fn depends_on_text(&self) -> String {
        self.depends_on
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFact {
    kind: FactKind,
    summary: String,
    evidence: String,
    depends_on: Vec<Dependency>,
    measured: Vec<Place>,
    #[serde(default)]
    reproduces: Reproduces,
    #[serde(default)]
    mutants: Vec<String>,
    shape: Option<shape::ShapeText>,
    envelope: Option<Envelope>,
}

/// How often a fact's behaviour shows in a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Reproduces {
    #[default]
    Always,
    Sometimes,
}

/// Every fact, in file then line order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    pub entries: Vec<Fact>,
}

/// The checks across a fact's fields, each with the field it concerns.
fn check(subject: &Subject, f: &RawFact) -> Result<(), (&'static str, String)> {
    if f.summary.trim().is_empty() || f.summary.contains('\n') {
        return Err(("summary", "one line that says what the hardware did".into()));
    }
    if f.evidence.trim().is_empty() {
        return Err((
            "evidence",
            "say what was measured, what was ruled out and by which experiment".into(),
        ));
    }
    if f.depends_on.is_empty() {
        return Err((
            "depends_on",
            "name what it is believed to depend on (`gpu-model`, `driver`, \
             `device-runtime`, `toolkit`, `sm>=NN`)"
                .into(),
        ));
    }
    for (i, d) in f.depends_on.iter().enumerate() {
        if f.depends_on[..i].contains(d) {
            return Err(("depends_on", format!("`{d}` is named twice")));
        }
    }
    if f.depends_on
        .iter()
        .filter(|d| matches!(d, Dependency::Arch(_)))
        .count()
        > 1
    {
        return Err(("depends_on", "at most one architecture range".into()));
    }
    // A machine-code fact is about what one nvcc makes for an architecture:
    // it depends on the toolkit and may give an architecture range.
    let gpu_only = |d: &Dependency| match subject.tier() {
        Tier::Sass => !matches!(d, Dependency::Toolkit | Dependency::Arch(_)),
        _ => !matches!(d, Dependency::Toolkit),
    };
    let library = check_cccl(subject, f)?;
    if subject.tier() == Tier::Sass && !f.depends_on.contains(&Dependency::Toolkit) {
        return Err((
            "depends_on",
            "a fact of the sass tier depends on the `toolkit` (the key's toolchain is only where it was first measured)".into(),
        ));
    }
    if !matches!(subject.tier(), Tier::Gpu | Tier::Library)
        && let Some(d) = f.depends_on.iter().find(|d| gpu_only(d))
    {
        return Err((
            "depends_on",
            format!(
                "`{d}`: a fact of the {} tier runs no GPU; it can depend on the `toolkit`{} only",
                subject.tier().as_str(),
                if subject.tier() == Tier::Sass {
                    " and an architecture range"
                } else {
                    ""
                }
            ),
        ));
    }
    if f.measured.is_empty() {
        return Err(("measured", "list the places it was measured".into()));
    }
    if !f.mutants.is_empty() && f.kind != FactKind::Unobserved {
        return Err((
            "mutants",
            "only an `unobserved` fact makes mutants equivalent".into(),
        ));
    }
    if let Some(m) = f.mutants.iter().find(|m| {
        !m.split_once('~')
            .is_some_and(|(t, o)| !t.is_empty() && !o.is_empty())
    }) {
        return Err(("mutants", format!("`{m}` is not `<test>~<operator>`")));
    }
    for p in &f.measured {
        if !valid_date(&p.date) {
            return Err(("measured", format!("date `{}` is not YYYY-MM-DD", p.date)));
        }
        if let Some(sm) = &p.sm
            && sm_number(sm).is_none()
        {
            return Err(("measured", format!("sm `{sm}` is not `sm_NN`")));
        }
        for d in &f.depends_on {
            let (has, name) = match d {
                Dependency::GpuModel => (p.gpu.is_some(), "gpu"),
                Dependency::Driver => (p.driver.is_some(), "driver"),
                Dependency::DeviceRuntime => (p.device_runtime.is_some(), "device_runtime"),
                Dependency::Toolkit => (p.toolkit.is_some(), "toolkit"),
                Dependency::Cccl => (p.cccl.is_some(), "cccl"),
                Dependency::Arch(_) => (p.sm.is_some(), "sm"),
            };
            if !has {
                return Err((
                    "measured",
                    format!(
                        "the place of {} depends on `{d}` but gives no `{name}`",
                        p.date
                    ),
                ));
            }
        }
    }
    shape::check(
        subject.tier(),
        f.kind,
        f.shape.is_some(),
        f.envelope.as_ref(),
    )?;
    check_key(subject, f, library)
}

/// What a fact's key names agrees with where it was measured.
fn check_key(subject: &Subject, f: &RawFact, library: bool) -> Result<(), (&'static str, String)> {
    let (sm, release) = match subject {
        Subject::Trial(t) => (&t.sm, &t.toolchain),
        Subject::Test(k) => (&k.sm, &k.toolchain),
    };
    if library {
        // A library key's target is a build (`sm_90`, `compute_80`), not
        // the GPU it ran on, which the places give.
        return check_key_release(release, f, |p| p.cccl.as_deref(), ("cccl", "release"));
    }
    check_key_arch(sm, f)?;
    check_key_release(release, f, |p| p.toolkit.as_deref(), ("nvcc", "toolchain"))
}

/// A GPU key's architecture is where it was measured: in its range, and
/// the architecture of a place that gives one.
fn check_key_arch(sm: &Option<String>, f: &RawFact) -> Result<(), (&'static str, String)> {
    let Some(sm) = sm else { return Ok(()) };
    if let Some(Dependency::Arch(r)) = f
        .depends_on
        .iter()
        .find(|d| matches!(d, Dependency::Arch(_)))
    {
        if !r.contains(sm) {
            return Err((
                "depends_on",
                format!("the key's `{sm}` is outside `{}`", Dependency::Arch(*r)),
            ));
        }
    } else if !f
        .measured
        .iter()
        .any(|p| p.sm.as_deref() == Some(sm.as_str()))
    {
        return Err((
            "measured",
            format!(
                "no place on the key's `{sm}`: a fact covers its key's architecture unless `depends_on` gives a range"
            ),
        ));
    }
    Ok(())
}

/// A key's release is the release of a place it was measured: a
/// machine-code key's toolchain (`13.2`) a place's `toolkit` (`13.2.86`), a
/// library key's (`13.3`) a place's `cccl`; the dependency, not the key,
/// says which releases the fact covers. `what` names the field and its role.
fn check_key_release(
    release: &Option<String>,
    f: &RawFact,
    field: fn(&Place) -> Option<&str>,
    what: (&str, &str),
) -> Result<(), (&'static str, String)> {
    let Some(release) = release else {
        return Ok(());
    };
    if f.measured
        .iter()
        .any(|p| field(p).map(gridcheck_record::major_minor).as_deref() == Some(release.as_str()))
    {
        return Ok(());
    }
    Err((
        "measured",
        format!("no place with {} {release}, the key's {}", what.0, what.1),
    ))
}

/// A library fact is about the headers of one CCCL release run on a GPU:
/// it depends on `cccl` (and may name anything a GPU fact may), and no
/// other fact does. Returns whether the fact is a library fact.
fn check_cccl(subject: &Subject, f: &RawFact) -> Result<bool, (&'static str, String)> {
    let library = subject.tier() == Tier::Library;
    if library == f.depends_on.contains(&Dependency::Cccl) {
        return Ok(library);
    }
    Err((
        "depends_on",
        if library {
            "a fact of the library tier depends on `cccl` (the key's release is only where it was first measured)"
        } else {
            "only a fact of the library tier depends on `cccl`"
        }
        .into(),
    ))
}

impl Facts {
    /// The facts of one file's text; `path` names it in errors and in the
    /// facts, relative to `root` when under it.
    pub fn parse(text: &str, path: &Path, root: &Path) -> Result<Vec<Fact>, String> {
        let file = path.strip_prefix(root).unwrap_or(path).to_path_buf();
        let shown = file.display();
        let raw: BTreeMap<Spanned<String>, Spanned<RawFact>> =
            toml::from_str(text).map_err(|e| match e.span() {
                Some(s) => {
                    let line = line_of(text, s.start);
                    format!(
                        "{shown}:{line}: {}{}",
                        field_named_on(text, line),
                        e.message().trim()
                    )
                }
                None => format!("{shown}: {}", e.message().trim()),
            })?;
        let mut out = Vec::new();
        for (key, fact) in raw {
            let line = line_of(text, key.span().start);
            let subject: Subject = key
                .get_ref()
                .parse()
                .map_err(|e| format!("{shown}:{line}: {e}"))?;
            let start = key.span().start;
            let fact_span = fact.span();
            let f = fact.into_inner();
            check(&subject, &f).map_err(|(field, why)| {
                let from = start.min(fact_span.start);
                format!(
                    "{shown}:{}: `{subject}`: field `{field}`: {why}",
                    field_line(text, from, field)
                )
            })?;
            let shape = match &f.shape {
                Some(t) => t.parse().map_err(|why| {
                    format!(
                        "{shown}:{}: `{subject}`: field `shape`: {why}",
                        field_line(text, start.min(fact_span.start), "shape")
                    )
                })?,
                None => Vec::new(),
            };
            out.push(Fact {
                subject,
                kind: f.kind,
                summary: f.summary,
                evidence: f.evidence.trim().to_string(),
                depends_on: f.depends_on,
                measured: f.measured,
                sometimes: f.reproduces == Reproduces::Sometimes,
                mutants: f.mutants,
                shape,
                envelope: f.envelope,
                file: file.clone(),
                line,
            });
        }
        out.sort_by_key(|f| f.line);
        Ok(out)
    }

    /// Every `*.toml` in `dir`, by file name. A missing directory holds no
    /// facts; a file that does not parse is an error that names it.
    pub fn load_all(dir: &Path, root: &Path) -> Result<Facts, String> {
        let mut files: Vec<PathBuf> = match std::fs::read_dir(dir) {
            Ok(rd) => rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "toml"))
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Facts::default()),
            Err(e) => return Err(format!("cannot read {}: {e}", dir.display())),
        };
        files.sort();
        let mut x = Facts::default();
        for path in files {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            x.entries.extend(Self::parse(&text, &path, root)?);
        }
        Ok(x)
    }
}
