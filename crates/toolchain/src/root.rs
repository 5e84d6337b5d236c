//! Which checkout a binary works on, decided when it runs.
//!
//! `cargo xtask` and the harness used to take the root from
//! `env!("CARGO_MANIFEST_DIR")` at compile time: with a `CARGO_TARGET_DIR`
//! shared between checkouts, a binary built in one checkout and reused by
//! cargo in another silently worked on the first one's tree. The root is
//! now, in order: the workspace of the `CARGO_MANIFEST_DIR` cargo sets when
//! it runs the binary (`cargo run`, `cargo xtask`, `cargo test`); the
//! workspace found walking up from the current directory (a binary run by
//! hand, as `conformance/gpu-run.sh` does); the compile-time directory.

use std::path::{Path, PathBuf};

/// The variable that names the commit a run's code comes from, where the
/// checkout cannot say (see [`run_commit`]).
pub const COMMIT_VAR: &str = "GRIDCHECK_COMMIT";

/// The commit checked out at `root`, `+dirty` with uncommitted changes to
/// tracked files; `None` where git cannot say (no `.git`, no git).
pub fn checkout_commit(root: &Path) -> Option<String> {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
    };
    let head = git(&["rev-parse", "HEAD"])?;
    let head = String::from_utf8_lossy(&head.stdout).trim().to_string();
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
        .is_some_and(|o| !o.stdout.is_empty());
    (!head.is_empty()).then(|| if dirty { format!("{head}+dirty") } else { head })
}

/// The commit the running code comes from: [`COMMIT_VAR`] when set (the
/// bundle scripts set it from `.gpu-bundle/commit`, the commit `cargo xtask
/// gpu-bundle` built from, since the checkout a bundle travels with may be
/// another commit's), else [`checkout_commit`] of `root`.
pub fn run_commit(root: &Path) -> Option<String> {
    match std::env::var(COMMIT_VAR) {
        Ok(c) if !c.trim().is_empty() => Some(c.trim().to_string()),
        _ => checkout_commit(root),
    }
}

/// Whether `dir` is a gridcheck checkout: a `Cargo.toml` with a
/// `[workspace]` table, beside `spec/`.
fn is_checkout(dir: &Path) -> bool {
    dir.join("spec").is_dir()
        && std::fs::read_to_string(dir.join("Cargo.toml"))
            .is_ok_and(|t| t.lines().any(|l| l.trim() == "[workspace]"))
}

/// The checkout `dir` is in: `dir` or its nearest ancestor that is one.
pub fn checkout_of(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| is_checkout(d))
        .map(|d| d.canonicalize().unwrap_or_else(|_| d.to_path_buf()))
}

/// The root from its three sources, in order (see the module docs).
pub fn resolve_root(
    run_time_manifest_dir: Option<&Path>,
    current_dir: Option<&Path>,
    compile_time_manifest_dir: &Path,
) -> PathBuf {
    run_time_manifest_dir
        .and_then(checkout_of)
        .or_else(|| current_dir.and_then(checkout_of))
        .or_else(|| checkout_of(compile_time_manifest_dir))
        .unwrap_or_else(|| compile_time_manifest_dir.to_path_buf())
}

/// The checkout this run works on; pass `env!("CARGO_MANIFEST_DIR")`.
pub fn checkout_root(compile_time_manifest_dir: &str) -> PathBuf {
    let run_time = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
    let cwd = std::env::current_dir().ok();
    resolve_root(
        run_time.as_deref(),
        cwd.as_deref(),
        Path::new(compile_time_manifest_dir),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checkout(dir: &Path) -> PathBuf {
        std::fs::create_dir_all(dir.join("spec")).unwrap();
        std::fs::create_dir_all(dir.join("xtask/src")).unwrap();
        std::fs::write(dir.join("Cargo.toml"), "[workspace]\nmembers = []\n").unwrap();
        std::fs::write(
            dir.join("xtask/Cargo.toml"),
            "[package]\nname = \"xtask\"\n",
        )
        .unwrap();
        dir.canonicalize().unwrap()
    }

    #[test]
    fn the_run_time_checkout_wins_over_the_compile_time_one() {
        let tmp = std::env::temp_dir().join(format!("gridcheck-root-{}", std::process::id()));
        let built_in = checkout(&tmp.join("a"));
        let run_in = checkout(&tmp.join("b"));
        let elsewhere = tmp.join("nowhere");
        std::fs::create_dir_all(&elsewhere).unwrap();
        let compile_time = built_in.join("xtask");
        // cargo ran the binary for checkout b: b, wherever the binary was built.
        assert_eq!(
            resolve_root(Some(&run_in.join("xtask")), Some(&elsewhere), &compile_time),
            run_in
        );
        // Run by hand from inside b (a subdirectory too): b.
        assert_eq!(
            resolve_root(None, Some(&run_in.join("spec")), &compile_time),
            run_in
        );
        // Nothing says otherwise: where it was built.
        assert_eq!(
            resolve_root(None, Some(&elsewhere), &compile_time),
            built_in
        );
        assert_eq!(resolve_root(None, None, &compile_time), built_in);
        // A manifest directory outside any checkout is passed over.
        assert_eq!(
            resolve_root(Some(&elsewhere), Some(&run_in), &compile_time),
            run_in
        );
        std::fs::remove_dir_all(&tmp).unwrap();
    }

    #[test]
    fn this_checkout_is_found_from_the_manifest_dir_cargo_sets() {
        let here = checkout_root(env!("CARGO_MANIFEST_DIR"));
        assert!(
            here.join("spec").is_dir() && here.join("xtask").is_dir(),
            "{}",
            here.display()
        );
        assert_eq!(
            checkout_of(Path::new(env!("CARGO_MANIFEST_DIR"))).as_deref(),
            Some(here.as_path())
        );
    }
}
