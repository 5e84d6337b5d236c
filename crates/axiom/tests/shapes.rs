//! The axiomatic model on shapes whose answer the guide gives directly,
//! among them the two the loom model got wrong (a PDL trigger that orders
//! two stores; an incoherent read after a store), and the classic memory
//! model shapes the decisions of `execution.rs` settle.

use gridcheck_axiom::{Options, check, check_with};
use gridcheck_spec::render::load_litmus;
use gridcheck_spec::{Litmus, Verdict, render_state};

/// A one-test document: `memory`, the `kernels:` list's entries (YAML),
/// the condition and the expectation.
fn lit(profile: &str, memory: &str, kernels: &str, condition: &str) -> Litmus {
    let yaml = gridcheck_fixture::OneRule::new()
        .id(&format!("{profile}.shape.s"))
        .tests(&format!(
            "  - name: s\n    kind: litmus\n    memory: {{ {memory} }}\n    \
             kernels:\n{kernels}    condition: '{condition}'\n    expect: allowed\n"
        ))
        .yaml();
    load_litmus(&yaml).unwrap_or_else(|e| panic!("{e}\n{yaml}"))
}

fn states(l: &Litmus, o: &Options) -> Vec<String> {
    let order = l.observables();
    let out = check_with(l, o).unwrap_or_else(|e| panic!("{e}"));
    out.states.iter().map(|s| render_state(&order, s)).collect()
}

const TRIGGER_ORDERS_NOTHING: &str = "      - kernel: p\n        launch: host\n        threads:\n          t0: [store x 1, trigger]\n      - kernel: s\n        launch: host-pdl\n        threads:\n          t0: [store x 2]\n";

#[test]
fn a_trigger_orders_no_stores() {
    let l = lit("pdl", "x: 0", TRIGGER_ORDERS_NOTHING, "exists x == 1");
    assert_eq!(check(&l).unwrap().verdict, Verdict::Allowed);
    assert_eq!(states(&l, &Options::default()), ["x=1", "x=2"]);
    // Coherence order following execution order (the loom model's
    // restriction) loses x == 1: the secondary's store runs after the trigger.
    assert_eq!(states(&l, &Options::loom()), ["x=2"]);
}

#[test]
fn a_read_after_an_own_store_is_coherent() {
    let k = "      - kernel: p\n        launch: host\n        threads:\n          t0: [store x 1, trigger]\n      - kernel: s\n        launch: host-pdl\n        threads:\n          t0: [store x 2, load r0 x]\n";
    let l = lit("pdl", "x: 0", k, "exists s.t0.r0 == 1 /\\ x == 2");
    let got = states(&l, &Options::default());
    // r0 = 1 needs co: 2 before 1, so x ends 1; {r0 = 1, x = 2} is incoherent.
    assert_eq!(got, ["s.t0.r0=1; x=1", "s.t0.r0=2; x=1", "s.t0.r0=2; x=2"]);
    assert_eq!(check(&l).unwrap().verdict, Verdict::Forbidden);
}

#[test]
fn message_passing_through_a_launch_and_without_one() {
    let k = "      - kernel: parent\n        launch: host\n        threads:\n          t0: [store x 1, launch child, store y 1]\n      - kernel: child\n        launch: device\n        threads:\n          t0: [load r0 y, load r1 x]\n";
    let l = lit("cdp2", "x: 0, y: 0", k, "exists child.t0.r1 == 0");
    assert_eq!(check(&l).unwrap().verdict, Verdict::Forbidden);
    let l = lit("cdp2", "x: 0, y: 0", k, "exists child.t0.r0 == 1");
    assert_eq!(check(&l).unwrap().verdict, Verdict::Allowed);
}

#[test]
fn load_buffering_is_a_decision() {
    // Two host kernels overlapping through PDL, each reading what the other
    // writes: r0 = r1 = 1 needs each read to take a write that ran after it.
    let k = "      - kernel: p\n        launch: host\n        threads:\n          t0: [trigger, load r0 y, store x 1]\n      - kernel: s\n        launch: host-pdl\n        threads:\n          t0: [load r1 x, store y 1]\n";
    let l = lit(
        "pdl",
        "x: 0, y: 0",
        k,
        "exists p.t0.r0 == 1 /\\ s.t0.r1 == 1",
    );
    assert_eq!(check(&l).unwrap().verdict, Verdict::Forbidden);
    let lb = Options {
        load_buffering: true,
        ..Options::default()
    };
    assert_eq!(check_with(&l, &lb).unwrap().verdict, Verdict::Allowed);
}

#[test]
fn a_trigger_before_a_read_does_not_let_the_read_see_the_secondary_without_lb() {
    let k = "      - kernel: p\n        launch: host\n        threads:\n          t0: [load r0 x, trigger]\n      - kernel: s\n        launch: host-pdl\n        threads:\n          t0: [store x 1]\n";
    let l = lit("pdl", "x: 0", k, "exists p.t0.r0 == 1");
    assert_eq!(check(&l).unwrap().verdict, Verdict::Forbidden);
}

#[test]
fn store_buffering_through_two_unordered_children() {
    let k = "      - kernel: parent\n        launch: host\n        threads:\n          t0: [launch a fire-and-forget, launch b fire-and-forget]\n      - kernel: a\n        launch: device\n        threads:\n          t0: [store x 1, load r0 y]\n      - kernel: b\n        launch: device\n        threads:\n          t0: [store y 1, load r1 x]\n";
    let l = lit(
        "cdp2",
        "x: 0, y: 0",
        k,
        "exists a.t0.r0 == 0 /\\ b.t0.r1 == 0",
    );
    assert_eq!(check(&l).unwrap().verdict, Verdict::Allowed);
}

#[test]
fn coherence_of_two_reads_of_racing_writes() {
    // CoRR: one thread reads x twice while two unordered grids write it; it
    // never sees 2 then 1 when the final value is 2.
    let k = "      - kernel: parent\n        launch: host\n        threads:\n          t0: [launch a fire-and-forget, launch b fire-and-forget, launch c fire-and-forget]\n      - kernel: a\n        launch: device\n        threads:\n          t0: [store x 1]\n      - kernel: b\n        launch: device\n        threads:\n          t0: [store x 2]\n      - kernel: c\n        launch: device\n        threads:\n          t0: [load r0 x, load r1 x]\n";
    let l = lit(
        "cdp2",
        "x: 0",
        k,
        "exists c.t0.r0 == 2 /\\ c.t0.r1 == 1 /\\ x == 2",
    );
    assert_eq!(check(&l).unwrap().verdict, Verdict::Forbidden);
    let l = lit(
        "cdp2",
        "x: 0",
        k,
        "exists c.t0.r0 == 2 /\\ c.t0.r1 == 1 /\\ x == 1",
    );
    assert_eq!(check(&l).unwrap().verdict, Verdict::Allowed);
}

#[test]
fn a_devicesync_on_a_tail_grid_is_a_deadlock() {
    let k = "      - kernel: parent\n        launch: host\n        threads:\n          t0: [launch t tail, devicesync]\n      - kernel: t\n        launch: device\n        threads:\n          t0: [store x 1]\n";
    let l = lit("cdp1", "x: 0", k, "exists x == 1");
    let e = check(&l).unwrap_err();
    assert!(e.message.contains("deadlock"), "{e}");
}
