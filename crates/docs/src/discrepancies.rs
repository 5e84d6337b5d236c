//! The discrepancies page: where a GPU, its driver or nvcc does not do what
//! the guide says. Each fact is listed once: a known fact (an entry of
//! `conformance/facts/`, a discrepancy or a hang, about a test or one
//! trial: a row of the table with its summary, where it was measured, what
//! it depends on and its status in each latest run, then a section under
//! the rule whose promise it breaks), or a problem of the newest run of a
//! GPU that no fact covers, about a test whatever number of rules list it
//! (a hardware run of a test listed by four rules is one fact, shown with
//! the four rules), also a row and a section under its rule. A known
//! fact's section says what it covers: the tests it names and those its
//! shape matches, its envelope, the mutants and the campaign findings of
//! its shape (`fact_cover.rs`). The table has
//! three columns so that it fits the page at 1280 px (the browser test
//! measures it).

use gridcheck_report::{
    Fact as KnownFact, FactCover, FactKind, Status, Subject, TestKey, TrialRecord,
};
use gridcheck_spec::TestBody;

use crate::context::Ctx;
use crate::fragments::{quote_block, reproduce, source_line, status_of};
use crate::results::Run;
use crate::showing::showing;
use crate::svg;
use crate::text::{badge, code, fenced, html, prose, rule_path, severity, slug};

/// One fact of the page.
pub(crate) struct Fact<'a> {
    /// The known fact, when a facts file lists it.
    pub known: Option<&'a KnownFact>,
    /// What the fact is about.
    pub subject: Subject,
    /// The rules whose trials it covers (that ran).
    pub rules: Vec<String>,
    /// The trials of the latest runs it covers that ran, with their run.
    pub seen: Vec<(&'a Run, &'a TrialRecord)>,
    /// What a known fact covers (`fact_cover.rs`).
    pub cover: Option<FactCover>,
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

/// A fail, crash, timeout, unmodeled state or quality warning.
fn is_problem(r: &TrialRecord) -> bool {
    matches!(
        r.status,
        Status::Fail | Status::Crash | Status::Timeout | Status::Unmodeled | Status::QualityWarning
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

/// Every fact, known ones first (in the files' order), then the unlisted
/// failures, then the unlisted quality warnings (in run and trial order).
pub(crate) fn facts<'a>(ctx: &Ctx<'a>) -> Vec<Fact<'a>> {
    let xfails = &ctx.inputs.facts;
    let records = || {
        ctx.latest
            .iter()
            .flat_map(|run| run.records.iter().map(move |r| (*run, r)))
    };
    let mut out: Vec<Fact<'a>> = Vec::new();
    let covers = crate::fact_cover::of_inputs(ctx.inputs);
    for (x, cover) in xfails.iter().zip(covers) {
        let seen = showing(x, &records().collect::<Vec<_>>(), &ctx.inputs.runs);
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
            cover: Some(cover),
        });
    }
    let covered = |r: &TrialRecord| xfails.iter().any(|x| x.covers(&r.trial));
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
            cover: None,
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

/// A rule's words: its id in bold (unless `named`, under a heading that
/// names it), its quote and its source.
fn rule_head(ctx: &Ctx, rule_id: &str, named: bool) -> String {
    match ctx.inputs.spec.rule(rule_id) {
        Some(rule) => format!(
            "{}{}\n{}\n",
            if named {
                String::new()
            } else {
                format!("**{rule_id}**\n\n")
            },
            quote_block(rule),
            source_line(ctx, rule, "")
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

/// The rule a fact sits under: its trial's rule, else the first rule (in
/// spec order) that lists the test and ran it.
fn home_rule(f: &Fact) -> String {
    match &f.subject {
        Subject::Trial(t) => t.rule.clone(),
        Subject::Test(_) => f.rules.first().cloned().unwrap_or_default(),
    }
}

/// Each latest run's status for the fact: a badge, and under it the GPU
/// (the CSS puts the `<small>` on its own line).
fn statuses(f: &Fact) -> String {
    let mut out: Vec<String> = Vec::new();
    for (run, r) in &f.seen {
        let cell = format!(
            "{} <small>{}</small>",
            badge(r.status),
            html(&run.machine.gpu)
        );
        if !out.contains(&cell) {
            out.push(cell);
        }
    }
    if out.is_empty() {
        "not in the latest results".into()
    } else {
        out.join("\n")
    }
}

/// Where a known fact was measured, for the table: one line a GPU model
/// (or toolkit-only place) and driver, with the dates measured there (the
/// first and the last); the fact's section lists every place.
fn places(x: &KnownFact) -> String {
    let mut lines: Vec<(String, Vec<&str>)> = Vec::new();
    for p in &x.measured {
        let machine = match (&p.gpu, &p.sm, &p.driver) {
            (Some(g), sm, d) => format!(
                "{g}{}{}",
                sm.as_ref().map(|s| format!(" ({s})")).unwrap_or_default(),
                d.as_ref()
                    .map(|d| format!(", driver {d}"))
                    .unwrap_or_default()
            ),
            _ => "nvcc".to_string(),
        };
        match lines.iter_mut().find(|(m, _)| *m == machine) {
            Some((_, dates)) => dates.push(&p.date),
            None => lines.push((machine, vec![&p.date])),
        }
    }
    lines
        .iter_mut()
        .map(|(m, dates)| {
            dates.sort();
            dates.dedup();
            let when = match dates.as_slice() {
                [one] => one.to_string(),
                [first, .., last] => format!("{first} to {last} ({} dates)", dates.len()),
                [] => String::new(),
            };
            format!("{}, {}", html(m), html(&when))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The table of every fact: one row each, three columns that fit the page
/// at 1280 px: the number, the fact (what it is about and its kind, one
/// line of what the hardware did, where it was measured and what it
/// depends on) and its status in each latest run.
fn table(facts: &[Fact]) -> String {
    let mut s = String::from(
        "<table class=\"gc-facts\">\n<thead><tr><th>#</th><th>fact: what the hardware did</th>\
         <th class=\"gc-st\">status in the latest runs</th></tr></thead>\n<tbody>\n",
    );
    for (i, f) in facts.iter().enumerate() {
        let n = i + 1;
        let (what, kind, context) = match f.known {
            Some(x) => (
                html(&x.summary),
                x.kind.as_str().to_string(),
                format!(
                    "measured on {}; depends on {}",
                    places(x),
                    html(&x.depends_on_text())
                ),
            ),
            None => (
                format!("not a known fact: {}", html(&f.rules.join(", "))),
                match f.status() {
                    Some(Status::QualityWarning) => "quality warning".into(),
                    _ => "failure".into(),
                },
                String::new(),
            ),
        };
        let context = if context.is_empty() {
            context
        } else {
            format!("<br><small class=\"gc-where\">{context}</small>")
        };
        s += &format!(
            "<tr><td><a href=\"#d{n}\">{n}</a></td><td><code>{}</code> \
             <small class=\"gc-kind\">{kind}</small><br>{what}{context}</td>\
             <td class=\"gc-st\">{}</td></tr>\n",
            html(&f.subject.to_string()),
            statuses(f)
        );
    }
    s + "</tbody>\n</table>\n\n"
}

/// One fact's section: what it is about, each rule's words (those not
/// already above it), where it was measured, the evidence, what the latest
/// runs showed, and how to reproduce it.
fn section(ctx: &Ctx, n: usize, f: &Fact, heading: &str, skip_rule: Option<&str>) -> String {
    let title = match f.known {
        Some(x) => format!("{}: {}", html(f.subject.test()), html(&x.summary)),
        None => html(f.subject.test()),
    };
    let mut s = format!("<{heading} id=\"d{n}\">{n}. {title}</{heading}>\n\n");
    let about = match &f.subject {
        Subject::Trial(_) => "Trial",
        Subject::Test(_) => "Test",
    };
    s += &format!("{about} {}", code(&f.subject.to_string()));
    if let Some(x) = f.known {
        s += &format!(" · a known {} in `{}`", x.kind.as_str(), x.at());
    }
    s += &format!(" · rules: {}\n\n", rule_links(&f.rules));
    for rule in f.rules.iter().filter(|r| Some(r.as_str()) != skip_rule) {
        s += &rule_head(ctx, rule, false);
        s += "\n";
    }
    if let Some(x) = f.known {
        s += &format!(
            "**Depends on** (believed): {}. **Measured on**:\n\n",
            html(&x.depends_on_text())
        );
        for p in &x.measured {
            let record = p
                .record
                .as_deref()
                .map(|r| format!(" ({})", code(r)))
                .unwrap_or_default();
            s += &format!("- {}{record}\n", html(&p.to_string()));
        }
        s += &format!(
            "\n**Evidence**: {}\n\n",
            prose(&x.evidence).replace("\n\n", "<br><br>")
        );
        if let Some(c) = &f.cover {
            s += &crate::fact_cover::part(x, c);
        }
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
            for (other, o) in f.seen.iter().skip(1) {
                if !std::ptr::eq(*other, *run) && o.trial.test_key() == r.trial.test_key() {
                    s += &format!(
                        "\nAnd in the run of {} on {}: {}\n",
                        other.date,
                        html(&other.machine.label()),
                        status_of(ctx, o)
                    );
                }
            }
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
    s += "Where a GPU, its driver, its device runtime or nvcc does not do what the guide says. \
          **Known facts** are listed in `conformance/facts/` with where they were measured, what \
          they are believed to depend on and the evidence: where one applies, a trial it covers is \
          `xfail` (measured on that GPU model and driver), `known` (it applies there but was \
          measured elsewhere), `known-hang` (a hang that timed out again) or `changed` (it no \
          longer reproduces, or an outcome listed as never observed showed). **Failures** and **quality warnings** are those of the newest run of \
          each GPU that no fact covers. A fact about a test is listed once, under the rule whose \
          promise it breaks, with every rule that lists the test.\n\n";
    let facts = facts(ctx);
    s += &table(&facts);
    let known: Vec<(usize, &Fact)> = facts
        .iter()
        .enumerate()
        .filter(|(_, f)| f.known.is_some())
        .collect();
    for (heading, kind, anchor, none) in [
        (
            "Known discrepancies, by rule",
            FactKind::Discrepancy,
            "r-",
            "None listed.",
        ),
        (
            "Known hangs, by rule",
            FactKind::Hang,
            "rh-",
            "None listed (`lab/hangs/README.md` has the reproducers of the hangs still open).",
        ),
        (
            "Stronger than the guide (allowed, never observed), by rule",
            FactKind::Unobserved,
            "ru-",
            "None listed.",
        ),
        (
            "Known launch errors (a call that fails in some instances), by rule",
            FactKind::LaunchError,
            "rl-",
            "None listed.",
        ),
    ] {
        s += &format!("## {heading}\n\n");
        let of_kind: Vec<(usize, &Fact)> = known
            .iter()
            .filter(|(_, f)| f.known.is_some_and(|x| x.kind == kind))
            .copied()
            .collect();
        if of_kind.is_empty() {
            s += &format!("{none}\n\n");
        }
        s += &by_rule(ctx, &of_kind, anchor);
    }
    let (failures, warnings): (Vec<_>, Vec<_>) = facts
        .iter()
        .enumerate()
        .filter(|(_, f)| f.known.is_none())
        .partition(|(_, f)| f.status() != Some(Status::QualityWarning));
    for (heading, list, anchor, none) in [
        (
            "Failures in the latest results",
            &failures,
            "rf-",
            "None: no fail, crash, timeout or unmodeled state that no fact covers in the newest \
             run of any GPU.",
        ),
        (
            "Quality warnings in the latest results",
            &warnings,
            "rw-",
            "None.",
        ),
    ] {
        s += &format!("## {heading}\n\n");
        if list.is_empty() {
            s += &format!("{none}\n\n");
        } else if heading.starts_with("Quality") {
            s += "Not violations: the guide allows something the GPU was not seen to do (see \
                  [How to read a verdict](reading-a-verdict.md)).\n\n";
        }
        s += &by_rule(ctx, list, anchor);
    }
    s
}

/// Facts under the rule whose promise each breaks ([`home_rule`]): a
/// heading and the rule's words, then each fact's section, numbered as in
/// the table. The heading's anchor is `<anchor><rule slug>`, one prefix a
/// part of the page (a rule can head a part of each).
fn by_rule(ctx: &Ctx, list: &[(usize, &Fact)], anchor: &str) -> String {
    let mut s = String::new();
    let mut rules: Vec<String> = Vec::new();
    for (_, f) in list {
        let r = home_rule(f);
        if !rules.contains(&r) {
            rules.push(r);
        }
    }
    for rule in rules {
        s += &format!(
            "<h3 id=\"{anchor}{}\">{}</h3>\n\n",
            slug(&rule),
            html(&rule)
        );
        s += &rule_head(ctx, &rule, true);
        s += "\n";
        for (i, f) in list.iter().filter(|(_, f)| home_rule(f) == rule) {
            s += &section(ctx, i + 1, f, "h4", Some(&rule));
        }
    }
    s
}
