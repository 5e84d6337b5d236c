//! The harness's own options, taken out of the command line before the rest
//! goes to libtest-mimic (filters, `--list`, `--ignored`, `--format`, ...).

use std::path::PathBuf;

/// Which tiers run. A trial of a tier that is off is not created at all.
pub use gridcheck_report::Tier;

#[derive(Debug, Clone)]
pub struct Options {
    pub tiers: Vec<Tier>,
    /// Repository root (holds `spec/`, `kernels/`).
    pub root: PathBuf,
    /// The spec directory (default `<root>/spec`).
    pub spec: PathBuf,
    /// Seed documents for the verbatim-quote check; skipped when absent.
    pub seeds: Option<PathBuf>,
    /// Where built cubins are: `<dir>/<sm>/<test>.cubin`.
    pub cubins: PathBuf,
    /// JSON-lines results file, appended to as each trial finishes.
    pub results: PathBuf,
    pub instances: u32,
    pub launches: u32,
    pub seed: u64,
    /// Seconds a GPU test may run before its process is killed.
    pub timeout: u64,
    /// Seconds the model may explore one litmus test before its process is killed.
    pub model_timeout: u64,
    /// Skip trials the results file already has a result for.
    pub resume: bool,
    /// Print progress lines with an estimate on standard error (`None`: when
    /// standard error is a terminal and standard output is not).
    pub progress: Option<bool>,
    /// Write JUnit XML here after the run.
    pub junit: Option<PathBuf>,
    /// Run only shard `i` of `n` (1-based) of the trials, by name order.
    pub shard: Option<(usize, usize)>,
    /// Worker mode: run this one test in this process (see `worker.rs`).
    pub worker: Option<(crate::worker::Job, String)>,
    /// `--devices`: the GPUs the GPU tier runs on (`None`: device 0, as
    /// without the flag; see `devices.rs`).
    pub devices: Option<crate::devices::Devices>,
    /// Worker mode: the UUID the worker's device 0 must have.
    pub worker_device: Option<String>,
    /// Arguments for libtest-mimic.
    pub libtest: Vec<String>,
}

pub const USAGE: &str = "gridcheck conformance options (before libtest's own):
  --tier model|static|gpu   run only this tier (repeatable; default: all)
  --root DIR                repository root (default: the workspace)
  --spec DIR                the spec to run (default: <root>/spec)
  --seeds DIR               seed documents for the quote check (default: ../shared/seeds)
  --cubins DIR              built kernels (default: target/kernels)
  --results FILE            JSON-lines results (default: target/gridcheck/results.jsonl)
  --instances N             litmus instances per launch (default: 1024)
  --launches N              launches per litmus test (default: 32)
  --seed N                  incantation seed (default: 1)
  --timeout SECS            kill a GPU test's process after this long (default: 60)
  --model-timeout SECS      kill the model's process for one test after this long (default: 300)
  --resume                  skip trials the results file already holds (a killed run goes on)
  --progress, --no-progress progress lines with the time left on stderr (default: when stderr
                            is a terminal and stdout is not)
  --junit FILE              also write JUnit XML
  --shard I/N               run the I-th of N shards of the trials (1-based)
  --devices all|0,1,...     run the GPU tier on these GPUs at once, one worker at a time on
                            each, the tests dealt out over them (default: device 0)
Everything else (filters, --list, --ignored, --exact, --format json, -q) is libtest's.";

fn value(args: &mut std::vec::IntoIter<String>, flag: &str) -> Result<String, String> {
    args.next()
        .ok_or_else(|| format!("`{flag}` needs a value\n\n{USAGE}"))
}

fn number<T: std::str::FromStr>(s: String, flag: &str) -> Result<T, String> {
    s.parse()
        .map_err(|_| format!("`{flag} {s}`: not a valid number\n\n{USAGE}"))
}

impl Options {
    /// Splits our options from libtest's. `root` is the default repository root.
    pub fn parse(argv: Vec<String>, root: PathBuf) -> Result<Options, String> {
        let mut o = Options {
            tiers: Vec::new(),
            seeds: None,
            cubins: root.join(gridcheck_kernelgen::BUILD_DIR),
            results: root.join("target/gridcheck/results.jsonl"),
            spec: root.join("spec"),
            root,
            instances: 1024,
            launches: 32,
            seed: 1,
            timeout: 60,
            model_timeout: 300,
            resume: false,
            progress: None,
            junit: None,
            shard: None,
            worker: None,
            devices: None,
            worker_device: None,
            libtest: Vec::new(),
        };
        let mut args = argv.into_iter();
        // Paths default relative to the root, whichever order flags come in.
        let (mut spec, mut cubins, mut results): (
            Option<PathBuf>,
            Option<PathBuf>,
            Option<PathBuf>,
        ) = (None, None, None);
        if let Some(program) = args.next() {
            o.libtest.push(program);
        }
        while let Some(a) = args.next() {
            match a.as_str() {
                "--tier" => {
                    let t = value(&mut args, "--tier")?;
                    let tier =
                        Tier::ALL
                            .into_iter()
                            .find(|x| x.as_str() == t)
                            .ok_or_else(|| {
                                format!("unknown tier `{t}`: expected model, static or gpu")
                            })?;
                    o.tiers.push(tier);
                }
                "--root" => o.root = value(&mut args, "--root")?.into(),
                "--spec" => spec = Some(value(&mut args, "--spec")?.into()),
                "--seeds" => o.seeds = Some(value(&mut args, "--seeds")?.into()),
                "--cubins" => cubins = Some(value(&mut args, "--cubins")?.into()),
                "--results" => results = Some(value(&mut args, "--results")?.into()),
                "--instances" => {
                    o.instances = number(value(&mut args, "--instances")?, "--instances")?
                }
                "--launches" => o.launches = number(value(&mut args, "--launches")?, "--launches")?,
                "--seed" => o.seed = number(value(&mut args, "--seed")?, "--seed")?,
                "--timeout" => o.timeout = number(value(&mut args, "--timeout")?, "--timeout")?,
                "--model-timeout" => {
                    o.model_timeout =
                        number(value(&mut args, "--model-timeout")?, "--model-timeout")?
                }
                "--resume" => o.resume = true,
                "--progress" => o.progress = Some(true),
                "--no-progress" => o.progress = Some(false),
                "--junit" => o.junit = Some(value(&mut args, "--junit")?.into()),
                "--shard" => {
                    let v = value(&mut args, "--shard")?;
                    let parsed = v
                        .split_once('/')
                        .and_then(|(i, n)| Some((i.parse().ok()?, n.parse().ok()?)))
                        .filter(|&(i, n): &(usize, usize)| i >= 1 && i <= n);
                    o.shard =
                        Some(parsed.ok_or_else(|| {
                            format!("`--shard {v}`: expected i/n with 1 <= i <= n")
                        })?);
                }
                "--worker" => {
                    o.worker = Some((crate::worker::Job::Gpu, value(&mut args, "--worker")?))
                }
                "--worker-model" => {
                    o.worker = Some((
                        crate::worker::Job::Model,
                        value(&mut args, "--worker-model")?,
                    ))
                }
                // The GPUs of the GPU tier (devices.rs).
                "--devices" => {
                    let v = value(&mut args, "--devices")?;
                    o.devices = Some(crate::devices::Devices::parse(&v)?);
                }
                "--worker-device" => o.worker_device = Some(value(&mut args, "--worker-device")?),
                "--help-gridcheck" => return Err(USAGE.to_string()),
                _ => o.libtest.push(a),
            }
        }
        o.spec = spec.unwrap_or_else(|| o.root.join("spec"));
        o.cubins = cubins.unwrap_or_else(|| o.root.join(gridcheck_kernelgen::BUILD_DIR));
        o.results = results.unwrap_or_else(|| o.root.join("target/gridcheck/results.jsonl"));
        if o.tiers.is_empty() {
            o.tiers = Tier::ALL.to_vec();
        }
        if o.seeds.is_none() {
            o.seeds = gridcheck_spec::seeds::default_dir(&o.root);
        }
        if o.instances == 0 || o.launches == 0 {
            return Err("--instances and --launches must be at least 1".into());
        }
        Ok(o)
    }

    pub fn runs(&self, tier: Tier) -> bool {
        self.tiers.contains(&tier)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(a: &[&str]) -> Result<Options, String> {
        Options::parse(a.iter().map(|s| s.to_string()).collect(), "/r".into())
    }

    #[test]
    fn splits_ours_from_libtests() {
        let o = parse(&[
            "bin",
            "--tier",
            "model",
            "pdl.wait",
            "--instances",
            "8",
            "--list",
        ])
        .unwrap();
        assert_eq!(o.tiers, vec![Tier::Model]);
        assert_eq!(o.instances, 8);
        assert_eq!(o.libtest, vec!["bin", "pdl.wait", "--list"]);
        assert_eq!(parse(&["bin"]).unwrap().tiers, Tier::ALL.to_vec());
        let o = parse(&["bin", "--spec", "/s", "--root", "/x"]).unwrap();
        assert_eq!(o.spec, PathBuf::from("/s"));
        assert_eq!(o.cubins, PathBuf::from("/x/target/kernels"));
    }

    #[test]
    fn bad_options_are_messages() {
        assert!(
            parse(&["bin", "--tier", "gpux"])
                .unwrap_err()
                .contains("unknown tier")
        );
        assert!(
            parse(&["bin", "--instances", "x"])
                .unwrap_err()
                .contains("not a valid number")
        );
        assert!(
            parse(&["bin", "--seed"])
                .unwrap_err()
                .contains("needs a value")
        );
        assert!(parse(&["bin", "--launches", "0"]).is_err());
        assert!(parse(&["bin", "--shard", "3/2"]).is_err());
        assert_eq!(
            parse(&["bin", "--shard", "2/3"]).unwrap().shard,
            Some((2, 3))
        );
    }

    #[test]
    fn devices_default_to_none_and_parse() {
        use crate::devices::Devices;
        assert_eq!(parse(&["bin"]).unwrap().devices, None);
        let o = parse(&["bin", "--devices", "all", "--tier", "gpu", "f"]).unwrap();
        assert_eq!(o.devices, Some(Devices::All));
        assert_eq!(o.libtest, vec!["bin", "f"]);
        let o = parse(&["bin", "--devices", "1,0"]).unwrap();
        assert_eq!(o.devices, Some(Devices::List(vec![1, 0])));
        assert!(
            parse(&["bin", "--devices", "one"])
                .unwrap_err()
                .contains("not a device ordinal")
        );
        assert!(
            parse(&["bin", "--devices"])
                .unwrap_err()
                .contains("needs a value")
        );
        let o = parse(&["bin", "--worker", "t", "--worker-device", "GPU-1"]).unwrap();
        assert_eq!(o.worker_device.as_deref(), Some("GPU-1"));
    }
}
