//! Programmatic Dependent Launch: a secondary's start, `trigger` and
//! `gridsync`, and the host stream around them.

use super::*;

#[test]
fn a_pdl_secondary_without_gridsync_may_read_stale() {
    // Even a write before the primary's trigger.
    expect(
        "pdl",
        "x: 0",
        &[
            ("primary", "host", &[("t0", &["store x 1", "trigger"])]),
            ("secondary", "host-pdl", &[("t0", &["load r0 x"])]),
        ],
        "exists secondary.t0.r0 == 0",
        "allowed",
    );
}

#[test]
fn a_pdl_secondary_without_trigger_still_may_read_stale() {
    // The primary's exit is an implicit trigger, and still no edge.
    expect(
        "pdl",
        "x: 0",
        &[
            ("primary", "host", &[("t0", &["store x 1"])]),
            ("secondary", "host-pdl", &[("t0", &["load r0 x"])]),
        ],
        "exists secondary.t0.r0 == 0",
        "allowed",
    );
}

#[test]
fn gridsync_waits_for_every_primary_thread_and_its_children() {
    expect(
        "pdl",
        "x: 0, y: 0",
        &[
            (
                "primary",
                "host",
                &[
                    ("t0", &["trigger", "launch child"]),
                    ("t1", &["trigger", "store y 1"]),
                ],
            ),
            ("child", "device", &[("t0", &["store x 1"])]),
            (
                "secondary",
                "host-pdl",
                &[("t0", &["gridsync", "load r0 x", "load r1 y"])],
            ),
        ],
        "exists secondary.t0.r0 == 0 \\/ secondary.t0.r1 == 0",
        "forbidden",
    );
}

#[test]
fn a_pdl_secondary_may_run_before_the_primary_finishes() {
    // The secondary's write may be seen by the primary after its trigger.
    expect(
        "pdl",
        "x: 0",
        &[
            ("primary", "host", &[("t0", &["trigger", "load r0 x"])]),
            ("secondary", "host-pdl", &[("t0", &["store x 1"])]),
        ],
        "exists primary.t0.r0 == 1",
        "allowed",
    );
}

#[test]
fn without_pdl_the_next_kernel_waits_for_completion() {
    // Same shape as above, without the attribute: never overlapped.
    expect(
        "pdl",
        "x: 0",
        &[
            ("primary", "host", &[("t0", &["trigger", "load r0 x"])]),
            ("secondary", "host", &[("t0", &["store x 1"])]),
        ],
        "exists primary.t0.r0 == 1",
        "forbidden",
    );
}

#[test]
fn a_pdl_secondary_does_not_start_before_the_trigger() {
    // No load buffering: a primary load before its trigger cannot see a
    // secondary write (loom explores no load buffering either; see the
    // crate docs).
    expect(
        "pdl",
        "x: 0",
        &[
            ("primary", "host", &[("t0", &["load r0 x", "trigger"])]),
            ("secondary", "host-pdl", &[("t0", &["store x 1"])]),
        ],
        "exists primary.t0.r0 == 1",
        "forbidden",
    );
}

#[test]
fn gridsync_and_trigger_without_pdl_are_no_ops() {
    expect(
        "pdl",
        "x: 0",
        &[
            ("first", "host", &[("t0", &["trigger", "store x 1"])]),
            ("second", "host", &[("t0", &["gridsync", "load r0 x"])]),
        ],
        "exists second.t0.r0 == 0",
        "forbidden",
    );
}

#[test]
fn the_host_stream_completes_in_order_after_a_pdl_secondary() {
    // `mid` overlaps `first` and never synchronizes; `last` (no PDL) still
    // sees `first`'s write.
    expect(
        "pdl",
        "x: 0",
        &[
            ("first", "host", &[("t0", &["store x 1"])]),
            ("mid", "host-pdl", &[("t0", &[])]),
            ("last", "host", &[("t0", &["load r0 x"])]),
        ],
        "exists last.t0.r0 == 0",
        "forbidden",
    );
}
