//! The CCCL library programs: real CUB calls whose kernels use PDL (the
//! wait `_CCCL_PDL_GRID_DEPENDENCY_SYNC()` and the trigger
//! `_CCCL_PDL_TRIGGER_NEXT_LAUNCH()`, placed by hand), the list of them per
//! CUDA release, their binaries and their outcomes. Pure Rust: nothing here
//! needs CUDA to build; `cargo xtask library` builds the programs with nvcc.
//!
//! # The contract with the harness's library tier
//!
//! 1. `kernels/cccl/algorithms.toml` ([`Catalog`], [`CATALOG_FILE`]) is
//!    generated from each installed release's headers by `cargo xtask
//!    library scan` ([`scan_headers`], [`release_of_scan`], [`render`]) and
//!    checked by `tests/catalog.rs`. Per release: the CCCL version and each
//!    algorithm that launches with PDL: its name, its entry point, its
//!    program (`kernels/cccl/<program>.cu`; `""` when none covers it, and a
//!    test fails), the Thrust entry points that reach it, and the
//!    `file:line` of each wait and trigger. Which header leads to which
//!    entry point is data (`mapping.rs`); which headers use PDL in a
//!    release comes from that release's headers.
//! 2. [`Catalog::load`], [`releases_installed`], [`binary`]
//!    (`target/library/<release>/<target>/<program><variant>`), the targets
//!    [`TARGETS`] (`sm_90`: SASS; `compute_80`: PTX only, JIT-compiled on the
//!    GPU, where the wait is compiled out), the variants (`""` as shipped,
//!    [`NOPDL`] built with `-DCCCL_DISABLE_PDL`, [`PTX90`] PTX for
//!    compute_90 in the compute_80 folder, and `-<patch>` for each patch of
//!    `kernels/cccl/patches.toml`, sm_90 only), [`parse_outcomes`] and
//!    [`Outcome`].
//! 3. A program's command line: `<exe> --algorithm A --size N --reps R
//!    --env E --seed S [--device D]`; one JSON line ([`Outcome`]) on
//!    stdout and nothing else; exit 3 with `error` and `after_calls` on a
//!    CUDA error, 2 on a bad command line; `gridcheck-not-run <reason>`
//!    and exit 0 where it cannot run ([`NOT_RUN`]). Every call's result is
//!    checked on the host against a host reference.
//! 4. `--env`: `quiet`, `back-to-back`, `stress`, `burst`, `delay`
//!    (`kernels/cccl/README.md` says what each does).
//! 5. `cargo xtask library build` writes the binaries and
//!    `target/library/<release>/build.json`; `cargo xtask library list`
//!    prints the catalog.
//! 6. Patches ([`Patches`]): the wait moved to a kernel's first line in a
//!    copy of the headers ([`materialize`]).

mod catalog;
mod installed;
pub mod mapping;
mod outcome;
mod patch;
mod scan;

use std::path::{Path, PathBuf};

pub use catalog::{Algorithm, CATALOG_FILE, Catalog, Release, is_name, parse_site, render};
pub use installed::{Headers, InstalledRelease, header_dirs, include_of, releases_installed};
pub use outcome::{NOT_RUN, Outcome, Printed, parse_outcomes, read_stdout};
pub use patch::{
    Edit, PATCHES_FILE, Patch, Patches, RESERVED, apply_to_text, headers_dir, materialize,
    moves_a_wait,
};
pub use scan::{
    Scanned, Sites, TRIGGER, WAIT, cccl_version, merge, release_of_scan, scan_headers, sites_of,
};

/// The programs' sources: `kernels/cccl/<program>.cu`.
pub const PROGRAMS_DIR: &str = "kernels/cccl";

/// The targets a program is built for: SASS for sm_90, and PTX for
/// compute_80 only (the driver JIT-compiles it on the GPU; the wait,
/// guarded by `NV_PROVIDES_SM_90`, is not in it).
pub const TARGETS: [&str; 2] = ["sm_90", "compute_80"];

/// The variant as shipped.
pub const SHIPPED: &str = "";
/// PDL off: `-DCCCL_DISABLE_PDL`, the control.
pub const NOPDL: &str = "-nopdl";
/// PTX for compute_90 (`-gencode arch=compute_90,code=compute_90`): the PTX
/// path's control, where the wait is compiled in; in the compute_80 folder.
pub const PTX90: &str = "-ptx90";

/// `<root>/target/library`.
pub fn library_dir(root: &Path) -> PathBuf {
    root.join("target/library")
}

/// A program's binary: `target/library/<release>/<target>/<program><variant>`,
/// `variant` one of [`SHIPPED`], [`NOPDL`], [`PTX90`] or `-<patch>`.
pub fn binary(root: &Path, release: &str, target: &str, program: &str, variant: &str) -> PathBuf {
    library_dir(root)
        .join(release)
        .join(target)
        .join(format!("{program}{variant}"))
}

/// A program's source.
pub fn source(root: &Path, program: &str) -> PathBuf {
    root.join(PROGRAMS_DIR).join(format!("{program}.cu"))
}

/// `target/library/<release>/build.json`.
pub fn build_record(root: &Path, release: &str) -> PathBuf {
    library_dir(root).join(release).join("build.json")
}

/// The nvcc flags of a target and a variant (besides `-std=c++17`, the
/// include path and the output): what `cargo xtask library build` runs.
pub fn nvcc_flags(target: &str, variant: &str) -> Result<Vec<String>, String> {
    let gencode = match (target, variant) {
        ("compute_80", PTX90) => "arch=compute_90,code=compute_90",
        ("sm_90", PTX90) => return Err("-ptx90 is a variant of the compute_80 target".into()),
        ("sm_90", _) => "arch=compute_90,code=sm_90",
        ("compute_80", v) if v == SHIPPED || v == NOPDL => "arch=compute_80,code=compute_80",
        ("compute_80", v) => {
            return Err(format!(
                "{v}: a patch moves a wait that compute_80 PTX does not have; patches build for sm_90"
            ));
        }
        (t, _) => return Err(format!("`{t}` is not a target: one of {TARGETS:?}")),
    };
    let mut flags = vec!["-gencode".to_string(), gencode.to_string()];
    if variant == NOPDL {
        flags.push("-DCCCL_DISABLE_PDL".into());
    }
    Ok(flags)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binaries_and_flags_follow_the_contract() {
        let root = Path::new("/r");
        assert_eq!(
            binary(root, "13.3", "sm_90", "merge_sort", NOPDL),
            Path::new("/r/target/library/13.3/sm_90/merge_sort-nopdl")
        );
        assert_eq!(
            binary(root, "13.0", "compute_80", "scan", SHIPPED),
            Path::new("/r/target/library/13.0/compute_80/scan")
        );
        assert_eq!(
            nvcc_flags("sm_90", "").unwrap(),
            ["-gencode", "arch=compute_90,code=sm_90"]
        );
        assert!(
            nvcc_flags("compute_80", NOPDL)
                .unwrap()
                .contains(&"-DCCCL_DISABLE_PDL".into())
        );
        assert!(nvcc_flags("compute_80", PTX90).unwrap()[1].contains("code=compute_90"));
        assert!(nvcc_flags("sm_90", PTX90).is_err());
        assert!(nvcc_flags("compute_80", "-wait-first").is_err());
        assert!(nvcc_flags("sm_90", "-wait-first").is_ok());
        assert!(nvcc_flags("sm_75", "").is_err());
    }
}
