//! The machine-code tier's library: SASS as `nvdisasm -c -gi` prints it
//! (`parse.rs`), each instruction's class (`classify.rs`), a function's
//! control flow (`cfg.rs`), the order check of a thread's operations
//! around PDL and launch primitives (`order.rs`), how a generated kernel's
//! code divides among its modeled threads (`generated.rs`), whether a PDL
//! secondary's code holds its wait at all (`presence.rs`), and the user
//! programs with their manifest (`programs.rs`).
//!
//! What it can see and what not is in `order.rs` and the README's
//! "Machine-code tier" section: the check works on the compiled control
//! flow, so predicated code, loops and calls make a pair not checked,
//! never passed.

pub mod cfg;
pub mod classify;
pub mod generated;
pub mod order;
pub mod parse;
pub mod presence;
pub mod programs;

use std::path::Path;
use std::process::Command;

pub use classify::{Access, Class, access, classify};
pub use order::{Op, OpKind, Verdict, check};
pub use parse::{Function, Instr, Loc, parse};

/// Disassembles a cubin with `nvdisasm -c -gi` (code only, line
/// information with the inlined-at chain) and parses it.
pub fn disassemble(nvdisasm: &Path, cubin: &Path) -> Result<Vec<Function>, String> {
    let out = Command::new(nvdisasm)
        .args(["-c", "-gi"])
        .arg(cubin)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", nvdisasm.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} -c -gi {} failed ({}): {}",
            nvdisasm.display(),
            cubin.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    parse(&String::from_utf8_lossy(&out.stdout))
        .map_err(|e| format!("{} of {}: {e}", nvdisasm.display(), cubin.display()))
}

/// One modeled thread's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadResult {
    pub kernel: String,
    pub thread: String,
    pub verdict: Verdict,
}

/// Checks every modeled thread of a generated file that runs a PDL or
/// launch primitive (with its barriers) against its machine code. `file`
/// is the source's file name, as the line information names it.
pub fn check_generated(
    source: &str,
    file: &str,
    functions: &[Function],
) -> Result<Vec<ThreadResult>, String> {
    let kernels = generated::parse(source).map_err(|e| format!("{file}: {e}"))?;
    let mut out = Vec::new();
    for k in kernels.iter().filter(|k| k.has_primitive()) {
        let f = functions
            .iter()
            .find(|f| f.name == k.name)
            .ok_or_else(|| format!("{file}: the machine code has no function `{}`", k.name))?;
        for t in &k.threads {
            if !t.ops.iter().any(|o| o.kind.is_primitive()) {
                continue;
            }
            out.push(ThreadResult {
                kernel: k.name.clone(),
                thread: t.name.clone(),
                verdict: check(f, file, &t.ops),
            });
        }
    }
    Ok(out)
}
