//! The site built from this checkout has a page for every rule, and the
//! index, discrepancies and runs pages say what the records hold.

mod common;

use gridcheck_report::Status;

#[test]
fn a_page_for_every_rule() {
    let (inputs, out, built) = common::built("site");
    let rules = &inputs.spec.rules;
    assert_eq!(built.rule_pages, rules.len(), "one page a rule");
    let summary = std::fs::read_to_string(out.join("src/SUMMARY.md")).unwrap();
    let missing: Vec<&str> = rules
        .iter()
        .filter(|r| !out.join(format!("book/rules/{}.html", r.id)).is_file())
        .map(|r| r.id.as_str())
        .collect();
    assert!(missing.is_empty(), "rules with no HTML page: {missing:?}");
    for r in rules {
        assert!(
            summary.contains(&format!("[{}](rules/{}.md)", r.id, r.id)),
            "{} is not in SUMMARY.md",
            r.id
        );
    }
    for page in [
        "index",
        "reading-a-verdict",
        "discrepancies",
        "coverage",
        "runs",
        "toolchains",
        "shapes",
        "benchmarks",
    ] {
        assert!(
            out.join(format!("book/{page}.html")).is_file(),
            "{page}.html"
        );
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn pages_say_what_the_records_hold() {
    let inputs = common::inputs();
    let src = gridcheck_docs::site::render(&inputs);
    let index = src.page("index.md").unwrap();
    let latest = gridcheck_docs::results::latest(&inputs.runs);
    for run in &latest {
        assert!(
            index.contains(&run.machine.gpu),
            "index names {}",
            run.machine.gpu
        );
        assert!(index.contains(&format!(
            "run of {} ({} trials",
            run.date,
            run.records.len()
        )));
    }
    // The index links every rule.
    for r in &inputs.spec.rules {
        assert!(
            index.contains(&format!("(rules/{}.md)", r.id)),
            "index links {}",
            r.id
        );
    }
    let disc = src.page("discrepancies.md").unwrap();
    let mut with_trials = 0;
    for x in &inputs.facts {
        let subject = x.subject.to_string();
        assert!(
            disc.contains(&format!("`{subject}`")),
            "{subject} on the discrepancies page"
        );
        // A row of the table: the summary, where it was measured, what it
        // depends on; and a section with the evidence.
        let row = disc
            .find(&format!("<td><code>{subject}</code> "))
            .unwrap_or_else(|| panic!("{subject}: a row of the table"));
        let row = &disc[row..row + disc[row..].find("</tr>").unwrap()];
        let esc = |t: &str| {
            t.replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
                .replace('"', "&quot;")
                .replace('\'', "&#39;")
        };
        assert!(
            row.contains(&esc(&x.summary)),
            "{subject}: summary in {row}"
        );
        // The table condenses the places (a machine and the first and last
        // dates measured there); the fact's section lists each.
        for p in &x.measured {
            let machine = p.gpu.as_deref().unwrap_or("nvcc");
            let first = x
                .measured
                .iter()
                .filter(|q| q.gpu == p.gpu)
                .map(|q| q.date.as_str())
                .min()
                .unwrap();
            assert!(
                row.contains(&esc(machine)) && row.contains(first),
                "{subject}: measured on {machine} from {first} in {row}"
            );
            assert!(
                disc.contains(&esc(&p.to_string())),
                "{subject}: the place {p} in its section"
            );
        }
        assert!(
            row.contains(&esc(&x.depends_on_text())),
            "{subject}: depends on in {row}"
        );
        assert!(row.contains(x.kind.as_str()), "{row}");
        assert!(
            disc.contains(&format!("a known {} in `{}`", x.kind.as_str(), x.at())),
            "{subject}"
        );
        // Reproduced by one of the trials the entry covers; an entry whose
        // trials the newest run could not run (two GPUs, a run on one) says
        // it is not in the latest results.
        let pairs: Vec<_> = latest
            .iter()
            .flat_map(|run| run.records.iter().map(move |r| (*run, r)))
            .collect();
        let covered = gridcheck_docs::showing::showing(x, &pairs, &inputs.runs)
            .into_iter()
            .next()
            .map(|(_, r)| r);
        match covered {
            Some(covered) => {
                with_trials += 1;
                assert!(disc.contains(&format!(
                    "cargo xtask conformance --tier {} -- --exact {}",
                    covered.trial.tier, covered.trial
                )));
            }
            None => {
                let at = disc.find(&format!("`{subject}`")).expect("listed");
                assert!(
                    disc[at..].contains("**Observed**: not in the latest results."),
                    "{subject}: not in the latest results"
                );
            }
        }
    }
    assert!(
        with_trials > 0,
        "no known discrepancy has a trial in the latest runs"
    );
    // Each hardware fact once: one section a known entry, and one a test
    // (per run) for the problems no entry covers, however many rules list it.
    let sections = disc.matches(" id=\"d").count();
    let mut unlisted = std::collections::BTreeSet::new();
    for run in &latest {
        for r in run.records.iter().filter(|r| {
            matches!(r.status, Status::Fail | Status::QualityWarning)
                && !inputs.facts.iter().any(|x| x.covers(&r.trial))
        }) {
            unlisted.insert((run.slug.clone(), r.trial.test_key()));
        }
    }
    assert_eq!(sections, inputs.facts.len() + unlisted.len(), "{disc}");
    for run in &latest {
        for r in run
            .records
            .iter()
            .filter(|r| r.status == Status::QualityWarning)
        {
            assert!(
                disc.contains(&format!("`{}`", r.trial.test_key()))
                    && disc.contains(&format!("[{}](rules/{}.md)", r.trial.rule, r.trial.rule)),
                "quality warning {} listed",
                r.trial
            );
        }
        // A trial that did not run is shown as such on its rule page, with its reason.
        if let Some(r) = run
            .records
            .iter()
            .find(|r| r.status == Status::NotSupported)
        {
            let rule = &r.trial.rule;
            let page = src.page(&format!("rules/{rule}.md")).unwrap();
            assert!(page.contains("gc-not-supported"), "{rule}");
            assert!(
                page.contains(&gridcheck_docs::text::cell(&r.message)),
                "{rule}"
            );
        }
    }
    // What each run found, from its README.md, is on the runs page.
    let runs = src.page("runs.md").unwrap();
    let mut with_notes = 0;
    for run in &inputs.runs {
        let Ok(notes) = std::fs::read_to_string(run.dir.join("README.md")) else {
            continue;
        };
        with_notes += 1;
        let first = notes
            .lines()
            .skip(1)
            .find(|l| !l.trim().is_empty() && !l.contains("]("))
            .unwrap_or_else(|| panic!("{}: README.md has a line of text", run.dir.display()));
        assert!(runs.contains(first), "runs page shows {first:?}");
    }
    assert!(with_notes > 0, "no recorded run says what it found");
    // The toolchains page follows the runs page and shows, per GPU, the
    // newest run with toolchain variants, or says there is none.
    let summary = src.page("SUMMARY.md").unwrap();
    assert!(
        summary.contains("[Recorded runs](runs.md)\n[Toolchains](toolchains.md)\n"),
        "{summary}"
    );
    let tc = src.page("toolchains.md").unwrap();
    let with_variants: Vec<&gridcheck_docs::results::Run> = inputs
        .runs
        .iter()
        .filter(|r| !r.variants.is_empty())
        .collect();
    if with_variants.is_empty() {
        assert!(
            tc.contains("No recorded run has toolchain variants"),
            "{tc}"
        );
    }
    for run in &with_variants {
        assert!(
            tc.contains(&format!("### {} — ", run.machine.gpu)),
            "{} is on the toolchains page",
            run.dir.display()
        );
        for v in &run.variants {
            let name = v.variant.as_deref().unwrap_or_default();
            assert!(tc.contains(name), "{name} on the toolchains page");
        }
    }
    let bench = src.page("benchmarks.md").unwrap();
    if inputs.baselines.is_empty() {
        assert!(bench.contains("No benchmark baseline is committed yet"));
    }
}

#[test]
fn benchmarks_page_plots_one_chart_per_group() {
    let mut inputs = common::inputs();
    let fixture = r#"{"schema": 1,
 "machine": {"gpu": "NVIDIA H100 80GB HBM3", "slug": "nvidia-h100-80gb-hbm3", "driver": "580.159.04", "nvcc": "13.0.88", "date": "2026-11-22", "command": "cargo xtask bench"},
 "figures": [
  {"id": "launch.device.null-stream.latency", "group": "launch", "title": "device launch, NULL stream, serial", "unit": "us", "lower_is_better": true,
   "median": 1.23, "p10": 1.1, "p90": 1.4, "min": 1.0, "max": 2.0, "repeats": 50, "params": {"blocks": "1"}},
  {"id": "launch.device.tail.latency", "group": "launch", "title": "device launch, tail stream", "unit": "us", "lower_is_better": true,
   "median": 2.5, "p10": 2.0, "p90": 3.0, "min": 1.9, "max": 4.0, "repeats": 50},
  {"id": "pdl.overlap", "group": "pdl", "title": "PDL overlap", "unit": "us", "lower_is_better": false,
   "median": 4.0, "p10": 3.5, "p90": 4.5, "min": 3.0, "max": 5.0, "repeats": 20}],
 "notes": ["a fixture, not a measurement"]}"#;
    inputs.baselines =
        vec![gridcheck_docs::bench::parse(fixture, std::path::Path::new("fixture.json")).unwrap()];
    let src = gridcheck_docs::site::render(&inputs);
    let page = src.page("benchmarks.md").unwrap();
    assert_eq!(page.matches("<svg").count(), 2, "{page}");
    assert_eq!(page.matches("class=\"gc-whisker\"").count(), 3, "{page}");
    assert!(
        page.contains("### launch (us)") && page.contains("### pdl (us)"),
        "{page}"
    );
    assert!(
        page.contains("| 1.230 | 1.100 | 1.400 | 1.000 | 2.000 | 50 | blocks=1 |"),
        "{page}"
    );
    assert!(page.contains("a fixture, not a measurement"));
}

/// A record that carries its test's hash is marked stale on the rule page
/// once the test has changed; with the current hash, or with none (records
/// written before they carried one), it is not.
#[test]
fn a_result_of_a_changed_test_is_marked_stale() {
    let mut inputs = common::inputs();
    // A record of the newest run of its GPU: the pages show only those.
    let newest = |ri: usize| {
        let run = &inputs.runs[ri];
        !inputs
            .runs
            .iter()
            .any(|o| o.slug == run.slug && o.date > run.date)
    };
    let Some((ri, ti)) = inputs
        .runs
        .iter()
        .enumerate()
        .filter(|(ri, _)| newest(*ri))
        .find_map(|(ri, run)| {
            run.records
                .iter()
                .position(|r| {
                    r.status == Status::Pass && r.trial.tier == gridcheck_report::Tier::Gpu
                })
                .map(|ti| (ri, ti))
        })
    else {
        eprintln!("no recorded GPU pass to mark");
        return;
    };
    let (rule, test) = {
        let r = &inputs.runs[ri].records[ti];
        (r.trial.rule.clone(), r.trial.test.clone())
    };
    let page = |inputs: &gridcheck_docs::site::Inputs| {
        let src = gridcheck_docs::site::render(inputs);
        src.page(&format!("rules/{rule}.md")).unwrap().to_string()
    };
    let current = gridcheck_kernelgen::test_hash(inputs.spec.test(&test).unwrap());
    for r in inputs
        .runs
        .iter_mut()
        .flat_map(|run| run.records.iter_mut())
    {
        r.test_hash = None;
    }
    assert!(!page(&inputs).contains("gc-stale"), "no hash, no mark");
    inputs.runs[ri].records[ti].test_hash = Some(current);
    assert!(!page(&inputs).contains("gc-stale"), "the test is unchanged");
    inputs.runs[ri].records[ti].test_hash = Some("0000000000000000".into());
    let p = page(&inputs);
    assert!(
        p.contains("gc-stale\" title=\"the test has changed since this run\">stale"),
        "{p}"
    );
}

/// A record written under a former name of a test (its `formerly:`) is
/// shown as that test's, in its rule's row, with the name it was recorded
/// as; its hash is compared with the test's under that name, so that it is
/// stale exactly when a record of the test under its own name of the same
/// run is.
#[test]
fn a_result_under_a_former_name_is_the_tests_now() {
    let inputs = common::inputs();
    let mut moved = 0;
    for run in &inputs.runs {
        for r in run.records.iter().filter(|r| r.recorded_as.is_some()) {
            moved += 1;
            let old = r.recorded_test_name();
            let test = inputs.spec.test(&r.trial.test).expect("the test now");
            assert!(test.formerly.iter().any(|f| f == old), "{}", r.trial);
            let rule = inputs.spec.rule(&r.trial.rule).expect("the rule");
            assert!(
                rule.tests.contains(&test.name),
                "{} lists the test",
                rule.id
            );
            let Some(recorded) = &r.test_hash else {
                continue;
            };
            let same_run_own = run.records.iter().find(|o| {
                o.recorded_as.is_none() && o.trial.test == test.name && o.test_hash.is_some()
            });
            if let Some(own) = same_run_own {
                let own_current =
                    own.test_hash.as_deref() == Some(&gridcheck_kernelgen::test_hash(test));
                let old_current = *recorded == gridcheck_kernelgen::test_hash_as(test, old);
                assert_eq!(own_current, old_current, "{} in {}", r.trial, run.date);
            }
        }
    }
    assert!(
        moved > 0,
        "the recorded runs hold results under former names"
    );
    // On a page: the rule's row names the test now, says what it was
    // recorded as, and is not stale when the program that ran is the same.
    // The newest run of a GPU need not hold a record under a former name (a
    // run after a rename records the new one), so one of its records of a
    // renamed test is made one: written under the former name by the
    // program the test is now.
    let mut inputs = inputs;
    let newest: Vec<(String, String)> = gridcheck_docs::results::latest(&inputs.runs)
        .iter()
        .map(|run| (run.slug.clone(), run.date.clone()))
        .collect();
    let spec = &inputs.spec;
    let (record, former) = inputs
        .runs
        .iter_mut()
        .filter(|run| newest.contains(&(run.slug.clone(), run.date.clone())))
        .flat_map(|run| run.records.iter_mut())
        .find_map(|r| {
            let t = spec.test(&r.trial.test)?;
            let former = t.formerly.first()?.clone();
            r.recorded_as = Some(former.clone());
            r.test_hash = Some(gridcheck_kernelgen::test_hash_as(t, &former));
            Some((r.clone(), former))
        })
        .expect("a record of a renamed test in the newest run");
    assert_eq!(record.recorded_test_name(), former);
    let src = gridcheck_docs::site::render(&inputs);
    let r = &record;
    let page = src.page(&format!("rules/{}.md", r.trial.rule)).unwrap();
    let said = format!("recorded as <code>{}</code>", r.recorded_test_name());
    let row = page
        .lines()
        .find(|l| l.contains(&said))
        .unwrap_or_else(|| panic!("{said} on the page of {}:\n{page}", r.trial.rule));
    assert!(!row.contains("gc-stale"), "{row}");
}

/// A program read from its own file (`source_file:`) is shown on its
/// rule's page, named with its file.
#[test]
fn a_program_in_its_own_file_is_shown_with_its_name() {
    let inputs = common::inputs();
    let (test, body) = inputs
        .spec
        .tests
        .iter()
        .find_map(|t| match (&t.body, &t.source_file) {
            (gridcheck_spec::TestBody::Runtime(r), Some(_)) => Some((t, r)),
            _ => None,
        })
        .expect("a runtime test whose program is in a .cu file");
    let rule = inputs
        .spec
        .rules
        .iter()
        .find(|r| r.tests.contains(&test.name))
        .expect("a rule lists it");
    let src = gridcheck_docs::site::render(&inputs);
    let page = src
        .page(&format!("rules/{}.md", rule.id))
        .expect("the rule's page");
    let file = gridcheck_kernelgen::spec_relative(test.source_file.as_ref().unwrap());
    assert!(file.ends_with(&format!("src/{}.cu", test.name)), "{file}");
    assert!(
        page.contains(&format!(
            "<summary>Source ({} lines, <code>{file}</code>)</summary>",
            body.source.lines().count()
        )),
        "{}: the source's summary names {file}",
        rule.id
    );
    let last = body.source.lines().rfind(|l| !l.trim().is_empty()).unwrap();
    assert!(page.contains(last), "{}: the program is shown", rule.id);
}

#[test]
fn a_run_with_a_toolchain_variant_is_on_the_runs_and_toolchains_pages() {
    let mut inputs = common::inputs();
    // The newest run of the GPU tier (the toolchains page compares kernels
    // of nvcc releases; a library run's programs are not such kernels).
    let Some(run) = inputs.runs.iter_mut().rev().find(|r| {
        r.records
            .iter()
            .any(|t| t.trial.tier == gridcheck_report::Tier::Gpu)
    }) else {
        panic!("no recorded run of the GPU tier")
    };
    // The run again, its kernels built by another toolchain; one trial's
    // status differs.
    let mut variant = run.clone();
    variant.variant = Some("nvcc-13.9".into());
    variant.dir = run.dir.join("toolchains/nvcc-13.9");
    for r in &mut variant.records {
        if let Some(e) = r.environment.as_mut() {
            e.toolchain = Some(gridcheck_report::ToolchainRecord {
                release: "13.9".into(),
                nvcc: "13.9.1".into(),
                devrt: "nvidia-cuda-runtime 13.9.1, /x/libcudadevrt.a (1 bytes, fnv1a64 0c)".into(),
                source: ".toolchains/13.9".into(),
                disassembler: None,
            });
        }
    }
    let changed = variant.records[0].trial.to_string();
    variant.records[0].status = if variant.records[0].status == Status::Crash {
        Status::Pass
    } else {
        Status::Crash
    };
    run.variants = vec![variant];
    let (gpu, date) = (run.machine.gpu.clone(), run.date.clone());
    let src = gridcheck_docs::site::render(&inputs);
    let runs = src.page("runs.md").unwrap();
    assert!(
        runs.contains("The same run under other toolchains' kernels: `nvcc-13.9`"),
        "the runs page names the variant"
    );
    let tc = src.page("toolchains.md").unwrap();
    assert!(tc.contains(&format!("### {gpu} — {date}")), "{tc}");
    assert!(
        tc.contains("<th>nvcc-13.9<br>nvcc 13.9.1<br><small>device runtime 13.9.1</small></th>"),
        "{tc}"
    );
    assert!(
        tc.contains(&format!("<code>{changed}</code>")),
        "the trial whose status differs: {changed}"
    );
    assert!(tc.contains("1 trial(s) differ between the columns"), "{tc}");
}
