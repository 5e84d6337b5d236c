//! Which CUDA toolchain built what a trial ran: [`ToolchainRecord`], carried
//! by compile, machine-code and GPU records, and written beside the kernels
//! a toolchain built ([`TOOLCHAIN_FILE`]) so that a GPU run, where there is
//! no nvcc, can say which one made its cubins.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// The file `cargo xtask build` writes into each `<kernels>/<arch>/`.
pub const TOOLCHAIN_FILE: &str = "toolchain.json";

/// A toolchain, as a record names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolchainRecord {
    /// The release, `13.5`: the name trials and kernel directories use.
    pub release: String,
    /// nvcc's full version, `13.5.37`.
    pub nvcc: String,
    /// The device runtime: package version, path, size and hash of
    /// `libcudadevrt.a`.
    pub devrt: String,
    /// Where the toolchain was found (`.toolchains/13.5`, `PATH`, ...).
    pub source: String,
    /// The disassembler, for the machine-code tier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disassembler: Option<String>,
}

/// A CUDA version's release, `major.minor`: `13.0.88` → `13.0` (the name
/// toolchains, kernel directories and facts compare by).
pub fn major_minor(version: &str) -> String {
    version.split('.').take(2).collect::<Vec<_>>().join(".")
}

impl ToolchainRecord {
    /// The device runtime, short: its package (`nvidia-cuda-runtime
    /// 13.5.37`) and the library's hash (`fnv1a64 096038aed154b89e`), as
    /// far as `devrt` names them (no path: two machines' copies of one
    /// library read the same); `devrt` whole where it names neither.
    pub fn device_runtime(&self) -> String {
        let package = self
            .devrt
            .split_once(", ")
            .map(|(p, _)| p)
            .filter(|p| !p.contains('/'));
        let hash = self
            .devrt
            .rsplit_once("fnv1a64 ")
            .map(|(_, h)| h.trim_end_matches(')'))
            .map(|h| format!("fnv1a64 {h}"));
        match (package, hash) {
            (Some(p), Some(h)) => format!("{p} ({h})"),
            (Some(p), None) => p.to_string(),
            (None, Some(h)) => format!("libcudadevrt.a {h}"),
            (None, None) => self.devrt.clone(),
        }
    }

    /// The release and nvcc: `13.5 (nvcc 13.5.37)`.
    pub fn label(&self) -> String {
        format!("{} (nvcc {})", self.release, self.nvcc)
    }

    /// Writes `dir/toolchain.json`.
    pub fn write_into(&self, dir: &Path) -> Result<(), String> {
        let path = dir.join(TOOLCHAIN_FILE);
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        std::fs::write(&path, text + "\n")
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// Reads `dir/toolchain.json`: `Ok(None)` where there is none (kernels
    /// built before the file existed), an error naming the file where it
    /// does not parse.
    pub fn read_from(dir: &Path) -> Result<Option<ToolchainRecord>, String> {
        let path = dir.join(TOOLCHAIN_FILE);
        match std::fs::read_to_string(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
            Ok(t) => serde_json::from_str(&t)
                .map(Some)
                .map_err(|e| format!("{}: {e}", path.display())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_bad_file() {
        let dir = std::env::temp_dir().join(format!("gc-tc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(ToolchainRecord::read_from(&dir), Ok(None));
        let r = ToolchainRecord {
            release: "13.5".into(),
            nvcc: "13.5.37".into(),
            devrt: "nvidia-cuda-runtime 13.5.37".into(),
            source: ".toolchains/13.5".into(),
            disassembler: None,
        };
        r.write_into(&dir).unwrap();
        assert_eq!(ToolchainRecord::read_from(&dir), Ok(Some(r)));
        std::fs::write(dir.join(TOOLCHAIN_FILE), "{ not json").unwrap();
        let e = ToolchainRecord::read_from(&dir).unwrap_err();
        assert!(e.contains(TOOLCHAIN_FILE), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_device_runtime_is_its_package_and_hash_without_the_path() {
        let mut r = ToolchainRecord {
            release: "13.5".into(),
            nvcc: "13.5.37".into(),
            devrt: "nvidia-cuda-runtime 13.5.37, /a/lib/libcudadevrt.a (1147356 bytes, fnv1a64 096038aed154b89e)".into(),
            source: ".toolchains/13.5".into(),
            disassembler: None,
        };
        assert_eq!(
            r.device_runtime(),
            "nvidia-cuda-runtime 13.5.37 (fnv1a64 096038aed154b89e)"
        );
        assert_eq!(r.label(), "13.5 (nvcc 13.5.37)");
        // Another machine's copy of the same library: the same runtime.
        let other = ToolchainRecord {
            devrt: r.devrt.replace("/a/", "/b/"),
            ..r.clone()
        };
        assert_eq!(other.device_runtime(), r.device_runtime());
        // No package (a system toolkit): the hash; nothing to parse: all.
        r.devrt =
            "/usr/local/cuda/lib64/libcudadevrt.a (10 bytes, fnv1a64 00000000000000ff)".into();
        assert_eq!(
            r.device_runtime(),
            "libcudadevrt.a fnv1a64 00000000000000ff"
        );
        r.devrt = "unknown".into();
        assert_eq!(r.device_runtime(), "unknown");
    }
}
