//! The discrepancies page shows the known facts as a run on another GPU
//! sees them: a run on a GPU no record comes from (a GH200, with the
//! H100's driver and device runtime) is given the H100's newest records,
//! judged again by the facts; its rows say `known` where the H100's say
//! `xfail`, and a fact that no longer reproduces says `changed`.

mod common;

use gridcheck_report::{Facts, Status};

#[test]
fn facts_travel_to_another_gpu_on_the_page() {
    let mut inputs = common::inputs();
    let latest = gridcheck_docs::results::latest(&inputs.runs);
    let h100 = latest
        .iter()
        .find(|r| r.machine.gpu == "NVIDIA H100 80GB HBM3")
        .map(|r| (*r).clone())
        .expect("a recorded H100 run");
    let facts = Facts {
        entries: inputs.facts.clone(),
    };
    let mut h200 = h100.clone();
    h200.slug = "nvidia-gh200-480gb".into();
    h200.machine.gpu = "NVIDIA GH200 480GB".into();
    let mut changed = None;
    for r in &mut h200.records {
        if let Some(e) = r.environment.as_mut() {
            e.gpu = "NVIDIA GH200 480GB".into();
        }
        if r.status == Status::Xfail {
            // What the run measured before the facts were applied.
            r.status = Status::Fail;
            if changed.is_none() && r.trial.tier == gridcheck_report::Tier::Gpu {
                r.status = Status::Pass;
                changed = Some(r.trial.clone());
            }
            (r.status, r.message) = facts.apply(r);
        }
    }
    let changed = changed.expect("an xfail in the H100's newest run");
    let known = h200
        .records
        .iter()
        .filter(|r| r.status == Status::Known)
        .count();
    assert!(known > 0, "the H100's facts are known on the GH200");
    assert!(
        h200.records
            .iter()
            .filter(|r| r.trial.tier == gridcheck_report::Tier::Gpu)
            .all(|r| r.status != Status::Xfail),
        "nothing is xfail on a GPU where no fact was measured"
    );
    inputs.runs.push(h200);
    let src = gridcheck_docs::site::render(&inputs);
    let disc = src.page("discrepancies.md").unwrap();
    let row_of = |test: &str| {
        let at = disc
            .find(&format!("<td><code>gpu/sm_90/{test}</code>"))
            .unwrap_or_else(|| panic!("a row for {test}"));
        &disc[at..at + disc[at..].find("</tr>").unwrap()]
    };
    let row = row_of("c2-memset-async-diagnosis");
    assert!(
        row.contains("gc-xfail\">xfail</span> <small>NVIDIA H100 80GB HBM3</small>")
            && row.contains("gc-known\">known</span> <small>NVIDIA GH200 480GB</small>"),
        "{row}"
    );
    assert!(row.contains("driver, device-runtime"), "{row}");
    assert!(row.contains("<td class=\"gc-st\">"), "{row}");
    let row = row_of(&changed.test);
    assert!(
        row.contains("gc-changed\">changed</span> <small>NVIDIA GH200 480GB</small>"),
        "{row}"
    );
    // Each fact sits under a rule, with its heading; hangs have their place.
    assert!(disc.contains("## Known discrepancies, by rule"), "{disc}");
    assert!(disc.contains("## Known hangs, by rule"), "{disc}");
    let memset = disc.find("<h4 id=\"d").expect("a fact's section");
    let rule = disc[..memset].rfind("<h3 id=\"r-").expect("under a rule");
    assert!(rule < memset);
    // The reproduce commands wrap.
    assert!(disc.contains("<div class=\"gc-repro\">"), "{disc}");
}

#[test]
fn the_site_css_wraps_commands_and_gives_statuses_their_column() {
    let (_, out, _) = common::built("facts-css");
    let css = std::fs::read_to_string(out.join("gridcheck.css")).unwrap();
    for rule in [
        ".gc-repro pre, .gc-repro code { white-space: pre-wrap;",
        ".gc-facts .gc-st { width: 11em; }",
        ".gc-facts td.gc-st small { display: block;",
        ".gc-known, .gc-known-hang {",
        ".gc-changed {",
        ".gc-unmodeled",
    ] {
        assert!(css.contains(rule), "{rule} in {css}");
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// The section of fact number `n` on the discrepancies page.
fn section_of(disc: &str, n: usize) -> &str {
    let at = disc
        .find(&format!("<h4 id=\"d{n}\">"))
        .unwrap_or_else(|| panic!("a section d{n}"));
    let rest = &disc[at + 4..];
    let end = ["<h4 id=", "<h3 id=", "\n## "]
        .iter()
        .filter_map(|m| rest.find(m))
        .min()
        .unwrap_or(rest.len());
    &disc[at..at + 4 + end]
}

/// Each known fact's section says what its shape covers with the counts
/// the run's summary prints for it (both from `Facts::cover`): tests by
/// name, by shape only (listed), mutants, findings.
#[test]
fn each_fact_shows_what_its_shape_covers_as_the_summary_counts_it() {
    let inputs = common::inputs();
    let src = gridcheck_docs::site::render(&inputs);
    let disc = src.page("discrepancies.md").unwrap();
    let covers = gridcheck_docs::fact_cover::of_inputs(&inputs);
    assert_eq!(covers.len(), inputs.facts.len());
    let summary = gridcheck_report::Summary::of(&[])
        .with_facts(&covers)
        .text();
    let block: Vec<&str> = summary
        .lines()
        .skip_while(|l| !l.starts_with("what each known fact covers"))
        .skip(1)
        .collect();
    assert_eq!(block.len(), inputs.facts.len(), "{summary}");
    let (mut by_shape, mut none_beyond) = (0, 0);
    // The known facts are the page's first facts, in the files' order.
    for (i, ((fact, cover), line)) in inputs.facts.iter().zip(&covers).zip(&block).enumerate() {
        let section = section_of(disc, i + 1);
        let key = fact.subject.to_string();
        let counts = line
            .strip_prefix(&format!("  {key} ({}): ", fact.kind.as_str()))
            .unwrap_or_else(|| panic!("{key}'s line: {line}"));
        assert!(
            section.contains(&format!("**What it covers**: {counts}.")),
            "{key}: `{counts}` in\n{section}"
        );
        if !cover.by_shape.is_empty() {
            by_shape += 1;
            let listed = section
                .lines()
                .find(|l| l.starts_with("- Tests by shape only: "))
                .unwrap_or_else(|| panic!("{key}: the tests by shape in\n{section}"));
            assert_eq!(
                listed.matches('`').count(),
                2 * cover.by_shape.len(),
                "{listed}"
            );
            for t in &cover.by_shape {
                assert!(listed.contains(&format!("`{t}`")), "{t} in {listed}");
            }
        } else if cover.shape {
            none_beyond += 1;
            assert!(
                section.contains("- Tests by shape: none beyond the test it names."),
                "{key}: {section}"
            );
        }
        if cover.findings.is_empty() && cover.shape {
            assert!(
                section.contains("- Campaign findings: no recorded finding"),
                "{section}"
            );
        }
        if let Some(e) = &fact.envelope {
            assert!(
                section.contains(&format!("up to {} instances of a program", e.instances)),
                "{section}"
            );
        }
    }
    // The checked-in facts have both: a shape that reaches tests it does
    // not name, and one that matches only its own.
    assert!(by_shape > 0 && none_beyond > 0, "{by_shape} {none_beyond}");
    let tail = inputs
        .facts
        .iter()
        .position(|f| {
            f.subject.to_string() == "gpu/sm_90/c2-tail-sees-other-thread-write-after-trigger"
        })
        .expect("the fact");
    assert!(
        section_of(disc, tail + 1).contains("- Tests by shape only: `"),
        "{}",
        section_of(disc, tail + 1)
    );
}

/// A fact whose trials no GPU's newest run holds (a library algorithm's
/// cases, recorded in runs of the library tier alone) is shown by the
/// newest run that has them, by a trial that showed it, not as "not in the
/// latest results".
#[test]
fn a_fact_is_shown_by_the_newest_run_that_holds_its_trials() {
    let inputs = common::inputs();
    let src = gridcheck_docs::site::render(&inputs);
    let disc = src.page("discrepancies.md").unwrap();
    let (mut checked, mut showed) = (0, 0);
    for x in &inputs.facts {
        let holds = inputs
            .runs
            .iter()
            .any(|run| run.records.iter().any(|r| x.covers(&r.trial)));
        if !holds || x.subject.tier() != gridcheck_report::Tier::Library {
            continue;
        }
        let subject = x.subject.to_string();
        let at = disc.find(&subject).expect("every fact is on the page");
        let next = disc[at..]
            .find("**Observed**")
            .map(|i| &disc[at + i..])
            .expect("an Observed line");
        let line = next.lines().next().unwrap();
        assert!(
            !line.contains("not in the latest results"),
            "{subject}: {line}"
        );
        // Shown by a trial that showed it, where every run the page takes
        // it from has one (a fact that reproduces only sometimes may not).
        let latest: Vec<_> = gridcheck_docs::results::latest(&inputs.runs)
            .into_iter()
            .flat_map(|run| run.records.iter().map(move |r| (run, r)))
            .collect();
        let shown = gridcheck_docs::showing::showing(x, &latest, &inputs.runs);
        let showed_in_each = !shown.is_empty()
            && shown.iter().all(|(run, _)| {
                shown.iter().any(|(other, r)| {
                    std::ptr::eq(*run, *other) && r.status != gridcheck_report::Status::Pass
                })
            });
        if showed_in_each {
            showed += 1;
            assert!(
                !line.contains("gc-pass"),
                "{subject} shown by a passing trial: {line}"
            );
        }
        checked += 1;
    }
    assert!(checked > 0, "the records hold library facts' trials");
    assert!(showed > 0, "some library fact's newest run shows it");
}
