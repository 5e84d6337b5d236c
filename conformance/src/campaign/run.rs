//! A campaign's driver: it runs each batch in a worker
//! (`batch_worker.rs`) under a deadline,
//! restarts it after the program in flight when it stops, appends one line
//! a program to `campaign.jsonl`, and ends with the findings.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use gridcheck_spec::{Litmus, Test};

use crate::piped::Piped;

use super::batch_worker::{Line, MARKER, NO_MODULE, STOPPED};
use super::findings::{Class, Outcome, ProgramRecord, classify, known_hang, shape};
use super::{Args, CUBIN, CampaignProgram, batches, compile, read_batch};

/// A batch's programs with their tests, ready to run and classify.
pub(super) struct Batch {
    pub name: String,
    pub dir: std::path::PathBuf,
    pub programs: Vec<CampaignProgram>,
    pub parsed: Vec<Result<(Test, Litmus), String>>,
}

impl Batch {
    pub fn read(dir: &Path) -> Result<Batch, String> {
        let programs = read_batch(dir)?;
        let parsed = programs.iter().map(CampaignProgram::litmus).collect();
        Ok(Batch {
            name: dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            dir: dir.to_path_buf(),
            programs,
            parsed,
        })
    }

    pub fn record(&self, index: usize, outcome: Outcome) -> ProgramRecord {
        let p = &self.programs[index];
        let (class, detail, sh, kh) = match &self.parsed[index] {
            Ok((_, l)) => {
                let (c, d) = classify(l, &p.states, &outcome);
                (c, d, shape(l), known_hang(l).map(String::from))
            }
            Err(e) => (Class::NotRun, e.clone(), String::new(), None),
        };
        ProgramRecord {
            batch: self.name.clone(),
            index,
            name: p.name.clone(),
            class,
            detail,
            shape: sh,
            known_hang: kh,
            oracle: p.oracle.clone(),
            outcome,
        }
    }
}

/// How a batch is run.
pub(super) struct RunCfg<'a> {
    pub args: &'a Args,
    pub deadline: Instant,
    /// Hangs seen per known hang pattern.
    pub hangs: BTreeMap<String, usize>,
    /// Stop the batch at the first program of this class (shrinking: the
    /// first candidate that keeps the finding).
    pub stop_at: Option<Class>,
}

impl RunCfg<'_> {
    /// Counts a hang under its known pattern, if any, and its shape.
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

    /// Why a program is skipped, if it is: its known hang pattern, or its
    /// shape, has hung `--hang-cap` times.
    fn capped(&self, l: &Litmus) -> Option<String> {
        let cap = self.args.hang_cap;
        let seen = |k: &str| self.hangs.get(k).copied().unwrap_or(0) >= cap;
        if let Some(p) = known_hang(l).filter(|p| seen(p)) {
            return Some(format!(
                "skipped: the known hang `{p}` was seen {cap} times (--hang-cap)"
            ));
        }
        let sh = format!("shape {}", shape(l));
        seen(&sh).then(|| format!("skipped: programs of this shape hung {cap} times (--hang-cap)"))
    }
}

/// Runs one batch (see the module docs); `sink` gets each program's record.
/// Each pass starts a worker at the first program without a record; a
/// worker that stops early (a hang, an error, killed) is followed by
/// another from the program after.
pub(super) fn run_batch(cfg: &mut RunCfg, b: &Batch, sink: &mut dyn FnMut(ProgramRecord)) {
    let n = b.programs.len();
    let mut done = vec![false; n];
    let mut from = 0;
    while from < n && Instant::now() < cfg.deadline {
        skip_capped(cfg, b, &mut done, from, sink);
        let Some(first) = (from..n).find(|&i| !done[i]) else {
            break;
        };
        let mut w = match Worker::start(cfg.args, b, &done, first) {
            Ok(w) => w,
            Err(e) => {
                not_run_rest(b, &mut done, first, &e, sink);
                break;
            }
        };
        let mut end = w.read(cfg, b, &mut done, first, sink);
        let (status, stderr) = w.0.end();
        (end.status, end.stderr) = (Some(status), stderr);
        if end.stopped {
            not_run_rest(
                b,
                &mut done,
                first,
                "not run: an earlier program ended the batch",
                sink,
            );
            break;
        }
        if let Some(reason) = end.no_module.clone().filter(|_| end.exited_with(NO_MODULE)) {
            not_run_rest(b, &mut done, first, &reason, sink);
            break;
        }
        blame_in_flight(cfg, b, &mut done, first, &end, sink);
        from = (first..n).find(|&i| !done[i]).unwrap_or(n);
    }
    for i in (0..n).filter(|&i| !done[i]) {
        sink(b.record(
            i,
            Outcome::NotRun {
                reason: "not reached: the GPU budget (--budget) was spent".into(),
            },
        ));
    }
}

/// Records the programs from `from` on that a hang cap skips.
fn skip_capped(
    cfg: &RunCfg,
    b: &Batch,
    done: &mut [bool],
    from: usize,
    sink: &mut dyn FnMut(ProgramRecord),
) {
    for (i, d) in done.iter_mut().enumerate().skip(from) {
        let capped = b.parsed[i].as_ref().ok().and_then(|(_, l)| cfg.capped(l));
        if let Some(why) = capped.filter(|_| !*d) {
            *d = true;
            sink(b.record(i, Outcome::NotRun { reason: why }));
        }
    }
}

/// A batch worker process.
struct Worker(Piped);

/// How a worker's pass ended.
#[derive(Default)]
struct PassEnd {
    /// Killed for silence (`--timeout`).
    killed: bool,
    /// A program of the class `--stop-at` names ended the batch.
    stopped: bool,
    /// The last program it reported ended it (a hang or an error).
    reported_end: bool,
    /// The batch's module did not load: why.
    no_module: Option<String>,
    /// How the process ended, once waited for.
    status: Option<Result<std::process::ExitStatus, String>>,
    /// Its standard error.
    stderr: String,
}

impl PassEnd {
    fn exited_with(&self, code: u8) -> bool {
        matches!(&self.status, Some(Ok(s)) if s.code() == Some(i32::from(code)))
    }
}

impl Worker {
    /// Starts `campaign-worker` on the batch from program `first`, skipping
    /// those after it already recorded.
    fn start(a: &Args, b: &Batch, done: &[bool], first: usize) -> Result<Worker, String> {
        let exe = std::env::current_exe().unwrap_or_else(|_| "conformance".into());
        let skip_list: Vec<String> = (first..done.len())
            .filter(|&i| done[i])
            .map(|i| i.to_string())
            .collect();
        let mut cmd = Command::new(&exe);
        cmd.arg("campaign-worker")
            .arg(&b.dir)
            .args(["--from", &first.to_string(), "--skip", &skip_list.join(",")])
            .args([
                "--instances",
                &a.instances.to_string(),
                "--launches",
                &a.launches.to_string(),
            ])
            .args(["--seed", &a.seed.to_string()])
            .args(
                a.max_delay
                    .iter()
                    .flat_map(|d| ["--max-delay".to_string(), d.to_string()]),
            )
            .args(
                a.stress_words
                    .iter()
                    .flat_map(|w| ["--stress-words".to_string(), w.to_string()]),
            )
            .env(
                "GRIDCHECK_WATCH",
                format!("{},{}", a.stall, a.timeout.saturating_sub(2).max(1)),
            )
            .env("CUDA_MODULE_LOADING", "EAGER");
        Piped::spawn(cmd, false)
            .map(Worker)
            .map_err(|e| format!("cannot start the worker: {e}"))
    }

    /// Records each program the worker reports, until it ends, falls
    /// silent for `--timeout` seconds (killed) or reports a program that
    /// ends it.
    fn read(
        &mut self,
        cfg: &mut RunCfg,
        b: &Batch,
        done: &mut [bool],
        first: usize,
        sink: &mut dyn FnMut(ProgramRecord),
    ) -> PassEnd {
        let mut end = PassEnd::default();
        let mut reported_any = false;
        loop {
            let limit = cfg.args.timeout + if reported_any { 0 } else { 30 };
            match self.0.lines.recv_timeout(Duration::from_secs(limit)) {
                Ok(l) => {
                    let Some(line) = l
                        .strip_prefix(MARKER)
                        .and_then(|j| serde_json::from_str::<Line>(j).ok())
                    else {
                        continue;
                    };
                    reported_any = true;
                    if line.index >= done.len() || done[line.index] {
                        continue;
                    }
                    if let Outcome::NotRun { reason } = &line.outcome
                        && line.index == first
                    {
                        end.no_module = Some(reason.clone());
                    }
                    done[line.index] = true;
                    // A hang or an error ends the worker: it is killed at
                    // once rather than left to tear down a context beside a
                    // kernel that may never end.
                    let ends = matches!(line.outcome, Outcome::Hang { .. } | Outcome::Error { .. });
                    let r = b.record(line.index, line.outcome);
                    cfg.note(&r);
                    let stop = Some(r.class) == cfg.stop_at;
                    sink(r);
                    if stop || ends {
                        let _ = self.0.child.kill();
                        end.stopped = stop;
                        end.reported_end = ends;
                        return end;
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let _ = self.0.child.kill();
                    end.killed = true;
                    return end;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => return end,
            }
        }
    }
}

/// Records the program in flight when a worker stopped without a word
/// about it: a hang when it was killed for silence, else an error with
/// the end of its standard error. A worker that stops, or is killed, after
/// reporting the program that stopped it leaves nothing in flight.
fn blame_in_flight(
    cfg: &mut RunCfg,
    b: &Batch,
    done: &mut [bool],
    first: usize,
    end: &PassEnd,
    sink: &mut dyn FnMut(ProgramRecord),
) {
    let Some(p) = (first..done.len()).find(|&i| !done[i]) else {
        return;
    };
    let finished = end.reported_end
        || end.exited_with(STOPPED)
        || matches!(&end.status, Some(Ok(s)) if s.success());
    if !end.killed && finished {
        return;
    }
    done[p] = true;
    let tail: Vec<&str> = end.stderr.lines().rev().take(6).collect();
    let outcome = if end.killed {
        Outcome::Hang {
            message: format!("no result in {} s: the worker was killed", cfg.args.timeout),
        }
    } else {
        Outcome::Error {
            message: format!(
                "the worker ended ({}) with the program in flight: {}",
                match &end.status {
                    Some(Ok(s)) => s.to_string(),
                    Some(Err(e)) => e.to_string(),
                    None => "not waited for".into(),
                },
                tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
            ),
        }
    };
    let r = b.record(p, outcome);
    cfg.note(&r);
    sink(r);
}

/// Records every program from `first` on that has no record as not run.
fn not_run_rest(
    b: &Batch,
    done: &mut [bool],
    first: usize,
    reason: &str,
    sink: &mut dyn FnMut(ProgramRecord),
) {
    for (i, d) in done.iter_mut().enumerate().skip(first) {
        if !*d {
            *d = true;
            sink(b.record(
                i,
                Outcome::NotRun {
                    reason: reason.to_string(),
                },
            ));
        }
    }
}

/// The whole campaign (the parent module's docs); `Ok(true)` when nothing
/// was found and every program ran.
pub fn campaign(a: &Args) -> Result<bool, String> {
    let dirs = batches(&a.dir)?;
    std::fs::create_dir_all(&a.out)
        .map_err(|e| format!("cannot create {}: {e}", a.out.display()))?;
    let nvcc = gridcheck_toolchain::find_nvcc(&a.root)?;
    let include = a.root.join(gridcheck_kernelgen::INCLUDE_DIR);
    println!(
        "campaign: {} batches in {}; compiling with {} ({} jobs)",
        dirs.len(),
        a.dir.display(),
        nvcc.path.display(),
        a.jobs
    );
    let (compiled, compile_s) = compile::all(&nvcc, &include, &dirs, a.jobs, a.nvcc_timeout);
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
    let results = a.out.join("campaign.jsonl");
    let mut file = std::fs::File::create(&results)
        .map_err(|e| format!("cannot create {}: {e}", results.display()))?;
    let mut records: Vec<ProgramRecord> = Vec::new();
    let mut cfg = RunCfg {
        args: a,
        deadline: Instant::now() + Duration::from_secs(a.budget),
        hangs: BTreeMap::new(),
        stop_at: None,
    };
    let gpu_start = Instant::now();
    let mut last_print = 0;
    for (d, c) in dirs.iter().zip(&compiled) {
        let b = Batch::read(d)?;
        let mut sink = |r: ProgramRecord| {
            if let Ok(j) = serde_json::to_string(&r) {
                let _ = writeln!(file, "{j}");
                let _ = file.flush();
            }
            records.push(r);
        };
        if let Err(e) = c {
            for i in 0..b.programs.len() {
                sink(b.record(
                    i,
                    Outcome::NotRun {
                        reason: format!(
                            "the batch did not compile: {}",
                            e.lines().next().unwrap_or("")
                        ),
                    },
                ));
            }
            continue;
        }
        if a.dry_run {
            dry_check(&b)?;
            continue;
        }
        run_batch(&mut cfg, &b, &mut sink);
        if records.len() >= last_print + 500 {
            last_print = records.len();
            println!(
                "  {:>6} programs {:>6.1} s  {:?}",
                records.len(),
                gpu_start.elapsed().as_secs_f64(),
                class_counts(&records)
            );
        }
    }
    let gpu_s = gpu_start.elapsed().as_secs_f64();
    if a.dry_run {
        let n: usize = dirs
            .iter()
            .map(|d| read_batch(d).map_or(0, |p| p.len()))
            .sum();
        println!(
            "dry run: {n} programs in {} batches compiled and checked; nothing ran on a GPU",
            dirs.len()
        );
        return Ok(failed == 0);
    }
    super::report::write(a, &records, compile_s, gpu_s)
}

/// A dry run's check of a compiled batch: every program loads, and the
/// cubin holds each program's kernels.
pub(super) fn dry_check(b: &Batch) -> Result<(), String> {
    let cubin = b.dir.join(CUBIN);
    let bytes =
        std::fs::read(&cubin).map_err(|e| format!("cannot read {}: {e}", cubin.display()))?;
    // The ELF string table: every symbol, NUL-terminated.
    let strings: std::collections::HashSet<&[u8]> = bytes.split(|&c| c == 0).collect();
    for (p, t) in b.programs.iter().zip(&b.parsed) {
        let (t, l) = t.as_ref().map_err(Clone::clone)?;
        for k in &l.kernels {
            let sym = gridcheck_kernelgen::kernel_symbol(&t.name, &k.name);
            if !strings.contains(sym.as_bytes()) {
                return Err(format!(
                    "{}: kernel `{sym}` of {} is not in it",
                    cubin.display(),
                    p.name
                ));
            }
        }
    }
    Ok(())
}

pub(super) fn class_counts(records: &[ProgramRecord]) -> BTreeMap<Class, usize> {
    let mut m = BTreeMap::new();
    for r in records {
        *m.entry(r.class).or_default() += 1;
    }
    m
}
