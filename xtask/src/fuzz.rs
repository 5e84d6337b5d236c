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
//! - `fuzz gpu [--count N] [--seed S] [--batch B] [--out DIR]`: writes N
//!   random programs (no CDP1, no device-runtime limits: what sm_90 runs),
//!   from a release build, in batches of B (default 200) under
//!   `DIR/batches/bNNNN/` (default DIR `.gpu-bundle/fuzz`): `programs.jsonl`
//!   (each program's spec YAML, its `expect` the axiomatic model's verdict,
//!   and the model's final states) and `batch.cu` (all of the batch's
//!   kernels, one namespace a program), for `gridcheck-campaign DIR`
//!   (`conformance/fuzz-gpu.sh`, `lab/sessions/campaign.toml`) on the GPU
//!   machine, which compiles each batch once and runs it in worker
//!   processes (`crates/campaign`). Prints how many programs embed each
//!   known hang (the hang facts' shapes, `gridcheck_campaign::KnownFacts`),
//!   and what operations the programs put in which kinds of kernel. The
//!   asynchronous proxy's operations (bulk copies, mbarriers,
//!   `fence.proxy.async`) are drawn only with `--async-proxy`, so that a
//!   seed draws the programs it drew before they existed; `fuzz model`
//!   always draws them.

use std::path::PathBuf;

use gridcheck_campaign::{self as campaign, CampaignProgram, KnownFacts};
use gridcheck_litgen::{GenConfig, differential};
use gridcheck_spec::render::litmus_spec_yaml;
use proptest::strategy::{Strategy, ValueTree};

use crate::{Result, root};

const USAGE: &str = "usage: cargo xtask fuzz model [--count N] [--seed S] [--threads T] [--jobs J]
       cargo xtask fuzz enumerate [--ops N] [--jobs J]
       cargo xtask fuzz gpu [--count N] [--seed S] [--batch B] [--enumerate N] [--async-proxy] [--out DIR]";

struct Args {
    count: u64,
    seed: u64,
    threads: usize,
    jobs: usize,
    out: Option<PathBuf>,
    batch: usize,
    /// `fuzz gpu --enumerate N`: the exhaustive enumeration of programs of
    /// at most N operations too (`gridcheck_litgen::enumerate`).
    enumerate: usize,
    /// `fuzz gpu --async-proxy`: draw the asynchronous proxy's operations.
    async_proxy: bool,
    here: bool,
}

fn parse(args: &[String], count: u64) -> Result<Args> {
    let mut a = Args {
        count,
        seed: 1,
        threads: GenConfig::default().max_threads,
        jobs: std::thread::available_parallelism().map_or(2, |n| n.get()),
        out: None,
        batch: 200,
        enumerate: 0,
        async_proxy: false,
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
            "--batch" => a.batch = num(it.next(), "--batch")?.max(1) as usize,
            "--enumerate" => a.enumerate = num(it.next(), "--enumerate")?.min(4) as usize,
            "--out" => {
                a.out = Some(
                    it.next()
                        .ok_or_else(|| format!("--out needs a directory\n{USAGE}"))?
                        .into(),
                )
            }
            "--async-proxy" => a.async_proxy = true,
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
    if !a.here {
        let mut rest: Vec<String> = vec!["fuzz".into(), "gpu".into()];
        rest.extend(args.iter().cloned());
        return crate::rerun_release(&rest);
    }
    let root = root();
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| root.join(".gpu-bundle/fuzz"));
    // No loom on this side: four threads and nine operations by default,
    // and events three times as often as `fuzz model` draws them (as the
    // test `gpu_coverage` of crates/litgen draws them).
    let threads_given = args.iter().any(|x| x == "--threads");
    let cfg = GenConfig {
        max_threads: if threads_given { a.threads } else { 4 },
        max_total_ops: 9,
        cdp1: false,
        limits: false,
        event_weight: 3,
        async_weight: u32::from(a.async_proxy),
        // No loom here: more bulk copies than it explores.
        max_agents: 8,
        ..GenConfig::default()
    };
    let strat = gridcheck_litgen::strategy(cfg);
    let mut rng = differential::runner(a.seed);
    let batches = out.join(campaign::BATCHES);
    if batches.exists() {
        std::fs::remove_dir_all(&batches)
            .map_err(|e| format!("cannot clear {}: {e}", batches.display()))?;
    }
    let mut w = Batches {
        out: &out,
        size: a.batch,
        batch: Vec::new(),
        written: 0,
        count: 0,
    };
    let mut skipped = 0usize;
    let known = KnownFacts::load(&root)?;
    let mut hangs: std::collections::BTreeMap<&str, usize> = Default::default();
    let mut kinds = Coverage::default();
    for i in 0..a.count {
        let p = strat
            .new_tree(&mut rng)
            .map_err(|e| format!("the generator failed: {e}"))?
            .current();
        let mut l = p.litmus()?;
        let name = format!("fuzz-{}-{i}", a.seed);
        let Ok(o) = gridcheck_axiom::check(&l) else {
            skipped += 1;
            continue;
        };
        l.expect = o.verdict;
        if let Some(h) = known.matching(&l) {
            *hangs.entry(h.test.as_str()).or_default() += 1;
        }
        kinds.add(&l);
        w.push(CampaignProgram {
            yaml: litmus_spec_yaml(p.profile(), &name, &l),
            name,
            states: o.states.into_iter().collect(),
            oracle: "axiom".into(),
        })?;
    }
    let random = w.written;
    // The exhaustive enumeration: both oracles decide each program (they
    // must agree: `cargo xtask fuzz enumerate` is the differential test).
    let programs = gridcheck_litgen::enumerate::programs(a.enumerate);
    for (i, p) in programs.iter().enumerate().filter(|_| a.enumerate > 0) {
        let mut l = p.litmus()?;
        let name = format!("enum{}-{i}", a.enumerate);
        let c = match gridcheck_oracle::cross_check_with(&l, &differential::loom_options()) {
            Ok(c) if !c.is_conflict() => c,
            Ok(c) => return Err(format!("{name}: the oracles conflict: {}", c.agreement)),
            Err(_) => {
                skipped += 1;
                continue;
            }
        };
        l.expect = c.verdict;
        kinds.add(&l);
        w.push(CampaignProgram {
            yaml: litmus_spec_yaml(p.profile(), &name, &l),
            name,
            states: c.states.into_iter().collect(),
            oracle: c.decided_by.as_str().into(),
        })?;
    }
    w.finish()?;
    let (written, nb) = (w.written, w.count);
    println!(
        "{random} random programs (seed {}) and {} enumerated ones (at most {} operations)",
        a.seed,
        written - random,
        a.enumerate
    );
    println!(
        "{written} programs in {nb} batches of at most {} in {} \
         ({skipped} the oracles could not decide, left out)",
        a.batch,
        batches.display()
    );
    println!("programs of a known hang (by its fact's test) among them: {hangs:?}");
    println!("coverage: {kinds}");
    println!(
        "On the GPU machine, with the harness bundle: bash conformance/fuzz-gpu.sh {}",
        out.strip_prefix(&root).unwrap_or(&out).display()
    );
    Ok(())
}

/// Programs written out batch by batch (`campaign::write_batch`).
struct Batches<'a> {
    out: &'a std::path::Path,
    size: usize,
    batch: Vec<CampaignProgram>,
    written: usize,
    /// Batches written.
    count: usize,
}

impl Batches<'_> {
    fn push(&mut self, p: CampaignProgram) -> Result<()> {
        self.batch.push(p);
        self.written += 1;
        if self.batch.len() == self.size {
            self.finish()?;
        }
        Ok(())
    }

    /// Writes the batch in hand, if any.
    fn finish(&mut self) -> Result<()> {
        if !self.batch.is_empty() {
            campaign::write_batch(&campaign::batch_dir(self.out, self.count), &self.batch)?;
            self.batch.clear();
            self.count += 1;
        }
        Ok(())
    }
}

/// How many programs put each operation in each kind of kernel.
#[derive(Default)]
struct Coverage(std::collections::BTreeMap<String, usize>);

impl Coverage {
    fn add(&mut self, l: &gridcheck_spec::Litmus) {
        let mut seen = std::collections::BTreeSet::new();
        for k in &l.kernels {
            let kind = match k.launch {
                gridcheck_spec::KernelLaunch::Host { pdl: false } => "host",
                gridcheck_spec::KernelLaunch::Host { pdl: true } => "host-pdl",
                gridcheck_spec::KernelLaunch::Device => "device",
            };
            for o in k.threads.iter().flat_map(|t| &t.ops) {
                let op = o.to_string();
                let word = op.split_whitespace().next().unwrap_or("");
                seen.insert(format!("{word}@{kind}"));
            }
        }
        for s in seen {
            *self.0.entry(s).or_default() += 1;
        }
    }
}

impl std::fmt::Display for Coverage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let v: Vec<String> = self.0.iter().map(|(k, n)| format!("{k} {n}")).collect();
        f.write_str(&v.join(", "))
    }
}
