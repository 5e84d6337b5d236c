//! Which of a test's built binaries runs on a device, and where `cargo
//! xtask build` puts them.
//!
//! Layout of a kernels root (default `target/kernels`, one parameter
//! everywhere): `<root>/<arch>/<test>.cubin` (a litmus or runtime test's
//! device-linked cubin), `<root>/<arch>/<test>.host` (a host test's
//! executable) and `<root>/<arch>/<test>.ptx` (the test's PTX for that
//! architecture, relocatable device code, built for the lowest
//! architecture the test's plan allows), plus `<root>/libcudadevrt.a`, the
//! device runtime of the toolkit that built them, for linking the PTX at
//! JIT time.
//!
//! The choice ([`choose`], pure): the exact cubin (or executable) for the
//! device's compute capability; else a compatible one, of the same major
//! version and a lower minor (an `sm_80` cubin runs on `sm_86` and `sm_89`,
//! never across majors; the highest such minor wins); else the driver's JIT
//! of the PTX of the highest architecture at or below the device's. An
//! architecture with a suffix (`sm_90a`) runs only on exactly its compute
//! capability. Host tests' executables are never JIT-compiled by the
//! harness. [`Mode::Ptx`] forces the PTX path.

use std::fmt;
use std::path::{Path, PathBuf};

/// An architecture: `sm_90` is (9, 0, None), `sm_90a` is (9, 0, Some('a')).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Arch {
    pub major: u32,
    pub minor: u32,
    pub suffix: Option<char>,
}

impl Arch {
    /// `sm_90`, `sm_90a`, `sm_121`, `compute_75`; None for anything else.
    pub fn parse(s: &str) -> Option<Arch> {
        let rest = s
            .strip_prefix("sm_")
            .or_else(|| s.strip_prefix("compute_"))?;
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let tail = &rest[digits.len()..];
        let suffix = match tail {
            "" => None,
            t if t.len() == 1 && t.chars().all(|c| c.is_ascii_lowercase()) => t.chars().next(),
            _ => return None,
        };
        let n: u32 = digits.parse().ok()?;
        if digits.len() < 2 {
            return None;
        }
        Some(Arch {
            major: n / 10,
            minor: n % 10,
            suffix,
        })
    }

    /// The architecture of a compute capability, `sm_<major><minor>`.
    pub fn of(compute_capability: (u32, u32)) -> Arch {
        Arch {
            major: compute_capability.0,
            minor: compute_capability.1,
            suffix: None,
        }
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sm_{}{}", self.major, self.minor)?;
        if let Some(c) = self.suffix {
            write!(f, "{c}")?;
        }
        Ok(())
    }
}

/// What a built file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Cubin,
    Executable,
    Ptx,
}

impl FileKind {
    fn extension(self) -> &'static str {
        match self {
            FileKind::Cubin => "cubin",
            FileKind::Executable => "host",
            FileKind::Ptx => "ptx",
        }
    }
}

/// One built file of a test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Built {
    pub arch: Arch,
    pub kind: FileKind,
    pub file: PathBuf,
}

/// How the binary was chosen, as records name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChoiceKind {
    /// Built for the device's architecture.
    Exact,
    /// Same major, lower minor.
    Compatible,
    /// The driver's JIT of the PTX, linked with `libcudadevrt.a`.
    PtxJit,
}

impl ChoiceKind {
    /// `cubin`, `compatible-cubin`, `ptx-jit` (`executable`,
    /// `compatible-executable` for a host test's program).
    pub fn name(self, kind: FileKind) -> &'static str {
        match (self, kind) {
            (ChoiceKind::Exact, FileKind::Executable) => "executable",
            (ChoiceKind::Compatible, FileKind::Executable) => "compatible-executable",
            (ChoiceKind::Exact, _) => "cubin",
            (ChoiceKind::Compatible, _) => "compatible-cubin",
            (ChoiceKind::PtxJit, _) => "ptx-jit",
        }
    }
}

/// The binary that runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub kind: ChoiceKind,
    pub built: Built,
}

impl Choice {
    /// `cubin`, `compatible-cubin`, `ptx-jit`, `executable`, ...
    pub fn kind_name(&self) -> &'static str {
        self.kind.name(self.built.kind)
    }
}

/// `--binary`: as built (exact, compatible, then PTX) or PTX only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    Auto,
    Ptx,
}

impl Mode {
    pub fn parse(s: &str) -> Result<Mode, String> {
        match s {
            "auto" => Ok(Mode::Auto),
            "ptx" => Ok(Mode::Ptx),
            other => Err(format!("--binary: `{other}` is not auto or ptx")),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Auto => "auto",
            Mode::Ptx => "ptx",
        }
    }
}

/// Whether a driver of CUDA `driver_api` (`13.0`) can JIT the PTX of a
/// toolchain of release `toolchain` (`13.5`): PTX carries its ISA
/// version, and a driver's JIT reads only the ISA of its own CUDA release
/// and older (minor-version compatibility covers machine code, not PTX;
/// measured on the H100 with driver 580.159.04, CUDA 13.0: PTX of nvcc
/// 13.1 to 13.5 fails with cudaErrorUnsupportedPtxVersion, 222). A version
/// that does not parse is not judged (`Ok`).
pub fn jit_reads(toolchain: &str, driver_api: &str) -> Result<(), String> {
    let parse = |v: &str| -> Option<(u32, u32)> {
        let mut it = v.trim().split('.');
        Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
    };
    match (parse(toolchain), parse(driver_api)) {
        (Some(t), Some(d)) if t > d => Err(format!(
            "the driver (CUDA {driver_api}) cannot JIT the PTX of toolchain {toolchain}: PTX of a \
             newer CUDA release than the driver fails to load (cudaErrorUnsupportedPtxVersion); \
             run kernels with cubins for this GPU, or of a toolchain not newer than the driver"
        )),
        _ => Ok(()),
    }
}

/// The binary of a test to run on a device of architecture `device` (see
/// the module docs), or why none can run there.
pub fn choose(device: Arch, built: &[Built], mode: Mode) -> Result<Choice, String> {
    let executable = built.iter().any(|b| b.kind == FileKind::Executable);
    let machine = |b: &&Built| matches!(b.kind, FileKind::Cubin | FileKind::Executable);
    let exact = |a: Arch| a.major == device.major && a.minor == device.minor;
    if mode == Mode::Auto {
        // Exact: a plain build first, then one with a suffix.
        if let Some(b) = built
            .iter()
            .filter(machine)
            .filter(|b| exact(b.arch))
            .min_by_key(|b| b.arch.suffix.is_some())
        {
            return Ok(Choice {
                kind: ChoiceKind::Exact,
                built: b.clone(),
            });
        }
        if let Some(b) = built
            .iter()
            .filter(machine)
            .filter(|b| {
                b.arch.suffix.is_none()
                    && b.arch.major == device.major
                    && b.arch.minor < device.minor
            })
            .max_by_key(|b| b.arch.minor)
        {
            return Ok(Choice {
                kind: ChoiceKind::Compatible,
                built: b.clone(),
            });
        }
    }
    if executable {
        let have = list(built);
        return Err(match mode {
            Mode::Ptx => format!(
                "a host test's program cannot be JIT-compiled by the harness (--binary ptx); built for {have}"
            ),
            Mode::Auto => format!(
                "a host test's program needs a build for {device} or a lower minor of {}.x \
                 (the harness cannot JIT it); built for {have}",
                device.major
            ),
        });
    }
    let ptx = built
        .iter()
        .filter(|b| b.kind == FileKind::Ptx)
        .filter(|b| match b.arch.suffix {
            None => (b.arch.major, b.arch.minor) <= (device.major, device.minor),
            Some(_) => exact(b.arch),
        })
        .max_by_key(|b| (b.arch.major, b.arch.minor));
    match ptx {
        Some(b) => Ok(Choice {
            kind: ChoiceKind::PtxJit,
            built: b.clone(),
        }),
        None if mode == Mode::Ptx => Err(format!(
            "no PTX at or below {device} to JIT (--binary ptx); built: {}",
            list(built)
        )),
        None => Err(format!(
            "no binary runs on {device}: no cubin for {device} or a lower minor of {}.x, \
             no PTX at or below it; built: {}",
            device.major,
            list(built)
        )),
    }
}

fn list(built: &[Built]) -> String {
    if built.is_empty() {
        return "nothing (run `cargo xtask build`)".into();
    }
    let mut v: Vec<String> = built
        .iter()
        .map(|b| format!("{} {}", b.arch, b.kind.extension()))
        .collect();
    v.sort();
    v.join(", ")
}

/// `<root>/<arch>/<test>.<cubin|host|ptx>`.
pub fn built_path(root: &Path, arch: &str, test: &str, kind: FileKind) -> PathBuf {
    root.join(arch).join(format!("{test}.{}", kind.extension()))
}

/// The file name of the device runtime a kernels root carries.
pub const DEVRT: &str = "libcudadevrt.a";

/// Every file built for `test` under the kernels root `root`: a host
/// test's executables, or a test's cubins and PTX, in every architecture
/// directory there.
pub fn built_files(root: &Path, test: &str, executable: bool) -> Vec<Built> {
    let kinds: &[FileKind] = if executable {
        &[FileKind::Executable]
    } else {
        &[FileKind::Cubin, FileKind::Ptx]
    };
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(root) else {
        return out;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(arch) = Arch::parse(&name).filter(|_| name.starts_with("sm_")) else {
            continue;
        };
        for &kind in kinds {
            let file = built_path(root, &name, test, kind);
            if file.is_file() {
                out.push(Built { arch, kind, file });
            }
        }
    }
    out.sort_by_key(|b| (b.arch, b.kind.extension()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(arch: &str, kind: FileKind) -> Built {
        Built {
            arch: Arch::parse(arch).unwrap(),
            kind,
            file: PathBuf::from(format!("{arch}/t.{}", kind.extension())),
        }
    }

    fn pick(device: &str, built: &[Built], mode: Mode) -> Result<(String, String), String> {
        choose(Arch::parse(device).unwrap(), built, mode)
            .map(|c| (c.kind_name().to_string(), c.built.arch.to_string()))
    }

    fn ok(kind: &str, arch: &str) -> Result<(String, String), String> {
        Ok((kind.to_string(), arch.to_string()))
    }

    #[test]
    fn architectures_parse_and_print() {
        let a = Arch::parse("sm_90a").unwrap();
        assert_eq!((a.major, a.minor, a.suffix), (9, 0, Some('a')));
        assert_eq!(a.to_string(), "sm_90a");
        assert_eq!(Arch::parse("sm_121").unwrap(), Arch::of((12, 1)));
        assert_eq!(Arch::parse("compute_75").unwrap().to_string(), "sm_75");
        for bad in ["sm_", "sm_9", "sm_90ab", "obj", "sm_x0", "sm_90-"] {
            assert_eq!(Arch::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn exact_then_compatible_then_ptx() {
        use FileKind::*;
        let all = [
            b("sm_75", Ptx),
            b("sm_75", Cubin),
            b("sm_80", Cubin),
            b("sm_86", Cubin),
            b("sm_90", Cubin),
            b("sm_100", Cubin),
        ];
        assert_eq!(pick("sm_86", &all, Mode::Auto), ok("cubin", "sm_86"));
        // sm_89: the highest lower minor of 8.x.
        assert_eq!(
            pick("sm_89", &all, Mode::Auto),
            ok("compatible-cubin", "sm_86")
        );
        // Never across majors: sm_120 has no 12.x cubin, so the PTX.
        assert_eq!(pick("sm_120", &all, Mode::Auto), ok("ptx-jit", "sm_75"));
        assert_eq!(
            pick("sm_103", &all, Mode::Auto),
            ok("compatible-cubin", "sm_100")
        );
        // Forced through PTX even where the exact cubin exists.
        assert_eq!(pick("sm_90", &all, Mode::Ptx), ok("ptx-jit", "sm_75"));
        // The highest PTX at or below the device.
        let ptx = [b("sm_75", Ptx), b("sm_90", Ptx)];
        assert_eq!(pick("sm_100", &ptx, Mode::Auto), ok("ptx-jit", "sm_90"));
        assert_eq!(pick("sm_89", &ptx, Mode::Auto), ok("ptx-jit", "sm_75"));
    }

    #[test]
    fn nothing_usable_is_not_supported_with_the_reason() {
        use FileKind::*;
        // A PDL test: sm_90 cubin and PTX; an sm_86 device runs neither.
        let pdl = [b("sm_90", Cubin), b("sm_90", Ptx)];
        let e = pick("sm_86", &pdl, Mode::Auto).unwrap_err();
        assert!(e.contains("no binary runs on sm_86"), "{e}");
        assert!(e.contains("sm_90 cubin, sm_90 ptx"), "{e}");
        let e = pick("sm_86", &[], Mode::Auto).unwrap_err();
        assert!(e.contains("cargo xtask build"), "{e}");
        // A cubin of a higher minor never runs on a lower one.
        let e = pick("sm_80", &[b("sm_86", Cubin)], Mode::Auto).unwrap_err();
        assert!(e.contains("no binary runs on sm_80"), "{e}");
        let e = pick("sm_90", &[b("sm_90", Cubin)], Mode::Ptx).unwrap_err();
        assert!(e.contains("no PTX at or below sm_90"), "{e}");
    }

    #[test]
    fn host_programs_need_an_exact_or_compatible_build() {
        use FileKind::*;
        let host = [b("sm_80", Executable), b("sm_90", Executable)];
        assert_eq!(
            pick("sm_89", &host, Mode::Auto),
            ok("compatible-executable", "sm_80")
        );
        assert_eq!(pick("sm_90", &host, Mode::Auto), ok("executable", "sm_90"));
        let e = pick("sm_100", &host, Mode::Auto).unwrap_err();
        assert!(e.contains("cannot JIT it"), "{e}");
        let e = pick("sm_90", &host, Mode::Ptx).unwrap_err();
        assert!(e.contains("cannot be JIT-compiled"), "{e}");
    }

    #[test]
    fn suffixed_architectures_run_only_on_their_own() {
        use FileKind::*;
        let a = [b("sm_90a", Cubin), b("sm_90a", Ptx)];
        assert_eq!(pick("sm_90", &a, Mode::Auto), ok("cubin", "sm_90a"));
        // A plain build is preferred to a suffixed one.
        let both = [b("sm_90a", Cubin), b("sm_90", Cubin)];
        assert_eq!(pick("sm_90", &both, Mode::Auto), ok("cubin", "sm_90"));
        assert!(pick("sm_100", &a, Mode::Auto).is_err());
        let fam = [b("sm_100a", Cubin)];
        assert!(pick("sm_103", &fam, Mode::Auto).is_err());
    }

    #[test]
    fn built_files_are_found_under_the_kernels_root() {
        let root = std::env::temp_dir().join(format!("gridcheck-binary-{}", std::process::id()));
        for (arch, file) in [
            ("sm_80", "t.cubin"),
            ("sm_75", "t.ptx"),
            ("sm_90", "u.cubin"),
            ("obj", "t.cubin"),
        ] {
            std::fs::create_dir_all(root.join(arch)).unwrap();
            std::fs::write(root.join(arch).join(file), b"x").unwrap();
        }
        let found = built_files(&root, "t", false);
        let names: Vec<String> = found
            .iter()
            .map(|b| format!("{} {:?}", b.arch, b.kind))
            .collect();
        assert_eq!(names, ["sm_75 Ptx", "sm_80 Cubin"]);
        assert!(built_files(&root, "t", true).is_empty());
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn the_jit_reads_ptx_of_its_own_release_and_older() {
        assert_eq!(jit_reads("13.0", "13.0"), Ok(()));
        assert_eq!(jit_reads("12.8", "13.0"), Ok(()));
        assert_eq!(jit_reads("13.0", "13.5"), Ok(()));
        let e = jit_reads("13.5", "13.0").unwrap_err();
        assert!(
            e.contains("CUDA 13.0") && e.contains("toolchain 13.5"),
            "{e}"
        );
        assert!(jit_reads("14.0", "13.9").is_err());
        // Not judged when either does not parse.
        assert_eq!(jit_reads("default", "13.0"), Ok(()));
        assert_eq!(jit_reads("13.5", "?"), Ok(()));
    }
}
