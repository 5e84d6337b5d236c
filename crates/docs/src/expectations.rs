//! The known discrepancies: every `[xfail]` entry of
//! `conformance/expectations/*.toml` (the harness reads the same files; see
//! `conformance/src/expectations.rs`), with the file it is listed in.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::Result;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    xfail: BTreeMap<String, String>,
}

/// One known failure: the trial, why, and where it is listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Xfail {
    /// `gpu-slug` or `nvcc-13.0`: the file's stem, what the entry applies to.
    pub applies_to: String,
    /// The file, relative to the repository root when under it.
    pub file: String,
    pub trial: String,
    /// The reason, with the evidence.
    pub reason: String,
}

impl Xfail {
    /// The rule id the trial name carries (`<tier>/[<sm>/]<rule>/<test>`).
    /// The test: the trial name's last part.
    pub fn test(&self) -> &str {
        self.trial.rsplit('/').next().unwrap_or("")
    }

    pub fn rule(&self) -> &str {
        let parts: Vec<&str> = self.trial.split('/').collect();
        match parts.len() {
            n if n >= 3 => parts[n - 2],
            _ => "",
        }
    }
}

/// Every xfail entry of every `*.toml` in `dir`, by file then trial. A
/// missing directory lists nothing; a file that does not parse is an error.
pub fn load(dir: &Path, root: &Path) -> Result<Vec<Xfail>> {
    let mut files: Vec<_> = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("cannot read {}: {e}", dir.display())),
    };
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let f: File = toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let stem = path
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let file = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .display()
            .to_string();
        for (trial, reason) in f.xfail {
            out.push(Xfail {
                applies_to: stem.clone(),
                file: file.clone(),
                trial,
                reason,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_entries_and_names_bad_files() {
        let dir = std::env::temp_dir().join(format!("gc-xfail-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("gpu-a.toml"),
            "[xfail]\n\"gpu/sm_90/cdp2.a.b/t\" = \"seen 7 times\"\n",
        )
        .unwrap();
        let x = load(&dir, &dir).unwrap();
        assert_eq!(x.len(), 1);
        assert_eq!(x[0].rule(), "cdp2.a.b");
        assert_eq!(x[0].applies_to, "gpu-a");
        assert_eq!(x[0].file, "gpu-a.toml");
        std::fs::write(dir.join("nvcc-1.0.toml"), "[xfail\n").unwrap();
        let e = load(&dir, &dir).unwrap_err();
        assert!(e.contains("nvcc-1.0.toml"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(load(&dir, &dir).unwrap().is_empty());
    }
}
