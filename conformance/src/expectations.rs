//! Known failures per GPU and per nvcc: `conformance/expectations/<gpu>.toml`
//! for GPU trials, `conformance/expectations/nvcc-<major>.<minor>.toml` for
//! compile trials.
//!
//! ```toml
//! # <gpu> is the device name in lowercase with non-alphanumerics as `-`,
//! # e.g. nvidia-h100-80gb-hbm3.toml
//! [xfail]
//! "gpu/sm_90/<rule>/<test>" = "why this is known to fail, with the evidence"
//! ```
//!
//! A listed trial that fails is reported `xfail` (not a failure of the run);
//! a listed trial that passes fails, as wasmtime's `should_fail` does, so the
//! list cannot go stale silently.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gridcheck_report::Status;
use serde::Deserialize;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    xfail: BTreeMap<String, String>,
}

/// Every known failure that applies here: trial name to (reason, file).
#[derive(Debug, Default)]
pub struct Expectations {
    pub xfail: BTreeMap<String, (String, PathBuf)>,
}

/// The file name for a device name.
pub fn slug(device: &str) -> String {
    let s: String = device
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
    /// Loads `<dir>/<name>.toml` for each name; a missing file lists nothing.
    pub fn load(dir: &Path, names: &[String]) -> Result<Expectations, String> {
        let mut x = Expectations::default();
        for name in names {
            let path = dir.join(format!("{name}.toml"));
            let text = match std::fs::read_to_string(&path) {
                Ok(t) => t,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(format!("{}: {e}", path.display())),
            };
            let f: File = toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
            for (trial, reason) in f.xfail {
                x.xfail.insert(trial, (reason, path.clone()));
            }
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

    /// Applies the list to a finished trial's status and message.
    pub fn apply(&self, trial: &str, status: Status, message: &str) -> (Status, String) {
        let Some((reason, file)) = self.xfail.get(trial) else {
            return (status, message.to_string());
        };
        let file = file.display();
        match status {
            Status::Fail | Status::Crash | Status::Timeout => (
                Status::Xfail,
                format!("expected failure ({reason}; {file}): {message}"),
            ),
            Status::Pass | Status::QualityWarning => (
                Status::Fail,
                format!(
                    "listed as a known failure in {file} ({reason}) but it passed: remove it from the list. {message}"
                ),
            ),
            other => (other, message.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_and_application() {
        assert_eq!(slug("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3");
        let dir = std::env::temp_dir().join(format!("gridcheck-xfail-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("nvcc-13.0.toml"),
            "[xfail]\n\"gpu/a/b\" = \"known\"\n",
        )
        .unwrap();
        let names = Expectations::names(None, Some("13.0.88"));
        assert_eq!(names, vec!["nvcc-13.0".to_string()]);
        let x = Expectations::load(&dir, &names).unwrap();
        assert_eq!(x.apply("gpu/a/b", Status::Fail, "m").0, Status::Xfail);
        assert_eq!(x.apply("gpu/a/b", Status::Pass, "m").0, Status::Fail);
        assert_eq!(x.apply("gpu/a/c", Status::Pass, "m").0, Status::Pass);
        std::fs::write(dir.join("bad.toml"), "[xfial]\n").unwrap();
        assert!(Expectations::load(&dir, &["bad".into()]).is_err());
    }
}
