//! A stand-in GPU for the batch worker, for testing the driver, the
//! restarts, the classification, the reruns with context and the shrinking
//! where there is no GPU (`tests/campaign.rs`). [`FAKE_GPU`] names a JSON
//! file of rules (anything else: no rules); a program no rule fires for
//! shows the oracle's first state in every instance.
//!
//! ```json
//! {"rules": [
//!   {"program": "c-4", "outcome": "hang", "after": [{"program": "c-1"}]},
//!   {"thread_ops": ["record", "record"], "outcome": "hang"},
//!   {"program": "c-6", "outcome": "launch-error", "times": 1}
//! ]}
//! ```
//!
//! A rule picks programs by name (`program`) or by one thread's operations
//! (`thread_ops`: the operations' first words, in order, perhaps among
//! others); it fires only where a program of each selector of `after` ran
//! before in the same worker process, and (with `times`) only that many times in all,
//! counted in `<rules file>.fired` across processes. Each stand-in worker
//! appends its job to `<rules file>.jobs` (one JSON line: the programs in
//! order and each one's instances), which tests count a run's cost by.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde::Deserialize;

use crate::batch::CampaignProgram;
use crate::findings::Outcome;
use crate::job::{Job, Report, STOPPED, say};

/// The environment variable that makes the worker a stand-in.
pub const FAKE_GPU: &str = "GRIDCHECK_CAMPAIGN_FAKE_GPU";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Rules {
    rules: Vec<Rule>,
}

/// Which programs: by name, or by one thread's operations (their first
/// words, in order, perhaps among others); both, where both are given.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Selector {
    program: Option<String>,
    thread_ops: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Rule {
    program: Option<String>,
    thread_ops: Option<Vec<String>>,
    outcome: Fake,
    /// Programs that must have run before in the same worker.
    #[serde(default)]
    after: Vec<Selector>,
    times: Option<usize>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum Fake {
    Hang,
    Error,
    LaunchError,
}

impl Selector {
    fn picks(&self, p: &CampaignProgram) -> bool {
        let named = self.program.as_ref().is_none_or(|n| *n == p.name);
        let ops = self.thread_ops.as_ref().is_none_or(|want| {
            p.litmus().is_ok_and(|(_, l)| {
                l.kernels.iter().flat_map(|k| &k.threads).any(|t| {
                    let words: Vec<String> = t
                        .ops
                        .iter()
                        .map(|o| o.to_string().split(' ').next().unwrap_or("").to_string())
                        .collect();
                    let mut it = words.iter();
                    want.iter().all(|w| it.any(|x| x == w))
                })
            })
        });
        named && ops
    }
}

impl Rule {
    /// Whether it picks program `p`, given the programs run before it.
    fn picks(&self, p: &CampaignProgram, before: &[&CampaignProgram]) -> bool {
        let me = Selector {
            program: self.program.clone(),
            thread_ops: self.thread_ops.clone(),
        };
        me.picks(p) && self.after.iter().all(|a| before.iter().any(|b| a.picks(b)))
    }
}

/// A file beside the rules file: `<rules file><suffix>`.
fn beside(rules: &Path, suffix: &str) -> PathBuf {
    let mut s = rules.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// The rules file's firing log.
fn fired_log(rules: &Path) -> PathBuf {
    beside(rules, ".fired")
}

/// Appends this worker's job to `<rules file>.jobs`: its programs in order,
/// each with the instances it runs.
fn log_job(rules: &Path, job: &Job, instances: &[u64]) {
    let line = serde_json::json!({"run": job.run, "instances": instances});
    let mut text = std::fs::read_to_string(beside(rules, ".jobs")).unwrap_or_default();
    text.push_str(&line.to_string());
    text.push('\n');
    let _ = std::fs::write(beside(rules, ".jobs"), text);
}

/// Rule `i` fires once more if its `times` allow: counted in the log.
fn fire(rules: &Path, i: usize, times: Option<usize>) -> bool {
    let log = fired_log(rules);
    let line = format!("rule {i}");
    let so_far = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .filter(|l| *l == line)
        .count();
    if times.is_some_and(|t| so_far >= t) {
        return false;
    }
    let mut text = std::fs::read_to_string(&log).unwrap_or_default();
    text.push_str(&line);
    text.push('\n');
    std::fs::write(&log, text).is_ok()
}

/// The stand-in worker: the job's programs in order, each a rule's outcome
/// or a pass.
pub fn run(rules_file: &Path, programs: &[CampaignProgram], job: &Job) -> ExitCode {
    let rules = std::fs::read_to_string(rules_file)
        .ok()
        .map(|t| serde_json::from_str::<Rules>(&t));
    let rules = match rules {
        Some(Ok(r)) => r.rules,
        Some(Err(e)) => {
            say(&Report::Unusable {
                reason: format!("{}: {e}", rules_file.display()),
            });
            return ExitCode::from(crate::job::NO_MODULE);
        }
        None => Vec::new(),
    };
    say(&Report::Device {
        name: "a fake GPU".into(),
    });
    let each: Vec<u64> = (0..job.run.len())
        .map(|pos| u64::from(job.instances) * u64::from(job.launches_at(pos)))
        .collect();
    log_job(rules_file, job, &each);
    let mut before: Vec<&CampaignProgram> = Vec::new();
    for (&i, &instances) in job.run.iter().zip(&each) {
        let Some(p) = programs.get(i) else {
            continue;
        };
        let fired = rules
            .iter()
            .enumerate()
            .find(|(ri, r)| r.picks(p, &before) && fire(rules_file, *ri, r.times))
            .map(|(_, r)| r.outcome);
        let pass = p
            .states
            .first()
            .map(|s| vec![(s.clone(), instances)])
            .unwrap_or_default();
        let outcome = match fired {
            Some(Fake::Hang) => Outcome::Hang {
                message: "stall: a fake GPU".into(),
            },
            Some(Fake::Error) => Outcome::Error {
                message: "a fake GPU's error".into(),
            },
            Some(Fake::LaunchError) => Outcome::Ran {
                histogram: pass
                    .into_iter()
                    .map(|(s, n)| (s, n.saturating_sub(1)))
                    .collect(),
                instances: instances.saturating_sub(1),
                launch_failures: 1,
                first_launch_error: Some("a fake GPU's launch error".into()),
                elapsed_s: 0.0,
                stale: Vec::new(),
            },
            None => Outcome::Ran {
                histogram: pass,
                instances,
                launch_failures: 0,
                first_launch_error: None,
                elapsed_s: 0.0,
                stale: Vec::new(),
            },
        };
        let ends = outcome.ends_worker();
        say(&Report::Program { index: i, outcome });
        if ends {
            return ExitCode::from(STOPPED);
        }
        before.push(p);
    }
    ExitCode::SUCCESS
}
