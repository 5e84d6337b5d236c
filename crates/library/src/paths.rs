//! Where things are and how they are built: the targets, the variants, a
//! program's source and binary, a release's `build.json`, the nvcc flags of
//! a target and a variant.

use std::path::{Path, PathBuf};

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
/// The compute_80 PTX compiled ahead to sm_90 SASS by nvcc
/// (`-gencode arch=compute_80,code=sm_90`): the same code path and tuning
/// as the compute_80 target (`cub::PtxVersion` 800, the wait compiled out),
/// without the driver's JIT. It separates the JIT from the sm_80 code
/// path; in the compute_80 folder.
pub const SASS80: &str = "-sass80";
/// [`SASS80`] with PDL off, as [`NOPDL`] turns it off: the PDL control of a
/// compute_80 trial that runs as [`SASS80`] (a driver that cannot JIT the
/// release's PTX cannot run [`NOPDL`] either).
pub const SASS80_NOPDL: &str = "-sass80-nopdl";
/// The variants of the compute_80 target besides the shipped one and
/// [`NOPDL`], in the order their controls run.
pub const PTX_CONTROLS: [&str; 3] = [PTX90, SASS80, SASS80_NOPDL];

/// Whether a variant turns PDL off ([`NOPDL`], [`SASS80_NOPDL`]).
pub fn is_nopdl(variant: &str) -> bool {
    variant == NOPDL || variant == SASS80_NOPDL
}

/// `<root>/target/library`.
pub fn library_dir(root: &Path) -> PathBuf {
    root.join("target/library")
}

/// A program's binary: `target/library/<release>/<target>/<program><variant>`,
/// `variant` one of [`SHIPPED`], [`NOPDL`], [`PTX90`], [`SASS80`] or `-<patch>`.
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
///
/// `-O2` optimizes the host code only (nvcc's `-O` is the host compiler's;
/// ptxas optimizes device code the same either way, and the SASS of a
/// program built with and without it is byte-identical). Without it the
/// host side is built at `-O0`, and making the inputs, sorting the
/// references and checking the calls at 10^6 items took most of a run's
/// time.
pub fn nvcc_flags(target: &str, variant: &str) -> Result<Vec<String>, String> {
    let gencode = match (target, variant) {
        ("compute_80", PTX90) => "arch=compute_90,code=compute_90",
        ("compute_80", SASS80 | SASS80_NOPDL) => "arch=compute_80,code=sm_90",
        ("sm_90", v) if PTX_CONTROLS.contains(&v) => {
            return Err(format!("{v} is a variant of the compute_80 target"));
        }
        ("sm_90", _) => "arch=compute_90,code=sm_90",
        ("compute_80", v) if v == SHIPPED || v == NOPDL => "arch=compute_80,code=compute_80",
        ("compute_80", v) => {
            return Err(format!(
                "{v}: a patch moves a wait that compute_80 PTX does not have; patches build for sm_90"
            ));
        }
        (t, _) => return Err(format!("`{t}` is not a target: one of {TARGETS:?}")),
    };
    let mut flags = vec![
        "-O2".to_string(),
        "-gencode".to_string(),
        gencode.to_string(),
    ];
    if is_nopdl(variant) {
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
            ["-O2", "-gencode", "arch=compute_90,code=sm_90"]
        );
        assert!(
            nvcc_flags("compute_80", NOPDL)
                .unwrap()
                .contains(&"-DCCCL_DISABLE_PDL".into())
        );
        assert!(nvcc_flags("compute_80", PTX90).unwrap()[2].contains("code=compute_90"));
        assert!(nvcc_flags("sm_90", PTX90).is_err());
        assert_eq!(
            nvcc_flags("compute_80", SASS80).unwrap()[2],
            "arch=compute_80,code=sm_90"
        );
        assert!(nvcc_flags("sm_90", SASS80).is_err());
        let off = nvcc_flags("compute_80", SASS80_NOPDL).unwrap();
        assert_eq!(off[2], "arch=compute_80,code=sm_90");
        assert!(off.contains(&"-DCCCL_DISABLE_PDL".into()));
        assert!(
            !nvcc_flags("compute_80", SASS80)
                .unwrap()
                .contains(&"-DCCCL_DISABLE_PDL".into())
        );
        assert!(nvcc_flags("compute_80", "-wait-first").is_err());
        assert!(nvcc_flags("sm_90", "-wait-first").is_ok());
        assert!(nvcc_flags("sm_75", "").is_err());
    }
}
