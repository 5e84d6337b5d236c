//! The arguments of `gridcheck-campaign [run|leads] DIR` (`USAGE`): the
//! words read, then what they leave to the GPU looked up (`defaults.rs`:
//! the results folder, `--tuning auto`).

use std::path::{Path, PathBuf};

use gridcheck_report::Tuning;

use crate::defaults::{self, Gpu, TuningChoice};

pub const USAGE: &str = "usage: gridcheck-campaign [run|leads] DIR [options]
       gridcheck-campaign status RES [--phase run|leads|plain]
       gridcheck-campaign plain RES [plain options]
       gridcheck-campaign merge OUT... --into DIR
       gridcheck-campaign plain FINDING.yaml --out PROGRAM.cu
       gridcheck-campaign batch FILE.yaml... --out DIR [--repeat R]
       gridcheck-campaign worker BATCH --run I,J,... (the driver's)
  (no word)  run every program, then end every finding (leads), then the summary
  run        run every program of DIR (`cargo xtask fuzz gpu` wrote DIR/batches/bNNNN/)
  leads      end every finding of the records: alone, with its context, shrunk, or closed
  status     one JSON line: the phase's work left in the results folder RES and whether it is
             done (no --phase: run and leads); exit 0 done, 3 work left, 2 bad input
  plain RES  each finding's plain program of RES (findings/*.cu) built and run on this GPU:
             instances swept, each call left out (`gridcheck-campaign plain --help`)
  merge      the findings of campaigns on several GPUs, deduplicated by shape
  plain F --out P  a finding's test (its context programs first) as a runtime-API program
  batch      the litmus tests of spec files, in order, R times over, as one batch of DIR
options:
  --out DIR          results (default records/<gpu slug>/campaigns/<UTC date>/<DIR's name>):
                     campaign.jsonl, parts.jsonl, leads.jsonl, findings.jsonl, findings/,
                     summary.json, summary.txt
  --root DIR         the checkout (kernels/include, spec/, conformance/facts/; default: this one)
  --jobs N           parallel nvcc jobs (default: the cores)   --nvcc-timeout S  seconds per nvcc (300)
  --instances N      instances per launch (512)                --launches N      launches per program (2)
  --tuning FILE|auto|none  the testing environment's incantations from a tuned file
                     (conformance/tuning/; auto: the GPU's, else its architecture's, else built in);
                     its instances, launches and extra environments are not used (default: none,
                     the built-in one)
  --max-delay C      random delay bound before each operation, cycles (default: the environment's)
  --stress-words W   words the stress warps hammer, 0 for none (default: the environment's)
  --seed S           launch seeds (1)
  --timeout S        seconds a worker may go without a result before it is killed (20)
  --stall S          seconds without progress of a launch that make a hang (1)
  --part             one part of a campaign run in parts: the last line is `status`'s, and the exit
                     code too (0 done, 3 work left: run the part again, 2 an error)
  --copy-to DIR      at the end, the results folder copied into DIR/<its name> (what a GPU
                     machine gives back from)
  --budget S         run: GPU seconds for this part; programs not reached are not run (300)
  --resume           run: keep campaign.jsonl's records, run the programs without one
  --hang-cap N       run: hangs of a known hang, or of a shape, before its other programs are
                     skipped, each recorded with that reason (3)
  --worker-programs N  run: programs a worker runs before a fresh one takes the rest of its
                     batch (0: no limit; 1: each program in a worker of its own) (0)
  --dry-run          run: compile and check every batch; run nothing on a GPU
  --records FILE     leads: the campaign's records (default OUT/campaign.jsonl)
  --leads-budget S   leads: seconds for this part; a lead is begun only with --lead-budget left (480)
  --lead-budget S    leads: seconds for one lead: halving stops at 2/5 of it, shrinking at 7/10 (10)
  --alone-runs N     leads: fresh workers running the finding alone; each rerun gives the finding
                     the instances that bound the rate it was seen at (about 3 / rate) (1)
  --context-runs N   leads: reruns with its whole context before it is closed (1)
  --rate-runs N      leads: runs of the final test that measure its rate (3)";

/// Which part of the campaign to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Run,
    Leads,
    /// Run, then the leads.
    All,
}

/// What `gridcheck-campaign [run|leads]` was asked to do.
#[derive(Debug, Clone, PartialEq)]
pub struct Args {
    pub phase: Phase,
    pub dir: PathBuf,
    pub out: PathBuf,
    /// The checkout (its `kernels/include`, `spec/`, `conformance/facts/`).
    pub root: PathBuf,
    pub jobs: usize,
    pub nvcc_timeout: u64,
    pub instances: u32,
    pub launches: u32,
    /// The incantations (a tuned file's, or the built-in ones), with the
    /// flags given applied.
    pub env: Tuning,
    /// The tuned file they came from, if any.
    pub tuning: Option<PathBuf>,
    pub seed: u64,
    pub timeout: u64,
    pub stall: f64,
    /// One part of a campaign run in parts (`--part`): `status`'s line and
    /// exit code at the end.
    pub part: bool,
    /// Where the results folder is copied at the end (`--copy-to`).
    pub copy_to: Option<PathBuf>,
    pub budget: u64,
    pub resume: bool,
    pub hang_cap: usize,
    pub worker_programs: usize,
    pub dry_run: bool,
    pub records: Option<PathBuf>,
    pub leads_budget: u64,
    pub lead_budget: u64,
    pub alone_runs: usize,
    pub context_runs: usize,
    pub rate_runs: usize,
}

/// What the words leave to be looked up: the results folder when not
/// given, the environment and the flags applied over it.
#[derive(Debug, Default)]
struct Unresolved {
    out: Option<PathBuf>,
    tuning: Option<TuningChoice>,
    max_delay: Option<u32>,
    stress_words: Option<u32>,
}

fn num<T: std::str::FromStr>(flag: &str, v: String) -> Result<T, String> {
    v.parse()
        .map_err(|_| format!("{flag} takes a number, not `{v}`"))
}

impl Args {
    fn defaults(root: &Path) -> Args {
        Args {
            phase: Phase::All,
            dir: PathBuf::new(),
            out: PathBuf::new(),
            root: root.to_path_buf(),
            jobs: std::thread::available_parallelism().map_or(2, |n| n.get()),
            nvcc_timeout: 300,
            instances: 512,
            launches: 2,
            env: Tuning::default(),
            tuning: None,
            seed: 1,
            timeout: 20,
            stall: 1.0,
            part: false,
            copy_to: None,
            budget: 300,
            resume: false,
            hang_cap: 3,
            worker_programs: 0,
            dry_run: false,
            records: None,
            leads_budget: 480,
            lead_budget: 10,
            alone_runs: 1,
            context_runs: 1,
            rate_runs: 3,
        }
    }

    /// The command line read and resolved on this machine's GPU.
    pub fn parse(argv: &[String], root: &Path) -> Result<Args, String> {
        Args::parse_with(argv, root, defaults::probe)
    }

    /// The command line read, its defaults taken from `gpu` (asked at most
    /// once, only for what was not given: the results folder, `--tuning
    /// auto`).
    pub fn parse_with(
        argv: &[String],
        root: &Path,
        gpu: impl FnOnce() -> Result<Gpu, String>,
    ) -> Result<Args, String> {
        let (mut a, u) = Args::words(argv, root)?;
        let found = std::cell::OnceCell::new();
        let mut ask = Some(gpu);
        let mut gpu = || {
            found
                .get_or_init(|| ask.take().map_or(Err("no GPU".into()), |g| g()))
                .clone()
        };
        a.out = match u.out {
            Some(o) => o,
            None => {
                let g = gpu().map_err(|e| {
                    format!("{e}: no GPU to name the results folder by; give --out DIR")
                })?;
                defaults::results_dir(&a.root, &g.name, gridcheck_store::now_secs(), &a.dir)?
            }
        };
        let choice = u.tuning.unwrap_or(TuningChoice::None);
        (a.tuning, a.env) = defaults::tuning(&a.root, &choice, &mut gpu)?;
        if let Some(d) = u.max_delay {
            a.env.max_delay_cycles = d;
        }
        if let Some(w) = u.stress_words {
            a.env.stress_words = w;
        }
        // One environment: its extra ones are the harness's trials'.
        a.env.extra.clear();
        Ok(a)
    }

    /// Whether `argv` is a command line of the phases, nothing looked up
    /// (no tuned file read, no GPU asked): what a session file's commands
    /// are checked against.
    pub fn check(argv: &[String]) -> Result<(), String> {
        Args::words(argv, Path::new(".")).map(|_| ())
    }

    /// The words read; what they leave to be looked up apart.
    fn words(argv: &[String], root: &Path) -> Result<(Args, Unresolved), String> {
        let mut a = Args::defaults(root);
        let mut u = Unresolved::default();
        let mut argv = argv;
        match argv.first().map(String::as_str) {
            Some("run") => a.phase = Phase::Run,
            Some("leads") => a.phase = Phase::Leads,
            _ => {}
        }
        if a.phase != Phase::All {
            argv = &argv[1..];
        }
        let mut dir = None;
        let mut it = argv.iter();
        while let Some(x) = it.next() {
            let mut val = || {
                it.next()
                    .cloned()
                    .ok_or_else(|| format!("{x} needs a value"))
            };
            match x.as_str() {
                "--out" => u.out = Some(val()?.into()),
                "--root" => a.root = val()?.into(),
                "--jobs" => a.jobs = num::<usize>(x, val()?)?.max(1),
                "--nvcc-timeout" => a.nvcc_timeout = num(x, val()?)?,
                "--instances" => a.instances = num::<u32>(x, val()?)?.max(1),
                "--launches" => a.launches = num::<u32>(x, val()?)?.max(1),
                "--tuning" => u.tuning = Some(TuningChoice::parse(&val()?)),
                "--max-delay" => u.max_delay = Some(num(x, val()?)?),
                "--stress-words" => u.stress_words = Some(num(x, val()?)?),
                "--seed" => a.seed = num(x, val()?)?,
                "--timeout" => a.timeout = num::<u64>(x, val()?)?.max(1),
                "--stall" => a.stall = num(x, val()?)?,
                "--part" => a.part = true,
                "--copy-to" => a.copy_to = Some(val()?.into()),
                "--budget" => a.budget = num(x, val()?)?,
                "--resume" => a.resume = true,
                "--hang-cap" => a.hang_cap = num(x, val()?)?,
                "--worker-programs" => a.worker_programs = num(x, val()?)?,
                "--dry-run" => a.dry_run = true,
                "--records" => a.records = Some(val()?.into()),
                "--leads-budget" => a.leads_budget = num(x, val()?)?,
                "--lead-budget" => a.lead_budget = num(x, val()?)?,
                "--alone-runs" => a.alone_runs = num(x, val()?)?,
                "--context-runs" => a.context_runs = num(x, val()?)?,
                "--rate-runs" => a.rate_runs = num(x, val()?)?,
                s if s.starts_with('-') => return Err(format!("unknown argument `{s}`")),
                s if dir.is_none() => dir = Some(PathBuf::from(s)),
                s => return Err(format!("one campaign directory, not also `{s}`")),
            }
        }
        a.dir = dir.ok_or("the campaign directory is missing")?;
        if !(a.stall > 0.0 && a.stall.is_finite()) {
            return Err("--stall takes seconds > 0".into());
        }
        Ok((a, u))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_gpu() -> Result<Gpu, String> {
        Err("no GPU: none here".into())
    }

    fn args(v: &[&str]) -> Result<Args, String> {
        let v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
        Args::parse_with(&v, Path::new("/r"), no_gpu)
    }

    #[test]
    fn arguments_are_read_and_bad_ones_named() {
        let a = args(&[
            "d",
            "--jobs",
            "16",
            "--dry-run",
            "--budget",
            "300",
            "--out",
            "o",
        ])
        .unwrap();
        assert_eq!(
            (a.phase, a.dir.as_path(), a.jobs, a.dry_run, a.budget),
            (Phase::All, Path::new("d"), 16, true, 300)
        );
        assert_eq!(a.out, Path::new("o"));
        let a = args(&["run", "d", "--worker-programs", "1", "--out", "o"]).unwrap();
        assert_eq!(a.worker_programs, 1);
        assert!(
            args(&["d", "--worker-programs", "-1"])
                .unwrap_err()
                .contains("--worker-programs takes a number")
        );
        let a = args(&[
            "leads",
            "d",
            "--records",
            "r.jsonl",
            "--context-runs",
            "7",
            "--out",
            "o",
        ])
        .unwrap();
        assert_eq!(
            (a.phase, a.records.as_deref(), a.context_runs),
            (Phase::Leads, Some(Path::new("r.jsonl")), 7)
        );
        let a = args(&[
            "run",
            "d",
            "--resume",
            "--part",
            "--copy-to",
            "c",
            "--out",
            "o",
        ])
        .unwrap();
        assert_eq!(
            (a.phase, a.part, a.copy_to.as_deref()),
            (Phase::Run, true, Some(Path::new("c")))
        );
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
        assert!(
            args(&["d", "--copy-to"])
                .unwrap_err()
                .contains("--copy-to needs a value")
        );
        // The words alone, nothing looked up.
        let words = |v: &[&str]| Args::check(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert!(words(&["run", "d", "--tuning", "auto", "--part"]).is_ok());
        assert!(
            words(&["leads", "d", "--lead-budgt", "3"])
                .unwrap_err()
                .contains("`--lead-budgt`")
        );
    }

    /// Without --out, the results folder is the GPU's, today's, the
    /// programs folder's; without a GPU, the error says to give --out.
    #[test]
    fn the_results_folder_defaults_to_the_gpus_records() {
        let h200 = || {
            Ok(Gpu {
                name: "NVIDIA H200".into(),
                sm: "sm_90".into(),
            })
        };
        let argv = vec!["run".to_string(), ".gpu-bundle/enum3".into()];
        let a = Args::parse_with(&argv, Path::new("/r"), h200).unwrap();
        let today = gridcheck_store::utc_date(gridcheck_store::now_secs());
        let want = Path::new("/r/records/nvidia-h200/campaigns")
            .join(&today)
            .join("enum3");
        // (a run at midnight: the day may have turned between the two)
        let yesterday = gridcheck_store::utc_date(gridcheck_store::now_secs() - 60);
        let other = Path::new("/r/records/nvidia-h200/campaigns")
            .join(&yesterday)
            .join("enum3");
        assert!(a.out == want || a.out == other, "{}", a.out.display());
        let e = args(&["run", "d"]).unwrap_err();
        assert!(
            e.contains("no GPU: none here") && e.contains("give --out"),
            "{e}"
        );
    }

    #[test]
    fn the_incantations_are_a_tuned_files_or_built_in_with_the_flags_applied() {
        let a = args(&["d", "--out", "o"]).unwrap();
        assert_eq!(a.env, Tuning::default());
        let a = args(&["d", "--out", "o", "--max-delay", "0", "--stress-words", "0"]).unwrap();
        assert_eq!((a.env.max_delay_cycles, a.env.stress_words), (0, 0));
        assert!(
            args(&["d", "--max-delay", "x"])
                .unwrap_err()
                .contains("--max-delay")
        );
        let root = gridcheck_toolchain::checkout_root(env!("CARGO_MANIFEST_DIR"));
        let file = root.join("conformance/tuning/sm_90.toml");
        let tuned = Tuning::load(&file).unwrap();
        let a = args(&["d", "--out", "o", "--tuning", &file.display().to_string()]).unwrap();
        assert_eq!(a.env.max_delay_cycles, tuned.max_delay_cycles);
        assert!(a.env.extra.is_empty(), "one environment");
        let e = args(&["d", "--out", "o", "--tuning", "/nonexistent.toml"]).unwrap_err();
        assert!(e.contains("/nonexistent.toml"), "{e}");
        let a = args(&["d", "--out", "o", "--tuning", "none"]).unwrap();
        assert_eq!((a.tuning, a.env), (None, Tuning::default()));
        let e = args(&["d", "--out", "o", "--tuning", "auto"]).unwrap_err();
        assert!(e.starts_with("--tuning auto: no GPU"), "{e}");
    }
}
