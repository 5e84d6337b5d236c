//! `--mutants`: mutation testing on the GPU. Every candidate of
//! `gridcheck_mutate` becomes a trial `mutant/<sm>/<test>~<operator>`:
//! both oracles judge it in a worker process (with the model timeout); a
//! mutant then runs on the GPU in a worker process, in chunks of one launch,
//! until an outcome that kills it is read back or its GPU-time budget is
//! spent. Each trial appends one line to `--mutant-results`; after the run
//! the mutation score is printed, overall, per operator and per test.
//! `--tune FILE` runs every mutant under each environment of FILE instead
//! and prints each environment's kills per GPU second.

use std::collections::BTreeMap;
use std::fs::File;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gridcheck_gpu::{Budget, Gpu};
use gridcheck_mutate::{Candidate, Judgement};
use gridcheck_report::{
    Environment, Facts, MutantRecord, MutantRun, MutantStatus, Score, SearchPoint, Tuning,
};
use gridcheck_spec::State;
use libtest_mimic::{Completion, Failed, Trial};

use crate::Ctx;
use crate::worker::{self, Job, WorkerResult};

/// The mutants' records and their file.
#[derive(Default)]
pub(crate) struct Sink {
    file: Mutex<Option<File>>,
    records: Mutex<Vec<MutantRecord>>,
    pub(crate) error: Mutex<Option<String>>,
}

impl Sink {
    pub(crate) fn open(path: &std::path::Path) -> Result<Sink, String> {
        Ok(Sink {
            file: Mutex::new(Some(crate::results_file::open_sink(path)?)),
            ..Sink::default()
        })
    }
}

/// One trial per candidate of the spec, and one per application the
/// loader rejects (recorded as not a mutant, with the loader's reason).
pub(crate) fn trials(ctx: &Arc<Ctx>) -> Vec<Trial> {
    let (candidates, rejected) = gridcheck_mutate::candidates(&ctx.spec);
    if let Some(p) = ctx.devices.as_ref() {
        let names: Vec<String> = candidates.iter().map(|c| c.name.clone()).collect();
        p.assign(&names);
    }
    let name = |ctx: &Ctx, mutant: &str| format!("mutant/{}/{mutant}", ctx.sm());
    let mut out: Vec<Trial> = rejected
        .into_iter()
        .map(|r| {
            let ctx = Arc::clone(ctx);
            Trial::test(name(&ctx, &r.name), move || {
                let (test, op) = gridcheck_mutate::split_name(&r.name).unwrap_or((&r.name, ""));
                let rec = record_for(
                    &ctx,
                    &r.name,
                    test,
                    op,
                    "",
                    gridcheck_spec::Verdict::Allowed,
                );
                finish(
                    &ctx,
                    MutantRecord {
                        status: MutantStatus::NotAMutant,
                        message: format!("the loader rejects the mutated test: {}", r.reason),
                        ..rec
                    },
                );
                Ok(())
            })
            .with_kind("mutant")
        })
        .collect();
    out.extend(candidates.into_iter().map(|c| {
        let ctx = Arc::clone(ctx);
        Trial::ignorable_test(name(&ctx, &c.name), move || run(&ctx, &c)).with_kind("mutant")
    }));
    out
}

fn record_for(
    ctx: &Ctx,
    name: &str,
    test: &str,
    operator: &str,
    site: &str,
    original: gridcheck_spec::Verdict,
) -> MutantRecord {
    MutantRecord {
        mutant: name.to_string(),
        test: test.to_string(),
        operator: operator.to_string(),
        site: site.to_string(),
        original,
        status: MutantStatus::NotRun,
        message: String::new(),
        verdict: None,
        decided_by: String::new(),
        kill_states: Vec::new(),
        runs: Vec::new(),
        budget_s: ctx.opts.environment.mutant_budget_s,
        environment: ctx.device.as_ref().ok().map(|d| Environment {
            gpu: d.name.clone(),
            sm: d.sm.clone(),
            driver: d.driver_version.clone(),
            nvcc: None,
            driver_version: d.driver_release.clone(),
            tuning: Some(ctx.opts.environment.clone()),
            tuning_file: ctx.opts.tuning_file.clone(),
            device: None,
            binary: None,
            toolchain: None,
        }),
        commit: ctx.commit.clone(),
    }
}

fn run(ctx: &Ctx, c: &Candidate) -> Result<Completion, Failed> {
    let mut rec = record_for(
        ctx,
        &c.name,
        &c.test,
        c.operator.name(),
        &c.site,
        c.original,
    );
    match worker::run_isolated(
        &ctx.opts,
        Job::MutantModel,
        &c.name,
        &crate::devices::Place::default(),
    ) {
        WorkerResult::Judged {
            verdict: Some(v), ..
        } => {
            rec.verdict = Some(v.verdict);
            rec.decided_by = format!("{} ({})", v.decided_by, v.agreement);
            rec.kill_states = v.kill_states;
        }
        WorkerResult::Judged {
            verdict: None,
            reason,
        } => {
            rec.status = MutantStatus::NotAMutant;
            rec.message = reason;
        }
        other => {
            rec.status = MutantStatus::Error;
            rec.message = format!("the oracles did not judge it: {}", describe(&other));
        }
    }
    if rec.verdict.is_some() {
        gpu(ctx, c, &mut rec);
    }
    let outcome = match rec.status {
        MutantStatus::Error => Err(Failed::from(rec.message.as_str())),
        MutantStatus::NotRun => Ok(Completion::ignored_with(rec.message.clone())),
        _ => Ok(Completion::Completed),
    };
    finish(ctx, rec);
    outcome
}

fn describe(r: &WorkerResult) -> String {
    match r {
        WorkerResult::Timeout { seconds, .. } => format!("timed out after {seconds} s"),
        WorkerResult::Error { message } => message.clone(),
        WorkerResult::Crash { exit, stderr_tail } => format!("crashed ({exit}): {stderr_tail}"),
        WorkerResult::LoadFailure { code, message } => {
            format!("the module did not load ({code}): {message}")
        }
        other => format!("unexpected result {other:?}"),
    }
}

/// Runs a judged mutant on the GPU and decides killed or survived.
fn gpu(ctx: &Ctx, c: &Candidate, rec: &mut MutantRecord) {
    let device = match &ctx.device {
        Ok(d) => d,
        Err(e) => {
            rec.message = format!("not run: {e}");
            return;
        }
    };
    let cc = device.compute_capability.0;
    let runs_here = |p: &gridcheck_spec::Profile| match p {
        gridcheck_spec::Profile::Cdp1 => cc < 9,
        gridcheck_spec::Profile::Pdl => cc >= 9,
        gridcheck_spec::Profile::Cdp2 => true,
    };
    if !c.profiles.iter().any(runs_here) {
        rec.message = format!(
            "not run: CDP1 exists only below compute capability 9.0; {} has {}.{}",
            device.name, cc, device.compute_capability.1
        );
        return;
    }
    if gridcheck_kernelgen::uses_pdl(&c.litmus) && cc < 9 {
        rec.message = format!(
            "not run: PDL needs compute capability 9.0, {} has {cc}",
            device.name
        );
        return;
    }
    let cubin = crate::binary::cubin_path(
        &ctx.opts.cubins,
        &device.sm,
        &gridcheck_mutate::file_stem(&c.name),
    );
    if !cubin.is_file() {
        rec.message = format!(
            "not run: no {} (cargo xtask conformance --mutants builds it; a bundle's \
             conformance/mutants-gpu.sh)",
            cubin.display()
        );
        return;
    }
    // Mutants are dealt out over the devices of `--devices` as tests are.
    let slot = ctx.devices.as_ref().map(|p| p.slot(&c.name));
    let place = match (&ctx.devices, slot) {
        (Some(p), Some(s)) => p.place(s),
        _ => crate::devices::Place::default(),
    };
    if let (Some(p), Some(s), Some(e)) = (&ctx.devices, slot, rec.environment.as_mut()) {
        e.device = Some(crate::devices::record_device(&p.selected()[s]));
    }
    let result = {
        let _one_at_a_time = ctx.devices.as_ref().zip(slot).map(|(p, s)| p.lock(s));
        worker::run_isolated(&ctx.opts, Job::Mutant, &c.name, &place)
    };
    match result {
        WorkerResult::MutantRuns(runs) => {
            let killed: Vec<&MutantRun> = runs.iter().filter(|r| r.kills > 0).collect();
            rec.status = if killed.is_empty() {
                MutantStatus::Survived
            } else {
                MutantStatus::Killed
            };
            let total: u64 = runs.iter().map(|r| r.instances).sum();
            let gpu_s: f64 = runs.iter().map(|r| r.gpu_s).sum();
            rec.message = match killed.first() {
                Some(k) => format!(
                    "killed: {} of {} instances showed an outcome the original verdict ({}) rules \
                     out; first after {:.3} GPU s ({})",
                    k.kills,
                    k.instances,
                    c.original,
                    k.time_to_kill_s.unwrap_or(k.gpu_s),
                    k.environment
                ),
                None => format!(
                    "survived: no outcome the original verdict ({}) rules out in {total} instances, \
                     {gpu_s:.3} GPU s{}",
                    c.original,
                    runs.iter()
                        .find_map(|r| r.first_launch_error.as_deref())
                        .map(|e| format!("; launch failures, first: {e}"))
                        .unwrap_or_default()
                ),
            };
            rec.runs = runs;
        }
        other => {
            rec.status = MutantStatus::Error;
            rec.message = format!("the GPU run failed: {}", describe(&other));
        }
    }
}

fn finish(ctx: &Ctx, rec: MutantRecord) {
    let sink = &ctx.mutants;
    let mut file = sink.file.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(f) = file.as_mut()
        && let Err(e) = gridcheck_report::append_json_line(f, &rec)
    {
        let msg = format!(
            "cannot write to {}: {e} (mutant {} and later ones are not recorded)",
            ctx.opts.mutant_results.display(),
            rec.mutant
        );
        eprintln!("error: {msg}");
        *file = None;
        *sink.error.lock().unwrap_or_else(|p| p.into_inner()) = Some(msg);
    }
    drop(file);
    sink.records
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(rec);
}

/// The worker side of judging: both oracles on the candidate.
pub(crate) fn judge_here(opts: &crate::Options, name: &str) -> WorkerResult {
    let candidate = match load_candidate(opts, name) {
        Ok(c) => c,
        Err(message) => return WorkerResult::Error { message },
    };
    match gridcheck_mutate::judge(&candidate) {
        Ok(Judgement::Mutant(v)) => WorkerResult::Judged {
            verdict: Some(v),
            reason: String::new(),
        },
        Ok(Judgement::NotAMutant(reason)) => WorkerResult::Judged {
            verdict: None,
            reason,
        },
        Err(message) => WorkerResult::Error { message },
    }
}

fn load_candidate(opts: &crate::Options, name: &str) -> Result<Candidate, String> {
    let spec = gridcheck_spec::load_dir(&opts.spec, None).map_err(|e| e.to_string())?;
    gridcheck_mutate::find(&spec, name)
}

/// The worker side of a GPU run: the mutant under the environment of the
/// options and then, while it survives, under each of its extra
/// environments (each with its own budget; a kill's time counts from the
/// first launch of the first environment); or under each environment of
/// `--tune`, every one to the end.
pub(crate) fn gpu_here(opts: &crate::Options, name: &str) -> WorkerResult {
    let error = |message: String| WorkerResult::Error { message };
    let candidate = match load_candidate(opts, name) {
        Ok(c) => c,
        Err(e) => return error(e),
    };
    let environments: Vec<SearchPoint> = match &opts.tune {
        Some(path) => match std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))
            .and_then(|t| gridcheck_report::parse_search(&t, path))
        {
            Ok(p) => p,
            Err(e) => return error(e),
        },
        None => std::iter::once(SearchPoint {
            name: "tuned".into(),
            tuning: opts.environment.clone(),
        })
        .chain(opts.environment.extra.iter().cloned())
        .collect(),
    };
    let sequence = opts.tune.is_none();
    let gpu = match Gpu::open(0) {
        Ok(g) => g,
        Err(e) => return error(e.to_string()),
    };
    let cubin = crate::binary::cubin_path(
        &opts.cubins,
        &gpu.info().sm,
        &gridcheck_mutate::file_stem(name),
    );
    let mut runs: Vec<MutantRun> = Vec::new();
    let mut spent = 0.0;
    for env in &environments {
        match run_budgeted(&gpu, &cubin, &candidate, env, opts.seed) {
            Ok(mut r) => {
                let killed = r.kills > 0;
                if sequence {
                    r.time_to_kill_s = r.time_to_kill_s.map(|t| t + spent);
                    spent += r.gpu_s;
                }
                runs.push(r);
                if sequence && killed {
                    break;
                }
            }
            Err(e) => return error(format!("environment `{}`: {e}", env.name)),
        }
    }
    WorkerResult::MutantRuns(runs)
}

/// Runs one launch at a time until an outcome kills the mutant or the
/// environment's GPU-time budget is spent (or four times that in wall time,
/// module loads included).
fn run_budgeted(
    gpu: &Gpu,
    cubin: &std::path::Path,
    c: &Candidate,
    env: &SearchPoint,
    seed: u64,
) -> Result<MutantRun, String> {
    let t: &Tuning = &env.tuning;
    let budget = Duration::from_secs_f64(t.mutant_budget_s);
    let wall_limit = budget * 4 + Duration::from_secs(5);
    let start = Instant::now();
    let mut histogram: BTreeMap<State, u64> = BTreeMap::new();
    let mut run = MutantRun {
        environment: env.name.clone(),
        histogram: Vec::new(),
        instances: 0,
        kills: 0,
        launch_failures: 0,
        first_launch_error: None,
        gpu_s: 0.0,
        time_to_kill_s: None,
        wall_s: 0.0,
    };
    let mut gpu_time = Duration::ZERO;
    for chunk in 0u32.. {
        let b = Budget {
            instances_per_launch: t.instances,
            launches: 1,
            seed: gridcheck_gpu::launch_seed(seed, chunk),
        };
        let r = gpu
            .run_litmus_with(cubin, &c.name, &c.litmus, &b, t)
            .map_err(|e| e.to_string())?;
        gpu_time += r.launch_elapsed;
        run.instances += r.instances;
        run.launch_failures += r.launch_failures;
        if run.first_launch_error.is_none() {
            run.first_launch_error = r.first_launch_error;
        }
        for (state, n) in r.histogram {
            if gridcheck_mutate::kills(c.original, &c.litmus.condition, &state)? {
                run.kills += n;
            }
            *histogram.entry(state).or_default() += n;
        }
        if run.kills > 0 {
            run.time_to_kill_s = Some(gpu_time.as_secs_f64());
            break;
        }
        if gpu_time >= budget || start.elapsed() >= wall_limit {
            break;
        }
    }
    run.gpu_s = gpu_time.as_secs_f64();
    run.wall_s = start.elapsed().as_secs_f64();
    run.histogram = histogram.into_iter().collect();
    Ok(run)
}

/// The mutation score and, after `--tune`, each environment's figures;
/// `false` when the score is under `--min-score`.
pub(crate) fn print_summary(ctx: &Ctx) -> bool {
    let records = ctx
        .mutants
        .records
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    println!(
        "{}",
        summary(
            &records,
            &ctx.facts,
            ctx.opts.tune.is_some(),
            &ctx.opts.tuned_from
        )
    );
    let score = Score::judged(&records, Some(&ctx.facts)).overall;
    match ctx.opts.min_score {
        Some(min) if score.percent() < min => {
            eprintln!("error: the mutation score {score} is under --min-score {min} %");
            false
        }
        _ => true,
    }
}

/// The text of [`print_summary`] (`gridcheck_report::score_text`): a
/// survivor that an `unobserved` fact covers where it ran is listed as
/// equivalent on that GPU, out of the score.
pub fn summary(records: &[MutantRecord], facts: &Facts, tune: bool, tuned_from: &str) -> String {
    let s = Score::judged(records, Some(facts));
    gridcheck_report::score_text(records, &s, tune, tuned_from)
}
