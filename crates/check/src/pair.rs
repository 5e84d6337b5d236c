//! When a load before the wait is a finding: the previous kernel in the
//! stream, or one further back that the kernels between let it race, can
//! write what it reads. Two ways to know.
//!
//! - A launch trace (JSON lines, one launch a line, as `kernels/trace/`'s
//!   interposer writes them): `{"kernel": "_Z9secondaryPKfPf", "pdl": true,
//!   "stream": "0x5583...", "params": [{"index": 0, "offset": 0, "size": 8,
//!   "bytes": "00a0..."}]}`, `bytes` the parameter's value, little-endian,
//!   in hex; `"process"`, the launching process's id, where the interposer
//!   wrote it (processes of one program appending to one file: a stream
//!   is its process's). For a PDL launch B, the previous launch A on its
//!   stream: an early load of B reads a finding when the pointer it
//!   derives from (B's argument, or the field of a structure argument)
//!   equals a pointer A's stores write through (A's arguments at the
//!   parameters its own dataflow names). When A's code is not among the
//!   checked files, every pointer-sized value of A's arguments counts as
//!   written, and the finding says so.
//!
//!   The chain: B may start once every block of A triggered or exited,
//!   and B's wait covers A's completion. When A was itself launched with
//!   PDL and can trigger before its own wait returned (a trigger some path
//!   reaches before any wait, `Kernel::early_triggers`) or has no wait, B
//!   can start before Z, the launch before A, completed: B's early loads
//!   are paired with Z's stores too, and so on back while each launch
//!   between can (a launch whose code was not checked counts as able, and
//!   the finding says so), [`CHAIN_LIMIT`] launches at most. A launch
//!   between that waits before it triggers on every path ends the chain.
//!   A kernel between with a wait that some path exits before (its blocks
//!   may end unwaited only if every thread takes that path: the guard of
//!   an empty launch) ends it too. Where A has no wait at all, A can even
//!   complete before Z, so B's loads after its wait can race Z as well;
//!   those are not paired: the analysis keeps only the loads before the
//!   wait, and the programming guide does not say whether B's wait covers
//!   Z then (`spec/pdl/wait.yaml`, `pdl.wait.chain-waits-through-secondary`).
//! - A file naming, for each kernel, the parameters the previous kernel
//!   produces (TOML): `[[kernel]] name = "secondary" produced = [1]`; the
//!   name is the mangled one or the demangled one up to its `(`.

use std::collections::{BTreeMap, BTreeSet, HashMap};

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

/// How many launches back the pairing follows a chain (`by_trace`).
pub const CHAIN_LIMIT: usize = 64;

/// A launch trace made ready for pairing, once for every kernel checked:
/// each launch's predecessor on its stream (in its process), and the code
/// checked of each kernel name (any architecture).
pub struct TraceIndex<'a> {
    trace: &'a [Launch],
    file: &'a str,
    prev: Vec<Option<usize>>,
    code: HashMap<&'a str, Vec<&'a Kernel>>,
}

impl<'a> TraceIndex<'a> {
    /// The trace `trace` (read from `file`) over the kernels `all`.
    pub fn new(trace: &'a [Launch], file: &'a str, all: &[&'a Kernel]) -> TraceIndex<'a> {
        let mut last = HashMap::new();
        let prev = trace
            .iter()
            .enumerate()
            .map(|(n, l)| last.insert((l.stream.as_str(), l.process), n))
            .collect();
        let mut code: HashMap<&str, Vec<&Kernel>> = HashMap::new();
        for k in all {
            code.entry(k.name.as_str()).or_default().push(k);
        }
        TraceIndex {
            trace,
            file,
            prev,
            code,
        }
    }

    /// The checked code of the kernel `a` launched (none: not checked).
    fn code(&self, a: &Launch) -> &[&'a Kernel] {
        self.code.get(a.kernel.as_str()).map_or(&[], Vec::as_slice)
    }
}

/// The values `a`'s stores write through, and how that is known.
fn written(a: &Launch, code: &[&Kernel]) -> (Vec<u64>, &'static str) {
    if code.is_empty() {
        return (
            a.all_values(),
            "its code was not among the checked files, so every pointer it was given counts as written",
        );
    }
    let mut w = Vec::new();
    for p in code {
        for r in &p.writes {
            if let Some(o) = r.ordinal {
                w.extend(a.value(o, r.at));
            }
        }
    }
    (w, "its stores write through that pointer")
}

/// Why launch `a` lets the launch after it start before the launch
/// before it completed: `a` was launched with PDL (so it may start before
/// that one completed) and can trigger before its wait returned, or has
/// no wait. `None` where it cannot: launched without PDL, or its code
/// waits before it triggers on every path.
fn passes(a: &Launch, code: &[&Kernel]) -> Option<String> {
    if !a.pdl {
        return None;
    }
    let name = &a.kernel;
    if code.is_empty() {
        return Some(format!(
            "`{name}` between: its code was not among the checked files, so it counts as able to trigger before its wait"
        ));
    }
    if code.iter().any(|p| p.waits.is_empty()) {
        return Some(format!(
            "`{name}` between has no wait: it can end before the kernel before it does"
        ));
    }
    code.iter()
        .find_map(|p| p.early_triggers.first())
        .map(|t| format!("`{name}` between can trigger before its wait (address 0x{t:04x})"))
}

/// The launches whose stores the early loads of launch `n` can race:
/// its predecessor on the stream, then the one before, for as long as
/// each launch between lets the next start early (`passes`, its reason
/// kept), [`CHAIN_LIMIT`] at most. A chain member at depth `d` has the
/// first `d` reasons between it and `n`.
fn chain(n: usize, t: &TraceIndex) -> (Vec<usize>, Vec<String>) {
    let (mut members, mut between) = (Vec::new(), Vec::new());
    let mut at = t.prev[n];
    while let Some(m) = at {
        members.push(m);
        if members.len() >= CHAIN_LIMIT {
            break;
        }
        let Some(why) = passes(&t.trace[m], t.code(&t.trace[m])) else {
            break;
        };
        between.push(why);
        at = t.prev[m];
    }
    (members, between)
}

/// Why a chain member at `depth` (0: the direct predecessor) writes what
/// launch `n` reads: the kernel, the launches, and the kernels between.
fn chain_why(
    trace: &[Launch],
    members: &[usize],
    between: &[String],
    n: usize,
    how: &str,
    file: &str,
) -> String {
    let depth = members.len() - 1;
    let a = &trace[members[depth]];
    let stream = &trace[n].stream;
    if depth == 0 {
        return format!(
            "the previous kernel `{}` writes it (trace {file}: launches {} and {} on stream {stream}; {how})",
            a.kernel,
            members[0] + 1,
            n + 1
        );
    }
    let back = match depth + 1 {
        2 => "two".to_string(),
        3 => "three".to_string(),
        4 => "four".to_string(),
        d => d.to_string(),
    };
    let mut launches: Vec<String> = members.iter().rev().map(|m| (m + 1).to_string()).collect();
    let last = launches.pop().unwrap_or_default();
    format!(
        "the kernel {back} launches back, `{}`, writes it (trace {file}: launches {}, {last} and {} on stream {stream}; {how}); {}",
        a.kernel,
        launches.join(", "),
        n + 1,
        between[..depth].join("; ")
    )
}

/// The early loads of `k` that a traced PDL launch of it pairs with the
/// stores of its predecessor on the stream, or of a launch further back
/// that the chain between lets it race (`chain`).
pub fn by_trace(k: &Kernel, t: &TraceIndex) -> Vec<Hit> {
    let (trace, file) = (t.trace, t.file);
    let mut out: Vec<Hit> = Vec::new();
    for (n, b) in trace.iter().enumerate() {
        if !b.pdl || b.kernel != k.name {
            continue;
        }
        let (members, between) = chain(n, t);
        for depth in 0..members.len() {
            let a = &trace[members[depth]];
            let (written, how) = written(a, t.code(a));
            for l in k.early.iter().filter(|l| !l.reads_params_only) {
                for p in params_of(&l.provenance) {
                    let Some(v) = p.ordinal.and_then(|o| b.value(o, p.at)) else {
                        continue;
                    };
                    if v != 0 && written.contains(&v) && !out.iter().any(|h| h.addr == l.addr) {
                        out.push(Hit {
                            addr: l.addr,
                            param: p.clone(),
                            why: chain_why(trace, &members[..=depth], &between, n, how, file),
                        });
                    }
                }
            }
        }
    }
    out
}
