//! The axiomatic model's asynchronous proxy (`proxy.rs`, `relations.rs`'s
//! `copy`, `mbarrier` and `bulk-group`): which generic writes bind a bulk
//! copy's read, what a copy writes, how its completion is observed, and
//! what never happens (a value out of thin air, a wait before its copy).

use gridcheck_axiom::{ErrorKind, Options, check, check_with};
use gridcheck_spec::render::load_litmus;
use gridcheck_spec::{Litmus, Verdict, render_state};

/// A one-test document with `shared: { s: 0 }`: `memory`, the `kernels:`
/// list's entries (YAML), the condition.
fn lit(memory: &str, kernels: &str, condition: &str) -> Litmus {
    let yaml = gridcheck_fixture::OneRule::new()
        .id("pdl.shape.s")
        .tests(&format!(
            "  - name: s\n    kind: litmus\n    memory: {{ {memory} }}\n    shared: {{ s: 0 }}\n    \
             kernels:\n{kernels}    condition: '{condition}'\n    expect: allowed\n"
        ))
        .yaml();
    load_litmus(&yaml).unwrap_or_else(|e| panic!("{e}\n{yaml}"))
}

/// One host kernel `k` of these threads (YAML lines).
fn one(threads: &str) -> String {
    format!("      - kernel: k\n        launch: host\n        threads:\n{threads}")
}

fn states(l: &Litmus, o: &Options) -> Vec<String> {
    let order = l.observables();
    let out = check_with(l, o).unwrap_or_else(|e| panic!("{e}"));
    out.states.iter().map(|s| render_state(&order, s)).collect()
}

#[test]
fn a_generic_write_binds_a_copy_only_through_a_proxy_fence() {
    let without = one("          t0: [store s 1, bulkstore x s, bulkcommit, bulkwait 0]\n");
    let l = lit("x: 0", &without, "exists x == 0");
    assert_eq!(states(&l, &Options::default()), ["x=0", "x=1"]);
    let with = one(
        "          t0: [store s 1, fence.proxy.async, bulkstore x s, bulkcommit, bulkwait 0]\n",
    );
    let l = lit("x: 0", &with, "exists x == 0");
    assert_eq!(states(&l, &Options::default()), ["x=1"]);
    // Also the initial value: a generic store after the fence is not seen
    // behind it, and the copy may take either.
    let after = one(
        "          t0: [fence.proxy.async, store s 1, bulkstore x s, bulkcommit, bulkwait 0]\n",
    );
    let l = lit("x: 0", &after, "exists x == 0");
    assert_eq!(states(&l, &Options::default()), ["x=0", "x=1"]);
}

#[test]
fn a_grid_boundary_is_a_proxy_fence() {
    // The primary's generic store, the secondary's wait, its copy.
    let k = "      - kernel: p\n        launch: host\n        threads:\n          t0: [store x 1]\n      \
             - kernel: q\n        launch: host-pdl\n        threads:\n          \
             t0: [gridsync, bulkload s x b, mbarwait b, load r0 s]\n";
    let l = lit("x: 0", k, "exists q.t0.r0 == 0");
    assert_eq!(check(&l).unwrap().verdict, Verdict::Forbidden);
    // Before the wait, the copy is not bound by it.
    let k = k.replace(
        "t0: [gridsync, bulkload s x b,",
        "t0: [bulkload s x b, gridsync,",
    );
    let l = lit("x: 0", &k, "exists q.t0.r0 == 0");
    assert_eq!(check(&l).unwrap().verdict, Verdict::Allowed);
}

#[test]
fn a_copy_writes_what_it_read_through_a_chain_of_copies() {
    // x to s, s to y: y ends with x's value, read through two copies.
    let k = one("          t0: [bulkload s x b, mbarwait b, bulkstore y s]\n");
    let l = lit("x: 7, y: 0", &k, "exists y == 7");
    assert_eq!(states(&l, &Options::default()), ["x=7; y=7"]);
}

#[test]
fn copies_reading_each_others_writes_make_no_value_out_of_thin_air() {
    // A bulk load of x into s and, in another warp, a bulk store of s into
    // x: each may read the other's write, but not both (each write depends
    // on its read). Load buffering allowed drops the axiom that rules the
    // cycle out as an order; it is still no candidate, as a value out of
    // thin air.
    let k = one("          t0: [bulkload s x b]\n          t1: [bulkstore x s]\n");
    let l = lit("x: 0", &k, "exists x == 0");
    let lb = Options {
        load_buffering: true,
        ..Options::default()
    };
    let (plain, with_lb) = (
        check_with(&l, &Options::default()).unwrap(),
        check_with(&l, &lb).unwrap(),
    );
    assert_eq!(plain.consistent, 3);
    assert_eq!(with_lb.consistent, plain.consistent);
    assert!(with_lb.candidates > plain.consistent);
}

#[test]
fn a_bulk_wait_leaves_the_most_recent_groups_pending() {
    let k = one(
        "          t0: [store s 1, fence.proxy.async, bulkstore x s, bulkcommit, bulkstore y s, \
         bulkcommit, bulkwait 1, load r0 x, load r1 y]\n",
    );
    let got = states(
        &lit("x: 0, y: 0", &k, "exists k.t0.r0 == 0"),
        &Options::default(),
    );
    // x's group is complete; y's may not be.
    assert!(got.iter().all(|s| s.starts_with("k.t0.r0=1;")), "{got:?}");
    assert!(got.iter().any(|s| s.contains("k.t0.r1=0")), "{got:?}");
}

#[test]
fn a_wait_before_its_own_copy_is_a_deadlock() {
    let k = one("          t0: [mbarwait b, bulkload s x b]\n");
    let e = check(&lit("x: 0", &k, "exists x == 0")).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Deadlock, "{e}");
}
