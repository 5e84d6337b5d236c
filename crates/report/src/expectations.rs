//! Known failures: `conformance/expectations/<gpu-slug>.toml` for the GPU
//! tier, `conformance/expectations/nvcc-<major>.<minor>.toml` for the
//! static tier. The harness applies them and the site lists them; both read
//! them here.
//!
//! ```toml
//! [xfail]
//! # a fact about a test on this GPU, whatever rule lists it:
//! "gpu/sm_90/<test>" = "why this is known to fail, with the evidence"
//! # a fact about one rule's trial only:
//! "gpu/sm_90/<rule>/<test>" = "..."
//! ```
//!
//! A covered trial that fails is reported `xfail` (not a failure of the
//! run); one that passes fails, as wasmtime's `should_fail` does, so the
//! list cannot go stale silently.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::{Status, Subject, TrialId};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    xfail: BTreeMap<Subject, String>,
}

/// One known failure: what it is about, why, and where it is listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Xfail {
    /// A test on a tier (every rule that lists it), or one trial.
    pub subject: Subject,
    /// The reason, with the evidence.
    pub reason: String,
    /// `<gpu-slug>` or `nvcc-13.0`: the file's stem, what the entry applies to.
    pub applies_to: String,
    /// The file, relative to the repository root when under it.
    pub file: PathBuf,
}

/// Known failures, in file then key order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expectations {
    pub entries: Vec<Xfail>,
}

/// A device name as a file or directory name: lowercase, every run of
/// characters other than ASCII letters and digits one `-`
/// (`NVIDIA H100 80GB HBM3` → `nvidia-h100-80gb-hbm3`).
pub fn slug(name: &str) -> String {
    let s: String = name
        .to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    s.split('-')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

impl Expectations {
    /// The entries of one file's text; `path` names it in errors and in
    /// the entries, relative to `root` when under it.
    pub fn parse(text: &str, path: &Path, root: &Path) -> Result<Vec<Xfail>, String> {
        let f: File = toml::from_str(text).map_err(|e| format!("{}: {e}", path.display()))?;
        let applies_to = path
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let file = path.strip_prefix(root).unwrap_or(path).to_path_buf();
        Ok(f.xfail
            .into_iter()
            .map(|(subject, reason)| Xfail {
                subject,
                reason,
                applies_to: applies_to.clone(),
                file: file.clone(),
            })
            .collect())
    }

    fn read(path: &Path, root: &Path) -> Result<Option<Vec<Xfail>>, String> {
        match std::fs::read_to_string(path) {
            Ok(text) => Self::parse(&text, path, root).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
        }
    }

    /// `<dir>/<name>.toml` for each name (the harness: the files that apply
    /// to this machine); a missing file lists nothing.
    pub fn load(dir: &Path, names: &[String], root: &Path) -> Result<Expectations, String> {
        let mut x = Expectations::default();
        for name in names {
            if let Some(entries) = Self::read(&dir.join(format!("{name}.toml")), root)? {
                x.entries.extend(entries);
            }
        }
        Ok(x)
    }

    /// Every `*.toml` in `dir`, by file name (the site: every machine's).
    /// A missing directory lists nothing; a file that does not parse is an
    /// error that names it.
    pub fn load_all(dir: &Path, root: &Path) -> Result<Expectations, String> {
        let mut files: Vec<PathBuf> = match std::fs::read_dir(dir) {
            Ok(rd) => rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "toml"))
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Expectations::default());
            }
            Err(e) => return Err(format!("cannot read {}: {e}", dir.display())),
        };
        files.sort();
        let mut x = Expectations::default();
        for path in files {
            x.entries
                .extend(Self::read(&path, root)?.unwrap_or_default());
        }
        Ok(x)
    }

    /// The file names that apply: the GPU's and nvcc's (`nvcc-13.0`).
    pub fn names(device: Option<&str>, nvcc_version: Option<&str>) -> Vec<String> {
        let mut v = Vec::new();
        if let Some(d) = device {
            v.push(slug(d));
        }
        if let Some(n) = nvcc_version {
            let mm: Vec<&str> = n.split('.').take(2).collect();
            v.push(format!("nvcc-{}", mm.join(".")));
        }
        v
    }

    /// The entry that covers a trial: one naming the trial itself first,
    /// else one naming its test.
    pub fn find(&self, trial: &TrialId) -> Option<&Xfail> {
        let exact = self
            .entries
            .iter()
            .find(|x| x.subject == Subject::Trial(trial.clone()));
        exact.or_else(|| self.entries.iter().find(|x| x.subject.covers(trial)))
    }

    /// Whether a message is [`Expectations::apply`]'s for a listed trial
    /// that passed (recorded `fail`): the known discrepancy no longer
    /// reproduces.
    pub fn passed_while_listed(message: &str) -> bool {
        message.starts_with(LISTED_BUT_PASSED)
    }

    /// Applies the list to a finished trial's status and message.
    pub fn apply(&self, trial: &TrialId, status: Status, message: &str) -> (Status, String) {
        let Some(x) = self.find(trial) else {
            return (status, message.to_string());
        };
        let (reason, file) = (&x.reason, x.file.display());
        match status {
            Status::Fail | Status::Crash | Status::Timeout => (
                Status::Xfail,
                format!("expected failure ({reason}; {file}): {message}"),
            ),
            Status::Pass | Status::QualityWarning => (
                Status::Fail,
                format!(
                    "{LISTED_BUT_PASSED} {file} ({reason}) but it passed: remove it from the list. {message}"
                ),
            ),
            other => (other, message.to_string()),
        }
    }
}

/// How the message of a listed trial that passed begins.
const LISTED_BUT_PASSED: &str = "listed as a known failure in";

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu(rule: &str, test: &str) -> TrialId {
        TrialId::gpu("sm_90", rule, test)
    }

    #[test]
    fn slugs() {
        assert_eq!(slug("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3");
        assert_eq!(slug("  NVIDIA  H200 (x) "), "nvidia-h200-x");
        assert_eq!(slug("4.18.3.1 Global Memory"), "4-18-3-1-global-memory");
    }

    #[test]
    fn trial_and_test_entries_apply() {
        let text = "[xfail]\n\"gpu/sm_90/a.b/t\" = \"one rule\"\n\"gpu/sm_90/u\" = \"the test\"\n";
        let entries =
            Expectations::parse(text, Path::new("/r/x/gpu-a.toml"), Path::new("/r")).unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].applies_to, "gpu-a");
        assert_eq!(entries[0].file, Path::new("x/gpu-a.toml"));
        let x = Expectations { entries };
        assert_eq!(
            x.apply(&gpu("a.b", "t"), Status::Fail, "m").0,
            Status::Xfail
        );
        assert_eq!(x.apply(&gpu("c.d", "t"), Status::Fail, "m").0, Status::Fail);
        // A test entry covers every rule that lists the test.
        for rule in ["a.b", "c.d"] {
            let (s, m) = x.apply(&gpu(rule, "u"), Status::Fail, "m");
            assert_eq!(s, Status::Xfail);
            assert!(m.contains("the test; x/gpu-a.toml"), "{m}");
            let (s, m) = x.apply(&gpu(rule, "u"), Status::Pass, "m");
            assert_eq!(s, Status::Fail);
            assert!(Expectations::passed_while_listed(&m), "{m}");
            assert!(!Expectations::passed_while_listed("m"));
        }
        assert_eq!(
            x.apply(&TrialId::gpu("sm_80", "a.b", "u"), Status::Fail, "m")
                .0,
            Status::Fail
        );
        assert_eq!(
            x.apply(&gpu("a.b", "u"), Status::NotSupported, "m").0,
            Status::NotSupported
        );
    }

    #[test]
    fn a_bad_key_or_file_is_a_located_error() {
        let e = Expectations::parse(
            "[xfail]\n\"gpu/a/b\" = \"x\"\n",
            Path::new("e/gpu.toml"),
            Path::new("/"),
        )
        .unwrap_err();
        assert!(
            e.starts_with("e/gpu.toml: ") && e.contains("gpu/sm_XX/"),
            "{e}"
        );
        assert!(e.contains("line 2"), "{e}");
        let e =
            Expectations::parse("[xfial]\n", Path::new("bad.toml"), Path::new("/")).unwrap_err();
        assert!(e.contains("bad.toml"), "{e}");
    }

    #[test]
    fn loading_named_files_and_directories() {
        let dir = std::env::temp_dir().join(format!("gridcheck-xfail-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("nvcc-13.0.toml"),
            "[xfail]\n\"static/a.b/c\" = \"known\"\n",
        )
        .unwrap();
        let names = Expectations::names(Some("GPU X"), Some("13.0.88"));
        assert_eq!(names, vec!["gpu-x".to_string(), "nvcc-13.0".to_string()]);
        let x = Expectations::load(&dir, &names, &dir).unwrap();
        assert_eq!(x.entries.len(), 1);
        assert_eq!(x.entries[0].file, Path::new("nvcc-13.0.toml"));
        assert_eq!(Expectations::load_all(&dir, &dir).unwrap(), x);
        std::fs::write(dir.join("bad.toml"), "[xfial]\n").unwrap();
        assert!(Expectations::load(&dir, &["bad".into()], &dir).is_err());
        let e = Expectations::load_all(&dir, &dir).unwrap_err();
        assert!(e.contains("bad.toml"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            Expectations::load_all(&dir, &dir)
                .unwrap()
                .entries
                .is_empty()
        );
    }

    /// The checked-in files parse, and every key names a test of the spec
    /// (and, for a trial, a rule that lists it).
    #[test]
    fn the_checked_in_files_name_real_tests() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let x = Expectations::load_all(&root.join("conformance/expectations"), &root).unwrap();
        assert!(!x.entries.is_empty());
        let spec = gridcheck_spec::load_dir(&root.join("spec"), None).unwrap();
        for e in &x.entries {
            assert!(spec.test(e.subject.test()).is_some(), "{}", e.subject);
            if let Some(rule) = e.subject.rule() {
                let r = spec.rule(rule).unwrap_or_else(|| panic!("{}", e.subject));
                assert!(
                    r.tests.iter().any(|t| t == e.subject.test()),
                    "{}",
                    e.subject
                );
            }
        }
    }

    /// The newest recorded run of each GPU has as xfail exactly the trials
    /// the checked-in files (the run's GPU's and nvcc's) cover: the files
    /// say what they said when that run was recorded. Older runs keep the
    /// statuses of their day (an entry removed since, because its premise
    /// was disproved, leaves their records as they were).
    #[test]
    fn the_checked_in_files_cover_the_recorded_xfails() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let results = root.join("records");
        let mut checked = 0;
        for gpu in std::fs::read_dir(&results).unwrap().flatten() {
            let newest = std::fs::read_dir(gpu.path())
                .into_iter()
                .flatten()
                .flatten()
                .filter(|d| d.path().join("results.jsonl").is_file())
                .max_by_key(|d| d.file_name());
            if let Some(date) = newest {
                let Ok(text) = std::fs::read_to_string(date.path().join("results.jsonl")) else {
                    continue;
                };
                let records: Vec<crate::TrialRecord> = text
                    .lines()
                    .map(|l| serde_json::from_str(l).unwrap())
                    .collect();
                let nvcc = records
                    .iter()
                    .find_map(|r| r.compile.as_ref().map(|c| c.nvcc.clone()));
                let gpu_name = records
                    .iter()
                    .find_map(|r| r.environment.as_ref().map(|e| e.gpu.clone()));
                let names = Expectations::names(gpu_name.as_deref(), nvcc.as_deref());
                let x = Expectations::load(&root.join("conformance/expectations"), &names, &root)
                    .unwrap();
                for r in &records {
                    let covered = x.find(&r.trial).is_some();
                    if r.status == Status::Xfail {
                        assert!(covered, "{} was xfail, no entry covers it now", r.trial);
                        checked += 1;
                    }
                    if covered {
                        // Applied to what the run measured, the entry gives
                        // the recorded status back (a trial that did not run
                        // is left alone).
                        assert!(
                            matches!(
                                r.status,
                                Status::Xfail | Status::NotSupported | Status::NotRun
                            ),
                            "{} is covered but was {}",
                            r.trial,
                            r.status
                        );
                    }
                }
            }
        }
        assert!(checked > 0, "no recorded xfail was checked");
    }
}
