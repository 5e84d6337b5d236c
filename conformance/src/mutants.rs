//! `--mutants`: mutation testing on the GPU. Every candidate of
//! `gridcheck_mutate` becomes a trial `mutant/<sm>/<test>~<operator>`:
//! both oracles judge it in a worker process (with the model timeout); a
//! mutant then runs on the GPU in a worker process, in chunks of one launch,
//! until an outcome that kills it is read back or its GPU-time budget is
//! spent. Each trial appends one line to `--mutant-results`; after the run
//! the mutation score is printed, overall, per operator and per test.
//! `--tune FILE` runs every mutant under each environment of FILE instead
//! and prints each environment's kills per GPU second.

use std::sync::Arc;

use gridcheck_mutate::Candidate;
use gridcheck_report::{
    Environment, Equivalence, MutantRecord, MutantRun, MutantStatus, Score, SearchPoint, TrialId,
};
use libtest_mimic::{Completion, Failed, Trial};

use crate::ctx::Ctx;
use crate::devices::Place;
use crate::job::{Job, JudgeJob, MutantJob, WorkerResult};
use crate::process;

/// One trial per candidate of the spec, and one per application the
/// loader rejects (recorded as not a mutant, with the loader's reason).
pub(crate) fn trials(ctx: &Arc<Ctx>) -> Vec<Trial> {
    let (candidates, rejected) = gridcheck_mutate::candidates(&ctx.plan.spec);
    if let Some(p) = ctx.runner.devices.as_ref() {
        let names: Vec<String> = candidates.iter().map(|c| c.name.clone()).collect();
        p.assign(&names);
    }
    let name = |ctx: &Ctx, mutant: &str| TrialId::mutant_name(&ctx.runner.sm(), mutant);
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
        budget_s: ctx.plan.tuned.tuning.mutant_budget_s,
        environment: ctx.runner.device.as_ref().ok().map(|d| Environment {
            gpu: d.name.clone(),
            sm: d.sm.clone(),
            driver: d.driver_version.clone(),
            nvcc: None,
            driver_version: d.driver_release.clone(),
            tuning: Some(ctx.plan.tuned.tuning.clone()),
            tuning_file: ctx.plan.tuned.file.clone(),
            device: None,
            binary: None,
            toolchain: None,
        }),
        commit: ctx.plan.commit.clone(),
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
    let judge = Job::Judge(JudgeJob {
        candidate: c.clone(),
        timeout_s: ctx.plan.opts.model_timeout,
    });
    match process::run_once(&judge, &Place::default()) {
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
        WorkerResult::Stalled { stall } => stall.clone(),
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
    let job = match job(ctx, c) {
        Ok(j) => j,
        Err(why) => {
            rec.message = format!("not run: {why}");
            return;
        }
    };
    // Mutants are dealt out over the devices of `--devices` as tests are.
    let (slot, place) = ctx.runner.place(&c.name);
    if let (Some(p), Some(s), Some(e)) = (&ctx.runner.devices, slot, rec.environment.as_mut()) {
        e.device = Some(crate::devices::record_device(&p.selected()[s]));
    }
    let result = ctx.runner.on_device(slot, "mutant", &c.name, || {
        process::run_once(&Job::Mutant(job), &place)
    });
    match result {
        WorkerResult::MutantRuns(runs) => judge_runs(c, rec, runs),
        other => {
            rec.status = MutantStatus::Error;
            rec.message = format!("the GPU run failed: {}", describe(&other));
        }
    }
}

/// A mutant's GPU job: its cubin for the device, the environments it runs
/// under (the run's and its extra ones, or `--tune`'s), its device; or why
/// it cannot run here.
fn job(ctx: &Ctx, c: &Candidate) -> Result<MutantJob, String> {
    let device = ctx.runner.device_for(&c.name).map_err(String::clone)?;
    let cc = device.compute_capability.0;
    let runs_here = |p: &gridcheck_spec::Profile| match p {
        gridcheck_spec::Profile::Cdp1 => cc < 9,
        gridcheck_spec::Profile::Pdl => cc >= 9,
        gridcheck_spec::Profile::Cdp2 => true,
    };
    if !c.profiles.iter().any(runs_here) {
        return Err(format!(
            "CDP1 exists only below compute capability 9.0; {} has {}.{}",
            device.name, cc, device.compute_capability.1
        ));
    }
    if gridcheck_kernelgen::uses_pdl(&c.litmus) && cc < 9 {
        return Err(format!(
            "PDL needs compute capability 9.0, {} has {cc}",
            device.name
        ));
    }
    let opts = &ctx.plan.opts;
    let cubin = opts
        .kernels
        .cubin(&device.sm, &gridcheck_mutate::file_stem(&c.name));
    if !cubin.is_file() {
        return Err(format!(
            "no {} (cargo xtask conformance --mutants builds it; a bundle's \
             conformance/mutants-gpu.sh)",
            cubin.display()
        ));
    }
    let tuning = &ctx.plan.tuned.tuning;
    let environments: Vec<SearchPoint> = match &opts.mutants.tune {
        Some(path) => std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))
            .and_then(|t| gridcheck_report::parse_search(&t, path))?,
        None => std::iter::once(SearchPoint {
            name: "tuned".into(),
            tuning: tuning.clone(),
        })
        .chain(tuning.extra.iter().cloned())
        .collect(),
    };
    Ok(MutantJob {
        candidate: c.clone(),
        cubin,
        environments,
        stop_at_kill: opts.mutants.tune.is_none(),
        seed: opts.seed,
        timeout_s: opts.timeout,
        stall_after_s: crate::timeouts::stall_after(opts.timeout),
        device: ctx.runner.place(&c.name).1.expect_uuid,
    })
}

/// Killed or survived, from a mutant's runs.
fn judge_runs(c: &Candidate, rec: &mut MutantRecord, runs: Vec<MutantRun>) {
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

fn finish(ctx: &Ctx, rec: MutantRecord) {
    ctx.sink.record_mutant(rec);
}

/// The mutation score and, after `--tune`, each environment's figures;
/// `false` when the score is under `--min-score`. A survivor is equivalent
/// by shape (`gridcheck_report::Equivalence::Shape`).
pub(crate) fn print_summary(ctx: &Ctx) -> bool {
    let records = ctx.sink.mutants.records();
    let opts = &ctx.plan.opts;
    let programs = gridcheck_mutate::programs(&ctx.plan.spec);
    let s = Score::judged_by(
        &records,
        Some(&ctx.plan.facts),
        Equivalence::Shape(&programs),
    );
    println!(
        "{}",
        gridcheck_report::score_text(
            &records,
            &s,
            opts.mutants.tune.is_some(),
            &ctx.plan.tuned.from
        )
    );
    let score = s.overall;
    match opts.mutants.min_score {
        Some(min) if score.percent() < min => {
            eprintln!("error: the mutation score {score} is under --min-score {min} %");
            false
        }
        _ => true,
    }
}
