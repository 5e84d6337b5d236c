//! The launch pool, the synchronization depth and the per-thread last
//! error, each checked against a variant where the rule gives the opposite
//! answer, so that each assertion can fail.

mod common;

use std::collections::BTreeSet;

use gridcheck_model::{Options, check_with};
use gridcheck_spec::{Litmus, State, Verdict};

use common::litmus_with_limits;

const EXCEEDED: u32 = 69;

/// Every reachable state, explored exhaustively.
fn states(l: &Litmus) -> BTreeSet<State> {
    let o = check_with(l, &Options::exhaustive()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(o.preemption_bound, None);
    o.states
}

fn values(l: &Litmus, key: &str) -> BTreeSet<u32> {
    states(l).iter().map(|s| s[key]).collect()
}

/// A tail launch then a second launch, with a pool of `pool`.
fn tail_then_launch(pool: u32) -> Litmus {
    litmus_with_limits(
        "cdp2",
        "x: 0, y: 0",
        &format!("dev-runtime-pending-launch-count: {pool}"),
        &[
            (
                "parent",
                "host",
                &[("t0", &["launch a tail", "launch b", "geterror e0"])],
            ),
            ("a", "device", &[("t0", &["store x 1"])]),
            ("b", "device", &[("t0", &["store y 1", "load r0 x"])]),
        ],
        "exists parent.t0.e0 == cudaSuccess",
        "allowed",
    )
}

#[test]
fn a_full_pool_fails_the_launch_and_its_grid_never_runs() {
    let full = states(&tail_then_launch(1));
    // The only state: the error, no write by b, b's register at 0.
    let expect: State = [
        ("parent.t0.e0", EXCEEDED),
        ("b.t0.r0", 0),
        ("x", 1),
        ("y", 0),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(full, BTreeSet::from([expect]));
    // With a second slot the launch succeeds and b runs.
    assert_eq!(
        values(&tail_then_launch(2), "parent.t0.e0"),
        BTreeSet::from([0])
    );
    assert_eq!(values(&tail_then_launch(2), "y"), BTreeSet::from([1]));
}

#[test]
fn a_slot_frees_when_its_grid_completes_not_before() {
    // b's launch may find a's slot free (a completed) or not.
    let l = litmus_with_limits(
        "cdp2",
        "x: 0",
        "dev-runtime-pending-launch-count: 1",
        &[
            (
                "parent",
                "host",
                &[("t0", &["launch a", "launch b", "geterror e0"])],
            ),
            ("a", "device", &[("t0", &["store x 1"])]),
            ("b", "device", &[("t0", &["load r0 x"])]),
        ],
        "exists parent.t0.e0 == cudaSuccess",
        "allowed",
    );
    let s = states(&l);
    assert_eq!(
        s.iter().map(|s| s["parent.t0.e0"]).collect::<BTreeSet<_>>(),
        BTreeSet::from([0, EXCEEDED])
    );
    // Whenever b's launch succeeded, a had completed: b is after a in the
    // NULL stream anyway, so b reads 1; a failed b reads nothing (0).
    for st in &s {
        let want = if st["parent.t0.e0"] == 0 { 1 } else { 0 };
        assert_eq!(st["b.t0.r0"], want, "{st:?}");
    }
}

#[test]
fn a_grandchild_of_a_failed_launch_never_runs_and_nothing_deadlocks() {
    let l = litmus_with_limits(
        "cdp2",
        "x: 0, y: 0",
        "dev-runtime-pending-launch-count: 1",
        &[
            (
                "parent",
                "host",
                &[("t0", &["launch a tail", "launch b", "peekerror e0"])],
            ),
            ("a", "device", &[("t0", &["store x 1"])]),
            ("b", "device", &[("t0", &["launch c"])]),
            ("c", "device", &[("t0", &["store y 1"])]),
        ],
        "exists y == 1",
        "forbidden",
    );
    assert_eq!(values(&l, "y"), BTreeSet::from([0]));
    assert_eq!(values(&l, "x"), BTreeSet::from([1]));
}

#[test]
fn the_pool_is_shared_by_threads_and_the_first_launch_always_succeeds() {
    let l = litmus_with_limits(
        "cdp2",
        "x: 0",
        "dev-runtime-pending-launch-count: 1",
        &[
            (
                "parent",
                "host",
                &[
                    ("t0", &["launch a tail", "geterror e0"]),
                    ("t1", &["launch b tail", "geterror e1"]),
                ],
            ),
            ("a", "device", &[("t0", &["store x 1"])]),
            ("b", "device", &[("t0", &["store x 2"])]),
        ],
        "exists parent.t0.e0 == cudaSuccess",
        "allowed",
    );
    let pairs: BTreeSet<(u32, u32)> = states(&l)
        .iter()
        .map(|s| (s["parent.t0.e0"], s["parent.t1.e1"]))
        .collect();
    // Exactly one of the two tail launches gets the slot, either one.
    assert_eq!(pairs, BTreeSet::from([(0, EXCEEDED), (EXCEEDED, 0)]));
}

#[test]
fn last_error_is_per_thread_get_resets_peek_does_not() {
    let l = litmus_with_limits(
        "cdp2",
        "x: 0",
        "dev-runtime-pending-launch-count: 1",
        &[
            (
                "parent",
                "host",
                &[
                    (
                        "t0",
                        &[
                            "launch a tail",
                            "launch b",
                            "peekerror e0",
                            "geterror e1",
                            "peekerror e2",
                        ],
                    ),
                    ("t1", &["peekerror e3"]),
                ],
            ),
            ("a", "device", &[("t0", &["store x 1"])]),
            ("b", "device", &[("t0", &["store x 2"])]),
        ],
        "exists parent.t1.e3 != cudaSuccess",
        "forbidden",
    );
    let got: BTreeSet<[u32; 4]> = states(&l)
        .iter()
        .map(|s| {
            [
                s["parent.t0.e0"],
                s["parent.t0.e1"],
                s["parent.t0.e2"],
                s["parent.t1.e3"],
            ]
        })
        .collect();
    assert_eq!(got, BTreeSet::from([[EXCEEDED, EXCEEDED, 0, 0]]));
}

/// A chain of grids at depths 0, 1, 2; the grid at `sync_at` launches a
/// writer and synchronizes on it.
fn sync_chain(limit: u32, sync_at: usize) -> Litmus {
    let names = ["k0", "k1", "k2"];
    let mut kernels: Vec<(String, String, Vec<String>)> = Vec::new();
    for (d, n) in names.iter().enumerate().take(sync_at + 1) {
        let ops = if d == sync_at {
            vec![
                "launch w".into(),
                "devicesync e0".into(),
                "load r0 x".into(),
            ]
        } else {
            vec![format!("launch {}", names[d + 1])]
        };
        let launch = if d == 0 { "host" } else { "device" };
        kernels.push((n.to_string(), launch.into(), ops));
    }
    kernels.push(("w".into(), "device".into(), vec!["store x 1".into()]));
    let ops: Vec<Vec<&str>> = kernels
        .iter()
        .map(|(_, _, o)| o.iter().map(String::as_str).collect())
        .collect();
    let threads: Vec<[(&str, &[&str]); 1]> = ops.iter().map(|o| [("t0", o.as_slice())]).collect();
    let ks: Vec<common::K<'_>> = kernels
        .iter()
        .zip(&threads)
        .map(|((n, l, _), t)| (n.as_str(), l.as_str(), t.as_slice()))
        .collect();
    litmus_with_limits(
        "cdp1",
        "x: 0",
        &format!("dev-runtime-sync-depth: {limit}"),
        &ks,
        "exists x == 1",
        "required",
    )
}

#[test]
fn sync_depth_counts_the_host_grid_as_zero_and_fails_beyond_the_limit() {
    let e0 = |l: u32, d: usize| {
        let k = ["k0", "k1", "k2"][d];
        let s = states(&sync_chain(l, d));
        let codes: BTreeSet<u32> = s.iter().map(|s| s[&format!("{k}.t0.e0")]).collect();
        let reads: BTreeSet<u32> = s.iter().map(|s| s[&format!("{k}.t0.r0")]).collect();
        (codes, reads)
    };
    // Within the limit: success, and the child's write is visible.
    assert_eq!(e0(1, 0), (BTreeSet::from([0]), BTreeSet::from([1])));
    assert_eq!(e0(1, 1), (BTreeSet::from([0]), BTreeSet::from([1])));
    // Beyond it: the guide's error, and no wait (the read may be stale).
    assert_eq!(e0(1, 2), (BTreeSet::from([65]), BTreeSet::from([0, 1])));
    assert_eq!(e0(2, 2), (BTreeSet::from([0]), BTreeSet::from([1])));
}

#[test]
fn a_failed_launch_is_not_awaited_by_devicesync_and_defaults_leave_the_pool_alone() {
    // Pool of 1, CDP1: a holds the slot until devicesync has seen it
    // complete; b's launch before the sync may fail, c's after it succeeds.
    let l = litmus_with_limits(
        "cdp1",
        "x: 0",
        "dev-runtime-pending-launch-count: 1",
        &[
            (
                "parent",
                "host",
                &[(
                    "t0",
                    &[
                        "launch a",
                        "launch b",
                        "devicesync",
                        "launch c",
                        "geterror e0",
                    ],
                )],
            ),
            ("a", "device", &[("t0", &["store x 1"])]),
            ("b", "device", &[("t0", &["store x 2"])]),
            ("c", "device", &[("t0", &["load r0 x"])]),
        ],
        "exists parent.t0.e0 == cudaSuccess",
        "allowed",
    );
    let o = check_with(&l, &common::options()).unwrap_or_else(|e| panic!("{e}"));
    // A failed b leaves the error for the later geterror, though c's launch
    // succeeded: a successful call does not clear the last error.
    let got: BTreeSet<(u32, u32)> = o
        .states
        .iter()
        .map(|s| (s["parent.t0.e0"], s["c.t0.r0"]))
        .collect();
    assert!(got.contains(&(EXCEEDED, 1)), "{got:?}");
    assert!(got.contains(&(0, 2)), "{got:?}");
    assert!(got.iter().all(|&(_, r)| r != 0), "c always ran: {got:?}");
    assert_eq!(o.verdict, Verdict::Allowed);
}
