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
//! list cannot go stale silently. Every file is also checked on every run,
//! whatever the machine has ([`check_all`]): it parses, and each entry names
//! a trial of the spec and gives a reason.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gridcheck_report::Status;
use gridcheck_spec::{Spec, TestBody};
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

/// Whether `trial` names a trial the harness makes from `spec` on some GPU:
/// `model/<rule>/<test>` (litmus), `static/<rule>/<test>` (compile),
/// `gpu/sm_<N>/<rule>/<test>` (litmus, runtime, host).
fn is_trial(spec: &Spec, trial: &str) -> bool {
    let parts: Vec<&str> = trial.split('/').collect();
    let (tier, rule, test) = match parts.as_slice() {
        [tier, rule, test] => (*tier, *rule, *test),
        ["gpu", sm, rule, test]
            if sm
                .strip_prefix("sm_")
                .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric())) =>
        {
            ("gpu", *rule, *test)
        }
        _ => return false,
    };
    let listed = spec
        .rule(rule)
        .is_some_and(|r| r.tests.iter().any(|t| t == test));
    let Some(t) = spec.test(test).filter(|_| listed) else {
        return false;
    };
    matches!(
        (tier, &t.body),
        ("model", TestBody::Litmus(_))
            | ("static", TestBody::Compile(_))
            | (
                "gpu",
                TestBody::Litmus(_) | TestBody::Runtime(_) | TestBody::Host(_)
            )
    )
}

/// Checks every `*.toml` in `dir`, with no GPU or nvcc needed: each file
/// parses, each entry has a reason and, with `spec` (the spec the files are
/// about), names a trial of it. Every problem is listed, with its file.
pub fn check_all(dir: &Path, spec: Option<&Spec>) -> Result<(), String> {
    let mut files: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("{}: {e}", dir.display())),
    };
    files.sort();
    let mut problems = Vec::new();
    for path in files {
        let parsed = std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|text| toml::from_str::<File>(&text).map_err(|e| e.to_string()));
        let f = match parsed {
            Ok(f) => f,
            Err(e) => {
                problems.push(format!("{}: {e}", path.display()));
                continue;
            }
        };
        for (trial, reason) in &f.xfail {
            if spec.is_some_and(|spec| !is_trial(spec, trial)) {
                problems.push(format!(
                    "{}: `{trial}` is not a trial of this spec (a renamed or removed rule or test?)",
                    path.display()
                ));
            }
            if reason.trim().is_empty() {
                problems.push(format!(
                    "{}: `{trial}` has an empty reason: say why it is known to fail, with the evidence",
                    path.display()
                ));
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
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

    #[test]
    fn every_file_is_checked_against_the_spec() {
        let yaml = "rules:
  - id: cdp2.memory.x
    source: { seed: s.txt, section: \"1 S\" }
    quote: q
    profile: cdp2
    tests: [t-one]
tests:
  - name: t-one
    kind: litmus
    memory: { x: 0 }
    kernels:
      - kernel: k
        launch: host
        threads:
          t0: [store x 1, load r0 x]
    condition: exists k.t0.r0 == 0
    expect: forbidden
";
        let spec = gridcheck_spec::load_sources(&[("a.yaml".into(), yaml.into())], None).unwrap();
        let dir = std::env::temp_dir().join(format!("gridcheck-xfail-all-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let write = |text: &str| std::fs::write(dir.join("some-gpu.toml"), text).unwrap();
        write(
            "[xfail]\n\"gpu/sm_90/cdp2.memory.x/t-one\" = \"measured\"\n\"model/cdp2.memory.x/t-one\" = \"m\"\n",
        );
        check_all(&dir, Some(&spec)).unwrap();
        // A trial that does not exist, a test of another kind's tier, an
        // empty reason, a malformed file: each named.
        write(
            "[xfail]\n\"gpu/sm_90/cdp2.memory.x/t-two\" = \"m\"\n\"static/cdp2.memory.x/t-one\" = \"m\"\n\"gpu/sm_90/cdp2.memory.x/t-one\" = \" \"\n",
        );
        let e = check_all(&dir, Some(&spec)).unwrap_err();
        assert_eq!(e.lines().count(), 3, "{e}");
        // Against another spec only the reasons are checked.
        assert_eq!(check_all(&dir, None).unwrap_err().lines().count(), 1);
        assert!(
            e.contains("`gpu/sm_90/cdp2.memory.x/t-two` is not a trial"),
            "{e}"
        );
        assert!(
            e.contains("`static/cdp2.memory.x/t-one` is not a trial"),
            "{e}"
        );
        assert!(e.contains("empty reason"), "{e}");
        write("[xfail\n");
        let e = check_all(&dir, None).unwrap_err();
        assert!(e.contains("some-gpu.toml"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_checked_in_files_name_trials_of_the_spec() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let spec = gridcheck_spec::load_dir(&root.join("spec"), None).unwrap();
        check_all(&root.join("conformance/expectations"), Some(&spec)).unwrap();
    }
}
