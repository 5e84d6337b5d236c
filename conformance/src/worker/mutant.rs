//! The worker side of a mutant's GPU runs: the mutant under each of the
//! job's environments in turn, a chunk of launches at a time (budgeted.rs), until an outcome that
//! kills it is read back or the environment's GPU-time budget is spent.

use gridcheck_gpu::Gpu;
use gridcheck_report::MutantRun;
use gridcheck_spec::State;

use super::budgeted::{self, Subject};
use crate::job::{MutantJob, WorkerResult};

/// The mutant under each environment of the job: while it survives, the
/// next one (each with its own budget; a kill's time counts from the first
/// launch of the first environment) when `stop_at_kill`, else every one to
/// the end (`--tune`).
pub(super) fn run(gpu: &Gpu, j: &MutantJob) -> WorkerResult {
    let mut runs: Vec<MutantRun> = Vec::new();
    let mut spent = 0.0;
    for env in &j.environments {
        let c = &j.candidate;
        let subject = Subject {
            binary: &j.cubin,
            name: &c.name,
            litmus: &c.litmus,
        };
        let kills = |state: &State| gridcheck_mutate::kills(c.original, &c.litmus.condition, state);
        let limit = budgeted::mutant_wall_limit(env);
        match budgeted::run(gpu, &subject, (env, limit), j.seed, &kills) {
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
