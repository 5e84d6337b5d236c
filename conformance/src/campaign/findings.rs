//! A campaign's programs classified and grouped: what a GPU run of a
//! program shows against the oracle's final states ([`classify`]), the
//! shape of a program (its skeleton without values, locations or names:
//! [`shape`]) by which findings are deduplicated, and the device-runtime
//! hangs known beforehand ([`known_hang`]).

use std::collections::{BTreeMap, BTreeSet};

use gridcheck_spec::{KernelLaunch, Litmus, Op, State, StreamRef, Verdict};
use serde::{Deserialize, Serialize};

/// What became of one program on the GPU (a worker's report, or what the
/// campaign saw of the worker).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Outcome {
    Ran {
        histogram: Vec<(State, u64)>,
        instances: u64,
        launch_failures: u64,
        first_launch_error: Option<String>,
        elapsed_s: f64,
    },
    /// A launch stopped making progress (the watcher's words), or the
    /// worker was killed with the program in flight.
    Hang { message: String },
    /// A CUDA error, or the worker died with the program in flight.
    Error { message: String },
    /// Not run: its batch did not compile or load, the budget was spent,
    /// or a known hang's cap was reached.
    NotRun { reason: String },
}

/// A program's class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// Every observed state is one the oracle allows, and the condition's
    /// verdict holds.
    Pass,
    /// A state the expectation rules out was observed (a forbidden
    /// condition seen, or a required one missed).
    Violation,
    /// A state outside the oracle's set was observed.
    Unmodeled,
    Hang,
    /// The run failed with a CUDA error, or instances' device launches
    /// failed.
    LaunchError,
    NotRun,
}

impl Class {
    pub fn is_finding(self) -> bool {
        !matches!(self, Class::Pass | Class::NotRun)
    }
}

/// The class of a program's outcome, and a line saying why.
pub fn classify(l: &Litmus, states: &[State], o: &Outcome) -> (Class, String) {
    match o {
        Outcome::Hang { message } => (Class::Hang, message.clone()),
        Outcome::Error { message } => (Class::LaunchError, message.clone()),
        Outcome::NotRun { reason } => (Class::NotRun, reason.clone()),
        Outcome::Ran {
            histogram,
            instances,
            launch_failures,
            first_launch_error,
            ..
        } => {
            let allowed: BTreeSet<&State> = states.iter().collect();
            for (s, n) in histogram {
                let holds = l.condition.holds(s).unwrap_or(false);
                let bad = match l.expect {
                    Verdict::Forbidden => holds,
                    Verdict::Required => !holds,
                    Verdict::Allowed => false,
                };
                if bad {
                    return (
                        Class::Violation,
                        format!(
                            "{} ({}) seen {n} times, expected {}",
                            state_text(s),
                            l.condition,
                            l.expect
                        ),
                    );
                }
            }
            if let Some((s, n)) = histogram.iter().find(|(s, _)| !allowed.contains(s)) {
                return (
                    Class::Unmodeled,
                    format!(
                        "{} seen {n} times, outside the oracle's {} states",
                        state_text(s),
                        states.len()
                    ),
                );
            }
            if *launch_failures > 0 || *instances == 0 {
                return (
                    Class::LaunchError,
                    format!(
                        "{launch_failures} of {} instances failed: {}",
                        instances + launch_failures,
                        first_launch_error.as_deref().unwrap_or("no instance ran")
                    ),
                );
            }
            (
                Class::Pass,
                format!("{} states in {instances} instances", histogram.len()),
            )
        }
    }
}

fn state_text(s: &State) -> String {
    s.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn stream_kind(s: &StreamRef) -> &'static str {
    match s {
        StreamRef::Null => "null",
        StreamRef::Tail => "tail",
        StreamRef::FireAndForget => "faf",
        StreamRef::Named(_) => "named",
    }
}

/// One operation without its values, locations, registers or names.
fn op_kind(o: &Op) -> String {
    match o {
        Op::Store { .. } => "st".into(),
        Op::Load { .. } => "ld".into(),
        Op::SyncThreads => "bar".into(),
        Op::Launch { stream, .. } => format!("launch-{}", stream_kind(stream)),
        Op::Trigger => "trigger".into(),
        Op::GridDependencySync => "gridsync".into(),
        Op::DeviceSynchronize { .. } => "devsync".into(),
        Op::GetLastError { .. } => "geterr".into(),
        Op::PeekAtLastError { .. } => "peekerr".into(),
        Op::EventRecord { stream, .. } => format!("record-{}", stream_kind(stream)),
        Op::StreamWaitEvent { stream, .. } => format!("wait-{}", stream_kind(stream)),
        Op::BulkLoad { .. } => "bulkld".into(),
        Op::MbarWait { .. } => "mbarwait".into(),
        Op::BulkStore { .. } => "bulkst".into(),
        Op::BulkCommit => "bulkcommit".into(),
        Op::BulkWait { read: false, .. } => "bulkwait".into(),
        Op::BulkWait { read: true, .. } => "bulkwait-read".into(),
        Op::FenceProxyAsync => "proxyfence".into(),
    }
}

/// A program's skeleton: per kernel its launch kind and per thread its
/// operations' kinds, e.g. `host[st launch-tail|ld] device[ld]`.
pub fn shape(l: &Litmus) -> String {
    l.kernels
        .iter()
        .map(|k| {
            let launch = match k.launch {
                KernelLaunch::Host { pdl: false } => "host",
                KernelLaunch::Host { pdl: true } => "host-pdl",
                KernelLaunch::Device => "device",
            };
            let threads: Vec<String> = k
                .threads
                .iter()
                .map(|t| t.ops.iter().map(op_kind).collect::<Vec<_>>().join(" "))
                .collect();
            format!("{launch}[{}]", threads.join("|"))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The device-runtime hangs known before the campaign (GPU.md): two
/// `cudaEventRecord` in one thread; a trigger, then a tail launch, in a
/// host-launched grid. The pattern a program matches, if any.
pub fn known_hang(l: &Litmus) -> Option<&'static str> {
    for k in &l.kernels {
        for t in &k.threads {
            let records = t
                .ops
                .iter()
                .filter(|o| matches!(o, Op::EventRecord { .. }))
                .count();
            if records >= 2 {
                return Some("two event records in one thread");
            }
            let host = matches!(k.launch, KernelLaunch::Host { .. });
            let trigger = t.ops.iter().position(|o| matches!(o, Op::Trigger));
            let tail_after = trigger.is_some_and(|i| {
                t.ops[i..].iter().any(|o| {
                    matches!(
                        o,
                        Op::Launch {
                            stream: StreamRef::Tail,
                            ..
                        }
                    )
                })
            });
            if host && tail_after {
                return Some("trigger then tail launch in a host-launched grid");
            }
        }
    }
    None
}

/// One program's record in `campaign.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgramRecord {
    pub batch: String,
    pub index: usize,
    pub name: String,
    pub class: Class,
    pub detail: String,
    pub shape: String,
    pub known_hang: Option<String>,
    /// Which oracle(s) gave the allowed states.
    pub oracle: String,
    pub outcome: Outcome,
}

/// Findings grouped by (class, shape): each group's records, in order.
pub fn distinct(records: &[ProgramRecord]) -> BTreeMap<(Class, String), Vec<&ProgramRecord>> {
    let mut m: BTreeMap<(Class, String), Vec<&ProgramRecord>> = BTreeMap::new();
    for r in records.iter().filter(|r| r.class.is_finding()) {
        m.entry((r.class, r.shape.clone())).or_default().push(r);
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn litmus(threads: &str, cond: &str, expect: &str) -> Litmus {
        let yaml = format!(
            "rules:\n  - id: cdp2.t.r\n    source: {{ seed: s.txt, section: \"1\" }}\n    quote: q\n    profile: cdp2\n    tests: [t]\ntests:\n  - name: t\n    kind: litmus\n    memory: {{ x: 0 }}\n    kernels:\n      - kernel: k0\n        launch: host\n        threads:\n{threads}      - kernel: k1\n        launch: device\n        threads:\n          t0: [load r0 x]\n    condition: {cond}\n    expect: {expect}\n"
        );
        gridcheck_spec::render::load_litmus(&yaml).unwrap_or_else(|e| panic!("{e}\n{yaml}"))
    }

    fn st(x: u32, r: u32) -> State {
        State::from([("x".to_string(), x), ("k1.t0.r0".to_string(), r)])
    }

    fn ran(h: Vec<(State, u64)>, failures: u64) -> Outcome {
        let instances = h.iter().map(|(_, n)| n).sum();
        Outcome::Ran {
            histogram: h,
            instances,
            launch_failures: failures,
            first_launch_error: None,
            elapsed_s: 0.0,
        }
    }

    #[test]
    fn outcomes_are_classified() {
        let l = litmus(
            "          t0: [store x 1, launch k1 tail]\n",
            "exists k1.t0.r0 == 0",
            "forbidden",
        );
        let allowed = [st(1, 1)];
        assert_eq!(
            classify(&l, &allowed, &ran(vec![(st(1, 1), 10)], 0)).0,
            Class::Pass
        );
        let (c, why) = classify(&l, &allowed, &ran(vec![(st(1, 1), 9), (st(1, 0), 1)], 0));
        assert_eq!(c, Class::Violation, "{why}");
        assert!(why.contains("k1.t0.r0=0"), "{why}");
        assert_eq!(
            classify(&l, &allowed, &ran(vec![(st(2, 1), 3)], 0)).0,
            Class::Unmodeled
        );
        assert_eq!(
            classify(&l, &allowed, &ran(vec![(st(1, 1), 3)], 2)).0,
            Class::LaunchError
        );
        assert_eq!(
            classify(&l, &allowed, &ran(vec![], 0)).0,
            Class::LaunchError
        );
        let hang = Outcome::Hang {
            message: "stall: launch 0".into(),
        };
        assert_eq!(classify(&l, &allowed, &hang).0, Class::Hang);
        let req = litmus(
            "          t0: [store x 1, launch k1 tail]\n",
            "exists k1.t0.r0 == 1",
            "required",
        );
        assert_eq!(
            classify(&req, &allowed, &ran(vec![(st(1, 1), 3)], 0)).0,
            Class::Pass
        );
        assert_eq!(
            classify(&req, &[st(1, 1), st(1, 0)], &ran(vec![(st(1, 0), 3)], 0)).0,
            Class::Violation
        );
    }

    #[test]
    fn shapes_forget_values_and_names_and_known_hangs_are_recognised() {
        let a = litmus(
            "          t0: [store x 1, launch k1 tail]\n",
            "exists x == 1",
            "allowed",
        );
        let b = litmus(
            "          t0: [store x 2, launch k1 tail]\n",
            "exists x == 0",
            "allowed",
        );
        assert_eq!(shape(&a), shape(&b));
        assert_eq!(shape(&a), "host[st launch-tail] device[ld]");
        let c = litmus(
            "          t0: [launch k1 tail, store x 2]\n",
            "exists x == 0",
            "allowed",
        );
        assert_ne!(shape(&a), shape(&c));
        assert_eq!(known_hang(&a), None);
        let t = litmus(
            "          t0: [trigger, launch k1 tail]\n",
            "exists x == 0",
            "allowed",
        );
        assert_eq!(
            known_hang(&t),
            Some("trigger then tail launch in a host-launched grid")
        );
        let e = litmus(
            "          t0: [record e1, record e2, launch k1 tail]\n",
            "exists x == 0",
            "allowed",
        );
        assert_eq!(known_hang(&e), Some("two event records in one thread"));
    }

    #[test]
    fn findings_group_by_class_and_shape() {
        let rec = |i: usize, class: Class, shape: &str| ProgramRecord {
            batch: "b0000".into(),
            index: i,
            name: format!("p{i}"),
            class,
            detail: String::new(),
            shape: shape.into(),
            known_hang: None,
            oracle: "axiom".into(),
            outcome: Outcome::NotRun {
                reason: String::new(),
            },
        };
        let rs = [
            rec(0, Class::Hang, "a"),
            rec(1, Class::Pass, "a"),
            rec(2, Class::Hang, "a"),
            rec(3, Class::Unmodeled, "a"),
            rec(4, Class::Hang, "b"),
        ];
        let d = distinct(&rs);
        assert_eq!(d.len(), 3);
        assert_eq!(
            d[&(Class::Hang, "a".to_string())]
                .iter()
                .map(|r| r.index)
                .collect::<Vec<_>>(),
            [0, 2]
        );
    }
}
