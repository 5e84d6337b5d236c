//! One cubin checked: its kernels' parameters from `.nv.info.<kernel>`,
//! its machine code from `nvdisasm -c -gi`, each kernel judged
//! (`kernel.rs`); the result cached by the cubin's content hash.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use crate::elf::{EM_CUDA, Elf};
use crate::kernel::{self, Kernel};
use crate::nvinfo::{self, ParamInfo};

/// Bumped whenever the analysis changes, so that a cache entry written by
/// an older analysis is not read (2: tensor-map prefetches, branch
/// conditions followed; 3: the triggers before the wait).
pub const ANALYSIS_VERSION: u32 = 3;

/// What the check runs and where it keeps things.
#[derive(Debug, Clone, Default)]
pub struct Tools {
    pub nvdisasm: Option<PathBuf>,
    pub cuobjdump: Option<PathBuf>,
    /// The cache of per-cubin results, if any.
    pub cache: Option<PathBuf>,
    /// A directory for temporary files.
    pub tmp: PathBuf,
    /// Disassemble every kernel, not only those the prefilter passes
    /// (`prefilter.rs`): what pairing with a trace needs (the previous
    /// kernel's stores), and the reference the prefilter is compared with.
    pub all_kernels: bool,
    /// The most cubins one nvdisasm run reads (`pack.rs`); 0: [`PACK`];
    /// 1: each cubin's own file, every kernel (`check`).
    pub pack: usize,
}

/// Cubins a nvdisasm run reads, unless told otherwise.
pub const PACK: usize = 32;

impl Tools {
    /// A fresh temporary path under `tmp`.
    pub fn temp(&self, what: &str) -> PathBuf {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        self.tmp
            .join(format!("gridcheck-check-{}-{n}-{what}", std::process::id()))
    }
}

/// A cubin's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CubinResult {
    /// `sm_90`, `sm_100f`: nvdisasm's `.target`.
    pub arch: String,
    pub kernels: Vec<Kernel>,
}

/// The message for a missing disassembler.
pub const NO_NVDISASM: &str = "nvdisasm was not found: install a CUDA toolchain with \
    `cargo xtask toolchain install 13.3` (into .toolchains/), `pip install nvidia-cuda-nvdisasm`, \
    or put the CUDA toolkit's bin/ on PATH";

/// Each kernel's parameter information, by kernel name.
pub fn param_infos(elf: &Elf<'_>) -> Result<BTreeMap<String, ParamInfo>, String> {
    let mut out = BTreeMap::new();
    for s in &elf.sections {
        if let Some(k) = s.name.strip_prefix(".nv.info.") {
            let info = nvinfo::parse(s.data).map_err(|e| format!("section {}: {e}", s.name))?;
            out.insert(k.to_string(), info);
        }
    }
    Ok(out)
}

/// Judges every kernel of a disassembly: the functions with parameter
/// information are the kernels (device functions have none).
pub fn check_text(
    text: &str,
    infos: &BTreeMap<String, ParamInfo>,
    fallback_arch: &str,
) -> Result<CubinResult, String> {
    let arch = text
        .lines()
        .find_map(|l| l.trim().strip_prefix(".target"))
        .map(|t| t.trim().to_string())
        .unwrap_or_else(|| fallback_arch.to_string());
    let functions = gridcheck_sass::parse(text)?;
    let kernels = functions
        .iter()
        .filter_map(|f| {
            infos
                .get(&f.name)
                .map(|info| kernel::analyze(f, info, &arch))
        })
        .collect();
    Ok(CubinResult { arch, kernels })
}

/// A cubin's cache file: `-pdl` for a result with only the kernels the
/// prefilter passed disassembled.
fn cache_file(dir: &Path, bytes: &[u8], all_kernels: bool) -> PathBuf {
    let h = gridcheck_toolchain::fnv1a64(bytes);
    let part = if all_kernels { "" } else { "-pdl" };
    dir.join(format!(
        "v{ANALYSIS_VERSION}-{h:016x}-{}{part}.json",
        bytes.len()
    ))
}

/// A cubin's cached result: with every kernel disassembled, or with the
/// prefilter's when that is what is asked for.
pub fn cached(bytes: &[u8], tools: &Tools) -> Option<CubinResult> {
    let dir = tools.cache.as_ref()?;
    let modes: &[bool] = if tools.all_kernels {
        &[true]
    } else {
        &[false, true]
    };
    modes.iter().find_map(|&all| {
        let text = std::fs::read_to_string(cache_file(dir, bytes, all)).ok()?;
        serde_json::from_str::<CubinResult>(&text).ok()
    })
}

/// Keeps a cubin's result in the cache, if there is one.
pub fn keep(bytes: &[u8], tools: &Tools, r: &CubinResult) {
    let Some(dir) = &tools.cache else { return };
    let c = cache_file(dir, bytes, tools.all_kernels);
    let _ = std::fs::create_dir_all(dir);
    // Written whole under another name, then renamed: a reader never sees
    // half a file.
    let part = c.with_extension(format!("part{}", std::process::id()));
    if let Ok(json) = serde_json::to_string(r)
        && std::fs::write(&part, json).is_ok()
    {
        let _ = std::fs::rename(&part, c);
    }
}

/// Runs nvdisasm (`-c -gi`, and `-fun` with these symbols) on a file;
/// without `dataflow`, `-ndf`: no indirect branch's targets are inferred,
/// and it costs half the time (the analysis runs over every function of
/// the file, whichever `-fun` prints).
pub fn nvdisasm(
    tools: &Tools,
    bytes: &[u8],
    functions: Option<&[u32]>,
    dataflow: bool,
) -> Result<String, String> {
    let nvdisasm = tools.nvdisasm.as_ref().ok_or(NO_NVDISASM)?;
    let file = tools.temp("k.cubin");
    std::fs::write(&file, bytes).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    let mut cmd = Command::new(nvdisasm);
    cmd.args(["-c", "-gi"]);
    if !dataflow {
        cmd.arg("-ndf");
    }
    if let Some(f) = functions {
        let list: Vec<String> = f.iter().map(u32::to_string).collect();
        cmd.arg("-fun").arg(list.join(","));
    }
    let out = cmd.arg(&file).output();
    let _ = std::fs::remove_file(&file);
    let out = out.map_err(|e| format!("cannot run {}: {e}", nvdisasm.display()))?;
    if !out.status.success() {
        return Err(format!(
            "nvdisasm cannot read it ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Checks one cubin's bytes alone, every kernel disassembled (from the
/// cache when it holds them).
pub fn check(bytes: &[u8], tools: &Tools) -> Result<CubinResult, String> {
    let elf = Elf::parse(bytes)?;
    if elf.machine != EM_CUDA {
        return Err(format!(
            "an ELF file for machine {}, not a cubin (EM_CUDA, 190)",
            elf.machine
        ));
    }
    let tools = &Tools {
        all_kernels: true,
        ..tools.clone()
    };
    if let Some(r) = cached(bytes, tools) {
        return Ok(r);
    }
    let infos = param_infos(&elf)?;
    let fallback = format!("sm_{}", elf.sm());
    let text =
        nvdisasm(tools, bytes, None, true).map_err(|e| format!("this {fallback} cubin: {e}"))?;
    let r = check_text(&text, &infos, &fallback).map_err(|e| format!("nvdisasm's output: {e}"))?;
    keep(bytes, tools, &r);
    Ok(r)
}
