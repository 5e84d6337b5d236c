//! When a load before the wait is a finding: the previous kernel in the
//! stream can write what it reads. Two ways to know.
//!
//! - A launch trace (JSON lines, one launch a line, as `kernels/trace/`'s
//!   interposer writes them): `{"kernel": "_Z9secondaryPKfPf", "pdl": true,
//!   "stream": "0x5583...", "params": [{"index": 0, "offset": 0, "size": 8,
//!   "bytes": "00a0..."}]}`, `bytes` the parameter's value, little-endian,
//!   in hex; `"process"`, the launching process's id, where the interposer
//!   wrote it (processes of one program appending to one file: a stream
//!   is its process's). For a PDL launch B, the previous launch A on its
//!   stream: an
//!   early load of B reads a finding when the pointer it derives from
//!   (B's argument, or the field of a structure argument) equals a pointer
//!   A's stores write through (A's arguments at the parameters its own
//!   dataflow names). When A's code is not among the checked files, every
//!   pointer-sized value of A's arguments counts as written, and the
//!   finding says so.
//! - A file naming, for each kernel, the parameters the previous kernel
//!   produces (TOML): `[[kernel]] name = "secondary" produced = [1]`; the
//!   name is the mangled one or the demangled one up to its `(`.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

use crate::kernel::{Kernel, ParamRef, Provenance};

/// One argument of a traced launch.
#[derive(Debug, Clone, Deserialize)]
pub struct TraceParam {
    pub index: u32,
    #[serde(default)]
    pub offset: u32,
    pub size: u32,
    /// The value, little-endian, in hex (absent when the interposer did
    /// not keep it).
    #[serde(default)]
    pub bytes: Option<String>,
}

/// One traced launch.
#[derive(Debug, Clone, Deserialize)]
pub struct Launch {
    pub kernel: String,
    #[serde(default)]
    pub pdl: bool,
    #[serde(default)]
    pub stream: String,
    /// The process that made the launch; none in a trace of one process.
    #[serde(default)]
    pub process: Option<u64>,
    #[serde(default)]
    pub params: Vec<TraceParam>,
}

impl Launch {
    /// The 8 bytes at `at` of parameter `ordinal`, if recorded.
    pub fn value(&self, ordinal: u32, at: u32) -> Option<u64> {
        let p = self.params.iter().find(|p| p.index == ordinal)?;
        let hex = p.bytes.as_deref()?;
        let start = 2 * at as usize;
        let s = hex.get(start..start + 16)?;
        let mut v = 0u64;
        for k in (0..8).rev() {
            v = (v << 8) | u64::from_str_radix(&s[2 * k..2 * k + 2], 16).ok()?;
        }
        Some(v)
    }

    /// Every 8-byte-aligned 8-byte value of its arguments.
    fn all_values(&self) -> Vec<u64> {
        let mut out = Vec::new();
        for p in &self.params {
            let mut at = 0;
            while at + 8 <= p.size {
                out.extend(self.value(p.index, at));
                at += 8;
            }
        }
        out
    }
}

/// Reads a trace; a line that is not a launch is an error naming it.
pub fn read_trace(text: &str, file: &str) -> Result<Vec<Launch>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, l)| {
            serde_json::from_str(l)
                .map_err(|e| format!("{file}:{}: not a launch record: {e}", n + 1))
        })
        .collect()
}

#[derive(Debug, Deserialize)]
struct ProducedFile {
    #[serde(default)]
    kernel: Vec<ProducedEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProducedEntry {
    name: String,
    produced: Vec<u32>,
}

/// Kernel name -> the parameters the previous kernel produces.
pub type Produced = BTreeMap<String, BTreeSet<u32>>;

pub fn read_produced(text: &str, file: &str) -> Result<Produced, String> {
    let f: ProducedFile = toml::from_str(text).map_err(|e| format!("{file}: {e}"))?;
    let mut out = Produced::new();
    for k in f.kernel {
        out.entry(k.name).or_default().extend(k.produced);
    }
    Ok(out)
}

/// Whether `name` (a file's entry) names kernel `k`.
pub fn names(name: &str, k: &Kernel) -> bool {
    name == k.name
        || k.demangled
            .as_deref()
            .is_some_and(|d| d == name || d.split('(').next() == Some(name))
}

/// One early load paired with what the previous kernel writes.
#[derive(Debug, Clone)]
pub struct Hit {
    pub addr: u64,
    pub param: ParamRef,
    /// `the previous kernel writes it (trace: ...)`.
    pub why: String,
}

fn params_of(p: &Provenance) -> &[ParamRef] {
    match p {
        Provenance::Param { params, .. } => params,
        _ => &[],
    }
}

/// The early loads of `k` that read a parameter the produced file names.
pub fn by_produced(k: &Kernel, produced: &Produced, file: &str) -> Vec<Hit> {
    let Some(set) = produced.iter().find(|(n, _)| names(n, k)).map(|(_, s)| s) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for l in k.early.iter().filter(|l| !l.reads_params_only) {
        for p in params_of(&l.provenance) {
            if p.ordinal.is_some_and(|o| set.contains(&o)) {
                out.push(Hit {
                    addr: l.addr,
                    param: p.clone(),
                    why: format!("the previous kernel writes it ({file})"),
                });
            }
        }
    }
    out
}

/// The early loads of `k` that a traced PDL launch of it pairs with its
/// predecessor's stores. `all` is every kernel checked (any architecture).
pub fn by_trace(k: &Kernel, all: &[&Kernel], trace: &[Launch], file: &str) -> Vec<Hit> {
    let mut out: Vec<Hit> = Vec::new();
    for (n, b) in trace.iter().enumerate() {
        if !b.pdl || b.kernel != k.name {
            continue;
        }
        let Some((m, a)) = trace[..n]
            .iter()
            .enumerate()
            .rev()
            .find(|(_, a)| a.stream == b.stream && a.process == b.process)
        else {
            continue;
        };
        let primaries: Vec<&&Kernel> = all.iter().filter(|p| p.name == a.kernel).collect();
        let (written, how): (Vec<u64>, &str) = if primaries.is_empty() {
            (
                a.all_values(),
                "its code was not among the checked files, so every pointer it was given counts as written",
            )
        } else {
            let mut w = Vec::new();
            for p in &primaries {
                for r in &p.writes {
                    if let Some(o) = r.ordinal {
                        w.extend(a.value(o, r.at));
                    }
                }
            }
            (w, "its stores write through that pointer")
        };
        for l in k.early.iter().filter(|l| !l.reads_params_only) {
            for p in params_of(&l.provenance) {
                let Some(v) = p.ordinal.and_then(|o| b.value(o, p.at)) else {
                    continue;
                };
                if v != 0 && written.contains(&v) && !out.iter().any(|h| h.addr == l.addr) {
                    out.push(Hit {
                        addr: l.addr,
                        param: p.clone(),
                        why: format!(
                            "the previous kernel `{}` writes it (trace {file}: launches {} and {} on stream {}; {how})",
                            a.kernel,
                            m + 1,
                            n + 1,
                            b.stream
                        ),
                    });
                }
            }
        }
    }
    out
}
