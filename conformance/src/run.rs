//! The harness run, from a command line to an exit code: the worker's
//! mode, the help,
//! and otherwise the trials of the tiers (or the mutants), run by
//! libtest-mimic, then the summary and the records' completeness.

use std::path::PathBuf;
use std::process::ExitCode;

use gridcheck_report::{Tier, TrialId};
use libtest_mimic::{Arguments, Trial};

use crate::ctx::Ctx;
use crate::devices::Pool;
use crate::options::Options;
use crate::{flags, library, listing, mutants, process, sass, summary, tiers, worker};

/// The whole harness, from a command line. Returns the process exit code.
pub fn main_with(argv: Vec<String>, default_root: PathBuf) -> ExitCode {
    match argv.get(1).map(String::as_str) {
        // What the GPU machine's scripts read, as JSON (`report.rs`).
        Some("report") => return crate::report::main(&argv[2..], &default_root),
        Some(process::WORKER_FLAG) => return worker::main(),
        _ => {}
    }
    if argv
        .iter()
        .skip(1)
        .any(|a| flags::HELP_FLAGS.contains(&a.as_str()))
    {
        flags::print_help(argv.first().map(String::as_str).unwrap_or("conformance"));
    }
    match flags::parse(argv, default_root) {
        Ok(opts) => harness(opts),
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}

/// The trials of the options' tiers (or the mutants), run; the summary.
fn harness(opts: Options) -> ExitCode {
    let args = Arguments::from_iter(opts.libtest.clone());
    let ctx = match Ctx::new(opts) {
        Ok(c) => std::sync::Arc::new(c),
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    // A tier asked for (`--tier`, GRIDCHECK_REQUIRE_TIERS) that cannot run
    // here is an error, before any trial runs or is recorded.
    if let Some(e) = tiers::required_but_unavailable(&ctx).filter(|_| !args.list) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let mut all = trials(&ctx);
    if let Some(shard) = ctx.plan.opts.shard {
        all = take_shard(all, shard);
    }
    if let Some(seed) = ctx.plan.opts.shuffle {
        all = shuffled(all, seed);
        if !args.list {
            eprintln!("trial order: shuffled by seed {seed} (--shuffle {seed} repeats it)");
        }
    }
    if args.list {
        return listing::list(&args, &all);
    }
    let names: Vec<(String, bool)> = all
        .iter()
        .map(|t| (t.name().to_string(), args.is_filtered_out(t)))
        .collect();
    if let Some(pool) = &ctx.runner.devices {
        deal_gpu_tests(&ctx, pool, &names, &args);
    }
    start_progress(&ctx, &all, &args);
    let conclusion = libtest_mimic::run(&args, all);
    if let Err(code) = finish(&ctx, &args, &names) {
        return code;
    }
    conclusion.exit_code()
}

/// Every trial of the enabled tiers (the mutants' instead with `--mutants`).
fn trials(ctx: &std::sync::Arc<Ctx>) -> Vec<Trial> {
    if ctx.plan.opts.mutants.on {
        return mutants::trials(ctx);
    }
    let mut out = Vec::new();
    if ctx.plan.opts.runs(Tier::Sass) {
        out.extend(sass::trials(ctx));
    }
    if ctx.plan.opts.runs(Tier::Library) {
        out.extend(library::trials(ctx));
    }
    for (rule, test) in ctx.plan.spec.pairs() {
        for tier in Tier::ALL {
            if ctx.plan.opts.runs(tier)
                && let Some(t) = tiers::trial(ctx, tier, rule, test)
            {
                out.push(t);
            }
        }
    }
    out
}

/// Shard `i` of `n` (from 1): every `n`th trial in name order.
fn take_shard(mut all: Vec<Trial>, (i, n): (usize, usize)) -> Vec<Trial> {
    all.sort_by(|a, b| a.name().cmp(b.name()));
    all.into_iter()
        .enumerate()
        .filter(|(k, _)| k % n == i - 1)
        .map(|(_, t)| t)
        .collect()
}

/// `all` in the order `seed` shuffles it into: Fisher-Yates driven by
/// splitmix64, so a seed gives the same order on every machine.
fn shuffled<T>(mut all: Vec<T>, seed: u64) -> Vec<T> {
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    for i in (1..all.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        all.swap(i, j);
    }
    all
}

/// The GPU tests this run selects, dealt out over the devices (and, with
/// `--devices`, each device's share said).
fn deal_gpu_tests(ctx: &Ctx, pool: &Pool, names: &[(String, bool)], args: &Arguments) {
    let tests: Vec<String> = names
        .iter()
        .filter(|(_, out)| !out)
        .filter_map(|(n, _)| n.parse::<TrialId>().ok())
        .filter(|t| t.tier == Tier::Gpu)
        .map(|t| t.test)
        .collect();
    pool.assign(&tests);
    if ctx.plan.opts.devices.is_some() && !args.list {
        for (slot, d) in pool.selected().iter().enumerate() {
            let n = tests.iter().filter(|t| pool.slot(t) == slot).count();
            eprintln!(
                "GPU tier on device {} ({}, {}, {}): {n} test runs",
                d.ordinal,
                d.name,
                d.pci_bus_id.as_deref().unwrap_or("no PCI bus id"),
                d.uuid.as_deref().unwrap_or("no UUID")
            );
        }
    }
}

/// The progress line on a terminal's standard error (or as `--progress`
/// says), counting the trials to run.
fn start_progress(ctx: &Ctx, all: &[Trial], args: &Arguments) {
    let show_progress = ctx.plan.opts.progress.unwrap_or_else(|| {
        use std::io::IsTerminal;
        std::io::stderr().is_terminal() && !std::io::stdout().is_terminal()
    });
    if show_progress && !args.list {
        let total = all
            .iter()
            .filter(|t| !args.is_filtered_out(t) && !args.is_ignored(t))
            .count();
        ctx.sink.show_progress(total);
    }
}

/// After the trials: the mutants' score or the summary, the JUnit file,
/// and the records' completeness; the exit code that overrides the
/// trials', if any.
fn finish(ctx: &Ctx, args: &Arguments, names: &[(String, bool)]) -> Result<(), ExitCode> {
    let mut score_ok = true;
    if !args.list {
        if ctx.plan.opts.mutants.on {
            score_ok = mutants::print_summary(ctx);
        } else {
            ctx.sink
                .record_skipped(&|trial| names.iter().any(|(n, out)| n == trial && !out));
            summary::print(ctx);
        }
        device_time(ctx);
        if let Some(path) = &ctx.plan.opts.junit
            && let Err(e) = std::fs::write(path, gridcheck_report::junit(&ctx.sink.records()))
        {
            eprintln!("cannot write {}: {e}", path.display());
            return Err(ExitCode::from(2));
        }
    }
    if let Some(e) = ctx.sink.mutants.error() {
        eprintln!("error: the mutants' records are incomplete: {e}");
        return Err(ExitCode::from(2));
    }
    if let Some(e) = ctx.sink.write_error() {
        eprintln!("error: the results file is incomplete: {e}");
        return Err(ExitCode::from(2));
    }
    if !score_ok {
        return Err(ExitCode::FAILURE);
    }
    Ok(())
}

/// The run's device timeline written beside the results and summed
/// (`timeline.rs`): where the suite's time went.
fn device_time(ctx: &Ctx) {
    let t = &ctx.runner.timeline;
    let spans = t.spans();
    if spans.is_empty() {
        return;
    }
    let path = crate::timeline::path_for(&ctx.plan.opts.results);
    if let Err(e) = t.write(&path) {
        eprintln!("{e}");
    }
    for line in crate::timeline::summary(&spans, t.now(), 5) {
        println!("{line}");
    }
    for line in library::time_per_release(&spans) {
        println!("{line}");
    }
}

#[cfg(test)]
mod tests {
    use super::shuffled;

    #[test]
    fn a_seed_gives_one_order_and_another_seed_another() {
        let items: Vec<u32> = (0..200).collect();
        let a = shuffled(items.clone(), 1);
        assert_eq!(
            a,
            shuffled(items.clone(), 1),
            "the same seed, the same order"
        );
        assert_ne!(a, items, "shuffled");
        assert_ne!(a, shuffled(items.clone(), 2), "another seed, another order");
        let mut sorted = a.clone();
        sorted.sort();
        assert_eq!(sorted, items, "a permutation: nothing lost or repeated");
        // Every position can be reached: the first item lands in many places.
        let places: std::collections::BTreeSet<usize> = (0..64)
            .map(|s| {
                shuffled(items.clone(), s)
                    .iter()
                    .position(|&x| x == 0)
                    .unwrap()
            })
            .collect();
        assert!(places.len() > 40, "{places:?}");
        assert!(shuffled(Vec::<u32>::new(), 3).is_empty());
    }
}
