//! The GPU tier's trials: a litmus test's histogram diffed against the
//! model (ARCHITECTURE.md, "The verdict diff"), a runtime or host test's
//! outputs checked, and a run that produced nothing to compare (a timeout,
//! a stall, a crash, a module that did not load) said as such. Each trial's
//! run is resolved once (`runner.rs`) and its record names where it ran.

use gridcheck_gpu::DeviceInfo;
use gridcheck_report::{Environment, HardwareResult, Status, Tier, TrialId, TrialRecord, diff};
use gridcheck_spec::{
    Check, Litmus, Rule, RuntimeExpect, RuntimeTest, Test, TestBody, cuda_error_name,
};

use crate::ctx::Ctx;
use crate::job::WorkerResult;
use crate::runner::GpuRun;
use crate::timeouts::Limits;

/// Runs a GPU trial of `test` for `rule` into `rec`.
pub fn run(ctx: &Ctx, rule: &Rule, test: &Test, rec: &mut TrialRecord) {
    let Some(run) = gpu_ready(ctx, rule, test, rec) else {
        return;
    };
    match &test.body {
        TestBody::Litmus(l) => gpu(ctx, test, l, &run, rec),
        TestBody::Runtime(r) => runtime(ctx, test, r, &run, rec),
        TestBody::Host(_) => host(ctx, test, &run, rec),
        TestBody::Compile(_) => {}
    }
}

/// The checks every GPU trial makes first: a device, a suitable compute
/// capability, a binary that runs on it (`binary.rs`: the exact cubin, a
/// compatible one, or the PTX). Records why not and returns `None` when the
/// trial cannot run; else its run, resolved once (`runner.rs`).
fn gpu_ready(ctx: &Ctx, rule: &Rule, test: &Test, rec: &mut TrialRecord) -> Option<GpuRun> {
    let device = match ctx.runner.device_for(&test.name) {
        Ok(d) => d,
        Err(e) => {
            (rec.status, rec.message) = ctx.plan.unavailable(Tier::Gpu, e);
            return None;
        }
    };
    rec.environment = Some(environment_record(ctx, device));
    if let Err(why) =
        gridcheck_kernelgen::profile_runs_on(rule.profile, device.compute_capability.0)
    {
        rec.status = Status::NotSupported;
        rec.message = format!(
            "not run: {why}; {} has {}.{}",
            device.name, device.compute_capability.0, device.compute_capability.1
        );
        return None;
    }
    match ctx.runner.resolve(&ctx.plan, &rec.trial, test, device) {
        Ok((choice, run)) => {
            if let Some(env) = rec.environment.as_mut() {
                env.binary = Some(crate::binary::record(&choice));
            }
            Some(run)
        }
        Err((status, why)) => {
            rec.status = status;
            rec.message = format!("not run: {why}");
            None
        }
    }
}

/// Where a GPU trial runs, as its record says (the binary is added once
/// chosen).
fn environment_record(ctx: &Ctx, device: &DeviceInfo) -> Environment {
    let plan = &ctx.plan;
    Environment {
        gpu: device.name.clone(),
        sm: device.sm.clone(),
        driver: device.driver_version.clone(),
        nvcc: plan.toolkit(),
        driver_version: device.driver_release.clone(),
        tuning: Some(plan.tuned.tuning.clone()),
        tuning_file: plan.tuned.file.clone(),
        device: Some(crate::devices::record_device(device)),
        binary: None,
        toolchain: crate::binary::built_by(&plan.opts.kernels.root, &device.sm),
    }
}

fn gpu(ctx: &Ctx, test: &Test, l: &Litmus, run: &GpuRun, rec: &mut TrialRecord) {
    let (histogram, launch_failures, first_launch_error, elapsed_s, seed, stale) =
        match ctx.runner.hardware(&ctx.plan, run) {
            WorkerResult::Litmus {
                histogram,
                launch_failures,
                first_launch_error,
                elapsed_s,
                seed,
                stale,
                ..
            } => (
                histogram,
                launch_failures,
                first_launch_error,
                elapsed_s,
                seed,
                stale,
            ),
            other => {
                (rec.status, rec.message) =
                    worker_failure(&other, &rec.trial, Limits::of(ctx.plan.opts.timeout, test));
                rec.model = ctx.runner.model(&ctx.plan, &test.name, l).ok();
                return;
            }
        };
    // The judge is the model; when it gave no verdict (its own trial fails
    // and says why), the spec's expected verdict judges instead and no state
    // can be called unmodeled.
    let (verdict, modeled, note) = match ctx.runner.model(&ctx.plan, &test.name, l) {
        Ok(m) => {
            let states = m.states.iter().cloned().collect();
            let v = m.verdict;
            rec.model = Some(m);
            (v, states, String::new())
        }
        Err(e) => (
            l.expect,
            histogram.iter().map(|(s, _)| s.clone()).collect(),
            format!(
                " [the model gave no verdict ({e}); judged against the spec's `{}`]",
                l.expect
            ),
        ),
    };
    let histogram = histogram.into_iter().collect();
    let mut hw = match HardwareResult::classify(l, &histogram, &modeled) {
        Ok(h) => h,
        Err(e) => {
            rec.status = Status::Fail;
            rec.message = format!("cannot classify the histogram: {e}");
            return;
        }
    };
    hw.launch_failures = launch_failures;
    hw.first_launch_error = first_launch_error;
    hw.elapsed_s = elapsed_s;
    hw.seed = seed;
    hw.stale = stale;
    let d = diff(verdict, &hw);
    let instances = hw.instances;
    rec.status = d.status;
    rec.message = if d.findings.is_empty() {
        format!(
            "model {verdict}, hardware {} ({} instances){}{note}",
            hw.observation,
            hw.instances,
            stale_words(&hw)
        )
    } else {
        format!(
            "model {verdict}, hardware {}: {}{note}. Reproduce: cargo xtask conformance --tier gpu -- --exact {}",
            hw.observation,
            d.findings.join("; "),
            rec.trial
        )
    };
    rec.hardware = Some(hw);
    if rec.status == Status::QualityWarning {
        escalate(ctx, run, rec, instances, &note);
    }
}

/// The tile registers' stale words, for a trial's message: `; stale
/// words: ...` (nothing for a test without tiles).
fn stale_words(hw: &HardwareResult) -> String {
    if hw.stale.is_empty() {
        return String::new();
    }
    let each: Vec<String> = hw.stale.iter().map(|s| s.summary()).collect();
    format!("; stale words: {}", each.join("; "))
}

/// A quality warning escalated (`escalate.rs`), unless escalation is off or
/// a fact already says what it is (an `unobserved` outcome: the facts'
/// status stands).
fn escalate(ctx: &Ctx, run: &GpuRun, rec: &mut TrialRecord, suite: u64, note: &str) {
    let program = gridcheck_report::program_of(&ctx.plan.spec, &rec.trial);
    if ctx.plan.escalation.is_empty()
        || ctx.plan.facts.apply_to(rec, program).0 != Status::QualityWarning
    {
        return;
    }
    match ctx.runner.escalate(&ctx.plan.escalation, run) {
        Ok(e) => {
            (rec.status, rec.message) = crate::escalate::judge(&e, suite, note);
            rec.escalation = Some(e);
        }
        Err(why) => rec.message = format!("{}; {why}", rec.message),
    }
}

fn runtime(ctx: &Ctx, test: &Test, r: &RuntimeTest, run: &GpuRun, rec: &mut TrialRecord) {
    let reproduce = format!(
        "Reproduce: cargo xtask conformance --tier gpu -- --exact {}",
        rec.trial
    );
    let (status, message) = match (ctx.runner.hardware(&ctx.plan, run), &r.expect) {
        (WorkerResult::LoadFailure { code, message }, RuntimeExpect::LoadError { name, value }) => {
            if code == *value {
                (
                    Status::Pass,
                    format!("module load failed with {name} ({code}) as expected"),
                )
            } else {
                (
                    Status::Fail,
                    format!(
                        "module load should fail with {name} ({value}), it failed with {code}: {message}. {reproduce}"
                    ),
                )
            }
        }
        (WorkerResult::Runtime { .. }, RuntimeExpect::LoadError { name, value }) => (
            Status::Fail,
            format!(
                "module load should fail with {name} ({value}), but it loaded and ran. {reproduce}"
            ),
        ),
        (WorkerResult::Runtime { outputs, .. }, RuntimeExpect::Values(checks)) => {
            check_outputs(test, &r.outputs, checks, &outputs, &reproduce)
        }
        (other, _) => worker_failure(&other, &rec.trial, Limits::of(ctx.plan.opts.timeout, test)),
    };
    rec.status = status;
    rec.message = message;
}

fn host(ctx: &Ctx, test: &Test, run: &GpuRun, rec: &mut TrialRecord) {
    let TestBody::Host(h) = &test.body else {
        return;
    };
    let reproduce = format!(
        "Reproduce: cargo xtask conformance --tier gpu -- --exact {}",
        rec.trial
    );
    (rec.status, rec.message) = match ctx.runner.hardware(&ctx.plan, run) {
        WorkerResult::Runtime { outputs, .. } => {
            let checked = check_outputs(test, &h.outputs, &h.expect, &outputs, &reproduce);
            crate::host::allowed_outcomes(checked, &h.outputs, &h.may, &outputs)
        }
        other => worker_failure(&other, &rec.trial, Limits::of(ctx.plan.opts.timeout, test)),
    };
}

/// Compares a runtime or host test's outputs (`values[i]` is `names[i]`)
/// with its checks.
fn check_outputs(
    test: &Test,
    names: &[String],
    checks: &[(String, Check)],
    values: &[u32],
    reproduce: &str,
) -> (Status, String) {
    let mut wrong = Vec::new();
    if values.len() != names.len() {
        wrong.push(format!(
            "the run produced {} values for {} outputs",
            values.len(),
            names.len()
        ));
    }
    // Every output is shown, the checked ones with what they were checked
    // against when they disagree.
    let mut seen = Vec::new();
    for (name, &v) in names.iter().zip(values) {
        let check = checks.iter().find(|(n, _)| n == name).map(|(_, c)| c);
        let shown = match (cuda_error_name(v), check) {
            (Some(n), Some(c)) if c.text.contains("cuda") => format!("{v} ({n})"),
            _ => v.to_string(),
        };
        match check {
            Some(c) if !c.holds(v) => {
                wrong.push(format!("`{name}` is {shown}, expected {}", c.text))
            }
            Some(_) => seen.push(format!("{name}={shown}")),
            None => seen.push(format!("{name}={shown} (not checked)")),
        }
    }
    if wrong.is_empty() {
        (Status::Pass, seen.join(", "))
    } else {
        // A failure keeps the outputs that agreed too: they are the
        // evidence of what else held in the same run.
        let others = if seen.is_empty() {
            String::new()
        } else {
            format!("; the other outputs: {}", seen.join(", "))
        };
        (
            Status::Fail,
            format!(
                "DISAGREES with the guide: {}{others} (test at {}). {reproduce}",
                wrong.join("; "),
                test.origin
            ),
        )
    }
}

/// The status and message of a GPU run that produced no result to compare.
fn worker_failure(r: &WorkerResult, trial: &TrialId, limits: Limits) -> (Status, String) {
    let Limits {
        gpu_timeout,
        timeout,
    } = limits;
    let reproduce = format!("Reproduce: cargo xtask conformance --tier gpu -- --exact {trial}");
    match r {
        WorkerResult::Timeout {
            seconds,
            classified,
        } => (
            Status::Timeout,
            crate::timeouts::timeout_message(
                *seconds,
                gpu_timeout,
                classified.as_deref(),
                &reproduce,
            ),
        ),
        WorkerResult::Stalled { stall } => (
            Status::Timeout,
            crate::timeouts::stall_message(stall, timeout, &reproduce),
        ),
        WorkerResult::Crash { exit, stderr_tail } => (
            Status::Crash,
            format!("the worker process died ({exit}):\n{stderr_tail}\n{reproduce}"),
        ),
        WorkerResult::LoadFailure { code, message } => (
            Status::Fail,
            format!("the module failed to load ({code}): {message}. {reproduce}"),
        ),
        WorkerResult::Error { message } => (Status::Fail, format!("{message}. {reproduce}")),
        WorkerResult::NotRun { reason } => (Status::NotSupported, format!("not run: {reason}")),
        WorkerResult::Litmus { .. }
        | WorkerResult::Runtime { .. }
        | WorkerResult::Model(_)
        | WorkerResult::Judged { .. }
        | WorkerResult::MutantRuns(_)
        | WorkerResult::Escalated(_) => (
            Status::Fail,
            format!("the worker returned a result of the wrong kind. {reproduce}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A launch that stalled under the watch is a timeout that says where
    /// (and that it was not the timeout that ended it); a hang fact of the
    /// test makes it `known-hang`, as a timeout was.
    #[test]
    fn a_stall_is_a_timeout_that_says_where_and_a_hang_fact_covers_it() {
        let trial = TrialId::gpu("sm_90", "cdp2.memory.x", "t-one");
        let stall = "stall: launch 3 (after 192 instances completed in earlier launches): no \
                     status word changed for 2.0 s; kernel `tl` ran in 0 of 64";
        let limits = Limits {
            gpu_timeout: None,
            timeout: 60,
        };
        let r = WorkerResult::Stalled {
            stall: stall.into(),
        };
        let (status, msg) = worker_failure(&r, &trial, limits);
        assert_eq!(status, Status::Timeout);
        assert!(msg.starts_with(stall), "{msg}");
        assert!(msg.contains("not at the 60 s timeout"), "{msg}");
        assert!(msg.ends_with(&format!("--exact {trial}")), "{msg}");
        let facts = gridcheck_report::Facts {
            entries: gridcheck_report::Facts::parse(
                "[\"gpu/sm_90/t-one\"]\nkind = \"hang\"\nsummary = \"s\"\n\
                 depends_on = [\"driver\"]\nevidence = \"e\"\nmeasured = [{ gpu = \"G\", \
                 sm = \"sm_90\", driver = \"580.1\", date = \"2026-11-24\" }]\n",
                std::path::Path::new("facts/gpu.toml"),
                std::path::Path::new("."),
            )
            .unwrap(),
        };
        let mut rec = TrialRecord::new(trial.clone(), status, msg);
        rec.environment = Some(Environment {
            gpu: "G".into(),
            sm: "sm_90".into(),
            driver: "13.0".into(),
            nvcc: None,
            driver_version: Some("580.1".into()),
            tuning: None,
            tuning_file: None,
            device: None,
            binary: None,
            toolchain: None,
        });
        let (status, msg) = facts.apply(&rec);
        assert_eq!(status, Status::KnownHang, "{msg}");
        assert!(msg.contains(stall), "{msg}");
        // Another test's stall is no known hang.
        rec.trial = TrialId::gpu("sm_90", "cdp2.memory.x", "t-two");
        assert_eq!(facts.apply(&rec).0, Status::Timeout);
    }

    /// A failed output check names what disagreed and keeps every other
    /// output as evidence; a pass lists them all.
    #[test]
    fn a_failure_keeps_the_outputs_that_agreed() {
        let yaml = gridcheck_fixture::OneRule::new().id("cdp2.t.r").tests("  - name: h\n    kind: host\n    source: \"int main() { return 0; }\"\n    outputs: [a, b, c]\n    expect:\n      a: 1\n      b: cudaSuccess\n").yaml();
        let spec =
            gridcheck_spec::load_sources(&[(std::path::PathBuf::from("spec/x.yaml"), yaml)], None)
                .unwrap_or_else(|e| panic!("{e}"));
        let test = &spec.tests[0];
        let gridcheck_spec::TestBody::Host(h) = &test.body else {
            panic!("a host test")
        };
        let (status, msg) = check_outputs(test, &h.outputs, &h.expect, &[1, 0, 7], "R");
        assert_eq!(status, Status::Pass, "{msg}");
        assert_eq!(msg, "a=1, b=0 (cudaSuccess), c=7 (not checked)");
        let (status, msg) = check_outputs(test, &h.outputs, &h.expect, &[2, 0, 7], "R");
        assert_eq!(status, Status::Fail);
        assert!(
            msg.starts_with("DISAGREES with the guide: `a` is 2, expected 1; "),
            "{msg}"
        );
        assert!(
            msg.contains("the other outputs: b=0 (cudaSuccess), c=7 (not checked)"),
            "{msg}"
        );
        let (_, msg) = check_outputs(test, &h.outputs, &h.expect, &[2], "R");
        assert!(
            msg.contains("the run produced 1 values for 3 outputs"),
            "{msg}"
        );
    }
}
