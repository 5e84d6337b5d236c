//! Toolchains as data: CUDA releases installed from PyPI into the checkout's
//! `.toolchains/<release>/` (one Python virtual environment a release,
//! `cargo xtask toolchain install`), and what identifies the one that built
//! something (nvcc's version, the device runtime library's package version,
//! size and hash, the disassembler).
//!
//! A toolchain's directory holds `lib/python3.*/site-packages/nvidia/cu13/`
//! with `bin/nvcc` and `lib/libcudadevrt.a`, and `bin/nvdisasm` and
//! `bin/cuobjdump` where its release has them on PyPI (13.2 and newer).
//! Releases 13.0 and 13.1 get 13.2's disassemblers in their own directory
//! (the oldest that exist; they read older cubins): every toolchain
//! directory is complete by itself.

use std::path::{Path, PathBuf};

use crate::{Nvcc, nvcc_at};

/// The checkout's directory of installed toolchains.
pub const TOOLCHAINS_DIR: &str = ".toolchains";

/// The packages a toolchain is made of, by PyPI name.
pub const PACKAGES: [&str; 7] = [
    "nvidia-cuda-nvcc",
    "nvidia-cuda-runtime",
    "nvidia-cuda-crt",
    "nvidia-nvvm",
    "nvidia-cuda-cccl",
    "nvidia-cuda-cuobjdump",
    "nvidia-cuda-nvdisasm",
];

/// One installed toolchain.
#[derive(Debug, Clone)]
pub struct Toolchain {
    /// The release, `13.5`: the name trials, kernel directories and
    /// expectations files use.
    pub name: String,
    /// Where it is (`.toolchains/13.5`), or the directory above nvcc's
    /// `bin/` for a toolchain found the old way ([`crate::find_nvcc`]).
    pub dir: PathBuf,
    pub nvcc: Nvcc,
    /// `nvdisasm` of this toolchain's directory, if it has one.
    pub nvdisasm: Option<PathBuf>,
    /// `cuobjdump` of this toolchain's directory, if it has one.
    pub cuobjdump: Option<PathBuf>,
    /// The installed PyPI packages and their versions (empty for a
    /// toolchain not installed from PyPI).
    pub packages: Vec<(String, String)>,
}

/// A release's name from a full nvcc version: `13.0.88` -> `13.0`.
pub fn release_of(version: &str) -> String {
    version.split('.').take(2).collect::<Vec<_>>().join(".")
}

/// Whether `name` is a release name (`13.5`): digits, one dot, digits.
pub fn is_release(name: &str) -> bool {
    let mut parts = name.split('.');
    let num =
        |p: Option<&str>| p.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    num(parts.next()) && num(parts.next()) && parts.next().is_none()
}

/// The name of the kernels root of a toolchain (`None`: the default one):
/// `kernels`, or `kernels-nvcc-<release>` for an installed release. The one
/// spelling of it: under the checkout's `target/` ([`kernels_dir`]), in a
/// GPU bundle (`.gpu-bundle/<name>`), and for the bundle's scripts, which
/// ask `gridcheck info kernels-folder <release>`.
pub fn kernels_folder(release: Option<&str>) -> String {
    match release {
        None => "kernels".into(),
        Some(r) => format!("{TOOLCHAIN_KERNELS}{r}"),
    }
}

/// The release whose kernels root a folder of that name is
/// ([`kernels_folder`]), or `None` when it is no toolchain's.
pub fn release_of_kernels_folder(name: &str) -> Option<&str> {
    name.strip_prefix(TOOLCHAIN_KERNELS)
        .filter(|r| is_release(r))
}

const TOOLCHAIN_KERNELS: &str = "kernels-nvcc-";

/// Where `cargo xtask build` puts a toolchain's kernels in the checkout
/// `root`: `target/<kernels_folder>`, the harness's default kernels root.
pub fn kernels_dir(root: &Path, release: Option<&str>) -> PathBuf {
    root.join("target").join(kernels_folder(release))
}

/// Adds the releases a `--toolchain` value names to `into`, in order and
/// each once: one release, or several separated by commas (`13.0,13.5`).
/// The one reading of the flag's value, for the harness and `cargo xtask`.
pub fn add_releases(into: &mut Vec<String>, value: &str) -> Result<(), String> {
    let names: Vec<&str> = value
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .collect();
    if names.is_empty() {
        return Err("expected a CUDA release such as 13.5, or several: 13.0,13.5".into());
    }
    if let Some(name) = names.iter().find(|n| !is_release(n)) {
        return Err(format!(
            "`{name}` is not a toolchain: expected a CUDA release such as 13.5"
        ));
    }
    for name in names {
        if !into.iter().any(|n| n == name) {
            into.push(name.to_string());
        }
    }
    Ok(())
}

/// The `site-packages` directories of a virtual environment.
fn site_packages(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir.join("lib"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("site-packages"))
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    out
}

/// The CUDA 13 `bin/` of a virtual environment, if it has one.
pub fn venv_bin(dir: &Path) -> Option<PathBuf> {
    site_packages(dir)
        .into_iter()
        .map(|s| s.join("nvidia/cu13/bin"))
        .find(|b| b.join("nvcc").is_file())
}

/// `name-version` of every `*.dist-info` of a virtual environment whose
/// package is one of [`PACKAGES`].
fn packages_of(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for sp in site_packages(dir) {
        for e in std::fs::read_dir(sp).into_iter().flatten().flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            let Some(stem) = n.strip_suffix(".dist-info") else {
                continue;
            };
            let Some((pkg, ver)) = stem.rsplit_once('-') else {
                continue;
            };
            let pkg = pkg.replace('_', "-");
            if PACKAGES.contains(&pkg.as_str()) {
                out.push((pkg, ver.to_string()));
            }
        }
    }
    out.sort();
    out
}

impl Toolchain {
    /// The toolchain installed in `dir` (a virtual environment), or why it
    /// is not usable.
    pub fn at(dir: &Path) -> Result<Toolchain, String> {
        let bin = venv_bin(dir).ok_or_else(|| {
            format!(
                "{} holds no nvcc (lib/python3.*/site-packages/nvidia/cu13/bin/nvcc)",
                dir.display()
            )
        })?;
        let nvcc = nvcc_at(&bin.join("nvcc"), &dir.display().to_string())?;
        Ok(Toolchain {
            name: release_of(&nvcc.version),
            dir: dir.to_path_buf(),
            nvdisasm: Some(bin.join("nvdisasm")).filter(|p| p.is_file()),
            cuobjdump: Some(bin.join("cuobjdump")).filter(|p| p.is_file()),
            packages: packages_of(dir),
            nvcc,
        })
    }

    /// The toolchain of an nvcc found the old way (`find_nvcc`): its
    /// disassemblers are the ones beside it, if any.
    pub fn of_nvcc(nvcc: Nvcc) -> Toolchain {
        let bin = nvcc
            .path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let dir = bin.parent().map(Path::to_path_buf).unwrap_or_default();
        // A PyPI install: the venv is five levels above bin/.
        let venv = bin.ancestors().nth(5).map(Path::to_path_buf);
        Toolchain {
            name: release_of(&nvcc.version),
            nvdisasm: Some(bin.join("nvdisasm")).filter(|p| p.is_file()),
            cuobjdump: Some(bin.join("cuobjdump")).filter(|p| p.is_file()),
            packages: venv.map(|v| packages_of(&v)).unwrap_or_default(),
            dir,
            nvcc,
        }
    }

    /// The device runtime's identity: its package version where PyPI
    /// installed it, the size of `libcudadevrt.a` and its FNV-1a 64 hash.
    pub fn devrt_identity(&self) -> String {
        let lib = self.nvcc.lib_dir.join("libcudadevrt.a");
        let file = match std::fs::read(&lib) {
            Ok(bytes) => format!("{} bytes, fnv1a64 {:016x}", bytes.len(), fnv1a64(&bytes)),
            Err(e) => format!("unreadable: {e}"),
        };
        let pkg = self
            .packages
            .iter()
            .find(|(p, _)| p == "nvidia-cuda-runtime")
            .map(|(p, v)| format!("{p} {v}, "))
            .unwrap_or_default();
        format!("{pkg}{} ({file})", lib.display())
    }
}

/// FNV-1a, 64 bits: enough to tell two builds of a file apart.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Every toolchain under `<root>/.toolchains/`, by release, with the
/// directories that hold none (and why) apart.
pub fn installed(root: &Path) -> (Vec<Toolchain>, Vec<String>) {
    let mut good = Vec::new();
    let mut bad = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join(TOOLCHAINS_DIR))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for d in dirs {
        match Toolchain::at(&d) {
            Ok(t) => good.push(t),
            Err(e) => bad.push(e),
        }
    }
    good.sort_by_key(|t| release_key(&t.name));
    (good, bad)
}

/// A release as numbers, for sorting: `13.10` after `13.9`.
pub fn release_key(name: &str) -> Vec<u64> {
    name.split('.').map(|p| p.parse().unwrap_or(0)).collect()
}

/// The installed toolchain named `name` (`13.5`), or what to do.
pub fn find_toolchain(root: &Path, name: &str) -> Result<Toolchain, String> {
    if !is_release(name) {
        return Err(format!(
            "`{name}` is not a toolchain: expected a CUDA release such as 13.5"
        ));
    }
    let dir = root.join(TOOLCHAINS_DIR).join(name);
    if !dir.is_dir() {
        return Err(format!(
            "toolchain {name} is not installed ({} does not exist): run `cargo xtask toolchain install {name}`",
            dir.display()
        ));
    }
    let t = Toolchain::at(&dir)?;
    if t.name != name {
        return Err(format!(
            "{} holds nvcc {}, not release {name}",
            dir.display(),
            t.nvcc.version
        ));
    }
    Ok(t)
}

/// The disassembler for a toolchain's cubins: its own `nvdisasm`, else the
/// newest installed toolchain's (13.0 and 13.1 have none on PyPI, newer
/// ones read their cubins), else one on the PATH.
pub fn disassembler(root: &Path, t: &Toolchain) -> Option<PathBuf> {
    if let Some(d) = &t.nvdisasm {
        return Some(d.clone());
    }
    let (all, _) = installed(root);
    if let Some(d) = all.iter().rev().find_map(|o| o.nvdisasm.clone()) {
        return Some(d);
    }
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join("nvdisasm"))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_toolchains_kernels_folder_is_named_one_way_and_read_back() {
        assert_eq!(kernels_folder(None), "kernels");
        assert_eq!(kernels_folder(Some("13.5")), "kernels-nvcc-13.5");
        assert_eq!(
            kernels_dir(Path::new("/r"), Some("13.5")),
            Path::new("/r/target/kernels-nvcc-13.5")
        );
        assert_eq!(
            kernels_dir(Path::new("/r"), None),
            Path::new("/r/target/kernels")
        );
        assert_eq!(release_of_kernels_folder("kernels-nvcc-13.5"), Some("13.5"));
        for not in [
            "kernels",
            "kernels-nvcc-",
            "kernels-nvcc-13.5.tar.xz",
            "kernels-nvcc-x",
        ] {
            assert_eq!(release_of_kernels_folder(not), None, "{not}");
        }
    }

    #[test]
    fn a_toolchain_flag_names_releases_in_order_each_once() {
        let mut v = Vec::new();
        add_releases(&mut v, "13.0, 13.5").unwrap();
        add_releases(&mut v, "13.2,13.0").unwrap();
        assert_eq!(v, ["13.0", "13.5", "13.2"]);
        assert!(
            add_releases(&mut v, "13.1,13.x")
                .unwrap_err()
                .contains("`13.x` is not a toolchain")
        );
        assert!(
            add_releases(&mut v, ",")
                .unwrap_err()
                .contains("such as 13.5")
        );
        assert_eq!(v.len(), 3, "an error adds nothing new");
    }

    #[test]
    fn releases() {
        assert_eq!(release_of("13.0.88"), "13.0");
        assert!(is_release("13.5"));
        for bad in ["13", "13.5.1", "x.5", "13.", "../13.5", ""] {
            assert!(!is_release(bad), "{bad}");
        }
        assert!(release_key("13.10") > release_key("13.9"));
    }

    #[test]
    fn a_missing_toolchain_says_how_to_install_it() {
        let e = find_toolchain(Path::new("/nonexistent"), "13.5").unwrap_err();
        assert!(e.contains("cargo xtask toolchain install 13.5"), "{e}");
        let e = find_toolchain(Path::new("/nonexistent"), "../x").unwrap_err();
        assert!(e.contains("not a toolchain"), "{e}");
    }

    #[test]
    fn fnv_tells_bytes_apart() {
        assert_ne!(fnv1a64(b"a"), fnv1a64(b"b"));
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
    }
}
