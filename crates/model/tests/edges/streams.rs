//! Stream order: the NULL stream within and between threads, tail and
//! fire-and-forget launches, events between named streams, and the host
//! stream's kernels.

use super::*;

#[test]
fn two_null_stream_launches_of_one_thread_run_in_order() {
    expect(
        "cdp2",
        "x: 0",
        &[
            ("parent", "host", &[("t0", &["launch a", "launch b"])]),
            ("a", "device", &[("t0", &["store x 1"])]),
            ("b", "device", &[("t0", &["load r0 x"])]),
        ],
        "exists b.t0.r0 == 0",
        "forbidden",
    );
}

#[test]
fn null_stream_order_between_threads_follows_launch_order() {
    // Either launch may come first; whichever grid is second sees the first.
    let o = expect(
        "cdp2",
        "x: 0",
        &[
            (
                "parent",
                "host",
                &[("t0", &["launch a"]), ("t1", &["launch b"])],
            ),
            ("a", "device", &[("t0", &["store x 1"])]),
            ("b", "device", &[("t0", &["load r0 x"])]),
        ],
        "exists b.t0.r0 == 0",
        "allowed",
    );
    assert_eq!(o.states.len(), 2);
}

#[test]
fn null_stream_order_is_not_load_buffering() {
    // a before b: a's load cannot see b's later store; b after a: b sees a's.
    expect(
        "cdp2",
        "x: 0, y: 0",
        &[
            ("parent", "host", &[("t0", &["launch a", "launch b"])]),
            ("a", "device", &[("t0", &["load r0 y", "store x 1"])]),
            ("b", "device", &[("t0", &["load r0 x", "store y 1"])]),
        ],
        "exists a.t0.r0 == 1 \\/ b.t0.r0 == 0",
        "forbidden",
    );
}

#[test]
fn fire_and_forget_launches_are_unordered() {
    expect(
        "cdp2",
        "x: 0",
        &[
            (
                "parent",
                "host",
                &[(
                    "t0",
                    &["launch a fire-and-forget", "launch b fire-and-forget"],
                )],
            ),
            ("a", "device", &[("t0", &["store x 1"])]),
            ("b", "device", &[("t0", &["load r0 x"])]),
        ],
        "exists b.t0.r0 == 0",
        "allowed",
    );
}

#[test]
fn a_tail_grid_sees_a_fire_and_forget_grids_writes() {
    // The launching grid's completion waits for fire-and-forget work, and the
    // tail grid waits for that completion.
    expect(
        "cdp2",
        "x: 0",
        &[
            (
                "parent",
                "host",
                &[("t0", &["launch ff fire-and-forget", "launch tail tail"])],
            ),
            ("ff", "device", &[("t0", &["store x 1"])]),
            ("tail", "device", &[("t0", &["load r0 x"])]),
        ],
        "exists tail.t0.r0 == 0",
        "forbidden",
    );
}

#[test]
fn a_tail_grid_sees_writes_after_its_launch_and_of_other_threads() {
    expect(
        "cdp2",
        "x: 0, y: 0",
        &[
            (
                "parent",
                "host",
                &[
                    ("t0", &["launch tail tail", "store x 1"]),
                    ("t1", &["store y 1"]),
                ],
            ),
            ("tail", "device", &[("t0", &["load r0 x", "load r1 y"])]),
        ],
        "exists tail.t0.r0 == 0 \\/ tail.t0.r1 == 0",
        "forbidden",
    );
}

#[test]
fn a_tail_grid_sees_a_grandchilds_writes() {
    expect(
        "cdp2",
        "x: 0",
        &[
            (
                "parent",
                "host",
                &[("t0", &["launch child", "launch tail tail"])],
            ),
            ("child", "device", &[("t0", &["launch grandchild"])]),
            ("grandchild", "device", &[("t0", &["store x 1"])]),
            ("tail", "device", &[("t0", &["load r0 x"])]),
        ],
        "exists tail.t0.r0 == 0",
        "forbidden",
    );
}

#[test]
fn tail_grids_run_in_launch_order() {
    expect(
        "cdp2",
        "x: 0, y: 0",
        &[
            (
                "parent",
                "host",
                &[("t0", &["launch a tail", "launch b tail"])],
            ),
            ("a", "device", &[("t0", &["load r0 y", "store x 1"])]),
            ("b", "device", &[("t0", &["load r0 x", "store y 1"])]),
        ],
        "exists a.t0.r0 == 1 \\/ b.t0.r0 == 0",
        "forbidden",
    );
}

#[test]
fn a_child_running_concurrently_with_a_tail_grid_is_not_possible() {
    // A child's tail grid is part of the child's work: the parent's tail
    // grid starts after it.
    expect(
        "cdp2",
        "x: 0",
        &[
            (
                "parent",
                "host",
                &[("t0", &["launch child", "launch ptail tail"])],
            ),
            ("child", "device", &[("t0", &["launch ctail tail"])]),
            ("ctail", "device", &[("t0", &["store x 1"])]),
            ("ptail", "device", &[("t0", &["load r0 x"])]),
        ],
        "exists ptail.t0.r0 == 0",
        "forbidden",
    );
}

#[test]
fn an_event_orders_two_named_streams() {
    expect(
        "cdp2",
        "x: 0",
        &[
            (
                "parent",
                "host",
                &[(
                    "t0",
                    &[
                        "launch a s1",
                        "record e1 s1",
                        "waitevent s2 e1",
                        "launch b s2",
                    ],
                )],
            ),
            ("a", "device", &[("t0", &["store x 1"])]),
            ("b", "device", &[("t0", &["load r0 x"])]),
        ],
        "exists b.t0.r0 == 0",
        "forbidden",
    );
}

#[test]
fn waiting_on_an_event_before_its_record_orders_nothing() {
    expect(
        "cdp2",
        "x: 0",
        &[
            (
                "parent",
                "host",
                &[(
                    "t0",
                    &[
                        "waitevent s2 e1",
                        "launch a s1",
                        "record e1 s1",
                        "launch b s2",
                    ],
                )],
            ),
            ("a", "device", &[("t0", &["store x 1"])]),
            ("b", "device", &[("t0", &["load r0 x"])]),
        ],
        "exists b.t0.r0 == 0",
        "allowed",
    );
}

#[test]
fn events_on_the_tail_stream_are_not_modeled() {
    let e = error(
        "cdp2",
        "x: 0",
        &[
            (
                "parent",
                "host",
                &[("t0", &["launch t tail", "record e1 tail"])],
            ),
            ("t", "device", &[("t0", &["store x 1"])]),
        ],
    );
    assert!(e.message.contains("tail stream"), "{e}");
}

#[test]
fn a_host_kernel_sees_its_predecessors_writes() {
    expect(
        "cdp2",
        "x: 0",
        &[
            ("first", "host", &[("t0", &["store x 1"])]),
            ("second", "host", &[("t0", &["load r0 x"])]),
        ],
        "exists second.t0.r0 == 0",
        "forbidden",
    );
}

#[test]
fn a_host_kernel_sees_its_predecessors_descendants_writes() {
    expect(
        "cdp2",
        "x: 0, y: 0",
        &[
            (
                "first",
                "host",
                &[("t0", &["launch child", "launch tail tail"])],
            ),
            ("child", "device", &[("t0", &["store x 1"])]),
            ("tail", "device", &[("t0", &["store y 1"])]),
            ("second", "host", &[("t0", &["load r0 x", "load r1 y"])]),
        ],
        "exists second.t0.r0 == 0 \\/ second.t0.r1 == 0",
        "forbidden",
    );
}
