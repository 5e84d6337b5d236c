//! The terminal summary of any results file (`gridcheck_report::summary`:
//! the counts, the notable trials, the text) and the header above it: a
//! summary is of one run ([`run_header`] says which, and lists a file's
//! others).

use gridcheck_report::RunRecords;

pub use gridcheck_report::summary::{counts, notable, terminal};

/// The line above a run's summary: which run of `file` it is, and the
/// file's other runs (`all`, in file order) with how to choose them.
pub fn run_header(run: &RunRecords, all: &[RunRecords], file: &str) -> String {
    let when = |r: &RunRecords| {
        r.started
            .as_deref()
            .map(|s| format!("started {s}"))
            .unwrap_or_else(|| "no start time recorded".into())
    };
    let which = if all.len() <= 1 {
        format!("the only run in {file}")
    } else if all.last().is_some_and(|l| l.id == run.id) {
        format!("the latest of {} runs in {file}", all.len())
    } else {
        format!("one of {} runs in {file}", all.len())
    };
    let mut s = format!("run {} ({}): {which}\n", run.id, when(run));
    let others: Vec<&RunRecords> = all.iter().filter(|r| r.id != run.id).collect();
    if !others.is_empty() {
        s += "other runs in it (choose one with --run ID, or all with --all-runs):\n";
        for r in others {
            s += &format!("  {} ({}): {} trials\n", r.id, when(r), r.records.len());
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use gridcheck_report::{Status, TrialRecord};

    fn rec(trial: &str, status: Status) -> TrialRecord {
        TrialRecord::new(trial.parse().unwrap(), status, "m")
    }

    #[test]
    fn the_header_names_the_run_and_lists_the_others() {
        let run = |secs: u64, n: usize| {
            let s = gridcheck_report::RunStamp::at(secs, secs);
            let mut r = rec("model/r/a", Status::Pass);
            s.stamp(&mut r);
            let records = vec![r; n];
            gridcheck_report::split_runs(records).remove(0)
        };
        let (a, b) = (run(1, 2), run(2, 3));
        let all = [a.clone(), b.clone()];
        let h = run_header(&b, &all, "r.jsonl");
        assert!(h.starts_with("run 19700101T000002Z-00000002 (started 1970-01-01T00:00:02Z): the latest of 2 runs in r.jsonl\n"), "{h}");
        assert!(
            h.contains("--run ID")
                && h.contains(
                    "  19700101T000001Z-00000001 (started 1970-01-01T00:00:01Z): 2 trials\n"
                ),
            "{h}"
        );
        assert!(run_header(&a, &all, "r.jsonl").contains("one of 2 runs"));
        let only = run_header(&a, &all[..1], "r.jsonl");
        assert!(
            only.contains("the only run") && !only.contains("other runs"),
            "{only}"
        );
    }
}
