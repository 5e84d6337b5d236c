//! Known failures per GPU: `conformance/expectations/<gpu>.toml`.
//!
//! ```toml
//! # <gpu> is the device name in lowercase with non-alphanumerics as `-`,
//! # e.g. nvidia-h100-80gb-hbm3.toml
//! [xfail]
//! "gpu/sm_90/<rule>/<test>" = "why this is known to fail, with a link or an issue"
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
pub struct Expectations {
    #[serde(default)]
    pub xfail: BTreeMap<String, String>,
    #[serde(skip)]
    pub file: Option<PathBuf>,
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
    /// Loads `<dir>/<slug(device)>.toml`; none is an empty list.
    pub fn load(dir: &Path, device: &str) -> Result<Expectations, String> {
        let file = dir.join(format!("{}.toml", slug(device)));
        let text = match std::fs::read_to_string(&file) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Expectations::default());
            }
            Err(e) => return Err(format!("{}: {e}", file.display())),
        };
        let mut x: Expectations =
            toml::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        x.file = Some(file);
        Ok(x)
    }

    /// Applies the list to a finished trial's status and message.
    pub fn apply(&self, trial: &str, status: Status, message: &str) -> (Status, String) {
        let Some(reason) = self.xfail.get(trial) else {
            return (status, message.to_string());
        };
        let file = self
            .file
            .as_ref()
            .map(|f| f.display().to_string())
            .unwrap_or_default();
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
        let x: Expectations = toml::from_str("[xfail]\n\"gpu/a/b\" = \"known\"\n").unwrap();
        assert_eq!(x.apply("gpu/a/b", Status::Fail, "m").0, Status::Xfail);
        assert_eq!(x.apply("gpu/a/b", Status::Pass, "m").0, Status::Fail);
        assert_eq!(x.apply("gpu/a/c", Status::Pass, "m").0, Status::Pass);
        assert!(toml::from_str::<Expectations>("[xfial]\n").is_err());
    }
}
