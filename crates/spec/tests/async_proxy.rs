//! The loader on the asynchronous proxy's operations and shared memory:
//! what loads, and each mistake located with the rule it breaks.

use std::path::PathBuf;

use gridcheck_fixture::OneRule;
use gridcheck_spec::{Litmus, Op, TestBody, load_sources, render};

/// One litmus test `t` with `shared:` and these threads of a host kernel
/// `k`; `extra` goes into the kernels' list.
fn test(shared: &str, threads: &str, condition: &str) -> String {
    OneRule::new()
        .tests(&format!(
            "  - name: t\n    kind: litmus\n    memory: {{ x: 0, y: 0 }}\n{shared}    kernels:\n      \
             - kernel: k\n        launch: host\n        threads:\n{threads}    condition: {condition}\n    \
             expect: allowed\n"
        ))
        .yaml()
}

fn load(yaml: &str) -> Result<Litmus, String> {
    match load_sources(&[(PathBuf::from("spec/p.yaml"), yaml.to_string())], None) {
        Ok(spec) => match &spec.tests[0].body {
            TestBody::Litmus(l) => Ok(l.clone()),
            _ => Err("not litmus".into()),
        },
        Err(e) => Err(e.to_string()),
    }
}

const SHARED: &str = "    shared: { s: 2 }\n";

#[test]
fn shared_locations_and_bulk_copies_load_and_render_back() {
    let yaml = test(
        SHARED,
        "          t0: [store s 1, fence.proxy.async, bulkstore x s, bulkcommit, bulkwait read 1]\n          \
         t1: [bulkload s y b, mbarwait b, load r0 s]\n",
        "exists k.t1.r0 == 0",
    );
    let l = load(&yaml).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(l.shared, [("s".to_string(), 2)]);
    assert!(l.is_shared("s") && !l.is_shared("x"));
    assert_eq!(l.bulk_copies(), 2);
    assert_eq!(
        l.kernels[0].threads[1].ops[0],
        Op::BulkLoad {
            dst: "s".into(),
            src: "y".into(),
            bar: "b".into()
        }
    );
    // Shared memory dies with its block: not an observable.
    assert_eq!(l.observables(), ["k.t1.r0", "x", "y"]);
    // Written back as YAML, it loads to the same test.
    let again = render::load_litmus(&render::litmus_spec_yaml(
        gridcheck_spec::Profile::Pdl,
        "t",
        &l,
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again.shared, l.shared);
    assert_eq!(again.kernels[0].threads[0].ops, l.kernels[0].threads[0].ops);
}

#[test]
fn each_side_of_a_bulk_copy_is_of_its_kind() {
    for (threads, needle) in [
        (
            "          t0: [bulkload x y b]\n",
            "`x` is global memory; the destination of `bulkload x y b` is a shared location (`shared`)",
        ),
        (
            "          t0: [bulkload s s b]\n",
            "`s` is shared memory; the source of `bulkload s s b` is a global location (`memory`)",
        ),
        (
            "          t0: [bulkstore s s]\n",
            "`s` is shared memory; the destination of `bulkstore s s` is a global location",
        ),
        (
            "          t0: [bulkstore x y]\n",
            "`y` is global memory; the source of `bulkstore x y` is a shared location",
        ),
        (
            "          t0: [bulkstore x u]\n",
            "location `u` is not declared in `shared`",
        ),
        (
            "          t0: [load r0 u]\n",
            "location `u` is not declared in `memory` or `shared`",
        ),
    ] {
        let e = load(&test(SHARED, threads, "exists x == 0")).unwrap_err();
        assert!(e.contains(needle), "{threads}: {e}");
        assert!(e.contains("field `kernels.k.threads.t0[0]`"), "{e}");
    }
}

#[test]
fn a_name_is_global_or_shared_and_the_condition_names_no_shared_location() {
    let e = load(&test(
        "    shared: { x: 0 }\n",
        "          t0: [load r0 x]\n",
        "exists x == 0",
    ))
    .unwrap_err();
    assert!(
        e.contains("`x` is declared in both `memory` and `shared`"),
        "{e}"
    );
    let e = load(&test(
        SHARED,
        "          t0: [store s 1]\n",
        "exists s == 1",
    ))
    .unwrap_err();
    assert!(
        e.contains("`s` is shared memory, which does not outlive its block"),
        "{e}"
    );
    let e = load(
        &OneRule::new()
            .tests(
                "  - name: t\n    kind: compile\n    shared: { s: 0 }\n    source: \"x\"\n    \
                 expect: accept\n",
            )
            .yaml(),
    )
    .unwrap_err();
    assert!(e.contains("field `shared`"), "{e}");
}

#[test]
fn an_mbarrier_tracks_one_bulk_load_of_its_block() {
    let e = load(&test(
        SHARED,
        "          t0: [bulkload s x b]\n          t1: [bulkload s y b]\n",
        "exists x == 0",
    ))
    .unwrap_err();
    assert!(
        e.contains("mbarrier `b` tracks a bulk load of `t0` already"),
        "{e}"
    );
    let e = load(&test(
        SHARED,
        "          t0: [mbarwait c]\n",
        "exists x == 0",
    ))
    .unwrap_err();
    assert!(
        e.contains("`mbarwait c` waits on mbarrier `c`, which no `bulkload` of kernel `k` names"),
        "{e}"
    );
    // Another block's mbarrier of the same name is another object.
    let e = load(&test(
        SHARED,
        "          b0.t0: [bulkload s x b]\n          b1.t0: [mbarwait b]\n",
        "exists x == 0",
    ))
    .unwrap_err();
    assert!(e.contains("no `bulkload` of block b1 of kernel `k`"), "{e}");
    load(&test(
        SHARED,
        "          b0.t0: [bulkload s x b, mbarwait b]\n          b1.t0: [bulkload s y b, mbarwait b]\n",
        "exists x == 0",
    ))
    .unwrap_or_else(|e| panic!("{e}"));
}
