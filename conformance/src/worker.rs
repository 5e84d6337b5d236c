//! GPU runs and model explorations run in child processes.
//!
//! A hung kernel, an illegal address that leaves the CUDA context unusable,
//! or a module that fails to load must end only their own trial; so must a
//! model exploration that does not finish. The harness runs each as
//! `<harness> --worker <test> ...` or `--worker-model <test>` (its own
//! executable), waits with a timeout, kills it when the time is up, and reads
//! one result line from its standard output. GPU children run one at a time.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gridcheck_gpu::{Budget, Gpu, RuntimeFailure};
use gridcheck_report::ModelSummary;
use gridcheck_spec::{State, TestBody};
use serde::{Deserialize, Serialize};

use crate::Options;

/// The line prefix of a worker's result on its standard output.
const MARKER: &str = "GRIDCHECK-WORKER-RESULT ";

/// What a worker does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Job {
    Gpu,
    Model,
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
    /// The module did not load: the `CUresult` code and message.
    LoadFailure {
        code: u32,
        message: String,
    },
    /// The run failed with a CUDA error (a launch, a fault, ...).
    Error {
        message: String,
    },
    /// Killed after the timeout.
    Timeout {
        seconds: u64,
    },
    /// The child died or printed no result.
    Crash {
        exit: String,
        stderr_tail: String,
    },
}

/// Runs one job for one test in a child process (see the module docs).
pub fn run_isolated(opts: &Options, job: Job, test: &str) -> WorkerResult {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            return WorkerResult::Crash {
                exit: "not started".into(),
                stderr_tail: format!("cannot find the harness executable: {e}"),
            };
        }
    };
    let (flag, timeout) = match job {
        Job::Gpu => ("--worker", opts.timeout),
        Job::Model => ("--worker-model", opts.model_timeout),
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
        .args(["--instances", &opts.instances.to_string()])
        .args(["--launches", &opts.launches.to_string()])
        .args(["--seed", &opts.seed.to_string()])
        // Load errors (a missing symbol, a CDP version mismatch) at load
        // time, not at first launch.
        .env("CUDA_MODULE_LOADING", "EAGER")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return WorkerResult::Crash {
                exit: "not started".into(),
                stderr_tail: format!("cannot start the worker: {e}"),
            };
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
            Ok(Some(st)) => break Some(st),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(_) => break None,
        }
    };
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    let Some(status) = status else {
        return WorkerResult::Timeout { seconds: timeout };
    };
    let parsed = stdout
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(MARKER))
        .and_then(|j| serde_json::from_str::<WorkerResult>(j).ok());
    match parsed {
        Some(r) if status.success() => r,
        _ => {
            let tail: Vec<&str> = stderr.lines().rev().take(8).collect();
            WorkerResult::Crash {
                exit: status.to_string(),
                stderr_tail: tail.into_iter().rev().collect::<Vec<_>>().join("\n"),
            }
        }
    }
}

/// The worker side: runs the job and prints the result line.
pub fn work(opts: &Options, job: Job, test: &str) -> std::process::ExitCode {
    let result = match job {
        Job::Gpu => run_here(opts, test),
        Job::Model => model_here(opts, test),
    };
    match serde_json::to_string(&result) {
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
    match gridcheck_model::check(l) {
        Ok(m) => WorkerResult::Model(ModelSummary {
            verdict: m.verdict,
            expected: l.expect,
            states: m.states.into_iter().collect(),
            executions: m.executions,
            preemption_bound: m.preemption_bound,
            elapsed_s: m.elapsed.as_secs_f64(),
        }),
        Err(e) => error(e.to_string()),
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
    let cubin = cubin_path(&opts.cubins, &gpu.info().sm, test_name);
    match &test.body {
        TestBody::Litmus(l) => {
            let budget = Budget {
                instances_per_launch: opts.instances,
                launches: opts.launches,
                seed: opts.seed,
            };
            match gpu.run_litmus(&cubin, test_name, l, &budget) {
                Ok(run) => WorkerResult::Litmus {
                    histogram: run.histogram.into_iter().collect(),
                    instances: run.instances,
                    launch_failures: run.launch_failures,
                    first_launch_error: run.first_launch_error,
                    elapsed_s: run.elapsed.as_secs_f64(),
                    seed: run.seed,
                },
                Err(e) => error(e.to_string()),
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
        TestBody::Compile(_) => error("a compile test does not run on the GPU".into()),
    }
}

/// `<cubins>/<sm>/<test>.cubin`.
pub fn cubin_path(cubins: &Path, sm: &str, test: &str) -> std::path::PathBuf {
    cubins.join(sm).join(format!("{test}.cubin"))
}
