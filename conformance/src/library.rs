//! The library tier (`--tier library`): CCCL's algorithms that launch with
//! PDL, run as a user runs them, release by release. Each CUB algorithm's
//! program (built by `cargo xtask library build` per CCCL release, for
//! `sm_90` SASS and for `compute_80` PTX) runs each case of
//! `conformance/library.toml`, with the GPU timeout, on the device the GPU
//! tier uses (the hold goes on the run's timeline), in the binary's staying
//! process (`--serve`, `crate::staying`: one context for the cases of one
//! binary; a case that errs, crashes or hangs ends it); every call's result
//! is checked on the host by the program. The controls and the reproducer
//! run a process of their own.
//!
//! Trials: `lib/<release>/<target>/<algorithm>/<case>` (`case`:
//! `n100000-stress`). Every call right is `pass`; a wrong result, a CUDA
//! error or no answer within the timeout (a library call that hangs) is
//! `fail`, and the failing case is run at once with the program's other
//! builds, in rounds beside its own build run again (`controls.rs`; the
//! controls: `-nopdl`, PDL off, `invalid` where the program
//! measured its call launching with PDL all the same; `-ptx90`, compute_90
//! PTX; `-sass80`, the compute_80 code as nvcc's SASS; `-<patch>`, the wait
//! moved to a kernel's first line): a control that removes the failure
//! names what it changed. A compute_80 program whose PTX the driver cannot
//! JIT runs as its `-sass80` build. The record keeps the counts,
//! the controls and a reproducer (the command, the standalone `.cu` and
//! the nvcc command that builds it). An algorithm no program covers yet,
//! a release not built, no GPU: not run, with the reason and the command
//! that makes it runnable. The facts (`conformance/facts/library.toml`)
//! judge a failure as for the GPU tier, by the `cccl` release.
//!
//! A run without `--tier` takes the default set of cases for the CCCL
//! release of the default nvcc only; `--tier library` takes the full set
//! for every release of the catalog.

mod cases;
mod contract;
mod controls;
mod exec;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use gridcheck_report::{
    Binary, Environment, LibraryResult, Reproducer, Status, Tier, TrialId, TrialRecord,
};
use libtest_mimic::Trial;

use crate::ctx::Ctx;
use crate::tiers::conclude;
use cases::{Case, Cases};
// The programs' side: `gridcheck_library`, through the adapter of
// `contract.rs` (the names the tier uses, and `build.json` as it reads it).
use contract as library_contract;
use library_contract::{Algorithm, BuildInfo, Catalog};

/// What the tier runs in this invocation: the catalog, the cases, which
/// set and which releases.
struct Selection {
    catalog: Catalog,
    cases: Cases,
    full: bool,
    releases: Vec<String>,
}

/// The releases and cases this run takes, or why the tier has none.
fn select(ctx: &Ctx) -> Result<Selection, String> {
    let root = &ctx.plan.opts.root;
    let catalog = library_contract::Catalog::load(root)?;
    let cases = Cases::load(root)?;
    let full = ctx.plan.required(Tier::Library);
    let releases: Vec<String> = if full {
        catalog.releases.iter().map(|r| r.name.clone()).collect()
    } else {
        // The CCCL release of the default nvcc, else the newest one.
        let nvcc = ctx
            .plan
            .toolkit()
            .map(|v| gridcheck_report::major_minor(&v));
        let own = nvcc.filter(|r| catalog.release(r).is_some());
        own.or_else(|| catalog.releases.last().map(|r| r.name.clone()))
            .into_iter()
            .collect()
    };
    if releases.is_empty() {
        return Err(format!(
            "{} lists no CCCL release",
            library_contract::CATALOG
        ));
    }
    Ok(Selection {
        catalog,
        cases,
        full,
        releases,
    })
}

/// Why the tier, asked for, cannot run here at all: no GPU, no catalog,
/// no release built. The harness then stops before any trial.
pub(crate) fn unavailable(ctx: &Ctx) -> Option<String> {
    if let Err(e) = &ctx.runner.device {
        return Some(e.clone());
    }
    let s = match select(ctx) {
        Ok(s) => s,
        Err(e) => return Some(e),
    };
    let root = &ctx.plan.opts.root;
    let built = s
        .releases
        .iter()
        .any(|r| root.join(library_contract::BUILD_DIR).join(r).is_dir());
    (!built).then(|| {
        format!(
            "no CCCL release of {} is built under {} (cargo xtask library build)",
            library_contract::CATALOG,
            library_contract::BUILD_DIR
        )
    })
}

/// One trial's inputs.
#[derive(Clone)]
struct Item {
    release: String,
    target: String,
    algorithm: Algorithm,
    case: Case,
}

impl Item {
    fn id(&self) -> TrialId {
        TrialId::library(
            &self.release,
            &self.target,
            &self.algorithm.name,
            &self.case.name(),
        )
    }
}

/// The tier's trials.
pub(crate) fn trials(ctx: &Arc<Ctx>) -> Vec<Trial> {
    let s = match select(ctx) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("note: the library tier will not run: {e}");
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for release in &s.releases {
        let Some(r) = s.catalog.release(release) else {
            continue;
        };
        for target in &s.cases.set(s.full).targets {
            for alg in &r.algorithms {
                for case in s.cases.cases(s.full, &alg.name) {
                    let item = Item {
                        release: release.clone(),
                        target: target.clone(),
                        algorithm: alg.clone(),
                        case,
                    };
                    out.push(trial(ctx, item));
                }
            }
        }
    }
    out
}

fn trial(ctx: &Arc<Ctx>, item: Item) -> Trial {
    let id = item.id();
    let cannot = why_not(ctx, &item);
    if let Some((status, reason)) = &cannot {
        let mut rec = TrialRecord::new(id.clone(), *status, format!("not run: {reason}"));
        rec.commit = ctx.plan.commit.clone();
        ctx.sink.skipped(rec);
    }
    let ignored = cannot.is_some();
    let ctx = Arc::clone(ctx);
    Trial::ignorable_test(id.to_string(), move || {
        if let Some(r) = ctx.sink.resumed(&id) {
            return conclude(r.status, &format!("{} (from the previous run)", r.message));
        }
        let rec = match why_not(&ctx, &item) {
            Some((status, reason)) => {
                TrialRecord::new(id.clone(), status, format!("not run: {reason}"))
            }
            None => run(&ctx, &item),
        };
        let result = conclude(rec.status, &rec.message);
        ctx.sink.record(rec);
        result
    })
    .with_kind(Tier::Library.as_str())
    .with_ignored_flag(ignored)
}

/// Whether a target's code runs on a GPU of architecture `sm`: SASS on
/// its own architecture, PTX on any at or above its own.
fn target_runs_on(target: &str, sm: &str) -> bool {
    let number = |s: &str, prefix: &str| -> Option<u32> { s.strip_prefix(prefix)?.parse().ok() };
    match (number(target, "compute_"), gridcheck_report::sm_number(sm)) {
        (Some(ptx), Some(here)) => here >= ptx,
        _ => target == sm,
    }
}

/// Why a trial cannot run here (its status and reason), or `None`.
fn why_not(ctx: &Ctx, item: &Item) -> Option<(Status, String)> {
    let release = &item.release;
    if item.algorithm.program.is_empty() {
        return Some((
            Status::NotRun,
            format!(
                "no program covers {} of CCCL {release} yet ({} lists it with program = \"\")",
                item.algorithm.name,
                library_contract::CATALOG
            ),
        ));
    }
    let device = match ctx.runner.device_for(&item.id().to_string()) {
        Ok(d) => d,
        Err(e) => return Some((Status::NotSupported, e.clone())),
    };
    if !target_runs_on(&item.target, &device.sm) {
        return Some((
            Status::NotSupported,
            format!(
                "{} code does not run on {} ({})",
                item.target, device.name, device.sm
            ),
        ));
    }
    let root = &ctx.plan.opts.root;
    let exe = library_contract::binary(root, release, &item.target, &item.algorithm.program, "");
    if exe.is_file() {
        return None;
    }
    let build = BuildInfo::load(root, release, &item.target);
    let why = match build
        .as_ref()
        .ok()
        .and_then(|b| b.programs.get(&item.algorithm.program))
    {
        Some(p) if p.error.is_some() => format!(
            "{} did not build for CCCL {release} {}: {}",
            item.algorithm.program,
            item.target,
            p.error.as_deref().unwrap_or_default()
        ),
        _ if !gridcheck_toolchain::is_release(release)
            || gridcheck_toolchain::find_toolchain(root, release).is_err() && build.is_err() =>
        {
            format!(
                "CCCL {release} is neither installed nor built (cargo xtask toolchain install {release}, then cargo xtask library build --release {release})"
            )
        }
        _ => format!(
            "{} is not built (cargo xtask library build --release {release} --target {})",
            exe.display(),
            item.target
        ),
    };
    Some((Status::NotSupported, why))
}

/// Runs one case and judges it: its record.
fn run(ctx: &Ctx, item: &Item) -> TrialRecord {
    let id = item.id();
    let name = id.to_string();
    let root = &ctx.plan.opts.root;
    let program = &item.algorithm.program;
    let mut rec = TrialRecord::new(id, Status::NotRun, "");
    rec.commit = ctx.plan.commit.clone();
    let build = BuildInfo::load(root, &item.release, &item.target).ok();
    let args = exec::args(&item.algorithm.name, &item.case, ctx.plan.opts.seed);
    let (variant, exe, ran) = main_run(ctx, item, &name, &args);
    if let Ok(device) = ctx.runner.device_for(&name) {
        rec.environment = Some(environment(ctx, device, build.as_ref(), item, &exe));
    }
    let (run, cccl) = match ran {
        exec::Ran::Run(run, cccl) => (run, cccl),
        exec::Ran::NotRun(reason) => {
            (rec.status, rec.message) = (Status::NotSupported, format!("not run: {reason}"));
            return rec;
        }
    };
    let head = format!(
        "CCCL {}{}, {}{}, {}, n={}, env {}",
        item.release,
        cccl.as_deref()
            .map(|c| format!(" ({c})"))
            .unwrap_or_default(),
        item.target,
        variant.as_ref().map(|v| v.1.as_str()).unwrap_or_default(),
        item.algorithm.name,
        item.case.size,
        item.case.env
    );
    let reproducer = Reproducer {
        command: exec::command_line(&exe, &args),
        source: format!("{}/{program}.cu", library_contract::SOURCE_DIR),
        build: build
            .as_ref()
            .map(|b| {
                b.command(&format!(
                    "{program}{}",
                    variant.as_ref().map_or("", |v| v.0)
                ))
            })
            .unwrap_or_else(|| "unknown: no build.json beside the binary".into()),
    };
    let controls = match run.failure(item.case.reps) {
        None => {
            rec.status = Status::Pass;
            rec.message = format!("{head}: right in {} of {} calls", run.calls, run.calls);
            controls::Controls::default()
        }
        Some(failure) => {
            let failing = controls::Failing {
                name: &name,
                root,
                release: &item.release,
                target: &item.target,
                program,
                algorithm: &item.algorithm.name,
                case: &item.case,
                seed: ctx.plan.opts.seed,
                exe: &exe,
                ran: variant.as_ref().map(|v| v.0),
                waits: &item.algorithm.waits,
            };
            let controls = controls::run(&failing, &|hold, exe, args| held(ctx, hold, exe, args));
            rec.status = Status::Fail;
            let process = run
                .earlier_cases
                .filter(|n| *n > 0)
                .map(|n| format!(" (in a staying process, after {n} other cases)"))
                .unwrap_or_default();
            rec.message = format!(
                "{head}: {failure}{process}{}. Reproduce: {} (source {}; build: {})",
                controls::text(&controls.controls),
                reproducer.command,
                reproducer.source,
                reproducer.build
            );
            controls
        }
    };
    rec.library = Some(LibraryResult {
        release: item.release.clone(),
        cccl,
        target: item.target.clone(),
        algorithm: item.algorithm.name.clone(),
        size: item.case.size,
        env: item.case.env.clone(),
        reps: item.case.reps,
        run,
        controls: controls.controls,
        beside: controls.beside,
        reproducer: Some(reproducer),
    });
    (rec.status, rec.message) = ctx.plan.facts.apply(&rec);
    rec
}

/// The case's run as shipped. A compute_80 program whose PTX this driver
/// cannot JIT (a newer PTX ISA than the driver's; asked once a run) runs
/// its `-sass80` build instead, where built: the same compute_80 code path
/// (its tuning, its compiled-out wait) as nvcc's sm_90 SASS. Returns that variant with the
/// words the message gives it, the binary run and its outcome. The
/// decision and the run are one hold of the device, so a trial queued for
/// it sees what the trial before it learned; the run goes to the binary's
/// staying process (`exec::served`).
fn main_run(
    ctx: &Ctx,
    item: &Item,
    name: &str,
    args: &[String],
) -> (Option<(&'static str, String)>, PathBuf, exec::Ran) {
    let root = &ctx.plan.opts.root;
    let binary = |variant| {
        library_contract::binary(
            root,
            &item.release,
            &item.target,
            &item.algorithm.program,
            variant,
        )
    };
    let shipped = binary("");
    let sass = binary(gridcheck_library::SASS80);
    let (slot, place) = ctx.runner.place(name);
    let timeout = ctx.plan.opts.timeout;
    let served = |exe: &Path| {
        exec::served(
            &ctx.runner.stayers,
            slot.unwrap_or(0),
            exe,
            args,
            &place,
            timeout,
        )
    };
    ctx.runner.on_device(slot, "library", name, || {
        // A binary this driver could not JIT says so again for every case:
        // ask it once a run.
        let known = cannot_jit()
            .lock()
            .ok()
            .and_then(|m| m.get(&shipped).cloned());
        let ran = match known {
            Some(reason) if sass.is_file() => exec::Ran::NotRun(reason),
            _ => served(&shipped),
        };
        match ran {
            exec::Ran::NotRun(reason)
                if reason.contains("cudaErrorUnsupportedPtxVersion") && sass.is_file() =>
            {
                if let Ok(mut m) = cannot_jit().lock() {
                    m.insert(shipped.clone(), reason.clone());
                }
                let words = format!(
                    " as `{}` (this driver cannot JIT the release's compute_80 PTX: {reason}; the same code compiled ahead to sm_90 SASS by nvcc)",
                    gridcheck_library::SASS80
                );
                let ran = served(&sass);
                (Some((gridcheck_library::SASS80, words)), sass.clone(), ran)
            }
            ran => (None, shipped.clone(), ran),
        }
    })
}

/// The shipped compute_80 binaries this run found the driver cannot JIT,
/// with the reason they gave.
fn cannot_jit() -> &'static std::sync::Mutex<std::collections::HashMap<PathBuf, String>> {
    static M: std::sync::OnceLock<std::sync::Mutex<std::collections::HashMap<PathBuf, String>>> =
        std::sync::OnceLock::new();
    M.get_or_init(Default::default)
}

/// A binary's run while the device is held (the hold on the timeline as
/// `library`, named by the trial and, for a control, its variant).
fn held(ctx: &Ctx, name: &str, exe: &Path, args: &[String]) -> exec::Ran {
    let (slot, place) = ctx.runner.place(name);
    let timeout = ctx.plan.opts.timeout;
    ctx.runner.on_device(slot, "library", name, || {
        exec::execute(exe, args, &place, timeout)
    })
}

/// Where a library trial ran, as its record says: the GPU, and the nvcc
/// that built the program (the facts' `toolkit`).
fn environment(
    ctx: &Ctx,
    device: &gridcheck_gpu::DeviceInfo,
    build: Option<&BuildInfo>,
    item: &Item,
    exe: &Path,
) -> Environment {
    let ptx = item.target.starts_with("compute_");
    Environment {
        gpu: device.name.clone(),
        sm: device.sm.clone(),
        driver: device.driver_version.clone(),
        nvcc: build.map(|b| b.nvcc.clone()).filter(|v| !v.is_empty()),
        driver_version: device.driver_release.clone(),
        tuning: None,
        tuning_file: None,
        device: Some(crate::devices::record_device(device)),
        binary: Some(Binary {
            kind: if ptx { "ptx-jit" } else { "executable" }.into(),
            arch: item.target.clone(),
            file: exe
                .strip_prefix(&ctx.plan.opts.root)
                .unwrap_or(exe)
                .display()
                .to_string(),
        }),
        toolchain: None,
    }
}

/// Whether a library fact's key names an algorithm of the catalog in its
/// release (else why not).
pub(crate) fn names_an_algorithm(
    root: &Path,
    subject: &gridcheck_report::Subject,
) -> Result<(), String> {
    let catalog = Catalog::load(root)
        .map_err(|e| format!("names a CCCL algorithm, but the catalog cannot be read: {e}"))?;
    let key = subject.test_key();
    let release = key.toolchain.unwrap_or_default();
    match catalog.release(&release) {
        Some(r) if r.algorithms.iter().any(|a| a.name == key.test) => Ok(()),
        _ => Err(format!(
            "names no algorithm of CCCL {release} in {}",
            library_contract::CATALOG
        )),
    }
}

/// The tier's GPU time per CCCL release, from the run's timeline: a line
/// a release, or none when the tier held no device.
pub(crate) fn time_per_release(spans: &[crate::timeline::Span]) -> Vec<String> {
    let mut by: std::collections::BTreeMap<String, (usize, f64)> = Default::default();
    for s in spans.iter().filter(|s| s.what == "library") {
        let Ok(id) = s.test.parse::<TrialId>() else {
            continue;
        };
        let e = by.entry(id.toolchain.unwrap_or_default()).or_default();
        e.0 += 1;
        e.1 += s.end_s - s.start_s;
    }
    by.into_iter()
        .map(|(r, (n, t))| format!("library tier, CCCL {r}: {t:.1} s of GPU time ({n} runs)"))
        .collect()
}
