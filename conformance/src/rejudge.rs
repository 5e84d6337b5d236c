//! `conformance report rejudge RESULTS...`: today's facts applied to a
//! recorded run, without a GPU. Each record is named as its test is called
//! now, taken back to its status before the facts
//! (`gridcheck_judge`'s `before_facts`) and judged again by the
//! checkout's facts with its test's program in the checkout's spec
//! (`gridcheck_report::Facts::rejudge`). Out: the records as JSON lines
//! (stdout), and on stderr each status that changed and the summary of
//! the latest run; with `--format text`, the changes and the summary only.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use gridcheck_report::{FACTS_DIR, Summary, TrialRecord};
use gridcheck_spec::Spec;

/// The bytes of a file, compressed or not, or an error naming it.
pub(crate) fn read(path: &Path) -> Result<Vec<u8>, String> {
    gridcheck_report::read_stored(path).map_err(|e| format!("cannot read {e}"))
}

/// Lines a reader skipped, named on stderr.
pub(crate) fn warn(path: &Path, skipped: &[gridcheck_report::Skipped]) {
    for s in skipped {
        eprintln!(
            "warning: {}:{}: skipped: {}",
            path.display(),
            s.line,
            s.reason
        );
    }
}

/// The checkout's spec, or its errors naming the folder.
pub(crate) fn spec(root: &Path) -> Result<Spec, String> {
    let dir = root.join("spec");
    gridcheck_spec::load_dir(&dir, None).map_err(|e| format!("the spec ({}): {e}", dir.display()))
}

/// One record whose status the facts of today change.
pub(crate) struct Change {
    pub trial: String,
    pub was: gridcheck_report::Status,
    pub now: gridcheck_report::Status,
    pub why: String,
}

/// The records of `files` judged by the facts and spec of `root`, and the
/// statuses that changed.
pub(crate) fn rejudged(
    files: &[PathBuf],
    root: &Path,
) -> Result<(Vec<TrialRecord>, Vec<Change>), String> {
    let spec = spec(root)?;
    let facts = crate::facts::load_checked(&root.join(FACTS_DIR), root, Some(&spec))?;
    let (mut out, mut changes) = (Vec::new(), Vec::new());
    for f in files {
        let read = gridcheck_report::read_results(&read(f)?);
        warn(f, &read.skipped);
        for mut rec in read.records {
            rec.under_current_name(&spec);
            let r = facts.rejudge(&rec, &spec);
            if r.status != rec.status {
                changes.push(Change {
                    trial: rec.trial.to_string(),
                    was: rec.status,
                    now: r.status,
                    why: r.message.lines().next().unwrap_or("").to_string(),
                });
            }
            out.push(r);
        }
    }
    Ok((out, changes))
}

/// The `rejudge` report.
pub(crate) fn rejudge(files: &[PathBuf], root: &Path, text: bool) -> Result<String, String> {
    let (records, changes) = rejudged(files, root)?;
    let mut notes = String::new();
    let _ = writeln!(
        notes,
        "{} of {} records change status under today's facts:",
        changes.len(),
        records.len()
    );
    for c in &changes {
        let _ = writeln!(notes, "  {}: {} -> {}: {}", c.trial, c.was, c.now, c.why);
    }
    let runs = gridcheck_report::split_runs(records.clone());
    if let Some(last) = runs.last() {
        notes += &Summary::of(&last.records).text();
    }
    if text {
        return Ok(notes);
    }
    eprint!("{notes}");
    Ok(records.iter().map(|r| r.to_json_line() + "\n").collect())
}
