//! The site's pages other than the rule pages: the index (mirroring the
//! seeds' sections), one page a seed, how to read a verdict, the
//! discrepancies, coverage, the recorded runs and the benchmarks.

use std::collections::BTreeMap;

use gridcheck_report::{Status, TrialRecord};
use gridcheck_spec::SourceKind;

use crate::context::{Ctx, seed_path};
use crate::coverage::Coverage;
use crate::fragments::status_badges;
use crate::sections::SeedGroup;
use crate::summary::counts;
use crate::svg::{self, Bar, Chart};
use crate::text::{badge, cell, code, fenced, html, rule_path};

/// The first sentence-ish of a quote, for tables.
fn gist(q: &str) -> String {
    let q = q.split_whitespace().collect::<Vec<_>>().join(" ");
    if q.chars().count() <= 140 {
        return q;
    }
    let cut: String = q.chars().take(137).collect();
    format!("{}…", cut.trim_end())
}

/// The rules of a seed, section by section, as tables.
fn seed_tables(ctx: &Ctx, g: &SeedGroup, prefix: &str, level: &str) -> String {
    let mut s = String::new();
    for sec in &g.sections {
        s += &format!("{level} {}\n\n", html(&sec.title));
        s += "| rule | what the guide says | tests | status |\n|---|---|---|---|\n";
        for r in &sec.rules {
            let kinds: BTreeMap<&str, usize> = r
                .tests
                .iter()
                .filter_map(|t| ctx.inputs.spec.test(t))
                .fold(BTreeMap::new(), |mut m, t| {
                    *m.entry(t.body.kind()).or_default() += 1;
                    m
                });
            let tests: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
            s += &format!(
                "| [{}]({prefix}{}) | {} | {} | {} |\n",
                r.id,
                rule_path(&r.id),
                cell(&gist(&r.quote)),
                if tests.is_empty() {
                    "—".to_string()
                } else {
                    tests.join(", ")
                },
                status_badges(ctx, r)
            );
        }
        s += "\n";
    }
    s
}

fn run_counts_line(records: &[TrialRecord]) -> String {
    let mut by_status: BTreeMap<Status, usize> = BTreeMap::new();
    for r in records {
        *by_status.entry(r.status).or_default() += 1;
    }
    by_status
        .iter()
        .map(|(s, n)| format!("{n} {s}"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) fn index(ctx: &Ctx) -> String {
    let spec = &ctx.inputs.spec;
    let mut s = String::from("# What CUDA Dynamic Parallelism and PDL guarantee\n\n");
    s += &format!(
        "This site lists, rule by rule, what the CUDA documentation promises about launching work \
         from the GPU (CUDA Dynamic Parallelism: CDP2, and the legacy CDP1) and about Programmatic \
         Dependent Launch (PDL). Each of the **{} rules** quotes its source verbatim and links to its \
         **tests** ({} in all): litmus tests that a reference model explores exhaustively and a GPU \
         runs thousands of times, compile tests for nvcc and runtime tests of the device runtime's API. \
         [How to read a verdict](reading-a-verdict.md) explains the words and the statuses.\n\n",
        spec.rules.len(),
        spec.tests.len()
    );
    if ctx.latest.is_empty() {
        s += "No run is recorded under `records/`: the pages show the spec and no results.\n\n";
    } else {
        s += "Results shown (the newest run of each GPU):\n\n";
        for run in &ctx.latest {
            s += &format!(
                "- **{}**, driver {}, nvcc {}: run of {} ({} trials: {})\n",
                html(&run.machine.gpu),
                html(&run.machine.driver),
                html(&run.machine.nvcc),
                run.date,
                run.records.len(),
                run_counts_line(&run.records)
            );
        }
        s += "\n";
    }
    let n_disc = crate::discrepancies::facts(ctx).len();
    s += &format!(
        "Where the guide and a GPU or compiler disagree: [**Discrepancies**](discrepancies.md) \
         ({n_disc} entries, with the evidence and the command that reproduces each). Also: \
         [Coverage](coverage.md) (what the spec can and cannot test), [Recorded runs](runs.md), \
         [Real-world shapes](shapes.md) (the PDL shapes public code failed in, and what covers \
         each), [Benchmarks](benchmarks.md).\n\n"
    );
    s += "## Index by source document\n\n";
    s += "The rules in the order of the documents they quote: document, section, rule.\n\n";
    for g in &ctx.groups {
        let n: usize = g.sections.iter().map(|x| x.rules.len()).sum();
        s += &format!(
            "### [{}]({})\n\n{} rules in {} sections; {} `{}`.\n\n",
            cell(&g.title),
            seed_path(&g.seed),
            n,
            g.sections.len(),
            kind_word(g.kind),
            g.seed
        );
        s += &seed_tables(ctx, g, "", "####");
    }
    s
}

/// How the index names a source's file.
fn kind_word(kind: SourceKind) -> &'static str {
    match kind {
        SourceKind::Seed => "seed",
        SourceKind::Document => "a document other than the seeds, its passages in spec/documents",
    }
}

pub(crate) fn seed_page(ctx: &Ctx, g: &SeedGroup) -> String {
    let mut s = format!("# {}\n\n", html(&g.title));
    s += &match g.kind {
        SourceKind::Seed => format!("Seed file `{}`", g.seed),
        SourceKind::Document => format!(
            "Not one of the seed documents: the passages the rules quote are copied in \
             `spec/documents/{}`",
            g.seed
        ),
    };
    if let Some(u) = &g.url {
        s += &format!(", captured from <{u}>");
    }
    s += ". The rules that quote it, by section:\n\n";
    s += &seed_tables(ctx, g, "../", "##");
    s
}

/// ARCHITECTURE.md, whose "The verdict diff" is the one statement of how a
/// status follows from the model and the hardware; the site shows it as is.
const ARCHITECTURE: &str = include_str!("../../../ARCHITECTURE.md");

/// The body of ARCHITECTURE.md's section "The verdict diff" (its table and
/// the paragraphs after it), or `None` when the section is gone.
pub(crate) fn verdict_diff(architecture: &str) -> Option<&str> {
    let start = architecture.find("\n## The verdict diff\n")? + "\n## The verdict diff\n".len();
    let rest = &architecture[start..];
    let end = rest.find("\n## ").unwrap_or(rest.len());
    let body = rest[..end].trim();
    body.contains("| model | hardware | status |")
        .then_some(body)
}

pub(crate) fn reading_a_verdict() -> String {
    // A test checks the section is found; were it not, the page says where
    // the table is rather than showing none.
    let table = verdict_diff(ARCHITECTURE)
        .unwrap_or("The table is in the repository's ARCHITECTURE.md, \"The verdict diff\".");
    READING_A_VERDICT.replace("{verdict-diff}", table)
}

const READING_A_VERDICT: &str = r#"# How to read a verdict

Every rule page shows a rule of the guide, its tests, what the **model** says
the guide allows, what the **hardware** did, and the resulting **status**.

## The model's verdict: Forbidden, Allowed, Required

A litmus test ends with a condition over the final state, in herd7's
notation: `exists child.t0.r1 == 0 /\ x == 1` asks whether some execution
ends with register `r1` of thread 0 of kernel `child` holding 0 and location
`x` holding 1. Two oracles explore the executions the guide allows: an
axiomatic model in the manner of herd7 (`crates/axiom`: the guide's orders,
one relation a sentence, and its axioms), whose reachable states are the
verdict, and the loom model (`crates/model`: every interleaving under loom),
which cross-checks it. A test on which they disagree is an
**oracle-conflict**, and no verdict is given. The verdict says:

| verdict | meaning |
|---|---|
| **forbidden** | no execution the guide allows ends in a state satisfying the condition |
| **allowed** | some execution may, and some may not: the guide does not decide |
| **required** | every execution does |

The page lists the model's **reachable final states**, marking those that
satisfy the condition, with the number of executions explored.
**Bounded exploration**: for the larger tests loom explores only the
executions with at most *N* preemptions (*preemption bound N*); the page
shows the bound. A test of more than loom's four threads is decided by the
axiomatic model alone.
The spec states the verdict it expects; the model tier passes when the model
agrees.

## The hardware's observation: Never, Sometimes, Always

The GPU runs many independent instances of the test (thousands a launch,
with stress and random delays) and counts the final states: the
**histogram**. The plot on a rule page has one bar a final state, most
frequent first; **orange bars satisfy the condition**, blue bars do not; a
count marked *(unmodeled)* is a state the model cannot reach. A log scale is
used when some state is rarer than a tenth of the most frequent one, so
that a rare outcome stays visible.

- **Never**: no instance satisfied the condition (Positive = 0);
- **Always**: every instance did (Negative = 0);
- **Sometimes**: some did, some did not.

The *litmus7 block* under each plot is the same histogram as text: `*` marks
a state satisfying the condition, `>` one the model can reach, `!` one it
cannot; Positive and Negative are the counts of instances satisfying the
condition or not.

## The status: model against hardware

{verdict-diff}

Runtime tests compare named outputs with expected values (an error code, a
count); compile tests check that nvcc accepts, rejects or warns.

| status | meaning |
|---|---|
| <span class="gc-status gc-pass">pass</span> | the hardware or the compiler did what the guide says |
| <span class="gc-status gc-fail">fail</span> | it did not: a discrepancy nobody has explained yet |
| <span class="gc-status gc-unmodeled">unmodeled</span> | the hardware reached a state neither oracle reaches: the guide or the model is missing something (fails the run) |
| <span class="gc-status gc-xfail">xfail</span> | a known fact (`conformance/facts/`, with its evidence) measured on this GPU model with this driver, reproduced |
| <span class="gc-status gc-known">known</span> | a known fact that applies here (its `depends_on`: the driver, the device runtime, ...) but was measured elsewhere, reproduced; the message names where it was first measured |
| <span class="gc-status gc-known-hang">known-hang</span> | a timeout that a known hang covers |
| <span class="gc-status gc-changed">changed</span> | a known fact applies here but did not reproduce: not a failure of the run, never a silent pass; the fact needs updating |
| <span class="gc-status gc-quality-warning">quality-warning</span> | allowed but never observed (records made before `unmodeled` existed also used it for an unmodeled state) |
| <span class="gc-status gc-oracle-conflict">oracle-conflict</span> | the two oracles reach different states: no verdict can be trusted |
| <span class="gc-status gc-not-supported">not-supported</span> | this machine cannot run it (CDP1 needs compute capability below 9.0; PDL needs 9.0) |
| <span class="gc-status gc-not-run">not-run</span> | not run for another reason (no nvcc, not built); the message says which |
| <span class="gc-status gc-stale">stale</span> | beside a status: the test has changed since the run that recorded it (the record carries the test's hash); run it again |
| <span class="gc-status gc-timeout">timeout</span>, <span class="gc-status gc-crash">crash</span> | the trial's process was killed after its time limit, or died |

A trial that did not run is never shown as passed. A rule with no runnable
test says why (`untestable`, `needs-older-gpu`, `needs-multi-gpu`,
`needs-harness`), or is a performance claim measured by the benchmarks
(`benchmarked`: the reason names the figures; see the benchmarks page), a
definition or overview that other rules rely on (`definition`: the reason
names them), or an error of the source (`erratum`: the reason says what is
wrong and names the rule that tests what the code does).

## What a pass does and does not prove

A **pass** on *forbidden* means the forbidden outcome was not seen in the
instances run; it is evidence, not proof, that the hardware honours the rule.
A **pass** on *allowed* means the weak outcome was seen, so code must not
rely on its absence. A **quality-warning** (*unobserved*) means the guide
allows an outcome this GPU was not seen to produce: code that relies on its
absence works here today, but the guide does not promise it.
"#;

pub(crate) fn coverage(ctx: &Ctx) -> String {
    Coverage::of(&ctx.inputs.spec).markdown("")
}

pub(crate) fn runs(ctx: &Ctx) -> String {
    let mut s = String::from("# Recorded runs\n\n");
    s += "Every run under `records/<gpu>/<date>/`, newest first, with what it found \
          (its `README.md`). The rule pages show the newest run of each GPU.\n\n";
    if ctx.inputs.runs.is_empty() {
        s += "No run is recorded.\n";
        return s;
    }
    let mut runs: Vec<&crate::results::Run> = ctx.inputs.runs.iter().collect();
    runs.sort_by(|a, b| b.date.cmp(&a.date).then(a.slug.cmp(&b.slug)));
    for run in runs {
        let latest = ctx.latest.iter().any(|l| std::ptr::eq(*l, run));
        s += &format!(
            "## {} — {}{}\n\n",
            html(&run.machine.gpu),
            run.date,
            if latest { " (latest)" } else { "" }
        );
        if let Ok(notes) = std::fs::read_to_string(run.dir.join("README.md")) {
            s += &run_notes(&notes);
            s += "\n";
        }
        let kernels = match &run.machine.toolchain {
            Some(t) => format!(", kernels built by {}", html(t)),
            None => String::new(),
        };
        s += &format!(
            "Driver {}, nvcc {} where the harness ran{kernels}; results `{}`.\n\n",
            html(&run.machine.driver),
            html(&run.machine.nvcc),
            run.results_path(&ctx.inputs.root)
        );
        if !run.variants.is_empty() {
            let names: Vec<String> = run
                .variants
                .iter()
                .map(|v| format!("`{}`", v.variant.as_deref().unwrap_or_default()))
                .collect();
            s += &format!(
                "The same run under other toolchains' kernels: {} (`toolchains/`; compared on \
                 the [Toolchains](toolchains.md) page).\n\n",
                names.join(", ")
            );
        }
        let c = counts(&run.records);
        s += "| tier | status | trials |\n|---|---|---:|\n";
        for ((tier, status), n) in &c {
            s += &format!("| {tier} | {} | {n} |\n", badge(*status));
        }
        s += "\n";
        if let Ok(machine) = std::fs::read_to_string(run.dir.join("machine.txt")) {
            s += "`machine.txt`:\n\n";
            s += &fenced("text", &machine);
            s += "\n";
        }
        if let Ok(fault) = std::fs::read_to_string(run.dir.join("fault-check.txt")) {
            s += "`fault-check.txt` (the fault fixtures: a hang, an illegal address, a module that \
                  does not load, and a run killed then resumed):\n\n";
            s += &fenced("text", &fault);
            s += "\n";
        }
    }
    s
}

/// A run's `README.md` as a part of the runs page: its title is the run's
/// heading already, and its links, relative to the run's folder, become
/// plain text (the page is elsewhere).
pub(crate) fn run_notes(notes: &str) -> String {
    let body = match notes.split_once('\n') {
        Some((first, rest)) if first.starts_with("# ") => rest,
        _ => notes,
    };
    let mut out = String::new();
    let mut rest = body.trim_start_matches('\n');
    while let Some(open) = rest.find('[') {
        let after = &rest[open + 1..];
        let link = after.find("](").and_then(|close| {
            let target = &after[close + 2..];
            let end = target.find(')')?;
            let relative = !target[..end].contains("://");
            (relative && !after[..close].contains(['[', ']', '\n']))
                .then_some((close, close + 2 + end + 1))
        });
        match link {
            Some((close, end)) => {
                out += &rest[..open];
                out += &after[..close];
                rest = &after[end..];
            }
            None => {
                out += &rest[..=open];
                rest = after;
            }
        }
    }
    out + rest
}

pub(crate) fn benchmarks(ctx: &Ctx) -> String {
    let mut s = String::from("# Benchmarks\n\n");
    if ctx.inputs.baselines.is_empty() {
        s += "No benchmark baseline is committed yet. `cargo xtask bench` measures launch \
              latencies and PDL overlap on a GPU and writes \
              `conformance/bench/baselines/<gpu>.json`; this page then shows one plot per group \
              of figures (median, with whiskers from the 10th to the 90th percentile).\n";
        return s;
    }
    for b in &ctx.inputs.baselines {
        let m = &b.machine;
        s += &format!("## {} ({})\n\n", html(&m.gpu), m.date);
        s += &format!(
            "Driver {}, nvcc {}. Measured with {}.\n\n",
            html(&m.driver),
            html(&m.nvcc),
            code(&m.command)
        );
        for note in &b.notes {
            s += &format!("- {}\n", html(note));
        }
        if !b.notes.is_empty() {
            s += "\n";
        }
        let mut groups: BTreeMap<(&str, &str), Vec<&crate::bench::Figure>> = BTreeMap::new();
        for f in &b.figures {
            groups.entry((&f.group, &f.unit)).or_default().push(f);
        }
        for ((group, unit), figs) in groups {
            s += &format!("### {} ({unit})\n\n", html(group));
            let chart = Chart {
                title: format!("{group} on {}: median, p10–p90", m.gpu),
                axis: unit.to_string(),
                bars: figs
                    .iter()
                    .map(|f| Bar {
                        label: f.title.clone(),
                        value: f.median,
                        whisker: Some((f.p10, f.p90)),
                        highlight: !f.lower_is_better,
                        value_label: format!("{} {unit}", svg::sig(f.median)),
                    })
                    .collect(),
                // Figures a hundredfold apart share a log axis, so the
                // small ones stay readable.
                log_scale: {
                    let pos = figs.iter().map(|f| f.median).filter(|v| *v > 0.0);
                    let (lo, hi) = pos.fold((f64::MAX, 0.0f64), |(l, h), v| (l.min(v), h.max(v)));
                    hi > 100.0 * lo
                },
                legend: vec![
                    (false, "lower is better".to_string()),
                    (true, "higher is better".to_string()),
                ],
            };
            s += &format!(
                "<div class=\"gc-plot\">{}</div>\n\n",
                svg::bar_chart(&chart)
            );
            s += "| figure | median | p10 | p90 | min | max | repeats | parameters |\n|---|---:|---:|---:|---:|---:|---:|---|\n";
            for f in figs {
                let params: Vec<String> =
                    f.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
                s += &format!(
                    "| {} <br><small>{}</small> | {} | {} | {} | {} | {} | {} | {} |\n",
                    cell(&f.title),
                    code(&f.id),
                    svg::sig(f.median),
                    svg::sig(f.p10),
                    svg::sig(f.p90),
                    svg::sig(f.min),
                    svg::sig(f.max),
                    f.repeats,
                    cell(&params.join(", "))
                );
            }
            s += "\n";
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verdict_page_shows_architectures_table() {
        let table = verdict_diff(ARCHITECTURE).expect("ARCHITECTURE.md has the verdict diff");
        let page = reading_a_verdict();
        assert!(page.contains(table), "{page}");
        assert!(
            page.contains("| allowed | Never | quality-warning"),
            "{page}"
        );
        assert!(!page.contains("{verdict-diff}"), "{page}");
        // A document without the section gives no table.
        assert_eq!(verdict_diff("# A\n\n## Other\n\n| x |\n"), None);
    }

    #[test]
    fn run_notes_lose_their_title_and_relative_links() {
        let notes = "# H100, 2026-11-25\n\nSee [the next run](../2026-11-25.2/README.md), \
                     [loom](https://crates.io/crates/loom) and `a[0]`.\n";
        assert_eq!(
            run_notes(notes),
            "See the next run, [loom](https://crates.io/crates/loom) and `a[0]`.\n"
        );
        assert_eq!(run_notes("no title\n"), "no title\n");
    }
}
