//! The asynchronous proxy: bulk copies, their completion (mbarrier, bulk
//! async-groups), `fence.proxy.async` and the grid boundaries around them.

use super::*;

use common::litmus_with_shared;

fn shared(memory: &str, kernels: &[K<'_>], condition: &str, verdict: &str) -> ModelOutcome {
    run(&litmus_with_shared(
        "pdl", memory, "s: 0", kernels, condition, verdict,
    ))
}

#[test]
fn a_bulk_load_after_gridsync_sees_the_primary() {
    shared(
        "x: 0",
        &[
            ("primary", "host", &[("t0", &["trigger", "store x 1"])]),
            (
                "secondary",
                "host-pdl",
                &[(
                    "t0",
                    &["gridsync", "bulkload s x b", "mbarwait b", "load r0 s"],
                )],
            ),
        ],
        "exists secondary.t0.r0 == 0",
        "forbidden",
    );
}

#[test]
fn a_bulk_load_issued_before_gridsync_may_be_stale() {
    // Its completion is awaited after the wait: the copy is not.
    shared(
        "x: 0",
        &[
            ("primary", "host", &[("t0", &["trigger", "store x 1"])]),
            (
                "secondary",
                "host-pdl",
                &[(
                    "t0",
                    &["bulkload s x b", "gridsync", "mbarwait b", "load r0 s"],
                )],
            ),
        ],
        "exists secondary.t0.r0 == 0",
        "allowed",
    );
}

#[test]
fn shared_memory_read_before_the_mbarrier_may_miss_the_copy() {
    let kernels: &[K<'_>] = &[(
        "k",
        "host",
        &[
            ("t0", &["bulkload s x b", "load r0 s"]),
            ("t1", &["mbarwait b", "load r1 s"]),
        ],
    )];
    let o = shared("x: 5", kernels, "exists k.t0.r0 == 0", "allowed");
    // The thread that waits on the mbarrier always sees the copy.
    assert!(o.states.iter().all(|s| s["k.t1.r1"] == 5), "{:?}", o.states);
}

#[test]
fn a_bulk_store_reads_a_generic_write_only_after_a_proxy_fence() {
    shared(
        "x: 0",
        &[(
            "k",
            "host",
            &[(
                "t0",
                &["store s 1", "bulkstore x s", "bulkcommit", "bulkwait 0"],
            )],
        )],
        "exists x == 0",
        "allowed",
    );
    shared(
        "x: 0",
        &[(
            "k",
            "host",
            &[(
                "t0",
                &[
                    "store s 1",
                    "fence.proxy.async",
                    "bulkstore x s",
                    "bulkcommit",
                    "bulkwait 0",
                ],
            )],
        )],
        "exists x == 0",
        "forbidden",
    );
}

#[test]
fn a_proxy_fence_before_or_after_the_barrier_serves_another_warp() {
    for (writer, issuer, verdict) in [
        (
            &["store s 1", "fence.proxy.async", "syncthreads"][..],
            &["syncthreads", "bulkstore x s"][..],
            "forbidden",
        ),
        (
            &["store s 1", "syncthreads"][..],
            &["syncthreads", "fence.proxy.async", "bulkstore x s"][..],
            "forbidden",
        ),
        (
            &["store s 1", "syncthreads", "fence.proxy.async"][..],
            &["syncthreads", "bulkstore x s"][..],
            "allowed",
        ),
    ] {
        shared(
            "x: 0",
            &[("k", "host", &[("t0", issuer), ("t1", writer)])],
            "exists x == 0",
            verdict,
        );
    }
}

#[test]
fn bulk_wait_read_does_not_wait_for_the_write() {
    // The grid's completion does: the next kernel sees it either way.
    shared(
        "x: 0",
        &[(
            "k",
            "host",
            &[(
                "t0",
                &[
                    "store s 1",
                    "fence.proxy.async",
                    "bulkstore x s",
                    "bulkcommit",
                    "bulkwait read 0",
                    "load r0 x",
                ],
            )],
        )],
        "exists k.t0.r0 == 0",
        "allowed",
    );
    shared(
        "x: 0",
        &[
            (
                "k",
                "host",
                &[("t0", &["store s 1", "fence.proxy.async", "bulkstore x s"])],
            ),
            ("next", "host", &[("t0", &["load r0 x"])]),
        ],
        "exists next.t0.r0 == 0",
        "forbidden",
    );
}

#[test]
fn bulk_wait_leaves_the_most_recent_groups_pending() {
    shared(
        "x: 0, y: 0",
        &[(
            "k",
            "host",
            &[(
                "t0",
                &[
                    "store s 1",
                    "fence.proxy.async",
                    "bulkstore x s",
                    "bulkcommit",
                    "bulkstore y s",
                    "bulkcommit",
                    "bulkwait 1",
                    "load r0 x",
                    "load r1 y",
                ],
            )],
        )],
        "exists k.t0.r0 == 0 \\/ k.t0.r1 == 0",
        "allowed",
    );
}
