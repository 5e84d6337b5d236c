//! What the campaign's driver asks of a batch worker and what the worker
//! answers: the [`Job`] (a batch, the indices of the programs to run in
//! order, the budget and the testing environment), which travels as the
//! worker's arguments, and the [`Report`] lines the worker prints, each
//! after [`MARKER`] on standard output.

use std::io::Write;
use std::path::PathBuf;

use gridcheck_report::Tuning;
use serde::{Deserialize, Serialize};

use crate::findings::Outcome;

/// The line prefix of a worker's reports.
pub const MARKER: &str = "GRIDCHECK-CAMPAIGN ";
/// A worker's exit code after a program that left the context unusable.
pub const STOPPED: u8 = 3;
/// A worker's exit code when the batch, the GPU or its module could not be
/// had: nothing ran.
pub const NO_MODULE: u8 = 4;

/// One line a worker reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Report {
    /// The device it runs on, before any program.
    Device { name: String },
    /// What became of one program of the batch.
    Program { index: usize, outcome: Outcome },
    /// Why nothing could run (the batch, the GPU, the module).
    Unusable { reason: String },
}

pub fn say(r: &Report) {
    if let Ok(j) = serde_json::to_string(r) {
        println!("{MARKER}{j}");
        let _ = std::io::stdout().flush();
    }
}

/// What a worker is asked to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub batch: PathBuf,
    /// Indices of the batch's programs, in the order to run them.
    pub run: Vec<usize>,
    pub instances: u32,
    pub launches: u32,
    pub seed: u64,
    pub env: Tuning,
    /// Each launch watched (`Gpu::watch_each_launch`): stall seconds,
    /// budget seconds.
    pub watch: Option<(f64, f64)>,
    /// Launches of the last program of `run`, where not `launches` (a
    /// rerun's lead, given the instances that bound its rate).
    pub lead_launches: Option<u32>,
}

impl Job {
    /// Launches of the program at `pos` in `run`.
    pub fn launches_at(&self, pos: usize) -> u32 {
        match self.lead_launches {
            Some(n) if pos + 1 == self.run.len() => n,
            _ => self.launches,
        }
    }

    /// The worker's arguments for this job (after `worker`).
    pub fn args(&self) -> Vec<String> {
        let run: Vec<String> = self.run.iter().map(|i| i.to_string()).collect();
        let mut args = vec![
            self.batch.display().to_string(),
            "--run".into(),
            run.join(","),
            "--instances".into(),
            self.instances.to_string(),
            "--launches".into(),
            self.launches.to_string(),
            "--seed".into(),
            self.seed.to_string(),
            "--environment".into(),
            serde_json::to_string(&self.env).unwrap_or_default(),
        ];
        if let Some((stall, budget)) = self.watch {
            args.extend(["--watch".into(), format!("{stall},{budget}")]);
        }
        if let Some(n) = self.lead_launches {
            args.extend(["--lead-launches".into(), n.to_string()]);
        }
        args
    }

    /// Reads [`Job::args`] back; a bad one is named.
    pub fn parse(argv: &[String]) -> Result<Job, String> {
        let mut it = argv.iter();
        let batch = it.next().ok_or("the batch directory is missing")?.into();
        let mut j = Job {
            batch,
            run: Vec::new(),
            instances: 512,
            launches: 2,
            seed: 1,
            env: Tuning::default(),
            watch: None,
            lead_launches: None,
        };
        while let Some(f) = it.next() {
            let v = it.next().ok_or_else(|| format!("{f} needs a value"))?;
            let num = |what: &str| format!("{f} takes {what}, not `{v}`");
            match f.as_str() {
                "--run" => {
                    j.run = v
                        .split(',')
                        .filter(|s| !s.is_empty())
                        .map(|s| s.parse().map_err(|_| num("indices")))
                        .collect::<Result<_, _>>()?
                }
                "--instances" => j.instances = v.parse().map_err(|_| num("a number"))?,
                "--launches" => j.launches = v.parse().map_err(|_| num("a number"))?,
                "--seed" => j.seed = v.parse().map_err(|_| num("a number"))?,
                "--environment" => {
                    j.env = serde_json::from_str(v).map_err(|e| format!("{f}: {e}"))?
                }
                "--watch" => j.watch = Some(gridcheck_gpu::watch::parse_watch(v)?),
                "--lead-launches" => {
                    j.lead_launches = Some(v.parse().map_err(|_| num("a number"))?)
                }
                _ => return Err(format!("unknown argument `{f}`")),
            }
        }
        Ok(j)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_travels_as_arguments() {
        let j = Job {
            batch: "d/b0001".into(),
            run: vec![4, 0, 2],
            instances: 64,
            launches: 3,
            seed: 9,
            env: Tuning {
                max_delay_cycles: 0,
                ..Tuning::default()
            },
            watch: Some((0.5, 28.0)),
            lead_launches: Some(6),
        };
        assert_eq!(Job::parse(&j.args()).unwrap(), j);
        assert_eq!(
            (j.launches_at(0), j.launches_at(1), j.launches_at(2)),
            (3, 3, 6)
        );
        let plain = Job {
            lead_launches: None,
            ..j.clone()
        };
        assert_eq!(Job::parse(&plain.args()).unwrap(), plain);
        assert_eq!(plain.launches_at(2), 3);
        let bad = |a: &[&str]| {
            Job::parse(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap_err()
        };
        assert!(bad(&["d", "--run", "1,x"]).contains("--run takes indices"));
        assert!(bad(&["d", "--frob", "1"]).contains("`--frob`"));
        assert!(bad(&["d", "--seed"]).contains("needs a value"));
        assert!(bad(&["d", "--watch", "0,1"]).contains("--watch"));
        assert!(bad(&["d", "--lead-launches", "x"]).contains("--lead-launches takes a number"));
        assert!(bad(&[]).contains("missing"));
    }
}
