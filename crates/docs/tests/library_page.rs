//! The *CCCL library tier* page: each release and algorithm with its
//! cases' statuses on each GPU from the newest recorded runs, each
//! failure's evidence (counts, controls, reproducer), or a line saying no
//! run has library trials.

mod common;

use gridcheck_report::{
    LibraryControl, LibraryResult, LibraryRun, Reproducer, Status, TrialId, TrialRecord,
};

fn lib(release: &str, alg: &str, case: &str, status: Status) -> TrialRecord {
    let mut r = TrialRecord::new(
        TrialId::library(release, "sm_90", alg, case),
        status,
        format!("CCCL {release}, sm_90, {alg}, {case}: the message\nmore"),
    );
    if status == Status::Fail {
        r.library = Some(LibraryResult {
            release: release.into(),
            cccl: Some("3.3.0".into()),
            target: "sm_90".into(),
            algorithm: alg.into(),
            size: 100000,
            env: "stress".into(),
            reps: 20,
            run: LibraryRun {
                calls: 20,
                wrong: 3,
                first_wrong: Some("index 17: got 5 want 3".into()),
                ..LibraryRun::default()
            },
            controls: vec![
                LibraryControl {
                    variant: "-nopdl".into(),
                    outcome: "pass".into(),
                    message: "`-nopdl` removes the failure: PDL off".into(),
                    run: None,
                    rounds: Vec::new(),
                },
                LibraryControl {
                    variant: "-ptx90".into(),
                    outcome: "fail".into(),
                    message: "`-ptx90` still fails: wrong in 1 of 20 calls".into(),
                    run: None,
                    rounds: Vec::new(),
                },
            ],
            beside: Vec::new(),
            reproducer: Some(Reproducer {
                command: "target/library/13.3/sm_90/merge_sort --algorithm merge_sort_keys --size 100000 --reps 20 --env stress --seed 1".into(),
                source: "kernels/cccl/merge_sort.cu".into(),
                build: "nvcc -std=c++17 kernels/cccl/merge_sort.cu -o merge_sort".into(),
            }),
        });
    }
    r
}

#[test]
fn each_release_and_algorithm_with_its_statuses_and_each_failures_evidence() {
    let mut inputs = common::inputs();
    let page = |inputs: &gridcheck_docs::site::Inputs| {
        gridcheck_docs::site::render(inputs)
            .page("library.md")
            .unwrap()
            .to_string()
    };
    let src = gridcheck_docs::site::render(&inputs);
    assert!(
        src.page("SUMMARY.md")
            .unwrap()
            .contains("[CCCL library tier](library.md)")
    );
    for run in &mut inputs.runs {
        run.records
            .retain(|r| r.trial.tier != gridcheck_report::Tier::Library);
    }
    let before = page(&inputs);
    assert!(
        before.contains("No recorded run has library trials yet"),
        "{before}"
    );
    // The newest run of the GPU with the newest run gets library records.
    let i = (0..inputs.runs.len())
        .max_by_key(|&i| gridcheck_docs::results::run_order(&inputs.runs[i].date))
        .unwrap();
    let gpu = inputs.runs[i].machine.gpu.clone();
    inputs.runs[i].records.extend([
        lib("13.3", "merge_sort_keys", "n100000-stress", Status::Fail),
        lib("13.3", "merge_sort_keys", "n100000-quiet", Status::Pass),
        lib("13.3", "inclusive_scan", "n100000-quiet", Status::Pass),
        lib("13.0", "merge_sort_keys", "n100000-stress", Status::Pass),
    ]);
    let after = page(&inputs);
    assert!(
        after.contains("## CCCL 13.0") && after.contains("## CCCL 13.3"),
        "{after}"
    );
    assert!(after.contains(&format!("<th>{gpu} (")), "{after}");
    let row = after
        .lines()
        .find(|l| {
            l.contains("<td><code>merge_sort_keys</code></td><td>sm_90</td>")
                && l.contains("gc-fail")
        })
        .unwrap_or_else(|| panic!("a row for merge_sort_keys in 13.3: {after}"));
    assert!(
        row.contains("gc-pass\">pass</span> 1") && row.contains("gc-fail\">fail</span> 1"),
        "{row}"
    );
    assert!(
        after.contains("#### `lib/13.3/sm_90/merge_sort_keys/n100000-stress` on"),
        "{after}"
    );
    assert!(
        after.contains("- 20 of 20 calls made, 3 wrong (first: index 17: got 5 want 3)"),
        "{after}"
    );
    assert!(
        after.contains(
            "- control `-nopdl`: `-nopdl` removes the failure: PDL off **(removes the failure)**"
        ),
        "{after}"
    );
    assert!(
        after.contains("- control `-ptx90`: `-ptx90` still fails"),
        "{after}"
    );
    assert!(
        after.contains("Reproduce (source `kernels/cccl/merge_sort.cu`):"),
        "{after}"
    );
    assert!(
        after.contains("--algorithm merge_sort_keys --size 100000"),
        "{after}"
    );
    // 13.0 passed everywhere it ran: said so.
    let cccl_13_0 =
        &after[after.find("## CCCL 13.0").unwrap()..after.find("## CCCL 13.3").unwrap()];
    assert!(
        cccl_13_0.contains("No case of this release failed on a recorded GPU."),
        "{cccl_13_0}"
    );
    // A newer run of the same GPU with part of the tier only (13.3) does
    // not hide the older run's 13.0 cases.
    let mut newer = inputs.runs[i].clone();
    newer.date = "2099-01-01".into();
    newer.records = vec![lib(
        "13.3",
        "merge_sort_keys",
        "n100000-quiet",
        Status::Pass,
    )];
    inputs.runs.push(newer);
    let later = page(&inputs);
    let cccl_13_0 =
        &later[later.find("## CCCL 13.0").unwrap()..later.find("## CCCL 13.3").unwrap()];
    assert!(cccl_13_0.contains("gc-pass\">pass</span> 1"), "{cccl_13_0}");
    let cccl_13_3 = &later[later.find("## CCCL 13.3").unwrap()..];
    assert!(
        !cccl_13_3.contains("#### `lib/13.3/sm_90/merge_sort_keys/n100000-stress`"),
        "13.3's newest run is the newer one: {cccl_13_3}"
    );
}

#[test]
fn the_page_builds_to_html() {
    let (_, out, _) = common::built("library");
    let html = std::fs::read_to_string(out.join("book/library.html")).unwrap();
    assert!(html.contains("CCCL library tier"), "the page's title");
    assert!(
        html.contains("--library-release"),
        "how to compare releases"
    );
    let _ = std::fs::remove_dir_all(&out);
}
