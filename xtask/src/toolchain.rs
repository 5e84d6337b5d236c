//! `cargo xtask toolchain install|list`: CUDA releases from PyPI as data.
//!
//! `install 13.5` makes `.toolchains/13.5/`, a Python virtual environment
//! holding that release's nvcc, runtime (`libcudadevrt.a`), crt and nvvm;
//! the newest cccl not newer than the release (PyPI has cccl up to 13.3);
//! and cuobjdump and nvdisasm of the release, or of 13.2, the oldest on
//! PyPI, for 13.0 and 13.1 (newer disassemblers read older cubins). The
//! default toolchain (`.venv-cuda`, the PATH, ...) is untouched: a command
//! uses an installed one only with `--toolchain`.
//!
//! Which toolchain built what: `cargo xtask build --toolchain 13.5` writes
//! the toolchain's kernels root (`gridcheck_toolchain::kernels_dir`,
//! `target/kernels-nvcc-13.5/<arch>/`), with `toolchain.json` naming nvcc's
//! version and the device runtime's identity, which the GPU tier records.

use std::path::Path;
use std::process::Command;

use gridcheck_toolchain::{Toolchain, installed, is_release, release_key};

use crate::Result;

const USAGE: &str = "usage: cargo xtask toolchain install <release>... (such as 13.5)
       cargo xtask toolchain list";

pub fn run(root: &Path, args: &[String]) -> Result<()> {
    match args.first().map(String::as_str) {
        Some("install") if args.len() > 1 => {
            for r in &args[1..] {
                install(root, r)?;
            }
            Ok(())
        }
        Some("list") if args.len() == 1 => {
            print!("{}", list(root));
            Ok(())
        }
        _ => Err(USAGE.into()),
    }
}

/// A toolchain as records name it.
pub fn record(t: &Toolchain) -> gridcheck_report::ToolchainRecord {
    gridcheck_report::ToolchainRecord {
        release: t.name.clone(),
        nvcc: t.nvcc.version.clone(),
        devrt: t.devrt_identity(),
        source: format!("{} ({})", t.dir.display(), t.nvcc.found_via),
        disassembler: None,
    }
}

fn list(root: &Path) -> String {
    let (good, bad) = installed(root);
    let mut s = String::new();
    if good.is_empty() {
        s.push_str(
            "no toolchains installed under .toolchains/ (cargo xtask toolchain install 13.5)\n",
        );
    }
    for t in &good {
        let dis = gridcheck_toolchain::disassembler(root, t);
        s.push_str(&format!(
            "{}  nvcc {}  {}\n    device runtime: {}\n    disassembler: {}\n",
            t.name,
            t.nvcc.version,
            t.dir.display(),
            t.devrt_identity(),
            match (&t.nvdisasm, dis) {
                (Some(d), _) => d.display().to_string(),
                (None, Some(d)) => format!("{} (another toolchain's)", d.display()),
                (None, None) => "none".into(),
            }
        ));
    }
    for b in bad {
        s.push_str(&format!("unusable: {b}\n"));
    }
    match gridcheck_toolchain::find_nvcc(root) {
        Ok(n) => s.push_str(&format!(
            "default (no --toolchain): nvcc {} via {} ({})\n",
            n.version,
            n.found_via,
            n.path.display()
        )),
        Err(_) => s.push_str("default (no --toolchain): no nvcc found\n"),
    }
    s
}

/// `pip index versions <pkg>`: the versions PyPI has, newest first.
fn versions(pip: &Path, pkg: &str) -> Result<Vec<String>> {
    let out = Command::new(pip)
        .args(["index", "versions", "--disable-pip-version-check", pkg])
        .output()
        .map_err(|e| format!("cannot run {}: {e}", pip.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("Available versions:"))
        .ok_or_else(|| {
            format!(
                "`pip index versions {pkg}` listed no versions:\n{text}{}",
                String::from_utf8_lossy(&out.stderr)
            )
        })?;
    Ok(line.split(',').map(|v| v.trim().to_string()).collect())
}

/// The release of a package version (`13.3.5.0.6` -> `13.3`).
fn release(v: &str) -> String {
    gridcheck_toolchain::release_of(v)
}

/// The requirement for a package PyPI may lack at `r`: `r` itself, else the
/// newest release below `r` (`newest_below`), else the oldest above it.
fn pick(available: &[String], r: &str, newest_below: bool) -> Option<String> {
    let mut rels: Vec<String> = available
        .iter()
        .map(|v| release(v))
        .filter(|x| is_release(x))
        .collect();
    rels.sort_by_key(|x| release_key(x));
    rels.dedup();
    if rels.iter().any(|x| x == r) {
        return Some(r.to_string());
    }
    let key = release_key(r);
    if newest_below {
        rels.into_iter().rev().find(|x| release_key(x) < key)
    } else {
        rels.into_iter().find(|x| release_key(x) > key)
    }
}

fn install(root: &Path, r: &str) -> Result<()> {
    if !is_release(r) {
        return Err(format!("`{r}` is not a release (such as 13.5)\n{USAGE}"));
    }
    let dir = root.join(gridcheck_toolchain::TOOLCHAINS_DIR).join(r);
    if let Ok(t) = Toolchain::at(&dir)
        && t.name == r
        && t.nvdisasm.is_some()
    {
        println!(
            "toolchain {r}: already installed (nvcc {}, {})",
            t.nvcc.version,
            dir.display()
        );
        return Ok(());
    }
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    println!("toolchain {r}: creating {}", dir.display());
    let st = Command::new(&python)
        .args(["-m", "venv"])
        .arg(&dir)
        .status()
        .map_err(|e| format!("cannot run {python}: {e}"))?;
    if !st.success() {
        return Err(format!(
            "`{python} -m venv {}` failed ({st})",
            dir.display()
        ));
    }
    let pip = dir.join("bin/pip");
    let mut reqs: Vec<String> = [
        "nvidia-cuda-nvcc",
        "nvidia-cuda-runtime",
        "nvidia-cuda-crt",
        "nvidia-nvvm",
    ]
    .iter()
    .map(|p| format!("{p}=={r}.*"))
    .collect();
    let cccl = versions(&pip, "nvidia-cuda-cccl")?;
    match pick(&cccl, r, true) {
        Some(c) => reqs.push(format!("nvidia-cuda-cccl=={c}.*")),
        None => {
            println!("toolchain {r}: PyPI has no nvidia-cuda-cccl at or below {r}; none installed")
        }
    }
    for tool in ["nvidia-cuda-cuobjdump", "nvidia-cuda-nvdisasm"] {
        match pick(&versions(&pip, tool)?, r, false) {
            Some(c) => {
                if c != r {
                    println!(
                        "toolchain {r}: {tool} {c} (PyPI has none of {r}; newer ones read older cubins)"
                    );
                }
                reqs.push(format!("{tool}=={c}.*"));
            }
            None => println!("toolchain {r}: PyPI has no {tool} for {r} or newer; none installed"),
        }
    }
    println!("toolchain {r}: pip install {}", reqs.join(" "));
    let st = Command::new(&pip)
        .args(["install", "--quiet", "--disable-pip-version-check"])
        .args(&reqs)
        .status()
        .map_err(|e| format!("cannot run {}: {e}", pip.display()))?;
    if !st.success() {
        return Err(format!("pip install into {} failed ({st})", dir.display()));
    }
    let t = Toolchain::at(&dir)?;
    if t.name != r {
        return Err(format!(
            "{} installed nvcc {}, not release {r}",
            dir.display(),
            t.nvcc.version
        ));
    }
    println!(
        "toolchain {r}: nvcc {}, device runtime {}, nvdisasm {}",
        t.nvcc.version,
        t.devrt_identity(),
        t.nvdisasm
            .as_ref()
            .map_or("none".into(), |d| d.display().to_string())
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn picks_the_release_or_the_nearest() {
        let cccl = v(&["13.3.5.0.6", "13.3.4.3.1", "13.2.86", "13.1.115", "13.0.85"]);
        assert_eq!(pick(&cccl, "13.5", true).as_deref(), Some("13.3"));
        assert_eq!(pick(&cccl, "13.2", true).as_deref(), Some("13.2"));
        let dis = v(&["13.5.37", "13.4.92", "13.3.73", "13.2.86", "13.2.51"]);
        assert_eq!(pick(&dis, "13.0", false).as_deref(), Some("13.2"));
        assert_eq!(pick(&dis, "13.4", false).as_deref(), Some("13.4"));
        assert_eq!(pick(&dis, "13.6", false), None);
        assert_eq!(pick(&cccl, "12.9", true), None);
    }
}
