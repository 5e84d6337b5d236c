//! The worker side of a mutant's GPU runs: the mutant under each of the
//! job's environments in turn, one launch at a time, until an outcome that
//! kills it is read back or the environment's GPU-time budget is spent.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use gridcheck_gpu::{Budget, Gpu};
use gridcheck_mutate::Candidate;
use gridcheck_report::{MutantRun, SearchPoint, Tuning};
use gridcheck_spec::State;

use crate::job::{MutantJob, WorkerResult};

/// The mutant under each environment of the job: while it survives, the
/// next one (each with its own budget; a kill's time counts from the first
/// launch of the first environment) when `stop_at_kill`, else every one to
/// the end (`--tune`).
pub(super) fn run(gpu: &Gpu, j: &MutantJob) -> WorkerResult {
    let mut runs: Vec<MutantRun> = Vec::new();
    let mut spent = 0.0;
    for env in &j.environments {
        match run_budgeted(gpu, &j.cubin, &j.candidate, env, j.seed) {
            Ok(mut r) => {
                let killed = r.kills > 0;
                if j.stop_at_kill {
                    r.time_to_kill_s = r.time_to_kill_s.map(|t| t + spent);
                    spent += r.gpu_s;
                }
                runs.push(r);
                if j.stop_at_kill && killed {
                    break;
                }
            }
            Err(e) => {
                return WorkerResult::Error {
                    message: format!("environment `{}`: {e}", env.name),
                };
            }
        }
    }
    WorkerResult::MutantRuns(runs)
}

/// Runs one launch at a time until an outcome kills the mutant or the
/// environment's GPU-time budget is spent (or four times that in wall time,
/// module loads included).
fn run_budgeted(
    gpu: &Gpu,
    cubin: &std::path::Path,
    c: &Candidate,
    env: &SearchPoint,
    seed: u64,
) -> Result<MutantRun, String> {
    let t: &Tuning = &env.tuning;
    let budget = Duration::from_secs_f64(t.mutant_budget_s);
    let wall_limit = budget * 4 + Duration::from_secs(5);
    let start = Instant::now();
    let mut histogram: BTreeMap<State, u64> = BTreeMap::new();
    let mut run = MutantRun {
        environment: env.name.clone(),
        histogram: Vec::new(),
        instances: 0,
        kills: 0,
        launch_failures: 0,
        first_launch_error: None,
        gpu_s: 0.0,
        time_to_kill_s: None,
        wall_s: 0.0,
    };
    let mut gpu_time = Duration::ZERO;
    for chunk in 0u32.. {
        let b = Budget {
            instances_per_launch: t.instances,
            launches: 1,
            seed: gridcheck_gpu::launch_seed(seed, chunk),
        };
        let r = gpu
            .run_litmus_with(cubin, &c.name, &c.litmus, &b, t)
            .map_err(|e| e.to_string())?;
        gpu_time += r.launch_elapsed;
        run.instances += r.instances;
        run.launch_failures += r.launch_failures;
        if run.first_launch_error.is_none() {
            run.first_launch_error = r.first_launch_error;
        }
        for (state, n) in r.histogram {
            if gridcheck_mutate::kills(c.original, &c.litmus.condition, &state)? {
                run.kills += n;
            }
            *histogram.entry(state).or_default() += n;
        }
        if run.kills > 0 {
            run.time_to_kill_s = Some(gpu_time.as_secs_f64());
            break;
        }
        if gpu_time >= budget || start.elapsed() >= wall_limit {
            break;
        }
    }
    run.gpu_s = gpu_time.as_secs_f64();
    run.wall_s = start.elapsed().as_secs_f64();
    run.histogram = histogram.into_iter().collect();
    Ok(run)
}
