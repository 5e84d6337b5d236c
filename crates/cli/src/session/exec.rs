//! A session's steps run: each command in the checkout, in a process group
//! of its own (so that a step past its limit is ended whole: SIGTERM, then
//! SIGKILL ten seconds later), its output into the step's log
//! (`<work>/<key>.log`) and its last lines shown; the state of every step
//! in `<work>/session-state.json` after each command; the packs made, and
//! what `$OUT` holds checked against what a GPU machine gives back.

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::load::Session;
use super::plan::{PlannedCommand, PlannedStep};

/// The state file, in the work folder.
pub const STATE: &str = "session-state.json";
/// Seconds between SIGTERM and SIGKILL for a step past its limit.
const GRACE_S: u64 = 10;
/// What a GPU machine gives back of `$OUT`.
const MAX_FILES: usize = 8;
const MAX_FILE_BYTES: u64 = 16 << 20;
const MAX_DEPTH: usize = 2;

/// Every step's state, by key.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct State {
    pub steps: BTreeMap<String, StepState>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepState {
    /// Every command ran to its end within the step's limit.
    pub finished: bool,
    /// Seconds since the epoch when it started.
    pub started: u64,
    pub seconds: f64,
    pub commands: Vec<CommandState>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CommandState {
    pub argv: Vec<String>,
    /// Its exit code; `None` when it was killed or not started.
    pub exit_code: Option<i32>,
    pub ms: u64,
    /// Why it did not end by itself, if it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
}

/// `--dry-run`: what each step would run.
pub fn print_plan(s: &Session, steps: &[PlannedStep]) {
    println!("{}: {} step(s)", s.file.display(), steps.len());
    for st in steps {
        println!("== {} (limit {} s)", st.key, st.limit_s);
        for c in &st.commands {
            let env: Vec<String> = c.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let to = c.stdout.as_ref().map(|p| format!(" > {}", p.display()));
            let again = c
                .unfinished_on_exit
                .map(|n| format!("   (exit {n}: runs again)"));
            println!(
                "  $ {}{}{}{}",
                prefixed(&env),
                c.argv.join(" "),
                to.unwrap_or_default(),
                again.unwrap_or_default()
            );
        }
        for p in &st.pack {
            println!("  pack {}", p.display());
        }
    }
}

fn prefixed(env: &[String]) -> String {
    if env.is_empty() {
        String::new()
    } else {
        format!("{} ", env.join(" "))
    }
}

/// Runs the steps (those finished before are skipped unless `again`);
/// `Ok(false)` when one did not finish (killed at its limit, or a command
/// said it has work left).
pub fn run(
    s: &Session,
    steps: &[PlannedStep],
    work: &Path,
    root: &Path,
    again: bool,
) -> Result<bool, String> {
    std::fs::create_dir_all(work).map_err(|e| format!("cannot create {}: {e}", work.display()))?;
    let state_file = work.join(STATE);
    let mut state = read_state(&state_file)?;
    let out = std::env::var_os("OUT")
        .filter(|o| !o.is_empty())
        .map(PathBuf::from);
    let packs = out.clone().unwrap_or_else(|| work.join("packed"));
    std::fs::create_dir_all(&packs)
        .map_err(|e| format!("cannot create {}: {e}", packs.display()))?;
    println!(
        "{}: {} step(s) in {}",
        s.file.display(),
        steps.len(),
        work.display()
    );
    let mut all = true;
    let session_start = Instant::now();
    for st in steps {
        if let Some(limit) = s.limit_s {
            let left = limit.saturating_sub(session_start.elapsed().as_secs());
            if st.limit_s > left {
                println!(
                    "== {}: not started: its limit ({} s) is past what is left of the \
                     session's ({left} of {limit} s); the next call runs it",
                    st.key, st.limit_s
                );
                all = false;
                continue;
            }
        }
        if let Some(done) = state.steps.get(&st.key).filter(|d| d.finished && !again) {
            println!(
                "== {}: finished before ({:.0} s; exit codes {}), skipped (--again runs it)",
                st.key,
                done.seconds,
                codes(&done.commands)
            );
            continue;
        }
        let finished = run_step(st, work, root, &mut state, &state_file)?;
        all &= finished;
        if finished && !st.pack.is_empty() {
            let mut what = st.pack.clone();
            what.push(work.join(format!("{}.log", st.key)));
            pack(work, &what, &packs.join(format!("{}.tar.xz", st.key)), true)?;
        }
    }
    if let Some(out) = &out {
        let everything = vec![work.to_path_buf()];
        pack(work, &everything, &out.join("session.tar.xz"), false)?;
        std::fs::copy(&state_file, out.join("session.json"))
            .map_err(|e| format!("cannot copy the state into {}: {e}", out.display()))?;
        for w in past_limits(out) {
            println!("warning: {w}");
        }
    }
    Ok(all)
}

fn codes(cs: &[CommandState]) -> String {
    let v: Vec<String> = cs
        .iter()
        .map(|c| c.exit_code.map_or("-".into(), |e| e.to_string()))
        .collect();
    v.join(",")
}

fn read_state(file: &Path) -> Result<State, String> {
    match std::fs::read_to_string(file) {
        Ok(t) => serde_json::from_str(&t).map_err(|e| {
            format!(
                "{}: not a session state ({e}); remove it to start again",
                file.display()
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(State::default()),
        Err(e) => Err(format!("cannot read {}: {e}", file.display())),
    }
}

fn write_state(file: &Path, state: &State) -> Result<(), String> {
    let text = serde_json::to_string_pretty(state).map_err(|e| e.to_string())?;
    std::fs::write(file, text + "\n").map_err(|e| format!("cannot write {}: {e}", file.display()))
}

/// One step's commands under its limit; whether every one ran to its end
/// and none said the step has work left (`unfinished_on_exit`).
fn run_step(
    st: &PlannedStep,
    work: &Path,
    root: &Path,
    state: &mut State,
    state_file: &Path,
) -> Result<bool, String> {
    let step_dir = work.join(&st.key);
    std::fs::create_dir_all(&step_dir)
        .map_err(|e| format!("cannot create {}: {e}", step_dir.display()))?;
    let log = work.join(format!("{}.log", st.key));
    println!("== {} (limit {} s)", st.key, st.limit_s);
    let start = Instant::now();
    let deadline = start + Duration::from_secs(st.limit_s);
    let started = gridcheck_report::now_secs();
    let mut record = StepState {
        finished: false,
        started,
        seconds: 0.0,
        commands: Vec::new(),
    };
    let mut finished = true;
    for c in &st.commands {
        let r = run_command(c, root, &log, deadline, st.tail);
        let ended_early = r.ended.is_some();
        let stop = c.stop_on_error && r.exit_code != Some(0);
        if c.unfinished_on_exit.is_some() && r.exit_code == c.unfinished_on_exit {
            println!("  (its exit code says the step has work left: unfinished_on_exit)");
            finished = false;
        }
        record.commands.push(r);
        record.seconds = start.elapsed().as_secs_f64();
        state.steps.insert(st.key.clone(), record.clone());
        write_state(state_file, state)?;
        if ended_early {
            finished = false;
            break;
        }
        if stop {
            println!("  (its exit code stops the step: stop_on_error)");
            break;
        }
    }
    // A step that wrote nothing in its own folder leaves none.
    let _ = std::fs::remove_dir(&step_dir);
    record.finished = finished;
    record.seconds = start.elapsed().as_secs_f64();
    state.steps.insert(st.key.clone(), record.clone());
    write_state(state_file, state)?;
    println!(
        "== {}: {} in {:.0} s (exit codes {})",
        st.key,
        if finished {
            "finished"
        } else {
            "NOT finished (it runs again next time)"
        },
        record.seconds,
        codes(&record.commands)
    );
    Ok(finished)
}

/// Runs one command until it ends or `deadline`; shows its last lines.
fn run_command(
    c: &PlannedCommand,
    root: &Path,
    log: &Path,
    deadline: Instant,
    tail: usize,
) -> CommandState {
    let start = Instant::now();
    let mut st = CommandState {
        argv: c.argv.clone(),
        exit_code: None,
        ms: 0,
        ended: None,
    };
    println!("$ {}", c.argv.join(" "));
    let from = std::fs::metadata(log).map_or(0, |m| m.len());
    match spawn(c, root, log) {
        Err(e) => st.ended = Some(e),
        Ok(mut child) => {
            let pid = child.id();
            loop {
                match child.try_wait() {
                    Ok(Some(status)) => {
                        st.exit_code = status.code();
                        if st.exit_code.is_none() {
                            st.ended = Some(format!("ended by a signal ({status})"));
                        }
                        break;
                    }
                    Ok(None) if Instant::now() >= deadline => {
                        end_group(pid, &mut child);
                        st.ended = Some("killed at the step's time limit".into());
                        break;
                    }
                    Ok(None) => std::thread::sleep(Duration::from_millis(50)),
                    Err(e) => {
                        st.ended = Some(format!("cannot wait for it: {e}"));
                        break;
                    }
                }
            }
        }
    }
    st.ms = start.elapsed().as_millis() as u64;
    for line in last_lines(log, from, tail) {
        println!("  {line}");
    }
    let how = st
        .ended
        .clone()
        .unwrap_or_else(|| format!("exit {}", st.exit_code.unwrap_or(-1)));
    println!("  -> {how}, {} ms", st.ms);
    st
}

fn spawn(c: &PlannedCommand, root: &Path, log: &Path) -> Result<std::process::Child, String> {
    let open = || {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .map_err(|e| format!("cannot open {}: {e}", log.display()))
    };
    let stdout = match &c.stdout {
        Some(p) => {
            std::fs::File::create(p).map_err(|e| format!("cannot create {}: {e}", p.display()))?
        }
        None => open()?,
    };
    let mut cmd = Command::new(&c.argv[0]);
    cmd.args(&c.argv[1..])
        .current_dir(root)
        // $OUT is the session's: a command gets one only from its step.
        .env_remove("OUT")
        .envs(&c.env)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(open()?)
        .process_group(0);
    cmd.spawn()
        .map_err(|e| format!("cannot start `{}`: {e}", c.argv[0]))
}

/// Ends a command's process group: SIGTERM, then SIGKILL after the grace.
fn end_group(pid: u32, child: &mut std::process::Child) {
    let signal = |sig: &str| {
        let _ = Command::new("kill")
            .args([sig, "--", &format!("-{pid}")])
            .stderr(Stdio::null())
            .status();
    };
    signal("-TERM");
    let grace = Instant::now() + Duration::from_secs(GRACE_S);
    while Instant::now() < grace {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    signal("-KILL");
    let _ = child.kill();
    let _ = child.wait();
}

/// The last `n` lines written to `log` after byte `from`.
fn last_lines(log: &Path, from: u64, n: usize) -> Vec<String> {
    let mut text = String::new();
    if let Ok(mut f) = std::fs::File::open(log) {
        let len = f.metadata().map_or(0, |m| m.len());
        // At most the last 64 KiB: enough for a tail.
        let at = from.max(len.saturating_sub(64 << 10));
        let mut bytes = Vec::new();
        if f.seek(SeekFrom::Start(at)).is_ok() && f.read_to_end(&mut bytes).is_ok() {
            text = String::from_utf8_lossy(&bytes).into_owned();
        }
    }
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[lines.len().saturating_sub(n)..].to_vec()
}

/// Packs `what` (paths under `work`; those missing are left out) into
/// `dest` with tar and xz, then removes them when `remove`.
fn pack(work: &Path, what: &[PathBuf], dest: &Path, remove: bool) -> Result<(), String> {
    let mut rel = Vec::new();
    for p in what.iter().filter(|p| p.exists()) {
        let r = p
            .strip_prefix(work)
            .map_err(|_| format!("pack: {} is not in {}", p.display(), work.display()))?;
        rel.push(if r.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            r.to_path_buf()
        });
    }
    if rel.is_empty() {
        println!("  (nothing to pack into {})", dest.display());
        return Ok(());
    }
    let mut tar = Command::new("tar");
    tar.arg("cJf").arg(dest).arg("-C").arg(work);
    // The packs already made stay out of the session's pack.
    tar.args(["--exclude", "./packed", "--exclude", "*.tar.xz"]);
    tar.args(&rel);
    let st = tar
        .status()
        .map_err(|e| format!("cannot run tar for {}: {e}", dest.display()))?;
    if !st.success() {
        return Err(format!("tar could not pack {} ({st})", dest.display()));
    }
    println!("  packed {}", dest.display());
    if remove {
        for p in what.iter().filter(|p| p.exists()) {
            let r = if p.is_dir() {
                std::fs::remove_dir_all(p)
            } else {
                std::fs::remove_file(p)
            };
            r.map_err(|e| format!("cannot remove {}: {e}", p.display()))?;
        }
    }
    Ok(())
}

/// What of `out` a GPU machine would not give back: more than
/// [`MAX_FILES`] files, a file over [`MAX_FILE_BYTES`], a file more than
/// [`MAX_DEPTH`] folders deep.
pub fn past_limits(out: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let mut stack = vec![(out.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push((p, depth + 1));
            } else {
                files.push((p, depth, e.metadata().map_or(0, |m| m.len())));
            }
        }
    }
    let mut w = Vec::new();
    if files.len() > MAX_FILES {
        w.push(format!(
            "{} holds {} files; a GPU machine gives back at most {MAX_FILES}",
            out.display(),
            files.len()
        ));
    }
    for (p, depth, size) in &files {
        if *size > MAX_FILE_BYTES {
            w.push(format!("{} is {size} bytes, over 16 MiB", p.display()));
        }
        if *depth > MAX_DEPTH {
            w.push(format!(
                "{} is {depth} folders deep, over {MAX_DEPTH}",
                p.display()
            ));
        }
    }
    w
}
