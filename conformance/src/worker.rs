//! The worker process (`<harness> --worker`, `process.rs` starts it): reads
//! one [`Job`] a line on its standard input, runs it and prints its
//! [`WorkerResult`] line, until its input ends or a job does not complete
//! (its CUDA context may be unusable). It loads no spec and no options and
//! chooses nothing: the harness resolved the job (`job.rs`).
//!
//! The device is opened at the first GPU job, checked against the job's
//! device, and kept. Every litmus launch is watched (`gridcheck_gpu`'s
//! watchdog): one whose status words stop moving for the job's stall time
//! is answered at once, from the watchdog's thread, as
//! [`WorkerResult::Stalled`] with where it stopped; the launch is left as it
//! is, and the harness ends the worker. A job gets one answer: whichever
//! of the run and the watchdog gives it first.

mod budgeted;
mod escalate;
mod model;
mod mutant;

use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use gridcheck_gpu::{Budget, Gpu, RuntimeFailure};
use gridcheck_spec::{Litmus, RuntimeTest};

use crate::job::{GpuBody, GpuJob, Job, WorkerResult};

/// The worker's main: jobs from standard input until it ends or a job does
/// not complete.
pub fn main() -> ExitCode {
    let reply = Arc::new(Reply::new(Box::new(std::io::stdout())));
    let mut gpu: Option<Gpu> = None;
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        reply.open();
        let result = match serde_json::from_str::<Job>(&line) {
            Ok(job) => run(&job, &mut gpu, &reply),
            Err(e) => WorkerResult::Error {
                message: format!("the worker cannot read its job: {e}"),
            },
        };
        // Answered already (a stall), or a run after which the context
        // may be unusable: this worker is done.
        if !reply.send(&result) || !result.completed() {
            break;
        }
    }
    ExitCode::SUCCESS
}

/// The one answer to the job in hand, on the worker's standard output.
struct Reply {
    /// Whether the job in hand is still unanswered, and where answers go.
    open: Mutex<(bool, Box<dyn Write + Send>)>,
}

impl Reply {
    fn new(out: Box<dyn Write + Send>) -> Reply {
        Reply {
            open: Mutex::new((false, out)),
        }
    }

    /// A job came in.
    fn open(&self) {
        self.open.lock().unwrap_or_else(|p| p.into_inner()).0 = true;
    }

    /// Writes `r` as the answer, unless the job has one: whether it did.
    fn send(&self, r: &WorkerResult) -> bool {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if !open.0 {
            return false;
        }
        open.0 = false;
        let out = &mut open.1;
        let _ = writeln!(out, "{}", r.line()).and_then(|()| out.flush());
        true
    }
}

/// Runs one job.
fn run(job: &Job, gpu: &mut Option<Gpu>, reply: &Arc<Reply>) -> WorkerResult {
    match job {
        Job::Model(j) => model::explore(j),
        Job::Judge(j) => model::judge(j),
        Job::Gpu(j) => match device(gpu, j.device.as_deref(), reply) {
            Ok(g) => {
                g.set_devrt(Some(j.devrt.clone()));
                g.set_stall_after(j.stall_after_s);
                if let Err(e) = g.watch_each_launch(j.watch) {
                    return WorkerResult::Error {
                        message: e.to_string(),
                    };
                }
                run_gpu(g, j)
            }
            Err(e) => *e,
        },
        Job::Escalate(j) => match device(gpu, j.run.device.as_deref(), reply) {
            Ok(g) => {
                g.set_devrt(Some(j.run.devrt.clone()));
                g.set_stall_after(j.run.stall_after_s);
                escalate::run(g, j)
            }
            Err(e) => *e,
        },
        Job::Mutant(j) => match device(gpu, j.device.as_deref(), reply) {
            Ok(g) => {
                g.set_stall_after(j.stall_after_s);
                mutant::run(g, j)
            }
            Err(e) => *e,
        },
    }
}

/// The device, opened at the first GPU job with its watchdog answering a
/// stall; `want`: the UUID the job's device 0 must have (placed by
/// `--devices`).
fn device<'a>(
    gpu: &'a mut Option<Gpu>,
    want: Option<&str>,
    reply: &Arc<Reply>,
) -> Result<&'a mut Gpu, Box<WorkerResult>> {
    let error = |message: String| Box::new(WorkerResult::Error { message });
    if gpu.is_none() {
        let mut g = Gpu::open(0).map_err(|e| error(e.to_string()))?;
        let reply = Arc::clone(reply);
        g.watch_stalls(move |stall| {
            reply.send(&WorkerResult::Stalled { stall });
        })
        .map_err(|e| error(e.to_string()))?;
        *gpu = Some(g);
    }
    let g = gpu.as_mut().ok_or_else(|| error("no device".into()))?;
    if let Some(want) = want
        && g.info().uuid.as_deref() != Some(want)
    {
        return Err(error(format!(
            "the worker was to run on {want}, but its device 0 is {} (CUDA_VISIBLE_DEVICES={})",
            g.info()
                .uuid
                .as_deref()
                .unwrap_or("a device without a UUID"),
            std::env::var("CUDA_VISIBLE_DEVICES").unwrap_or_default()
        )));
    }
    Ok(g)
}

/// Runs a GPU test's job on the device.
fn run_gpu(gpu: &Gpu, j: &GpuJob) -> WorkerResult {
    match &j.body {
        GpuBody::Litmus(l) => litmus(gpu, j, l),
        GpuBody::Runtime(r) => runtime(gpu, j, r),
    }
}

fn litmus(gpu: &Gpu, j: &GpuJob, l: &Litmus) -> WorkerResult {
    let error = |message: String| WorkerResult::Error { message };
    let env = &j.environment;
    let budget = Budget::of(env, j.seed);
    let mut run = match gpu.run_litmus_with(&j.binary, &j.test, l, &budget, env) {
        Ok(run) => run,
        Err(e) => return error(e.to_string()),
    };
    // The extra environments' launches join the same histogram (one with 0
    // launches is for the mutants only).
    for (i, e) in env.extra.iter().enumerate() {
        if e.tuning.launches == 0 {
            continue;
        }
        let seed = gridcheck_gpu::launch_seed(j.seed, EXTRA_SEEDS + i as u32);
        let budget = Budget::of(&e.tuning, seed);
        match gpu.run_litmus_with(&j.binary, &j.test, l, &budget, &e.tuning) {
            Ok(more) => {
                for (state, n) in more.histogram {
                    *run.histogram.entry(state).or_default() += n;
                }
                run.instances += more.instances;
                run.launch_failures += more.launch_failures;
                if run.first_launch_error.is_none() {
                    run.first_launch_error = more.first_launch_error;
                }
                for (s, m) in run.stale.iter_mut().zip(&more.stale) {
                    s.merge(m);
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
        stale: run.stale,
    }
}

/// Where the extra environments' seeds start (`launch_seed(seed, EXTRA_SEEDS
/// + i)`), far from the main run's launch numbers.
const EXTRA_SEEDS: u32 = 1 << 30;

fn runtime(gpu: &Gpu, j: &GpuJob, r: &RuntimeTest) -> WorkerResult {
    match gpu.run_runtime(&j.binary, r) {
        Ok(run) => WorkerResult::Runtime {
            outputs: run.outputs,
            elapsed_s: run.elapsed.as_secs_f64(),
        },
        Err(RuntimeFailure::Load { code, message }) => WorkerResult::LoadFailure { code, message },
        Err(RuntimeFailure::Other(e)) => WorkerResult::Error {
            message: e.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Collects what a [`Reply`] writes.
    #[derive(Clone, Default)]
    struct Lines(Arc<Mutex<Vec<u8>>>);

    impl Write for Lines {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// The run and the watchdog race to answer a job: one answer gets out,
    /// and none before a job came in.
    #[test]
    fn a_job_gets_one_answer() {
        let lines = Lines::default();
        let reply = Arc::new(Reply::new(Box::new(lines.clone())));
        let stall = WorkerResult::Stalled {
            stall: "stall: launch 0".into(),
        };
        assert!(!reply.send(&stall), "no job yet");
        reply.open();
        let sent: Vec<bool> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4).map(|_| s.spawn(|| reply.send(&stall))).collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(sent.iter().filter(|&&b| b).count(), 1, "{sent:?}");
        let text = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
        assert_eq!(text.lines().count(), 1, "{text}");
        assert_eq!(WorkerResult::of_line(text.trim_end()), Some(stall));
    }
}
