//! The model against the real spec: every litmus test within loom's thread
//! limit gets the verdict the spec expects (the others are refused at once).
//!
//! This runs [`check`]'s default options, exactly what the conformance
//! harness runs (loom and the model are optimised in test builds too, see
//! the workspace's `Cargo.toml`), prints each test's cost, and fails if any
//! test needed a preemption bound without a documented reason: every test
//! is explored exhaustively today.

use std::path::Path;

use gridcheck_model::{Options, check_with};

/// Tests allowed to need a preemption bound, each with the reason. Empty:
/// every litmus test of the spec is explored exhaustively.
const BOUNDED: &[(&str, &str)] = &[];
use gridcheck_spec::{TestBody, load_dir, render_state};

#[test]
fn every_real_litmus_test_gets_its_expected_verdict() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spec");
    let spec = load_dir(&dir, None).unwrap_or_else(|e| panic!("{e}"));
    let options = Options::default();
    let mut failures = Vec::new();
    let mut n = 0;
    for t in &spec.tests {
        let TestBody::Litmus(l) = &t.body else {
            continue;
        };
        if gridcheck_model::loom_agents(l) > gridcheck_model::MAX_GPU_THREADS {
            // Beyond loom's reach: the axiomatic model decides it alone
            // (`crates/axiom/tests/spec.rs`); loom refuses it at once.
            let e = check_with(l, &options).expect_err("over loom's thread limit");
            assert!(e.message.contains("in all"), "{}: {e}", t.name);
            continue;
        }
        n += 1;
        match check_with(l, &options) {
            Ok(o) => {
                let order = l.observables();
                eprintln!(
                    "{:<48} {} threads {:<9} {:>7} executions {:>10.3?} bound {:<7} \
                     (+{} abandoned) {} states: {}",
                    t.name,
                    l.thread_count(),
                    o.verdict.as_str(),
                    o.executions,
                    o.elapsed,
                    format!("{:?}", o.preemption_bound),
                    o.abandoned_executions,
                    o.states.len(),
                    o.states
                        .iter()
                        .map(|s| format!("[{}]", render_state(&order, s)))
                        .collect::<Vec<_>>()
                        .join(" ")
                );
                if o.preemption_bound.is_some() && !BOUNDED.iter().any(|(n, _)| *n == t.name) {
                    failures.push(format!(
                        "{} ({}): explored only with preemption bound {:?} ({} executions abandoned); \
                         make it cheaper or list it in BOUNDED with the reason",
                        t.name, t.origin, o.preemption_bound, o.abandoned_executions
                    ));
                }
                if o.verdict != l.expect {
                    failures.push(format!(
                        "{} ({}): model says {}, spec expects {}",
                        t.name, t.origin, o.verdict, l.expect
                    ));
                }
            }
            Err(e) => failures.push(format!("{} ({}): model error: {e}", t.name, t.origin)),
        }
    }
    assert!(n >= 6, "only {n} litmus tests in the spec");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every real litmus test for which [`gridcheck_model::check`] falls back to
/// a preemption bound, explored exhaustively: same verdict. Slow (minutes in
/// release mode): `cargo test --release -p gridcheck-model --test spec -- --ignored`.
#[test]
#[ignore]
fn bounded_verdicts_agree_with_exhaustive_exploration() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spec");
    let spec = load_dir(&dir, None).unwrap_or_else(|e| panic!("{e}"));
    let bounded: Vec<_> = spec
        .tests
        .iter()
        .filter_map(|t| match &t.body {
            TestBody::Litmus(l) => Some((t, l)),
            _ => None,
        })
        .filter(|(_, l)| gridcheck_model::check(l).is_ok_and(|o| o.preemption_bound.is_some()))
        .collect();
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = bounded
            .iter()
            .map(|(t, l)| {
                s.spawn(move || {
                    let o = check_with(l, &Options::exhaustive())
                        .unwrap_or_else(|e| panic!("{}: {e}", t.name));
                    eprintln!(
                        "{:<48} exhaustive: {} in {} executions, {:.3?}",
                        t.name, o.verdict, o.executions, o.elapsed
                    );
                    (o.verdict != l.expect).then(|| {
                        format!(
                            "{}: exhaustive {} but expected {}",
                            t.name, o.verdict, l.expect
                        )
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .filter_map(|h| h.join().expect("exploration panicked"))
            .collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
