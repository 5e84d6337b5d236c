//! CDP1's device-side `cudaDeviceSynchronize()`: what it waits for and
//! what it makes visible.

use super::*;

#[test]
fn devicesync_makes_the_childs_writes_visible() {
    expect(
        "cdp1",
        "x: 0",
        &[
            (
                "parent",
                "host",
                &[("t0", &["launch child", "devicesync", "load r0 x"])],
            ),
            ("child", "device", &[("t0", &["store x 1"])]),
        ],
        "exists parent.t0.r0 == 0",
        "forbidden",
    );
}

#[test]
fn devicesync_waits_for_another_threads_launch_after_a_barrier() {
    expect(
        "cdp1",
        "x: 0",
        &[
            (
                "parent",
                "host",
                &[
                    ("t0", &["launch child", "syncthreads"]),
                    ("t1", &["syncthreads", "devicesync", "load r0 x"]),
                ],
            ),
            ("child", "device", &[("t0", &["store x 1"])]),
        ],
        "exists parent.t1.r0 == 0",
        "forbidden",
    );
}

#[test]
fn devicesync_may_miss_another_threads_unordered_launch() {
    expect(
        "cdp1",
        "x: 0",
        &[
            (
                "parent",
                "host",
                &[
                    ("t0", &["launch child"]),
                    ("t1", &["devicesync", "load r0 x"]),
                ],
            ),
            ("child", "device", &[("t0", &["store x 1"])]),
        ],
        "exists parent.t1.r0 == 0",
        "allowed",
    );
}
