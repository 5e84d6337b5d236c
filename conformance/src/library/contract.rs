//! The programs' side of the library tier, from `gridcheck_library`
//! (crates/library, which builds them): the catalog of
//! `kernels/cccl/algorithms.toml`, where a build puts each binary, the JSON
//! line a program prints per run, and what a release's `build.json`
//! (`target/library/<release>/build.json`) says of each build: whether it
//! built, and the nvcc command that made it (a failure's reproducer).

use std::path::Path;

use serde::Deserialize;

pub use gridcheck_library::{
    Algorithm, CATALOG_FILE as CATALOG, Catalog, Outcome, PROGRAMS_DIR as SOURCE_DIR, TARGETS,
    binary, parse_outcomes,
};

/// Where a build puts the programs, relative to the checkout.
pub const BUILD_DIR: &str = "target/library";

/// What a release's build says of one target's programs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BuildInfo {
    /// nvcc's version.
    pub nvcc: String,
    /// The CCCL version of the headers.
    pub cccl: String,
    /// Per program (its shipped variant): whether it built (`error`: the
    /// compiler's, located) and its command.
    pub programs: std::collections::BTreeMap<String, ProgramBuild>,
    /// Per binary (`<program><variant>`, every variant): its nvcc command.
    pub commands: std::collections::BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ProgramBuild {
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub command: String,
}

/// One entry of `build.json`'s `builds`.
#[derive(Debug, Deserialize)]
struct Entry {
    program: String,
    target: String,
    #[serde(default)]
    variant: String,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    command: String,
}

#[derive(Debug, Deserialize)]
struct Record {
    #[serde(default)]
    nvcc: String,
    #[serde(default)]
    cccl: String,
    #[serde(default)]
    builds: Vec<Entry>,
}

impl BuildInfo {
    /// What the `build.json` of `release` says of `target`'s shipped
    /// programs, or why there is none.
    pub fn load(root: &Path, release: &str, target: &str) -> Result<BuildInfo, String> {
        let path = gridcheck_library::build_record(root, release);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let r: Record =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let commands = r
            .builds
            .iter()
            .filter(|b| b.target == target)
            .map(|b| (format!("{}{}", b.program, b.variant), b.command.clone()))
            .collect();
        let programs = r
            .builds
            .into_iter()
            .filter(|b| b.target == target && b.variant.is_empty())
            .map(|b| {
                (
                    b.program,
                    ProgramBuild {
                        error: b.error,
                        command: b.command,
                    },
                )
            })
            .collect();
        Ok(BuildInfo {
            nvcc: r.nvcc,
            cccl: r.cccl,
            programs,
            commands,
        })
    }

    /// The nvcc command that built a binary (`<program><variant>`).
    pub fn command(&self, binary: &str) -> String {
        self.commands.get(binary).cloned().unwrap_or_default()
    }
}
