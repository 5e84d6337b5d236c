//! Where results go: every finished trial appended at once to the results
//! file (one write a record; the first write that fails is reported, ends
//! the writing and fails the run) and kept for the summary, the trials a
//! `--resume` finds done, the trials ignored because their tier cannot run
//! here, the progress line, and the mutants' records (`--mutants`) in their
//! own file, appended the same way.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use gridcheck_report::runs::RUN_ID_VAR;
use gridcheck_report::{MutantRecord, RunStamp, TrialId, TrialRecord};
use gridcheck_spec::Spec;

use crate::options::Options;
use crate::progress::Progress;
use crate::results_file;

/// Records appended to a JSON-lines file as they come, and kept.
pub struct Lines<R> {
    path: PathBuf,
    file: Mutex<Option<File>>,
    records: Mutex<Vec<R>>,
    /// The first write that failed.
    error: Mutex<Option<String>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl<R: Clone> Lines<R> {
    /// Appends to `path` (made if missing; an incomplete last line cut).
    fn open(path: &Path) -> Result<Lines<R>, String> {
        Ok(Lines {
            path: path.to_path_buf(),
            file: Mutex::new(Some(results_file::open_sink(path)?)),
            records: Mutex::default(),
            error: Mutex::default(),
        })
    }

    /// Lines that go nowhere (the mutants' when `--mutants` is off).
    fn none() -> Lines<R> {
        Lines {
            path: PathBuf::new(),
            file: Mutex::new(None),
            records: Mutex::default(),
            error: Mutex::default(),
        }
    }

    /// Writes `r` with `write`, at once, and keeps it. `what` names it in
    /// the error of a write that fails.
    fn append(&self, r: R, what: &str, write: impl FnOnce(&mut File, &R) -> std::io::Result<()>) {
        let mut file = lock(&self.file);
        if let Some(f) = file.as_mut()
            && let Err(e) = write(f, &r)
        {
            let msg = format!(
                "cannot write to {}: {e} ({what} and later ones are not recorded)",
                self.path.display()
            );
            eprintln!("error: {msg}");
            *file = None;
            *lock(&self.error) = Some(msg);
        }
        drop(file);
        lock(&self.records).push(r);
    }

    /// Keeps `r` without writing it.
    fn keep(&self, r: R) {
        lock(&self.records).push(r);
    }

    /// Every record kept, in the order they came.
    pub fn records(&self) -> Vec<R> {
        lock(&self.records).clone()
    }

    /// Why the file is incomplete, if a write failed.
    pub fn error(&self) -> Option<String> {
        lock(&self.error).clone()
    }
}

/// The run's results (see the module docs).
pub struct Sink {
    /// The run's id and start time, which every record written carries.
    pub run: RunStamp,
    trials: Lines<TrialRecord>,
    /// `--mutants`: the mutants' records and their file.
    pub mutants: Lines<MutantRecord>,
    /// Trials a previous run finished (`--resume`).
    done: HashMap<TrialId, TrialRecord>,
    /// Trials ignored because their tier cannot run here, with the reason.
    skipped: Mutex<Vec<TrialRecord>>,
    progress: OnceLock<Progress>,
}

impl Sink {
    /// The results file (and the mutants', with `--mutants`), and what a
    /// `--resume` finds done in it under the tests of `spec`.
    pub fn open(opts: &Options, spec: &Spec) -> Result<Sink, String> {
        let (done, resumed_run) = if opts.resume {
            results_file::previous_results(&opts.results, spec)?
        } else {
            (HashMap::new(), None)
        };
        let run = RunStamp::for_invocation(resumed_run, std::env::var(RUN_ID_VAR).ok());
        let trials = Lines::open(&opts.results)?;
        let mutants = if opts.mutants.on {
            Lines::open(&opts.mutants.results)?
        } else {
            Lines::none()
        };
        Ok(Sink {
            run,
            trials,
            mutants,
            done,
            skipped: Mutex::default(),
            progress: OnceLock::new(),
        })
    }

    /// Stores a finished trial: in memory for the summary, and as one JSON
    /// line, written at once so a crash loses nothing already finished.
    pub fn record(&self, mut r: TrialRecord) {
        self.run.stamp(&mut r);
        let what = format!("trial {}", r.trial);
        self.trials
            .append(r, &what, gridcheck_report::append_record);
        self.tick();
    }

    /// Stores a mutant's record (`--mutants`).
    pub fn record_mutant(&self, r: MutantRecord) {
        let what = format!("mutant {}", r.mutant);
        self.mutants
            .append(r, &what, gridcheck_report::append_json_line);
    }

    /// A trial a previous run finished, kept in this run's summary without
    /// being written again.
    pub fn resumed(&self, trial: &TrialId) -> Option<TrialRecord> {
        let r = self.done.get(trial)?.clone();
        self.trials.keep(r.clone());
        self.tick();
        Some(r)
    }

    /// Notes a trial ignored because its tier cannot run here.
    pub fn skipped(&self, r: TrialRecord) {
        lock(&self.skipped).push(r);
    }

    /// Records the ignored trials that were not run anyway (`--include-ignored`
    /// runs them), limited to those libtest's filters selected.
    pub fn record_skipped(&self, selected: &dyn Fn(&str) -> bool) {
        let ran: HashSet<TrialId> = self.trials.records().into_iter().map(|r| r.trial).collect();
        let skipped = std::mem::take(&mut *lock(&self.skipped));
        for r in skipped {
            if !ran.contains(&r.trial) && selected(&r.trial.to_string()) {
                self.record(r);
            }
        }
    }

    /// Every trial's record, in trial order.
    pub fn records(&self) -> Vec<TrialRecord> {
        let mut v = self.trials.records();
        v.sort_by(|a, b| a.trial.cmp(&b.trial));
        v
    }

    /// Why the results file is incomplete, if a write failed.
    pub fn write_error(&self) -> Option<String> {
        self.trials.error()
    }

    /// Shows a progress line on standard error from now on, counting
    /// `total` trials.
    pub fn show_progress(&self, total: usize) {
        let _ = self.progress.set(Progress::new(total));
    }

    fn tick(&self) {
        if let Some(line) = self.progress.get().and_then(Progress::tick) {
            eprintln!("{line}");
        }
    }
}
