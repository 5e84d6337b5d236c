//! The run phase: every batch compiled once (`compile.rs`, in parallel),
//! then run in batch workers (`runner.rs`) program by program, one JSON
//! line a program appended to `campaign.jsonl` as it finishes. A hang or an
//! error costs only its own program: the worker is restarted after it.
//! Once a known hang, or programs of one shape, hung `--hang-cap` times,
//! the other programs of it are skipped, each recorded with that reason;
//! programs not reached within `--budget` are recorded so, and `--resume`
//! runs them (and keeps every other record). Each part appends its times to
//! `parts.jsonl`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::args::Args;
use crate::batch::{Batch, batches, dry_check, read_batch};
use crate::compile;
use crate::findings::{Class, Outcome, ProgramRecord, class_counts};
use crate::known::KnownFacts;
use crate::runner::{Restart, Runner, Sink};
use crate::shape::Shape;

/// The records file, one line a program.
pub const RECORDS: &str = "campaign.jsonl";
/// The times of each part of a campaign, one line a part.
pub const PARTS: &str = "parts.jsonl";
/// A program the budget did not reach: the reason starts so.
pub const NOT_REACHED: &str = "not reached:";

/// One part of a campaign (a `run` or `leads` invocation).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Part {
    /// `run` or `leads`.
    pub phase: String,
    /// The device its workers reported.
    pub device: Option<String>,
    pub compile_s: f64,
    pub gpu_s: f64,
    /// Programs (or rerun programs) that ran on the GPU in this part.
    pub programs_run: usize,
}

/// Reads a JSON-lines file of `T`; a missing file is empty, a bad line an
/// error naming the file and line.
pub fn read_lines<T: for<'de> Deserialize<'de>>(f: &Path) -> Result<Vec<T>, String> {
    let text = match std::fs::read_to_string(f) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("cannot read {}: {e}", f.display())),
    };
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| format!("{}:{}: {e}", f.display(), i + 1))
        })
        .collect()
}

/// Appends `v` as one line of `f`.
pub fn append_line<T: Serialize>(f: &Path, v: &T) -> Result<(), String> {
    let j = serde_json::to_string(v).map_err(|e| e.to_string())?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(f)
        .map_err(|e| format!("cannot open {}: {e}", f.display()))?;
    writeln!(file, "{j}").map_err(|e| format!("cannot write {}: {e}", f.display()))
}

/// The run phase's sink: appends each record, counts hangs, skips capped
/// programs.
struct CampaignSink {
    file: PathBuf,
    records: Vec<ProgramRecord>,
    known: KnownFacts,
    /// Hangs seen per known hang (its fact) and per shape.
    hangs: BTreeMap<String, usize>,
    cap: usize,
    /// The first record that could not be written.
    error: Option<String>,
    last_print: usize,
    started: Instant,
}

impl CampaignSink {
    fn note(&mut self, r: &ProgramRecord) {
        if r.class == Class::Hang {
            for k in r
                .known_hang
                .iter()
                .cloned()
                .chain([format!("shape {}", r.shape)])
            {
                *self.hangs.entry(k).or_default() += 1;
            }
        }
    }

    fn seen(&self, key: &str) -> bool {
        self.hangs.get(key).copied().unwrap_or(0) >= self.cap
    }
}

impl Sink for CampaignSink {
    fn record(&mut self, r: ProgramRecord) {
        if let Err(e) = append_line(&self.file, &r) {
            self.error.get_or_insert(e);
        }
        self.note(&r);
        self.records.push(r);
        if self.records.len() >= self.last_print + 500 {
            self.last_print = self.records.len();
            println!(
                "  {:>6} programs {:>6.1} s  {:?}",
                self.records.len(),
                self.started.elapsed().as_secs_f64(),
                class_counts(&self.records)
            );
        }
    }

    fn skip(&mut self, b: &Batch, i: usize) -> Option<String> {
        let cap = self.cap;
        let l = b.litmus(i)?;
        if let Some(k) = self.known.matching(l).filter(|k| self.seen(&k.fact)) {
            return Some(format!(
                "skipped: the known hang {} (the shape of {}) hung {cap} times (--hang-cap)",
                k.fact, k.test
            ));
        }
        let sh = format!("shape {}", Shape::of(l));
        self.seen(&sh)
            .then(|| format!("skipped: programs of this shape hung {cap} times (--hang-cap)"))
    }
}

/// Compiles every batch (nothing for the stand-in GPU, which loads no
/// module): per batch `Ok` or why not, and the seconds it took.
fn compile_all(a: &Args, dirs: &[PathBuf]) -> Result<(Vec<Result<(), String>>, f64), String> {
    if !compile::needed() {
        println!("a fake GPU: nothing compiled");
        return Ok((vec![Ok(()); dirs.len()], 0.0));
    }
    let nvcc = gridcheck_toolchain::find_nvcc(&a.root)?;
    let include = a.root.join(gridcheck_kernelgen::INCLUDE_DIR);
    println!(
        "campaign: {} batches in {}; compiling with {} ({} jobs)",
        dirs.len(),
        a.dir.display(),
        nvcc.path.display(),
        a.jobs
    );
    let (compiled, compile_s) = compile::all(&nvcc, &include, dirs, a.jobs, a.nvcc_timeout);
    let failed = compiled.iter().filter(|r| r.is_err()).count();
    println!(
        "compiled {} batches in {compile_s:.1} s ({failed} failed)",
        dirs.len()
    );
    for (d, r) in dirs.iter().zip(&compiled) {
        if let Err(e) = r {
            println!(
                "  {}: {}",
                d.display(),
                e.lines().take(6).collect::<Vec<_>>().join("\n    ")
            );
        }
    }
    Ok((compiled, compile_s))
}

/// Whether the budget of its part did not reach the program of `r`
/// (`--resume` runs it; `status` counts it left).
pub fn not_reached(r: &ProgramRecord) -> bool {
    matches!(&r.outcome, Outcome::NotRun { reason } if reason.starts_with(NOT_REACHED))
}

/// The records kept by `--resume` (all but those the budget did not
/// reach), with `campaign.jsonl` rewritten to hold just them; none without.
fn kept_records(a: &Args, file: &Path) -> Result<Vec<ProgramRecord>, String> {
    let kept: Vec<ProgramRecord> = if a.resume {
        read_lines::<ProgramRecord>(file)?
            .into_iter()
            .filter(|r| !not_reached(r))
            .collect()
    } else {
        Vec::new()
    };
    let _ = std::fs::remove_file(file);
    for r in &kept {
        append_line(file, r)?;
    }
    Ok(kept)
}

/// The run phase (the module docs); `Ok(false)` when a batch did not
/// compile (a dry run: did not check).
pub fn run(a: &Args, runner: &mut Runner) -> Result<bool, String> {
    let dirs = batches(&a.dir)?;
    std::fs::create_dir_all(&a.out)
        .map_err(|e| format!("cannot create {}: {e}", a.out.display()))?;
    let (compiled, compile_s) = compile_all(a, &dirs)?;
    let mut clean = compiled.iter().all(|r| r.is_ok());
    if a.dry_run {
        for (d, c) in dirs.iter().zip(&compiled) {
            if c.is_ok() {
                dry_check(&Batch::read(d)?)?;
            }
        }
        let n: usize = dirs
            .iter()
            .map(|d| read_batch(d).map_or(0, |p| p.len()))
            .sum();
        println!(
            "dry run: {n} programs in {} batches compiled and checked; nothing ran on a GPU",
            dirs.len()
        );
        return Ok(clean);
    }
    let file = a.out.join(RECORDS);
    let kept = kept_records(a, &file)?;
    runner.next_worker = kept
        .iter()
        .filter_map(|r| r.worker)
        .max()
        .map_or(0, |w| w + 1);
    let mut sink = CampaignSink {
        file,
        records: Vec::new(),
        known: runner.known.clone(),
        hangs: BTreeMap::new(),
        cap: a.hang_cap,
        error: None,
        last_print: 0,
        started: Instant::now(),
    };
    for r in &kept {
        sink.note(r);
    }
    let deadline = Instant::now() + Duration::from_secs(a.budget);
    let done: std::collections::HashSet<(&str, usize)> =
        kept.iter().map(|r| (r.batch.as_str(), r.index)).collect();
    for (d, c) in dirs.iter().zip(&compiled) {
        let b = Batch::read(d)?;
        let order: Vec<usize> = (0..b.programs.len())
            .filter(|&i| !done.contains(&(b.name.as_str(), i)))
            .collect();
        if let Err(e) = c {
            let why = format!(
                "the batch did not compile: {}",
                e.lines().next().unwrap_or("")
            );
            for &i in &order {
                let o = Outcome::NotRun {
                    reason: why.clone(),
                };
                sink.record(ProgramRecord::of(&b, i, o, &runner.known, None));
            }
            continue;
        }
        runner.run(&b, &order, Restart::After, deadline, None, &mut sink);
    }
    if let Some(e) = sink.error {
        return Err(e);
    }
    let part = Part {
        phase: "run".into(),
        device: runner.device.clone(),
        compile_s,
        gpu_s: sink.started.elapsed().as_secs_f64(),
        programs_run: sink.records.iter().filter(|r| r.worker.is_some()).count(),
    };
    append_line(&a.out.join(PARTS), &part)?;
    clean &= sink.records.iter().all(|r| r.class != Class::NotRun);
    Ok(clean)
}
