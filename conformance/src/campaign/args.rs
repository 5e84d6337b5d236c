//! The arguments of `conformance campaign` (`USAGE`).

use std::path::{Path, PathBuf};

pub const USAGE: &str = "usage: conformance campaign DIR [--out DIR] [--jobs N] [--nvcc-timeout S] \
[--instances N] [--launches N] [--max-delay CYCLES] [--stress-words N] [--seed S] [--timeout S] [--stall S] [--budget S] [--hang-cap N] \
[--shrink S] [--dry-run]
  DIR            what `cargo xtask fuzz gpu` wrote (DIR/batches/bNNNN/)
  --out          results: campaign.jsonl, findings.jsonl, findings/*.yaml, summary.txt (default target/gridcheck/campaign)
  --jobs         parallel nvcc jobs (default: the cores)       --nvcc-timeout  seconds per nvcc (default 300)
  --instances    instances per launch (default 512)            --launches      launches per program (default 2)
  --max-delay    random delay bound before each operation, cycles (default: the built-in environment's)
  --stress-words words the stress warps hammer, 0 for none (default: the built-in environment's)
  --timeout      seconds a worker may go without finishing a program before it is killed (default 20)
  --stall        seconds without progress of a launch that make a hang (default 1)
  --budget       seconds for all GPU runs; programs not reached are recorded not-run (default 300)
  --hang-cap     hangs per known hang pattern before its other programs are skipped (default 3)
  --shrink       seconds for shrinking the distinct findings on the GPU (default 45)
  --dry-run      compile and check every batch; run nothing on a GPU";

/// What `conformance campaign` was asked to do.
#[derive(Debug, Clone, PartialEq)]
pub struct Args {
    pub dir: PathBuf,
    pub out: PathBuf,
    /// The checkout (its `kernels/include`).
    pub root: PathBuf,
    pub jobs: usize,
    pub nvcc_timeout: u64,
    pub instances: u32,
    pub launches: u32,
    /// The incantations, where not the built-in environment's.
    pub max_delay: Option<u32>,
    pub stress_words: Option<u32>,
    pub seed: u64,
    pub timeout: u64,
    pub stall: f64,
    pub budget: u64,
    pub hang_cap: usize,
    pub shrink: u64,
    pub dry_run: bool,
}

impl Args {
    pub fn parse(argv: &[String], root: &Path) -> Result<Args, String> {
        let mut a = Args {
            dir: PathBuf::new(),
            out: root.join("target/gridcheck/campaign"),
            root: root.to_path_buf(),
            jobs: std::thread::available_parallelism().map_or(2, |n| n.get()),
            nvcc_timeout: 300,
            instances: 512,
            launches: 2,
            max_delay: None,
            stress_words: None,
            seed: 1,
            timeout: 20,
            stall: 1.0,
            budget: 300,
            hang_cap: 3,
            shrink: 45,
            dry_run: false,
        };
        let mut dir = None;
        let mut it = argv.iter();
        while let Some(x) = it.next() {
            let mut val = || {
                it.next()
                    .cloned()
                    .ok_or_else(|| format!("{x} needs a value"))
            };
            fn num<T: std::str::FromStr>(flag: &str, v: String) -> Result<T, String> {
                v.parse()
                    .map_err(|_| format!("{flag} takes a number, not `{v}`"))
            }
            match x.as_str() {
                "--out" => a.out = val()?.into(),
                "--root" => a.root = val()?.into(),
                "--jobs" => a.jobs = num::<usize>(x, val()?)?.max(1),
                "--nvcc-timeout" => a.nvcc_timeout = num(x, val()?)?,
                "--instances" => a.instances = num::<u32>(x, val()?)?.max(1),
                "--launches" => a.launches = num::<u32>(x, val()?)?.max(1),
                "--max-delay" => a.max_delay = Some(num(x, val()?)?),
                "--stress-words" => a.stress_words = Some(num(x, val()?)?),
                "--seed" => a.seed = num(x, val()?)?,
                "--timeout" => a.timeout = num::<u64>(x, val()?)?.max(1),
                "--stall" => a.stall = num(x, val()?)?,
                "--budget" => a.budget = num(x, val()?)?,
                "--hang-cap" => a.hang_cap = num(x, val()?)?,
                "--shrink" => a.shrink = num(x, val()?)?,
                "--dry-run" => a.dry_run = true,
                s if s.starts_with('-') => return Err(format!("unknown argument `{s}`")),
                s if dir.is_none() => dir = Some(PathBuf::from(s)),
                s => return Err(format!("one campaign directory, not also `{s}`")),
            }
        }
        a.dir = dir.ok_or("the campaign directory is missing")?;
        if !(a.stall > 0.0 && a.stall.is_finite()) {
            return Err("--stall takes seconds > 0".into());
        }
        Ok(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Result<Args, String> {
        let v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
        Args::parse(&v, Path::new("/r"))
    }

    #[test]
    fn arguments_are_read_and_bad_ones_named() {
        let a = args(&["d", "--jobs", "16", "--dry-run", "--budget", "300"]).unwrap();
        assert_eq!(
            (a.dir.as_path(), a.jobs, a.dry_run, a.budget),
            (Path::new("d"), 16, true, 300)
        );
        assert_eq!(a.out, Path::new("/r/target/gridcheck/campaign"));
        assert!(
            args(&["d", "--jobs", "x"])
                .unwrap_err()
                .contains("--jobs takes a number")
        );
        assert!(
            args(&["--jobs", "2"])
                .unwrap_err()
                .contains("directory is missing")
        );
        assert!(args(&["d", "--frob"]).unwrap_err().contains("`--frob`"));
        assert!(args(&["d", "--stall", "0"]).is_err());
    }

    #[test]
    fn the_incantations_are_given_or_built_in() {
        let a = args(&["d"]).unwrap();
        assert_eq!((a.max_delay, a.stress_words), (None, None));
        let a = args(&["d", "--max-delay", "0", "--stress-words", "0"]).unwrap();
        assert_eq!((a.max_delay, a.stress_words), (Some(0), Some(0)));
        assert!(
            args(&["d", "--max-delay", "x"])
                .unwrap_err()
                .contains("--max-delay")
        );
    }
}
