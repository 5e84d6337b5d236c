//! Tests the model cannot run (a deadlock, a wait that never returns) are
//! errors, not panics; and what an outcome reports of its exploration.

use gridcheck_spec::Verdict;

use super::*;

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
    super::launch::a_threads_own_write_is_required();
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
