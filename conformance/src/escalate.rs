//! A quality warning escalated, as a timeout is classified: an allowed
//! outcome the suite did not observe is sought again before the trial
//! says so. Its test runs alone in a fresh worker (a process and context of
//! its own), under the run's own environments, then under each environment
//! of the tuning search (`conformance/tuning/search.toml`), each with a
//! GPU-time budget and twice that in wall time, a chunk of launches at a time (budgeted.rs) until
//! an instance shows the outcome (`worker/escalate.rs`). The record keeps every step
//! (`gridcheck_report::Escalation`): which environment provoked it, or, when
//! none did, the 95 % upper bound on its rate from every instance run.
//!
//! A trial an `unobserved` fact covers (an outcome shown never to happen on
//! that hardware, with a control) is not escalated: the fact says so, and
//! its `changed` catches the day the outcome shows in the suite. The run's
//! escalations share one budget of wall time (`--escalate-total`): the
//! steps past it do not run, and a trial escalated after it is spent says
//! so.

use std::path::Path;

use gridcheck_report::{Escalation, SearchPoint, Status, Tuning};

use crate::options::EscalateOptions;

/// The environments an escalation tries, in order: the run's own (`alone`,
/// then each extra environment by name), then the search's points, each
/// with `budget_s` GPU seconds.
pub fn steps(tuning: &Tuning, search: &[SearchPoint], budget_s: f64) -> Vec<SearchPoint> {
    let main = Tuning {
        extra: Vec::new(),
        ..tuning.clone()
    };
    std::iter::once(SearchPoint {
        name: "alone".into(),
        tuning: main,
    })
    .chain(tuning.extra.iter().cloned())
    .chain(search.iter().cloned())
    .map(|mut p| {
        p.tuning.mutant_budget_s = budget_s;
        p.tuning.extra.clear();
        // A point of no launches (the mutants' extra environments may have
        // none in the trials) still runs here: launches are budgeted.
        p
    })
    .collect()
}

/// The search's points (`--escalate-search`), relative to `root`: none
/// when turned off; a default file that is missing gives none, a named one
/// that is missing is an error.
pub fn search_points(root: &Path, o: &EscalateOptions) -> Result<Vec<SearchPoint>, String> {
    let Some(file) = &o.search else {
        return Ok(Vec::new());
    };
    let path = root.join(file);
    match std::fs::read_to_string(&path) {
        Ok(text) => gridcheck_report::parse_search(&text, &path),
        Err(_) if o.search == EscalateOptions::default().search => Ok(Vec::new()),
        Err(e) => Err(format!("--escalate-search {}: {e}", path.display())),
    }
}

/// A quality-warning trial's status and message once escalated: a pass
/// when a step showed the outcome, else the quality warning with the bound.
/// `suite`: the instances the suite ran.
pub fn judge(e: &Escalation, suite: u64, note: &str) -> (Status, String) {
    let tried: Vec<&str> = e.steps.iter().map(|s| s.environment.as_str()).collect();
    let instances: u64 = e.steps.iter().map(|s| s.instances).sum();
    match (&e.provoked_by, e.steps.iter().find(|s| s.observed > 0)) {
        (Some(env), Some(step)) => (
            Status::Pass,
            format!(
                "model allowed, hardware Never in the suite ({suite} instances), then Sometimes \
                 when escalated: {} of {} instances under `{env}`, alone in a fresh worker \
                 (tried {}){note}",
                step.observed,
                step.instances,
                tried.join(", ")
            ),
        ),
        _ => (
            Status::QualityWarning,
            format!(
                "model allowed, hardware Never ({suite} instances), nor when escalated: 0 of \
                 {instances} instances under {}{}{}{note}",
                tried.join(", "),
                match e.wall_s {
                    Some(w) => format!(" in {w:.1} s"),
                    None => String::new(),
                },
                match e.rate_upper_95 {
                    Some(b) => format!(" (its rate is below {b:.2e} at 95 % confidence)"),
                    None => String::new(),
                }
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gridcheck_report::EscalationStep;

    fn point(name: &str, launches: u32) -> SearchPoint {
        SearchPoint {
            name: name.into(),
            tuning: Tuning {
                launches,
                ..Tuning::default()
            },
        }
    }

    #[test]
    fn the_runs_own_environments_come_first_then_the_search() {
        let tuning = Tuning {
            extra: vec![point("late-write", 48), point("mutants-only", 0)],
            ..Tuning::default()
        };
        let s = steps(&tuning, &[point("i64-d17", 32)], 0.5);
        let names: Vec<&str> = s.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["alone", "late-write", "mutants-only", "i64-d17"]);
        assert!(s.iter().all(|p| p.tuning.mutant_budget_s == 0.5));
        assert!(s.iter().all(|p| p.tuning.extra.is_empty()));
        assert_eq!(s[0].tuning.instances, tuning.instances);
    }

    fn step(env: &str, instances: u64, observed: u64) -> EscalationStep {
        EscalationStep {
            environment: env.into(),
            instances,
            observed,
            budget_s: 0.25,
            histogram: Vec::new(),
        }
    }

    #[test]
    fn shown_is_a_pass_naming_where_and_not_shown_stays_a_warning_with_its_bound() {
        let shown = Escalation::of(vec![step("alone", 1000, 0), step("late-write", 64, 2)]);
        let (status, msg) = judge(&shown, 35840, "");
        assert_eq!(status, Status::Pass);
        assert!(
            msg.contains("2 of 64 instances under `late-write`"),
            "{msg}"
        );
        assert!(msg.contains("tried alone, late-write"), "{msg}");
        let never = Escalation::of(vec![step("alone", 1000, 0), step("late-write", 2000, 0)]);
        let (status, msg) = judge(&never, 35840, " [note]");
        assert_eq!(status, Status::QualityWarning);
        assert!(
            msg.contains("0 of 3000 instances under alone, late-write"),
            "{msg}"
        );
        assert!(msg.contains("below 9.98e-4 at 95 % confidence"), "{msg}");
        assert!(msg.ends_with(" [note]"), "{msg}");
    }

    #[test]
    fn a_missing_default_search_is_none_and_a_missing_named_one_an_error() {
        let root = Path::new("/nonexistent");
        assert!(
            search_points(root, &EscalateOptions::default())
                .unwrap()
                .is_empty()
        );
        let off = EscalateOptions {
            search: None,
            ..EscalateOptions::default()
        };
        assert!(search_points(root, &off).unwrap().is_empty());
        let named = EscalateOptions {
            search: Some("mine.toml".into()),
            ..EscalateOptions::default()
        };
        assert!(
            search_points(root, &named)
                .unwrap_err()
                .contains("mine.toml")
        );
        let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        assert!(
            !search_points(&real, &EscalateOptions::default())
                .unwrap()
                .is_empty()
        );
    }
}
