//! The discrepancies page: where a GPU, its driver or nvcc does not do what
//! the guide says. Each fact is listed once: a known discrepancy (an entry
//! of `conformance/expectations/`, about a test or one trial), or a problem
//! of the newest run of a GPU that no entry covers, about a test whatever
//! number of rules list it (a hardware run of a test listed by four rules
//! is one fact, shown with the four rules).

use gridcheck_report::{Status, Subject, TestKey, TrialRecord, Xfail};
use gridcheck_spec::TestBody;

use crate::context::Ctx;
use crate::fragments::{quote_block, reproduce, source_line, status_of};
use crate::results::Run;
use crate::svg;
use crate::text::{badge, code, fenced, html, rule_path, severity};

/// One fact of the page.
pub(crate) struct Fact<'a> {
    /// The known discrepancy, when an expectations file lists it.
    pub known: Option<&'a Xfail>,
    /// What the fact is about.
    pub subject: Subject,
    /// The rules whose trials it covers (that ran).
    pub rules: Vec<String>,
    /// The trials of the latest runs it covers that ran, with their run.
    pub seen: Vec<(&'a Run, &'a TrialRecord)>,
}

impl Fact<'_> {
    /// The worst status of the trials it covers.
    fn status(&self) -> Option<Status> {
        self.seen
            .iter()
            .map(|(_, r)| r.status)
            .max_by_key(|s| severity(*s))
    }
}

/// Whether a trial ran (a trial that did not is no evidence of anything).
pub(crate) fn ran(r: &TrialRecord) -> bool {
    !matches!(r.status, Status::NotSupported | Status::NotRun)
}

/// A fail, crash, timeout or quality warning.
fn is_problem(r: &TrialRecord) -> bool {
    matches!(
        r.status,
        Status::Fail | Status::Crash | Status::Timeout | Status::QualityWarning
    )
}

/// The rules that list a test, in spec order.
fn rules_listing(ctx: &Ctx, test: &str) -> Vec<String> {
    ctx.inputs
        .spec
        .rules
        .iter()
        .filter(|r| r.tests.iter().any(|t| t == test))
        .map(|r| r.id.clone())
        .collect()
}

/// Every fact, known ones first (in the expectations' order), then the
/// unlisted failures, then the unlisted quality warnings (in run and trial
/// order).
pub(crate) fn facts<'a>(ctx: &Ctx<'a>) -> Vec<Fact<'a>> {
    let xfails = &ctx.inputs.xfails;
    let records = || {
        ctx.latest
            .iter()
            .flat_map(|run| run.records.iter().map(move |r| (*run, r)))
    };
    let mut out: Vec<Fact<'a>> = Vec::new();
    for x in xfails {
        let seen: Vec<(&Run, &TrialRecord)> = records()
            .filter(|(_, r)| x.subject.covers(&r.trial) && ran(r))
            .collect();
        let mut rules: Vec<String> = Vec::new();
        for (_, r) in &seen {
            if !rules.contains(&r.trial.rule) {
                rules.push(r.trial.rule.clone());
            }
        }
        if rules.is_empty() {
            rules = match &x.subject {
                Subject::Trial(t) => vec![t.rule.clone()],
                Subject::Test(k) => rules_listing(ctx, &k.test),
            };
        }
        out.push(Fact {
            known: Some(x),
            subject: x.subject.clone(),
            rules,
            seen,
        });
    }
    let covered = |r: &TrialRecord| xfails.iter().any(|x| x.subject.covers(&r.trial));
    let mut unlisted: Vec<(&Run, TestKey, Vec<&TrialRecord>)> = Vec::new();
    for (run, r) in records().filter(|(_, r)| is_problem(r) && !covered(r)) {
        let key = r.trial.test_key();
        match unlisted
            .iter_mut()
            .find(|(u, k, _)| std::ptr::eq(*u, run) && *k == key)
        {
            Some((_, _, rs)) => rs.push(r),
            None => unlisted.push((run, key, vec![r])),
        }
    }
    let (warnings, failures): (Vec<_>, Vec<_>) = unlisted
        .into_iter()
        .partition(|(_, _, rs)| rs.iter().all(|r| r.status == Status::QualityWarning));
    for (run, key, rs) in failures.into_iter().chain(warnings) {
        out.push(Fact {
            known: None,
            subject: Subject::Test(key),
            rules: rs.iter().map(|r| r.trial.rule.clone()).collect(),
            seen: rs.into_iter().map(|r| (run, r)).collect(),
        });
    }
    out
}

fn histogram_for(ctx: &Ctx, r: &TrialRecord, gpu: &str) -> String {
    let (Some(hw), Some(t)) = (&r.hardware, ctx.inputs.spec.test(&r.trial.test)) else {
        return String::new();
    };
    let TestBody::Litmus(l) = &t.body else {
        return String::new();
    };
    let title = format!("{} on {gpu}: observation {}", r.trial.test, hw.observation);
    format!(
        "<div class=\"gc-plot\">{}</div>\n\n",
        svg::histogram(l, hw, &title)
    )
}

fn rule_head(ctx: &Ctx, rule_id: &str) -> String {
    match ctx.inputs.spec.rule(rule_id) {
        Some(rule) => format!(
            "**{rule_id}**\n\n{}\n{}\n",
            quote_block(rule),
            source_line(rule, "")
        ),
        None => format!("Rule `{rule_id}` is not in the spec.\n\n"),
    }
}

fn rule_links(rules: &[String]) -> String {
    rules
        .iter()
        .map(|r| format!("[{r}]({})", rule_path(r)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One fact's section: what it is about, each rule's words, the evidence,
/// what the latest runs showed, and how to reproduce it.
fn section(ctx: &Ctx, n: usize, f: &Fact) -> String {
    let mut s = format!("<h3 id=\"d{n}\">{n}. {}</h3>\n\n", html(f.subject.test()));
    let about = match &f.subject {
        Subject::Trial(_) => "Trial",
        Subject::Test(_) => "Test",
    };
    s += &format!("{about} {}", code(&f.subject.to_string()));
    if let Some(x) = f.known {
        s += &format!(
            " · listed for **{}** in `{}`",
            x.applies_to,
            x.file.display()
        );
    }
    s += &format!(" · rules: {}\n\n", rule_links(&f.rules));
    for rule in &f.rules {
        s += &rule_head(ctx, rule);
        s += "\n";
    }
    if let Some(x) = f.known {
        s += &format!(
            "**Evidence** (from `{}`): {}\n\n",
            x.file.display(),
            html(&x.reason)
        );
    }
    match f.seen.first() {
        Some((run, r)) => {
            let trials: Vec<String> = f
                .seen
                .iter()
                .map(|(_, r)| code(&r.trial.to_string()))
                .collect();
            s += &format!(
                "**Observed** in the run of {} on {}: {} ({} {}: {})\n\n{}",
                run.date,
                html(&run.machine.label()),
                status_of(ctx, r),
                trials.len(),
                if trials.len() == 1 { "trial" } else { "trials" },
                trials.join(", "),
                fenced("text", &r.message)
            );
            s += "\n";
            s += &histogram_for(ctx, r, &run.machine.gpu);
            s += &reproduce(&r.trial);
        }
        None => {
            s += "**Observed**: not in the latest results.\n\n";
            if let Subject::Trial(t) = &f.subject {
                s += &reproduce(t);
            }
        }
    }
    s += "\n";
    s
}

pub(crate) fn page(ctx: &Ctx) -> String {
    let mut s = String::from("# Discrepancies between the guide and the hardware\n\n");
    s += "Where a GPU, its driver or nvcc does not do what the guide says. **Known** \
          discrepancies are listed in `conformance/expectations/` with the evidence and reported \
          `xfail`; **failures** and **quality warnings** are those of the newest run of each GPU \
          that no expectations file lists. A fact about a test is listed once, with every rule \
          that lists the test. Each entry gives the rules' words, what was observed and the \
          command that reproduces it.\n\n";
    let facts = facts(ctx);
    s += "| # | rules | test | kind | applies to | status |\n|---|---|---|---|---|---|\n";
    for (i, f) in facts.iter().enumerate() {
        let n = i + 1;
        let kind = match (f.known, f.status()) {
            (Some(_), _) => "known",
            (None, Some(Status::QualityWarning)) => "quality warning",
            (None, _) => "failure",
        };
        let applies = match (f.known, f.seen.first()) {
            (Some(x), _) => x.applies_to.clone(),
            (None, Some((run, _))) => html(&run.machine.gpu),
            (None, None) => String::new(),
        };
        let status = f
            .status()
            .map_or("not in the latest results".to_string(), badge);
        s += &format!(
            "| [{n}](#d{n}) | {} | {} | {kind} | {applies} | {status} |\n",
            rule_links(&f.rules),
            code(f.subject.test())
        );
    }
    s += "\n";
    let known = facts.iter().filter(|f| f.known.is_some()).count();
    let (failures, warnings): (Vec<_>, Vec<_>) = facts
        .iter()
        .enumerate()
        .skip(known)
        .partition(|(_, f)| f.status() != Some(Status::QualityWarning));
    s += "## Known discrepancies\n\n";
    if known == 0 {
        s += "None listed.\n\n";
    }
    for (i, f) in facts.iter().enumerate().take(known) {
        s += &section(ctx, i + 1, f);
    }
    for (heading, list, none) in [
        (
            "Failures in the latest results",
            &failures,
            "None: no unlisted fail, crash or timeout in the newest run of any GPU.",
        ),
        ("Quality warnings in the latest results", &warnings, "None."),
    ] {
        s += &format!("## {heading}\n\n");
        if list.is_empty() {
            s += &format!("{none}\n\n");
        } else if heading.starts_with("Quality") {
            s += "Not violations: the guide allows something the GPU was not seen to do, or the \
                  GPU reached a state the model cannot (see [How to read a verdict](reading-a-verdict.md)).\n\n";
        }
        for (i, f) in list.iter() {
            s += &section(ctx, i + 1, f);
        }
    }
    s
}
