//! What every command shares: the checkout `cargo xtask` runs for, its
//! spec, cargo and nvcc-free process helpers, and copying for bundles. The
//! commands (`main.rs` dispatches them) use these as `crate::root` and so
//! on, re-exported there.

use std::path::{Path, PathBuf};
use std::process::Command;

pub type Result<T> = std::result::Result<T, String>;

/// The checkout `cargo xtask` was run for (decided at run time; see
/// `gridcheck_toolchain::checkout_root`).
pub fn root() -> PathBuf {
    gridcheck_toolchain::checkout_root(env!("CARGO_MANIFEST_DIR"))
}

/// The seeds directory: $GRIDCHECK_SEEDS, else ../shared/seeds beside the checkout.
pub fn seeds_dir(root: &Path) -> Option<PathBuf> {
    gridcheck_spec::seeds::default_dir(root)
}

pub fn load_spec(root: &Path) -> Result<gridcheck_spec::Spec> {
    let seeds = match seeds_dir(root) {
        Some(d) => Some(
            gridcheck_spec::Seeds::load(&d)
                .map_err(|e| format!("cannot read the seeds in {}: {e}", d.display()))?,
        ),
        None => None,
    };
    gridcheck_spec::load_dir(&root.join("spec"), seeds.as_ref()).map_err(|e| e.to_string())
}

pub fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

pub fn status(cmd: &mut Command) -> Result<std::process::ExitStatus> {
    cmd.status().map_err(|e| format!("cannot run {cmd:?}: {e}"))
}

/// Runs `cargo xtask <args> --here` again from a release build, when this
/// is a debug build: for the commands whose figures are the release
/// harness's (`bench model`, `fuzz model`).
pub fn rerun_release(args: &[String]) -> Result<()> {
    let mut cmd =
        std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(root())
        .args(["run", "--quiet", "--release", "--package", "xtask", "--"])
        .args(args)
        .arg("--here");
    let status = cmd.status().map_err(|e| format!("cannot run cargo: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "the release build of `{}` failed ({status})",
            args.join(" ")
        ))
    }
}

/// `cargo build --quiet --release <args>` in the workspace.
pub fn release_build(root: &Path, args: &[&str]) -> Result<()> {
    let st = status(
        cargo()
            .current_dir(root)
            .args(["build", "--quiet", "--release"])
            .args(args),
    )?;
    if st.success() {
        Ok(())
    } else {
        Err(format!("cargo build failed ({st})"))
    }
}

/// Copies a file for a bundle.
pub fn copy(from: &Path, to: &Path) -> Result<()> {
    std::fs::copy(from, to)
        .map(|_| ())
        .map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))
}

/// [`copy`] into a folder made first if it does not exist.
pub fn copy_creating(from: &Path, to: &Path) -> Result<()> {
    if let Some(d) = to.parent() {
        std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
    }
    copy(from, to)
}
