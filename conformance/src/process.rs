//! Worker processes, seen from the harness: a GPU run or a model
//! exploration happens in a child process (`<harness> --worker`,
//! `worker.rs`), so that a hung kernel, an illegal address that leaves the
//! CUDA context unusable, a module that fails to load or an exploration
//! that does not finish ends only its own trial.
//!
//! One mechanism for every job: the harness writes a [`Job`] as one JSON
//! line on the worker's standard input and waits, with the job's timeout,
//! for its result line ([`crate::job::MARKER`]). A worker that stays
//! ([`Servers`], one per device) opens the device once and runs test after
//! test, so that a trial pays for its own module and launches, not for a
//! process and a CUDA context (measured on an H100: those were more than
//! half of the GPU tier's time). A trial that times out kills the worker;
//! one that ends in a CUDA error, a stall, a module that fails to load or
//! any result other than a completed run makes the worker exit after
//! answering (its context may be unusable). Either way the next trial
//! starts a fresh worker, so one trial's fault never reaches another's
//! result. A worker of its own ([`run_once`]) gets one job and the end of
//! its input: the tests that set device runtime limits (the limits are the
//! device's, set before a program's first launch), `--fresh-context`, the
//! model, the mutants and the watched reruns of timed-out trials.

use std::collections::HashMap;
use std::io::Write;
use std::process::Command;
use std::sync::Mutex;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use crate::devices::Place;
use crate::job::{Job, MARKER, WorkerResult};
use gridcheck_child::Piped;

/// The flag that makes the harness's executable a worker.
pub const WORKER_FLAG: &str = "--worker";

/// How long a worker that answered may take to exit before it is killed
/// (its CUDA context may wait, at exit, on a kernel that never ends).
pub const EXIT_GRACE: Duration = Duration::from_secs(2);

/// What makes a worker's command for a device: [`command`], or a stand-in
/// worker in tests.
pub type WorkerCommand = fn(&Place) -> Result<Command, Box<WorkerResult>>;

/// The harness's own executable as a worker (`gridcheck run --worker`,
/// `gridcheck_child::own_command`), on the device `place` gives it.
pub fn command(place: &Place) -> Result<Command, Box<WorkerResult>> {
    let mut cmd = gridcheck_child::own_command().map_err(|e| {
        Box::new(WorkerResult::Crash {
            exit: "not started".into(),
            stderr_tail: format!("cannot find the harness executable: {e}"),
        })
    })?;
    cmd.arg(WORKER_FLAG)
        // Load errors (a missing symbol, a CDP version mismatch) at load
        // time, not at first launch.
        .env("CUDA_MODULE_LOADING", "EAGER")
        .envs(place.env.iter().cloned());
    Ok(cmd)
}

/// One worker process.
struct Worker(Piped);

/// What became of one job sent to a worker.
enum Answer {
    /// A result; `keep`: the worker may run the next job.
    Result {
        result: Box<WorkerResult>,
        keep: bool,
    },
    Timeout,
    /// The worker ended without a result.
    Died,
}

impl Worker {
    fn start(cmd: Command) -> Result<Worker, Box<WorkerResult>> {
        Piped::spawn(cmd, true).map(Worker).map_err(|e| {
            Box::new(WorkerResult::Crash {
                exit: format!("not started: {e}"),
                stderr_tail: String::new(),
            })
        })
    }

    /// Sends one job and waits at most its timeout for the result.
    fn ask(&mut self, job: &Job) -> Answer {
        let Some(stdin) = self.0.stdin.as_mut() else {
            return Answer::Died;
        };
        if writeln!(stdin, "{}", job.line())
            .and_then(|()| stdin.flush())
            .is_err()
        {
            return Answer::Died;
        }
        let deadline = Instant::now() + Duration::from_secs(job.timeout_s());
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.0.lines.recv_timeout(left) {
                Ok(line) if !line.starts_with(MARKER) => continue,
                Ok(line) => {
                    return match WorkerResult::of_line(&line) {
                        Some(result) => Answer::Result {
                            keep: result.completed(),
                            result: Box::new(result),
                        },
                        None => Answer::Died,
                    };
                }
                Err(RecvTimeoutError::Timeout) => return Answer::Timeout,
                Err(RecvTimeoutError::Disconnected) => return Answer::Died,
            }
        }
    }

    /// Ends the worker and says how it ended.
    fn stop(mut self) -> WorkerResult {
        let (status, stderr) = self.0.stop();
        crash(&status, &stderr)
    }

    /// Closes the worker's input and lets it exit, killing it after
    /// [`EXIT_GRACE`].
    fn finish(mut self) {
        let _ = self.0.finish(EXIT_GRACE);
    }
}

/// Asks `worker` for `job`: the result, and the worker when it may go on.
fn ask(mut worker: Worker, job: &Job) -> (WorkerResult, Option<Worker>) {
    match worker.ask(job) {
        Answer::Result { result, keep } if keep => (*result, Some(worker)),
        Answer::Result { result, .. } => {
            let _ = worker.stop();
            (*result, None)
        }
        Answer::Timeout => {
            let _ = worker.stop();
            let timeout = WorkerResult::Timeout {
                seconds: job.timeout_s(),
                classified: None,
            };
            (timeout, None)
        }
        Answer::Died => (worker.stop(), None),
    }
}

/// Runs one job in a worker of its own, on the device `place` gives it.
pub fn run_once(job: &Job, place: &Place) -> WorkerResult {
    run_once_with(job, || command(place))
}

/// [`run_once`] with the worker's command made by `cmd` (a stand-in
/// worker in tests).
pub(crate) fn run_once_with(
    job: &Job,
    cmd: impl FnOnce() -> Result<Command, Box<WorkerResult>>,
) -> WorkerResult {
    let worker = match cmd().and_then(Worker::start) {
        Ok(w) => w,
        Err(e) => return *e,
    };
    let (result, worker) = ask(worker, job);
    if let Some(w) = worker {
        w.finish();
    }
    result
}

/// The staying workers of a run, one per device slot.
#[derive(Default)]
pub struct Servers {
    running: Mutex<HashMap<usize, Worker>>,
}

impl std::fmt::Debug for Servers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Servers").finish_non_exhaustive()
    }
}

impl Servers {
    /// Runs one job in the slot's staying worker (started by `cmd` if there
    /// is none). The caller holds the slot's device lock.
    pub(crate) fn run_with(
        &self,
        slot: usize,
        job: &Job,
        cmd: impl FnOnce() -> Result<Command, Box<WorkerResult>>,
    ) -> WorkerResult {
        let taken = self.lock().remove(&slot);
        let worker = match taken {
            Some(w) => w,
            None => match cmd().and_then(Worker::start) {
                Ok(w) => w,
                Err(e) => return *e,
            },
        };
        let (result, worker) = ask(worker, job);
        if let Some(w) = worker {
            self.lock().insert(slot, w);
        }
        result
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<usize, Worker>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Servers {
    fn drop(&mut self) {
        for (_, w) in self.lock().drain() {
            let _ = w.stop();
        }
    }
}

/// A child that ended without a result: how it ended and the end of what it
/// printed on standard error.
pub(crate) fn crash(
    status: &Result<std::process::ExitStatus, String>,
    stderr: &str,
) -> crate::job::WorkerResult {
    let tail: Vec<&str> = stderr.lines().rev().take(8).collect();
    crate::job::WorkerResult::Crash {
        exit: match status {
            Ok(st) => st.to_string(),
            Err(e) => e.clone(),
        },
        stderr_tail: tail.into_iter().rev().collect::<Vec<_>>().join("\n"),
    }
}

#[cfg(test)]
mod tests;
