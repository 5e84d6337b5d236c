//! The results file of a run: what a `--resume` finds already done in it
//! (and the run it goes on with), and the sink new records are appended to.

use std::collections::HashMap;
use std::fs::File;
use std::path::Path;

use gridcheck_report::{Status, TrialId, TrialRecord};
use gridcheck_spec::Spec;

/// Previous results for `--resume`: the trials done, and the run to go on
/// with (the id and start time of the file's last record, if any).
pub(crate) type Previous = (
    HashMap<TrialId, TrialRecord>,
    Option<(String, Option<String>)>,
);

/// The last record of every trial in a results file whose status is final
/// (a trial that did not run is run again), a record written under a test's
/// former name taken as the test's now. A record whose hash is not the one
/// its test has now (under the name it was written with) is of a test
/// changed since: its trial runs again. Every line skipped is named on
/// stderr with the reason; a file that cannot be read is an error.
pub(crate) fn previous_results(path: &Path, spec: &Spec) -> Result<Previous, String> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!(
                "note: --resume: {} does not exist yet; every trial runs",
                path.display()
            );
            return Ok((HashMap::new(), None));
        }
        Err(e) => return Err(format!("--resume: cannot read {}: {e}", path.display())),
        Ok(m) if !m.is_file() => {
            return Err(format!(
                "--resume: {} is not a regular file",
                path.display()
            ));
        }
        Ok(_) => {}
    }
    let read = gridcheck_report::read_results_file(path)
        .map_err(|e| format!("--resume: cannot read {}: {e}", path.display()))?;
    for s in &read.skipped {
        eprintln!(
            "warning: --resume: {}:{}: line skipped: {}",
            path.display(),
            s.line,
            s.reason
        );
    }
    let mut records = read.records;
    let run = records
        .last()
        .and_then(|r| Some((r.run_id.clone()?, r.run_started.clone())));
    let moved = gridcheck_report::under_current_names(&mut records, spec);
    if moved > 0 {
        eprintln!(
            "note: --resume: {moved} records were written under a former name of their test (the spec's `formerly:`), taken as the test's now"
        );
    }
    let mut changed = Vec::new();
    let done = records
        .into_iter()
        .filter(|r| !matches!(r.status, Status::NotRun | Status::NotSupported))
        .filter(|r| {
            let now = spec
                .test(&r.trial.test)
                .map(|t| gridcheck_kernelgen::test_hash_as(t, r.recorded_test_name()));
            let same = match (&r.test_hash, now) {
                (Some(recorded), Some(now)) => *recorded == now,
                _ => true,
            };
            if !same {
                changed.push(r.trial.to_string());
            }
            same
        })
        .map(|r| (r.trial.clone(), r))
        .collect();
    if !changed.is_empty() {
        let more = changed.len().saturating_sub(5);
        changed.truncate(5);
        eprintln!(
            "note: --resume: the tests of {} records have changed since they ran; their trials run again: {}{}",
            changed.len() + more,
            changed.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        );
    }
    Ok((done, run))
}

/// Opens the results file for appending, first cutting an incomplete last
/// line that a killed run left (so no record is appended onto it).
pub(crate) fn open_sink(path: &Path) -> Result<File, String> {
    if let Some(dir) = path.parent()
        && !dir.as_os_str().is_empty()
    {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let cannot =
        |e: std::io::Error| format!("cannot open the results file {}: {e}", path.display());
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .open(path)
        .map_err(cannot)?;
    let cut = gridcheck_report::repair_tail(&mut f).map_err(cannot)?;
    if cut > 0 {
        eprintln!(
            "warning: {}: removed an incomplete last line ({cut} bytes) that an interrupted run left",
            path.display()
        );
    }
    Ok(f)
}
