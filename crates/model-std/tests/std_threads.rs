//! The model on real threads never leaves the loom model's reachable set.
//!
//! For random small programs and for every litmus test of the spec: the
//! states that many randomized executions on std threads
//! ([`gridcheck_model_std::sample`]) reach are all states the loom model
//! reaches (when loom explored the test exhaustively; for a test of more
//! threads than loom explores, the axiomatic model's states), and none of them
//! contradicts the spec's expected verdict (no forbidden state; only states
//! satisfying a required condition). A state outside the set would mean the
//! model's verdicts rest on loom's scheduler rather than on the edges the
//! model builds.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use gridcheck_model::{Options, check_with};
use gridcheck_spec::{Litmus, State, TestBody, Verdict, load_dir, load_sources, render_state};
use proptest::prelude::*;

/// Randomized executions per test.
const EXECUTIONS: u64 = 500;
/// A sampling run that takes longer has hung (a lost wake-up).
const HANG: Duration = Duration::from_secs(120);

/// Samples `l` on std threads in a thread of its own, failing on a hang.
fn sample(name: &str, l: &Litmus, seed: u64) -> BTreeMap<State, u64> {
    let (tx, rx) = mpsc::channel();
    let l2 = l.clone();
    std::thread::spawn(move || {
        let _ = tx.send(gridcheck_model_std::sample(&l2, EXECUTIONS, seed));
    });
    match rx.recv_timeout(HANG) {
        Ok(r) => r.unwrap_or_else(|e| panic!("{name}: {e}")),
        Err(_) => panic!("{name}: an execution on std threads did not finish in {HANG:?}"),
    }
}

/// What the loom model reaches: the states, and whether the exploration was
/// exhaustive (a bounded one may miss states, so only the verdict is
/// compared then). A test over loom's thread limit is compared with the
/// axiomatic model's states instead (the guide's, which contain loom's on
/// every test both run).
fn loom_states(name: &str, l: &Litmus) -> (BTreeSet<State>, bool) {
    if gridcheck_model::loom_agents(l) > gridcheck_model::MAX_GPU_THREADS {
        let a = gridcheck_axiom::check(l).unwrap_or_else(|e| panic!("{name}: axiomatic: {e}"));
        return (a.states, true);
    }
    let o = check_with(l, &Options::default()).unwrap_or_else(|e| panic!("{name}: loom: {e}"));
    (o.states, o.preemption_bound.is_none())
}

/// Every problem with the sampled states of one test.
fn problems(name: &str, l: &Litmus, seed: u64) -> Vec<String> {
    let sampled = sample(name, l, seed);
    let (reachable, exhaustive) = loom_states(name, l);
    let order = l.observables();
    let mut out = Vec::new();
    for (s, n) in &sampled {
        if exhaustive && !reachable.contains(s) {
            out.push(format!(
                "{name}: [{}] seen {n} times on std threads, unreachable under loom (or, over \
                 its thread limit, the axiomatic model)",
                render_state(&order, s)
            ));
        }
        let holds = l
            .condition
            .holds(s)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        match l.expect {
            Verdict::Forbidden if holds => out.push(format!(
                "{name}: forbidden state [{}] seen {n} times on std threads",
                render_state(&order, s)
            )),
            Verdict::Required if !holds => out.push(format!(
                "{name}: [{}] seen {n} times on std threads misses the required condition",
                render_state(&order, s)
            )),
            _ => {}
        }
    }
    let total: u64 = sampled.values().sum();
    assert_eq!(total, EXECUTIONS, "{name}: every execution gives a state");
    out
}

#[test]
fn spec_litmus_tests_on_std_threads_stay_in_the_loom_set() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spec");
    let spec = load_dir(&dir, None).unwrap_or_else(|e| panic!("{e}"));
    let mut failures = Vec::new();
    let mut n = 0;
    for (i, t) in spec.tests.iter().enumerate() {
        let TestBody::Litmus(l) = &t.body else {
            continue;
        };
        n += 1;
        failures.extend(problems(&t.name, l, 0x5eed ^ i as u64));
    }
    assert!(n >= 60, "only {n} litmus tests");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A hand-built test: memory `x`, `y`, a host kernel `k` of the given
/// threads and a device kernel of one thread for each of `children` (name,
/// operations), launched by `launch <name>` operations of the threads.
fn program(threads: &[Vec<String>], children: &[(&str, Vec<String>)], pool: Option<u32>) -> Litmus {
    let mut ks = "      - kernel: k\n        launch: host\n        threads:\n".to_string();
    for (i, ops) in threads.iter().enumerate() {
        ks += &format!("          t{i}: [{}]\n", ops.join(", "));
    }
    for (name, ops) in children {
        ks += &format!(
            "      - kernel: {name}\n        launch: device\n        threads:\n          t0: [{}]\n",
            ops.join(", ")
        );
    }
    let limits = pool
        .map(|p| format!("    limits: {{ dev-runtime-pending-launch-count: {p} }}\n"))
        .unwrap_or_default();
    let yaml = gridcheck_fixture::OneRule::new()
        .id("cdp2.model.random")
        .tests(&format!(
            "  - name: random\n    \
         kind: litmus\n    memory: {{ x: 0, y: 0 }}\n{limits}    kernels:\n{ks}    \
         condition: 'exists x == 0'\n    expect: allowed\n"
        ))
        .yaml();
    let spec = load_sources(&[(PathBuf::from("spec/random.yaml"), yaml.clone())], None)
        .unwrap_or_else(|e| panic!("{e}\n{yaml}"));
    match &spec.tests[0].body {
        TestBody::Litmus(l) => l.clone(),
        _ => unreachable!(),
    }
}

/// One operation of a random thread.
fn op(thread: usize) -> impl Strategy<Value = String> {
    let v = 1 + 2 * thread as u32;
    prop_oneof![
        (any::<bool>(), 0..2u32).prop_map(move |(y, d)| format!(
            "store {} {}",
            if y { "y" } else { "x" },
            v + d
        )),
        any::<bool>().prop_map(|y| format!("load R {}", if y { "y" } else { "x" })),
    ]
}

/// Numbers the registers of a thread's loads `r0`, `r1`, ...
fn number(ops: Vec<String>) -> Vec<String> {
    let mut n = 0;
    ops.into_iter()
        .map(|o| match o.strip_prefix("load R ") {
            Some(loc) => {
                n += 1;
                format!("load r{} {loc}", n - 1)
            }
            None => o,
        })
        .collect()
}

/// Two threads of one or two memory operations, a barrier in both or in
/// neither, and optionally a child that thread 0 launches (at a random
/// point) and that does one or two memory operations. In the pool variant,
/// thread 0 alone runs, with a launch pool of one slot: it launches the
/// child and then a second one-store child, whose launch may fail, and reads
/// its last error into `e0`.
#[derive(Debug, Clone)]
struct Prog {
    threads: Vec<Vec<String>>,
    child: Option<(Vec<String>, usize)>,
    barrier: Option<(usize, usize)>,
    pool: bool,
}

fn prog() -> impl Strategy<Value = Prog> {
    (
        prop::collection::vec(op(0), 1..=2),
        prop::collection::vec(op(1), 1..=2),
        prop::option::of((prop::collection::vec(op(2), 1..=2), 0..=2usize)),
        prop::option::of((0..=2usize, 0..=2usize)),
        any::<bool>(),
    )
        .prop_map(|(a, b, child, barrier, pool)| Prog {
            threads: vec![a, b],
            child,
            barrier,
            pool,
        })
}

impl Prog {
    fn litmus(&self) -> Litmus {
        let mut threads: Vec<Vec<String>> =
            self.threads.iter().map(|t| number(t.clone())).collect();
        let mut children = Vec::new();
        if let Some((ops, at)) = &self.child {
            let at = (*at).min(threads[0].len());
            threads[0].insert(at, "launch c".to_string());
            children.push(("c", number(ops.clone())));
        }
        if self.pool && !children.is_empty() {
            threads.truncate(1);
            let at = threads[0].iter().position(|o| o == "launch c").unwrap_or(0);
            threads[0].insert(at + 1, "launch d".to_string());
            threads[0].push("geterror e0".to_string());
            children.push(("d", vec!["store y 9".to_string()]));
            return program(&threads, &children, Some(1));
        }
        if let Some((a, b)) = self.barrier {
            let (a, b) = (a.min(threads[0].len()), b.min(threads[1].len()));
            threads[0].insert(a, "syncthreads".to_string());
            threads[1].insert(b, "syncthreads".to_string());
        }
        program(&threads, &children, None)
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 48,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Programs whose exhaustive exploration would exceed the model's default
    /// budget of 100 000 executions are skipped (none in practice).
    #[test]
    fn random_programs_on_std_threads_stay_in_the_loom_set(p in prog(), seed in any::<u64>()) {
        let l = p.litmus();
        let (reachable, exhaustive) = loom_states("random", &l);
        prop_assume!(exhaustive);
        let sampled = sample("random", &l, seed);
        let extra: Vec<&State> = sampled.keys().filter(|s| !reachable.contains(*s)).collect();
        prop_assert!(extra.is_empty(), "states on std threads only: {:?}", extra);
    }
}
