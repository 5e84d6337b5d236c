//! loom's limits that bear on verdicts, measured through the model (see the
//! crate docs). Each test pins down what the model does today, so that a
//! change of loom that lifts a limit shows up here.

mod common;

use gridcheck_model::{Options, check_with};
use gridcheck_spec::Verdict;

use common::litmus;

#[test]
fn load_buffering_is_not_explored() {
    // Relaxed C++ atomics allow r0 == 1 && r1 == 1 (each load reads the
    // other thread's later store); loom never returns a store that has not
    // happened yet in its interleaving, so the model finds it forbidden.
    let l = litmus(
        "cdp2",
        "x: 0, y: 0",
        &[(
            "k",
            "host",
            &[
                ("t0", &["load r0 x", "store y 1"]),
                ("t1", &["load r1 y", "store x 1"]),
            ],
        )],
        "exists k.t0.r0 == 1 /\\ k.t1.r1 == 1",
        "forbidden",
    );
    let o = check_with(&l, &Options::exhaustive()).unwrap();
    assert_eq!(o.verdict, Verdict::Forbidden);
    assert_eq!(o.states.len(), 3);
}

fn stale_after_n_stores(n: u32) -> Verdict {
    // t0 stores x n times, then y; t1 reads y, then x. Without an edge, t1
    // may read the initial x = 0 even after seeing y = 1. loom remembers the
    // last 7 stores of a location (the initial value counts as one).
    let stores: Vec<String> = (1..=n)
        .map(|v| format!("store x {v}"))
        .chain(["store y 1".to_string()])
        .collect();
    let stores: Vec<&str> = stores.iter().map(String::as_str).collect();
    let l = litmus(
        "cdp2",
        "x: 0, y: 0",
        &[(
            "k",
            "host",
            &[("t0", &stores), ("t1", &["load r0 y", "load r1 x"])],
        )],
        "exists k.t1.r0 == 1 /\\ k.t1.r1 == 0",
        "allowed",
    );
    check_with(&l, &Options::exhaustive()).unwrap().verdict
}

#[test]
fn a_location_remembers_seven_stores() {
    assert_eq!(stale_after_n_stores(6), Verdict::Allowed);
    // Seven stores after the initial value push it out of loom's history.
    assert_eq!(stale_after_n_stores(7), Verdict::Forbidden);
}

/// Found by the property tests (a barrier added a state to a program with a
/// child grid) and pinned here: t1 stores `y = 3`, then a barrier; t0 stores
/// `y = 1`, launches `c`, passes the barrier and loads `y`; `c` stores
/// `y = 5`. `c`'s store happens after t0's (the launch), so `y` ends at 5 or
/// 3, never at 1. loom 0.7 reported a final `y = 1` (issue #282, reproduced
/// with bare loom), and, once final values came from the order the stores
/// ran, still a load anomaly: `r1 = 1, y = 3` (reading 1 after the barrier
/// needs `y = 3` before `y = 1` in the modification order, so 3 cannot be
/// last). The coherence views of `memory.rs` discard that execution: the
/// state set is exactly the coherent one.
#[test]
fn a_barrier_after_a_launch_gives_only_coherent_states() {
    let l = litmus(
        "cdp1",
        "x: 0, y: 0",
        &[
            (
                "k",
                "host",
                &[
                    ("t0", &["store y 1", "launch c", "syncthreads", "load r1 y"]),
                    ("t1", &["store y 3", "syncthreads"]),
                ],
            ),
            ("c", "device", &[("t0", &["store y 5"])]),
        ],
        "exists k.t0.r1 == 1 /\\ y == 3",
        "forbidden",
    );
    let o = check_with(&l, &Options::exhaustive()).unwrap();
    assert_eq!(o.verdict, Verdict::Forbidden, "{:?}", o.states);
    let has = |r1: u32, y: u32| o.states.iter().any(|s| s["k.t0.r1"] == r1 && s["y"] == y);
    assert!(
        !has(1, 1) && !has(3, 1) && !has(5, 1),
        "a final y = 1: {:?}",
        o.states
    );
    assert!(!has(1, 3), "the load anomaly is back: {:?}", o.states);
    // The executions loom produced with that anomaly were seen and discarded.
    assert!(o.incoherent_executions > 0, "{o:?}");
}

/// The shape the differential test found (loom #282 within one block): t1
/// reads `x` after its own store 2; reading t0's 1 needs 1 after 2 in the
/// modification order, so x ends 1. loom returned r0 = 1 with x = 2.
#[test]
fn a_read_after_an_own_store_is_coherent() {
    let l = litmus(
        "cdp2",
        "x: 0",
        &[(
            "k",
            "host",
            &[("t0", &["store x 1"]), ("t1", &["store x 2", "load r0 x"])],
        )],
        "exists k.t1.r0 == 1 /\\ x == 2",
        "forbidden",
    );
    let o = check_with(&l, &Options::exhaustive()).unwrap();
    assert_eq!(o.verdict, Verdict::Forbidden, "{:?}", o.states);
}
