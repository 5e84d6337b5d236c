//! The golden of a recorded run: one line a trial, sorted by trial name,
//! the environment once in a header (herd's `.expected` is the model). A
//! reviewer diffs two goldens with `git diff`; `cargo xtask record` writes
//! it beside the run's results (`results.jsonl.gz`), which keep everything else
//! (messages, model summaries, timings).
//!
//! A line is `<status> <trial> <test hash or -> [<verdict> states=N#H]
//! [<histogram>]`: a trial with a model verdict gives it with the number of
//! reachable states and a short hash of the set (a set can be thousands of
//! characters; the results file has it whole), a GPU litmus trial its
//! histogram (`state=count`, `*` after a state that satisfies the
//! condition, `!` after one the model cannot reach). States are written
//! with their observables in name order, `k=v` joined by `,`. A trial that
//! ran a binary other than its architecture's own says which (`[ptx-jit
//! sm_90]`); the header names the toolchain that built the kernels.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use gridcheck_spec::State;

use gridcheck_record::{Environment, TrialRecord};

/// The first line of every golden.
pub const GOLDEN_HEADER: &str = "# gridcheck golden: one line a trial, sorted by trial; written by `cargo xtask record`, do not edit";

/// The golden of `records`: when the file holds a trial twice (a resumed
/// run), the later record is the one written, as every reader does.
pub fn golden(records: &[TrialRecord]) -> String {
    let mut latest: BTreeMap<String, &TrialRecord> = BTreeMap::new();
    for r in records {
        latest.insert(r.trial.to_string(), r);
    }
    let header_env = most_common_environment(latest.values().copied());
    let mut out = String::new();
    out.push_str(GOLDEN_HEADER);
    out.push('\n');
    match &header_env {
        Some(env) => {
            let _ = writeln!(out, "# environment: {env}");
        }
        None => out.push_str("# environment: none (no GPU trial)\n"),
    }
    for (trial, r) in &latest {
        let _ = write!(
            out,
            "{} {trial} {}",
            r.status,
            r.test_hash.as_deref().unwrap_or("-")
        );
        if let Some(m) = &r.model {
            let _ = write!(
                out,
                " {} states={}#{}",
                m.verdict,
                m.states.len(),
                fnv(&states(m.states.iter()))
            );
        }
        if let Some(h) = &r.hardware {
            out.push_str(" {");
            for (i, row) in h.rows.iter().enumerate() {
                if i > 0 {
                    out.push_str(" | ");
                }
                let _ = write!(out, "{}={}", state(&row.state), row.count);
                if row.satisfies {
                    out.push('*');
                }
                if !row.modeled {
                    out.push('!');
                }
            }
            out.push('}');
        }
        // A binary other than the architecture's own (a lower minor's, the
        // PTX through the driver's JIT).
        if let Some(b) = r.environment.as_ref().and_then(|e| e.binary.as_ref())
            && !matches!(b.kind.as_str(), "cubin" | "executable")
        {
            let _ = write!(out, " [{} {}]", b.kind, b.arch);
        }
        if let Some(env) = r.environment.as_ref().map(environment_line)
            && header_env.as_ref() != Some(&env)
        {
            let _ = write!(out, " @ {env}");
        }
        out.push('\n');
    }
    out
}

/// The environment as the golden writes it: where it ran, without the
/// device (several GPUs of one model share a header).
fn environment_line(env: &Environment) -> String {
    let kernels = env
        .toolchain
        .as_ref()
        .map(|t| format!(", kernels of nvcc {}", t.nvcc))
        .unwrap_or_default();
    format!(
        "{} ({}), driver {} (CUDA {}), nvcc {}{kernels}",
        env.gpu,
        env.sm,
        env.driver_version.as_deref().unwrap_or("?"),
        env.driver,
        env.nvcc.as_deref().unwrap_or("?")
    )
}

fn most_common_environment<'a>(records: impl Iterator<Item = &'a TrialRecord>) -> Option<String> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for r in records {
        if let Some(env) = &r.environment {
            *counts.entry(environment_line(env)).or_default() += 1;
        }
    }
    let most = counts.values().copied().max()?;
    counts.into_iter().find(|(_, n)| *n == most).map(|(e, _)| e)
}

fn state(s: &State) -> String {
    s.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// A short hash of a text (FNV-1a, 32 bits), to show that a long state
/// set changed without writing it out.
fn fnv(text: &str) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for b in text.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    format!("{h:08x}")
}

fn states<'a>(ss: impl Iterator<Item = &'a State>) -> String {
    ss.map(state).collect::<Vec<_>>().join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use gridcheck_record::{HardwareResult, Observation, Row, Status};

    fn record(trial: &str, status: Status) -> TrialRecord {
        TrialRecord {
            trial: trial.parse().unwrap(),
            status,
            message: "m".into(),
            model: None,
            hardware: None,
            compile: None,
            environment: None,
            test_hash: Some("00ff".into()),
            commit: None,
            recorded_as: None,
            run_id: None,
            run_started: None,
            escalation: None,
            library: None,
        }
    }

    fn env(driver: &str) -> Environment {
        Environment {
            gpu: "NVIDIA H100 80GB HBM3".into(),
            sm: "sm_90".into(),
            driver: "13.0".into(),
            nvcc: Some("13.0.88".into()),
            driver_version: Some(driver.into()),
            tuning: None,
            tuning_file: None,
            binary: None,
            toolchain: None,
            device: None,
        }
    }

    #[test]
    fn one_sorted_line_a_trial_with_the_histogram_marked() {
        let mut gpu = record("gpu/sm_90/cdp2.a/t1", Status::Fail);
        gpu.environment = Some(env("580.159.04"));
        let s = |x| State::from([("x".to_string(), x)]);
        gpu.hardware = Some(HardwareResult {
            rows: vec![
                Row {
                    state: s(0),
                    count: 3,
                    satisfies: true,
                    modeled: false,
                },
                Row {
                    state: s(1),
                    count: 5,
                    satisfies: false,
                    modeled: true,
                },
            ],
            positive: 3,
            negative: 5,
            observation: Observation::Sometimes,
            instances: 8,
            launch_failures: 0,
            first_launch_error: None,
            elapsed_s: 1.0,
            seed: 1,
            stale: Vec::new(),
        });
        let first = record("gpu/sm_90/cdp2.a/t0", Status::Pass);
        let g = golden(&[gpu, first]);
        let lines: Vec<&str> = g.lines().collect();
        assert_eq!(lines[0], GOLDEN_HEADER);
        assert_eq!(
            lines[1],
            "# environment: NVIDIA H100 80GB HBM3 (sm_90), driver 580.159.04 (CUDA 13.0), nvcc 13.0.88"
        );
        assert_eq!(lines[2], "pass gpu/sm_90/cdp2.a/t0 00ff");
        assert_eq!(lines[3], "fail gpu/sm_90/cdp2.a/t1 00ff {x=0=3*! | x=1=5}");
    }

    #[test]
    fn the_later_record_of_a_trial_wins_and_another_environment_is_named() {
        let mut a = record("gpu/sm_90/cdp2.a/t0", Status::Timeout);
        a.environment = Some(env("580.159.04"));
        let mut b = record("gpu/sm_90/cdp2.a/t0", Status::Pass);
        b.environment = Some(env("580.159.04"));
        let mut c = record("gpu/sm_90/cdp2.a/t1", Status::Pass);
        c.environment = Some(env("590.1"));
        let mut d = record("gpu/sm_90/cdp2.a/t2", Status::Pass);
        d.environment = Some(env("580.159.04"));
        let g = golden(&[a, b, c, d]);
        assert!(g.contains("\npass gpu/sm_90/cdp2.a/t0 00ff\n"), "{g}");
        assert!(!g.contains("timeout"), "{g}");
        assert!(
            g.contains("t1 00ff @ NVIDIA H100 80GB HBM3 (sm_90), driver 590.1"),
            "{g}"
        );
    }
}
