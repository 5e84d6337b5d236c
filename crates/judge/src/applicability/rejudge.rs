//! Today's facts applied to a recorded trial (`conformance report
//! rejudge`): the record as it was before the facts judged it (its status
//! and message as the harness found them, read back from the forms the
//! facts write), then judged again, with the trial's program as the
//! current spec has it.
//!
//! What the facts wrote is undone by its form: `known-hang` was a timeout;
//! `known, stronger than the guide` a quality warning; another `xfail` or
//! `known` a failure (a GPU litmus trial's verdict diff, recomputed from
//! its model and hardware, says fail or unmodeled; a trial without them is
//! taken as a fail, a crash being judged alike); `changed` names the status
//! it had. A note the facts appended is dropped.

use gridcheck_record::{Status, Tier, TrialId, TrialRecord, diff};
use gridcheck_spec::{Litmus, Spec, TestBody};

use crate::Facts;

/// The litmus program of a GPU trial's test in `spec`, by name.
pub fn program_of<'a>(spec: &'a Spec, trial: &TrialId) -> Option<&'a Litmus> {
    if trial.tier != Tier::Gpu {
        return None;
    }
    match &spec.test(&trial.test)?.body {
        TestBody::Litmus(l) => Some(l),
        _ => None,
    }
}

/// The text after the first `<file>.toml:<line>): ` (the facts' prefix).
fn after_fact_prefix(m: &str) -> Option<&str> {
    let mut from = 0;
    while let Some(i) = m[from..].find(".toml:") {
        let rest = &m[from + i + 6..];
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 && rest[digits..].starts_with("): ") {
            return Some(&rest[digits + 3..]);
        }
        from += i + 6;
    }
    None
}

/// The record as the harness had it before the facts judged it.
fn before_facts(rec: &TrialRecord) -> TrialRecord {
    let mut r = rec.clone();
    let m = rec.message.as_str();
    let inner = |m: &str| after_fact_prefix(m).unwrap_or(m).to_string();
    match rec.status {
        Status::KnownHang => (r.status, r.message) = (Status::Timeout, inner(m)),
        Status::Xfail | Status::Known if m.starts_with("known, stronger than the guide") => {
            (r.status, r.message) = (Status::QualityWarning, inner(m));
        }
        Status::Xfail | Status::Known => {
            let recomputed = match (&rec.model, &rec.hardware) {
                (Some(model), Some(hw)) => Some(diff(model.verdict, hw).status),
                _ => None,
            };
            r.status = recomputed
                .filter(|s| matches!(s, Status::Fail | Status::Unmodeled))
                .unwrap_or(Status::Fail);
            r.message = inner(m);
        }
        Status::Changed => {
            let was = [Status::Pass, Status::QualityWarning]
                .into_iter()
                .find(|s| m.contains(&format!("did not reproduce here ({s})")))
                .or(rec.hardware.as_ref().map(|_| Status::Pass));
            r.status = was.unwrap_or(Status::Pass);
            r.message = ["update the fact. ", "needs this place. "]
                .iter()
                .find_map(|k| m.split_once(k).map(|(_, rest)| rest.to_string()))
                .unwrap_or_else(|| m.to_string());
        }
        _ => {
            for note in ["\n(the known ", "\n(a known fact covers this test: "] {
                if let Some((before, _)) = m.split_once(note) {
                    r.message = before.to_string();
                }
            }
        }
    }
    r
}

impl Facts {
    /// A recorded trial judged by these facts: `before_facts`,
    /// then [`Facts::apply_to`] with its program in `spec`.
    pub fn rejudge(&self, rec: &TrialRecord, spec: &Spec) -> TrialRecord {
        let mut r = before_facts(rec);
        (r.status, r.message) = self.apply_to(&r, program_of(spec, &r.trial));
        r
    }
}
