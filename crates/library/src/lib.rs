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
//!    [`NOPDL`] built with `-DCCCL_DISABLE_PDL`, in the compute_80 folder
//!    [`PTX90`] PTX for compute_90 and [`SASS80`] the compute_80 PTX as
//!    nvcc's sm_90 SASS (no JIT) and [`SASS80_NOPDL`] the same with PDL off,
//!    and `-<patch>` for each patch of
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
mod paths;
mod scan;

pub use catalog::{Algorithm, CATALOG_FILE, Catalog, Release, is_name, parse_site, render};
pub use installed::{Headers, InstalledRelease, header_dirs, include_of, releases_installed};
pub use outcome::{NOT_RUN, Outcome, Printed, parse_outcomes, read_stdout};
pub use patch::{
    Edit, NOPDL_PATCH, PATCHES_FILE, Patch, Patches, RESERVED, apply_to_text, headers_dir,
    honors_disable_pdl, materialize, moves_a_wait,
};
pub use paths::{
    NOPDL, PROGRAMS_DIR, PTX_CONTROLS, PTX90, SASS80, SASS80_NOPDL, SHIPPED, TARGETS, binary,
    build_record, is_nopdl, library_dir, nvcc_flags, source,
};
pub use scan::{
    Scanned, Sites, TRIGGER, WAIT, cccl_version, merge, release_of_scan, scan_headers, sites_of,
};
