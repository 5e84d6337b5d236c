//! A campaign's batch worker (`gridcheck-campaign worker BATCH --run
//! I,J,K ...`): the batch's module loaded once, the launch pool reserved
//! for every program of the batch, then the programs of `--run` run in that
//! order (a few watched launches each), each reported as one line on
//! standard output. A program that leaves the context unusable (a hang, a
//! CUDA error) is reported and ends the worker. With [`FAKE_GPU`] set it
//! runs no GPU (`fake.rs`).

use std::path::Path;
use std::process::ExitCode;

use gridcheck_gpu::watch::{LONG_RUN, STALL};
use gridcheck_gpu::{Budget, Gpu, launch_seed};

use crate::batch::{CUBIN, CampaignProgram, read_batch};
use crate::fake::{self, FAKE_GPU};
use crate::findings::Outcome;
use crate::job::{Job, NO_MODULE, Report, STOPPED, say};

/// `gridcheck-campaign worker ...`.
pub fn worker_main(argv: &[String]) -> ExitCode {
    let job = match Job::parse(argv) {
        Ok(j) => j,
        Err(e) => {
            say(&Report::Unusable {
                reason: format!("worker: {e}"),
            });
            return ExitCode::from(NO_MODULE);
        }
    };
    let programs = match read_batch(&job.batch) {
        Ok(p) => p,
        Err(e) => {
            say(&Report::Unusable { reason: e });
            return ExitCode::from(NO_MODULE);
        }
    };
    if let Some(rules) = std::env::var_os(FAKE_GPU) {
        return fake::run(Path::new(&rules), &programs, &job);
    }
    match on_gpu(&job, &programs) {
        Ok(code) => code,
        Err(reason) => {
            say(&Report::Unusable { reason });
            ExitCode::from(NO_MODULE)
        }
    }
}

/// Runs the job on GPU 0; `Err` when nothing could run.
fn on_gpu(job: &Job, programs: &[CampaignProgram]) -> Result<ExitCode, String> {
    let mut gpu = Gpu::open(0).map_err(|e| format!("no GPU: {e}"))?;
    gpu.watch_each_launch(job.watch)
        .map_err(|e| e.to_string())?;
    say(&Report::Device {
        name: gpu.info().name.clone(),
    });
    // The launch pool every program of the batch needs, set before the
    // first launch (the runner raises it per program otherwise): the same
    // whichever programs this worker runs.
    let pending = programs
        .iter()
        .filter_map(|p| p.litmus().ok())
        .map(|(_, l)| gridcheck_kernelgen::layout(&l).pending_launches_per_instance())
        .max()
        .unwrap_or(0);
    gpu.reserve_pending_launches(job.instances as usize * pending as usize + 1024)
        .map_err(|e| e.to_string())?;
    let module = gpu
        .load_module(&job.batch.join(CUBIN))
        .map_err(|e| format!("the batch's module did not load: {e}"))?;
    for (pos, &i) in job.run.iter().enumerate() {
        let Some(p) = programs.get(i) else {
            say(&Report::Unusable {
                reason: format!("the batch has no program {i}"),
            });
            return Ok(ExitCode::from(NO_MODULE));
        };
        let (t, l) = match p.litmus() {
            Ok(x) => x,
            Err(e) => {
                say(&Report::Program {
                    index: i,
                    outcome: Outcome::NotRun { reason: e },
                });
                continue;
            }
        };
        let budget = Budget {
            instances_per_launch: job.instances,
            launches: job.launches_at(pos),
            seed: launch_seed(job.seed, i as u32),
        };
        let outcome = match gpu.run_litmus_in(&module, &t.name, &l, &budget, &job.env) {
            Ok(r) => Outcome::Ran {
                histogram: r.histogram.into_iter().collect(),
                instances: r.instances,
                launch_failures: r.launch_failures,
                first_launch_error: r.first_launch_error,
                elapsed_s: r.elapsed.as_secs_f64(),
                stale: r.stale,
            },
            Err(e) => {
                let message = e.to_string();
                if message.contains(STALL) || message.contains(LONG_RUN) {
                    Outcome::Hang { message }
                } else {
                    Outcome::Error { message }
                }
            }
        };
        let ends = outcome.ends_worker();
        say(&Report::Program { index: i, outcome });
        if ends {
            return Ok(ExitCode::from(STOPPED));
        }
    }
    Ok(ExitCode::SUCCESS)
}
