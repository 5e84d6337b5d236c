//! A child process whose standard output is read line by line on a thread
//! of its own (so that a caller can wait for a line with a timeout) and
//! whose standard error is kept, its last [`STDERR_KEEP`] bytes or more:
//! the harness's workers and host tests' programs (`conformance`), a
//! campaign's batch workers (`gridcheck-campaign`) and nvcc under a timeout
//! ([`run_with_timeout`]) talk to their children this way, through this one
//! crate. A program that is its own worker starts it with [`own_command`]:
//! the executable and the arguments that select the command again
//! (`gridcheck run`, `gridcheck campaign`; none for a binary of its own).

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How much of standard error is kept (at least; at most twice as much).
pub const STDERR_KEEP: usize = 16 * 1024;

/// The last `n` bytes of `s`, or a little less, so as to start at a
/// character: the end of a child's output that a message keeps.
pub fn last_bytes(s: &str, n: usize) -> &str {
    let start = s.len().saturating_sub(n);
    let start = (start..=s.len())
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(s.len());
    &s[start..]
}

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
                        let cut = s.len() - last_bytes(&s, STDERR_KEEP).len();
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

    /// The next line of standard output within `timeout`.
    pub fn line(&self, timeout: Duration) -> Result<String, RecvTimeoutError> {
        self.lines.recv_timeout(timeout)
    }

    /// Kills the child (if it still runs), waits for it and its readers,
    /// and says how it ended and what it printed on standard error.
    pub fn stop(&mut self) -> (Result<std::process::ExitStatus, String>, String) {
        let _ = self.child.kill();
        self.end()
    }

    /// Closes the child's input and lets it exit, killing it after
    /// `grace` (a CUDA program may wait, at exit, on a kernel that never
    /// ends); says how it ended, as [`Piped::stop`].
    pub fn finish(
        &mut self,
        grace: Duration,
    ) -> (Result<std::process::ExitStatus, String>, String) {
        drop(self.stdin.take());
        let until = Instant::now() + grace;
        while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        self.stop()
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

/// Runs a command with piped output and a timeout: its exit status (or why
/// it could not be started or waited for), standard output and the end of
/// standard error; `None` when it was killed after `timeout` seconds.
pub fn run_with_timeout(
    cmd: Command,
    timeout: u64,
) -> Option<(Result<std::process::ExitStatus, String>, String, String)> {
    let mut p = match Piped::spawn(cmd, false) {
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
    let killed = loop {
        match p.child.try_wait() {
            Ok(Some(_)) | Err(_) => break false,
            Ok(None) if Instant::now() >= deadline => {
                let _ = p.child.kill();
                break true;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
        }
    };
    let (status, stderr) = p.end();
    if killed {
        return None;
    }
    let stdout: String = p.lines.try_iter().map(|l| l + "\n").collect();
    Some((
        status.map_err(|e| format!("cannot wait for it: {e}")),
        stdout,
        stderr,
    ))
}

/// The arguments before a worker's own (see [`own_command`]); set once.
static OWN_ARGS: OnceLock<Vec<String>> = OnceLock::new();

/// Says which arguments make this process's executable the command that is
/// running now (`["run"]` for `gridcheck run`), for the workers it starts;
/// set at most once, before any worker starts (a later call is ignored).
pub fn set_own_args(args: &[&str]) {
    let _ = OWN_ARGS.set(args.iter().map(|a| a.to_string()).collect());
}

/// This process's executable as the command that is running now: the
/// arguments of [`set_own_args`] given, so that a worker's arguments
/// follow.
pub fn own_command() -> std::io::Result<Command> {
    let mut cmd = Command::new(std::env::current_exe()?);
    cmd.args(OWN_ARGS.get().map(Vec::as_slice).unwrap_or_default());
    Ok(cmd)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.args(["-c", script]);
        c
    }

    #[test]
    fn a_command_past_its_timeout_is_killed_and_one_in_time_gives_its_output() {
        let start = Instant::now();
        assert!(run_with_timeout(sh("echo noise; exec sleep 30"), 1).is_none());
        assert!(start.elapsed() < Duration::from_secs(10));
        let (status, stdout, _) =
            run_with_timeout(sh("echo done; echo err >&2"), 5).expect("exited");
        assert!(status.is_ok_and(|s| s.success()) && stdout == "done\n");
        let (status, _, stderr) = run_with_timeout(sh("echo bad >&2; exit 4"), 5).unwrap();
        assert!(status.is_ok_and(|s| s.code() == Some(4)) && stderr.contains("bad"));
    }

    #[test]
    fn the_last_bytes_start_at_a_character() {
        assert_eq!(last_bytes("abcdef", 3), "def");
        assert_eq!(last_bytes("ab", 5), "ab");
        // 'é' is two bytes: a cut inside it moves past it.
        assert_eq!(last_bytes("aé", 1), "");
        assert_eq!(last_bytes("aé", 2), "é");
    }
}
