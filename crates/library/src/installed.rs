//! The installed releases: a CUDA release's CCCL headers under the
//! checkout's `.toolchains/<release>/`, and the ones that also have a
//! working nvcc to build the programs with (`gridcheck_toolchain`).

use std::path::{Path, PathBuf};

use gridcheck_toolchain::{TOOLCHAINS_DIR, Toolchain, is_release, release_key};

/// A release's CCCL headers: `.toolchains/<release>/lib/python3.*/site-packages/nvidia/cu13/include/cccl`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Headers {
    pub release: String,
    pub include: PathBuf,
}

/// An installed release that can build the programs: its headers and nvcc.
#[derive(Debug, Clone)]
pub struct InstalledRelease {
    pub release: String,
    pub include: PathBuf,
    pub toolchain: Toolchain,
}

/// `include/cccl` of the virtual environment `dir`, if it has one.
pub fn include_of(dir: &Path) -> Option<PathBuf> {
    let lib = std::fs::read_dir(dir.join("lib")).ok()?;
    let mut found: Vec<PathBuf> = lib
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
        .map(|e| e.path().join("site-packages/nvidia/cu13/include/cccl"))
        .filter(|p| p.join("cub").is_dir())
        .collect();
    found.sort();
    found.pop()
}

/// Every release under `<root>/.toolchains/` whose directory has CCCL
/// headers, in release order; no nvcc is run.
pub fn header_dirs(root: &Path) -> Vec<Headers> {
    let mut out: Vec<Headers> = std::fs::read_dir(root.join(TOOLCHAINS_DIR))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let release = e.file_name().to_string_lossy().into_owned();
            let include = include_of(&e.path())?;
            is_release(&release).then_some(Headers { release, include })
        })
        .collect();
    out.sort_by_key(|h| release_key(&h.release));
    out
}

/// The releases that have both headers and an nvcc of their own release,
/// and, apart, why each other release directory cannot build.
pub fn releases_installed(root: &Path) -> (Vec<InstalledRelease>, Vec<String>) {
    let mut good = Vec::new();
    let mut bad = Vec::new();
    for h in header_dirs(root) {
        let dir = root.join(TOOLCHAINS_DIR).join(&h.release);
        match gridcheck_toolchain::find_toolchain(root, &h.release) {
            Ok(toolchain) => good.push(InstalledRelease {
                release: h.release,
                include: h.include,
                toolchain,
            }),
            Err(e) => bad.push(format!("{}: {e}", dir.display())),
        }
    }
    (good, bad)
}
