//! A campaign's driver: it runs each batch in a worker
//! (`batch_worker.rs`) under a deadline,
//! restarts it after the program in flight when it stops, appends one line
//! a program to `campaign.jsonl`, and ends with the findings.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use gridcheck_spec::{Litmus, Test};

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
pub(super) fn run_batch(cfg: &mut RunCfg, b: &Batch, sink: &mut dyn FnMut(ProgramRecord)) {
    let a = cfg.args;
    let n = b.programs.len();
    let mut done = vec![false; n];
    let mut from = 0;
    let exe = std::env::current_exe().unwrap_or_else(|_| "conformance".into());
    while from < n {
        if Instant::now() >= cfg.deadline {
            break;
        }
        for (i, d) in done.iter_mut().enumerate().skip(from) {
            let capped = b.parsed[i].as_ref().ok().and_then(|(_, l)| cfg.capped(l));
            if let Some(why) = capped.filter(|_| !*d) {
                *d = true;
                sink(b.record(i, Outcome::NotRun { reason: why }));
            }
        }
        let Some(first) = (from..n).find(|&i| !done[i]) else {
            break;
        };
        let skip_list: Vec<String> = (first..n)
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
            .env(
                "GRIDCHECK_WATCH",
                format!("{},{}", a.stall, a.timeout.saturating_sub(2).max(1)),
            )
            .env("CUDA_MODULE_LOADING", "EAGER")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                not_run_rest(
                    b,
                    &mut done,
                    first,
                    &format!("cannot start the worker: {e}"),
                    sink,
                );
                break;
            }
        };
        let (tx, rx) = mpsc::channel::<String>();
        let out = child.stdout.take();
        let reader = std::thread::spawn(move || {
            if let Some(o) = out {
                for l in BufReader::new(o).lines().map_while(Result::ok) {
                    if tx.send(l).is_err() {
                        break;
                    }
                }
            }
        });
        let mut err = child.stderr.take();
        let err_reader = std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(e) = err.as_mut() {
                let _ = e.read_to_string(&mut s);
            }
            s
        });
        let mut reported_any = false;
        let mut killed = false;
        let mut stopped = false;
        let mut reported_end = false;
        let mut no_module = None;
        loop {
            let limit = a.timeout + if reported_any { 0 } else { 30 };
            match rx.recv_timeout(Duration::from_secs(limit)) {
                Ok(l) => {
                    let Some(line) = l
                        .strip_prefix(MARKER)
                        .and_then(|j| serde_json::from_str::<Line>(j).ok())
                    else {
                        continue;
                    };
                    reported_any = true;
                    if line.index >= n || done[line.index] {
                        continue;
                    }
                    if let Outcome::NotRun { reason } = &line.outcome
                        && line.index == first
                    {
                        no_module = Some(reason.clone());
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
                        let _ = child.kill();
                        stopped = stop;
                        reported_end = ends;
                        break;
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let _ = child.kill();
                    killed = true;
                    break;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        let status = child.wait();
        let _ = reader.join();
        let stderr = err_reader.join().unwrap_or_default();
        if stopped {
            not_run_rest(
                b,
                &mut done,
                first,
                "not run: an earlier program ended the batch",
                sink,
            );
            break;
        }
        if let Some(reason) =
            no_module.filter(|_| matches!(&status, Ok(s) if s.code() == Some(i32::from(NO_MODULE))))
        {
            not_run_rest(b, &mut done, first, &reason, sink);
            break;
        }
        // The program in flight when the worker stopped without a word.
        if let Some(p) = (first..n).find(|&i| !done[i]) {
            // A worker that stops, or is killed, after reporting the program
            // that stopped it leaves nothing in flight.
            let finished = reported_end
                || matches!(&status, Ok(s) if s.success() || s.code() == Some(i32::from(STOPPED)));
            if killed || !finished {
                done[p] = true;
                let tail: Vec<&str> = stderr.lines().rev().take(6).collect();
                let outcome = if killed {
                    Outcome::Hang {
                        message: format!("no result in {} s: the worker was killed", a.timeout),
                    }
                } else {
                    Outcome::Error {
                        message: format!(
                            "the worker ended ({}) with the program in flight: {}",
                            status
                                .map(|s| s.to_string())
                                .unwrap_or_else(|e| e.to_string()),
                            tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
                        ),
                    }
                };
                let r = b.record(p, outcome);
                cfg.note(&r);
                sink(r);
            }
        }
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
