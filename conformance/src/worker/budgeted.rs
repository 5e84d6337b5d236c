//! A litmus test run a chunk of launches at a time (`Tuning::budget_chunk`:
//! as many as a litmus trial makes from one load of its module, unless the
//! environment says otherwise) under one environment until an
//! outcome sought shows or the environment's GPU-time budget is spent: a
//! mutant until an outcome kills it (`mutant.rs`), a quality warning's test
//! until its allowed outcome shows (`escalate.rs`).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use gridcheck_gpu::{Budget, Gpu};
use gridcheck_report::{MutantRun, SearchPoint, Tuning};
use gridcheck_spec::{Litmus, State};

/// What runs: the binary (a cubin, or PTX with the device runtime set on
/// the device), the test's name (its kernels' symbols) and its body.
pub(super) struct Subject<'a> {
    pub binary: &'a Path,
    pub name: &'a str,
    pub litmus: &'a Litmus,
}

/// The wall time a mutant's run under one environment may take: four
/// times its GPU-time budget and five seconds of module loads.
pub(super) fn mutant_wall_limit(env: &SearchPoint) -> Duration {
    Duration::from_secs_f64(env.tuning.mutant_budget_s) * 4 + Duration::from_secs(5)
}

/// Runs `subject` `Tuning::budget_chunk` launches at a time under `env`
/// until `sought` holds of an outcome read back (`kills` counts such
/// instances) or the
/// environment's GPU-time budget (`mutant_budget_s`) is spent, or
/// `wall_limit` in wall time, module loads included.
pub(super) fn run(
    gpu: &Gpu,
    subject: &Subject,
    (env, wall_limit): (&SearchPoint, Duration),
    seed: u64,
    sought: &dyn Fn(&State) -> Result<bool, String>,
) -> Result<MutantRun, String> {
    let t: &Tuning = &env.tuning;
    let budget = Duration::from_secs_f64(t.mutant_budget_s);
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
            launches: t.budget_chunk(),
            seed: gridcheck_gpu::launch_seed(seed, chunk),
        };
        let r = gpu
            .run_litmus_with(subject.binary, subject.name, subject.litmus, &b, t)
            .map_err(|e| e.to_string())?;
        gpu_time += r.launch_elapsed;
        run.instances += r.instances;
        run.launch_failures += r.launch_failures;
        if run.first_launch_error.is_none() {
            run.first_launch_error = r.first_launch_error;
        }
        for (state, n) in r.histogram {
            if sought(&state)? {
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
