//! `gridcheck-bench`: runs the benchmarks on a GPU machine without Rust
//! (bundled by `cargo xtask bench --bundle`), and compares results files.
//!
//! ```text
//! gridcheck-bench run --cubins DIR [--out FILE] [--quick] [--nvcc VERSION]
//!                     [--command TEXT] [--compare BASELINE] [--tolerance REL] [--floor-us US] [--floor-fraction F]
//! gridcheck-bench compare NEW.json BASELINE.json [--tolerance REL] [--floor-us US] [--floor-fraction F]
//! gridcheck-bench check [PATH...] [--list FILE] [--sample N] [--seed S] [--jobs N] [--cache DIR]
//!                       [--nvdisasm PATH] [--corpus N] [--reference]
//! ```
//!
//! Exit status: 0 all figures measured and verified (and none regressed);
//! 1 a figure failed its check or could not run, or regressed; 2 bad usage
//! or a bad input file; 3 no CUDA driver or device.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use gridcheck_bench::baseline::{self, Machine, Results};
use gridcheck_bench::check as speed;
use gridcheck_bench::compare::{self, Tolerance};
use gridcheck_bench::gpu::{self, Plan};

const USAGE: &str = "usage:
  gridcheck-bench run --cubins DIR [--out FILE] [--quick] [--nvcc VERSION] [--command TEXT]
                      [--compare BASELINE] [--tolerance REL] [--floor-us US] [--floor-fraction F]
  gridcheck-bench compare NEW.json BASELINE.json [--tolerance REL] [--floor-us US] [--floor-fraction F]
  gridcheck-bench check [PATH...] [--list FILE] [--sample N] [--seed S] [--jobs N] [--cache DIR]
                        [--nvdisasm PATH] [--corpus N] [--reference]
      the machine-code check's cubins a second (no GPU): cold (an empty cache, or DIR emptied
      first), then cached; --sample: N files by a seeded shuffle (seed 1); --corpus: the minutes N
      cubins would take; --reference: also each cubin's file whole with every kernel, whose
      kernels must come out the same (exit 1 otherwise)
A figure regressed when its median moved beyond the baseline's [p10, p90] widened by
max(REL * baseline median, US for figures in us, F for fractions), in the worse direction
(defaults 0.15, 0.25, 0.05).";

enum Fail {
    Usage(String),
    NoDevice(String),
    Failed(String),
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let r = match args.first().map(String::as_str) {
        Some("run") => run(&args[1..]),
        Some("compare") => compare_cmd(&args[1..]),
        Some("check") => check_cmd(&args[1..]),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            Ok(())
        }
        _ => Err(Fail::Usage(USAGE.into())),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(Fail::Failed(e)) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
        Err(Fail::Usage(e)) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
        Err(Fail::NoDevice(e)) => {
            eprintln!("error: {e}; the benchmarks need a CUDA GPU");
            ExitCode::from(3)
        }
    }
}

/// `--name value` options and bare flags.
struct Opts {
    values: Vec<(String, String)>,
    flags: Vec<String>,
    positional: Vec<String>,
}

fn parse(args: &[String], with_value: &[&str], flags: &[&str]) -> Result<Opts, Fail> {
    let mut o = Opts {
        values: vec![],
        flags: vec![],
        positional: vec![],
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if with_value.contains(&a.as_str()) {
            let v = it
                .next()
                .ok_or_else(|| Fail::Usage(format!("{a} needs a value\n{USAGE}")))?;
            o.values.push((a.clone(), v.clone()));
        } else if flags.contains(&a.as_str()) {
            o.flags.push(a.clone());
        } else if a.starts_with("--") {
            return Err(Fail::Usage(format!("unknown option {a}\n{USAGE}")));
        } else {
            o.positional.push(a.clone());
        }
    }
    Ok(o)
}

impl Opts {
    fn get(&self, name: &str) -> Option<&str> {
        self.values
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn tolerance(&self) -> Result<Tolerance, Fail> {
        let mut t = Tolerance::default();
        if let Some(v) = self.get("--tolerance") {
            t.relative = Tolerance::parse_value("--tolerance", v).map_err(Fail::Usage)?;
        }
        if let Some(v) = self.get("--floor-us") {
            t.floor_us = Tolerance::parse_value("--floor-us", v).map_err(Fail::Usage)?;
        }
        if let Some(v) = self.get("--floor-fraction") {
            t.floor_fraction =
                Tolerance::parse_value("--floor-fraction", v).map_err(Fail::Usage)?;
        }
        Ok(t)
    }
}

fn compare_cmd(args: &[String]) -> Result<(), Fail> {
    let o = parse(
        args,
        &["--tolerance", "--floor-us", "--floor-fraction"],
        &[],
    )?;
    let [new, base] = o.positional.as_slice() else {
        return Err(Fail::Usage(USAGE.into()));
    };
    let tol = o.tolerance()?;
    let new = baseline::load(&PathBuf::from(new)).map_err(Fail::Usage)?;
    let base = baseline::load(&PathBuf::from(base)).map_err(Fail::Usage)?;
    report_compare(&base, &new, &tol)
}

fn number<T: std::str::FromStr>(o: &Opts, name: &str, default: T) -> Result<T, Fail> {
    o.get(name).map_or(Ok(default), |v| {
        v.parse()
            .map_err(|_| Fail::Usage(format!("{name} needs a number, not `{v}`")))
    })
}

fn check_cmd(args: &[String]) -> Result<(), Fail> {
    let o = parse(
        args,
        &[
            "--list",
            "--sample",
            "--seed",
            "--jobs",
            "--cache",
            "--nvdisasm",
            "--corpus",
        ],
        &["--reference"],
    )?;
    let mut files = speed::files(&o.positional, o.get("--list").map(std::path::Path::new))
        .map_err(Fail::Usage)?;
    if let Some(n) = o.get("--sample") {
        let n = n
            .parse()
            .map_err(|_| Fail::Usage(format!("--sample needs a number, not `{n}`")))?;
        files = speed::sample(files, n, number(&o, "--seed", 1)?);
    }
    if files.is_empty() {
        return Err(Fail::Usage(format!("check: no files to check\n{USAGE}")));
    }
    let jobs = number(
        &o,
        "--jobs",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
    )?;
    let corpus = o
        .get("--corpus")
        .map(|_| number(&o, "--corpus", 0))
        .transpose()?;
    let cache = o
        .get("--cache")
        .map_or_else(speed::scratch_cache, PathBuf::from);
    let _ = std::fs::remove_dir_all(&cache);
    let root = std::env::current_dir().unwrap_or_default();
    let mut opts = gridcheck_check::Options {
        jobs,
        ..Default::default()
    };
    opts.tools.nvdisasm = o
        .get("--nvdisasm")
        .map(PathBuf::from)
        .or_else(|| gridcheck_check::cli::find_tools(&root).0);
    opts.tools.tmp = std::env::temp_dir();
    opts.tools.cache = Some(cache.clone());
    eprintln!(
        "check: {} files, {jobs} jobs, cache {}",
        files.len(),
        cache.display()
    );
    let (cold, fast) = speed::timed("cold", &files, &opts);
    println!("{}", cold.row(corpus, jobs));
    let (warm, again) = speed::timed("cached", &files, &opts);
    println!("{}", warm.row(corpus, jobs));
    if o.get("--cache").is_none() {
        let _ = std::fs::remove_dir_all(&cache);
    }
    let errors: usize = fast.files.iter().map(|f| f.errors.len()).sum();
    let mut bad = Vec::new();
    if speed::kernels_json(&fast) != speed::kernels_json(&again) {
        bad.push("the cached run's kernels differ from the cold run's".to_string());
    }
    if o.flags.iter().any(|f| f == "--reference") {
        opts.tools.cache = None;
        (opts.tools.pack, opts.tools.all_kernels) = (1, true);
        let (t, reference) = speed::timed("reference", &files, &opts);
        println!("{}", t.row(corpus, jobs));
        let (a, b) = (speed::kernels_json(&fast), speed::kernels_json(&reference));
        let differ: Vec<String> = a
            .iter()
            .zip(&b)
            .zip(&fast.files)
            .filter(|((x, y), _)| x != y)
            .map(|(_, f)| f.path.clone())
            .collect();
        println!(
            "kernels as the reference gives them: {} of {} files the same",
            a.len() - differ.len(),
            a.len()
        );
        bad.extend(
            differ
                .iter()
                .map(|p| format!("differs from the reference: {p}")),
        );
        let (passed, pdl, dropped) = speed::prefilter_counts(&fast, &reference);
        println!(
            "prefilter: {passed} kernels disassembled, {pdl} with PDL instructions, {} PDL kernels left out",
            dropped.len()
        );
        bad.extend(
            dropped
                .iter()
                .map(|k| format!("the prefilter left out PDL kernel {k}")),
        );
    }
    println!("errors: {errors}");
    if bad.is_empty() {
        Ok(())
    } else {
        Err(Fail::Failed(bad.join("\n")))
    }
}

fn report_compare(base: &Results, new: &Results, tol: &Tolerance) -> Result<(), Fail> {
    if base.machine.slug != new.machine.slug {
        println!(
            "note: comparing {} against a baseline of {}",
            new.machine.gpu, base.machine.gpu
        );
    }
    let rows = compare::compare(base, new, tol);
    print!("{}", compare::table(&rows, tol));
    let bad: Vec<&str> = rows
        .iter()
        .filter(|r| r.verdict.fails())
        .map(|r| r.id.as_str())
        .collect();
    if bad.is_empty() {
        Ok(())
    } else {
        Err(Fail::Failed(format!(
            "{} figure(s) regressed or missing: {}",
            bad.len(),
            bad.join(", ")
        )))
    }
}

fn figure_table(r: &Results) -> String {
    let w = r.figures.iter().map(|f| f.id.len()).max().unwrap_or(6);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<w$}  {:>5}  {:>10}  {:>10}  {:>10}  {:>10}  {:>10}  {:>7}",
        "figure", "unit", "median", "p10", "p90", "min", "max", "spread"
    );
    for f in &r.figures {
        let spread = if f.median != 0.0 {
            format!("{:.1}%", 100.0 * (f.p90 - f.p10) / f.median.abs())
        } else {
            "-".into()
        };
        let _ = writeln!(
            out,
            "{:<w$}  {:>5}  {:>10.3}  {:>10.3}  {:>10.3}  {:>10.3}  {:>10.3}  {:>7}",
            f.id, f.unit, f.median, f.p10, f.p90, f.min, f.max, spread
        );
    }
    out
}

fn run(args: &[String]) -> Result<(), Fail> {
    let o = parse(
        args,
        &[
            "--cubins",
            "--out",
            "--nvcc",
            "--command",
            "--compare",
            "--tolerance",
            "--floor-us",
            "--floor-fraction",
        ],
        &["--quick"],
    )?;
    if !o.positional.is_empty() {
        return Err(Fail::Usage(format!(
            "unexpected argument {}\n{USAGE}",
            o.positional[0]
        )));
    }
    let cubins = PathBuf::from(
        o.get("--cubins")
            .ok_or_else(|| Fail::Usage(format!("run needs --cubins DIR\n{USAGE}")))?,
    );
    let tol = o.tolerance()?;
    // Read the baseline first: a bad file is reported before the GPU time.
    let base = match o.get("--compare") {
        Some(p) => Some(baseline::load(&PathBuf::from(p)).map_err(Fail::Usage)?),
        None => None,
    };
    let quick = o.flags.iter().any(|f| f == "--quick");
    let plan = if quick { Plan::quick() } else { Plan::full() };
    let nvcc = match o.get("--nvcc") {
        Some(v) => v.to_string(),
        None => std::fs::read_to_string(cubins.join("nvcc-version.txt"))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unknown".into()),
    };
    let bench = gpu::open(&cubins, plan).map_err(Fail::NoDevice)?;
    let command = o.get("--command").map(str::to_string).unwrap_or_else(|| {
        std::iter::once("gridcheck-bench".to_string())
            .chain(std::iter::once("run".to_string()))
            .chain(args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ")
    });
    eprintln!(
        "bench: {} ({} SMs, L2 {} MiB), repeats: {}+{} (launch, PDL), {}+{} (PMPP)",
        bench.gpu,
        bench.sms,
        bench.l2_bytes >> 20,
        plan.micro_warmup,
        plan.micro_repeats,
        plan.warmup,
        plan.repeats
    );
    let outcome = gpu::run_all(&bench);
    let secs = gridcheck_report::now_secs();
    let mut notes = vec![
        format!(
            "{} SMs, L2 {} MiB; warm-up and timed repeats per figure: launch and PDL {} + {}, PMPP {} + {}{}",
            bench.sms,
            bench.l2_bytes >> 20,
            plan.micro_warmup,
            plan.micro_repeats,
            plan.warmup,
            plan.repeats,
            if quick { " (--quick)" } else { "" }
        ),
        "every timed piece of work is held behind a gate kernel until all of it is enqueued, so the events time the GPU, not the host's submission; the clocks are warmed up by half a second of spinning on every SM first".into(),
        "times from CUDA events around the timed work, except launch.host.round-trip and launch.host.submit (host clock) and launch.device.pending.* (the launching thread's %globaltimer); savings and per-launch costs are paired differences within a repeat".into(),
    ];
    notes.extend(outcome.notes.iter().cloned());
    notes.extend(outcome.failures.iter().map(|f| format!("FAILED: {f}")));
    let results = Results {
        schema: baseline::SCHEMA,
        machine: Machine {
            gpu: bench.gpu.clone(),
            slug: baseline::slug(&bench.gpu),
            driver: gpu::driver_version(),
            nvcc,
            date: gridcheck_report::utc_date(secs),
            command,
        },
        figures: outcome.figures,
        notes,
    };
    print!("{}", figure_table(&results));
    if let Some(out) = o.get("--out") {
        baseline::save(&PathBuf::from(out), &results).map_err(Fail::Failed)?;
        println!("results: {out}");
    }
    if !outcome.failures.is_empty() {
        return Err(Fail::Failed(format!(
            "{} group(s) failed:\n  {}",
            outcome.failures.len(),
            outcome.failures.join("\n  ")
        )));
    }
    match base {
        Some(b) => report_compare(&b, &results, &tol),
        None => Ok(()),
    }
}
