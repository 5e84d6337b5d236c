//! A campaign's batch worker (`conformance campaign-worker BATCH`): the
//! batch's module loaded once, the launch pool reserved for every program,
//! each program run (a few watched launches) and reported as one line on
//! standard output; a program that leaves the context unusable (a hang, a
//! CUDA error) is reported and ends the worker. With [`FAKE_GPU`] set it
//! runs no GPU.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use gridcheck_gpu::watch::{LONG_RUN, STALL};
use gridcheck_gpu::{Budget, Gpu, launch_seed};
use gridcheck_report::Tuning;
use serde::{Deserialize, Serialize};

use super::findings::{Outcome, known_hang};
use super::{CUBIN, CampaignProgram, read_batch};

/// The line prefix of a worker's report of one program.
pub(super) const MARKER: &str = "GRIDCHECK-CAMPAIGN ";
/// A worker's exit code after a program that left the context unusable.
pub(super) const STOPPED: u8 = 3;
/// A worker's exit code when its module did not load.
pub(super) const NO_MODULE: u8 = 4;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Line {
    pub index: usize,
    pub outcome: Outcome,
}

fn say(index: usize, outcome: Outcome) {
    let l = Line { index, outcome };
    if let Ok(j) = serde_json::to_string(&l) {
        println!("{MARKER}{j}");
        let _ = std::io::stdout().flush();
    }
}

/// The worker: `BATCH --from K [--skip I,J] --instances N --launches L --seed S
/// [--max-delay C] [--stress-words W]` (the built-in environment otherwise).
pub fn worker_main(argv: &[String]) -> ExitCode {
    let mut it = argv.iter();
    let dir = it.next().cloned().unwrap_or_default();
    let (mut from, mut skip, mut instances, mut launches, mut seed) =
        (0usize, Vec::new(), 512u32, 2u32, 1u64);
    let mut env = Tuning::default();
    while let (Some(f), Some(v)) = (it.next(), it.next()) {
        match f.as_str() {
            "--from" => from = v.parse().unwrap_or(0),
            "--skip" => {
                skip = v
                    .split(',')
                    .filter_map(|s| s.parse::<usize>().ok())
                    .collect()
            }
            "--instances" => instances = v.parse().unwrap_or(512),
            "--launches" => launches = v.parse().unwrap_or(2),
            "--seed" => seed = v.parse().unwrap_or(1),
            "--max-delay" => env.max_delay_cycles = v.parse().unwrap_or(env.max_delay_cycles),
            "--stress-words" => env.stress_words = v.parse().unwrap_or(env.stress_words),
            _ => {}
        }
    }
    let dir = Path::new(&dir);
    let programs = match read_batch(dir) {
        Ok(p) => p,
        Err(e) => {
            say(from, Outcome::NotRun { reason: e });
            return ExitCode::from(NO_MODULE);
        }
    };
    if std::env::var_os(FAKE_GPU).is_some() {
        return fake_worker(&programs, from, &skip);
    }
    let gpu = match Gpu::open(0) {
        Ok(g) => g,
        Err(e) => {
            say(
                from,
                Outcome::NotRun {
                    reason: format!("no GPU: {e}"),
                },
            );
            return ExitCode::from(NO_MODULE);
        }
    };
    // The launch pool every program of the batch needs, set before the
    // first launch (the runner raises it per program otherwise).
    let pending = programs
        .iter()
        .filter_map(|p| p.litmus().ok())
        .map(|(_, l)| gridcheck_kernelgen::layout(&l).pending_launches_per_instance())
        .max()
        .unwrap_or(0);
    if let Err(e) = gpu.reserve_pending_launches(instances as usize * pending as usize + 1024) {
        say(
            from,
            Outcome::NotRun {
                reason: e.to_string(),
            },
        );
        return ExitCode::from(NO_MODULE);
    }
    let module = match gpu.load_module(&dir.join(CUBIN)) {
        Ok(m) => m,
        Err(e) => {
            say(
                from,
                Outcome::NotRun {
                    reason: format!("the batch's module did not load: {e}"),
                },
            );
            return ExitCode::from(NO_MODULE);
        }
    };
    for (i, p) in programs.iter().enumerate().skip(from) {
        if skip.contains(&i) {
            continue;
        }
        let (t, l) = match p.litmus() {
            Ok(x) => x,
            Err(e) => {
                say(i, Outcome::NotRun { reason: e });
                continue;
            }
        };
        let budget = Budget {
            instances_per_launch: instances,
            launches,
            seed: launch_seed(seed, i as u32),
        };
        match gpu.run_litmus_in(&module, &t.name, &l, &budget, &env) {
            Ok(r) => say(
                i,
                Outcome::Ran {
                    histogram: r.histogram.into_iter().collect(),
                    instances: r.instances,
                    launch_failures: r.launch_failures,
                    first_launch_error: r.first_launch_error,
                    elapsed_s: r.elapsed.as_secs_f64(),
                },
            ),
            Err(e) => {
                let message = e.to_string();
                let hang = message.contains(STALL) || message.contains(LONG_RUN);
                say(
                    i,
                    if hang {
                        Outcome::Hang { message }
                    } else {
                        Outcome::Error { message }
                    },
                );
                return ExitCode::from(STOPPED);
            }
        }
    }
    ExitCode::SUCCESS
}

/// Set, the worker runs no GPU: a program that matches a known hang hangs,
/// every other one shows the oracle's first state. For testing the driver,
/// the restarts, the classification and the shrinking where there is no
/// GPU (`tests/campaign.rs`).
pub const FAKE_GPU: &str = "GRIDCHECK_CAMPAIGN_FAKE_GPU";

fn fake_worker(programs: &[CampaignProgram], from: usize, skip: &[usize]) -> ExitCode {
    for (i, p) in programs.iter().enumerate().skip(from) {
        if skip.contains(&i) {
            continue;
        }
        let l = match p.litmus() {
            Ok((_, l)) => l,
            Err(e) => {
                say(i, Outcome::NotRun { reason: e });
                continue;
            }
        };
        if known_hang(&l).is_some() {
            say(
                i,
                Outcome::Hang {
                    message: format!("{STALL} (a fake GPU)"),
                },
            );
            return ExitCode::from(STOPPED);
        }
        let histogram = p
            .states
            .first()
            .map(|s| vec![(s.clone(), 1)])
            .unwrap_or_default();
        say(
            i,
            Outcome::Ran {
                histogram,
                instances: 1,
                launch_failures: 0,
                first_launch_error: None,
                elapsed_s: 0.0,
            },
        );
    }
    ExitCode::SUCCESS
}
