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
