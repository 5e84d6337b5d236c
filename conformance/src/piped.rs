//! A child process whose standard output is read line by line on a thread
//! of its own (so that a caller can wait for a line with a timeout) and
//! whose standard error is kept, its last [`STDERR_KEEP`] bytes or more:
//! the staying GPU worker (`server.rs`), a campaign's batch workers
//! (`campaign/run.rs`) and the one-job workers and host programs
//! (`worker::run_with_timeout`) talk to their children this way.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};

/// How much of standard error is kept (at least; at most twice as much).
pub const STDERR_KEEP: usize = 16 * 1024;

/// A running child and what it printed.
pub struct Piped {
    pub child: Child,
    /// Its standard input, when it was asked for.
    pub stdin: Option<ChildStdin>,
    /// Its standard output, line by line; closed when the child ends.
    pub lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    readers: Vec<std::thread::JoinHandle<()>>,
}

impl Piped {
    /// Starts `cmd` with its output piped (and its input, if `stdin`).
    pub fn spawn(mut cmd: Command, stdin: bool) -> std::io::Result<Piped> {
        cmd.stdin(if stdin { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn()?;
        let (tx, lines) = channel();
        let mut readers = Vec::new();
        if let Some(out) = child.stdout.take() {
            readers.push(std::thread::spawn(move || {
                for line in BufReader::new(out).lines().map_while(Result::ok) {
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            }));
        }
        let stderr = Arc::new(Mutex::new(String::new()));
        if let Some(mut err) = child.stderr.take() {
            let keep = Arc::clone(&stderr);
            readers.push(std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = err.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    let mut s = keep.lock().unwrap_or_else(|p| p.into_inner());
                    s.push_str(&String::from_utf8_lossy(&buf[..n]));
                    if s.len() > 2 * STDERR_KEEP {
                        let cut = s.len() - STDERR_KEEP;
                        let cut = (cut..s.len()).find(|&i| s.is_char_boundary(i)).unwrap_or(0);
                        s.drain(..cut);
                    }
                }
            }));
        }
        let stdin = child.stdin.take();
        Ok(Piped {
            child,
            stdin,
            lines,
            stderr,
            readers,
        })
    }

    /// Kills the child (if it still runs), waits for it and its readers,
    /// and says how it ended and what it printed on standard error.
    pub fn stop(&mut self) -> (Result<std::process::ExitStatus, String>, String) {
        let _ = self.child.kill();
        self.end()
    }

    /// Waits for the child to end by itself, then as [`Piped::stop`]; the
    /// lines it printed stay in [`Piped::lines`].
    pub fn end(&mut self) -> (Result<std::process::ExitStatus, String>, String) {
        drop(self.stdin.take());
        let status = self.child.wait().map_err(|e| e.to_string());
        // The readers end when the pipes close; a grandchild that holds them
        // open must not hold the caller too, so they get a second at most.
        let until = std::time::Instant::now() + std::time::Duration::from_secs(1);
        while self.readers.iter().any(|r| !r.is_finished()) && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let stderr = self.stderr.lock().map(|s| s.clone()).unwrap_or_default();
        (status, stderr)
    }
}
