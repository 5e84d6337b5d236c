//! Tests of the spread: its computation from runs, and `report diff`
//! judged against it (identical runs, variation within it, beyond it, an
//! allowed state gone, an escalation that provoked it, a status the
//! baseline saw).

use super::*;
use crate::run_diff::{HistogramKind, diff_runs, diff_runs_with};
use crate::{Environment, Escalation, EscalationStep, HardwareResult, Observation, Row};

fn st(r0: u32) -> gridcheck_spec::State {
    [("k.t0.r0".to_string(), r0)].into()
}

/// A litmus result of `(r0, count)` rows, every state modeled; the
/// condition is `r0 == 1`.
fn hw(rows: &[(u32, u64)]) -> HardwareResult {
    let rows: Vec<Row> = rows
        .iter()
        .map(|&(v, count)| Row {
            state: st(v),
            count,
            satisfies: v == 1,
            modeled: true,
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

const T: &str = "gpu/sm_90/r.a/t";

/// One run: trial `T` with `rows` and `status`, and a model trial.
fn run(id: &str, status: Status, rows: &[(u32, u64)]) -> Vec<TrialRecord> {
    let mut r = TrialRecord::new(T.parse().unwrap(), status, "m");
    r.hardware = Some(hw(rows));
    r.environment = Some(Environment {
        gpu: "H100".into(),
        sm: "sm_90".into(),
        driver: "13.0".into(),
        nvcc: None,
        driver_version: None,
        tuning: None,
        tuning_file: None,
        device: None,
        binary: None,
        toolchain: None,
    });
    let mut m = TrialRecord::new("model/r.a/t".parse().unwrap(), Status::Pass, "m");
    for x in [&mut r, &mut m] {
        x.run_id = Some(id.into());
    }
    vec![r, m]
}

fn spread_of(runs: &[Vec<TrialRecord>]) -> Spread {
    let named: Vec<(String, RunRecords)> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            (
                format!("r{i}.jsonl"),
                crate::split_runs(r.clone()).remove(0),
            )
        })
        .collect();
    Spread::of(&named).unwrap()
}

/// Three runs of one GPU: the condition's rate 40 %, 38 % and 42 %; the
/// state r0 = 2 in two runs of three.
fn baseline() -> Spread {
    spread_of(&[
        run("a", Status::Pass, &[(0, 580), (1, 400), (2, 20)]),
        run("b", Status::Pass, &[(0, 620), (1, 380)]),
        run("c", Status::QualityWarning, &[(0, 560), (1, 420), (2, 20)]),
    ])
}

#[test]
fn the_spread_of_runs() {
    let s = baseline();
    assert_eq!((s.gpu.as_str(), s.runs.len()), ("H100", 3));
    let t = &s.trials[T];
    assert_eq!(t.histograms, 3);
    assert_eq!(
        (
            t.statuses[&Status::Pass],
            t.statuses[&Status::QualityWarning]
        ),
        (2, 1)
    );
    let r = t.rate.unwrap();
    assert_eq!((r.min.rate(), r.max.rate()), (0.38, 0.42));
    assert_eq!(
        t.states["k.t0.r0=2"],
        Range {
            min: 0.0,
            max: 0.02
        }
    );
    assert_eq!(
        t.states["k.t0.r0=0"],
        Range {
            min: 0.56,
            max: 0.62
        }
    );
    assert_eq!(s.ever_missing(T, "k.t0.r0=2"), Some(true));
    assert_eq!(s.ever_missing(T, "k.t0.r0=0"), Some(false));
    assert_eq!(
        s.ever_missing(T, "k.t0.r0=9"),
        Some(true),
        "never seen at all"
    );
    assert_eq!(s.ever_missing("gpu/sm_90/r.a/other", "k.t0.r0=0"), None);
    // Round trip through its file.
    let text = serde_json::to_string_pretty(&s).unwrap();
    assert_eq!(Spread::parse(&text).unwrap(), s);
    let e = Spread::parse(&text.replace("\"schema\": 1", "\"schema\": 9")).unwrap_err();
    assert!(e.contains("schema 9"), "{e}");
    // A state first seen in a later run was missing in the earlier ones.
    let later = spread_of(&[
        run("a", Status::Pass, &[(0, 10)]),
        run("b", Status::Pass, &[(0, 5), (2, 5)]),
    ]);
    assert_eq!(
        later.trials[T].states["k.t0.r0=2"],
        Range { min: 0.0, max: 0.5 }
    );
}

#[test]
fn a_spread_needs_two_runs_of_one_gpu() {
    let one = [(
        String::from("a"),
        crate::split_runs(run("a", Status::Pass, &[(0, 1)])).remove(0),
    )];
    assert!(Spread::of(&one).unwrap_err().contains("two runs or more"));
    let mut other = run("b", Status::Pass, &[(0, 1)]);
    other[0].environment.as_mut().unwrap().gpu = "H200".into();
    let two = [
        one[0].clone(),
        ("b".into(), crate::split_runs(other).remove(0)),
    ];
    assert!(
        Spread::of(&two).unwrap_err().contains("several GPUs"),
        "{:?}",
        Spread::of(&two)
    );
}

#[test]
fn identical_runs_and_runs_within_the_spread_give_no_regression() {
    let s = baseline();
    let a = run("x", Status::Pass, &[(0, 580), (1, 400), (2, 20)]);
    let d = diff_runs_with(&a, &a, Some(&s));
    assert_eq!(d.regressions(), 0);
    assert!(d.is_empty());
    assert_eq!(d.spread.as_deref(), Some("H100, 3 runs"));
    // As the baseline's runs differ among themselves: r0 = 2 gone, the
    // rate from 42 % to 38 %, pass to quality-warning.
    let b = run("y", Status::QualityWarning, &[(0, 620), (1, 380)]);
    let d = diff_runs_with(
        &run("x", Status::Pass, &[(0, 560), (1, 420), (2, 20)]),
        &b,
        Some(&s),
    );
    assert_eq!(d.regressions(), 0, "{d:#?}");
    assert!(d.status_changes[0].within_spread);
    let gone = &d.histogram_changes[0];
    assert_eq!(gone.kind, HistogramKind::AllowedGone);
    assert_eq!(gone.spread.as_deref(), Some("a baseline run missed it too"));
}

#[test]
fn beyond_the_spread_is_a_regression() {
    let s = baseline();
    let base = run("x", Status::Pass, &[(0, 600), (1, 400)]);
    // The rate from 40 % to 10 %: beyond 38 % to 42 %.
    let low = run("y", Status::Pass, &[(0, 900), (1, 100)]);
    let d = diff_runs_with(&base, &low, Some(&s));
    assert_eq!(d.regressions(), 1, "{d:#?}");
    let c = &d.histogram_changes[0];
    assert_eq!(c.kind, HistogramKind::RateMoved);
    assert!(c.regression);
    assert_eq!(
        c.spread.as_deref(),
        Some("beyond the spread (0.3800 to 0.4200 in 3 runs)")
    );
    // Without the baseline the same change is listed and no regression.
    let plain = diff_runs(&base, &low);
    assert_eq!((plain.regressions(), plain.histogram_changes.len()), (0, 1));
    // A status the baseline never saw stays a regression.
    let crash = run("z", Status::Crash, &[(0, 600), (1, 400)]);
    let d = diff_runs_with(&base, &crash, Some(&s));
    assert_eq!(d.regressions(), 1);
    assert!(!d.status_changes[0].within_spread);
}

#[test]
fn an_allowed_state_gone_that_no_baseline_run_missed() {
    let s = baseline();
    let base = run("x", Status::Pass, &[(0, 600), (1, 400)]);
    // r0 = 0 gone: every baseline run saw it. A regression...
    let gone = run("y", Status::Pass, &[(1, 1000)]);
    let d = diff_runs_with(&base, &gone, Some(&s));
    let c = d
        .histogram_changes
        .iter()
        .find(|c| c.kind == HistogramKind::AllowedGone)
        .unwrap();
    assert!(c.regression, "{d:#?}");
    assert!(d.regressions() >= 1);
    // ... unless NEW's escalation provoked it.
    let mut escalated = gone.clone();
    let mut step = EscalationStep {
        environment: "late-write".into(),
        instances: 64,
        observed: 0,
        budget_s: 1.0,
        histogram: vec![(st(0), 3)],
    };
    escalated[0].escalation = Some(Escalation::of(vec![step.clone()]));
    let d = diff_runs_with(&base, &escalated, Some(&s));
    let c = d
        .histogram_changes
        .iter()
        .find(|c| c.kind == HistogramKind::AllowedGone)
        .unwrap();
    assert!(!c.regression, "{d:#?}");
    assert!(
        c.spread
            .as_deref()
            .unwrap()
            .contains("escalation showed it"),
        "{c:?}"
    );
    // An escalation that did not show it leaves the regression.
    step.histogram = vec![(st(1), 64)];
    escalated[0].escalation = Some(Escalation::of(vec![step]));
    let d = diff_runs_with(&base, &escalated, Some(&s));
    assert!(
        d.histogram_changes
            .iter()
            .any(|c| c.kind == HistogramKind::AllowedGone && c.regression)
    );
}
