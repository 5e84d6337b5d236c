//! Which trials show a known fact on the site: the newest runs' first,
//! and a library fact's own releases' first (the discrepancies page, and
//! the tests that check it, take them from here).

use gridcheck_report::{Fact as KnownFact, Status, TrialRecord};

use crate::results::Run;

/// Whether a trial ran (a trial that did not is no evidence of anything).
pub fn ran(r: &TrialRecord) -> bool {
    !matches!(r.status, Status::NotSupported | Status::NotRun)
}

/// The trials that show a known fact, with their runs: those of the
/// newest runs (`latest`) it covers, else (a tier the newest runs left
/// out: the library tier's runs are runs of their own) each GPU's newest
/// run of `runs` that has them; in either, trials of a release the fact
/// was measured on first ([`KnownFact::on_measured_release`]), any other
/// it covers only when there are none; failing trials first.
pub fn showing<'a>(
    x: &KnownFact,
    latest: &[(&'a Run, &'a TrialRecord)],
    runs: &'a [Run],
) -> Vec<(&'a Run, &'a TrialRecord)> {
    let own = |r: &TrialRecord| x.covers(&r.trial) && ran(r) && x.on_measured_release(&r.trial);
    let any = |r: &TrialRecord| x.covers(&r.trial) && ran(r);
    for shows in [&own as &dyn Fn(&TrialRecord) -> bool, &any] {
        let seen: Vec<_> = latest.iter().copied().filter(|(_, r)| shows(r)).collect();
        if !seen.is_empty() {
            return failing_first(seen);
        }
        let newest = crate::results::latest_where(runs, |run| run.records.iter().any(shows));
        let seen: Vec<_> = newest
            .into_iter()
            .flat_map(|run| {
                run.records
                    .iter()
                    .filter(|r| shows(r))
                    .map(move |r| (run, r))
            })
            .collect();
        if !seen.is_empty() {
            return failing_first(seen);
        }
    }
    Vec::new()
}

/// A fact over many trials (a library algorithm's cases, a fact that
/// reproduces only sometimes) is shown by a trial that showed it: passing
/// trials last, the order otherwise kept.
fn failing_first<'a>(mut seen: Vec<(&'a Run, &'a TrialRecord)>) -> Vec<(&'a Run, &'a TrialRecord)> {
    seen.sort_by_key(|(_, r)| r.status == Status::Pass);
    seen
}
