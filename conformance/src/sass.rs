//! The machine-code tier (`--tier sass`, no GPU): every generated litmus
//! kernel that runs a PDL or launch primitive, and every user program of
//! `kernels/sass/programs.toml`, compiled by the run's toolchain for each
//! architecture of `--sass-arch` with `-lineinfo`, disassembled with
//! `nvdisasm -c -gi`, and each modeled thread's operations checked to keep
//! their program order around the primitives (`gridcheck_sass`).
//!
//! Trials: `sass/<toolchain>/<sm>/<rule>/<test>` (one per rule that lists
//! the test, one compile and check per test) and
//! `sass/<toolchain>/<target>/user/<program>` (a program's own `targets`
//! may name a virtual architecture, `compute_80`: its PTX is checked for
//! the PDL wait's presence). A PDL secondary whose code has no wait fails
//! (`MISSING WAIT`) unless its manifest expects that. A violation fails with both
//! instructions, their addresses and source lines; a pair the tier cannot
//! decide (a loop, predication, an operation with no instruction of its
//! class) makes the trial not-supported with the reason, never a pass.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use gridcheck_kernelgen::test_hash;
use gridcheck_report::{CompileSummary, Status, TrialId, TrialRecord, USER_PROGRAMS};
use gridcheck_sass::programs::{Judgement, PROGRAMS_DIR, Program, is_ptx_target};
use gridcheck_spec::{Test, TestBody};
use gridcheck_toolchain::Toolchain;
use libtest_mimic::Trial;

use crate::cache::Cache;
use crate::ctx::Ctx;
use crate::tiers::conclude;

/// The outcome of one compile and check, shared by every rule's trial.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub status: Status,
    pub message: String,
    pub compile: Option<CompileSummary>,
}

/// Whether a litmus test's generated kernel runs a PDL or launch
/// primitive (read from its generated file).
fn has_primitive(root: &Path, test: &Test) -> bool {
    let src = root
        .join(gridcheck_kernelgen::GENERATED_DIR)
        .join(gridcheck_kernelgen::file_name(test));
    std::fs::read_to_string(src)
        .ok()
        .and_then(|s| gridcheck_sass::generated::parse(&s).ok())
        .is_some_and(|ks| ks.iter().any(|k| k.has_primitive()))
}

/// The machine-code trials of the spec and the user programs.
pub(crate) fn trials(ctx: &Arc<Ctx>) -> Vec<Trial> {
    let tc = match &ctx.plan.toolchain {
        Ok(t) => t.clone(),
        Err(e) if ctx.plan.required(gridcheck_report::Tier::Sass) => {
            // GRIDCHECK_REQUIRE_TIERS names the tier: its absence fails.
            let msg = format!("the sass tier cannot run: {e}");
            return vec![
                Trial::test("sass/unavailable", move || Err(msg.clone().into())).with_kind("sass"),
            ];
        }
        Err(e) => {
            eprintln!("note: the sass tier will not run: {e}");
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    let root = &ctx.plan.opts.root;
    let arches = arches(&ctx.plan.opts.sass_arches, &tc);
    // One compile and check a test key, shared by every rule's trial.
    let outcomes: Arc<Cache<Outcome>> = Arc::default();
    for (rule, test) in ctx.plan.spec.pairs() {
        if !matches!(test.body, TestBody::Litmus(_)) || !has_primitive(root, test) {
            continue;
        }
        for arch in &arches {
            if let Ok(Some(_)) = gridcheck_kernelgen::build_plan(test, arch) {
                let id = TrialId::sass(&tc.name, arch, &rule.id, &test.name);
                out.push(trial(ctx, &outcomes, id, Some(test_hash(test))));
            }
        }
    }
    match programs(root) {
        Ok(progs) => {
            for p in progs {
                for target in p.trial_targets(&arches) {
                    let id = TrialId::sass(&tc.name, &target, USER_PROGRAMS, &p.name);
                    out.push(trial(ctx, &outcomes, id, None));
                }
            }
        }
        Err(e) => {
            // A broken manifest fails the run's one trial that names it.
            let id = TrialId::sass(&tc.name, "sm_90", USER_PROGRAMS, "manifest");
            let ctx = Arc::clone(ctx);
            out.push(
                Trial::ignorable_test(id.to_string(), move || {
                    let rec = TrialRecord::new(id, Status::Fail, e.clone());
                    ctx.sink.record(rec);
                    Err(e.clone().into())
                })
                .with_kind("sass"),
            );
        }
    }
    out
}

/// The tier's architectures: `--sass-arch` as given, or for `all` every
/// real architecture the toolchain's nvcc targets (each test still only
/// where its plan allows: PDL from sm_90, CDP1 below it).
fn arches(asked: &[String], tc: &Toolchain) -> Vec<String> {
    if asked.iter().any(|a| a == "all") {
        let (v, note) = tc.nvcc.gpu_archs();
        if let Some(n) = note {
            eprintln!("note: {n}");
        }
        v
    } else {
        asked.to_vec()
    }
}

fn programs(root: &Path) -> Result<Vec<Program>, String> {
    gridcheck_sass::programs::load(&root.join(PROGRAMS_DIR))
}

fn trial(
    ctx: &Arc<Ctx>,
    outcomes: &Arc<Cache<Outcome>>,
    id: TrialId,
    hash: Option<String>,
) -> Trial {
    let ctx = Arc::clone(ctx);
    let outcomes = Arc::clone(outcomes);
    Trial::ignorable_test(id.to_string(), move || {
        if let Some(r) = ctx.sink.resumed(&id) {
            return conclude(r.status, &format!("{} (from the previous run)", r.message));
        }
        let o = outcomes.get_or(&id.test_key().to_string(), || run(&ctx, &id));
        let mut rec = TrialRecord::new(id.clone(), o.status, o.message);
        let commit = ctx.plan.commit.clone();
        (rec.test_hash, rec.commit, rec.compile) = (hash.clone(), commit, o.compile);
        (rec.status, rec.message) = ctx.plan.facts.apply(&rec);
        let result = conclude(rec.status, &rec.message);
        ctx.sink.record(rec);
        result
    })
    .with_kind("sass")
}

fn not_run(why: String) -> Outcome {
    Outcome {
        status: Status::NotSupported,
        message: format!("not run: {why}"),
        compile: None,
    }
}

/// Compiles, disassembles and checks one test or program.
fn run(ctx: &Ctx, id: &TrialId) -> Outcome {
    let tc = match &ctx.plan.toolchain {
        Ok(t) => t,
        Err(e) => return not_run(e.clone()),
    };
    let root = &ctx.plan.opts.root;
    let Some(dis) = gridcheck_toolchain::disassembler(root, tc) else {
        if ctx.plan.required(gridcheck_report::Tier::Sass) {
            return fail(format!(
                "toolchain {} has no nvdisasm and no other toolchain has one (GRIDCHECK_REQUIRE_TIERS names sass)",
                tc.name
            ));
        }
        return not_run(format!(
            "toolchain {} has no nvdisasm and no other toolchain has one (cargo xtask toolchain install 13.5)",
            tc.name
        ));
    };
    let arch = id.sm.clone().unwrap_or_default();
    let work = root
        .join("target/gridcheck/sass")
        .join(&tc.name)
        .join(&arch);
    if let Err(e) = std::fs::create_dir_all(&work) {
        return not_run(format!("cannot create {}: {e}", work.display()));
    }
    let (src, flags, program) = match source(ctx, id, &arch) {
        Ok(s) => s,
        Err(o) => return *o,
    };
    let include = root.join(gridcheck_kernelgen::INCLUDE_DIR);
    if let Some(p) = program.as_ref().filter(|_| is_ptx_target(&arch)) {
        return ptx(ctx, p, &src, &include, &arch, &flags, &work);
    }
    let cubin = work.join(format!("{}.cubin", id.test));
    let out = tc
        .nvcc
        .compile_lineinfo_cubin(&src, &include, &arch, &flags, &cubin);
    let compile = Some(CompileSummary {
        nvcc: tc.nvcc.version.clone(),
        command: out.command.clone(),
        success: out.success,
        output: out.output.clone(),
        toolchain: Some(ctx.plan.toolchain_record(Some(&dis))),
    });
    let with = |status, message| Outcome {
        status,
        message,
        compile: compile.clone(),
    };
    if !out.success {
        return with(
            Status::Fail,
            format!(
                "nvcc {} does not compile {} for {arch}:\n{}\n$ {}",
                tc.nvcc.version,
                src.display(),
                out.output.trim(),
                out.command
            ),
        );
    }
    let funcs = match gridcheck_sass::disassemble(&dis, &cubin) {
        Ok(f) => f,
        Err(e) => return with(Status::Fail, e),
    };
    let file = src
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let head = format!(
        "nvcc {} {arch}, {}",
        tc.nvcc.version,
        describe_dis(&dis, tc)
    );
    match program {
        Some(p) => {
            let text = std::fs::read_to_string(&src).unwrap_or_default();
            match gridcheck_sass::programs::check_program(&p, &arch, &text, &file, &funcs) {
                Ok((status, msg)) => with(status_of(status), format!("{head}: {msg}")),
                Err(e) => with(Status::Fail, e),
            }
        }
        None => {
            let text = match std::fs::read_to_string(&src) {
                Ok(t) => t,
                Err(e) => return with(Status::Fail, format!("cannot read {}: {e}", src.display())),
            };
            match gridcheck_sass::check_generated(&text, &file, &funcs) {
                Ok(results) => {
                    let (status, msg) = gridcheck_sass::programs::summarize(&results);
                    with(status_of(status), format!("{head}: {msg}"))
                }
                Err(e) => with(Status::Fail, e),
            }
        }
    }
}

/// What a trial compiles: the source file, the flags and, for a user
/// program, the program; or the trial's outcome when there is nothing to.
fn source(
    ctx: &Ctx,
    id: &TrialId,
    arch: &str,
) -> Result<(PathBuf, Vec<String>, Option<Program>), Box<Outcome>> {
    let root = &ctx.plan.opts.root;
    if id.rule == USER_PROGRAMS {
        let progs = match programs(root) {
            Ok(p) => p,
            Err(e) => return Err(Box::new(fail(e))),
        };
        let Some(p) = progs.into_iter().find(|p| p.name == id.test) else {
            return Err(Box::new(fail(format!("no user program `{}`", id.test))));
        };
        Ok((
            root.join(PROGRAMS_DIR).join(&p.file),
            p.flags.clone(),
            Some(p),
        ))
    } else {
        let Some(test) = ctx.plan.spec.test(&id.test) else {
            return Err(Box::new(fail(format!("no test `{}`", id.test))));
        };
        let flags = match gridcheck_kernelgen::build_plan(test, arch) {
            Ok(Some(f)) => f,
            Ok(None) => return Err(Box::new(not_run("the test has no kernel".into()))),
            Err(e) => return Err(Box::new(not_run(e))),
        };
        let src = root
            .join(gridcheck_kernelgen::GENERATED_DIR)
            .join(gridcheck_kernelgen::file_name(test));
        Ok((src, flags, None))
    }
}

/// A program's PTX for a virtual architecture (`compute_80`), checked for
/// its kernel's wait: `nvcc -arch=compute_80 -rdc=true -ptx`, as a build
/// that ships PTX for the driver to JIT-compile makes it.
fn ptx(
    ctx: &Ctx,
    p: &Program,
    src: &Path,
    include: &Path,
    arch: &str,
    flags: &[String],
    work: &Path,
) -> Outcome {
    let Ok(tc) = &ctx.plan.toolchain else {
        return not_run("no toolchain".into());
    };
    let file = work.join(format!("{}.ptx", p.name));
    let out = tc.nvcc.compile_ptx(src, include, arch, flags, &file);
    let compile = Some(CompileSummary {
        nvcc: tc.nvcc.version.clone(),
        command: out.command.clone(),
        success: out.success,
        output: out.output.clone(),
        toolchain: Some(ctx.plan.toolchain_record(None)),
    });
    let with = |status, message| Outcome {
        status,
        message,
        compile: compile.clone(),
    };
    if !out.success {
        return with(
            Status::Fail,
            format!(
                "nvcc {} does not compile {} to PTX for {arch}:\n{}\n$ {}",
                tc.nvcc.version,
                src.display(),
                out.output.trim(),
                out.command
            ),
        );
    }
    let text = match std::fs::read_to_string(&file) {
        Ok(t) => t,
        Err(e) => return with(Status::Fail, format!("cannot read {}: {e}", file.display())),
    };
    match gridcheck_sass::programs::check_program_ptx(p, arch, &text) {
        Ok((j, msg)) => with(
            status_of(j),
            format!("nvcc {} {arch} PTX: {msg}", tc.nvcc.version),
        ),
        Err(e) => with(Status::Fail, format!("{}: {e}", file.display())),
    }
}

fn describe_dis(dis: &Path, tc: &Toolchain) -> String {
    if tc.nvdisasm.as_deref() == Some(dis) {
        "its nvdisasm".into()
    } else {
        format!("nvdisasm {}", dis.display())
    }
}

fn status_of(j: Judgement) -> Status {
    match j {
        Judgement::Pass => Status::Pass,
        Judgement::Fail => Status::Fail,
        Judgement::NotChecked => Status::NotSupported,
    }
}

fn fail(message: String) -> Outcome {
    Outcome {
        status: Status::Fail,
        message,
        compile: None,
    }
}
