//! The typed job: everything a worker process needs to do one piece of
//! work, resolved once by the harness, and what the worker answers.
//!
//! The harness decides, for each GPU trial, the test's body, the binary that
//! runs on the device in hand, the testing environment, the seed, the
//! timeout and the stall threshold of the watch, and the device; it sends
//! that [`Job`] to a worker (`<harness> --worker`, `worker.rs`) as one JSON
//! line on its standard input. The worker loads no spec and no options and
//! chooses nothing: it runs the job and prints one [`WorkerResult`] line,
//! prefixed with [`MARKER`], on its standard output. A device runtime limit
//! is part of the test's body (`limits`), which the GPU runner sets.

use std::path::PathBuf;

use gridcheck_mutate::Candidate;
use gridcheck_report::{ModelSummary, SearchPoint, TrialId, Tuning};
use gridcheck_spec::{Litmus, RuntimeTest, State};
use serde::{Deserialize, Serialize};

/// The line prefix of a worker's result on its standard output.
pub const MARKER: &str = "GRIDCHECK-WORKER-RESULT ";

/// One piece of work for a worker process.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Job {
    /// A litmus or runtime test's run on the GPU.
    Gpu(GpuJob),
    /// Both oracles on a litmus test.
    Model(ModelJob),
    /// A mutant on the GPU, a chunk of launches at a time (budgeted.rs) until it is killed or its
    /// budget is spent (`mutants.rs`).
    Mutant(MutantJob),
    /// Both oracles judge a mutation candidate.
    Judge(JudgeJob),
    /// A quality warning's test run again, alone in a fresh worker, under
    /// each environment in turn until its allowed outcome shows or each
    /// budget is spent (`escalate.rs`).
    Escalate(EscalateJob),
}

impl Job {
    /// Seconds the harness waits for the job's result before it kills the
    /// worker.
    pub fn timeout_s(&self) -> u64 {
        match self {
            Job::Gpu(j) => j.timeout_s,
            Job::Model(j) => j.timeout_s,
            Job::Mutant(j) => j.timeout_s,
            Job::Judge(j) => j.timeout_s,
            Job::Escalate(j) => j.timeout_s,
        }
    }

    /// The job as the one line a worker reads.
    pub fn line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// A GPU test's run, as the harness resolved it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GpuJob {
    /// The trial that asked for the run (every rule's trial of the test
    /// shares its result).
    pub trial: TrialId,
    /// The test's name: its kernels' symbols are named after it.
    pub test: String,
    /// What runs, with the device runtime limits it sets.
    pub body: GpuBody,
    /// The binary chosen for the device (a cubin, or PTX for the driver's JIT).
    pub binary: PathBuf,
    /// The `libcudadevrt.a` PTX is linked with.
    pub devrt: PathBuf,
    /// The testing environment, extra environments included.
    pub environment: Tuning,
    pub seed: u64,
    /// The trial's timeout: `--timeout`, or the test's shorter `gpu_timeout`.
    pub timeout_s: u64,
    /// A litmus launch whose status words do not move for this long is a
    /// stall, and the run ends with where it stalled (`gridcheck_gpu::watch`).
    pub stall_after_s: f64,
    /// The UUID the worker's device 0 must have (placed by `--devices`).
    pub device: Option<String>,
    /// The watched rerun of a trial that timed out (`timeouts.rs`): each
    /// launch watched by the waiting thread, `(stall seconds, budget
    /// seconds)`, its classification the run's error
    /// (`Gpu::watch_each_launch`); `None` for every other run.
    #[serde(default)]
    pub watch: Option<(f64, f64)>,
}

/// The test body of a GPU run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum GpuBody {
    Litmus(Litmus),
    Runtime(RuntimeTest),
}

/// Both oracles on a litmus test.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ModelJob {
    pub test: String,
    pub litmus: Litmus,
    pub timeout_s: u64,
}

/// A mutant's GPU runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MutantJob {
    pub candidate: Candidate,
    /// The mutant's cubin for the device's architecture.
    pub cubin: PathBuf,
    /// The environments it runs under, in order.
    pub environments: Vec<SearchPoint>,
    /// Whether a kill ends the sequence (the environment and its extra
    /// ones); `false` under `--tune`, where every environment runs.
    pub stop_at_kill: bool,
    pub seed: u64,
    pub timeout_s: u64,
    /// As [`GpuJob::stall_after_s`].
    pub stall_after_s: f64,
    /// As [`GpuJob::device`].
    pub device: Option<String>,
}

/// A litmus test's escalation: its run's job (binary, test, seed, device),
/// and the environments to try, each with its GPU-time budget
/// (`mutant_budget_s`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EscalateJob {
    pub run: GpuJob,
    pub steps: Vec<SearchPoint>,
    /// The wall seconds the steps may take together: the steps past it do
    /// not run.
    pub wall_s: f64,
    /// The whole escalation's timeout.
    pub timeout_s: u64,
}

/// Both oracles on a mutation candidate.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JudgeJob {
    pub candidate: Candidate,
    pub timeout_s: u64,
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
        /// Per segment of a tile register, its stale words.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        stale: Vec<gridcheck_report::StaleWords>,
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
    /// An escalation's steps, up to the first that showed the outcome.
    Escalated(Vec<gridcheck_report::EscalationStep>),
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
    /// A watched launch stopped moving: the watch's words, which say where
    /// (`gridcheck_gpu::watch::STALL`).
    Stalled {
        stall: String,
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

impl WorkerResult {
    /// A run that completed (its histogram, outputs or judgement), or a
    /// refusal before any launch: a worker goes on after it. After any
    /// other result its CUDA context may be unusable, and it ends.
    pub fn completed(&self) -> bool {
        matches!(
            self,
            WorkerResult::Litmus { .. }
                | WorkerResult::Runtime { .. }
                | WorkerResult::NotRun { .. }
                | WorkerResult::Model(_)
                | WorkerResult::Judged { .. }
                | WorkerResult::MutantRuns(_)
                | WorkerResult::Escalated(_)
        )
    }

    /// The line a worker prints.
    pub fn line(&self) -> String {
        match serde_json::to_string(self) {
            Ok(j) => format!("{MARKER}{j}"),
            Err(e) => format!(
                "{MARKER}{}",
                serde_json::json!({ "Error": { "message": format!("cannot serialize the result: {e}") } })
            ),
        }
    }

    /// The result of a line a worker printed, if it is one.
    pub fn of_line(line: &str) -> Option<WorkerResult> {
        serde_json::from_str(line.strip_prefix(MARKER)?).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> gridcheck_spec::Spec {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec");
        gridcheck_spec::load_dir(&root, None).unwrap()
    }

    /// A job carries each test as the spec has it: every litmus and runtime
    /// test of the spec comes back from its JSON line field for field, so a
    /// worker runs what the harness loaded without loading anything.
    #[test]
    fn every_gpu_test_travels_whole() {
        let spec = spec();
        let mut n = 0;
        for t in &spec.tests {
            let body = match &t.body {
                gridcheck_spec::TestBody::Litmus(l) => GpuBody::Litmus(l.clone()),
                gridcheck_spec::TestBody::Runtime(r) => GpuBody::Runtime(r.clone()),
                _ => continue,
            };
            let job = Job::Gpu(GpuJob {
                trial: TrialId::gpu("sm_90", "r", &t.name),
                test: t.name.clone(),
                body,
                binary: "k/sm_90/t.cubin".into(),
                devrt: "k/libcudadevrt.a".into(),
                environment: Tuning::default(),
                seed: 7,
                timeout_s: 60,
                stall_after_s: 2.0,
                device: Some("GPU-1".into()),
                watch: None,
            });
            let line = job.line();
            assert!(!line.contains('\n'), "one line");
            let back: Job = serde_json::from_str(&line).unwrap();
            assert_eq!(format!("{back:?}"), format!("{job:?}"), "{}", t.name);
            n += 1;
        }
        assert!(n > 100, "{n} GPU tests");
    }

    #[test]
    fn a_result_line_reads_back_and_noise_is_not_one() {
        let r = WorkerResult::Stalled {
            stall: "stall: launch 0".into(),
        };
        let line = r.line();
        assert!(line.starts_with(MARKER));
        assert_eq!(WorkerResult::of_line(&line), Some(r.clone()));
        assert_eq!(WorkerResult::of_line("noise"), None);
        assert_eq!(WorkerResult::of_line(&format!("{MARKER}{{")), None);
        assert!(!r.completed());
        assert!(WorkerResult::NotRun { reason: "r".into() }.completed());
    }
}
