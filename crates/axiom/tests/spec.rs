//! The axiomatic model against the real spec, and against the loom model:
//! every litmus test gets its expected verdict, and the two oracles reach
//! the same states (the loom model's set is the axiomatic model's under
//! `Options::loom()`; the guide's set contains it).

use std::path::Path;

use gridcheck_axiom::{Options, check_with};
use gridcheck_spec::{TestBody, load_dir, render_state};

#[test]
fn every_real_litmus_test_agrees_with_the_loom_model() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spec");
    let spec = load_dir(&dir, None).unwrap_or_else(|e| panic!("{e}"));
    let mut failures = Vec::new();
    for t in &spec.tests {
        let TestBody::Litmus(l) = &t.body else {
            continue;
        };
        let order = l.observables();
        let show = |s: &std::collections::BTreeSet<gridcheck_spec::State>| {
            s.iter()
                .map(|x| format!("[{}]", render_state(&order, x)))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let guide = check_with(l, &Options::default());
        let loomish = check_with(l, &Options::loom());
        if gridcheck_model::loom_agents(l) > gridcheck_model::MAX_GPU_THREADS {
            // Beyond loom: the axiomatic model alone, still exact.
            match &guide {
                Ok(g) if g.verdict == l.expect => eprintln!(
                    "{:<48} guide {:<9} (no loom: {} threads) {} candidates {:?}",
                    t.name,
                    g.verdict.as_str(),
                    l.thread_count(),
                    g.candidates,
                    g.elapsed
                ),
                other => failures.push(format!(
                    "{}: guide {:?}, the spec expects {}",
                    t.name,
                    other.as_ref().map(|o| o.verdict),
                    l.expect
                )),
            }
            continue;
        }
        let loom = gridcheck_model::check(l);
        match (&guide, &loomish, &loom) {
            (Ok(g), Ok(a), Ok(m)) => {
                eprintln!(
                    "{:<48} guide {:<9} loom-mode {:<9} loom {:<9} {} candidates {:?}",
                    t.name,
                    g.verdict.as_str(),
                    a.verdict.as_str(),
                    m.verdict.as_str(),
                    g.candidates,
                    g.elapsed
                );
                if a.states != m.states {
                    failures.push(format!(
                        "{}: loom-mode axiomatic states differ from loom's\n  axiom: {}\n  loom:  {}",
                        t.name,
                        show(&a.states),
                        show(&m.states)
                    ));
                }
                if g.verdict != l.expect {
                    failures.push(format!(
                        "{}: guide verdict {} expected {}\n  states: {}",
                        t.name,
                        g.verdict,
                        l.expect,
                        show(&g.states)
                    ));
                }
                if !a.states.is_subset(&g.states) {
                    failures.push(format!(
                        "{}: loom-mode states not within the guide's",
                        t.name
                    ));
                }
            }
            (Err(g), _, Err(m)) => eprintln!("{:<48} both errors: {g} | {m}", t.name),
            _ => failures.push(format!(
                "{}: guide {:?} loom-mode {:?} loom {:?}",
                t.name,
                guide.as_ref().map(|o| o.verdict),
                loomish.as_ref().map(|o| o.verdict),
                loom.as_ref().map(|o| o.verdict)
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
