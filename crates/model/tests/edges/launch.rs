//! Visibility at a launch (the parent's writes before it, through a
//! grandchild, never the child's back) and `__syncthreads()` in a block.

use super::*;

#[test]
fn a_write_after_the_launch_may_be_missed_by_the_child() {
    let o = expect(
        "cdp2",
        "x: 0",
        &[
            ("parent", "host", &[("t0", &["launch child", "store x 1"])]),
            ("child", "device", &[("t0", &["load r0 x"])]),
        ],
        "exists child.t0.r0 == 0",
        "allowed",
    );
    // And it may be seen: the child may run after the write.
    assert_eq!(o.states.len(), 2);
}

#[test]
fn a_child_launched_before_the_write_is_not_required_to_miss_it() {
    expect(
        "cdp2",
        "x: 0",
        &[
            ("parent", "host", &[("t0", &["launch child", "store x 1"])]),
            ("child", "device", &[("t0", &["load r0 x"])]),
        ],
        "exists child.t0.r0 == 1",
        "allowed",
    );
}

#[test]
fn visibility_at_launch_is_transitive_through_a_grandchild() {
    expect(
        "cdp2",
        "x: 0",
        &[
            ("parent", "host", &[("t0", &["store x 1", "launch child"])]),
            ("child", "device", &[("t0", &["launch grandchild"])]),
            ("grandchild", "device", &[("t0", &["load r0 x"])]),
        ],
        "exists grandchild.t0.r0 == 0",
        "forbidden",
    );
}

#[test]
fn the_parent_never_sees_its_childs_writes_for_sure() {
    // 4.18.4.2.3: no way to guarantee that changes in child grids are
    // visible to threads within the parent grid.
    let o = expect(
        "cdp2",
        "x: 0",
        &[
            ("parent", "host", &[("t0", &["launch child", "load r0 x"])]),
            ("child", "device", &[("t0", &["store x 1"])]),
        ],
        "exists parent.t0.r0 == 0",
        "allowed",
    );
    assert_eq!(o.states.len(), 2, "the child may also run first");
}

#[test]
fn syncthreads_orders_writes_between_threads_of_a_block() {
    expect(
        "cdp2",
        "x: 0",
        &[(
            "k",
            "host",
            &[
                ("t0", &["store x 1", "syncthreads"]),
                ("t1", &["syncthreads", "load r0 x"]),
            ],
        )],
        "exists k.t1.r0 == 0",
        "forbidden",
    );
}

#[test]
fn without_syncthreads_another_threads_write_may_be_stale() {
    expect(
        "cdp2",
        "x: 0",
        &[(
            "k",
            "host",
            &[("t0", &["store x 1"]), ("t1", &["load r0 x"])],
        )],
        "exists k.t1.r0 == 0",
        "allowed",
    );
}

#[test]
pub(super) fn a_threads_own_write_is_required() {
    expect(
        "cdp2",
        "x: 0",
        &[("k", "host", &[("t0", &["store x 1", "load r0 x"])])],
        "exists k.t0.r0 == 1",
        "required",
    );
}
