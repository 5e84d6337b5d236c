//! Runs every litmus test of the spec on GPU 0 and prints its histogram,
//! then every runtime test and its outputs:
//! `litmus_smoke <spec dir> <cubin dir> [instances] [launches] [seed]`.
//! A quick check of the runner and the generated kernels on a GPU machine.
//! Environment: `GC_DELAY` (max delay cycles), `GC_STRESS` (stress words),
//! `GC_ONLY` (run only tests whose name contains it), `GC_TEST` (run only
//! the test of that name), `GC_RATES` (append each litmus run's rate to
//! that file, one JSON line a run: `gridcheck_report::rates::RateRecord`,
//! which `conformance report rates` summarises).

use std::path::Path;

use gridcheck_gpu::{Budget, Gpu, LitmusRun, probe};
use gridcheck_report::Tuning;
use gridcheck_spec::{Litmus, RuntimeExpect, RuntimeTest, TestBody, render_state};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: litmus_smoke <spec dir> <cubin dir> [instances] [launches] [seed]");
        std::process::exit(2);
    }
    let num = |i: usize, d: u64| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let budget = Budget {
        instances_per_launch: num(3, 65536) as u32,
        launches: num(4, 4) as u32,
        seed: num(5, 1),
    };
    match probe() {
        Ok(info) => println!("device: {info:?}"),
        Err(why) => {
            println!("no GPU: {why}");
            return;
        }
    }
    let spec = gridcheck_spec::load_dir(Path::new(&args[1]), None).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1)
    });
    let gpu = Gpu::open(0).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1)
    });
    let plain = Tuning {
        max_delay_cycles: 0,
        stress_words: 0,
        stress_iters: 0,
        permute: false,
        stress_lines: false,
        line_burst: 0,
        ..Tuning::default()
    };
    let tuned = tuned();
    let only = std::env::var("GC_ONLY").unwrap_or_default();
    let exact = std::env::var("GC_TEST").ok();
    let chosen = |name: &str| name.contains(&only) && exact.as_deref().is_none_or(|e| e == name);
    for t in &spec.tests {
        let TestBody::Litmus(l) = &t.body else {
            continue;
        };
        if !chosen(&t.name) {
            continue;
        }
        let cubin = Path::new(&args[2]).join(format!("{}.cubin", t.name));
        if !cubin.is_file() {
            println!("== {}: skipped, {} is not built", t.name, cubin.display());
            continue;
        }
        for (label, inc) in [("incantations", &tuned), ("plain", &plain)] {
            println!(
                "== {} [{label}] ({} expected {})",
                t.name, l.condition, l.expect
            );
            match gpu.run_litmus_with(&cubin, &t.name, l, &budget, inc) {
                Ok(run) => print_litmus_run(&t.name, label, l, &run),
                Err(e) => println!("  ERROR: {e}"),
            }
        }
    }
    for t in &spec.tests {
        let TestBody::Runtime(r) = &t.body else {
            continue;
        };
        if !chosen(&t.name) {
            continue;
        }
        if r.arch != gpu.info().sm {
            println!("== {} (runtime): skipped, built for {}", t.name, r.arch);
            continue;
        }
        let cubin = Path::new(&args[2]).join(format!("{}.cubin", t.name));
        println!("== {} (runtime)", t.name);
        let verdict = run_runtime(&gpu, &cubin, r);
        println!("  {}", if verdict { "PASS" } else { "FAIL" });
    }
}

/// The default incantations, with `GC_DELAY` and `GC_STRESS` applied.
fn tuned() -> Tuning {
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u32>().ok());
    let mut tuned = Tuning::default();
    if let Some(d) = env("GC_DELAY") {
        tuned.max_delay_cycles = d;
    }
    if let Some(s) = env("GC_STRESS") {
        tuned.stress_words = s;
    }
    tuned
}

/// Prints a litmus run's histogram, its counts and its `RATE` line.
fn print_litmus_run(name: &str, label: &str, l: &Litmus, run: &LitmusRun) {
    let order = l.observables();
    for (s, n) in &run.histogram {
        let hit = l.condition.holds(s).unwrap_or(false);
        println!(
            "  {n:>9}  {}{}",
            render_state(&order, s),
            if hit { "   <- condition" } else { "" }
        );
    }
    let secs = run.elapsed.as_secs_f64();
    let hits: u64 = run
        .histogram
        .iter()
        .filter(|(s, _)| l.condition.holds(s).unwrap_or(false))
        .map(|(_, n)| n)
        .sum();
    println!(
        "  instances {} failures {} first error {:?} elapsed {secs:.3}s",
        run.instances, run.launch_failures, run.first_launch_error
    );
    // One line per run for the rate table: test, mode,
    // instances, whole run (s), instances/s over the whole
    // run, condition hits, hits/s, launches only (s),
    // instances/s over the launches only.
    let launch_secs = run.launch_elapsed.as_secs_f64();
    if let Ok(file) = std::env::var("GC_RATES") {
        let rate = gridcheck_report::rates::RateRecord {
            test: name.to_string(),
            mode: label.to_string(),
            instances: run.instances,
            elapsed_s: secs,
            launch_s: launch_secs,
            hits,
        };
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&file)
            .and_then(|mut f| gridcheck_report::append_json_line(&mut f, &rate));
        if let Err(e) = written {
            eprintln!("cannot append the rate to {file}: {e}");
        }
    }
    println!(
        "RATE\t{}\t{label}\t{}\t{secs:.4}\t{:.0}\t{hits}\t{:.0}\t{launch_secs:.4}\t{:.0}",
        name,
        run.instances,
        run.instances as f64 / secs,
        hits as f64 / secs,
        run.instances as f64 / launch_secs
    );
}

/// Runs a runtime test and prints its outputs against the expectation:
/// whether it passed.
fn run_runtime(gpu: &Gpu, cubin: &Path, r: &RuntimeTest) -> bool {
    match (gpu.run_runtime(cubin, r), &r.expect) {
        (Ok(run), RuntimeExpect::Values(checks)) => {
            for (name, v) in r.outputs.iter().zip(&run.outputs) {
                let check = checks.iter().find(|(n, _)| n == name).map(|(_, c)| c);
                let mark = match check {
                    Some(c) if c.holds(*v) => format!("   ok ({})", c.text),
                    Some(c) => format!("   EXPECTED {}", c.text),
                    None => String::new(),
                };
                println!("  {name} = {v}{mark}");
            }
            println!("  elapsed {:.6}s", run.elapsed.as_secs_f64());
            checks.iter().all(|(n, c)| {
                r.outputs
                    .iter()
                    .zip(&run.outputs)
                    .any(|(o, v)| o == n && c.holds(*v))
            })
        }
        (Ok(run), RuntimeExpect::LoadError { name, .. }) => {
            println!(
                "  loaded and ran ({:?}), expected {name} at load",
                run.outputs
            );
            false
        }
        (
            Err(gridcheck_gpu::RuntimeFailure::Load { code, message }),
            RuntimeExpect::LoadError { name, value },
        ) => {
            println!("  load failed: {message}; expected {name} ({value})");
            code == *value
        }
        (Err(e), _) => {
            println!("  ERROR: {e}");
            false
        }
    }
}
