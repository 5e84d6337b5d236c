//! One page a rule: the quote and its source, the profile, the status on
//! every GPU with results, then each test: the DSL rendered as a table of
//! threads, the model's verdict and reachable states, the hardware histogram
//! as a plot and the litmus7 block, and the generated kernel.

use gridcheck_report::{ModelSummary, Subject, Tier, TrialRecord, litmus_block};
use gridcheck_spec::{
    CompileExpect, CompileTest, HostTest, KernelLaunch, Litmus, Rule, RuntimeExpect, RuntimeTest,
    Test, TestBody, Verdict, render_state,
};

use crate::context::Ctx;
use crate::fragments::{quote_block, source_line, status_badges, status_of};
use crate::results::Run;
use crate::showing::ran;
use crate::svg;
use crate::text::{cell, code, fenced, html};

fn verdict_words(v: Verdict) -> &'static str {
    match v {
        Verdict::Forbidden => "no execution may end in a state satisfying the condition",
        Verdict::Allowed => "an execution may end in a state satisfying it, and one may not",
        Verdict::Required => "every execution must end in a state satisfying it",
    }
}

/// The litmus test as a table: one column a thread, one row an operation.
fn thread_table(l: &Litmus) -> String {
    let mut heads = Vec::new();
    let mut cols: Vec<Vec<String>> = Vec::new();
    for k in &l.kernels {
        let how = match k.launch {
            KernelLaunch::Host { pdl: false } => "host launch".to_string(),
            KernelLaunch::Host { pdl: true } => "host launch, PDL".to_string(),
            KernelLaunch::Device => match l.launcher_of(&k.name) {
                Some((pk, pt, stream)) => {
                    format!("launched by {}.{} ({stream} stream)", pk.name, pt.name)
                }
                None => "device launch".to_string(),
            },
        };
        for t in &k.threads {
            heads.push(format!(
                "{}.{}<br><small>{}</small>",
                k.name,
                t.name,
                html(&how)
            ));
            cols.push(t.ops.iter().map(|o| code(&o.to_string())).collect());
        }
    }
    let rows = cols.iter().map(Vec::len).max().unwrap_or(0);
    let mut s = format!(
        "| {} |\n|{}\n",
        heads.join(" | "),
        "---|".repeat(heads.len())
    );
    for i in 0..rows {
        let cells: Vec<&str> = cols
            .iter()
            .map(|c| c.get(i).map_or("", String::as_str))
            .collect();
        s += &format!("| {} |\n", cells.join(" | "));
    }
    s
}

fn model_section(l: &Litmus, m: &ModelSummary, from: &str) -> String {
    let order = l.observables();
    let single = m.oracles.as_ref().filter(|o| o.agreement == "single");
    let explored = match single {
        // loom did not run: the axiomatic model's enumeration decided.
        Some(o) if o.loom_verdict.is_none() => format!(
            "{} candidate executions of the axiomatic model ({})",
            o.candidates,
            html(&o.note)
        ),
        _ => format!("{} executions explored", m.executions),
    };
    let mut s = format!(
        "**Model**: verdict **{}** (the spec expects {}): {} reachable final state{}, {explored}",
        m.verdict,
        m.expected,
        m.states.len(),
        if m.states.len() == 1 { "" } else { "s" },
    );
    match m.preemption_bound {
        Some(b) => {
            s += &format!(
                ", **bounded exploration** (preemption bound {b}): the verdict covers the executions with at most {b} preemptions, not every execution.\n\n"
            )
        }
        None => s += ", exhaustive exploration.\n\n",
    }
    s += &format!("<small>From {from}.</small>\n\n");
    s += "| reachable final state | satisfies the condition |\n|---|:---:|\n";
    for st in &m.states {
        let sat = l.condition.holds(st).unwrap_or(false);
        s += &format!(
            "| {} | {} |\n",
            code(&render_state(&order, st)),
            if sat { "yes" } else { "" }
        );
    }
    s
}

fn find<'a>(run: &'a Run, tier: Tier, rule: &str, test: &str) -> Option<&'a TrialRecord> {
    run.records
        .iter()
        .rev()
        .find(|r| r.trial.tier == tier && r.trial.rule == rule && r.trial.test == test)
}

fn generated_kernel(ctx: &Ctx, test: &Test) -> String {
    if !gridcheck_kernelgen::has_generated_file(test) {
        return String::new();
    }
    let rel = format!("kernels/generated/{}", gridcheck_kernelgen::file_name(test));
    match std::fs::read_to_string(ctx.inputs.root.join(&rel)) {
        Ok(text) => format!(
            "<details><summary>Generated kernel: <code>{rel}</code> ({} lines)</summary>\n\n{}\n</details>\n\n",
            text.lines().count(),
            fenced("cpp", &text)
        ),
        Err(e) => format!(
            "The generated kernel `{rel}` cannot be read ({e}): run `cargo xtask codegen`.\n\n"
        ),
    }
}

fn test_section(ctx: &Ctx, rule: &Rule, test: &Test) -> String {
    let mut s = format!(
        "<h3 id=\"{}\">{} <small>({} test, <code>{}</code>)</small></h3>\n\n",
        test.name,
        test.name,
        test.body.kind(),
        html(
            &test
                .origin
                .to_string()
                .replace(&format!("{}/", ctx.inputs.root.display()), "")
        )
    );
    if let Some(d) = &test.description {
        s += &format!("{}\n\n", html(d.trim()));
    }
    s += &match &test.body {
        TestBody::Litmus(l) => litmus_body(ctx, rule, test, l),
        TestBody::Runtime(rt) => runtime_body(ctx, rule, test, rt),
        TestBody::Host(h) => host_body(ctx, rule, test, h),
        TestBody::Compile(c) => compile_body(ctx, rule, test, c),
    };
    if let TestBody::Runtime(rt) = &test.body {
        // A program in its own file (`source_file:`) is named with it.
        let file = test
            .source_file
            .as_ref()
            .map(|f| {
                format!(
                    ", <code>{}</code>",
                    html(&gridcheck_kernelgen::spec_relative(f))
                )
            })
            .unwrap_or_default();
        s += &format!(
            "<details><summary>Source ({} lines{file})</summary>\n\n{}\n</details>\n\n",
            rt.source.lines().count(),
            fenced("cpp", &rt.source)
        );
    } else {
        s += &generated_kernel(ctx, test);
    }
    s
}

/// A litmus test's memory, threads, condition and verdict, the model's
/// result and each latest run's hardware histogram.
fn litmus_body(ctx: &Ctx, rule: &Rule, test: &Test, l: &Litmus) -> String {
    let mut s = String::new();
    let mem: Vec<String> = l.memory.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    s += &format!("Memory, initially: {}\n\n", code(&mem.join(", ")));
    s += &thread_table(l);
    s += &format!(
        "\nCondition: {}. The guide's verdict: **{}**: {}.\n\n",
        code(&l.condition.to_string()),
        l.expect,
        verdict_words(l.expect)
    );
    let model = ctx.latest.iter().find_map(|run| {
        find(run, Tier::Model, &rule.id, &test.name)
            .or_else(|| find(run, Tier::Gpu, &rule.id, &test.name))
            .and_then(|r| r.model.as_ref().map(|m| (run, r, m)))
    });
    match model {
        Some((run, r, m)) => {
            s += &model_section(l, m, &format!("`{}`, run of {}", r.trial, run.date));
        }
        None => s += "**Model**: no model result in the latest runs.\n",
    }
    s += "\n";
    for run in &ctx.latest {
        let Some(r) = find(run, Tier::Gpu, &rule.id, &test.name) else {
            continue;
        };
        s += &format!(
            "**Hardware: {}** ({}): {}\n\n",
            html(&run.machine.label()),
            run.date,
            status_of(ctx, r)
        );
        match &r.hardware {
            Some(hw) => {
                let title = format!(
                    "{} on {}: {} instances, observation {}",
                    test.name, run.machine.gpu, hw.instances, hw.observation
                );
                s += &format!(
                    "<div class=\"gc-plot\">{}</div>\n\n",
                    svg::histogram(l, hw, &title)
                );
                s += &format!("{}\n\n", html(&r.message));
                s += &format!(
                    "<details><summary>litmus7 block</summary>\n\n{}\n</details>\n\n",
                    fenced("text", &litmus_block(&test.name, l, hw))
                );
            }
            None => s += &format!("{}\n\n", html(&r.message)),
        }
    }
    s
}

/// A runtime test's launch, limits and expected outputs, and the hardware's
/// results.
fn runtime_body(ctx: &Ctx, rule: &Rule, test: &Test, rt: &RuntimeTest) -> String {
    let mut s = String::new();
    s += &format!(
        "A CUDA program for `{}`: entry `{}<<<{}, {}>>>(out)`",
        rt.arch, rt.entry, rt.grid, rt.block
    );
    if !rt.limits.is_empty() {
        let l: Vec<String> = rt
            .limits
            .iter()
            .map(|(k, v)| format!("{} = {v}", k.as_str()))
            .collect();
        s += &format!(", with the context limits {}", code(&l.join(", ")));
    }
    s += ".\n\n";
    match &rt.expect {
        RuntimeExpect::Values(v) => s += &expected_outputs(v),
        RuntimeExpect::LoadError { name, value } => {
            s += &format!("Loading the module must fail with `{name}` ({value}).\n");
        }
    }
    s += "\n";
    s += &hardware_lines(ctx, rule, test);
    s
}

/// A host test's build and expected outputs, and the hardware's results.
fn host_body(ctx: &Ctx, rule: &Rule, test: &Test, h: &HostTest) -> String {
    let mut s = String::new();
    let flags = if h.flags.is_empty() {
        String::new()
    } else {
        format!(" {}", h.flags.join(" "))
    };
    s += &format!(
        "A whole CUDA program (host test), built with {} and run as its own \
         process on a `{}` device; it prints each output once.\n\n",
        code(&format!("nvcc -rdc=true{flags} -lcudadevrt")),
        h.arch
    );
    s += &expected_outputs(&h.expect);
    s += "\n";
    s += &hardware_lines(ctx, rule, test);
    s
}

/// A compile test's flags, expectation and source, and the compiler's
/// results.
fn compile_body(ctx: &Ctx, rule: &Rule, test: &Test, c: &CompileTest) -> String {
    let mut s = String::new();
    let flags = if c.flags.is_empty() {
        String::new()
    } else {
        format!(" {}", c.flags.join(" "))
    };
    s += &format!(
        "nvcc {} must **{}**",
        code(&format!("-arch={} -rdc=true{flags}", c.arch)),
        match &c.expect {
            CompileExpect::Accept => "accept it without a warning".to_string(),
            CompileExpect::Reject { diagnostic } => format!("reject it with {}", code(diagnostic)),
            CompileExpect::Warn { diagnostic } => format!("warn with {}", code(diagnostic)),
        }
    );
    s += ":\n\n";
    s += &fenced("cpp", &c.source);
    s += "\n";
    for run in &ctx.latest {
        if let Some(r) = find(run, Tier::Static, &rule.id, &test.name) {
            s += &format!(
                "**Compiler** (run of {} on {}): {} {}\n\n",
                run.date,
                html(&run.machine.gpu),
                status_of(ctx, r),
                html(r.message.lines().next().unwrap_or(""))
            );
        }
    }
    s
}

fn hardware_lines(ctx: &Ctx, rule: &Rule, test: &Test) -> String {
    let mut s = String::new();
    for run in &ctx.latest {
        if let Some(r) = find(run, Tier::Gpu, &rule.id, &test.name) {
            s += &format!(
                "**Hardware: {}** ({}): {} {}\n\n",
                html(&run.machine.label()),
                run.date,
                status_of(ctx, r),
                html(&r.message)
            );
        }
    }
    s
}

/// The page of one rule.
pub(crate) fn render(ctx: &Ctx, rule: &Rule) -> String {
    let mut s = format!("# {}\n\n{}\n\n", rule.id, status_badges(ctx, rule));
    s += &quote_block(rule);
    s += "\n";
    s += &source_line(ctx, rule, "../");
    s += &format!(
        "\nProfile **{}** · spec `{}` · [how to read this page](../reading-a-verdict.md)\n\n",
        rule.profile,
        gridcheck_kernelgen::spec_relative(&rule.origin.file) + &format!(":{}", rule.origin.line)
    );
    if let Some(d) = &rule.decision {
        s += &format!("**Where the guide is ambiguous**: {}\n\n", html(d.trim()));
    }
    if let Some(u) = &rule.untested {
        s += &format!(
            "**No runnable test** ({}): {}\n\n",
            u.status.as_str(),
            html(u.reason.trim())
        );
    }
    let listed = ctx
        .inputs
        .facts
        .iter()
        .filter(|x| {
            matches!(&x.subject, Subject::Trial(t) if t.rule == rule.id)
                || ctx
                    .latest
                    .iter()
                    .any(|run| run.of_rule(&rule.id).any(|r| x.covers(&r.trial) && ran(r)))
        })
        .count();
    if listed > 0 {
        s += &format!(
            "**Known fact**: see [Discrepancies](../discrepancies.md) ({listed} listed).\n\n"
        );
    }
    s += "## Status\n\n";
    let mut any = false;
    for run in &ctx.latest {
        let recs: Vec<&TrialRecord> = run.of_rule(&rule.id).collect();
        if recs.is_empty() {
            continue;
        }
        any = true;
        s += &format!(
            "**{}**, driver {}, nvcc {}: run of {} (`{}`)\n\n",
            html(&run.machine.gpu),
            html(&run.machine.driver),
            html(&run.machine.nvcc),
            run.date,
            run.results_path(&ctx.inputs.root)
        );
        s += "| tier | test | status | message |\n|---|---|---|---|\n";
        for r in recs {
            s += &format!(
                "| {} | [{}](#{}) | {} | {} |\n",
                r.trial.tier,
                r.trial.test,
                r.trial.test,
                status_of(ctx, r),
                cell(&r.message)
            );
        }
        s += "\n";
    }
    if !any {
        s += if rule.untested.is_some() {
            "No trial: the rule has no runnable test.\n\n"
        } else {
            "No recorded run has results for this rule.\n\n"
        };
    }
    if !rule.tests.is_empty() {
        s += "## Tests\n\n";
        for name in &rule.tests {
            if let Some(t) = ctx.inputs.spec.test(name) {
                s += &test_section(ctx, rule, t);
            }
        }
    }
    s
}

/// The table of a runtime or host test's checked outputs.
fn expected_outputs(checks: &[(String, gridcheck_spec::Check)]) -> String {
    let mut s = "| output | expected |\n|---|---|\n".to_string();
    for (name, check) in checks {
        s += &format!("| `{name}` | {} |\n", code(&check.text));
    }
    s
}
