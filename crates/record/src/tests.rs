//! Tests of the verdict diff and the record as a JSON line, on one litmus
//! test's histograms.

use super::*;
use gridcheck_spec::{Litmus, State, Verdict, load_sources};
use std::collections::{BTreeMap, BTreeSet};

fn litmus() -> Litmus {
    let spec = load_sources(
        &[("a.yaml".into(), gridcheck_fixture::ONE_LOAD_SPEC.into())],
        None,
    )
    .unwrap();
    match &spec.tests[0].body {
        gridcheck_spec::TestBody::Litmus(l) => l.clone(),
        _ => unreachable!(),
    }
}

fn st(r0: u32) -> State {
    [("k.t0.r0".to_string(), r0), ("x".to_string(), 0)].into()
}

fn hw(counts: &[(u32, u64)], modeled: &[u32]) -> HardwareResult {
    let h: BTreeMap<State, u64> = counts.iter().map(|&(v, c)| (st(v), c)).collect();
    let m: BTreeSet<State> = modeled.iter().map(|&v| st(v)).collect();
    HardwareResult::classify(&litmus(), &h, &m).unwrap()
}

#[test]
fn the_diff_table() {
    use Verdict::*;
    let never = hw(&[(0, 10)], &[0]);
    let sometimes = hw(&[(0, 5), (1, 5)], &[0, 1]);
    let always = hw(&[(1, 10)], &[1]);
    assert_eq!(never.observation, Observation::Never);
    assert_eq!(sometimes.observation, Observation::Sometimes);
    assert_eq!((sometimes.positive, sometimes.negative), (5, 5));
    assert_eq!(always.observation, Observation::Always);
    assert_eq!(diff(Forbidden, &never).status, Status::Pass);
    assert_eq!(diff(Forbidden, &sometimes).status, Status::Fail);
    assert_eq!(diff(Forbidden, &always).status, Status::Fail);
    assert_eq!(diff(Required, &always).status, Status::Pass);
    assert_eq!(diff(Required, &sometimes).status, Status::Fail);
    assert_eq!(diff(Allowed, &sometimes).status, Status::Pass);
    assert_eq!(diff(Allowed, &never).status, Status::QualityWarning);
    assert!(diff(Allowed, &never).findings[0].starts_with("unobserved"));
}

#[test]
fn unmodeled_states_fail_but_never_hide_a_failure() {
    let h = hw(&[(0, 5), (1, 5)], &[0]);
    let d = diff(Verdict::Allowed, &h);
    assert_eq!(d.status, Status::Unmodeled);
    assert!(d.findings.iter().any(|f| f.starts_with("unmodeled")));
    assert_eq!(diff(Verdict::Forbidden, &h).status, Status::Fail);
    // Unobserved and unmodeled at once: the unmodeled state wins.
    let h = hw(&[(0, 5)], &[1]);
    assert_eq!(h.observation, Observation::Never);
    assert_eq!(diff(Verdict::Allowed, &h).status, Status::Unmodeled);
    // All states modeled: no unmodeled finding.
    let h = hw(&[(0, 5)], &[0]);
    assert_eq!(diff(Verdict::Allowed, &h).status, Status::QualityWarning);
}

#[test]
fn nothing_measured_is_a_failure() {
    let mut h = hw(&[], &[]);
    h.launch_failures = 4;
    h.first_launch_error = Some("cudaErrorLaunchPendingCountExceeded".into());
    let d = diff(Verdict::Forbidden, &h);
    assert_eq!(d.status, Status::Fail);
    assert!(d.findings[0].contains("cudaErrorLaunchPendingCountExceeded"));
}

#[test]
fn statuses_are_kebab_case_in_json() {
    for (s, text) in [
        (Status::Known, "known"),
        (Status::Changed, "changed"),
        (Status::KnownHang, "known-hang"),
        (Status::Unmodeled, "unmodeled"),
        (Status::QualityWarning, "quality-warning"),
    ] {
        assert_eq!(s.as_str(), text);
        assert_eq!(serde_json::to_string(&s).unwrap(), format!("\"{text}\""));
        assert_eq!(
            serde_json::from_str::<Status>(&format!("\"{text}\"")).unwrap(),
            s
        );
    }
    assert!(serde_json::from_str::<Status>("\"knownhang\"").is_err());
}

#[test]
fn records_round_trip_as_json() {
    let mut r = TrialRecord::new(TrialId::gpu("sm_90", "a", "b"), Status::QualityWarning, "m");
    r.hardware = Some(hw(&[(0, 1)], &[0]));
    let line = r.to_json_line();
    assert!(line.contains("\"status\":\"quality-warning\""), "{line}");
    assert!(
        line.starts_with(
            "{\"trial\":\"gpu/sm_90/a/b\",\"tier\":\"gpu\",\"rule\":\"a\",\"test\":\"b\","
        ),
        "{line}"
    );
    let back: TrialRecord = serde_json::from_str(&line).unwrap();
    assert_eq!(back, r);
    assert!(!line.contains("escalation"), "{line}");
    // With an escalation: written, and read back.
    let mut escalated = r.clone();
    escalated.escalation = Some(Escalation::of(vec![EscalationStep {
        environment: "alone".into(),
        instances: 64,
        observed: 0,
        budget_s: 1.0,
        histogram: Vec::new(),
    }]));
    let line2 = escalated.to_json_line();
    assert!(
        line2.contains("\"escalation\":{\"steps\":[{\"environment\":\"alone\""),
        "{line2}"
    );
    assert_eq!(
        serde_json::from_str::<TrialRecord>(&line2).unwrap(),
        escalated
    );
    let bad = line.replace("\"rule\":\"a\"", "\"rule\":\"z\"");
    let e = serde_json::from_str::<TrialRecord>(&bad).unwrap_err();
    assert!(e.to_string().contains("says tier `gpu`, rule `z`"), "{e}");
}
