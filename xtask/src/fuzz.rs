//! `cargo xtask fuzz model|gpu`: random litmus programs against the two
//! oracles, and on a GPU against the axiomatic model's states.
//!
//! - `fuzz model [--count N] [--seed S] [--threads T] [--jobs J]`: the
//!   differential test of `gridcheck_litgen::differential` (loom against the
//!   axiomatic model) on N programs drawn from seed S, from a release build.
//!   Prints the classes (same states, the pinned limits, conflicts), the
//!   programs per minute, what the programs covered, and every conflict
//!   shrunk to a ready-to-paste YAML test with the command that reproduces
//!   it. Fails on a conflict or a program the loader rejects.
//! - `fuzz gpu [--count N] [--seed S] [--out DIR]`: writes N random programs
//!   (no CDP1, no device-runtime limits: what sm_90 runs) as a spec
//!   (`DIR/spec/fuzz.yaml`, each test's `expect` the axiomatic model's
//!   verdict of its condition) and their generated kernels
//!   (`DIR/generated/*.cu`), for `conformance/fuzz-gpu.sh` on the GPU
//!   machine: it compiles them there with its nvcc and runs the harness's
//!   model and GPU tiers on them, each trial in its worker with the harness's
//!   timeouts. Any observed state outside the model's set is a GPU trial
//!   marked *unmodeled* (or a fail when the condition was forbidden).

use std::fmt::Write as _;
use std::path::PathBuf;

use gridcheck_litgen::{GenConfig, differential};
use gridcheck_spec::render::litmus_test_yaml;
use proptest::strategy::{Strategy, ValueTree};

use crate::{Result, root};

const USAGE: &str = "usage: cargo xtask fuzz model [--count N] [--seed S] [--threads T] [--jobs J]
       cargo xtask fuzz enumerate [--ops N] [--jobs J]
       cargo xtask fuzz gpu [--count N] [--seed S] [--out DIR]";

struct Args {
    count: u64,
    seed: u64,
    threads: usize,
    jobs: usize,
    out: Option<PathBuf>,
    here: bool,
}

fn parse(args: &[String], count: u64) -> Result<Args> {
    let mut a = Args {
        count,
        seed: 1,
        threads: GenConfig::default().max_threads,
        jobs: std::thread::available_parallelism().map_or(2, |n| n.get()),
        out: None,
        here: false,
    };
    let mut it = args.iter();
    let num = |v: Option<&String>, f: &str| -> Result<u64> {
        v.ok_or_else(|| format!("{f} needs a value\n{USAGE}"))?
            .parse()
            .map_err(|_| format!("{f} takes a number\n{USAGE}"))
    };
    while let Some(x) = it.next() {
        match x.as_str() {
            "--count" => a.count = num(it.next(), "--count")?,
            "--seed" => a.seed = num(it.next(), "--seed")?,
            "--threads" => a.threads = num(it.next(), "--threads")?.clamp(1, 4) as usize,
            "--jobs" => a.jobs = num(it.next(), "--jobs")?.max(1) as usize,
            "--out" => {
                a.out = Some(
                    it.next()
                        .ok_or_else(|| format!("--out needs a directory\n{USAGE}"))?
                        .into(),
                )
            }
            "--here" => a.here = true,
            _ => return Err(format!("unknown argument `{x}`\n{USAGE}")),
        }
    }
    Ok(a)
}

pub fn run(args: &[String]) -> Result<()> {
    match args.first().map(String::as_str) {
        Some("model") => model(&args[1..]),
        Some("enumerate") => enumerate(&args[1..]),
        Some("gpu") => gpu(&args[1..]),
        _ => Err(USAGE.into()),
    }
}

fn model(args: &[String]) -> Result<()> {
    let a = parse(args, 1_000)?;
    if !a.here {
        let mut rest: Vec<String> = vec!["fuzz".into(), "model".into()];
        rest.extend(args.iter().cloned());
        return crate::rerun_release(&rest);
    }
    let cfg = GenConfig {
        max_threads: a.threads,
        ..GenConfig::default()
    };
    // loom's panics (a deadlock, a spin over its bound) are caught and
    // classified; the default hook would print each one.
    std::panic::set_hook(Box::new(|_| {}));
    println!(
        "fuzz model: {} programs from seed {}, at most {} threads, {} jobs",
        a.count, a.seed, a.threads, a.jobs
    );
    let mut last = 0;
    let r = differential::run(a.count, a.seed, cfg, a.jobs, |r| {
        if r.programs >= last + 256 || r.programs == a.count {
            last = r.programs;
            println!(
                "  {:>6} programs {:>7.1} s  {:?}",
                r.programs,
                r.elapsed.as_secs_f64(),
                r.classes
            );
        }
    });
    let _ = std::panic::take_hook();
    let (seed, threads) = (a.seed, a.threads);
    print_report(&r, &|f| {
        format!(
            "cargo xtask fuzz model --count {} --seed {seed} --threads {threads}",
            f.index + 1
        )
    })
}

/// `fuzz enumerate [--ops N] [--jobs J]`: both oracles on every program of
/// the exhaustive enumeration (`gridcheck_litgen::enumerate`) of at most N
/// operations (default 3), from a release build.
fn enumerate(args: &[String]) -> Result<()> {
    let mut ops = 3usize;
    let mut jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut here = false;
    let mut it = args.iter();
    while let Some(x) = it.next() {
        let mut num = |f: &str| -> Result<usize> {
            it.next()
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| format!("{f} takes a number\n{USAGE}"))
        };
        match x.as_str() {
            "--ops" => ops = num("--ops")?.min(4),
            "--jobs" => jobs = num("--jobs")?.max(1),
            "--here" => here = true,
            _ => return Err(format!("unknown argument `{x}`\n{USAGE}")),
        }
    }
    if !here {
        let mut rest: Vec<String> = vec!["fuzz".into(), "enumerate".into()];
        rest.extend(args.iter().cloned());
        return crate::rerun_release(&rest);
    }
    let programs = gridcheck_litgen::enumerate::programs(ops);
    println!(
        "fuzz enumerate: {} programs of at most {ops} operations over two threads in two kernels, {jobs} jobs",
        programs.len()
    );
    std::panic::set_hook(Box::new(|_| {}));
    let r = differential::run_list(&programs, &format!("enum{ops}"), jobs);
    let _ = std::panic::take_hook();
    print_report(&r, &|f| {
        format!(
            "cargo xtask fuzz enumerate --ops {ops} (program {})",
            f.index
        )
    })
}

/// Prints a differential run's classes, coverage and conflicts (each with
/// `reproduce`'s command); an error if the oracles conflicted or the loader
/// rejected a program.
fn print_report(
    r: &differential::Report,
    reproduce: &dyn Fn(&differential::Finding) -> String,
) -> Result<()> {
    let minutes = r.elapsed.as_secs_f64() / 60.0;
    println!(
        "\n{} programs in {:.1} s: {:.0} programs per minute",
        r.programs,
        r.elapsed.as_secs_f64(),
        r.programs as f64 / minutes.max(1e-9)
    );
    for (k, n) in &r.classes {
        println!("  {k:<20} {n}");
    }
    for (k, n) in &r.both_failed {
        println!("  both failed: {k} ({n})");
    }
    println!(
        "coverage: {}",
        r.coverage
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for f in &r.conflicts {
        println!(
            "\nconflict, program {} (reproduce: {}):\n{}\n{}",
            f.index,
            reproduce(f),
            f.detail,
            f.yaml
        );
    }
    if !r.generator_errors.is_empty() {
        return Err(format!(
            "{} generated programs the loader rejects (a generator bug):\n{}",
            r.generator_errors.len(),
            r.generator_errors.join("\n")
        ));
    }
    if r.conflicts.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} unexplained disagreement(s) between the oracles",
            r.conflicts.len()
        ))
    }
}

fn gpu(args: &[String]) -> Result<()> {
    let a = parse(args, 500)?;
    let root = root();
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| root.join(".gpu-bundle/fuzz"));
    let cfg = GenConfig {
        max_threads: a.threads,
        cdp1: false,
        limits: false,
        ..GenConfig::default()
    };
    let strat = gridcheck_litgen::strategy(cfg);
    let mut rng = differential::runner(a.seed);
    let mut yaml = String::from(
        "# Random programs from `cargo xtask fuzz gpu`; each test's expectation is the\n\
         # axiomatic model's verdict of its condition. Generated, not part of the spec.\nrules:\n",
    );
    let mut tests = String::from("tests:\n");
    let mut written = 0;
    for i in 0..a.count {
        let p = strat
            .new_tree(&mut rng)
            .map_err(|e| format!("the generator failed: {e}"))?
            .current();
        let mut l = p.litmus()?;
        let name = format!("fuzz-{}-{i}", a.seed);
        let Ok(o) = gridcheck_axiom::check(&l) else {
            continue;
        };
        l.expect = o.verdict;
        let profile = p.profile();
        let _ = writeln!(
            yaml,
            "  - id: {profile}.fuzz.{name}\n    source: {{ seed: generated.txt, section: \"1 Generated\" }}\n    \
             quote: generated\n    profile: {profile}\n    tests: [{name}]"
        );
        tests += &litmus_test_yaml(&name, &format!("random program {i} of seed {}", a.seed), &l);
        written += 1;
    }
    let spec_dir = out.join("spec");
    let gen_dir = out.join("generated");
    for d in [&spec_dir, &gen_dir] {
        if d.exists() {
            std::fs::remove_dir_all(d).map_err(|e| format!("cannot clear {}: {e}", d.display()))?;
        }
        std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
    }
    let spec_file = spec_dir.join("fuzz.yaml");
    std::fs::write(&spec_file, yaml + &tests)
        .map_err(|e| format!("cannot write {}: {e}", spec_file.display()))?;
    let spec = gridcheck_spec::load_dir(&spec_dir, None).map_err(|e| e.to_string())?;
    for (file, text) in gridcheck_kernelgen::generate_all(&spec) {
        let path = gen_dir.join(&file);
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    println!(
        "{written} random programs (seed {}) in {}: the spec, and their kernels in {}. On the GPU \
         machine, with the harness bundle: bash conformance/fuzz-gpu.sh {}",
        a.seed,
        spec_file.display(),
        gen_dir.display(),
        out.strip_prefix(&root).unwrap_or(&out).display()
    );
    Ok(())
}
