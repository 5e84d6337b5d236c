//! The site's *Real-world shapes* page (`shapes.md`), from
//! `spec/shapes.yaml` (`gridcheck_spec::shapes`): each shape in which public
//! code has failed with PDL, its public source, and what covers it:
//!
//! - the spec's tests, each with the rules that list it (linked), what the
//!   spec says of it (a litmus test's verdict, a program's expected and
//!   allowed outputs) and the newest recorded run of each GPU (a badge and
//!   the outputs);
//! - the machine-code tier's user programs (`kernels/sass/programs.toml`),
//!   each with its summary, its targets and where its guard removes the wait,
//!   and the newest recorded status of each of its trials, by target and
//!   toolchain (a no-GPU record too).
//!
//! A shape's test or program that the spec or the manifest lacks, or that no
//! run has recorded, is said so on the page, never left out.

use std::collections::BTreeMap;

use gridcheck_report::{Tier, TrialRecord, USER_PROGRAMS};
use gridcheck_sass::programs::Program;
use gridcheck_spec::shapes::Shape;
use gridcheck_spec::{Check, Test, TestBody};

use crate::context::Ctx;
use crate::fragments::status_of;
use crate::results::{Run, run_order};
use crate::text::{badge, cell, code, html, prose, rule_path};

pub(crate) fn page(ctx: &Ctx) -> String {
    let mut s = String::from("# Real-world shapes\n\n");
    s += "The shapes in which public inference and GEMM code has failed with PDL, each with \
          the public report it comes from, and what in this suite covers it: tests of the spec \
          (with the rules that list them, what the spec says, and each GPU's newest recorded \
          result) and user programs of the machine-code tier (with each toolchain's newest \
          recorded status for each target). The list is `spec/shapes.yaml`; a rule whose \
          statement comes from a document other than the seeds (the CUDA runtime API \
          reference, the PTX ISA) says so on its page.\n\n";
    if ctx.inputs.shapes.is_empty() {
        s += "`spec/shapes.yaml` lists no shape.\n";
        return s;
    }
    for shape in &ctx.inputs.shapes {
        s += &section(ctx, shape);
    }
    s
}

fn section(ctx: &Ctx, shape: &Shape) -> String {
    let mut s = format!(
        "<h2 id=\"{}\">{}</h2>\n\n**Public source**\n\n",
        shape.id,
        html(&shape.title)
    );
    for src in &shape.sources {
        s += &format!("- {}\n", prose(src.trim()));
    }
    s += &format!("\n{}\n\n", prose(shape.summary.trim()));
    if !shape.tests.is_empty() {
        s += "**Tests**\n\n| test | rules | what the spec says | recorded results |\n|---|---|---|---|\n";
        for name in &shape.tests {
            s += &test_row(ctx, name);
        }
        s += "\n";
    }
    if !shape.programs.is_empty() {
        s += "**Machine-code programs** (`kernels/sass/`, `cargo xtask conformance --tier sass`)\n\n\
              | program | what it is | recorded results |\n|---|---|---|\n";
        for name in &shape.programs {
            s += &program_row(ctx, name);
        }
        s += "\n";
    }
    s
}

fn test_row(ctx: &Ctx, name: &str) -> String {
    let spec = &ctx.inputs.spec;
    let Some(test) = spec.test(name) else {
        return format!("| {} | — | not a test of the spec | — |\n", code(name));
    };
    let rules: Vec<&str> = spec
        .rules
        .iter()
        .filter(|r| r.tests.iter().any(|t| t == name))
        .map(|r| r.id.as_str())
        .collect();
    let test_cell = match rules.first() {
        Some(first) => format!(
            "[{}]({}#{}) <small>{}</small>",
            html(name),
            rule_path(first),
            name,
            test.body.kind()
        ),
        None => format!("{} <small>{}</small>", html(name), test.body.kind()),
    };
    let rule_links: Vec<String> = rules
        .iter()
        .map(|r| format!("[{r}]({})", rule_path(r)))
        .collect();
    format!(
        "| {test_cell} | {} | {} | {} |\n",
        rule_links.join("<br>"),
        says(test),
        results(ctx, test)
    )
}

fn checks(c: &[(String, Check)]) -> String {
    c.iter()
        .map(|(n, c)| {
            let text = if c.text.starts_with(['=', '!', '<', '>']) {
                c.text.clone()
            } else {
                format!("== {}", c.text)
            };
            code(&format!("{n} {text}"))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// What the spec says of a test: a litmus test's expected verdict, a
/// program's expected and allowed outputs, a compile test's expectation.
fn says(test: &Test) -> String {
    match &test.body {
        TestBody::Litmus(l) => format!(
            "{} {}",
            code(&format!("{}", l.condition)),
            html(l.expect.as_str())
        ),
        TestBody::Host(h) if h.may.is_empty() => format!("expects {}", checks(&h.expect)),
        TestBody::Host(h) => format!(
            "expects {}; allows, and is built to show, {}",
            checks(&h.expect),
            checks(&h.may)
        ),
        TestBody::Runtime(r) => match &r.expect {
            gridcheck_spec::RuntimeExpect::Values(v) => format!("expects {}", checks(v)),
            gridcheck_spec::RuntimeExpect::LoadError { name, .. } => {
                format!("the module must not load: {}", code(name))
            }
        },
        TestBody::Compile(c) => format!("nvcc: {}", cell(&format!("{:?}", c.expect))),
    }
}

/// Each latest run's record of the test on the GPU (any rule's: one test,
/// one hardware run) and, for a litmus test, the model's.
fn results(ctx: &Ctx, test: &Test) -> String {
    let mut lines = Vec::new();
    for run in &ctx.latest {
        let of = |tier: Tier| -> Option<&TrialRecord> {
            run.records
                .iter()
                .rev()
                .find(|r| r.trial.tier == tier && r.trial.test == test.name)
        };
        if let (TestBody::Litmus(_), Some(m)) = (&test.body, of(Tier::Model)) {
            lines.push(format!("model: {}", status_of(ctx, m)));
        }
        if let Some(r) = of(Tier::Gpu) {
            lines.push(format!(
                "{} {} ({}): {}",
                status_of(ctx, r),
                html(&run.machine.gpu),
                run.date,
                cell(&r.message)
            ));
        }
    }
    if lines.is_empty() {
        "no run recorded yet".into()
    } else {
        lines.join("<br>")
    }
}

fn program_row(ctx: &Ctx, name: &str) -> String {
    let Some(p) = ctx.inputs.programs.iter().find(|p| p.name == name) else {
        return format!(
            "| {} | not a program of `kernels/sass/programs.toml` | — |\n",
            code(name)
        );
    };
    let mut what = prose(&p.summary);
    if !p.flags.is_empty() {
        what += &format!("; built with {}", code(&p.flags.join(" ")));
    }
    if !p.no_wait.is_empty() {
        what += &format!(
            "; the guard removes the wait for {} (the tier must flag it)",
            p.no_wait.join(", ")
        );
    }
    format!(
        "| {} (`{}`) | {what} | {} |\n",
        code(&p.name),
        html(&p.file),
        program_results(&ctx.inputs.runs, p)
    )
}

/// The newest record of each of a program's machine-code trials, by target
/// then toolchain, from every run and toolchain variant that has one.
fn program_results(runs: &[Run], p: &Program) -> String {
    let mut newest: BTreeMap<(String, String), (&Run, &TrialRecord)> = BTreeMap::new();
    for run in runs
        .iter()
        .flat_map(|r| std::iter::once(r).chain(&r.variants))
    {
        for r in run.records.iter().filter(|r| {
            r.trial.tier == Tier::Sass && r.trial.rule == USER_PROGRAMS && r.trial.test == p.name
        }) {
            let key = (
                r.trial.sm.clone().unwrap_or_default(),
                r.trial.toolchain.clone().unwrap_or_default(),
            );
            let newer = newest
                .get(&key)
                .is_none_or(|(old, _)| run_order(&run.date) >= run_order(&old.date));
            if newer {
                newest.insert(key, (run, r));
            }
        }
    }
    if newest.is_empty() {
        return "no run recorded yet".into();
    }
    let mut by_target: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for ((target, toolchain), (_, r)) in &newest {
        by_target.entry(target).or_default().push(format!(
            "<span title=\"{}\">{} {}</span>",
            html(r.message.lines().next().unwrap_or("")),
            html(toolchain),
            badge(r.status)
        ));
    }
    by_target
        .iter()
        .map(|(target, cells)| format!("{}: {}", code(target), cells.join(" ")))
        .collect::<Vec<_>>()
        .join("<br>")
}
