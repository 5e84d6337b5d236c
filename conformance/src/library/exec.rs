//! One run of a library program: its command line, the child process
//! with the GPU timeout on the device's place, and its output read into
//! the counts of a record (`gridcheck_report::LibraryRun`). A program that
//! cannot run here says `gridcheck-not-run <reason>` (the host tests'
//! convention); a CUDA error prints its line and exits 3; a run killed at
//! the timeout, a crash or a line that does not answer the case asked for
//! is said as such, never counted as calls.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use gridcheck_child::run_with_timeout;
use gridcheck_report::LibraryRun;

use super::cases::Case;
use super::library_contract::{Outcome, parse_outcomes};
use crate::devices::Place;
use crate::host::HOST_NOT_RUN;
use crate::staying::{Reply, Start, Stayers};

/// What came of a run: its counts and the CCCL version the program
/// reported, or why it did not run.
#[derive(Debug, Clone, PartialEq)]
pub enum Ran {
    Run(LibraryRun, Option<String>),
    NotRun(String),
}

/// A case's arguments: `--algorithm A --size N --reps R --env E --seed S`.
pub fn args(algorithm: &str, case: &Case, seed: u64) -> Vec<String> {
    [
        ("--algorithm", algorithm.to_string()),
        ("--size", case.size.to_string()),
        ("--reps", case.reps.to_string()),
        ("--env", case.env.clone()),
        ("--seed", seed.to_string()),
    ]
    .into_iter()
    .flat_map(|(k, v)| [k.to_string(), v])
    .collect()
}

/// How every library program runs: its modules loaded when its context
/// is made. Under lazy loading (the runtime's default) a kernel's module
/// loaded while the environment's load kernel runs on the other stream
/// waits for that kernel to end: on the H200 each loaded run took the
/// load's whole 60 s bound (61.8 s, against 0.45 s eagerly; the same
/// program, CCCL 13.0's merge sort as compute_80 PTX, size 100 000).
pub const MODULE_LOADING: (&str, &str) = ("CUDA_MODULE_LOADING", "EAGER");

/// The command line as a shell takes it.
pub fn command_line(exe: &Path, args: &[String]) -> String {
    std::iter::once(format!("{}={}", MODULE_LOADING.0, MODULE_LOADING.1))
        .chain(std::iter::once(exe.display().to_string()))
        .chain(args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs `exe` with `args` on `place` for at most `timeout_s` seconds.
pub fn execute(exe: &Path, args: &[String], place: &Place, timeout_s: u64) -> Ran {
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .env(MODULE_LOADING.0, MODULE_LOADING.1)
        .envs(place.env.iter().cloned());
    let Some((status, stdout, stderr)) = run_with_timeout(cmd, timeout_s) else {
        return timed_out(timeout_s);
    };
    let exit = match &status {
        Ok(s) if s.success() => None,
        Ok(s) => Some(s.to_string()),
        Err(e) => Some(e.clone()),
    };
    answer(exe, args, &stdout, exit, &stderr)
}

/// The flag that makes a library program stay (`kernels/cccl/library.cuh`).
pub const SERVE_FLAG: &str = "--serve";
/// The line a staying library program prints once its device is ready.
pub const READY: &str = "gridcheck-serve";

/// Runs one case of `exe` in the slot's staying program (`--serve`,
/// `crate::staying`), as [`execute`] would in a process of its own: the
/// same outcome, with the cases the process answered before it. A CUDA
/// error (the program exits 3 after its line), a line that does not
/// answer the case, a crash or a timeout ends the process; the next case
/// starts a fresh one. A binary that does not stay (built before
/// `--serve`; it rejects the flag) runs each case in a process of its own.
pub fn served(
    stayers: &Stayers,
    slot: usize,
    exe: &Path,
    args: &[String],
    place: &Place,
    timeout_s: u64,
) -> Ran {
    if stayers.refused(exe) {
        return execute(exe, args, place, timeout_s);
    }
    let env: Vec<(String, String)> = std::iter::once(MODULE_LOADING)
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .chain(place.env.iter().cloned())
        .collect();
    let start = Start {
        exe,
        flag: SERVE_FLAG,
        ready: READY,
        env: &env,
    };
    match stayers.ask(
        slot,
        &start,
        &args.join(" "),
        Duration::from_secs(timeout_s),
    ) {
        Reply::Line(line, earlier) => {
            let ran = match answer(exe, args, &line, None, "") {
                Ran::Run(mut run, cccl) => {
                    run.earlier_cases = Some(earlier);
                    Ran::Run(run, cccl)
                }
                not_run => not_run,
            };
            // After a CUDA error the program exits; after a line that does
            // not answer the case it is in doubt.
            if matches!(&ran, Ran::Run(r, _) if r.error.is_some() || r.problem.is_some()) {
                stayers.end(slot, exe);
            }
            ran
        }
        Reply::Started(line) if line.trim().starts_with(HOST_NOT_RUN) => {
            answer(exe, args, &line, None, "")
        }
        // A program built before `--serve` rejects the flag (exit 2).
        Reply::Died {
            code: Some(2),
            stderr,
            ready: false,
            ..
        } if stderr.contains(SERVE_FLAG) => {
            stayers.refuse(exe);
            execute(exe, args, place, timeout_s)
        }
        Reply::Started(_) => {
            stayers.refuse(exe);
            execute(exe, args, place, timeout_s)
        }
        Reply::Timeout => timed_out(timeout_s),
        Reply::Died { exit, stderr, .. } => answer(exe, args, "", Some(exit), &stderr),
    }
}

/// A run killed after `timeout_s` seconds without its line.
pub fn timed_out(timeout_s: u64) -> Ran {
    Ran::Run(
        LibraryRun {
            timed_out_s: Some(timeout_s),
            ..LibraryRun::default()
        },
        None,
    )
}

/// What a run of `exe` with `args` answered: its standard output (the
/// lines it printed for this case), how it exited (`None`: exit 0, or not
/// yet) and its standard error.
pub fn answer(
    exe: &Path,
    args: &[String],
    stdout: &str,
    exit: Option<String>,
    stderr: &str,
) -> Ran {
    if let Some(reason) = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix(HOST_NOT_RUN))
    {
        return Ran::NotRun(reason.trim().to_string());
    }
    let tail = || {
        let t: Vec<&str> = stderr.lines().rev().take(6).collect();
        t.into_iter().rev().collect::<Vec<_>>().join("\n")
    };
    let problem = |p: String| {
        Ran::Run(
            LibraryRun {
                problem: Some(p),
                ..LibraryRun::default()
            },
            None,
        )
    };
    let lines = match parse_outcomes(stdout) {
        Ok(l) => l,
        Err(e) => return problem(format!("{}: {e}", exe.display())),
    };
    let wanted = arg(args, "--algorithm");
    let mut mine = lines.into_iter().filter(|o| o.algorithm == wanted);
    let (Some(o), None) = (mine.next(), mine.next()) else {
        return problem(match exit {
            Some(how) => format!("the program died ({how}) without its line: {}", tail()),
            None => format!("the program printed no one line for {wanted}"),
        });
    };
    if let Some(why) = mismatch(&o, args) {
        return problem(why);
    }
    // A CUDA error exits 3 after its line; any other exit is a crash.
    match (&exit, &o.error) {
        (None, _) => {}
        (Some(how), Some(_)) if how.contains("exit status: 3") => {}
        (Some(how), _) => {
            return problem(format!(
                "the program exited ({how}) after its line: {}",
                tail()
            ));
        }
    }
    let cccl = (!o.cccl.is_empty()).then(|| o.cccl.clone());
    Ran::Run(run_of(o), cccl)
}

pub fn arg(args: &[String], flag: &str) -> String {
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_default()
}

/// Whether the line answers another case than the one asked for.
fn mismatch(o: &Outcome, args: &[String]) -> Option<String> {
    let (size, env, reps) = (arg(args, "--size"), arg(args, "--env"), arg(args, "--reps"));
    (o.size.to_string() != size || o.env != env || o.reps.to_string() != reps).then(|| {
        format!(
            "the program answered size {} env {} reps {} for size {size} env {env} reps {reps}",
            o.size, o.env, o.reps
        )
    })
}

fn run_of(o: Outcome) -> LibraryRun {
    LibraryRun {
        calls: o.calls,
        wrong: o.wrong,
        first_wrong: o.first_wrong,
        error: o.error,
        after_calls: o.after_calls,
        timed_out_s: None,
        problem: None,
        pdl: Some(o.pdl),
        pdl_edges: o.pdl_edges,
        ptx_version: Some(o.ptx_version),
        gpu_ms: Some(o.gpu_ms),
        earlier_cases: None,
    }
}

/// The controls a program has for a release's target: PDL off always
/// (`-nopdl`, reported not built when missing), compute_90 PTX and each
/// patch where built (`-ptx90`, `-<patch>`: files `<program>-<name>`).
pub fn variants(root: &Path, release: &str, target: &str, program: &str) -> Vec<String> {
    let dir = super::library_contract::binary(root, release, target, program, "")
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let mut others: Vec<String> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter(|e| e.path().is_file())
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .filter_map(|n| n.strip_prefix(program).map(str::to_string))
                .filter(|v| v.starts_with('-') && v.len() > 1 && !v.contains('.'))
                .filter(|v| v != "-nopdl")
                .collect()
        })
        .unwrap_or_default();
    // The PTX path's controls first (compute_90 PTX, the compute_80 code as
    // nvcc's SASS), then the patches by name.
    others.sort_by_key(|v| {
        let control = gridcheck_library::PTX_CONTROLS.iter().position(|c| c == v);
        (control.unwrap_or(usize::MAX), v.clone())
    });
    std::iter::once("-nopdl".to_string())
        .chain(others)
        .collect()
}
