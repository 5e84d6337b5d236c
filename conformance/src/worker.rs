//! GPU runs and model explorations run in child processes.
//!
//! A hung kernel, an illegal address that leaves the CUDA context unusable,
//! or a module that fails to load must end only their own trial; so must a
//! model exploration that does not finish. The harness runs each as
//! `<harness> --worker <test> ...` or `--worker-model <test>` (its own
//! executable), waits with a timeout, kills it when the time is up, and reads
//! one result line from its standard output. GPU children run one at a time
//! on each device (`devices.rs` places them).

use std::process::Command;
use std::time::{Duration, Instant};

use gridcheck_gpu::{Budget, Gpu, RuntimeFailure};
use gridcheck_report::ModelSummary;
use gridcheck_spec::{State, TestBody};
use serde::{Deserialize, Serialize};

use crate::Options;
use crate::devices::Place;
use crate::piped::Piped;

/// The line prefix of a worker's result on its standard output.
pub(crate) const MARKER: &str = "GRIDCHECK-WORKER-RESULT ";

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
    let (flag, timeout) = match job {
        Job::Gpu => ("--worker", opts.timeout),
        Job::Model => ("--worker-model", opts.model_timeout),
        Job::Mutant => ("--worker-mutant", opts.timeout),
        Job::MutantModel => ("--worker-mutant-model", opts.model_timeout),
    };
    let cmd = match command(opts, &[flag, test], place) {
        Ok(c) => c,
        Err(e) => return *e,
    };
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
        // Printed its result, then did not exit (see run_with_timeout).
        (Some(r), Err(e)) if e.starts_with("killed after printing") => r,
        (_, status) => crash(&status, &stderr),
    }
}

/// The harness's own executable as a worker: `args` (the job's flag and
/// test, or `--worker-serve`), then everything a worker needs to run a test
/// as the harness would (spec, binaries, environment, seed), on the device
/// `place` gives it.
pub(crate) fn command(
    opts: &Options,
    args: &[&str],
    place: &Place,
) -> Result<Command, Box<WorkerResult>> {
    let exe = std::env::current_exe().map_err(|e| {
        Box::new(WorkerResult::Crash {
            exit: "not started".into(),
            stderr_tail: format!("cannot find the harness executable: {e}"),
        })
    })?;
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .arg("--root")
        .arg(&opts.root)
        .arg("--spec")
        .arg(&opts.spec)
        .arg("--cubins")
        .arg(&opts.cubins)
        .args(opts.binary_args())
        .args(opts.environment_args())
        .args(["--seed", &opts.seed.to_string()])
        // Load errors (a missing symbol, a CDP version mismatch) at load
        // time, not at first launch.
        .env("CUDA_MODULE_LOADING", "EAGER")
        .envs(place.env.iter().cloned());
    if let Some(t) = &opts.tune {
        cmd.arg("--tune").arg(t);
    }
    if let Some(uuid) = &place.expect_uuid {
        cmd.args(["--worker-device", uuid]);
    }
    Ok(cmd)
}

/// A child that ended without a result: how it ended and the end of what it
/// printed on standard error.
pub(crate) fn crash(
    status: &Result<std::process::ExitStatus, String>,
    stderr: &str,
) -> WorkerResult {
    let tail: Vec<&str> = stderr.lines().rev().take(8).collect();
    WorkerResult::Crash {
        exit: match status {
            Ok(st) => st.to_string(),
            Err(e) => e.clone(),
        },
        stderr_tail: tail.into_iter().rev().collect::<Vec<_>>().join("\n"),
    }
}

/// Runs a command with piped output and a timeout (`piped.rs`): its exit
/// status (or why it could not be started or waited for), standard output
/// and the end of standard error; `None` when it was killed after `timeout`
/// seconds without having printed a worker's result line. A worker that
/// printed its result and then does not exit (its CUDA context waiting, at
/// exit, on a kernel that never ends, as a watched rerun's stall leaves it)
/// is killed after [`EXIT_GRACE`] and its result stands.
pub(crate) fn run_with_timeout(
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
    let mut stdout = String::new();
    let take_lines = |p: &Piped, stdout: &mut String| {
        let mut result = false;
        while let Ok(line) = p.lines.try_recv() {
            result |= line.starts_with(MARKER);
            stdout.push_str(&line);
            stdout.push('\n');
        }
        result
    };
    let deadline = Instant::now() + Duration::from_secs(timeout);
    let mut result_at: Option<Instant> = None;
    let killed = loop {
        if take_lines(&p, &mut stdout) && result_at.is_none() {
            result_at = Some(Instant::now());
        }
        match p.child.try_wait() {
            Ok(Some(_)) => break false,
            Ok(None) => {
                let lingering = result_at.is_some_and(|t| t.elapsed() >= EXIT_GRACE);
                if lingering || Instant::now() >= deadline {
                    let _ = p.child.kill();
                    break true;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(_) => break false,
        }
    };
    let (status, stderr) = p.end();
    take_lines(&p, &mut stdout);
    // A worker killed after its result line (lingering, or just before the
    // deadline) keeps its result; one killed without it timed out.
    let status = if killed {
        stdout
            .lines()
            .any(|l| l.starts_with(MARKER))
            .then(|| Err("killed after printing its result".to_string()))?
    } else {
        status.map_err(|e| format!("cannot wait for it: {e}"))
    };
    Some((status, stdout, stderr))
}

/// How long a worker that printed its result may take to exit.
pub(crate) const EXIT_GRACE: Duration = Duration::from_secs(2);

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
        Err(e) => error(e.to_string()),
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
            loom_error: c
                .loom
                .as_ref()
                .and_then(|r| r.as_ref().err().map(|e| e.to_string())),
            axiomatic_verdict: axiom.map(|a| a.verdict),
            axiomatic_error: c.axiomatic.as_ref().err().map(|e| e.to_string()),
            candidates: axiom.map(|a| a.candidates).unwrap_or(0),
            only_loom,
            only_axiomatic,
            load_buffering_verdict: c.load_buffering_verdict,
        }),
    }
}

fn run_here(opts: &Options, test_name: &str) -> WorkerResult {
    match open(opts) {
        Ok((spec, gpu)) => run_test(opts, &spec, &gpu, test_name),
        Err(e) => *e,
    }
}

/// What a GPU worker sets up once: the spec, and the device (the one its
/// place chose, with the PTX's device runtime).
pub(crate) fn open(opts: &Options) -> Result<(gridcheck_spec::Spec, Gpu), Box<WorkerResult>> {
    let error = |message: String| Box::new(WorkerResult::Error { message });
    let spec = gridcheck_spec::load_dir(&opts.spec, None).map_err(|e| error(e.to_string()))?;
    let gpu = Gpu::open(0).map_err(|e| error(e.to_string()))?;
    // Placed by `--devices`: device 0 here must be the one chosen.
    if let Some(want) = &opts.worker_device
        && gpu.info().uuid.as_ref() != Some(want)
    {
        return Err(error(format!(
            "the worker was to run on {want}, but its device 0 is {} (CUDA_VISIBLE_DEVICES={})",
            gpu.info()
                .uuid
                .as_deref()
                .unwrap_or("a device without a UUID"),
            std::env::var("CUDA_VISIBLE_DEVICES").unwrap_or_default()
        )));
    }
    // The same choice as the trial's (binary.rs), PTX linked with --devrt.
    Ok((spec, gpu.with_devrt(Some(opts.devrt()))))
}

/// Runs one GPU test on a device already open.
pub(crate) fn run_test(
    opts: &Options,
    spec: &gridcheck_spec::Spec,
    gpu: &Gpu,
    test_name: &str,
) -> WorkerResult {
    let error = |message: String| WorkerResult::Error { message };
    let Some(test) = spec.test(test_name) else {
        return error(format!("no test `{test_name}` in the spec"));
    };
    let cubin = match crate::binary::choose(opts, gpu.info(), test) {
        Ok(c) => c.built.file,
        Err(e) => return error(format!("no binary to run: {e}")),
    };
    match &test.body {
        TestBody::Litmus(l) => {
            let env = &opts.environment;
            let budget = Budget::of(env, opts.seed);
            let mut run = match gpu.run_litmus_with(&cubin, test_name, l, &budget, env) {
                Ok(run) => run,
                Err(e) => return error(e.to_string()),
            };
            // The extra environments' launches join the same histogram (one
            // with 0 launches is for the mutants only).
            for (i, e) in env.extra.iter().enumerate() {
                if e.tuning.launches == 0 {
                    continue;
                }
                let seed = gridcheck_gpu::launch_seed(opts.seed, EXTRA_SEEDS + i as u32);
                let budget = Budget::of(&e.tuning, seed);
                match gpu.run_litmus_with(&cubin, test_name, l, &budget, &e.tuning) {
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

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.args(["-c", script]);
        c
    }

    #[test]
    fn a_worker_that_lingers_after_its_result_keeps_the_result() {
        let start = Instant::now();
        let script = format!("echo '{MARKER}{{\"NotRun\":{{\"reason\":\"r\"}}}}'; exec sleep 30");
        let (status, stdout, _) = run_with_timeout(sh(&script), 20).expect("a result");
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "killed after the grace"
        );
        assert_eq!(status, Err("killed after printing its result".to_string()));
        assert!(stdout.contains(MARKER));
    }

    #[test]
    fn a_worker_without_a_result_at_the_deadline_timed_out() {
        assert!(run_with_timeout(sh("echo noise; exec sleep 30"), 1).is_none());
        let (status, stdout, _) = run_with_timeout(sh("echo done"), 5).expect("exited");
        assert!(status.is_ok_and(|s| s.success()) && stdout == "done\n");
    }
}
