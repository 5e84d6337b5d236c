//! The worker side of an escalation: a quality warning's test under each of
//! the job's environments in turn, a chunk of launches at a time (budgeted.rs), until an instance
//! satisfies the test's condition (the allowed outcome the suite did not
//! see) or the environment's budget is spent; the steps up to the first
//! that showed it, or up to the job's wall time.

use std::time::{Duration, Instant};

use gridcheck_gpu::Gpu;
use gridcheck_report::EscalationStep;
use gridcheck_spec::State;

use super::budgeted::{self, Subject};
use crate::job::{EscalateJob, GpuBody, WorkerResult};

pub(super) fn run(gpu: &Gpu, j: &EscalateJob) -> WorkerResult {
    let GpuBody::Litmus(l) = &j.run.body else {
        return WorkerResult::Error {
            message: "only a litmus test is escalated".into(),
        };
    };
    let subject = Subject {
        binary: &j.run.binary,
        name: &j.run.test,
        litmus: l,
    };
    let shows = |state: &State| l.condition.holds(state);
    let start = Instant::now();
    let all = Duration::from_secs_f64(j.wall_s);
    let mut steps = Vec::new();
    for (i, env) in j.steps.iter().enumerate() {
        // Each step twice its GPU budget in wall time and a second of
        // loads, within what the whole escalation has left.
        let Some(left) = all.checked_sub(start.elapsed()).filter(|d| !d.is_zero()) else {
            break;
        };
        let step = Duration::from_secs_f64(env.tuning.mutant_budget_s * 2.0 + 1.0).min(left);
        let seed = gridcheck_gpu::launch_seed(j.run.seed, ESCALATION_SEEDS + i as u32);
        match budgeted::run(gpu, &subject, (env, step), seed, &shows) {
            Ok(r) => {
                let shown = r.kills > 0;
                steps.push(EscalationStep {
                    environment: r.environment,
                    instances: r.instances,
                    observed: r.kills,
                    budget_s: env.tuning.mutant_budget_s,
                    histogram: r.histogram,
                });
                if shown {
                    break;
                }
            }
            Err(e) => {
                return WorkerResult::Error {
                    message: format!("escalation under `{}`: {e}", env.name),
                };
            }
        }
    }
    WorkerResult::Escalated(steps)
}

/// Where an escalation's seeds start, apart from the suite's launches and
/// its extra environments' (`worker.rs`).
const ESCALATION_SEEDS: u32 = 1 << 29;
