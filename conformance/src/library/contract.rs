//! A stand-in for `gridcheck_library` (crates/library), which builds the
//! programs: the contract the library tier runs against, mirrored here
//! until that crate is part of the workspace (then `library.rs` imports
//! it instead of this module). The catalog of `kernels/cccl/algorithms.toml`
//! (per CCCL release, each algorithm that launches with PDL, the program
//! that calls it and the header lines of its waits and triggers), where a
//! build puts each binary, what its `build.json` says, and the JSON line a
//! program prints per run.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The catalog, relative to the checkout.
pub const CATALOG: &str = "kernels/cccl/algorithms.toml";

/// Where a build puts the programs, relative to the checkout.
pub const BUILD_DIR: &str = "target/library";

/// The standalone sources, relative to the checkout.
pub const SOURCE_DIR: &str = "kernels/cccl";

/// Every CCCL release's PDL algorithms.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalog {
    #[serde(default, rename = "release")]
    pub releases: Vec<Release>,
}

/// One CCCL release (named as the toolchain that ships it, `13.3`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Release {
    pub name: String,
    /// The CCCL version its headers say (`3.3.0`).
    #[serde(default)]
    pub cccl: String,
    #[serde(default, rename = "algorithm")]
    pub algorithms: Vec<Algorithm>,
}

/// An algorithm that launches a kernel with PDL.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Algorithm {
    pub name: String,
    /// The `.cu` stem of the program that calls it; empty when none does
    /// yet.
    #[serde(default)]
    pub program: String,
    /// Each wait, `header:line`.
    #[serde(default)]
    pub waits: Vec<String>,
    /// Each trigger, `header:line`.
    #[serde(default)]
    pub triggers: Vec<String>,
}

impl Catalog {
    /// The checkout's catalog, or why it cannot be read (the file named).
    pub fn load(root: &Path) -> Result<Catalog, String> {
        let path = root.join(CATALOG);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        toml::from_str(&text).map_err(|e| {
            let line = e
                .span()
                .map(|s| format!(":{}", 1 + text[..s.start].matches('\n').count()))
                .unwrap_or_default();
            format!("{}{line}: {}", path.display(), e.message().trim())
        })
    }

    pub fn release(&self, name: &str) -> Option<&Release> {
        self.releases.iter().find(|r| r.name == name)
    }
}

/// The build targets: SASS for sm_90, and PTX for compute_80 that the
/// driver JIT-compiles.
pub const TARGETS: [&str; 2] = ["sm_90", "compute_80"];

/// A program's binary: `target/library/<release>/<target>/<program><variant>`
/// (`variant`: `""` as shipped, `-nopdl`, `-ptx90`, `-<patch>`).
pub fn binary(root: &Path, release: &str, target: &str, program: &str, variant: &str) -> PathBuf {
    root.join(BUILD_DIR)
        .join(release)
        .join(target)
        .join(format!("{program}{variant}"))
}

/// What a release's build of one target says (`build.json` beside the
/// binaries).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct BuildInfo {
    /// nvcc's version.
    #[serde(default)]
    pub nvcc: String,
    #[serde(default)]
    pub cccl: String,
    /// The flags every program was built with.
    #[serde(default)]
    pub flags: Vec<String>,
    /// Per program, whether it built (`error`: the compiler's, located).
    #[serde(default)]
    pub programs: std::collections::BTreeMap<String, ProgramBuild>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ProgramBuild {
    #[serde(default)]
    pub error: Option<String>,
}

impl BuildInfo {
    /// The `build.json` of a release's target, or why there is none.
    pub fn load(root: &Path, release: &str, target: &str) -> Result<BuildInfo, String> {
        let path = root
            .join(BUILD_DIR)
            .join(release)
            .join(target)
            .join("build.json");
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The nvcc command that builds a program's standalone source.
    pub fn command(&self, program: &str) -> String {
        format!(
            "nvcc {} {SOURCE_DIR}/{program}.cu -o {program}",
            self.flags.join(" ")
        )
    }
}

/// One run's line of a program's standard output.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Outcome {
    pub algorithm: String,
    pub size: u64,
    pub env: String,
    pub reps: u64,
    pub calls: u64,
    pub wrong: u64,
    #[serde(default)]
    pub first_wrong: Option<String>,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub after_calls: Option<u64>,
    #[serde(default)]
    pub pdl: Option<bool>,
    #[serde(default)]
    pub ptx_version: Option<u32>,
    #[serde(default)]
    pub cccl: Option<String>,
    #[serde(default)]
    pub gpu_ms: Option<f64>,
}

/// The JSON lines of a program's standard output, each a run; a line that
/// is not one is an error naming it.
pub fn parse_outcomes(stdout: &str) -> Result<Vec<Outcome>, String> {
    stdout
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| format!("line {} of the output `{l}`: {e}", i + 1))
        })
        .collect()
}
