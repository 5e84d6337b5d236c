//! One function a tier: what a trial of that tier does and what it records.

use std::sync::Arc;

use gridcheck_kernelgen::test_hash;
use gridcheck_report::{CompileSummary, ModelSummary, Status, Tier, TrialId, TrialRecord};
use gridcheck_spec::{CompileExpect, CompileTest, Litmus, Rule, Test, TestBody};
use libtest_mimic::{Completion, Failed, Trial};

use crate::ctx::Ctx;
use crate::gpu_tier;

/// Turns a status into libtest's terms: failures fail, statuses that did not
/// run are ignored with their reason, the rest pass.
pub fn conclude(status: Status, message: &str) -> Result<Completion, Failed> {
    match status {
        Status::Pass
        | Status::QualityWarning
        | Status::Xfail
        | Status::Known
        | Status::KnownHang
        | Status::Changed => Ok(Completion::Completed),
        Status::NotSupported | Status::NotRun => Ok(Completion::ignored_with(message)),
        Status::Fail
        | Status::OracleConflict
        | Status::Timeout
        | Status::Crash
        | Status::Unmodeled => Err(message.into()),
    }
}

/// The trial of `test` for `rule` on `tier`, if the tier has one.
pub fn trial(ctx: &Arc<Ctx>, tier: Tier, rule: &Rule, test: &Test) -> Option<Trial> {
    let id = match (tier, &test.body) {
        (Tier::Model, TestBody::Litmus(_)) => TrialId::model(&rule.id, &test.name),
        (Tier::Static, TestBody::Compile(_)) => TrialId::compile(&rule.id, &test.name),
        (Tier::Gpu, TestBody::Litmus(_) | TestBody::Runtime(_) | TestBody::Host(_)) => {
            TrialId::gpu(&ctx.runner.sm(), &rule.id, &test.name)
        }
        _ => return None,
    };
    // A tier this machine cannot run at all is ignored when the trials are
    // made, so that every runner (libtest, nextest) shows it as skipped; its
    // record, with the reason, is written after the run.
    let unavailable = match tier {
        Tier::Gpu if !ctx.plan.required(Tier::Gpu) => ctx.runner.device.as_ref().err(),
        Tier::Static if !ctx.plan.required(Tier::Static) => ctx.plan.nvcc().err(),
        _ => None,
    };
    if let Some(reason) = unavailable {
        let mut rec = TrialRecord::new(
            id.clone(),
            Status::NotSupported,
            format!("not run: {reason}"),
        );
        (rec.test_hash, rec.commit) = (Some(test_hash(test)), ctx.plan.commit.clone());
        ctx.sink.skipped(rec);
    }
    let ctx = Arc::clone(ctx);
    Some(
        Trial::ignorable_test(id.to_string(), move || {
            if let Some(r) = ctx.sink.resumed(&id) {
                return conclude(r.status, &format!("{} (from the previous run)", r.message));
            }
            let rec = run(&ctx, id);
            let result = conclude(rec.status, &rec.message);
            ctx.sink.record(rec);
            result
        })
        .with_kind(tier.as_str())
        .with_ignored_flag(unavailable.is_some()),
    )
}

/// Runs one trial and judges it by the facts: its record.
fn run(ctx: &Ctx, id: TrialId) -> TrialRecord {
    let spec = &ctx.plan.spec;
    let rule = spec.rule(&id.rule).expect("trial built from this spec");
    let test = spec.test(&id.test).expect("trial built from this spec");
    let tier = id.tier;
    let mut rec = TrialRecord::new(id, Status::NotRun, "");
    (rec.test_hash, rec.commit) = (Some(test_hash(test)), ctx.plan.commit.clone());
    match &test.body {
        TestBody::Litmus(l) if tier == Tier::Model => model(ctx, rule, test, l, &mut rec),
        TestBody::Compile(c) => compile(ctx, test, c, &mut rec),
        _ => gpu_tier::run(ctx, rule, test, &mut rec),
    }
    let program = gridcheck_report::program_of(spec, &rec.trial);
    (rec.status, rec.message) = ctx.plan.facts.apply_to(&rec, program);
    rec
}

/// The model's outcome for a litmus test (computed once a test).
fn model_summary(ctx: &Ctx, test: &Test, l: &Litmus) -> Result<ModelSummary, String> {
    ctx.runner.model(&ctx.plan, &test.name, l)
}

fn model(ctx: &Ctx, rule: &Rule, test: &Test, l: &Litmus, rec: &mut TrialRecord) {
    match model_summary(ctx, test, l) {
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

/// The first required tier this machine cannot run, and why: the harness
/// then stops before any trial, recording nothing.
pub fn required_but_unavailable(ctx: &Ctx) -> Option<String> {
    [
        (Tier::Static, ctx.plan.nvcc().err()),
        (Tier::Gpu, ctx.runner.device.as_ref().err()),
        (Tier::Sass, ctx.plan.toolchain.as_ref().err()),
    ]
    .into_iter()
    .filter(|(t, _)| ctx.plan.opts.runs(*t) && ctx.plan.required(*t))
    .find_map(|(t, e)| e.cloned().map(|e| (t, e)))
    .or_else(|| {
        let t = Tier::Library;
        (ctx.plan.opts.runs(t) && ctx.plan.required(t))
            .then(|| crate::library::unavailable(ctx).map(|e| (t, e)))
            .flatten()
    })
    .map(|(t, e)| {
        format!(
            "the {} tier was asked for and cannot run here: {e}",
            t.as_str()
        )
    })
}

fn compile(ctx: &Ctx, test: &Test, c: &CompileTest, rec: &mut TrialRecord) {
    let nvcc = match ctx.plan.nvcc() {
        Ok(n) => n,
        Err(e) => {
            (rec.status, rec.message) = ctx.plan.unavailable(Tier::Static, e);
            return;
        }
    };
    let workdir = ctx
        .plan
        .opts
        .root
        .join("target/gridcheck/static")
        .join(&test.name);
    let out = match ctx.runner.compiled(&test.name, || {
        nvcc.check_snippet(&test.name, &c.source, &c.arch, &c.flags, &workdir)
    }) {
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
        toolchain: Some(ctx.plan.toolchain_record(None)),
    });
}
