//! Each synchronization edge of the model matters: hand-built litmus tests
//! that pass with the edge and would fail without it, and the ways a test can
//! be unrunnable.

mod common;

use gridcheck_model::{ModelError, ModelOutcome, check, check_with};
use gridcheck_spec::{Litmus, Verdict, render_state};

use common::{K, litmus, options};

fn run(l: &Litmus) -> ModelOutcome {
    let o = check_with(l, &options()).unwrap_or_else(|e| panic!("model error: {e}"));
    let order = l.observables();
    let states: Vec<String> = o.states.iter().map(|s| render_state(&order, s)).collect();
    eprintln!(
        "{} threads: {} executions (bound {:?}, {} abandoned) in {:?}, {} states",
        l.thread_count(),
        o.executions,
        o.preemption_bound,
        o.abandoned_executions,
        o.elapsed,
        states.len()
    );
    assert_eq!(
        o.verdict, l.expect,
        "condition {} over states {states:#?}",
        l.condition
    );
    o
}

fn expect(
    profile: &str,
    memory: &str,
    kernels: &[K<'_>],
    condition: &str,
    verdict: &str,
) -> ModelOutcome {
    run(&litmus(profile, memory, kernels, condition, verdict))
}

fn error(profile: &str, memory: &str, kernels: &[K<'_>]) -> ModelError {
    let l = litmus(profile, memory, kernels, "exists x == 0", "allowed");
    match check(&l) {
        Err(e) => e,
        Ok(o) => panic!("expected a model error, got {:?}", o.states),
    }
}

// ---- launch ------------------------------------------------------------------

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

// ---- syncthreads -------------------------------------------------------------

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
fn a_threads_own_write_is_required() {
    expect(
        "cdp2",
        "x: 0",
        &[("k", "host", &[("t0", &["store x 1", "load r0 x"])])],
        "exists k.t0.r0 == 1",
        "required",
    );
}

// ---- streams: NULL, tail, fire-and-forget -------------------------------------

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

// ---- host stream ---------------------------------------------------------------

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

// ---- PDL -------------------------------------------------------------------------

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

// ---- CDP1 devicesync --------------------------------------------------------------

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

// ---- errors -------------------------------------------------------------------------

#[test]
fn mismatched_syncthreads_is_a_deadlock_error() {
    let e = error(
        "cdp2",
        "x: 0",
        &[(
            "k",
            "host",
            &[
                ("t0", &["syncthreads", "store x 1"]),
                ("t1", &["store x 2"]),
            ],
        )],
    );
    assert!(e.message.contains("deadlock"), "{e}");
    assert!(e.message.contains("`k`"), "{e}");
}

#[test]
fn a_wait_that_can_never_return_is_an_error_not_a_panic() {
    // devicesync waits for a tail grid, which waits for the block to finish.
    let e = error(
        "cdp1",
        "x: 0",
        &[
            (
                "parent",
                "host",
                &[("t0", &["launch tail tail", "devicesync"])],
            ),
            ("tail", "device", &[("t0", &["store x 1"])]),
        ],
    );
    assert!(e.message.contains("deadlock"), "{e}");
    // The model still works afterwards on this thread.
    a_threads_own_write_is_required();
}

#[test]
fn outcomes_report_their_exploration() {
    let o = expect(
        "cdp2",
        "x: 0",
        &[(
            "k",
            "host",
            &[("t0", &["store x 1"]), ("t1", &["load r0 x"])],
        )],
        "exists k.t1.r0 == 1",
        "allowed",
    );
    assert!(o.executions > 1);
    assert_eq!(o.preemption_bound, None);
    assert_eq!(o.abandoned_executions, 0);
    assert_eq!(o.verdict, Verdict::Allowed);
    for s in &o.states {
        let keys: Vec<&String> = s.keys().collect();
        assert_eq!(keys, ["k.t1.r0", "x"]);
    }
}
