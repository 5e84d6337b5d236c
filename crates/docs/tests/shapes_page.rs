//! The *Real-world shapes* page: every shape of `spec/shapes.yaml` with its
//! sources, its tests linked to their rules, its programs, and the recorded
//! results of each, or a line saying there are none.

mod common;

use gridcheck_report::{Status, TrialId, TrialRecord};
use gridcheck_spec::shapes::Shape;

#[test]
fn every_shape_is_on_its_page_with_what_covers_it() {
    let inputs = common::inputs();
    assert!(!inputs.shapes.is_empty(), "spec/shapes.yaml lists shapes");
    let src = gridcheck_docs::site::render(&inputs);
    assert!(
        src.page("SUMMARY.md")
            .unwrap()
            .contains("[Real-world shapes](shapes.md)")
    );
    let page = src.page("shapes.md").unwrap();
    for shape in &inputs.shapes {
        assert!(
            page.contains(&format!("<h2 id=\"{}\">", shape.id)),
            "{}",
            shape.id
        );
        for t in &shape.tests {
            let rule = inputs
                .spec
                .rules
                .iter()
                .find(|r| r.tests.contains(t))
                .unwrap_or_else(|| panic!("{t} has a rule"));
            assert!(
                page.contains(&format!("(rules/{}.md#{t})", rule.id)),
                "{t} links its rule"
            );
        }
        for p in &shape.programs {
            let prog = inputs.programs.iter().find(|x| &x.name == p).unwrap();
            assert!(page.contains(&format!("`{p}` (`{}`)", prog.file)), "{p}");
        }
    }
    assert!(page.contains("NVIDIA/cccl issue 9134"), "a public source");
    assert!(
        page.contains("allows, and is built to show, `stale_pairs > 0`"),
        "a host test's allowed outcome"
    );
    assert!(!page.contains("not a test of the spec") && !page.contains("not a program of"));
}

#[test]
fn the_page_builds_to_html_with_its_anchors() {
    let (inputs, out, _) = common::built("shapes");
    let html = std::fs::read_to_string(out.join("book/shapes.html")).unwrap();
    for shape in &inputs.shapes {
        assert!(
            html.contains(&format!("id=\"{}\"", shape.id)),
            "{}",
            shape.id
        );
    }
    // The tables are tables, not text with pipes.
    assert!(
        html.contains("<th>recorded results</th>"),
        "a table of tests"
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn recorded_results_are_shown_and_missing_ones_said() {
    let mut inputs = common::inputs();
    let shape = inputs
        .shapes
        .iter()
        .find(|s| s.id == "guarded-wait")
        .unwrap()
        .clone();
    let test = "pdl-guarded-wait-macro-on";
    let rule = inputs
        .spec
        .rules
        .iter()
        .find(|r| r.tests.iter().any(|t| t == test))
        .unwrap()
        .id
        .clone();
    // The newest run of the GPU that has the most recent run: the page
    // shows the newest run of each GPU.
    let i = (0..inputs.runs.len())
        .max_by_key(|&i| {
            let r = &inputs.runs[i];
            (
                r.slug.starts_with("nvidia"),
                gridcheck_docs::results::run_order(&r.date),
            )
        })
        .unwrap();
    let strip = |inputs: &mut gridcheck_docs::site::Inputs| {
        for run in &mut inputs.runs {
            run.records
                .retain(|r| r.trial.test != test && r.trial.test != "guarded-wait-arch");
            run.variants.clear();
        }
    };
    strip(&mut inputs);
    let page = |inputs: &gridcheck_docs::site::Inputs| {
        gridcheck_docs::site::render(inputs)
            .page("shapes.md")
            .unwrap()
            .to_string()
    };
    let before = page(&inputs);
    let row = |p: &str, name: &str| {
        p.lines()
            .find(|l| l.starts_with("| ") && l.contains(name))
            .unwrap_or_else(|| panic!("no row for {name}"))
            .to_string()
    };
    assert!(
        row(&before, test).ends_with("| no run recorded yet |"),
        "{}",
        row(&before, test)
    );
    assert!(row(&before, "`guarded-wait-arch`").ends_with("| no run recorded yet |"));
    let gpu = inputs.runs[i].machine.gpu.clone();
    inputs.runs[i].records.push(TrialRecord::new(
        TrialId::gpu("sm_90", &rule, test),
        Status::Pass,
        "gdc_macro_defined=1, launch_err=0 (cudaSuccess), stale_pairs=0",
    ));
    inputs.runs[i].records.push(TrialRecord::new(
        TrialId::sass("13.0", "compute_80", "user", "guarded-wait-arch"),
        Status::Pass,
        "nvcc 13.0.88 compute_80 PTX: MISSING WAIT flagged",
    ));
    let after = page(&inputs);
    let r = row(&after, test);
    assert!(
        r.contains("gc-pass") && r.contains(&gpu) && r.contains("stale\\_pairs=0"),
        "{r}"
    );
    let p = row(&after, "`guarded-wait-arch`");
    assert!(
        p.contains("`compute_80`: <span title=\"nvcc 13.0.88 compute_80 PTX: MISSING WAIT flagged\">13.0 <span class=\"gc-status gc-pass\">"),
        "{p}"
    );
    assert!(shape.tests.contains(&test.to_string()));
}

#[test]
fn a_shape_naming_what_does_not_exist_says_so() {
    let mut inputs = common::inputs();
    inputs.shapes.push(Shape {
        id: "made-up".into(),
        title: "Made up".into(),
        sources: vec!["nowhere".into()],
        summary: "s".into(),
        tests: vec!["no-such-test".into()],
        programs: vec!["no-such-program".into()],
        line: 1,
    });
    let src = gridcheck_docs::site::render(&inputs);
    let page = src.page("shapes.md").unwrap();
    assert!(
        page.contains("| `no-such-test` | — | not a test of the spec | — |"),
        "{page}"
    );
    assert!(
        page.contains("| `no-such-program` | not a program of `kernels/sass/programs.toml` | — |")
    );
}
