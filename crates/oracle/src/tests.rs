//! The decision over both oracles' answers: each agreement class from
//! made-up answers (so that each class, and each way out of one, is
//! reached exactly), and both oracles on two small spec tests.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use gridcheck_axiom::{AxiomError, AxiomOutcome, ErrorKind as AxiomKind};
use gridcheck_model::{ErrorKind as ModelKind, ModelError, ModelOutcome};
use gridcheck_spec::{Litmus, State, TestBody, Verdict};

use super::*;

fn state(x: u32) -> State {
    [("x".to_string(), x)].into_iter().collect()
}

fn states(xs: &[u32]) -> BTreeSet<State> {
    xs.iter().map(|&x| state(x)).collect()
}

fn loom(xs: &[u32], bound: Option<usize>) -> Result<ModelOutcome, ModelError> {
    Ok(ModelOutcome {
        verdict: Verdict::Allowed,
        states: states(xs),
        executions: 1,
        preemption_bound: bound,
        abandoned_executions: 0,
        incoherent_executions: 0,
        elapsed: Duration::ZERO,
    })
}

fn axiom(xs: &[u32]) -> Result<AxiomOutcome, AxiomError> {
    Ok(AxiomOutcome {
        verdict: Verdict::Required,
        states: states(xs),
        candidates: 1,
        consistent: 1,
        elapsed: Duration::ZERO,
    })
}

/// The decision with `restricted` as the axiomatic model's states under
/// loom's write order.
fn decided(
    l: Result<ModelOutcome, ModelError>,
    a: Result<AxiomOutcome, AxiomError>,
    restricted: &[u32],
) -> Result<Decision, OracleError> {
    decide((2, 0), Some(&l), &a, || states(restricted))
}

#[test]
fn the_same_states_are_decided_by_both() {
    let d = decided(loom(&[0, 1], None), axiom(&[0, 1]), &[]).unwrap();
    assert_eq!(d.agreement, Agreement::Same);
    assert_eq!(d.decided_by, DecidedBy::Both);
    assert_eq!(d.states, states(&[0, 1]));
}

#[test]
fn loom_reaching_exactly_the_restricted_set_is_the_pinned_limit() {
    let d = decided(loom(&[0], None), axiom(&[0, 1]), &[0]).unwrap();
    assert_eq!(
        d.agreement,
        Agreement::LoomOrdersWrites {
            missing: vec![state(1)]
        }
    );
    assert_eq!(d.decided_by, DecidedBy::Axiomatic);
    assert_eq!(
        d.verdict,
        Verdict::Required,
        "the axiomatic model's verdict"
    );
    // An exhaustive loom that misses a state the restriction keeps is no
    // pinned limit: a conflict.
    let d = decided(loom(&[0], None), axiom(&[0, 1, 2]), &[0, 2]).unwrap();
    assert!(matches!(d.agreement, Agreement::Conflict { .. }), "{d:?}");
}

#[test]
fn a_bounded_loom_inside_the_restricted_set_names_its_bound() {
    let d = decided(loom(&[0], Some(2)), axiom(&[0, 1, 2]), &[0, 2]).unwrap();
    assert_eq!(
        d.agreement,
        Agreement::LoomBounded {
            bound: 2,
            missing: vec![state(1), state(2)]
        }
    );
    assert_eq!(d.decided_by, DecidedBy::Axiomatic);
    // A bounded loom that reaches a state the axiomatic model does not.
    let d = decided(loom(&[0, 3], Some(2)), axiom(&[0, 1]), &[0, 1]).unwrap();
    match d.agreement {
        Agreement::Conflict {
            only_loom,
            only_axiomatic,
            detail,
        } => {
            assert_eq!(only_loom, vec![state(3)]);
            assert_eq!(only_axiomatic, vec![state(1)]);
            assert!(
                detail.contains("loom reaches 2 states, the axiomatic model 2"),
                "{detail}"
            );
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
}

#[test]
fn the_axiomatic_model_decides_alone_beyond_looms_threads() {
    let d = decide((40, 0), None, &axiom(&[1]), || unreachable!()).unwrap();
    assert_eq!(d.decided_by, DecidedBy::Axiomatic);
    match d.agreement {
        Agreement::Single { reason } => assert!(reason.contains("40 threads"), "{reason}"),
        other => panic!("expected single, got {other:?}"),
    }
}

#[test]
fn an_axiomatic_bound_exceeded_lets_loom_decide_alone_and_nothing_else_does() {
    let over = AxiomError::new(AxiomKind::BoundExceeded, "too many candidates");
    let d = decided(loom(&[0, 1], None), Err(over), &[]).unwrap();
    assert_eq!(d.decided_by, DecidedBy::Loom);
    assert_eq!(d.verdict, Verdict::Allowed, "loom's verdict");
    match &d.agreement {
        Agreement::Single { reason } => {
            assert!(reason.contains("too many candidates"), "{reason}")
        }
        other => panic!("expected single, got {other:?}"),
    }
    // The kind decides, not the words: a deadlock whose message reads like
    // a bound is a conflict.
    let deadlock = AxiomError::new(AxiomKind::Deadlock, "more than one wait exceeds");
    let d = decided(loom(&[0, 1], None), Err(deadlock), &[]).unwrap();
    match d.agreement {
        Agreement::Conflict { only_loom, .. } => assert_eq!(only_loom.len(), 2),
        other => panic!("expected a conflict, got {other:?}"),
    }
    // loom over its branch bound is a conflict too: it hints at a wait
    // that is never satisfied.
    let branches = ModelError::new(ModelKind::BranchLimit, "exceeded 10000 decisions");
    let d = decided(Err(branches), axiom(&[1]), &[]).unwrap();
    assert_eq!(d.decided_by, DecidedBy::Axiomatic);
    match d.agreement {
        Agreement::Conflict { detail, .. } => {
            assert!(detail.contains("loom fails: exceeded"), "{detail}")
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
}

#[test]
fn both_failing_is_an_error_naming_both() {
    let m = ModelError::new(ModelKind::Deadlock, "deadlock: a");
    let a = AxiomError::new(AxiomKind::Deadlock, "deadlock: b");
    let e = decided(Err(m.clone()), Err(a.clone()), &[]).unwrap_err();
    assert_eq!(e.loom, Some(m));
    assert_eq!(e.axiomatic, a);
    assert_eq!(
        e.to_string(),
        "loom: deadlock: a; the axiomatic model: deadlock: b"
    );
    let e = decide((40, 0), None, &Err(a), || unreachable!()).unwrap_err();
    assert_eq!(e.loom, None);
    assert_eq!(e.to_string(), "the axiomatic model failed: deadlock: b");
}

/// A one-test spec, loaded as the harness loads it.
fn litmus(kernels: &str, condition: &str, expect: &str) -> Litmus {
    let yaml = format!(
        "rules:\n  - id: cdp2.oracle.hand-built\n    source: {{ seed: s.txt, section: \"1 S\" }}\n    \
         quote: q\n    profile: cdp2\n    tests: [hand-built]\ntests:\n  - name: hand-built\n    \
         kind: litmus\n    memory: {{ x: 0, y: 0 }}\n    kernels:\n{kernels}    \
         condition: {condition}\n    expect: {expect}\n"
    );
    let spec = gridcheck_spec::load_sources(&[(PathBuf::from("spec/oracle.yaml"), yaml)], None)
        .unwrap_or_else(|e| panic!("{e}"));
    match &spec.tests[0].body {
        TestBody::Litmus(l) => l.clone(),
        _ => unreachable!(),
    }
}

#[test]
fn both_oracles_agree_on_a_launch() {
    // The parent's store before the launch reaches the child.
    let l = litmus(
        "      - kernel: parent\n        launch: host\n        threads:\n          \
         t0: [store x 1, launch child]\n      - kernel: child\n        launch: device\n        \
         threads:\n          t0: [load r0 x]\n",
        "exists child.t0.r0 == 0",
        "forbidden",
    );
    let c = cross_check(&l).unwrap();
    assert_eq!(c.agreement, Agreement::Same, "{}", c.agreement);
    assert_eq!(c.decided_by, DecidedBy::Both);
    assert_eq!(c.verdict, Verdict::Forbidden);
    assert!(c.loom.as_ref().is_some_and(|r| r.is_ok()));
    assert!(!c.is_conflict());
}

#[test]
fn a_deadlock_fails_both_oracles_with_their_kinds() {
    // A barrier only one thread of the block reaches.
    let l = litmus(
        "      - kernel: k\n        launch: host\n        threads:\n          \
         t0: [syncthreads, store x 1]\n          t1: [store y 1]\n",
        "exists x == 1",
        "required",
    );
    let e = cross_check(&l).unwrap_err();
    assert_eq!(e.loom.as_ref().map(|m| m.kind), Some(ModelKind::Deadlock));
    assert_eq!(e.axiomatic.kind, AxiomKind::Deadlock);
}

/// A one-test PDL spec with a shared location `s`: `kernels`, the
/// `kernels:` list's entries.
fn with_shared(kernels: &str, condition: &str) -> Litmus {
    let yaml = format!(
        "rules:\n  - id: pdl.oracle.hand-built\n    source: {{ seed: s.txt, section: \"1 S\" }}\n    \
         quote: q\n    profile: pdl\n    tests: [hand-built]\ntests:\n  - name: hand-built\n    \
         kind: litmus\n    memory: {{ x: 0 }}\n    shared: {{ s: 0 }}\n    kernels:\n{kernels}    \
         condition: {condition}\n    expect: allowed\n"
    );
    let spec = gridcheck_spec::load_sources(&[(PathBuf::from("spec/oracle.yaml"), yaml)], None)
        .unwrap_or_else(|e| panic!("{e}"));
    match &spec.tests[0].body {
        TestBody::Litmus(l) => l.clone(),
        _ => unreachable!(),
    }
}

#[test]
fn both_oracles_agree_on_a_copy_that_misses_a_generic_write() {
    // No proxy fence between the generic store and the bulk store.
    let l = with_shared(
        "      - kernel: k\n        launch: host\n        threads:\n          \
         t0: [store s 1, bulkstore x s, bulkcommit, bulkwait 0]\n",
        "exists x == 0",
    );
    let c = cross_check(&l).unwrap();
    assert_eq!(c.agreement, Agreement::Same, "{}", c.agreement);
    assert_eq!(c.verdict, Verdict::Allowed);
}

#[test]
fn bulk_copies_count_as_loom_threads() {
    // Two threads and three copies: five agents, beyond loom's four.
    let l = with_shared(
        "      - kernel: k\n        launch: host\n        threads:\n          \
         t0: [store s 1, fence.proxy.async, bulkstore x s, bulkstore x s]\n          \
         t1: [bulkload s x b]\n",
        "exists x == 0",
    );
    assert_eq!(gridcheck_model::loom_agents(&l), 5);
    let c = cross_check(&l).unwrap();
    assert!(c.loom.is_none());
    let Agreement::Single { reason } = &c.agreement else {
        panic!("{}", c.agreement)
    };
    assert!(
        reason.contains("2 threads and 3 bulk copies, beyond loom's reach"),
        "{reason}"
    );
}
