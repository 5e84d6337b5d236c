//! A trial's escalation: after the suite, an outcome the trial never showed
//! (a quality warning: an allowed outcome unobserved) is sought again, the
//! trial rerun alone in a fresh worker and then under other environments,
//! each with a budget, until the outcome shows. The record says which
//! environment provoked it, or, if none did, the one-sided 95 % upper bound
//! on the outcome's rate from every instance the steps ran
//! ([`crate::rate_upper_95`]); the quality warning then stays.
//!
//! The harness fills [`crate::TrialRecord::escalation`] in; records without
//! it (every record written before it existed) load as they are.
//! `report diff` reads it: an allowed state gone from a run is a
//! regression only if its escalation did not provoke it
//! (`gridcheck_report::run_diff`).

use gridcheck_spec::State;
use serde::{Deserialize, Serialize};

/// Every step of an escalation, and what came of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Escalation {
    /// In the order they ran.
    pub steps: Vec<EscalationStep>,
    /// The first step whose instances showed the outcome; `None`: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provoked_by: Option<String>,
    /// When none did: the one-sided 95 % upper bound on the outcome's rate
    /// from the instances of every step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_upper_95: Option<f64>,
    /// The wall seconds it took, its worker's start and module loads
    /// included (absent in records written before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_s: Option<f64>,
}

/// One step: the trial in one environment, under one budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EscalationStep {
    /// `alone` (the trial alone in a fresh worker, the run's environment),
    /// or an environment's name (a tuned file's extra one, a search point).
    pub environment: String,
    pub instances: u64,
    /// Instances that showed the outcome (satisfied the test's condition).
    pub observed: u64,
    /// The GPU seconds the step could spend.
    #[serde(default)]
    pub budget_s: f64,
    /// The states the step saw, with their counts (absent: not recorded).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub histogram: Vec<(State, u64)>,
}

impl Escalation {
    /// The escalation of `steps`: provoked by the first step that observed
    /// the outcome, else bounded by all their instances.
    pub fn of(steps: Vec<EscalationStep>) -> Escalation {
        let provoked_by = steps
            .iter()
            .find(|s| s.observed > 0)
            .map(|s| s.environment.clone());
        let instances: u64 = steps.iter().map(|s| s.instances).sum();
        let rate_upper_95 = match provoked_by {
            Some(_) => None,
            None => crate::rate_upper_95(0, instances),
        };
        Escalation {
            steps,
            provoked_by,
            rate_upper_95,
            wall_s: None,
        }
    }

    /// The escalation, with the wall seconds it took.
    pub fn taking(self, wall_s: f64) -> Escalation {
        Escalation {
            wall_s: Some(wall_s),
            ..self
        }
    }

    /// Whether it showed `state`: a step saw it, or, for a state that
    /// satisfies the condition (`satisfies`), the outcome was provoked.
    pub fn showed(&self, state: &State, satisfies: bool) -> bool {
        (satisfies && self.provoked_by.is_some())
            || self
                .steps
                .iter()
                .any(|s| s.histogram.iter().any(|(st, n)| st == state && *n > 0))
    }

    /// Instances of every step.
    pub fn instances(&self) -> u64 {
        self.steps.iter().map(|s| s.instances).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(env: &str, instances: u64, observed: u64) -> EscalationStep {
        EscalationStep {
            environment: env.into(),
            instances,
            observed,
            budget_s: 1.0,
            histogram: Vec::new(),
        }
    }

    fn st(v: u32) -> State {
        [("t0.r0".to_string(), v)].into()
    }

    #[test]
    fn provoked_by_the_first_step_that_showed_it_else_bounded() {
        let e = Escalation::of(vec![
            step("alone", 1000, 0),
            step("late-write", 500, 3),
            step("x", 9, 1),
        ]);
        assert_eq!(e.provoked_by.as_deref(), Some("late-write"));
        assert_eq!(e.rate_upper_95, None);
        let e = Escalation::of(vec![step("alone", 1000, 0), step("late-write", 2000, 0)]);
        assert_eq!(e.provoked_by, None);
        assert_eq!(e.instances(), 3000);
        let bound = e.rate_upper_95.unwrap();
        assert!(
            (bound - (1.0 - 0.05f64.powf(1.0 / 3000.0))).abs() < 1e-15,
            "{bound}"
        );
        // No step run: nothing to bound.
        assert_eq!(Escalation::of(Vec::new()).rate_upper_95, None);
    }

    #[test]
    fn a_state_shows_in_a_steps_histogram_or_as_the_provoked_outcome() {
        let mut s = step("alone", 10, 0);
        s.histogram = vec![(st(0), 10)];
        let e = Escalation::of(vec![s]);
        assert!(e.showed(&st(0), false));
        assert!(!e.showed(&st(1), true), "not provoked, not in a histogram");
        let e = Escalation::of(vec![step("late-write", 10, 2)]);
        assert!(e.showed(&st(1), true) && !e.showed(&st(1), false));
    }

    #[test]
    fn round_trips_and_older_shapes_load() {
        let e = Escalation::of(vec![step("alone", 64, 0)]);
        let json = serde_json::to_string(&e).unwrap();
        assert!(
            !json.contains("provoked_by") && json.contains("rate_upper_95"),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<Escalation>(&json).unwrap(), e);
        let minimal = r#"{"steps":[{"environment":"alone","instances":5,"observed":0}]}"#;
        let e: Escalation = serde_json::from_str(minimal).unwrap();
        assert_eq!((e.steps[0].budget_s, e.rate_upper_95), (0.0, None));
    }
}
