//! Tests of the diff of two runs: each builds two record sets, diffs them
//! and checks what is reported and whether the diff fails.

use super::*;
use crate::{Observation, Row};

fn st(r0: u32) -> gridcheck_spec::State {
    [("k.t0.r0".to_string(), r0)].into()
}

/// A litmus result: (r0, count, modeled); the condition is `r0 == 1`.
fn hw(rows: &[(u32, u64, bool)]) -> HardwareResult {
    let rows: Vec<Row> = rows
        .iter()
        .map(|&(v, count, modeled)| Row {
            state: st(v),
            count,
            satisfies: v == 1,
            modeled,
        })
        .collect();
    let positive = rows.iter().filter(|r| r.satisfies).map(|r| r.count).sum();
    let negative = rows.iter().filter(|r| !r.satisfies).map(|r| r.count).sum();
    HardwareResult {
        rows,
        positive,
        negative,
        observation: Observation::from_counts(positive, negative),
        instances: positive + negative,
        launch_failures: 0,
        first_launch_error: None,
        elapsed_s: 1.0,
        seed: 0,
        stale: Vec::new(),
    }
}

fn rec(trial: &str, status: Status, h: Option<HardwareResult>) -> TrialRecord {
    let mut r = TrialRecord::new(
        trial.parse().unwrap(),
        status,
        format!("{status} of {trial}\nmore"),
    );
    r.hardware = h;
    r.test_hash = Some("h1".into());
    r
}

/// A run of three trials: a pass with a histogram, an xfail, a model pass.
fn base() -> Vec<TrialRecord> {
    vec![
        rec(
            "gpu/sm_90/r.a/t",
            Status::Pass,
            Some(hw(&[(0, 900, true), (1, 100, true)])),
        ),
        rec(
            "gpu/sm_90/r.b/u",
            Status::Xfail,
            Some(hw(&[(0, 990, true), (2, 10, false)])),
        ),
        rec("model/r.a/t", Status::Pass, None),
    ]
}

#[test]
fn identical_runs_have_an_empty_diff() {
    let d = diff_runs(&base(), &base());
    assert!(d.is_empty(), "{d:?}");
    assert_eq!(d.unchanged, 3);
    assert_eq!(d.regressions(), 0);
    assert!(!d.fails(FailOn::Regression) && !d.fails(FailOn::Change));
}

#[test]
fn a_pass_turned_fail_is_a_regression_naming_the_trial() {
    let mut new = base();
    new[2].status = Status::Fail;
    let d = diff_runs(&base(), &new);
    assert_eq!(d.status_changes.len(), 1);
    let c = &d.status_changes[0];
    assert_eq!(c.trial.to_string(), "model/r.a/t");
    assert_eq!(
        (c.kind, c.base, c.new),
        (ChangeKind::Regression, Status::Pass, Status::Fail)
    );
    assert_eq!(
        c.message, "pass of model/r.a/t",
        "the first line of NEW's message"
    );
    assert_eq!(d.regressions(), 1);
    assert!(d.fails(FailOn::Regression) && d.fails(FailOn::Change) && !d.fails(FailOn::Never));
    // Back again: a fix, which fails only --fail-on change.
    let back = diff_runs(&new, &base());
    assert_eq!(back.status_changes[0].kind, ChangeKind::Fix);
    assert!(!back.fails(FailOn::Regression) && back.fails(FailOn::Change));
}

#[test]
fn a_forbidden_state_appearing_is_a_regression_with_the_status_unchanged() {
    // The xfail trial now also shows r0 = 3, which the model cannot reach.
    let mut new = base();
    new[1].hardware = Some(hw(&[(0, 980, true), (2, 10, false), (3, 10, false)]));
    let d = diff_runs(&base(), &new);
    assert!(d.status_changes.is_empty());
    assert_eq!(d.histogram_changes.len(), 1, "{d:?}");
    let h = &d.histogram_changes[0];
    assert_eq!(h.kind, HistogramKind::ForbiddenObserved);
    assert_eq!(h.state.as_deref(), Some("k.t0.r0=3"));
    assert_eq!((h.base_count, h.new_count), (0, 10));
    assert!(h.regression);
    assert!(d.fails(FailOn::Regression));
    // The forbidden state it already showed (r0 = 2) is no change.
    assert!(diff_runs(&new, &new).is_empty());
}

#[test]
fn an_xfail_that_now_passes_is_a_known_discrepancy_that_stopped_reproducing() {
    for (status, message) in [
        (Status::Pass, "pass".to_string()),
        (Status::QualityWarning, "unobserved".to_string()),
        // The harness's own failure for a listed trial that passed.
        (
            Status::Fail,
            "listed as a known failure in conformance/expectations/x.toml (why) but it passed: remove it from the list. m"
                .to_string(),
        ),
    ] {
        let mut new = base();
        new[1].status = status;
        new[1].message = message;
        let d = diff_runs(&base(), &new);
        assert_eq!(d.status_changes.len(), 1, "{status}");
        let c = &d.status_changes[0];
        assert_eq!(c.kind, ChangeKind::KnownChanged, "{status}");
        assert_eq!(c.trial.to_string(), "gpu/sm_90/r.b/u");
        assert_eq!(d.regressions(), 0, "{status}: a change, not a regression");
        assert!(d.fails(FailOn::Change) && !d.fails(FailOn::Regression));
    }
    // An xfail now failing for another reason, or not run: a regression.
    let mut new = base();
    new[1].status = Status::Crash;
    assert_eq!(
        diff_runs(&base(), &new).status_changes[0].kind,
        ChangeKind::Regression
    );
    new[1].status = Status::NotRun;
    assert_eq!(
        diff_runs(&base(), &new).status_changes[0].kind,
        ChangeKind::Regression
    );
}

#[test]
fn trials_added_and_removed_are_listed() {
    let mut new = base();
    let gone = new.remove(2);
    new.push(rec("model/r.c/v", Status::Fail, None));
    let d = diff_runs(&base(), &new);
    assert_eq!(d.added.len(), 1);
    assert_eq!(
        (d.added[0].trial.to_string(), d.added[0].status),
        ("model/r.c/v".to_string(), Status::Fail)
    );
    assert_eq!(d.removed.len(), 1);
    assert_eq!(d.removed[0].trial, gone.trial);
    assert!(!d.is_empty() && d.fails(FailOn::Change));
    assert_eq!(d.regressions(), 0);
}

#[test]
fn rates_move_only_beyond_the_spread() {
    let rate = |positive: u64, n: u64| Some(hw(&[(0, n - positive, true), (1, positive, true)]));
    let one = |h| vec![rec("gpu/sm_90/r.a/t", Status::Pass, h)];
    // Two H100 runs of 2026-11-25: 13133 then 12411 of 32768, z = -5.8, a
    // factor of 1.06: the spread, not a change.
    let z = two_proportion_z(13133, 32768, 12411, 32768).unwrap();
    assert!((z + 5.8).abs() < 0.05, "{z}");
    assert!(diff_runs(&one(rate(13133, 32768)), &one(rate(12411, 32768))).is_empty());
    // 1000 of 32768 to 400: a factor of 2.5 at z = -16.
    let d = diff_runs(&one(rate(1000, 32768)), &one(rate(400, 32768)));
    assert_eq!(d.histogram_changes.len(), 1, "{d:?}");
    let h = &d.histogram_changes[0];
    assert_eq!(h.kind, HistogramKind::RateMoved);
    assert!(h.z.unwrap() < -RATE_Z && !h.regression);
    assert!(!d.fails(FailOn::Regression) && d.fails(FailOn::Change));
    // A factor of 2.5 on few instances is not significant.
    assert!(diff_runs(&one(rate(10, 1000)), &one(rate(4, 1000))).is_empty());
    assert_eq!(two_proportion_z(0, 10, 0, 10), None);
}

#[test]
fn an_allowed_state_no_longer_seen_is_a_change() {
    let mut new = base();
    new[0].hardware = Some(hw(&[(0, 1000, true)]));
    new[0].status = Status::QualityWarning;
    let d = diff_runs(&base(), &new);
    let kinds: Vec<HistogramKind> = d.histogram_changes.iter().map(|h| h.kind).collect();
    assert_eq!(
        kinds,
        [HistogramKind::AllowedGone, HistogramKind::RateMoved],
        "{d:?}"
    );
    assert_eq!(
        d.status_changes[0].kind,
        ChangeKind::Regression,
        "pass to quality-warning is worse"
    );
}

#[test]
fn the_severity_ladder_and_the_environments() {
    use Status::*;
    let ladder = [Pass, Xfail, QualityWarning, NotRun, Fail];
    for w in ladder.windows(2) {
        assert!(
            w[1].is_worse_than(w[0]) && !w[0].is_worse_than(w[1]),
            "{w:?}"
        );
    }
    assert_eq!(NotSupported.severity(), NotRun.severity());
    assert_eq!(Crash.severity(), OracleConflict.severity());
    let mut a = base();
    a[2].status = Fail;
    let mut b = a.clone();
    b[2].status = Crash;
    assert_eq!(
        diff_runs(&a, &b).status_changes[0].kind,
        ChangeKind::Changed
    );
    assert_eq!("never".parse::<FailOn>(), Ok(FailOn::Never));
    assert!(
        "sometimes"
            .parse::<FailOn>()
            .unwrap_err()
            .contains("regression, change or never")
    );

    // The environments as the records say, and a test that changed.
    let mut new = base();
    let s = crate::RunStamp::at(1_795_615_387, 7);
    for r in &mut new {
        s.stamp(r);
        r.commit = Some("c4844728".into());
        r.environment = Some(crate::Environment {
            gpu: "NVIDIA H100 80GB HBM3".into(),
            sm: "sm_90".into(),
            driver: "13.0".into(),
            nvcc: Some("13.0.88".into()),
            driver_version: Some("580.159.04".into()),
            tuning: None,
            tuning_file: None,
            binary: None,
            toolchain: None,
            device: Some(crate::Device {
                ordinal: 0,
                uuid: Some("GPU-1".into()),
                pci_bus_id: Some("0000:00:06.0".into()),
            }),
        });
    }
    new[2].test_hash = Some("h2".into());
    new[2].status = Fail;
    let d = diff_runs(&base(), &new);
    assert_eq!(d.new.run_id, s.id);
    assert_eq!(d.new.started.as_deref(), Some("2026-11-25T14:03:07Z"));
    assert_eq!(d.new.driver_version.as_deref(), Some("580.159.04"));
    assert_eq!(d.new.devices, ["0000:00:06.0 (GPU-1)"]);
    assert_eq!(d.new.commits, ["c4844728"]);
    assert_eq!(d.base.gpu, None);
    assert!(d.status_changes[0].test_changed);
}

/// A toolchain as the records of `cargo xtask build --toolchain` name it.
fn toolchain(release: &str, nvcc: &str) -> crate::ToolchainRecord {
    crate::ToolchainRecord {
        release: release.into(),
        nvcc: nvcc.into(),
        devrt: format!(
            "nvidia-cuda-runtime {nvcc}, /work/.toolchains/{release}/libcudadevrt.a (10 bytes, fnv1a64 00000000000000{})",
            &release[release.len() - 1..].repeat(2)
        ),
        source: format!(".toolchains/{release}"),
        disassembler: None,
    }
}

#[test]
fn the_kernels_toolchain_is_its_own_side_not_the_harness_nvcc() {
    // One GPU, one harness nvcc (13.0.88); the kernels of 13.0 and of 13.5.
    let on = |tc: Option<crate::ToolchainRecord>| {
        let mut v = base();
        for r in &mut v {
            r.environment = Some(crate::Environment {
                gpu: "H100".into(),
                sm: "sm_90".into(),
                driver: "13.0".into(),
                nvcc: Some("13.0.88".into()),
                driver_version: None,
                tuning: None,
                tuning_file: None,
                binary: None,
                toolchain: tc.clone(),
                device: None,
            });
        }
        v
    };
    let d = diff_runs(
        &on(Some(toolchain("13.0", "13.0.88"))),
        &on(Some(toolchain("13.5", "13.5.37"))),
    );
    assert_eq!(d.base.nvcc, d.new.nvcc, "the harness's nvcc is the same");
    assert_eq!(
        d.new.kernels,
        [KernelsToolchain {
            release: "13.5".into(),
            nvcc: "13.5.37".into(),
            device_runtime: "nvidia-cuda-runtime 13.5.37 (fnv1a64 0000000000000055)".into(),
        }]
    );
    assert_ne!(d.base.kernels, d.new.kernels);
    assert!(d.is_empty(), "only the environment differs");
    // Records made before the stamp: nothing is said about the kernels.
    assert!(diff_runs(&on(None), &on(None)).new.kernels.is_empty());
    // A compile or machine-code record names its compiler.
    let mut sass = rec("sass/13.5/sm_90/r.a/t", Status::Pass, None);
    sass.compile = Some(crate::CompileSummary {
        nvcc: "13.5.37".into(),
        command: "nvcc".into(),
        success: true,
        output: String::new(),
        toolchain: Some(toolchain("13.5", "13.5.37")),
    });
    let d = diff_runs(&[], &[sass]);
    assert_eq!(d.new.kernels[0].release, "13.5");
    assert_eq!(
        d.new.kernels[0].to_string(),
        "13.5: nvcc 13.5.37, device runtime nvidia-cuda-runtime 13.5.37 (fnv1a64 0000000000000055)"
    );
}

#[test]
fn machine_code_trials_of_two_toolchains_are_compared_by_what_they_check() {
    let run = |tc: &str, status: Status| {
        vec![
            rec(&format!("sass/{tc}/sm_100/user/p"), status, None),
            rec("static/r.a/c", Status::Pass, None),
        ]
    };
    // A run and its variant under another toolchain: one trial, changed.
    let d = diff_runs(&run("13.0", Status::Pass), &run("13.5", Status::Fail));
    assert!(d.added.is_empty() && d.removed.is_empty(), "{d:?}");
    assert_eq!(d.status_changes.len(), 1);
    assert_eq!(
        d.status_changes[0].trial.to_string(),
        "sass/13.5/sm_100/user/p"
    );
    assert_eq!(d.unchanged, 1);
    // Within one run of several toolchains, each trial stays its own.
    let both: Vec<TrialRecord> = [run("13.0", Status::Pass), run("13.5", Status::Pass)].concat();
    let d = diff_runs(&run("13.0", Status::Pass), &both);
    assert_eq!(d.added.len(), 1, "{d:?}");
}

#[test]
fn a_known_discrepancy_measured_elsewhere_still_reproduces() {
    // xfail (measured here) to known (measured elsewhere, the same failure)
    // is another status, not a known discrepancy gone.
    let b = vec![rec("static/r.a/c", Status::Xfail, None)];
    let n = vec![rec("static/r.a/c", Status::Known, None)];
    let d = diff_runs(&b, &n);
    assert_eq!(d.status_changes[0].kind, ChangeKind::Changed, "{d:?}");
    let n = vec![rec("static/r.a/c", Status::Pass, None)];
    assert_eq!(
        diff_runs(&b, &n).status_changes[0].kind,
        ChangeKind::KnownChanged
    );
}

/// A library trial is a trial like any other: a case that passed and now
/// fails is a regression, a case of a release added shows as added.
#[test]
fn a_library_case_that_fails_now_is_a_regression() {
    let lib = |release: &str, status| {
        let mut r = TrialRecord::new(
            TrialId::library(release, "sm_90", "merge_sort_keys", "n100000-stress"),
            status,
            "CCCL 13.3, sm_90, merge_sort_keys, n=100000, env stress: wrong in 2 of 20 calls",
        );
        r.test_hash = None;
        r
    };
    let mut old = base();
    old.push(lib("13.3", Status::Pass));
    let mut new = base();
    new.push(lib("13.3", Status::Fail));
    new.push(lib("13.2", Status::Pass));
    let d = diff_runs(&old, &new);
    assert_eq!(d.status_changes.len(), 1, "{d:?}");
    let c = &d.status_changes[0];
    assert_eq!(
        c.trial.to_string(),
        "lib/13.3/sm_90/merge_sort_keys/n100000-stress"
    );
    assert_eq!(c.kind, ChangeKind::Regression);
    assert!(
        c.message.ends_with("wrong in 2 of 20 calls"),
        "{}",
        c.message
    );
    assert_eq!(d.added.len(), 1);
    assert!(d.fails(FailOn::Regression));
}
