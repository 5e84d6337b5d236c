//! `cargo xtask codegen [--check]`: kernels/generated/ from the spec.

use std::collections::BTreeSet;
use std::path::Path;

use crate::{Result, load_spec};

/// Writes every generated kernel, removing generated files no test produces;
/// with `check`, changes nothing and fails if anything differs.
pub fn run(root: &Path, check: bool) -> Result<()> {
    let spec = load_spec(root)?;
    let dir = root.join(gridcheck_kernelgen::GENERATED_DIR);
    let files = gridcheck_kernelgen::generate_all(&spec);
    let wanted: BTreeSet<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    let mut stale = Vec::new();
    for (name, text) in &files {
        let path = dir.join(name);
        if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            stale.push(format!("{} (differs or is missing)", path.display()));
            if !check {
                std::fs::create_dir_all(&dir)
                    .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
                std::fs::write(&path, text)
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            }
        }
    }
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".cu") && !wanted.contains(name.as_str()) {
                stale.push(format!("{} (no test generates it)", e.path().display()));
                if !check {
                    std::fs::remove_file(e.path())
                        .map_err(|err| format!("cannot remove {}: {err}", e.path().display()))?;
                }
            }
        }
    }
    if check && !stale.is_empty() {
        return Err(format!(
            "kernels/generated is stale; run `cargo xtask codegen`:\n  {}",
            stale.join("\n  ")
        ));
    }
    println!(
        "codegen: {} kernels {}",
        files.len(),
        if stale.is_empty() {
            "up to date"
        } else if check {
            "stale"
        } else {
            "written"
        }
    );
    Ok(())
}
