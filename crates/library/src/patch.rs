//! The "wait moved" control: `kernels/cccl/patches.toml` names edits to a
//! release's headers (a named kernel's `_CCCL_PDL_GRID_DEPENDENCY_SYNC()`
//! inserted on the line of its body's `{`, the original call removed), a
//! program is built against a patched copy (`target/library/<release>/
//! headers-<patch>/`, never the installed headers) and its binary gets the
//! suffix `-<patch>`. Every edit keeps the file's line count, so the
//! catalog's line numbers stay right in the copy.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::catalog::is_name;
use crate::scan::WAIT;

/// The patches' path under the checkout.
pub const PATCHES_FILE: &str = "kernels/cccl/patches.toml";

/// Variant suffixes the build makes itself; no patch may take them.
pub const RESERVED: &[&str] = &["ptx90", "sass80", "sass80-nopdl"];

/// The patch that turns PDL off for a release whose headers ignore
/// `CCCL_DISABLE_PDL` (CCCL 3.0): the `-nopdl` variant builds against it.
pub const NOPDL_PATCH: &str = "nopdl";

/// Whether a release's headers honor `-DCCCL_DISABLE_PDL` (CCCL 3.1 on):
/// `cuda/std/__cccl/cuda_capabilities.h` tests it.
pub fn honors_disable_pdl(include: &Path) -> bool {
    std::fs::read_to_string(include.join("cuda/std/__cccl/cuda_capabilities.h"))
        .is_ok_and(|t| t.contains("ifdef CCCL_DISABLE_PDL"))
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Patches {
    #[serde(default, rename = "patch")]
    pub patches: Vec<Patch>,
}

/// A patch of one release's headers and the programs built against it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Patch {
    /// The binary's suffix: `<program>-<name>`; `[a-z0-9-]+`.
    pub name: String,
    pub release: String,
    pub programs: Vec<String>,
    /// The kernels it changes, for the reader.
    pub kernels: Vec<String>,
    #[serde(default)]
    pub note: String,
    #[serde(rename = "edit")]
    pub edits: Vec<Edit>,
}

/// One edit of one line of a header (relative to `include/cccl`): either
/// `insert` after the line's last `{`, or `remove` a text the line holds
/// (replaced by `with`, or by a comment that names the patch).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Edit {
    pub file: String,
    pub line: usize,
    #[serde(default)]
    pub insert: Option<String>,
    #[serde(default)]
    pub remove: Option<String>,
    #[serde(default)]
    pub with: Option<String>,
}

impl Patches {
    /// Reads `<root>/kernels/cccl/patches.toml` (none: no patches).
    pub fn load(root: &Path) -> Result<Patches, String> {
        let path = root.join(PATCHES_FILE);
        if !path.exists() {
            return Ok(Patches::default());
        }
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        Patches::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn parse(text: &str) -> Result<Patches, String> {
        if text.len() > 1 << 20 {
            return Err("more than 1 MiB".into());
        }
        let p: Patches = toml::from_str(text).map_err(|e| e.to_string().trim_end().to_string())?;
        let mut names = Vec::new();
        for x in &p.patches {
            let at = format!("patch `{}`", x.name);
            let good = !x.name.is_empty()
                && x.name.len() <= 48
                && x.name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
            if !good || RESERVED.contains(&x.name.as_str()) {
                return Err(format!(
                    "{at}: a name is [a-z0-9-]+, and not one of {RESERVED:?}"
                ));
            }
            if names.contains(&(&x.name, &x.release)) {
                return Err(format!("{at}: listed twice for release {}", x.release));
            }
            names.push((&x.name, &x.release));
            if !gridcheck_toolchain::is_release(&x.release) {
                return Err(format!(
                    "{at}: release `{}` is not a CUDA release",
                    x.release
                ));
            }
            if let Some(p) = x.programs.iter().find(|p| !is_name(p)) {
                return Err(format!("{at}: program `{p}` must be [a-z0-9_]+"));
            }
            if x.edits.is_empty() {
                return Err(format!("{at}: no edit"));
            }
            for (i, e) in x.edits.iter().enumerate() {
                let bad_file = e.file.starts_with('/') || e.file.split('/').any(|c| c == "..");
                if bad_file || e.line == 0 || e.insert.is_some() == e.remove.is_some() {
                    return Err(format!(
                        "{at}: edit[{i}]: a relative file, a line from 1, and one of insert or remove"
                    ));
                }
            }
        }
        Ok(p)
    }

    /// The patches of one release that build `program`.
    pub fn for_program<'a>(
        &'a self,
        release: &'a str,
        program: &'a str,
    ) -> impl Iterator<Item = &'a Patch> {
        self.patches
            .iter()
            .filter(move |p| p.release == release && p.programs.iter().any(|x| x == program))
    }
}

/// One file's text with the edits of `patch` that name `file` applied; the
/// error names the file and line of an edit that does not fit (the header
/// changed since the patch was written).
pub fn apply_to_text(patch: &Patch, file: &str, text: &str) -> Result<String, String> {
    let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
    for e in patch.edits.iter().filter(|e| e.file == file) {
        let at = format!("patch `{}`: {}:{}", patch.name, e.file, e.line);
        let Some(line) = lines.get_mut(e.line - 1) else {
            return Err(format!("{at}: the file has {} lines", text.lines().count()));
        };
        if let Some(ins) = &e.insert {
            let Some(pos) = line.rfind('{') else {
                return Err(format!("{at}: no `{{` on this line: `{}`", line.trim()));
            };
            line.insert_str(
                pos + 1,
                &format!(" {ins} /* gridcheck patch {} */", patch.name),
            );
        }
        if let Some(rm) = &e.remove {
            let Some(pos) = line.find(rm.as_str()) else {
                return Err(format!(
                    "{at}: the line does not hold `{rm}`: `{}`",
                    line.trim()
                ));
            };
            let by = e
                .with
                .clone()
                .unwrap_or_else(|| format!("/* moved by gridcheck patch {} */", patch.name));
            line.replace_range(pos..pos + rm.len(), &by);
        }
    }
    Ok(lines.join("\n"))
}

/// Checks that a patch moves a wait: it inserts the wait somewhere.
pub fn moves_a_wait(patch: &Patch) -> bool {
    patch
        .edits
        .iter()
        .any(|e| e.insert.as_deref().is_some_and(|i| i.contains(WAIT)))
}

/// The patched copy's directory: `target/library/<release>/headers-<patch>`.
pub fn headers_dir(root: &Path, release: &str, patch: &str) -> PathBuf {
    crate::paths::library_dir(root)
        .join(release)
        .join(format!("headers-{patch}"))
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    let rd = std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))?;
    for e in rd.flatten() {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if src.is_dir() {
            copy_tree(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst)
                .map_err(|e| format!("{} -> {}: {e}", src.display(), dst.display()))?;
        }
    }
    Ok(())
}

/// Copies the release's `include` tree to [`headers_dir`] afresh and applies
/// the patch there; the installed headers are only read.
pub fn materialize(root: &Path, include: &Path, patch: &Patch) -> Result<PathBuf, String> {
    let dir = headers_dir(root, &patch.release, &patch.name);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    copy_tree(include, &dir)?;
    let mut files: Vec<&str> = patch.edits.iter().map(|e| e.file.as_str()).collect();
    files.sort();
    files.dedup();
    for f in files {
        let path = dir.join(f);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("patch `{}`: {}: {e}", patch.name, path.display()))?;
        let new = apply_to_text(patch, f, &text)?;
        std::fs::write(&path, new).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "template <class T>\n__global__ void kern(T* p)\n{\n  int x = p[0];\n  _CCCL_PDL_GRID_DEPENDENCY_SYNC();\n  p[1] = x;\n}\n";

    const PATCHES: &str = r#"
[[patch]]
name = "wait-first"
release = "13.0"
programs = ["merge_sort"]
kernels = ["kern"]
[[patch.edit]]
file = "cub/k.cuh"
line = 3
insert = "_CCCL_PDL_GRID_DEPENDENCY_SYNC();"
[[patch.edit]]
file = "cub/k.cuh"
line = 5
remove = "_CCCL_PDL_GRID_DEPENDENCY_SYNC();"
"#;

    #[test]
    fn a_patch_moves_the_wait_and_keeps_the_lines() {
        let p = Patches::parse(PATCHES).unwrap();
        let patch = &p.patches[0];
        assert!(moves_a_wait(patch));
        let out = apply_to_text(patch, "cub/k.cuh", HEADER).unwrap();
        assert_eq!(out.lines().count(), HEADER.lines().count());
        let sites = crate::scan::sites_of(&out);
        assert_eq!(sites.waits, vec![3], "{out}");
        assert_eq!(p.for_program("13.0", "merge_sort").count(), 1);
        assert_eq!(p.for_program("13.3", "merge_sort").count(), 0);
    }

    #[test]
    fn a_patch_that_does_not_fit_says_where() {
        let p = Patches::parse(PATCHES).unwrap();
        let moved = HEADER.replace("  _CCCL_PDL_GRID_DEPENDENCY_SYNC();\n  p[1]", "  p[1]");
        let e = apply_to_text(&p.patches[0], "cub/k.cuh", &moved).unwrap_err();
        assert!(
            e.contains("cub/k.cuh:5") && e.contains("does not hold"),
            "{e}"
        );
        let e = apply_to_text(&p.patches[0], "cub/k.cuh", "{\n\nshort").unwrap_err();
        assert!(e.contains("cub/k.cuh:3") && e.contains("no `{`"), "{e}");
    }

    #[test]
    fn bad_patch_files_are_refused() {
        for (from, to, want) in [
            ("name = \"wait-first\"", "name = \"ptx90\"", "not one of"),
            (
                "release = \"13.0\"",
                "release = \"x\"",
                "not a CUDA release",
            ),
            ("line = 3", "line = 0", "edit[0]"),
            ("remove = ", "insert = \"a\"\nremove = ", "edit[1]"),
            ("kernels", "kernal", "unknown field"),
        ] {
            let e = Patches::parse(&PATCHES.replace(from, to)).unwrap_err();
            assert!(e.contains(want), "`{e}` should say {want}");
        }
    }

    #[test]
    fn materialize_patches_a_copy_only() {
        let base = std::env::temp_dir().join(format!("gc-lib-patch-{}", std::process::id()));
        let include = base.join("include");
        std::fs::create_dir_all(include.join("cub")).unwrap();
        std::fs::write(include.join("cub/k.cuh"), HEADER).unwrap();
        let p = Patches::parse(PATCHES).unwrap();
        let dir = materialize(&base, &include, &p.patches[0]).unwrap();
        assert!(dir.starts_with(base.join("target/library/13.0")));
        let patched = std::fs::read_to_string(dir.join("cub/k.cuh")).unwrap();
        assert_eq!(crate::scan::sites_of(&patched).waits, vec![3]);
        let original = std::fs::read_to_string(include.join("cub/k.cuh")).unwrap();
        assert_eq!(original, HEADER);
        std::fs::remove_dir_all(&base).unwrap();
    }
}
