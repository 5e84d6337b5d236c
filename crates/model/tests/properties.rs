//! Properties of the model over random small programs: exploration is
//! deterministic, and a synchronization edge never adds a reachable state.

mod common;

use std::collections::BTreeSet;

use gridcheck_model::{Options, check_with};
use gridcheck_spec::{Litmus, State};
use proptest::prelude::*;

/// One memory operation: a store of `1 + value` or a load, to `x` or `y`.
#[derive(Debug, Clone)]
struct MemOp {
    store: bool,
    loc: bool,
    value: u32,
}

/// A random program: one host kernel of two threads, each one to three
/// memory operations, and where each thread gets its `syncthreads` in the
/// variant with the barrier.
///
/// Two threads only: a third loom thread multiplies the executions by ten
/// to three hundred (three threads of one operation each already take about
/// 6 000), too many for a property test that runs in debug mode.
#[derive(Debug, Clone)]
struct Prog {
    threads: Vec<Vec<MemOp>>,
    barrier_at: Vec<usize>,
}

fn mem_op() -> impl Strategy<Value = MemOp> {
    (any::<bool>(), any::<bool>(), 0..2u32).prop_map(|(store, loc, value)| MemOp {
        store,
        loc,
        value,
    })
}

fn prog() -> impl Strategy<Value = Prog> {
    (
        prop::collection::vec(prop::collection::vec(mem_op(), 1..=3), 2),
        prop::collection::vec(0..=3usize, 2),
    )
        .prop_map(|(threads, barrier_at)| {
            let barrier_at = threads
                .iter()
                .zip(barrier_at)
                .map(|(t, b)| b.min(t.len()))
                .collect();
            Prog {
                threads,
                barrier_at,
            }
        })
}

fn render(ops: &[MemOp], thread: usize) -> Vec<String> {
    ops.iter()
        .enumerate()
        .map(|(i, o)| {
            let loc = if o.loc { "y" } else { "x" };
            if o.store {
                format!("store {loc} {}", 1 + o.value + 2 * thread as u32)
            } else {
                format!("load r{i} {loc}")
            }
        })
        .collect()
}

impl Prog {
    fn litmus(&self, barrier: bool) -> Litmus {
        let threads: Vec<(String, Vec<String>)> = self
            .threads
            .iter()
            .enumerate()
            .map(|(t, ops)| {
                let mut text = render(ops, t);
                if barrier {
                    text.insert(self.barrier_at[t], "syncthreads".to_string());
                }
                (format!("t{t}"), text)
            })
            .collect();
        let ops: Vec<Vec<&str>> = threads
            .iter()
            .map(|(_, ops)| ops.iter().map(String::as_str).collect())
            .collect();
        let block: Vec<(&str, &[&str])> = threads
            .iter()
            .zip(&ops)
            .map(|((n, _), o)| (n.as_str(), o.as_slice()))
            .collect();
        common::litmus(
            "cdp2",
            "x: 0, y: 0",
            &[("k", "host", block.as_slice())],
            "exists x == 0",
            "allowed",
        )
    }
}

fn explore(l: &Litmus) -> (gridcheck_spec::Verdict, BTreeSet<State>, u64) {
    let o = check_with(l, &Options::exhaustive()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(o.preemption_bound, None);
    (o.verdict, o.states, o.executions)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 32,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn exploration_is_deterministic(p in prog()) {
        let l = p.litmus(false);
        prop_assert_eq!(explore(&l), explore(&l));
    }

    #[test]
    fn a_barrier_never_adds_a_state(p in prog()) {
        let (_, without, _) = explore(&p.litmus(false));
        let (_, with, _) = explore(&p.litmus(true));
        prop_assert!(!with.is_empty());
        let extra: Vec<&State> = with.difference(&without).collect();
        prop_assert!(extra.is_empty(), "states only with the barrier: {:?}", extra);
    }
}

/// A random program with a child grid: the host kernel's thread 0 runs its
/// operations with `launch c` at a random point, thread 1 its own; the child
/// runs one or two memory operations. The variant adds one synchronization
/// edge: a CDP1 `devicesync` in thread 0 after the launch (the child's
/// completion before thread 0's later operations). (A barrier in such a
/// program can add a state today: see `tests/limits.rs`,
/// `a_barrier_after_a_launch_can_add_an_incoherent_state`.)
#[derive(Debug, Clone)]
struct ChildProg {
    parent: Vec<MemOp>,
    other: Vec<MemOp>,
    child: Vec<MemOp>,
    launch_at: usize,
    sync_after: usize,
}

fn child_prog() -> impl Strategy<Value = ChildProg> {
    (
        prop::collection::vec(mem_op(), 1..=2),
        prop::collection::vec(mem_op(), 1..=2),
        prop::collection::vec(mem_op(), 1..=2),
        0..=2usize,
        0..=2usize,
    )
        .prop_map(|(parent, other, child, launch_at, sync_after)| ChildProg {
            launch_at: launch_at.min(parent.len()),
            sync_after,
            parent,
            other,
            child,
        })
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Edge {
    None,
    DeviceSync,
}

impl ChildProg {
    fn litmus(&self, edge: Edge) -> Litmus {
        let mut t0 = render(&self.parent, 0);
        t0.insert(self.launch_at, "launch c".to_string());
        let t1 = render(&self.other, 1);
        match edge {
            Edge::None => {}
            Edge::DeviceSync => {
                let at = (self.launch_at + 1 + self.sync_after).min(t0.len());
                t0.insert(at, "devicesync".to_string());
            }
        }
        let c = render(&self.child, 2);
        let t0: Vec<&str> = t0.iter().map(String::as_str).collect();
        let t1: Vec<&str> = t1.iter().map(String::as_str).collect();
        let c: Vec<&str> = c.iter().map(String::as_str).collect();
        common::litmus(
            "cdp1",
            "x: 0, y: 0",
            &[
                ("k", "host", &[("t0", t0.as_slice()), ("t1", t1.as_slice())]),
                ("c", "device", &[("t0", c.as_slice())]),
            ],
            "exists x == 0",
            "allowed",
        )
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 6,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// It used to fail, e.g. with the state `k.t0.r0 = 3, k.t0.r1 = 3,
    /// x = 3, y = 0` reachable only with the `devicesync`: loom reported an
    /// incoherent final value without the edge (loom issue #282, see
    /// `memory.rs`); final values now come from the order the stores ran.
    #[test]
    fn devicesync_never_adds_a_state(p in child_prog()) {
        let (_, without, _) = explore(&p.litmus(Edge::None));
        let (_, with, _) = explore(&p.litmus(Edge::DeviceSync));
        prop_assert!(!with.is_empty());
        let extra: Vec<&State> = with.difference(&without).collect();
        prop_assert!(extra.is_empty(), "states only with devicesync: {:?}", extra);
    }
}
