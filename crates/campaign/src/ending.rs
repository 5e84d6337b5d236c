//! How a finding ended ([`LeadEnd`], one line of `leads.jsonl` and of
//! `findings.jsonl`). Every finding ends one way, named by `ended` and
//! detailed under a key of that name, beside `confirmed_alone`:
//!
//! - `known`: a finding shown again (alone or with its context) whose
//!   program and shrunk program the shape of a known fact of its class
//!   covers (`known.rs`: a hang fact for a hang, a discrepancy for a
//!   violation or an unmodeled state, a launch-error fact for a launch
//!   error): the fact and its test are the
//!   reproducer (`test` is kept too);
//! - `alone`: shown again alone, shrunk (`test`);
//! - `context`: shown again only after programs its worker ran before it;
//!   `context` names those the halving kept (`spread` where it needs
//!   programs of both halves of what it kept), `test` the test (those
//!   programs, then the finding shrunk), with its rate;
//! - `closed`: not shown in any rerun, alone or with its whole context;
//!   `bound` gives the 95 % upper bound on its rate from the instances and
//!   runs made;
//! - `harness`: the campaign's harness left state behind that made it; the
//!   defect and its fix (a judgment, `harness.jsonl`, applied by the report).
//!
//! `open` is a finding no part of the leads phase has reached yet.

use serde::{Deserialize, Serialize};

use crate::findings::Class;

/// Runs of a program in fresh workers (each alone, or after its context).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Runs {
    pub runs: usize,
    /// Runs that showed the finding's class.
    pub shown: usize,
    /// Instances of the program that ran to their end in those runs.
    pub instances: u64,
}

impl Runs {
    pub fn add(&mut self, o: Runs) {
        self.runs += o.runs;
        self.shown += o.shown;
        self.instances += o.instances;
    }
}

/// The known fact a finding is of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Known {
    /// The fact's key.
    pub fact: String,
    /// Its test, the reproducer.
    pub test: String,
}

/// A finding's reproducing test: its programs shrunk, written out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestOut {
    /// The spec YAML of its programs, context first (`findings/NNN-*.yaml`,
    /// relative to the results folder).
    pub yaml: String,
    /// The same as a runtime-API program (`findings/NNN-*.cu`, `plain.rs`).
    pub plain: String,
    /// Shrinking: candidates kept and tried, and whether the lead's time
    /// cut it before a fixed point.
    pub shrink_steps: usize,
    pub shrink_tries: usize,
    pub out_of_time: bool,
    /// The final test run in fresh workers (`--rate-runs`).
    pub rate: Runs,
}

/// The context a finding needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Context {
    /// The programs that must run first, in order (their campaign names).
    pub programs: Vec<String>,
    /// How many programs its worker ran before it.
    pub prefix: usize,
    /// Reruns with the whole prefix until it showed.
    pub reruns: Runs,
    /// Subsets the bisection tested, and whether its result is 1-minimal.
    pub tests: usize,
    pub minimal: bool,
    /// Whether the halving stopped because neither half of what it kept
    /// brings the finding back (it needs programs of both).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub spread: bool,
}

/// A finding that never came back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Closed {
    /// How many programs its worker ran before it (0: alone is its context).
    pub prefix: usize,
    /// The reruns with that context (alone ones are `LeadEnd::alone`).
    pub reruns: Runs,
}

/// The bound on a closed finding's rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bound {
    /// Instances and runs of the program in every rerun, none showing it.
    pub instances: u64,
    pub runs: usize,
    /// 95 % upper confidence bounds: per instance, and per run.
    pub per_instance: f64,
    pub per_run: f64,
}

/// A harness defect that made a finding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Harness {
    /// The state the harness left behind.
    pub state: String,
    /// The fix (the commit, or where it is).
    pub fix: String,
}

/// One finding (a class and a shape) and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeadEnd {
    pub class: Class,
    pub shape: String,
    /// Programs of this class and shape in the campaign.
    pub programs: usize,
    /// The first of them, the one rerun.
    pub first: String,
    pub batch: String,
    pub index: usize,
    pub detail: String,
    /// `known`, `alone`, `context`, `closed`, `harness` or `open`.
    pub ended: String,
    pub confirmed_alone: bool,
    /// Its runs alone, in fresh workers.
    pub alone: Runs,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known: Option<Known>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Context>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test: Option<TestOut>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed: Option<Closed>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<Bound>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness: Option<Harness>,
    /// Seconds spent on it.
    #[serde(default)]
    pub seconds: f64,
}

impl LeadEnd {
    /// A finding not ended yet.
    pub fn open(class: Class, shape: &str, programs: usize, first: &FirstOf) -> LeadEnd {
        LeadEnd {
            class,
            shape: shape.to_string(),
            programs,
            first: first.name.clone(),
            batch: first.batch.clone(),
            index: first.index,
            detail: first.detail.clone(),
            ended: "open".into(),
            confirmed_alone: false,
            alone: Runs::default(),
            known: None,
            context: None,
            test: None,
            closed: None,
            bound: None,
            harness: None,
            seconds: 0.0,
        }
    }
}

/// The program a finding is known by.
#[derive(Debug, Clone, PartialEq)]
pub struct FirstOf {
    pub name: String,
    pub batch: String,
    pub index: usize,
    pub detail: String,
}
