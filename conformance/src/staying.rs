//! Staying programs other than the harness's own workers: a program
//! started once with a flag (the library tier's `--serve`,
//! kernels/cccl/library.cuh) prints a ready line once its device is ready,
//! then answers one request a line with one line. It makes its CUDA
//! context and loads its modules once, not once a request (a process and a
//! context cost about 0.34 s on the H200, most of a small library case).
//! A device slot keeps the staying programs of its last [`KEEP`] binaries
//! (the harness's threads queue trials of neighbouring binaries for one
//! device, in no fixed order); a request for another binary ends the least
//! recently asked.
//!
//! This module knows the protocol, not the answers: what a line means, and
//! whether the program may answer the next request after it, is the
//! caller's (`library/exec.rs`). A request that is not answered within its
//! timeout kills the program; the next request starts a fresh one.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::mpsc::RecvTimeoutError;
use std::time::Duration;

use gridcheck_child::Piped;

/// The staying programs a device slot keeps at most.
pub const KEEP: usize = 4;

/// How to start a staying program.
pub struct Start<'a> {
    pub exe: &'a Path,
    /// The flag that makes it stay (`--serve`).
    pub flag: &'a str,
    /// The line it prints when ready.
    pub ready: &'a str,
    pub env: &'a [(String, String)],
}

/// What came of one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Its line, and how many requests the program answered before it.
    Line(String, u64),
    /// The program's first line was not the ready line: that line is its
    /// answer to being started (not run here, or a program that does not
    /// stay, which the caller may [`Stayers::refuse`]).
    Started(String),
    /// No line within the timeout: the program was killed.
    Timeout,
    /// It ended without a line: how it exited, its exit code, the end of
    /// its standard error and whether it had printed its ready line.
    Died {
        exit: String,
        code: Option<i32>,
        stderr: String,
        ready: bool,
    },
}

struct Staying {
    exe: PathBuf,
    piped: Piped,
    answered: u64,
}

/// The staying programs of a run, per device slot the least recently asked
/// first, and the binaries found not to stay.
#[derive(Default)]
pub struct Stayers {
    running: Mutex<HashMap<usize, Vec<Staying>>>,
    refused: Mutex<HashSet<PathBuf>>,
}

impl std::fmt::Debug for Stayers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stayers").finish_non_exhaustive()
    }
}

impl Stayers {
    /// Sends `request` to the slot's staying program of `start.exe`
    /// (started, and waited for at most `timeout`, when there is none) and
    /// waits at most `timeout` for its line. The program stays for the next
    /// request after a [`Reply::Line`] (the caller [`Stayers::end`]s it
    /// when the line says it ends); after any other reply it is gone.
    pub fn ask(&self, slot: usize, start: &Start, request: &str, timeout: Duration) -> Reply {
        let taken = {
            let mut running = lock(&self.running);
            let kept = running.entry(slot).or_default();
            kept.iter()
                .position(|s| s.exe == start.exe)
                .map(|i| kept.remove(i))
        };
        let mut s = match taken {
            Some(s) => s,
            None => match begin(start, timeout) {
                Ok(s) => s,
                Err(reply) => return reply,
            },
        };
        let sent = s
            .piped
            .stdin
            .as_mut()
            .map(|stdin| writeln!(stdin, "{request}").and_then(|()| stdin.flush()));
        let line = match sent {
            Some(Ok(())) => s.piped.line(timeout),
            _ => Err(RecvTimeoutError::Disconnected),
        };
        match line {
            Ok(l) => {
                let before = s.answered;
                s.answered += 1;
                let evicted = {
                    let mut running = lock(&self.running);
                    let kept = running.entry(slot).or_default();
                    kept.push(s);
                    let over = kept.len().saturating_sub(KEEP);
                    kept.drain(..over).collect::<Vec<_>>()
                };
                evicted.into_iter().for_each(finish);
                Reply::Line(l, before)
            }
            Err(RecvTimeoutError::Timeout) => {
                let _ = s.piped.stop();
                Reply::Timeout
            }
            Err(RecvTimeoutError::Disconnected) => died(&mut s.piped, true),
        }
    }

    /// Ends the slot's staying program of `exe` (its answer says it
    /// exits).
    pub fn end(&self, slot: usize, exe: &Path) {
        let ended = {
            let mut running = lock(&self.running);
            let kept = running.entry(slot).or_default();
            kept.iter()
                .position(|s| s.exe == exe)
                .map(|i| kept.remove(i))
        };
        ended.into_iter().for_each(finish);
    }

    /// Remembers that `exe` does not stay.
    pub fn refuse(&self, exe: &Path) {
        lock(&self.refused).insert(exe.to_path_buf());
    }

    /// Whether `exe` was found not to stay.
    pub fn refused(&self, exe: &Path) -> bool {
        lock(&self.refused).contains(exe)
    }
}

impl Drop for Stayers {
    fn drop(&mut self) {
        for (_, kept) in lock(&self.running).drain() {
            kept.into_iter().for_each(finish);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Starts the program and waits at most `timeout` for its ready line.
fn begin(start: &Start, timeout: Duration) -> Result<Staying, Reply> {
    let mut cmd = Command::new(start.exe);
    cmd.arg(start.flag).envs(start.env.iter().cloned());
    let mut piped = Piped::spawn(cmd, true).map_err(|e| Reply::Died {
        exit: format!("not started: {e}"),
        code: None,
        stderr: String::new(),
        ready: false,
    })?;
    match piped.line(timeout) {
        Ok(l) if l.trim() == start.ready => Ok(Staying {
            exe: start.exe.to_path_buf(),
            piped,
            answered: 0,
        }),
        Ok(l) => {
            let _ = piped.stop();
            Err(Reply::Started(l))
        }
        Err(RecvTimeoutError::Timeout) => {
            let _ = piped.stop();
            Err(Reply::Timeout)
        }
        Err(RecvTimeoutError::Disconnected) => Err(died(&mut piped, false)),
    }
}

fn died(piped: &mut Piped, ready: bool) -> Reply {
    let (status, stderr) = piped.end();
    Reply::Died {
        exit: match &status {
            Ok(s) => s.to_string(),
            Err(e) => e.clone(),
        },
        code: status.as_ref().ok().and_then(|s| s.code()),
        stderr,
        ready,
    }
}

/// Closes a staying program's input and lets it exit, killing it after
/// the harness's grace for a worker's exit.
fn finish(mut s: Staying) {
    let _ = s.piped.finish(crate::process::EXIT_GRACE);
}

#[cfg(test)]
mod tests;
