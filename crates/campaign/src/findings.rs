//! A campaign's programs classified and grouped: what a GPU run of a
//! program shows against the oracle's final states ([`classify`]), each
//! program's record ([`ProgramRecord`]), and the findings grouped by class
//! and shape ([`distinct`]).

use std::collections::{BTreeMap, BTreeSet};

use gridcheck_report::FactKind;
use gridcheck_spec::{Litmus, State, Verdict};
use serde::{Deserialize, Serialize};

use crate::batch::Batch;
use crate::known::KnownFacts;
use crate::shape::Shape;

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
        /// Per segment of a tile register, its stale words (none for a
        /// program without tiles).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        stale: Vec<gridcheck_report::StaleWords>,
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
    /// The kind of fact that explains a finding of this class: a hang for
    /// a hang, a discrepancy for a violation or an unmodeled state, a
    /// launch error for a launch error; none for another.
    pub fn fact_kind(self) -> Option<FactKind> {
        match self {
            Class::LaunchError => Some(FactKind::LaunchError),
            c => FactKind::of_finding(c.name()),
        }
    }

    pub fn is_finding(self) -> bool {
        !matches!(self, Class::Pass | Class::NotRun)
    }

    /// Its name in records and file names (`launch-error`).
    pub fn name(self) -> &'static str {
        match self {
            Class::Pass => "pass",
            Class::Violation => "violation",
            Class::Unmodeled => "unmodeled",
            Class::Hang => "hang",
            Class::LaunchError => "launch-error",
            Class::NotRun => "not-run",
        }
    }
}

impl Outcome {
    /// The instances that ran to their end (a run's; none for a hang, an
    /// error or a program not run).
    pub fn instances(&self) -> u64 {
        match self {
            Outcome::Ran { instances, .. } => *instances,
            _ => 0,
        }
    }

    /// Whether it ends the worker that ran it (the context is left
    /// unusable: the worker is killed, or stops, after it).
    pub fn ends_worker(&self) -> bool {
        matches!(self, Outcome::Hang { .. } | Outcome::Error { .. })
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
                if violates(l, s) {
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

/// Whether state `s` is one the test's expectation rules out.
fn violates(l: &Litmus, s: &State) -> bool {
    let holds = l.condition.holds(s).unwrap_or(false);
    match l.expect {
        Verdict::Forbidden => holds,
        Verdict::Required => !holds,
        Verdict::Allowed => false,
    }
}

/// The rate at which a run showed `class`, as instances that showed it of
/// the instances run (a violating state's, an unmodeled state's, those
/// whose launches failed); `None` for a class a run shows as a whole (a
/// hang, an error) and where nothing showed.
pub fn shown_instances(
    l: &Litmus,
    states: &[State],
    class: Class,
    o: &Outcome,
) -> Option<(u64, u64)> {
    let Outcome::Ran {
        histogram,
        instances,
        launch_failures,
        ..
    } = o
    else {
        return None;
    };
    let count = |bad: &dyn Fn(&State) -> bool| -> u64 {
        histogram
            .iter()
            .filter(|(s, _)| bad(s))
            .map(|(_, n)| n)
            .sum()
    };
    let shown = match class {
        Class::Violation => count(&|s| violates(l, s)),
        Class::Unmodeled => count(&|s| !states.contains(s)),
        Class::LaunchError => *launch_failures,
        _ => 0,
    };
    (shown > 0).then_some((shown, instances + launch_failures))
}

fn state_text(s: &State) -> String {
    s.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
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
    /// The known hang (its fact's key) whose test's shape the program
    /// embeds (`known.rs`), if any.
    pub known_hang: Option<String>,
    /// Which oracle(s) gave the allowed states.
    pub oracle: String,
    pub outcome: Outcome,
    /// The worker process that ran it (numbered through the campaign) and
    /// its place in that worker's run (0 first): the programs of the same
    /// batch and worker with a smaller `seq` ran before it, in that
    /// process, in that order. Absent where it did not run, and in records
    /// of campaigns older than these fields (`context.rs` infers them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u32>,
}

impl ProgramRecord {
    /// Program `index` of batch `b` classified against its oracle's states,
    /// with its shape and the known hang it embeds; `ran_in` the worker
    /// and the place in it, where it ran.
    pub fn of(
        b: &Batch,
        index: usize,
        outcome: Outcome,
        known: &KnownFacts,
        ran_in: Option<(u64, u32)>,
    ) -> ProgramRecord {
        let p = &b.programs[index];
        let (class, detail, shape, known_hang) = match &b.parsed[index] {
            Ok((_, l)) => {
                let (c, d) = classify(l, &p.states, &outcome);
                let k = known.matching(l).map(|k| k.fact.clone());
                (c, d, Shape::of(l).to_string(), k)
            }
            Err(e) => (Class::NotRun, e.clone(), String::new(), None),
        };
        ProgramRecord {
            batch: b.name.clone(),
            index,
            name: p.name.clone(),
            class,
            detail,
            shape,
            known_hang,
            oracle: p.oracle.clone(),
            outcome,
            worker: ran_in.map(|w| w.0),
            seq: ran_in.map(|w| w.1),
        }
    }
}

/// How many records of each class.
pub fn class_counts(records: &[ProgramRecord]) -> BTreeMap<Class, usize> {
    let mut m = BTreeMap::new();
    for r in records {
        *m.entry(r.class).or_default() += 1;
    }
    m
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
    use crate::shape::tests::litmus;

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
            stale: Vec::new(),
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
        // How often each class showed: its instances of all run.
        let shown = |c, o: &Outcome| shown_instances(&l, &allowed, c, o);
        let mixed = ran(vec![(st(1, 1), 1020), (st(1, 0), 2), (st(2, 1), 1)], 1);
        assert_eq!(shown(Class::Violation, &mixed), Some((2, 1024)));
        // Both states outside the oracle's one.
        assert_eq!(shown(Class::Unmodeled, &mixed), Some((3, 1024)));
        assert_eq!(shown(Class::LaunchError, &mixed), Some((1, 1024)));
        assert_eq!(
            shown(Class::LaunchError, &ran(vec![(st(1, 1), 8)], 0)),
            None
        );
        assert_eq!(shown(Class::Hang, &hang), None);
        assert_eq!(
            classify(&req, &[st(1, 1), st(1, 0)], &ran(vec![(st(1, 0), 3)], 0)).0,
            Class::Violation
        );
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
            worker: None,
            seq: None,
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
