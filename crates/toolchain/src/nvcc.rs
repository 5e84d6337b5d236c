//! `nvcc` ([`Nvcc`]): finding it and the device runtime library
//! (`libcudadevrt.a`) beside it, its version and the architectures it
//! targets, compiling relocatable device code and linking it into a cubin.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::binary;

/// A usable nvcc.
#[derive(Debug, Clone)]
pub struct Nvcc {
    pub path: PathBuf,
    /// `13.0.88`, from `nvcc --version`.
    pub version: String,
    /// The directory holding `libcudadevrt.a`.
    pub lib_dir: PathBuf,
    /// How it was found: `GRIDCHECK_NVCC`, `CUDA_HOME`, `PATH`, ...
    pub found_via: String,
}

/// What nvcc said about one compilation.
#[derive(Debug, Clone)]
pub struct CompileOutput {
    pub success: bool,
    /// stdout and stderr together.
    pub output: String,
    /// The command line, for reproduction.
    pub command: String,
}

const NOT_FOUND_HELP: &str = "no nvcc found. gridcheck looks at $GRIDCHECK_NVCC, $CUDA_HOME/bin, \
$CUDA_PATH/bin, the PATH, /usr/local/cuda/bin and a PyPI install in ./.venv-cuda. \
Install the CUDA toolkit 13, or: python3 -m venv .venv-cuda && .venv-cuda/bin/pip install \
\"nvidia-cuda-nvcc==13.0.*\" \"nvidia-cuda-runtime==13.0.*\" \"nvidia-cuda-crt==13.0.*\" \
\"nvidia-nvvm==13.0.*\" \"nvidia-cuda-cccl==13.0.*\"";

fn candidates(repo_root: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    if let Some(p) = std::env::var_os("GRIDCHECK_NVCC") {
        out.push((PathBuf::from(p), "GRIDCHECK_NVCC".into()));
    }
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(p) = std::env::var_os(var) {
            out.push((PathBuf::from(p).join("bin/nvcc"), var.into()));
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            out.push((dir.join("nvcc"), "PATH".into()));
        }
    }
    out.push(("/usr/local/cuda/bin/nvcc".into(), "/usr/local/cuda".into()));
    if let Ok(entries) = std::fs::read_dir(repo_root.join(".venv-cuda/lib")) {
        for e in entries.flatten() {
            let p = e.path().join("site-packages/nvidia/cu13/bin/nvcc");
            out.push((p, ".venv-cuda (PyPI)".into()));
        }
    }
    out
}

fn devrt_dir(nvcc: &Path) -> Option<PathBuf> {
    let bin = nvcc.parent()?;
    let root = bin.parent()?;
    [
        root.join("lib"),
        root.join("lib64"),
        root.join("targets/x86_64-linux/lib"),
        PathBuf::from("/usr/local/cuda/lib64"),
    ]
    .into_iter()
    .find(|d| d.join("libcudadevrt.a").is_file())
}

/// The architectures nvcc 13.0 targets (`nvcc --list-gpu-code`), used when
/// the nvcc at hand cannot say; a test checks it against the nvcc found.
pub const FALLBACK_ARCHS: [&str; 12] = [
    "sm_75", "sm_80", "sm_86", "sm_87", "sm_88", "sm_89", "sm_90", "sm_100", "sm_103", "sm_110",
    "sm_120", "sm_121",
];

/// The `sm_XX` lines of `nvcc --list-gpu-code`, lowest first (suffixed
/// ones, `sm_90a`, left out: they run only on their own compute
/// capability). None when there are none.
pub fn parse_gpu_code_list(text: &str) -> Option<Vec<String>> {
    let mut v: Vec<(binary::Arch, String)> = text
        .split_whitespace()
        .filter_map(|w| {
            binary::Arch::parse(w)
                .filter(|a| a.suffix.is_none() && w.starts_with("sm_"))
                .map(|a| (a, w.to_string()))
        })
        .collect();
    v.sort();
    v.dedup();
    (!v.is_empty()).then(|| v.into_iter().map(|(_, w)| w).collect())
}

/// Parses `release 13.0, V13.0.88` out of `nvcc --version`.
pub fn parse_version(text: &str) -> Option<String> {
    let v = text.split(", V").nth(1)?;
    Some(v.split_whitespace().next()?.to_string())
}

/// The nvcc at `path` with its device runtime, or why it is not usable
/// (`via` says how it was found).
pub fn nvcc_at(path: &Path, via: &str) -> Result<Nvcc, String> {
    let out = match Command::new(path).arg("--version").output() {
        Ok(o) if o.status.success() => o,
        Ok(o) => {
            return Err(format!(
                "{} ({via}) exited with {}",
                path.display(),
                o.status
            ));
        }
        Err(e) => return Err(format!("{} ({via}) cannot run: {e}", path.display())),
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(version) = parse_version(&text) else {
        return Err(format!(
            "{} ({via}): unrecognised --version output",
            path.display()
        ));
    };
    let Some(lib_dir) = devrt_dir(path) else {
        return Err(format!(
            "{} ({via}) has no libcudadevrt.a beside it (install nvidia-cuda-runtime)",
            path.display()
        ));
    };
    Ok(Nvcc {
        path: path.to_path_buf(),
        version,
        lib_dir,
        found_via: via.to_string(),
    })
}

/// Finds nvcc and cudadevrt, or says clearly why not.
pub fn find_nvcc(repo_root: &Path) -> Result<Nvcc, String> {
    let mut problems = Vec::new();
    for (path, via) in candidates(repo_root) {
        if !path.is_file() {
            continue;
        }
        match nvcc_at(&path, &via) {
            Ok(n) => return Ok(n),
            Err(e) => problems.push(e),
        }
    }
    if problems.is_empty() {
        Err(NOT_FOUND_HELP.to_string())
    } else {
        Err(format!(
            "{NOT_FOUND_HELP}\nfound but unusable:\n  {}",
            problems.join("\n  ")
        ))
    }
}

impl Nvcc {
    /// Every real architecture this nvcc targets, lowest first: `nvcc
    /// --list-gpu-code`, else [`FALLBACK_ARCHS`] with a note why.
    pub fn gpu_archs(&self) -> (Vec<String>, Option<String>) {
        let out = self.run(&["--list-gpu-code".to_string()]);
        match parse_gpu_code_list(&out.output).filter(|_| out.success) {
            Some(v) => (v, None),
            None => (
                FALLBACK_ARCHS.map(String::from).to_vec(),
                Some(format!(
                    "`{}` did not list architectures; using nvcc 13.0's: {}",
                    out.command,
                    FALLBACK_ARCHS.join(" ")
                )),
            ),
        }
    }

    /// `nvcc -arch=compute_<N> -rdc=true -I<include> <flags> -ptx <src> -o
    /// <ptx>`: the test's relocatable PTX for `arch` (`sm_<N>`), which the
    /// driver's JIT linker links with `libcudadevrt.a`.
    pub fn compile_ptx(
        &self,
        src: &Path,
        include: &Path,
        arch: &str,
        flags: &[String],
        ptx: &Path,
    ) -> CompileOutput {
        let virt = arch.replacen("sm_", "compute_", 1);
        let mut args = vec![
            format!("-arch={virt}"),
            "-rdc=true".into(),
            format!("-I{}", include.display()),
        ];
        args.extend(flags.iter().cloned());
        args.extend([
            "-ptx".into(),
            src.display().to_string(),
            "-o".into(),
            ptx.display().to_string(),
        ]);
        self.run(&args)
    }

    /// Runs nvcc with these arguments.
    pub fn run(&self, args: &[String]) -> CompileOutput {
        let command = format!("{} {}", self.path.display(), args.join(" "));
        match Command::new(&self.path).args(args).output() {
            Ok(o) => {
                let mut output = String::from_utf8_lossy(&o.stdout).into_owned();
                output.push_str(&String::from_utf8_lossy(&o.stderr));
                CompileOutput {
                    success: o.status.success(),
                    output,
                    command,
                }
            }
            Err(e) => CompileOutput {
                success: false,
                output: format!("cannot run nvcc: {e}"),
                command,
            },
        }
    }

    /// `nvcc -arch=<arch> -rdc=true -I<include> <flags> -c <src> -o <obj>`.
    pub fn compile_rdc(
        &self,
        src: &Path,
        include: &Path,
        arch: &str,
        flags: &[String],
        obj: &Path,
    ) -> CompileOutput {
        self.rdc(src, include, arch, flags, "-c", obj)
    }

    /// `nvcc -arch=<arch> -rdc=true -I<include> <flags> -cubin <src> -o
    /// <obj>`: the device code alone, relocatable, for [`Nvcc::dlink_cubin`]
    /// (no host compilation: the cubin it links is byte for byte the one
    /// of `-c` and `-dlink`, at less than half the time).
    pub fn compile_rdc_cubin(
        &self,
        src: &Path,
        include: &Path,
        arch: &str,
        flags: &[String],
        obj: &Path,
    ) -> CompileOutput {
        self.rdc(src, include, arch, flags, "-cubin", obj)
    }

    /// A relocatable compile, `what` being `-c` (object) or `-cubin`.
    fn rdc(
        &self,
        src: &Path,
        include: &Path,
        arch: &str,
        flags: &[String],
        what: &str,
        out: &Path,
    ) -> CompileOutput {
        let mut args = rdc_flags(arch, include, flags);
        args.extend([
            what.to_string(),
            src.display().to_string(),
            "-o".into(),
            out.display().to_string(),
        ]);
        self.run(&args)
    }

    /// Whether this toolkit's `libcudadevrt.a` links device code for
    /// `arch`: a two-kernel CDP program is compiled and device-linked in
    /// `workdir` (nvcc 13.0 from PyPI has none for sm_87 and sm_88:
    /// `Undefined reference to '__cudaCDP2LaunchDeviceV2'`). `Err` holds
    /// nvcc's words.
    pub fn links_device_runtime(&self, arch: &str, workdir: &Path) -> Result<(), String> {
        std::fs::create_dir_all(workdir)
            .map_err(|e| format!("cannot create {}: {e}", workdir.display()))?;
        let src = workdir.join("devrt-probe.cu");
        std::fs::write(
            &src,
            "__global__ void child(int *p) { *p = 1; }\n\
             extern \"C\" __global__ void parent(int *p) { child<<<1, 1>>>(p); }\n",
        )
        .map_err(|e| format!("cannot write {}: {e}", src.display()))?;
        let obj = workdir.join(format!("devrt-probe-{arch}.o"));
        let cubin = workdir.join(format!("devrt-probe-{arch}.cubin"));
        let c = self.compile_rdc_cubin(&src, workdir, arch, &[], &obj);
        let l = if c.success {
            self.dlink_cubin(&obj, arch, &cubin)
        } else {
            c
        };
        if l.success {
            Ok(())
        } else {
            let first = l
                .output
                .lines()
                .find(|x| !x.trim().is_empty())
                .unwrap_or("");
            Err(first.trim().to_string())
        }
    }

    /// [`Nvcc::compile_rdc_cubin`] with `-lineinfo`: the device code alone,
    /// relocatable, with line information (which does not change the code)
    /// for the machine-code tier.
    pub fn compile_lineinfo_cubin(
        &self,
        src: &Path,
        include: &Path,
        arch: &str,
        flags: &[String],
        cubin: &Path,
    ) -> CompileOutput {
        let mut with_lines = flags.to_vec();
        with_lines.push("-lineinfo".into());
        self.compile_rdc_cubin(src, include, arch, &with_lines, cubin)
    }

    /// `nvcc -arch=<arch> -rdc=true -I<include> <flags> <src> -L<lib>
    /// -lcudadevrt -o <exe>`: a host test's whole program, device-linked and
    /// linked against the static CUDA runtime in one step. Flags that name
    /// the targets themselves (`-gencode`, as a test of JIT loading from PTX
    /// does) replace `-arch=<arch>`.
    pub fn build_host_program(
        &self,
        src: &Path,
        include: &Path,
        arch: &str,
        flags: &[String],
        exe: &Path,
    ) -> CompileOutput {
        let mut args = Vec::new();
        if !flags.iter().any(|f| f.starts_with("-gencode")) {
            args.push(format!("-arch={arch}"));
        }
        args.extend(["-rdc=true".into(), format!("-I{}", include.display())]);
        args.extend(flags.iter().cloned());
        args.extend([
            src.display().to_string(),
            format!("-L{}", self.lib_dir.display()),
            "-lcudadevrt".into(),
            "-o".into(),
            exe.display().to_string(),
        ]);
        self.run(&args)
    }

    /// `nvcc -arch=<arch> -dlink -cubin <obj> -L<lib> -lcudadevrt -o <cubin>`.
    pub fn dlink_cubin(&self, obj: &Path, arch: &str, cubin: &Path) -> CompileOutput {
        let mut args = self.dlink_flags(arch);
        args.extend([
            obj.display().to_string(),
            "-o".into(),
            cubin.display().to_string(),
        ]);
        self.run(&args)
    }

    /// The flags of [`Nvcc::dlink_cubin`] before its object and output:
    /// `-arch=<arch> -dlink -cubin -L<lib> -lcudadevrt`.
    pub fn dlink_flags(&self, arch: &str) -> Vec<String> {
        vec![
            format!("-arch={arch}"),
            "-dlink".into(),
            "-cubin".into(),
            format!("-L{}", self.lib_dir.display()),
            "-lcudadevrt".into(),
        ]
    }

    /// Compiles a snippet (relocatable device code, as CDP needs) in `workdir`
    /// and returns what nvcc said. Used by compile tests.
    pub fn check_snippet(
        &self,
        name: &str,
        source: &str,
        arch: &str,
        flags: &[String],
        workdir: &Path,
    ) -> Result<CompileOutput, String> {
        std::fs::create_dir_all(workdir)
            .map_err(|e| format!("cannot create {}: {e}", workdir.display()))?;
        let src = workdir.join(format!("{name}.cu"));
        std::fs::write(&src, source).map_err(|e| format!("cannot write {}: {e}", src.display()))?;
        let obj = workdir.join(format!("{name}.o"));
        Ok(self.compile_rdc(&src, workdir, arch, flags, &obj))
    }
}

/// The flags of a relocatable compile before what it makes
/// ([`Nvcc::compile_rdc`], [`Nvcc::compile_rdc_cubin`]): `-arch=<arch>
/// -rdc=true -I<include>` and the test's own `flags`. `gridcheck info
/// nvcc-flags` prints them, so that a script compiles as `cargo xtask
/// build` does.
pub fn rdc_flags(arch: &str, include: &Path, flags: &[String]) -> Vec<String> {
    let mut args = vec![
        format!("-arch={arch}"),
        "-rdc=true".into(),
        format!("-I{}", include.display()),
    ];
    args.extend(flags.iter().cloned());
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_parse() {
        let text = "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.0, V13.0.88\nBuild cuda_13.0";
        assert_eq!(parse_version(text).as_deref(), Some("13.0.88"));
        assert_eq!(parse_version("garbage"), None);
    }

    #[test]
    fn the_architecture_list_is_read_and_the_fallback_is_nvccs() {
        let listed = parse_gpu_code_list("sm_90\nsm_100\nsm_75\nsm_90a\n").unwrap();
        assert_eq!(listed, ["sm_75", "sm_90", "sm_100"]);
        assert_eq!(parse_gpu_code_list("nvcc fatal: Unknown option"), None);
        // The fallback is what nvcc 13.0 says, where one is installed.
        if let Ok(n) = find_nvcc(&crate::root::checkout_root(env!("CARGO_MANIFEST_DIR")))
            && n.version.starts_with("13.0.")
        {
            let (archs, note) = n.gpu_archs();
            assert_eq!(note, None);
            assert_eq!(archs, FALLBACK_ARCHS);
        }
    }

    #[test]
    fn missing_nvcc_is_a_message_not_a_panic() {
        // Whatever this machine has, the answer is Ok or a helpful Err.
        match find_nvcc(Path::new("/nonexistent")) {
            Ok(n) => assert!(!n.version.is_empty()),
            Err(e) => assert!(e.contains("no nvcc found"), "{e}"),
        }
    }
}
