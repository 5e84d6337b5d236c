//! A child process whose standard output is read line by line on a thread
//! of its own (a caller waits for a line with a timeout) and whose standard
//! error is kept, its last [`STDERR_KEEP`] bytes or more: the batch
//! workers (`runner.rs`) and nvcc (`compile.rs`, [`run_with_timeout`]).
//!
//! The harness has the same mechanism in `conformance/src/piped.rs`, a
//! private module of the harness's crate; the campaign, a crate of its own
//! that does not depend on the harness, keeps this small copy.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How much of standard error is kept (at least; at most twice as much).
pub const STDERR_KEEP: usize = 16 * 1024;

/// A running child and what it printed.
pub struct Piped {
    pub child: Child,
    /// Its standard output, line by line; closed when the child ends.
    pub lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    readers: Vec<std::thread::JoinHandle<()>>,
}

impl Piped {
    /// Starts `cmd` with its output piped and no input.
    pub fn spawn(mut cmd: Command) -> std::io::Result<Piped> {
        cmd.stdin(Stdio::null())
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
        Ok(Piped {
            child,
            lines,
            stderr,
            readers,
        })
    }

    /// The next line of standard output within `timeout`.
    pub fn line(&self, timeout: Duration) -> Result<String, RecvTimeoutError> {
        self.lines.recv_timeout(timeout)
    }

    /// Waits for the child to end, and says how it ended and what it
    /// printed on standard error.
    pub fn end(&mut self) -> (Result<ExitStatus, String>, String) {
        let status = self.child.wait().map_err(|e| e.to_string());
        // The readers end when the pipes close; a grandchild that holds them
        // open must not hold the caller too, so they get a second at most.
        let until = Instant::now() + Duration::from_secs(1);
        while self.readers.iter().any(|r| !r.is_finished()) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        let stderr = self.stderr.lock().map(|s| s.clone()).unwrap_or_default();
        (status, stderr)
    }

    /// Kills the child (if it still runs), then as [`Piped::end`].
    pub fn stop(&mut self) -> (Result<ExitStatus, String>, String) {
        let _ = self.child.kill();
        self.end()
    }
}

/// Runs `cmd` for at most `timeout` seconds: its exit status (or why it
/// could not be started or waited for), standard output and the end of
/// standard error; `None` when it was killed at the timeout.
pub fn run_with_timeout(
    cmd: Command,
    timeout: u64,
) -> Option<(Result<ExitStatus, String>, String, String)> {
    let mut p = match Piped::spawn(cmd) {
        Ok(p) => p,
        Err(e) => {
            return Some((
                Err(format!("not started: {e}")),
                String::new(),
                String::new(),
            ));
        }
    };
    let deadline = Instant::now() + Duration::from_secs(timeout);
    let mut stdout = String::new();
    let killed = loop {
        while let Ok(l) = p.lines.try_recv() {
            stdout.push_str(&l);
            stdout.push('\n');
        }
        match p.child.try_wait() {
            Ok(Some(_)) | Err(_) => break false,
            Ok(None) if Instant::now() >= deadline => {
                let _ = p.child.kill();
                break true;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
        }
    };
    let (status, stderr) = p.end();
    while let Ok(l) = p.lines.try_recv() {
        stdout.push_str(&l);
        stdout.push('\n');
    }
    (!killed).then_some((status, stdout, stderr))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_is_read_line_by_line_and_killed_at_its_timeout() {
        let mut c = Command::new("sh");
        c.args(["-c", "echo one; echo two >&2; exit 3"]);
        let (st, out, err) = run_with_timeout(c, 10).expect("ends in time");
        assert_eq!(st.unwrap().code(), Some(3));
        assert_eq!((out.as_str(), err.as_str()), ("one\n", "two\n"));
        let mut c = Command::new("sh");
        c.args(["-c", "sleep 30"]);
        let started = Instant::now();
        assert!(run_with_timeout(c, 1).is_none());
        assert!(started.elapsed() < Duration::from_secs(10));
        let e = run_with_timeout(Command::new("/nonexistent/x"), 1).unwrap();
        assert!(e.0.unwrap_err().starts_with("not started"));
    }
}
