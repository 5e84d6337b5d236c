//! What runs the trials: the GPU tier's devices (one worker process at a
//! time on each), the staying workers, and the results computed once a
//! test (the model's exploration, the GPU run). Each GPU trial's run is
//! resolved here once, into the job its worker gets (`job.rs`): the test's
//! body, the binary chosen for the device, the testing environment, the
//! seed, the timeout and the stall time, and the device.

use gridcheck_gpu::DeviceInfo;
use gridcheck_report::{Escalation, ModelSummary, SearchPoint, Status, Tier, TrialId};
use gridcheck_spec::{Litmus, Test, TestBody};
use gridcheck_toolchain::binary::Choice;

use crate::cache::Cache;
use crate::devices::{Place, Pool};
use crate::facts;
use crate::host::{self, HostRun};
use crate::job::{EscalateJob, GpuBody, GpuJob, Job, ModelJob, WorkerResult};
use crate::options::Options;
use crate::plan::Plan;
use crate::process::{self, Servers};
use crate::timeline::Timeline;
use crate::timeouts;

/// A GPU trial's run, resolved: a job for a worker, or a host test's
/// program.
#[derive(Debug, Clone)]
pub enum GpuRun {
    Job(Box<GpuJob>),
    Host(HostRun),
}

impl GpuRun {
    fn test(&self) -> &str {
        match self {
            GpuRun::Job(j) => &j.test,
            GpuRun::Host(h) => &h.test,
        }
    }
}

/// The devices, the workers and the results of a run.
pub struct Runner {
    /// The first device of the GPU tier (the one without `--devices`), or
    /// why the tier cannot run here.
    pub device: Result<DeviceInfo, String>,
    /// The GPU tier's devices, one worker process at a time on each.
    pub devices: Option<Pool>,
    /// The staying GPU workers, one per device.
    servers: Servers,
    /// The library tier's staying programs, one per device
    /// (`staying.rs`).
    pub stayers: crate::staying::Stayers,
    models: Cache<Result<ModelSummary, String>>,
    hardware: Cache<WorkerResult>,
    escalations: Cache<Result<Escalation, String>>,
    /// A compile test's nvcc run, once a test (two rules' trials of one
    /// test compiled at once in one folder raced each other).
    compiles: Cache<Result<gridcheck_toolchain::CompileOutput, String>>,
    /// The GPU seconds the run's escalations may still spend.
    escalation_left: std::sync::Mutex<f64>,
    /// How a worker is started (`process::command`; a stand-in in tests).
    worker: process::WorkerCommand,
    /// What held each device, when (`timeline.rs`).
    pub timeline: Timeline,
}

impl Runner {
    /// The GPU tier's devices when it runs (`Err`: the selection is wrong).
    pub fn new(opts: &Options) -> Result<Runner, String> {
        let (device, devices) = if opts.runs(Tier::Gpu) || opts.runs(Tier::Library) {
            match Pool::new(opts.devices.as_ref())? {
                Ok(pool) => (Ok(pool.selected()[0].clone()), Some(pool)),
                Err(reason) => (Err(reason), None),
            }
        } else {
            (Err("the gpu tier is off".into()), None)
        };
        Ok(Runner {
            device,
            devices,
            servers: Servers::default(),
            stayers: Default::default(),
            models: Cache::default(),
            hardware: Cache::default(),
            escalations: Cache::default(),
            compiles: Cache::default(),
            escalation_left: std::sync::Mutex::new(opts.escalate.total_s),
            worker: process::command,
            timeline: Timeline::default(),
        })
    }

    /// The `sm_XX` GPU trials are named for: the device's, or the build target.
    pub fn sm(&self) -> String {
        match &self.device {
            Ok(d) => d.sm.clone(),
            Err(_) => "sm_90".into(),
        }
    }

    /// The device that runs a test's GPU trials (or a mutant's runs), or
    /// why none can.
    pub fn device_for(&self, test: &str) -> Result<&DeviceInfo, &String> {
        match (&self.devices, &self.device) {
            (Some(pool), Ok(_)) => Ok(pool.device(test)),
            (_, d) => d.as_ref(),
        }
    }

    /// Where a test's worker runs: its device's slot, and the place.
    pub fn place(&self, test: &str) -> (Option<usize>, Place) {
        let slot = self.devices.as_ref().map(|p| p.slot(test));
        let place = match (&self.devices, slot) {
            (Some(p), Some(s)) => p.place(s),
            _ => Place::default(),
        };
        (slot, place)
    }

    /// Runs `f` while the test's device is this run's (one worker at a
    /// time on each device); the hold goes on the run's timeline as `what`
    /// of `test`.
    pub fn on_device<T>(
        &self,
        slot: Option<usize>,
        what: &'static str,
        test: &str,
        f: impl FnOnce() -> T,
    ) -> T {
        let asked = self.timeline.now();
        let _one_at_a_time = self.devices.as_ref().zip(slot).map(|(p, s)| p.lock(s));
        let start = self.timeline.now();
        let out = f();
        self.timeline
            .record(slot.unwrap_or(0), what, test, asked, start);
        out
    }

    /// The model's outcome for a litmus test, computed once, in a worker
    /// process with the model timeout.
    pub fn model(&self, plan: &Plan, test: &str, litmus: &Litmus) -> Result<ModelSummary, String> {
        self.models.get_or(test, || {
            let job = Job::Model(ModelJob {
                test: test.to_string(),
                litmus: litmus.clone(),
                timeout_s: plan.opts.model_timeout,
            });
            match process::run_once(&job, &Place::default()) {
                WorkerResult::Model(m) => Ok(m),
                WorkerResult::Timeout { seconds, .. } => Err(format!(
                    "the model did not finish in {seconds} s (--model-timeout)"
                )),
                WorkerResult::Error { message } => Err(message),
                WorkerResult::Crash { exit, stderr_tail } => {
                    Err(format!("the model's process died ({exit}): {stderr_tail}"))
                }
                other => Err(format!("unexpected worker result {other:?}")),
            }
        })
    }

    /// A GPU trial's run on `device`, resolved once: the binary chosen (for
    /// the record), and the job or program; or why it cannot run there.
    pub fn resolve(
        &self,
        plan: &Plan,
        trial: &TrialId,
        test: &Test,
        device: &DeviceInfo,
    ) -> Result<(Choice, GpuRun), (Status, String)> {
        let opts = &plan.opts;
        let choice = opts.kernels.choose(device, test)?;
        let timeout_s = timeouts::Limits::of(opts.timeout, test).timeout;
        let body = match &test.body {
            TestBody::Litmus(l) => GpuBody::Litmus(l.clone()),
            TestBody::Runtime(r) => GpuBody::Runtime(r.clone()),
            TestBody::Host(h) => {
                let run = GpuRun::Host(HostRun {
                    test: test.name.clone(),
                    exe: choice.built.file.clone(),
                    outputs: h.outputs.clone(),
                    timeout_s,
                });
                return Ok((choice, run));
            }
            TestBody::Compile(_) => {
                return Err((Status::Fail, "a compile test has no GPU run".into()));
            }
        };
        let (_, place) = self.place(&test.name);
        let job = GpuJob {
            trial: trial.clone(),
            test: test.name.clone(),
            body,
            binary: choice.built.file.clone(),
            devrt: opts.kernels.devrt(),
            environment: plan.tuned.tuning.clone(),
            seed: opts.seed,
            timeout_s,
            stall_after_s: timeouts::trial_stall_after(
                timeout_s,
                facts::known_hang(&plan.facts, &test.name),
            ),
            device: place.expect_uuid,
            watch: None,
        };
        Ok((choice, GpuRun::Job(Box::new(job))))
    }

    /// The GPU result of a test, run once (every rule's trial of the test
    /// shares it) on the test's device, one worker at a time on each
    /// device: in the device's staying worker, or in a process of its own
    /// for a test that sets device runtime limits and with
    /// `--fresh-context`; a host test's program is its own process. A
    /// litmus run killed at its timeout is classified by a watched rerun
    /// unless a known hang covers it (`timeouts.rs`).
    pub fn hardware(&self, plan: &Plan, run: &GpuRun) -> WorkerResult {
        self.hardware.get_or(run.test(), || {
            let (slot, place) = self.place(run.test());
            let what = match run {
                GpuRun::Host(_) => "host",
                GpuRun::Job(j) if matches!(j.body, GpuBody::Litmus(_)) => "litmus",
                GpuRun::Job(_) => "runtime",
            };
            self.on_device(slot, what, run.test(), || match run {
                GpuRun::Host(h) => host::run(h, &place),
                GpuRun::Job(j) => {
                    let job = Job::Gpu((**j).clone());
                    let result = if !plan.opts.fresh_context && stays(j) {
                        self.servers
                            .run_with(slot.unwrap_or(0), &job, || (self.worker)(&place))
                    } else {
                        process::run_once_with(&job, || (self.worker)(&place))
                    };
                    let litmus = matches!(j.body, GpuBody::Litmus(_));
                    match result {
                        WorkerResult::Timeout { .. }
                            if litmus
                                && timeouts::should_classify(
                                    plan.opts.classify,
                                    facts::known_hang(&plan.facts, &j.test),
                                ) =>
                        {
                            timeouts::classify(j, &place)
                        }
                        other => other,
                    }
                }
            })
        })
    }
}

impl Runner {
    /// A compile test's nvcc run, made by `compile` once a test (every
    /// rule's trial of the test shares it).
    pub fn compiled(
        &self,
        test: &str,
        compile: impl FnOnce() -> Result<gridcheck_toolchain::CompileOutput, String>,
    ) -> Result<gridcheck_toolchain::CompileOutput, String> {
        self.compiles.get_or(test, compile)
    }

    /// A quality warning's test escalated, once a test (every rule's trial
    /// of it shares it): alone in a fresh worker on its device, under the
    /// plan's environments in turn (`escalate.rs`), while the run's
    /// escalation budget lasts; or why it was not.
    pub fn escalate(&self, steps: &[SearchPoint], run: &GpuRun) -> Result<Escalation, String> {
        let GpuRun::Job(j) = run else {
            return Err("a host test is not escalated".into());
        };
        self.escalations.get_or(&j.test, || {
            let wall_s = {
                let left = self
                    .escalation_left
                    .lock()
                    .unwrap_or_else(|p| p.into_inner());
                if *left < MIN_ESCALATION_S {
                    return Err(format!(
                        "not escalated: the run's escalations have spent their time \
                         ({:.1} s left, --escalate-total)",
                        left.max(0.0)
                    ));
                }
                *left
            };
            let job = Job::Escalate(EscalateJob {
                run: (**j).clone(),
                steps: steps.to_vec(),
                wall_s,
                // The steps' time, and a worker's start and module loads.
                timeout_s: wall_s.ceil() as u64 + 15,
            });
            let (slot, place) = self.place(&j.test);
            let start = std::time::Instant::now();
            let result = self.on_device(slot, "escalation", &j.test, || {
                process::run_once_with(&job, || (self.worker)(&place))
            });
            let took = start.elapsed().as_secs_f64();
            *self
                .escalation_left
                .lock()
                .unwrap_or_else(|p| p.into_inner()) -= took;
            match result {
                WorkerResult::Escalated(ran) => Ok(Escalation::of(ran).taking(took)),
                other => Err(format!("the escalation did not finish: {other:?}")),
            }
        })
    }
}

/// The least wall time worth an escalation: below it, the run's
/// escalations have spent theirs.
const MIN_ESCALATION_S: f64 = 0.5;

/// Whether a job runs in the device's staying worker: a litmus or runtime
/// test that sets no device runtime limit (the limits are the device's,
/// and a user's program sets them before its first launch).
pub fn stays(j: &GpuJob) -> bool {
    match &j.body {
        GpuBody::Litmus(l) => l.limits.is_empty(),
        GpuBody::Runtime(r) => r.limits.is_empty(),
    }
}

#[cfg(test)]
mod tests;
