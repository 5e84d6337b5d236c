//! A GPU worker that stays: one child process per device that opens the
//! device once and runs test after test, so that a trial pays for its own
//! module and launches, not for a process, a spec load and a CUDA context
//! (measured on an H100: those were more than half of the GPU tier's time).
//!
//! The harness writes a test's name on the worker's standard input and waits,
//! with the trial's timeout, for its result line (`worker::MARKER`). A trial
//! that times out kills the worker; one that ends in a CUDA error, a module
//! that fails to load or any result other than a completed run makes the
//! worker exit after answering (its context may be unusable). Either way the
//! next trial starts a fresh worker, so one trial's fault never reaches
//! another's result.
//!
//! Tests that set device runtime limits (the launch pool, the sync depth)
//! still run in a fresh process each ([`serves`]): the limits are the
//! device's, and a user's program sets them before its first launch. So do
//! host tests (their own programs), timeout classification and
//! `--fresh-context` runs, which give every GPU trial a process of its own.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::process::{Command, ExitCode};
use std::sync::Mutex;
use std::sync::mpsc::RecvTimeoutError;
use std::time::Duration;

use gridcheck_spec::{Test, TestBody};

use crate::Options;
use crate::devices::Place;
use crate::piped::Piped;
use crate::worker::{self, MARKER, WorkerResult};

/// Whether a test's GPU trial runs in the staying worker: litmus and
/// runtime tests that set no device runtime limit.
pub fn serves(test: &Test) -> bool {
    match &test.body {
        TestBody::Litmus(l) => l.limits.is_empty(),
        TestBody::Runtime(r) => r.limits.is_empty(),
        TestBody::Compile(_) | TestBody::Host(_) => false,
    }
}

/// One staying worker process.
struct Server(Piped);

/// What became of one question to a worker.
enum Answer {
    /// A result; `keep`: the worker may run the next test.
    Result {
        result: Box<WorkerResult>,
        keep: bool,
    },
    Timeout,
    /// The worker ended without a result.
    Died,
}

impl Server {
    fn start(cmd: Command) -> Result<Server, Box<WorkerResult>> {
        Piped::spawn(cmd, true).map(Server).map_err(|e| {
            Box::new(WorkerResult::Crash {
                exit: format!("not started: {e}"),
                stderr_tail: String::new(),
            })
        })
    }

    /// Asks for one test and waits at most `timeout` for its result.
    fn ask(&mut self, test: &str, timeout: Duration) -> Answer {
        let Some(stdin) = self.0.stdin.as_mut() else {
            return Answer::Died;
        };
        if writeln!(stdin, "{test}")
            .and_then(|()| stdin.flush())
            .is_err()
        {
            return Answer::Died;
        }
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.0.lines.recv_timeout(left) {
                Ok(line) => {
                    let Some(json) = line.strip_prefix(MARKER) else {
                        continue;
                    };
                    return match serde_json::from_str::<WorkerResult>(json) {
                        Ok(result) => Answer::Result {
                            keep: completed(&result),
                            result: Box::new(result),
                        },
                        Err(_) => Answer::Died,
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
        worker::crash(&status, &stderr)
    }
}

/// A result after which the worker goes on: a run that completed (its
/// histogram or outputs), or a host-side refusal.
fn completed(r: &WorkerResult) -> bool {
    matches!(
        r,
        WorkerResult::Litmus { .. } | WorkerResult::Runtime { .. } | WorkerResult::NotRun { .. }
    )
}

/// The staying workers of a run, one per device slot.
#[derive(Default)]
pub struct Servers {
    running: Mutex<HashMap<usize, Server>>,
}

impl std::fmt::Debug for Servers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Servers").finish_non_exhaustive()
    }
}

impl Servers {
    /// Runs one GPU test in the slot's staying worker (started if there is
    /// none), with `opts.timeout`. The caller holds the slot's device lock.
    pub fn run(&self, opts: &Options, slot: usize, test: &str, place: &Place) -> WorkerResult {
        let cmd = || worker::command(opts, &["--worker-serve"], place);
        self.run_with(slot, test, Duration::from_secs(opts.timeout), cmd)
    }

    fn run_with(
        &self,
        slot: usize,
        test: &str,
        timeout: Duration,
        cmd: impl FnOnce() -> Result<Command, Box<WorkerResult>>,
    ) -> WorkerResult {
        let taken = self.lock().remove(&slot);
        let mut server = match taken {
            Some(s) => s,
            None => match cmd().and_then(Server::start) {
                Ok(s) => s,
                Err(e) => return *e,
            },
        };
        match server.ask(test, timeout) {
            Answer::Result { result, keep } => {
                if keep {
                    self.lock().insert(slot, server);
                } else {
                    let _ = server.stop();
                }
                *result
            }
            Answer::Timeout => {
                let _ = server.stop();
                WorkerResult::Timeout {
                    seconds: timeout.as_secs(),
                    classified: None,
                }
            }
            Answer::Died => server.stop(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<usize, Server>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Servers {
    fn drop(&mut self) {
        for (_, s) in self.lock().drain() {
            let _ = s.stop();
        }
    }
}

/// The worker side (`--worker-serve`): opens the device once, then runs the
/// test named on each line of standard input and prints its result line,
/// until standard input ends or a run does not complete.
pub fn serve(opts: &Options) -> ExitCode {
    let (spec, gpu) = match worker::open(opts) {
        Ok(x) => x,
        Err(e) => return worker::report(&e),
    };
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let test = line.trim();
        if test.is_empty() {
            continue;
        }
        let result = worker::run_test(opts, &spec, &gpu, test);
        let code = worker::report(&result);
        if !completed(&result) {
            return code;
        }
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in worker: a shell loop that answers `notrun-<x>` with a
    /// completed result, `error` with an error (and goes on, which the
    /// harness must not rely on), sleeps on `hang` and exits on `crash`.
    fn fake() -> Result<Command, Box<WorkerResult>> {
        let script = format!(
            r#"while read t; do case "$t" in
  hang) sleep 30 ;;
  crash) echo dying >&2; exit 3 ;;
  error) echo '{m}{{"Error":{{"message":"e"}}}}' ;;
  *) echo "noise"; echo "{m}{{\"NotRun\":{{\"reason\":\"$t $$\"}}}}" ;;
esac; done"#,
            m = MARKER
        );
        let mut c = Command::new("sh");
        c.args(["-c", &script]);
        Ok(c)
    }

    fn reason(r: &WorkerResult) -> String {
        match r {
            WorkerResult::NotRun { reason } => reason.clone(),
            other => panic!("not a completed result: {other:?}"),
        }
    }

    #[test]
    fn one_worker_answers_test_after_test() {
        let s = Servers::default();
        let t = Duration::from_secs(10);
        let a = reason(&s.run_with(0, "a", t, fake));
        let b = reason(&s.run_with(0, "b", t, fake));
        assert!(a.starts_with("a ") && b.starts_with("b "), "{a} {b}");
        // The same process (its pid follows the name) answered both.
        assert_eq!(a.split(' ').nth(1), b.split(' ').nth(1));
        // Another slot has its own worker.
        let c = reason(&s.run_with(1, "c", t, fake));
        assert_ne!(a.split(' ').nth(1), c.split(' ').nth(1));
    }

    #[test]
    fn a_timeout_kills_the_worker_and_the_next_test_gets_a_new_one() {
        let s = Servers::default();
        let a = reason(&s.run_with(0, "a", Duration::from_secs(10), fake));
        let r = s.run_with(0, "hang", Duration::from_millis(300), fake);
        assert!(matches!(r, WorkerResult::Timeout { .. }), "{r:?}");
        let b = reason(&s.run_with(0, "b", Duration::from_secs(10), fake));
        assert_ne!(a.split(' ').nth(1), b.split(' ').nth(1), "a fresh worker");
    }

    #[test]
    fn a_worker_that_dies_is_a_crash_with_its_stderr_and_is_replaced() {
        let s = Servers::default();
        let t = Duration::from_secs(10);
        let a = reason(&s.run_with(0, "a", t, fake));
        let r = s.run_with(0, "crash", t, fake);
        match &r {
            WorkerResult::Crash { exit, stderr_tail } => {
                assert!(exit.contains('3'), "{exit}");
                assert!(stderr_tail.contains("dying"), "{stderr_tail}");
            }
            other => panic!("{other:?}"),
        }
        let b = reason(&s.run_with(0, "b", t, fake));
        assert_ne!(a.split(' ').nth(1), b.split(' ').nth(1));
    }

    #[test]
    fn after_an_error_the_worker_is_not_reused() {
        let s = Servers::default();
        let t = Duration::from_secs(10);
        let a = reason(&s.run_with(0, "a", t, fake));
        let r = s.run_with(0, "error", t, fake);
        assert!(matches!(r, WorkerResult::Error { .. }), "{r:?}");
        let b = reason(&s.run_with(0, "b", t, fake));
        assert_ne!(a.split(' ').nth(1), b.split(' ').nth(1));
    }

    #[test]
    fn a_worker_that_cannot_start_is_a_crash() {
        let s = Servers::default();
        let r = s.run_with(0, "a", Duration::from_secs(1), || {
            Ok(Command::new("/nonexistent/gridcheck-worker"))
        });
        assert!(
            matches!(&r, WorkerResult::Crash { exit, .. } if exit.starts_with("not started")),
            "{r:?}"
        );
    }
}
