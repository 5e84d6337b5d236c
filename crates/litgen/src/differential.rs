//! The differential test of the two oracles on random programs: every
//! program is classified by [`gridcheck_oracle::cross_check`]; a conflict
//! (a difference no pinned limit explains) is shrunk with proptest's value
//! tree and reported as a ready-to-paste YAML test.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use gridcheck_oracle::{Agreement, cross_check_with};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use crate::{GenConfig, GenOp, GenProgram, GenStream, strategy};

/// A disagreement, shrunk.
#[derive(Debug, Clone)]
pub struct Finding {
    /// The shrunk program as a spec `tests:` entry.
    pub yaml: String,
    /// What the oracles said.
    pub detail: String,
    /// The program's index in the run (to reproduce: same seed and count).
    pub index: u64,
}

/// What a run found.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub programs: u64,
    /// Per [`Agreement`] kind (`same`, `loom-orders-writes`, `loom-bounded`,
    /// `single`, `conflict`) and `both-failed`.
    pub classes: BTreeMap<String, u64>,
    /// Why both oracles failed, by message (deadlocks, constructs neither
    /// defines), with counts.
    pub both_failed: BTreeMap<String, u64>,
    pub conflicts: Vec<Finding>,
    /// Programs the loader rejected: a generator bug.
    pub generator_errors: Vec<String>,
    /// How often each construct occurred in the programs.
    pub coverage: BTreeMap<&'static str, u64>,
    pub elapsed: Duration,
}

fn class(a: &Agreement) -> &'static str {
    match a {
        Agreement::Same => "same",
        Agreement::LoomOrdersWrites { .. } => "loom-orders-writes",
        Agreement::LoomBounded { .. } => "loom-bounded",
        Agreement::Single { .. } => "single",
        Agreement::Conflict { .. } => "conflict",
    }
}

/// What kind of failure both oracles reported: the first words of each
/// oracle's message, without the parts that name a program.
fn error_kind(e: &str) -> String {
    let words = |s: &str| -> String {
        s.split([':', '(', '`', '['])
            .next()
            .unwrap_or(s)
            .trim()
            .chars()
            .take(60)
            .collect()
    };
    match e.split_once("; the axiomatic model: ") {
        Some((loom, axiom)) => format!(
            "loom: {} / axiomatic: {}",
            words(loom.trim_start_matches("loom: ")),
            words(axiom)
        ),
        None => words(e),
    }
}

/// loom's exploration for random programs: exhaustive up to 20 000
/// executions, then bounded at 2 preemptions (reported as `loom-bounded`).
pub fn loom_options() -> gridcheck_model::Options {
    gridcheck_model::Options {
        budget: Some(20_000),
        fallback_bounds: vec![2],
        ..gridcheck_model::Options::default()
    }
}

/// Whether the program makes the oracles conflict; `Some(detail)` if so.
fn conflict(p: &GenProgram) -> Option<String> {
    let l = p.litmus().ok()?;
    match cross_check_with(&l, &loom_options()) {
        Ok(c) if c.is_conflict() => Some(c.agreement.to_string()),
        _ => None,
    }
}

fn cover(p: &GenProgram, c: &mut BTreeMap<&'static str, u64>) {
    let mut bump = |k: &'static str| *c.entry(k).or_default() += 1;
    bump("programs");
    if p.cdp1 {
        bump("cdp1 program");
    }
    if p.pool.is_some() {
        bump("pool limit");
    }
    if p.sync_depth.is_some() {
        bump("sync-depth limit");
    }
    for k in &p.kernels {
        match k.launch {
            crate::GenLaunch::Host { pdl: false } => bump("host kernel"),
            crate::GenLaunch::Host { pdl: true } => bump("host-pdl kernel"),
            crate::GenLaunch::Device { stream, .. } => bump(match stream {
                GenStream::Null => "launch null",
                GenStream::Named(_) => "launch named",
                GenStream::Tail => "launch tail",
                GenStream::FireAndForget => "launch fire-and-forget",
            }),
        }
        if k.barrier.is_some() && k.threads.len() > 1 {
            bump("syncthreads");
        }
        // Threads per block, and kernels of several blocks.
        let blocks = k.blocks.iter().max().map_or(1, |b| b + 1);
        if (0..blocks).any(|b| k.blocks.iter().filter(|&&x| x == b).count() > 1) {
            bump("two-thread block");
        }
        if blocks > 1 {
            bump("several blocks");
        }
        for o in k.threads.iter().flatten() {
            bump(match o {
                GenOp::Store(..) => "store",
                GenOp::Load(_) => "load",
                GenOp::Trigger => "trigger",
                GenOp::GridSync => "gridsync",
                GenOp::DeviceSync(_) => "devicesync",
                GenOp::GetError => "geterror",
                GenOp::PeekError => "peekerror",
                GenOp::Record(..) => "record",
                GenOp::Wait(..) => "waitevent",
                GenOp::SharedStore(_) => "shared store",
                GenOp::SharedLoad => "shared load",
                GenOp::BulkLoad(..) => "bulkload",
                GenOp::MbarWait(_) => "mbarwait",
                GenOp::BulkStore(_) => "bulkstore",
                GenOp::BulkCommit => "bulkcommit",
                GenOp::BulkWait(false, _) => "bulkwait",
                GenOp::BulkWait(true, _) => "bulkwait read",
                GenOp::ProxyFence => "fence.proxy.async",
            });
        }
    }
}

/// A runner whose random numbers come from `seed` alone.
pub fn runner(seed: u64) -> TestRunner {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
    )
}

/// Shrinks a conflicting program: proptest's simplify/complicate walk,
/// keeping the last program that still conflicts.
fn shrink<T: ValueTree<Value = GenProgram>>(tree: &mut T, detail: String) -> (GenProgram, String) {
    let mut best = (tree.current(), detail);
    let mut steps = 0;
    let mut failing = true;
    while steps < 2_000 {
        steps += 1;
        let moved = if failing {
            tree.simplify()
        } else {
            tree.complicate()
        };
        if !moved {
            break;
        }
        match conflict(&tree.current()) {
            Some(d) => {
                best = (tree.current(), d);
                failing = true;
            }
            None => failing = false,
        }
    }
    best
}

/// Runs `count` random programs drawn from `seed` on `jobs` threads;
/// `progress` is called after each chunk. The programs and their order
/// depend on `seed` alone.
pub fn run(
    count: u64,
    seed: u64,
    cfg: GenConfig,
    jobs: usize,
    mut progress: impl FnMut(&Report),
) -> Report {
    let start = Instant::now();
    let strat = strategy(cfg);
    let mut rng = runner(seed);
    let mut report = Report::default();
    let mut index = 0;
    while index < count {
        let chunk = (count - index).min(64);
        let mut trees = Vec::new();
        for _ in 0..chunk {
            match strat.new_tree(&mut rng) {
                Ok(t) => trees.push(t),
                Err(e) => report.generator_errors.push(e.to_string()),
            }
        }
        let programs: Vec<GenProgram> = trees.iter().map(|t| t.current()).collect();
        let (results, errors) = check_all(&programs, jobs);
        report.generator_errors.extend(errors);
        for ((tree, p), result) in trees.iter_mut().zip(&programs).zip(results) {
            report.programs += 1;
            cover(p, &mut report.coverage);
            let Some(result) = result else {
                index += 1;
                continue;
            };
            if let Ok(c) = &result
                && let Agreement::Conflict { .. } = c.agreement
            {
                let (small, detail) = shrink(tree, c.agreement.to_string());
                report.conflicts.push(Finding {
                    yaml: small.yaml(&format!("fuzz-conflict-{seed}-{index}")),
                    detail,
                    index,
                });
            }
            classify(&mut report, &result);
            index += 1;
        }
        report.elapsed = start.elapsed();
        progress(&report);
    }
    report.elapsed = start.elapsed();
    report
}

/// Counts one program's cross-check in the report's classes.
fn classify(
    report: &mut Report,
    result: &Result<gridcheck_oracle::CrossCheck, gridcheck_oracle::OracleError>,
) {
    let key = match result {
        Ok(c) => class(&c.agreement).to_string(),
        Err(e) => {
            *report
                .both_failed
                .entry(error_kind(&e.to_string()))
                .or_default() += 1;
            "both-failed".to_string()
        }
    };
    *report.classes.entry(key).or_default() += 1;
}

/// One program's cross-check; `None` where the loader rejected it.
type Checked = Option<Result<gridcheck_oracle::CrossCheck, gridcheck_oracle::OracleError>>;

/// Both oracles on each program, on `jobs` threads: each program's
/// cross-check, and the loader's errors.
fn check_all(programs: &[GenProgram], jobs: usize) -> (Vec<Checked>, Vec<String>) {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<std::sync::Mutex<Checked>> = programs
        .iter()
        .map(|_| std::sync::Mutex::new(None))
        .collect();
    let errors = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(p) = programs.get(i) else { break };
                    match p.litmus() {
                        Ok(l) => {
                            *results[i].lock().unwrap_or_else(|e| e.into_inner()) =
                                Some(cross_check_with(&l, &loom_options()))
                        }
                        Err(e) => errors.lock().unwrap_or_else(|e| e.into_inner()).push(e),
                    }
                }
            });
        }
    });
    (
        results
            .into_iter()
            .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
            .collect(),
        errors.into_inner().unwrap_or_else(|e| e.into_inner()),
    )
}

/// Both oracles on every program of a list (the exhaustive enumeration,
/// `enumerate.rs`): classes and coverage as [`run`] counts them; a conflict
/// is reported as it is (the programs are already small), named
/// `<name>-<index>`.
pub fn run_list(programs: &[GenProgram], name: &str, jobs: usize) -> Report {
    let start = Instant::now();
    let mut report = Report::default();
    let (results, errors) = check_all(programs, jobs);
    report.generator_errors = errors;
    for (index, (p, result)) in programs.iter().zip(results).enumerate() {
        report.programs += 1;
        cover(p, &mut report.coverage);
        let Some(result) = result else { continue };
        if let Ok(c) = &result
            && c.is_conflict()
        {
            report.conflicts.push(Finding {
                yaml: p.yaml(&format!("{name}-{index}")),
                detail: c.agreement.to_string(),
                index: index as u64,
            });
        }
        classify(&mut report, &result);
    }
    report.elapsed = start.elapsed();
    report
}
