//! GPU runs and model explorations run in child processes.
//!
//! A hung kernel, an illegal address that leaves the CUDA context unusable,
//! or a module that fails to load must end only their own trial; so must a
//! model exploration that does not finish. The harness runs each as
//! `<harness> --worker <test> ...` or `--worker-model <test>` (its own
//! executable), waits with a timeout, kills it when the time is up, and reads
//! one result line from its standard output. GPU children run one at a time
//! on each device (`devices.rs` places them).

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gridcheck_gpu::{Budget, Gpu, RuntimeFailure};
use gridcheck_report::ModelSummary;
use gridcheck_spec::{HostTest, State, TestBody};
use serde::{Deserialize, Serialize};

use crate::Options;
use crate::devices::Place;

/// The line prefix of a worker's result on its standard output.
const MARKER: &str = "GRIDCHECK-WORKER-RESULT ";

/// What a worker does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Job {
    Gpu,
    Model,
    /// A mutant on the GPU (`mutants.rs`).
    Mutant,
    /// A mutant judged by both oracles.
    MutantModel,
}

/// What a worker reported, or what became of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum WorkerResult {
    Litmus {
        histogram: Vec<(State, u64)>,
        instances: u64,
        launch_failures: u64,
        first_launch_error: Option<String>,
        elapsed_s: f64,
        seed: u64,
    },
    Runtime {
        outputs: Vec<u32>,
        elapsed_s: f64,
    },
    Model(ModelSummary),
    /// A candidate judged: the oracles' verdict when it is a mutant, or why
    /// it is not one.
    Judged {
        verdict: Option<gridcheck_mutate::MutantVerdict>,
        reason: String,
    },
    /// A mutant's GPU runs, one per environment.
    MutantRuns(Vec<gridcheck_report::MutantRun>),
    /// The module did not load: the `CUresult` code and message.
    LoadFailure {
        code: u32,
        message: String,
    },
    /// The run failed with a CUDA error (a launch, a fault, ...).
    Error {
        message: String,
    },
    /// A host test's program said it cannot run here, and why (a second
    /// device it needs, ...).
    NotRun {
        reason: String,
    },
    /// Killed after the timeout; `classified`: what a watched rerun found.
    Timeout {
        seconds: u64,
        #[serde(default)]
        classified: Option<String>,
    },
    /// The child died or printed no result.
    Crash {
        exit: String,
        stderr_tail: String,
    },
}

/// Runs one job for one test in a child process (see the module docs), a
/// GPU job on the device `place` gives it.
pub fn run_isolated(opts: &Options, job: Job, test: &str, place: &Place) -> WorkerResult {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            return WorkerResult::Crash {
                exit: "not started".into(),
                stderr_tail: format!("cannot find the harness executable: {e}"),
            };
        }
    };
    let mut extra = Vec::new();
    if let Some(t) = &opts.tune {
        extra.push("--tune".to_string());
        extra.push(t.display().to_string());
    }
    let (flag, timeout) = match job {
        Job::Gpu => ("--worker", opts.timeout),
        Job::Model => ("--worker-model", opts.model_timeout),
        Job::Mutant => ("--worker-mutant", opts.timeout),
        Job::MutantModel => ("--worker-mutant-model", opts.model_timeout),
    };
    let mut cmd = Command::new(exe);
    cmd.arg(flag)
        .arg(test)
        .arg("--root")
        .arg(&opts.root)
        .arg("--spec")
        .arg(&opts.spec)
        .arg("--cubins")
        .arg(&opts.cubins)
        .args(opts.binary_args())
        .args(opts.environment_args())
        .args(["--seed", &opts.seed.to_string()])
        .args(extra)
        // Load errors (a missing symbol, a CDP version mismatch) at load
        // time, not at first launch.
        .env("CUDA_MODULE_LOADING", "EAGER")
        .envs(place.env.iter().cloned());
    if let Some(uuid) = &place.expect_uuid {
        cmd.args(["--worker-device", uuid]);
    }
    let Some((status, stdout, stderr)) = run_with_timeout(cmd, timeout) else {
        return WorkerResult::Timeout {
            seconds: timeout,
            classified: None,
        };
    };
    let parsed = stdout
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(MARKER))
        .and_then(|j| serde_json::from_str::<WorkerResult>(j).ok());
    match (parsed, status) {
        (Some(r), Ok(st)) if st.success() => r,
        (_, status) => crash(&status, &stderr),
    }
}

/// A child that ended without a result: how it ended and the end of what it
/// printed on standard error.
fn crash(status: &Result<std::process::ExitStatus, String>, stderr: &str) -> WorkerResult {
    let tail: Vec<&str> = stderr.lines().rev().take(8).collect();
    WorkerResult::Crash {
        exit: match status {
            Ok(st) => st.to_string(),
            Err(e) => e.clone(),
        },
        stderr_tail: tail.into_iter().rev().collect::<Vec<_>>().join("\n"),
    }
}

/// Runs a command with piped output and a timeout: its exit status (or why
/// it could not be started or waited for), standard output and standard
/// error; `None` when it was killed after `timeout` seconds.
pub(crate) fn run_with_timeout(
    mut cmd: Command,
    timeout: u64,
) -> Option<(Result<std::process::ExitStatus, String>, String, String)> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return Some((
                Err(format!("not started: {e}")),
                String::new(),
                String::new(),
            ));
        }
    };
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(mut r) = r {
                let _ = r.read_to_string(&mut s);
            }
            s
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + Duration::from_secs(timeout);
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Some(Ok(st)),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => break Some(Err(format!("cannot wait for it: {e}"))),
        }
    };
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    Some((status?, stdout, stderr))
}

/// The line prefix of a host test's outputs.
pub const HOST_OUTPUT: &str = "gridcheck-output ";

/// The line prefix of a host test's program that cannot run here: `gridcheck-not-run <reason>`.
pub const HOST_NOT_RUN: &str = "gridcheck-not-run ";

/// Runs a host test's program (`<cubins>/<sm>/<test>.host`) with the GPU
/// timeout, on the device `place` gives it, and reads its outputs, in the
/// test's order. A program that exits with an error, or does not print
/// every output, produced no result; one that prints `gridcheck-not-run
/// <reason>` (and no output) did not run.
pub fn run_host_program(
    opts: &Options,
    exe: &Path,
    test: &HostTest,
    place: &Place,
) -> WorkerResult {
    let start = Instant::now();
    let mut cmd = Command::new(exe);
    cmd.envs(place.env.iter().cloned());
    let Some((status, stdout, stderr)) = run_with_timeout(cmd, opts.timeout) else {
        return WorkerResult::Timeout {
            seconds: opts.timeout,
            classified: None,
        };
    };
    let elapsed_s = start.elapsed().as_secs_f64();
    match &status {
        Ok(st) if st.success() => {}
        _ => return crash(&status, &format!("{stdout}{stderr}")),
    }
    if let Some(reason) = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix(HOST_NOT_RUN))
    {
        return if stdout.contains(HOST_OUTPUT) {
            WorkerResult::Error {
                message: format!(
                    "{}: the program says it did not run ({reason}) but printed outputs",
                    exe.display()
                ),
            }
        } else {
            WorkerResult::NotRun {
                reason: reason.trim().to_string(),
            }
        };
    }
    match parse_host_outputs(&stdout, &test.outputs) {
        Ok(outputs) => WorkerResult::Runtime { outputs, elapsed_s },
        Err(message) => WorkerResult::Error {
            message: format!("{}: {message}", exe.display()),
        },
    }
}

/// The values of `names` from a host program's `gridcheck-output <name>
/// <value>` lines (a value is a 32-bit word, written signed or unsigned).
pub fn parse_host_outputs(stdout: &str, names: &[String]) -> Result<Vec<u32>, String> {
    let mut seen = std::collections::HashMap::new();
    for line in stdout.lines() {
        let Some(rest) = line.trim().strip_prefix(HOST_OUTPUT) else {
            continue;
        };
        let mut words = rest.split_whitespace();
        let (Some(name), Some(value), None) = (words.next(), words.next(), words.next()) else {
            return Err(format!("malformed output line `{line}`"));
        };
        let value = value
            .parse::<u32>()
            .or_else(|_| value.parse::<i32>().map(|v| v as u32))
            .map_err(|_| format!("output `{name}` has the value `{value}`, not a 32-bit word"))?;
        if !names.iter().any(|n| n == name) {
            return Err(format!(
                "the program printed `{name}`, which is not an output of the test"
            ));
        }
        if seen.insert(name.to_string(), value).is_some() {
            return Err(format!("the program printed `{name}` twice"));
        }
    }
    names
        .iter()
        .map(|n| {
            seen.get(n)
                .copied()
                .ok_or_else(|| format!("the program did not print the output `{n}`"))
        })
        .collect()
}

/// The worker side of the GPU and model jobs (the mutants' are in
/// `mutants.rs`).
pub fn work(opts: &Options, job: Job, test: &str) -> WorkerResult {
    match job {
        Job::Gpu => run_here(opts, test),
        Job::Model => model_here(opts, test),
        Job::Mutant | Job::MutantModel => WorkerResult::Error {
            message: "a mutant's job runs in mutants.rs".into(),
        },
    }
}

/// Prints a worker's result line: what [`run_isolated`] reads.
pub fn report(result: &WorkerResult) -> std::process::ExitCode {
    match serde_json::to_string(result) {
        Ok(j) => {
            println!("{MARKER}{j}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("cannot serialize the result: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn model_here(opts: &Options, test_name: &str) -> WorkerResult {
    let error = |message: String| WorkerResult::Error { message };
    let spec = match gridcheck_spec::load_dir(&opts.spec, None) {
        Ok(s) => s,
        Err(e) => return error(e.to_string()),
    };
    let Some(TestBody::Litmus(l)) = spec.test(test_name).map(|t| &t.body) else {
        return error(format!("no litmus test `{test_name}` in the spec"));
    };
    match gridcheck_oracle::cross_check(l) {
        Ok(c) => WorkerResult::Model(model_summary(l, c)),
        Err(e) => error(e),
    }
}

/// The record of both oracles' answers (see `gridcheck_oracle`).
pub(crate) fn model_summary(
    l: &gridcheck_spec::Litmus,
    c: gridcheck_oracle::CrossCheck,
) -> ModelSummary {
    use gridcheck_oracle::Agreement;
    let (agreement, only_loom, only_axiomatic) = match &c.agreement {
        Agreement::Same => ("same", Vec::new(), Vec::new()),
        Agreement::LoomOrdersWrites { missing } => {
            ("loom-orders-writes", Vec::new(), missing.clone())
        }
        Agreement::LoomBounded { missing, .. } => ("loom-bounded", Vec::new(), missing.clone()),
        Agreement::Single { .. } => ("single", Vec::new(), Vec::new()),
        Agreement::Conflict {
            only_loom,
            only_axiomatic,
            ..
        } => ("conflict", only_loom.clone(), only_axiomatic.clone()),
    };
    let loom = c.loom.as_ref().and_then(|r| r.as_ref().ok());
    let axiom = c.axiomatic.as_ref().ok();
    ModelSummary {
        verdict: c.verdict,
        expected: l.expect,
        states: c.states.iter().cloned().collect(),
        executions: loom.map(|m| m.executions).unwrap_or(0),
        preemption_bound: loom.and_then(|m| m.preemption_bound),
        elapsed_s: loom.map(|m| m.elapsed.as_secs_f64()).unwrap_or(0.0)
            + axiom.map(|a| a.elapsed.as_secs_f64()).unwrap_or(0.0),
        oracles: Some(gridcheck_report::Oracles {
            decided_by: c.decided_by.as_str().into(),
            agreement: agreement.into(),
            note: c.agreement.to_string(),
            loom_verdict: loom.map(|m| m.verdict),
            loom_error: c.loom.as_ref().and_then(|r| r.as_ref().err().cloned()),
            axiomatic_verdict: axiom.map(|a| a.verdict),
            axiomatic_error: c.axiomatic.as_ref().err().cloned(),
            candidates: axiom.map(|a| a.candidates).unwrap_or(0),
            only_loom,
            only_axiomatic,
            load_buffering_verdict: c.load_buffering_verdict,
        }),
    }
}

fn run_here(opts: &Options, test_name: &str) -> WorkerResult {
    let error = |message: String| WorkerResult::Error { message };
    let spec = match gridcheck_spec::load_dir(&opts.spec, None) {
        Ok(s) => s,
        Err(e) => return error(e.to_string()),
    };
    let Some(test) = spec.test(test_name) else {
        return error(format!("no test `{test_name}` in the spec"));
    };
    let gpu = match Gpu::open(0) {
        Ok(g) => g,
        Err(e) => return error(e.to_string()),
    };
    // Placed by `--devices`: device 0 here must be the one chosen.
    if let Some(want) = &opts.worker_device
        && gpu.info().uuid.as_ref() != Some(want)
    {
        return error(format!(
            "the worker was to run on {want}, but its device 0 is {} (CUDA_VISIBLE_DEVICES={})",
            gpu.info()
                .uuid
                .as_deref()
                .unwrap_or("a device without a UUID"),
            std::env::var("CUDA_VISIBLE_DEVICES").unwrap_or_default()
        ));
    }
    // The same choice as the trial's (binary.rs), PTX linked with --devrt.
    let gpu = gpu.with_devrt(Some(opts.devrt()));
    let cubin = match crate::binary::choose(opts, gpu.info(), test) {
        Ok(c) => c.built.file,
        Err(e) => return error(format!("no binary to run: {e}")),
    };
    match &test.body {
        TestBody::Litmus(l) => {
            let budget = Budget {
                instances_per_launch: opts.instances,
                launches: opts.launches,
                seed: opts.seed,
            };
            let mut run =
                match gpu.run_litmus_with(&cubin, test_name, l, &budget, &opts.incantations()) {
                    Ok(run) => run,
                    Err(e) => return error(e.to_string()),
                };
            // The extra environments' launches join the same histogram (one
            // with 0 launches is for the mutants only).
            for (i, e) in opts.extra.iter().enumerate() {
                if e.tuning.launches == 0 {
                    continue;
                }
                let seed = gridcheck_gpu::launch_seed(opts.seed, EXTRA_SEEDS + i as u32);
                let (inc, budget) = crate::Options::extra_run(&e.tuning, seed);
                match gpu.run_litmus_with(&cubin, test_name, l, &budget, &inc) {
                    Ok(more) => {
                        for (state, n) in more.histogram {
                            *run.histogram.entry(state).or_default() += n;
                        }
                        run.instances += more.instances;
                        run.launch_failures += more.launch_failures;
                        if run.first_launch_error.is_none() {
                            run.first_launch_error = more.first_launch_error;
                        }
                        run.elapsed += more.elapsed;
                    }
                    Err(err) => return error(format!("extra environment `{}`: {err}", e.name)),
                }
            }
            WorkerResult::Litmus {
                histogram: run.histogram.into_iter().collect(),
                instances: run.instances,
                launch_failures: run.launch_failures,
                first_launch_error: run.first_launch_error,
                elapsed_s: run.elapsed.as_secs_f64(),
                seed: run.seed,
            }
        }
        TestBody::Runtime(r) => match gpu.run_runtime(&cubin, r) {
            Ok(run) => WorkerResult::Runtime {
                outputs: run.outputs,
                elapsed_s: run.elapsed.as_secs_f64(),
            },
            Err(RuntimeFailure::Load { code, message }) => {
                WorkerResult::LoadFailure { code, message }
            }
            Err(RuntimeFailure::Other(e)) => error(e.to_string()),
        },
        TestBody::Compile(_) | TestBody::Host(_) => {
            error("a compile or host test does not run in a worker".into())
        }
    }
}

/// Where the extra environments' seeds start (`launch_seed(seed, EXTRA_SEEDS
/// + i)`), far from the main run's launch numbers.
const EXTRA_SEEDS: u32 = 1 << 30;

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in for a host test's program: a shell script.
    fn program(name: &str, body: &str) -> std::path::PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let dir =
            std::env::temp_dir().join(format!("gridcheck-host-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join("p.host");
        std::fs::write(&exe, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        exe
    }

    fn host_test(outputs: &[&str]) -> HostTest {
        HostTest {
            arch: "sm_90".into(),
            flags: Vec::new(),
            source: String::new(),
            outputs: names(outputs),
            expect: Vec::new(),
        }
    }

    #[test]
    fn a_program_that_cannot_run_here_says_why_and_is_not_run() {
        let opts = Options::parse(vec!["bin".into()], "/r".into()).unwrap();
        let exe = program(
            "notrun",
            "echo 'gridcheck-not-run needs 2 devices, found 1'",
        );
        let r = run_host_program(&opts, &exe, &host_test(&["a"]), &Place::default());
        assert_eq!(
            r,
            WorkerResult::NotRun {
                reason: "needs 2 devices, found 1".into()
            }
        );
        // Not run and outputs at once is a contradiction, never a pass.
        let exe = program(
            "both",
            "echo 'gridcheck-not-run x'; echo 'gridcheck-output a 1'",
        );
        let r = run_host_program(&opts, &exe, &host_test(&["a"]), &Place::default());
        assert!(
            matches!(&r, WorkerResult::Error { message } if message.contains("printed outputs")),
            "{r:?}"
        );
    }

    #[test]
    fn a_program_runs_on_the_device_its_place_names() {
        let opts = Options::parse(vec!["bin".into()], "/r".into()).unwrap();
        let exe = program(
            "place",
            "[ \"$CUDA_VISIBLE_DEVICES\" = GPU-1,GPU-0 ] && echo 'gridcheck-output placed 1' || echo 'gridcheck-output placed 0'",
        );
        let place = Place {
            env: vec![("CUDA_VISIBLE_DEVICES".into(), "GPU-1,GPU-0".into())],
            expect_uuid: Some("GPU-1".into()),
        };
        let r = run_host_program(&opts, &exe, &host_test(&["placed"]), &place);
        assert!(
            matches!(&r, WorkerResult::Runtime { outputs, .. } if outputs == &[1]),
            "{r:?}"
        );
        let r = run_host_program(&opts, &exe, &host_test(&["placed"]), &Place::default());
        assert!(
            matches!(&r, WorkerResult::Runtime { outputs, .. } if outputs == &[0]),
            "{r:?}"
        );
    }

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn host_outputs_are_read_in_the_tests_order() {
        let out = "noise\ngridcheck-output b 7\ngridcheck-output a -1\n";
        assert_eq!(
            parse_host_outputs(out, &names(&["a", "b"])),
            Ok(vec![u32::MAX, 7])
        );
    }

    #[test]
    fn host_output_problems_are_named() {
        let n = names(&["a", "b"]);
        let e = parse_host_outputs("gridcheck-output a 1\n", &n).unwrap_err();
        assert!(e.contains("did not print the output `b`"), "{e}");
        let e = parse_host_outputs("gridcheck-output a 1\ngridcheck-output a 2\n", &n).unwrap_err();
        assert!(e.contains("`a` twice"), "{e}");
        let e = parse_host_outputs("gridcheck-output c 1\n", &n).unwrap_err();
        assert!(e.contains("`c`, which is not an output"), "{e}");
        let e = parse_host_outputs("gridcheck-output a x\n", &n).unwrap_err();
        assert!(e.contains("not a 32-bit word"), "{e}");
        let e = parse_host_outputs("gridcheck-output a\n", &n).unwrap_err();
        assert!(e.contains("malformed"), "{e}");
    }
}
