//! The model against the real spec: every litmus test's verdict is the one
//! the spec expects.

use std::path::Path;

use gridcheck_spec::{TestBody, load_dir, render_state};

#[test]
fn every_real_litmus_test_gets_its_expected_verdict() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spec");
    let spec = load_dir(&dir, None).unwrap_or_else(|e| panic!("{e}"));
    let mut failures = Vec::new();
    let mut n = 0;
    for t in &spec.tests {
        let TestBody::Litmus(l) = &t.body else {
            continue;
        };
        n += 1;
        match gridcheck_model::check(l) {
            Ok(o) => {
                let order = l.observables();
                eprintln!(
                    "{:<40} {:<9} {:>8} executions {:>10.3?} states: {}",
                    t.name,
                    o.verdict.as_str(),
                    o.executions,
                    o.elapsed,
                    o.states
                        .iter()
                        .map(|s| format!("[{}]", render_state(&order, s)))
                        .collect::<Vec<_>>()
                        .join(" ")
                );
                assert_eq!(o.preemption_bound, None, "{}", t.name);
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
