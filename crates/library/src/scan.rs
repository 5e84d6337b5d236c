//! The header scan: in one release's `include/cccl`, every line of `cub/`
//! and `thrust/` that calls `_CCCL_PDL_GRID_DEPENDENCY_SYNC()` (the wait) or
//! `_CCCL_PDL_TRIGGER_NEXT_LAUNCH()` (the trigger) outside a comment, the
//! CCCL version, and from those the release's algorithms (through
//! `mapping.rs`). A header with the macros that the mapping lacks becomes
//! an algorithm of its own with no program, so it cannot go unnoticed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::catalog::{Algorithm, Catalog, Release};
use crate::mapping::{ALGORITHMS, THRUST, algorithms_of};

/// The wait's macro.
pub const WAIT: &str = "_CCCL_PDL_GRID_DEPENDENCY_SYNC()";
/// The trigger's macro.
pub const TRIGGER: &str = "_CCCL_PDL_TRIGGER_NEXT_LAUNCH()";

/// The largest header read; a bigger file is an error, not a slow scan.
const MAX_HEADER_BYTES: u64 = 8 << 20;
/// The most files a scan visits.
const MAX_FILES: usize = 100_000;

/// What one header calls: the lines of its waits and triggers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sites {
    pub waits: Vec<u32>,
    pub triggers: Vec<u32>,
}

/// One release's headers, scanned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scanned {
    pub cccl: String,
    /// By header, relative to `include/cccl` with `/`: only headers with sites.
    pub headers: BTreeMap<String, Sites>,
    /// The Thrust entry points whose header names their CUB call.
    pub thrust: Vec<(&'static str, &'static str)>,
}

/// The sites of one header's text: a macro counts where it stands before
/// any `//` of its line, outside `/* */` comments, and not in a `#define`.
pub fn sites_of(text: &str) -> Sites {
    let mut s = Sites::default();
    let mut in_block = false;
    for (i, raw) in text.lines().enumerate() {
        let code = strip_comments(raw, &mut in_block);
        if code.trim_start().starts_with('#') {
            continue;
        }
        let line = u32::try_from(i + 1).unwrap_or(u32::MAX);
        if code.contains(WAIT) {
            s.waits.push(line);
        }
        if code.contains(TRIGGER) {
            s.triggers.push(line);
        }
    }
    s
}

/// A line without its comments; `in_block` carries an open `/*` across lines.
fn strip_comments(line: &str, in_block: &mut bool) -> String {
    let mut out = String::new();
    let mut rest = line;
    loop {
        if *in_block {
            match rest.find("*/") {
                Some(end) => {
                    rest = &rest[end + 2..];
                    *in_block = false;
                }
                None => return out,
            }
        }
        let line_c = rest.find("//");
        let block_c = rest.find("/*");
        match (line_c, block_c) {
            (Some(l), Some(b)) if b < l => {
                out.push_str(&rest[..b]);
                rest = &rest[b + 2..];
                *in_block = true;
            }
            (None, Some(b)) => {
                out.push_str(&rest[..b]);
                rest = &rest[b + 2..];
                *in_block = true;
            }
            (Some(l), _) => {
                out.push_str(&rest[..l]);
                return out;
            }
            (None, None) => {
                out.push_str(rest);
                return out;
            }
        }
    }
}

/// `#define CCCL_VERSION 3005000` -> `3.5.0`.
pub fn cccl_version(include: &Path) -> Result<String, String> {
    let path = include.join("cuda/std/__cccl/version.h");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    for (i, l) in text.lines().enumerate() {
        let mut w = l.split_whitespace();
        if w.next() == Some("#define") && w.next() == Some("CCCL_VERSION") {
            let v: u64 = w.next().and_then(|v| v.parse().ok()).ok_or_else(|| {
                format!("{}:{}: CCCL_VERSION is not a number", path.display(), i + 1)
            })?;
            return Ok(format!(
                "{}.{}.{}",
                v / 1_000_000,
                v / 1000 % 1000,
                v % 1000
            ));
        }
    }
    Err(format!("{}: no `#define CCCL_VERSION`", path.display()))
}

/// Every file under `dir`, relative to `base`, sorted.
fn files_under(base: &Path, dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let rd = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for e in rd.flatten() {
        let p = e.path();
        if out.len() >= MAX_FILES {
            return Err(format!("{}: more than {MAX_FILES} files", base.display()));
        }
        if p.is_dir() {
            files_under(base, &p, out)?;
        } else if let Ok(rel) = p.strip_prefix(base) {
            out.push(rel.to_path_buf());
        }
    }
    Ok(())
}

fn rel_name(p: &Path) -> String {
    p.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Scans one release's `include/cccl`.
pub fn scan_headers(include: &Path) -> Result<Scanned, String> {
    let cccl = cccl_version(include)?;
    let mut files = Vec::new();
    for top in ["cub", "thrust"] {
        if include.join(top).is_dir() {
            files_under(include, &include.join(top), &mut files)?;
        }
    }
    files.sort();
    let mut headers = BTreeMap::new();
    for f in files {
        let path = include.join(&f);
        let len = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        if len > MAX_HEADER_BYTES {
            return Err(format!(
                "{}: {len} bytes, more than a header may have",
                path.display()
            ));
        }
        let Ok(bytes) = std::fs::read(&path) else {
            return Err(format!("{}: unreadable", path.display()));
        };
        let text = String::from_utf8_lossy(&bytes);
        if !text.contains("_CCCL_PDL_") {
            continue;
        }
        let s = sites_of(&text);
        if !s.waits.is_empty() || !s.triggers.is_empty() {
            headers.insert(rel_name(&f), s);
        }
    }
    let mut thrust = Vec::new();
    for t in THRUST {
        let text = std::fs::read_to_string(include.join(t.header)).unwrap_or_default();
        if t.needles.iter().any(|n| text.contains(n)) {
            thrust.push((t.algorithm, t.entry));
        }
    }
    Ok(Scanned {
        cccl,
        headers,
        thrust,
    })
}

/// A release's entry of the catalog from its scan: the mapped algorithms of
/// every header with sites (in the mapping's order), then one algorithm with
/// no program for each header the mapping lacks.
pub fn release_of_scan(name: &str, s: &Scanned) -> Release {
    let mut algorithms: Vec<Algorithm> = Vec::new();
    let sites = |file: &str, lines: &[u32]| -> Vec<String> {
        lines.iter().map(|l| format!("{file}:{l}")).collect()
    };
    for info in ALGORITHMS {
        let mut a = Algorithm {
            name: info.name.into(),
            entry: info.entry.into(),
            program: info.program.into(),
            thrust: s
                .thrust
                .iter()
                .filter(|(alg, _)| *alg == info.name)
                .map(|(_, e)| e.to_string())
                .collect(),
            waits: Vec::new(),
            triggers: Vec::new(),
        };
        for (file, site) in &s.headers {
            if algorithms_of(file).is_some_and(|names| names.contains(&info.name)) {
                a.waits.extend(sites(file, &site.waits));
                a.triggers.extend(sites(file, &site.triggers));
            }
        }
        if !a.waits.is_empty() || !a.triggers.is_empty() {
            algorithms.push(a);
        }
    }
    // Thrust's entry points with a program, each with its CUB algorithm's sites.
    let mut thrust = Vec::new();
    for t in THRUST.iter().filter(|t| !t.name.is_empty()) {
        let reached = s
            .thrust
            .iter()
            .any(|(alg, e)| *alg == t.algorithm && *e == t.entry);
        if let Some(cub) = algorithms
            .iter()
            .find(|a| a.name == t.algorithm)
            .filter(|_| reached)
        {
            thrust.push(Algorithm {
                name: t.name.into(),
                entry: format!("{} -> {}", t.entry, cub.entry),
                program: "thrust".into(),
                thrust: Vec::new(),
                waits: cub.waits.clone(),
                triggers: cub.triggers.clone(),
            });
        }
    }
    algorithms.extend(thrust);
    for (file, site) in &s.headers {
        if algorithms_of(file).is_none() {
            algorithms.push(Algorithm {
                name: unmapped_name(file),
                entry: format!("unknown: {file} is not in crates/library/src/mapping.rs"),
                program: String::new(),
                thrust: Vec::new(),
                waits: sites(file, &site.waits),
                triggers: sites(file, &site.triggers),
            });
        }
    }
    Release {
        name: name.into(),
        cccl: s.cccl.clone(),
        algorithms,
    }
}

/// `cub/agent/agent_foo.cuh` -> `unmapped_agent_foo`.
fn unmapped_name(file: &str) -> String {
    let stem = file.rsplit('/').next().unwrap_or(file);
    let stem = stem.split('.').next().unwrap_or(stem);
    let clean: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("unmapped_{clean}")
}

/// The catalog `old` with every scanned release replaced (or added) and
/// the others kept as they were, releases in order.
pub fn merge(old: &Catalog, scanned: Vec<Release>) -> Catalog {
    let mut releases: Vec<Release> = old
        .releases
        .iter()
        .filter(|r| !scanned.iter().any(|s| s.name == r.name))
        .cloned()
        .collect();
    releases.extend(scanned);
    releases.sort_by_key(|r| gridcheck_toolchain::release_key(&r.name));
    Catalog { releases }
}
