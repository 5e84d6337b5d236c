//! One function a tier: what a trial of that tier does and what it records.

use std::sync::Arc;

use gridcheck_gpu::DeviceInfo;
use gridcheck_kernelgen::test_hash;
use gridcheck_report::{
    CompileSummary, Environment, HardwareResult, ModelSummary, Status, TrialId, TrialRecord, diff,
};
use gridcheck_spec::{
    Check, CompileExpect, CompileTest, HostTest, Litmus, Rule, RuntimeExpect, RuntimeTest, Test,
    TestBody, cuda_error_name,
};
use libtest_mimic::Trial;

use crate::worker::WorkerResult;
use crate::{Ctx, Tier, conclude};

pub(crate) fn trial(ctx: &Arc<Ctx>, tier: Tier, rule: &Rule, test: &Test) -> Option<Trial> {
    let id = match (tier, &test.body) {
        (Tier::Model, TestBody::Litmus(_)) => TrialId::model(&rule.id, &test.name),
        (Tier::Static, TestBody::Compile(_)) => TrialId::compile(&rule.id, &test.name),
        (Tier::Gpu, TestBody::Litmus(_) | TestBody::Runtime(_) | TestBody::Host(_)) => {
            TrialId::gpu(&ctx.sm(), &rule.id, &test.name)
        }
        _ => return None,
    };
    // A tier this machine cannot run at all is ignored when the trials are
    // made, so that every runner (libtest, nextest) shows it as skipped; its
    // record, with the reason, is written after the run.
    let unavailable = match tier {
        Tier::Gpu if !required(&ctx.opts, Tier::Gpu) => ctx.device.as_ref().err(),
        Tier::Static if !required(&ctx.opts, Tier::Static) => ctx.nvcc().err(),
        _ => None,
    };
    if let Some(reason) = unavailable {
        let mut rec = TrialRecord::new(
            id.clone(),
            Status::NotSupported,
            format!("not run: {reason}"),
        );
        (rec.test_hash, rec.commit) = (Some(test_hash(test)), ctx.commit.clone());
        ctx.skipped(rec);
    }
    let ctx = Arc::clone(ctx);
    Some(
        Trial::ignorable_test(id.to_string(), move || {
            if let Some(r) = ctx.resumed(&id) {
                return conclude(r.status, &format!("{} (from the previous run)", r.message));
            }
            let rule = ctx.spec.rule(&id.rule).expect("trial built from this spec");
            let test = ctx.spec.test(&id.test).expect("trial built from this spec");
            let mut rec = TrialRecord::new(id, Status::NotRun, "");
            (rec.test_hash, rec.commit) = (Some(test_hash(test)), ctx.commit.clone());
            match &test.body {
                TestBody::Litmus(l) if tier == Tier::Model => model(&ctx, rule, test, l, &mut rec),
                TestBody::Litmus(l) => {
                    if gpu_ready(&ctx, rule, test, &mut rec).is_some() {
                        gpu(&ctx, test, l, &mut rec)
                    }
                }
                TestBody::Runtime(r) => {
                    if gpu_ready(&ctx, rule, test, &mut rec).is_some() {
                        runtime(&ctx, test, r, &mut rec)
                    }
                }
                TestBody::Host(h) => {
                    if gpu_ready(&ctx, rule, test, &mut rec).is_some() {
                        host(&ctx, test, h, &mut rec)
                    }
                }
                TestBody::Compile(c) => compile(&ctx, test, c, &mut rec),
            }
            (rec.status, rec.message) = ctx.facts.apply(&rec);
            let result = conclude(rec.status, &rec.message);
            ctx.record(rec);
            result
        })
        .with_kind(tier.as_str())
        .with_ignored_flag(unavailable.is_some()),
    )
}

fn model_summary(ctx: &Ctx, test: &Test) -> Result<ModelSummary, String> {
    ctx.model(&test.name)
}

fn model(ctx: &Ctx, rule: &Rule, test: &Test, l: &Litmus, rec: &mut TrialRecord) {
    match model_summary(ctx, test) {
        Err(e) => {
            rec.status = Status::Fail;
            rec.message = format!(
                "rule {} ({}), test {} ({}): the model failed: {e}",
                rule.id, rule.origin, test.name, test.origin
            );
        }
        Ok(m) => {
            let bound = m
                .preemption_bound
                .map(|b| format!(", preemption bound {b}"))
                .unwrap_or_default();
            let oracles = m
                .oracles
                .as_ref()
                .map(|o| {
                    let lb = o
                        .load_buffering_verdict
                        .map(|v| {
                            format!(
                                "; with load buffering allowed (the PTX reading) it would be {v}"
                            )
                        })
                        .unwrap_or_default();
                    format!(
                        "decided by {} ({} candidates): {}{lb}",
                        o.decided_by, o.candidates, o.note
                    )
                })
                .unwrap_or_default();
            let order = l.observables();
            let show = |states: &[gridcheck_spec::State]| {
                states
                    .iter()
                    .map(|s| format!("[{}]", gridcheck_spec::render_state(&order, s)))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            if let Some(o) = m.oracles.as_ref().filter(|o| o.agreement == "conflict") {
                rec.status = Status::OracleConflict;
                rec.message = format!(
                    "rule {} ({}), test {} ({}): the oracles disagree, no verdict can be trusted: \
                     loom {} / axiomatic {}; {}\nonly loom reaches: {}\nonly the axiomatic model \
                     reaches: {}",
                    rule.id,
                    rule.origin,
                    test.name,
                    test.origin,
                    o.loom_verdict
                        .map(|v| v.to_string())
                        .or(o.loom_error.clone())
                        .unwrap_or_default(),
                    o.axiomatic_verdict
                        .map(|v| v.to_string())
                        .or(o.axiomatic_error.clone())
                        .unwrap_or_default(),
                    o.note,
                    show(&o.only_loom),
                    show(&o.only_axiomatic),
                );
            } else if m.verdict == l.expect {
                rec.status = Status::Pass;
                rec.message = format!(
                    "{} ({} states, {} executions{bound}, {:.2} s; {oracles})",
                    m.verdict,
                    m.states.len(),
                    m.executions,
                    m.elapsed_s
                );
            } else {
                rec.status = Status::Fail;
                rec.message = format!(
                    "rule {} ({}), test {} ({}): the spec expects `{}` but the model says `{}` for `{}` ({} reachable states{bound}; {oracles})",
                    rule.id,
                    rule.origin,
                    test.name,
                    test.origin,
                    l.expect,
                    m.verdict,
                    l.condition,
                    m.states.len()
                );
            }
            rec.model = Some(m);
        }
    }
}

/// Whether a tier that cannot run here is an error rather than ignored:
/// `--tier` named it, or `GRIDCHECK_REQUIRE_TIERS` (comma-separated tiers)
/// lists it (CI sets it for the static and sass tiers so that a broken
/// toolkit install cannot pass silently).
pub(crate) fn required(opts: &crate::Options, tier: Tier) -> bool {
    (opts.tiers_given && opts.runs(tier))
        || std::env::var("GRIDCHECK_REQUIRE_TIERS")
            .is_ok_and(|v| v.split(',').any(|t| t.trim() == tier.as_str()))
}

/// The first required tier this machine cannot run, and why: the harness
/// then stops before any trial, recording nothing.
pub(crate) fn required_but_unavailable(ctx: &Ctx) -> Option<String> {
    [
        (Tier::Static, ctx.nvcc().err()),
        (Tier::Gpu, ctx.device.as_ref().err()),
        (Tier::Sass, ctx.toolchain.as_ref().err()),
    ]
    .into_iter()
    .filter(|(t, _)| ctx.opts.runs(*t) && required(&ctx.opts, *t))
    .find_map(|(t, e)| {
        e.map(|e| {
            format!(
                "the {} tier was asked for and cannot run here: {e}",
                t.as_str()
            )
        })
    })
}

/// Records that a tier cannot run here: not-supported, or a failure when
/// the tier is required.
fn unavailable(rec: &mut TrialRecord, opts: &crate::Options, tier: Tier, reason: &str) {
    rec.status = if required(opts, tier) {
        Status::Fail
    } else {
        Status::NotSupported
    };
    rec.message = format!("not run: {reason}");
}

fn compile(ctx: &Ctx, test: &Test, c: &CompileTest, rec: &mut TrialRecord) {
    let nvcc = match ctx.nvcc() {
        Ok(n) => n,
        Err(e) => {
            unavailable(rec, &ctx.opts, Tier::Static, e);
            return;
        }
    };
    let workdir = ctx
        .opts
        .root
        .join("target/gridcheck/static")
        .join(&test.name);
    let out = match nvcc.check_snippet(&test.name, &c.source, &c.arch, &c.flags, &workdir) {
        Ok(o) => o,
        Err(e) => {
            rec.status = Status::Fail;
            rec.message = e;
            return;
        }
    };
    let warned = out.output.contains("warning");
    let (ok, what) = match &c.expect {
        CompileExpect::Accept => (
            out.success && !warned,
            "accepted without warnings".to_string(),
        ),
        CompileExpect::Reject { diagnostic } => (
            !out.success && out.output.contains(diagnostic.as_str()),
            format!("rejected with `{diagnostic}`"),
        ),
        CompileExpect::Warn { diagnostic } => (
            out.success && out.output.contains(diagnostic.as_str()),
            format!("accepted with the warning `{diagnostic}`"),
        ),
    };
    rec.status = if ok { Status::Pass } else { Status::Fail };
    rec.message = if ok {
        format!("nvcc {}: {what}", nvcc.version)
    } else {
        format!(
            "nvcc {} should have {what}, but it {} (test at {}):\n{}\n$ {}",
            nvcc.version,
            if out.success {
                "accepted it"
            } else {
                "rejected it"
            },
            test.origin,
            out.output.trim(),
            out.command
        )
    };
    rec.compile = Some(CompileSummary {
        nvcc: nvcc.version.clone(),
        command: out.command,
        success: out.success,
        output: out.output,
        toolchain: Some(ctx.toolchain_record(None)),
    });
}

/// The checks every GPU trial makes first: a device, a suitable compute
/// capability, a binary that runs on it (`binary.rs`: the exact cubin, a
/// compatible one, or the PTX). Records why not and returns `None` when the
/// trial cannot run.
fn gpu_ready<'a>(
    ctx: &'a Ctx,
    rule: &Rule,
    test: &Test,
    rec: &mut TrialRecord,
) -> Option<&'a DeviceInfo> {
    let device = match ctx.device_for(&test.name) {
        Ok(d) => d,
        Err(e) => {
            unavailable(rec, &ctx.opts, Tier::Gpu, e);
            return None;
        }
    };
    rec.environment = Some(Environment {
        gpu: device.name.clone(),
        sm: device.sm.clone(),
        driver: device.driver_version.clone(),
        nvcc: ctx.toolkit(),
        driver_version: device.driver_release.clone(),
        tuning: Some(ctx.opts.environment.clone()),
        tuning_file: ctx.opts.tuning_file.clone(),
        device: Some(crate::devices::record_device(device)),
        binary: None,
        // The toolchain that built the kernels (`cargo xtask build` writes
        // it beside them); none for kernels built before it did.
        toolchain: gridcheck_report::ToolchainRecord::read_from(&ctx.opts.cubins.join(&device.sm))
            .ok()
            .flatten(),
    });
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
    match crate::binary::choose_status(&ctx.opts, device, test) {
        Ok(c) => {
            if let Some(env) = rec.environment.as_mut() {
                env.binary = Some(crate::binary::record(&c));
            }
        }
        Err((status, why)) => {
            rec.status = status;
            rec.message = format!("not run: {why}");
            return None;
        }
    }
    Some(device)
}

fn gpu(ctx: &Ctx, test: &Test, l: &Litmus, rec: &mut TrialRecord) {
    let (histogram, launch_failures, first_launch_error, elapsed_s, seed) =
        match ctx.hardware(&test.name) {
            WorkerResult::Litmus {
                histogram,
                launch_failures,
                first_launch_error,
                elapsed_s,
                seed,
                ..
            } => (
                histogram,
                launch_failures,
                first_launch_error,
                elapsed_s,
                seed,
            ),
            other => {
                (rec.status, rec.message) = worker_failure(&other, &rec.trial, test.gpu_timeout);
                rec.model = model_summary(ctx, test).ok();
                return;
            }
        };
    // The judge is the model; when it gave no verdict (its own trial fails
    // and says why), the spec's expected verdict judges instead and no state
    // can be called unmodeled.
    let (verdict, modeled, note) = match model_summary(ctx, test) {
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
    let d = diff(verdict, &hw);
    rec.status = d.status;
    rec.message = if d.findings.is_empty() {
        format!(
            "model {verdict}, hardware {} ({} instances){note}",
            hw.observation, hw.instances
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
}

fn runtime(ctx: &Ctx, test: &Test, r: &RuntimeTest, rec: &mut TrialRecord) {
    let reproduce = format!(
        "Reproduce: cargo xtask conformance --tier gpu -- --exact {}",
        rec.trial
    );
    let (status, message) = match (ctx.hardware(&test.name), &r.expect) {
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
        (other, _) => worker_failure(&other, &rec.trial, test.gpu_timeout),
    };
    rec.status = status;
    rec.message = message;
}

fn host(ctx: &Ctx, test: &Test, h: &HostTest, rec: &mut TrialRecord) {
    let reproduce = format!(
        "Reproduce: cargo xtask conformance --tier gpu -- --exact {}",
        rec.trial
    );
    (rec.status, rec.message) = match ctx.hardware(&test.name) {
        WorkerResult::Runtime { outputs, .. } => {
            let checked = check_outputs(test, &h.outputs, &h.expect, &outputs, &reproduce);
            crate::host::allowed_outcomes(checked, &h.outputs, &h.may, &outputs)
        }
        other => worker_failure(&other, &rec.trial, test.gpu_timeout),
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
/// `gpu_timeout` is the test's own (`gpu_timeout:`), which a timeout names.
fn worker_failure(r: &WorkerResult, trial: &TrialId, gpu_timeout: Option<u64>) -> (Status, String) {
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
        | WorkerResult::MutantRuns(_) => (
            Status::Fail,
            format!("the worker returned a result of the wrong kind. {reproduce}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
