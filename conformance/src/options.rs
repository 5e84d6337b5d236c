//! The harness's own options, taken out of the command line before the rest
//! goes to libtest-mimic (filters, `--list`, `--ignored`, `--format`, ...).

use std::path::PathBuf;

/// Which tiers run. A trial of a tier that is off is not created at all.
pub use gridcheck_report::Tier;

#[derive(Debug, Clone)]
pub struct Options {
    pub tiers: Vec<Tier>,
    /// Whether `--tier` named the tiers: each is then required, and one
    /// that cannot run here is an error (as `GRIDCHECK_REQUIRE_TIERS`).
    pub tiers_given: bool,
    /// Repository root (holds `spec/`, `kernels/`).
    pub root: PathBuf,
    /// The spec directory (default `<root>/spec`).
    pub spec: PathBuf,
    /// Seed documents for the verbatim-quote check; skipped when absent.
    pub seeds: Option<PathBuf>,
    /// The kernels root: `<dir>/<sm>/<test>.cubin`, `.ptx`, `.host`.
    pub cubins: PathBuf,
    /// `--binary auto|ptx`: as built (exact, compatible, PTX) or PTX only.
    pub binary: gridcheck_toolchain::binary::Mode,
    /// `--devrt FILE`: the `libcudadevrt.a` PTX is linked with.
    pub devrt: Option<PathBuf>,
    /// JSON-lines results file, appended to as each trial finishes.
    pub results: PathBuf,
    pub instances: u32,
    pub launches: u32,
    pub seed: u64,
    /// Seconds a GPU test may run before its process is killed.
    pub timeout: u64,
    /// Seconds the model may explore one litmus test before its process is killed.
    pub model_timeout: u64,
    /// A litmus GPU trial that times out is rerun alone under watch and
    /// classified: a stall (where) or a long run (its rate).
    pub classify_timeouts: bool,
    /// `--no-classify-timeouts`: no timed-out trial is rerun under watch
    /// (by default those no known hang covers are).
    pub no_classify_timeouts: bool,
    /// `--fresh-context`: every GPU trial in a process (and CUDA context) of
    /// its own, instead of the staying worker (`server.rs`).
    pub fresh_context: bool,
    /// Worker mode: the staying GPU worker (`--worker-serve`, `server.rs`).
    pub serve: bool,
    /// Skip trials the results file already has a result for.
    pub resume: bool,
    /// Print progress lines with an estimate on standard error (`None`: when
    /// standard error is a terminal and standard output is not).
    pub progress: Option<bool>,
    /// Write JUnit XML here after the run.
    pub junit: Option<PathBuf>,
    /// Run only shard `i` of `n` (1-based) of the trials, by name order.
    pub shard: Option<(usize, usize)>,
    /// The testing environment: incantations and the mutants' GPU budget.
    /// `instances`, `launches` and these come from the GPU's tuned
    /// environment (`--tuning`) unless given as flags.
    pub max_delay: u32,
    pub stress_words: u32,
    pub stress_iters: u32,
    pub permute: bool,
    pub stress_lines: bool,
    pub line_burst: u32,
    pub mutant_budget_s: f64,
    /// The tuned file's further environments (`[[extra]]`), run after the
    /// one above; `--extra-environment` flags replace them, `--tuning none`
    /// has none.
    pub extra: Vec<gridcheck_report::SearchPoint>,
    /// Environment flags given on the command line (they win over a file).
    pub given: Vec<&'static str>,
    /// `--tuning FILE`; `None` with `no_tuning` false: the GPU's own file
    /// under `conformance/tuning/`, when there is one.
    pub tuning: Option<PathBuf>,
    pub no_tuning: bool,
    /// Where the environment came from, for the records and the summary.
    pub tuned_from: String,
    /// The tuned file used (the GPU's, its architecture's or `--tuning`),
    /// relative to the root when under it; `None`: the built-in values.
    pub tuning_file: Option<String>,
    /// `--mutants`: run the mutants of the spec's tests instead of the tiers.
    pub mutants: bool,
    /// The mutants' JSON-lines records.
    pub mutant_results: PathBuf,
    /// `--tune FILE`: run every mutant under each environment of FILE.
    pub tune: Option<PathBuf>,
    /// `--min-score PCT`: the mutants' run fails below this score.
    pub min_score: Option<f64>,
    /// Worker mode: run this one test in this process (see `worker.rs`).
    pub worker: Option<(crate::worker::Job, String)>,
    /// `--devices`: the GPUs the GPU tier runs on (`None`: device 0, as
    /// without the flag; see `devices.rs`).
    pub devices: Option<crate::devices::Devices>,
    /// Worker mode: the UUID the worker's device 0 must have.
    pub worker_device: Option<String>,
    /// `--toolchain NAME`: an installed toolchain (`.toolchains/NAME`) for
    /// the static and sass tiers, and its kernels
    /// (`target/kernels-nvcc-NAME`) for the GPU tier unless `--cubins`.
    pub toolchain: Option<String>,
    /// `--sass-arch`: the architectures of the sass tier.
    pub sass_arches: Vec<String>,
    /// Arguments for libtest-mimic.
    pub libtest: Vec<String>,
}

pub const USAGE: &str = "gridcheck conformance options (before libtest's own):
  --tier model|static|gpu|sass  run only this tier (repeatable; default: all); a tier named
                            here that cannot run on this machine is an error
  --toolchain RELEASE       an installed toolchain (.toolchains/RELEASE, cargo xtask toolchain
                            install): its nvcc for the static and sass tiers, its kernels
                            (target/kernels-nvcc-RELEASE) for the GPU tier
  --sass-arch LIST          the sass tier's architectures (default: sm_90,sm_100,sm_120)
  --root DIR                repository root (default: the workspace)
  --spec DIR                the spec to run (default: <root>/spec)
  --seeds DIR               seed documents for the quote check (default: ../shared/seeds)
  --cubins DIR              built kernels (default: target/kernels)
  --binary auto|ptx         auto: the device's cubin, else a lower minor's of its major, else the
                            PTX through the driver's JIT; ptx: the PTX only (default: auto)
  --devrt FILE              the libcudadevrt.a PTX is linked with (default: <cubins>/libcudadevrt.a)
  --results FILE            JSON-lines results (default: target/gridcheck/results.jsonl)
  --instances N             litmus instances per launch (default: 1024)
  --launches N              launches per litmus test (default: 32)
  --seed N                  incantation seed (default: 1)
  --timeout SECS            kill a GPU test's process after this long (default: 60)
  --model-timeout SECS      kill the model's process for one test after this long (default: 300)
  --resume                  skip trials the results file already holds (a killed run goes on)
  --classify-timeouts       rerun a litmus GPU trial that timed out alone under watch: a stall
                            (where the instances stopped) or a long run (its rate)
  --fresh-context           every GPU trial in a process and CUDA context of its own (default: one
                            staying worker per device runs the litmus and runtime tests that set
                            no device runtime limit, each with its own module)
  --progress, --no-progress progress lines with the time left on stderr (default: when stderr
                            is a terminal and stdout is not)
  --junit FILE              also write JUnit XML
  --shard I/N               run the I-th of N shards of the trials (1-based)
  --tuning FILE|none        the testing environment (default: conformance/tuning/<gpu>.toml when
                            it exists, else the built-in one); flags below win over it
  --max-delay CYCLES        random delay bound before each operation (0: none)
  --stress-words N          words the stress warps hammer (0: no stress)
  --stress-iters N          a stress warp's iterations per phase
  --permute on|off          permute instances over memory slots
  --stress-lines on|off     stress warps contend the test's own location lines
  --line-burst N            reductions the block issues on the line of each location a phase
                            stores to, before the phase's barrier
                            (0: none; at most 65536)
  --extra-environment JSON  one more environment after the first (how the harness hands a tuned
                            file's [[extra]] environments to its workers)
  --mutants                 run the mutants of the spec's tests on the GPU (mutation testing)
                            instead of the tiers, and print the mutation score
  --mutant-budget SECS      GPU seconds a mutant may run before it survives
  --mutant-results FILE     mutants' JSON-lines records (default: target/gridcheck/mutants.jsonl)
  --tune FILE               with --mutants: every mutant under each environment of FILE
                            (conformance/tuning/search.toml), and the kills per GPU second of each
  --min-score PCT           with --mutants: fail the run when fewer than PCT % of the mutants
                            that ran are killed (a kernelgen or incantation change that lowers it)
  --devices all|0,1,...     run the GPU tier on these GPUs at once, one worker at a time on
                            each, the tests dealt out over them (default: device 0)
Everything else (filters, --list, --ignored, --exact, --format json, -q) is libtest's.";

/// The flags that print the help: ours, then libtest's.
pub const HELP_FLAGS: [&str; 3] = ["--help", "-h", "--help-gridcheck"];

/// Prints our options, then libtest-mimic's (whose parser prints them and
/// ends the process with success). A closed pipe ends it quietly too.
pub fn print_help(program: &str) -> ! {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "usage: cargo xtask conformance [options] [filter] [-- libtest options]\n\
         (a bundle: bash conformance/gpu-run.sh [options] [libtest options])\n\n{USAGE}\n\n\
         libtest's options (after ours; `cargo xtask conformance` takes them after `--`):"
    );
    let _ = out.flush();
    drop(out);
    let _ = libtest_mimic::Arguments::from_iter([program, "--help"]);
    std::process::exit(0)
}

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
            tiers_given: false,
            binary: Default::default(),
            devrt: None,
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
            classify_timeouts: false,
            no_classify_timeouts: false,
            fresh_context: false,
            serve: false,
            progress: None,
            junit: None,
            shard: None,
            max_delay: gridcheck_gpu::Incantations::default().max_delay_cycles,
            stress_words: gridcheck_gpu::Incantations::default().stress_words,
            stress_iters: gridcheck_gpu::Incantations::default().stress_iters,
            permute: true,
            stress_lines: false,
            line_burst: 0,
            mutant_budget_s: 1.0,
            extra: Vec::new(),
            given: Vec::new(),
            tuning: None,
            no_tuning: false,
            tuned_from: "the built-in environment".into(),
            tuning_file: None,
            mutants: false,
            mutant_results: PathBuf::new(),
            tune: None,
            min_score: None,
            worker: None,
            devices: None,
            worker_device: None,
            toolchain: None,
            sass_arches: ["sm_90", "sm_100", "sm_120"].map(String::from).to_vec(),
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
                                format!("unknown tier `{t}`: expected model, static, gpu or sass")
                            })?;
                    o.tiers.push(tier);
                }
                "--root" => o.root = value(&mut args, "--root")?.into(),
                "--toolchain" => o.toolchain = Some(value(&mut args, "--toolchain")?),
                "--sass-arch" => {
                    o.sass_arches = value(&mut args, "--sass-arch")?
                        .split(',')
                        .map(|a| a.trim().to_string())
                        .filter(|a| !a.is_empty())
                        .collect();
                }
                "--spec" => spec = Some(value(&mut args, "--spec")?.into()),
                "--seeds" => o.seeds = Some(value(&mut args, "--seeds")?.into()),
                "--cubins" => cubins = Some(value(&mut args, "--cubins")?.into()),
                "--binary" => o.binary = crate::binary::parse_mode(&value(&mut args, "--binary")?)?,
                "--devrt" => o.devrt = Some(value(&mut args, "--devrt")?.into()),
                "--results" => results = Some(value(&mut args, "--results")?.into()),
                "--instances" => {
                    o.instances = number(value(&mut args, "--instances")?, "--instances")?;
                    o.given.push("instances");
                }
                "--launches" => {
                    o.launches = number(value(&mut args, "--launches")?, "--launches")?;
                    o.given.push("launches");
                }
                "--max-delay" => {
                    o.max_delay = number(value(&mut args, "--max-delay")?, "--max-delay")?;
                    o.given.push("max_delay_cycles");
                }
                "--stress-words" => {
                    o.stress_words = number(value(&mut args, "--stress-words")?, "--stress-words")?;
                    o.given.push("stress_words");
                }
                "--stress-iters" => {
                    o.stress_iters = number(value(&mut args, "--stress-iters")?, "--stress-iters")?;
                    o.given.push("stress_iters");
                }
                "--permute" => {
                    o.permute = match value(&mut args, "--permute")?.as_str() {
                        "on" => true,
                        "off" => false,
                        v => return Err(format!("`--permute {v}`: expected on or off")),
                    };
                    o.given.push("permute");
                }
                "--stress-lines" => {
                    o.stress_lines = match value(&mut args, "--stress-lines")?.as_str() {
                        "on" => true,
                        "off" => false,
                        v => return Err(format!("`--stress-lines {v}`: expected on or off")),
                    };
                    o.given.push("stress_lines");
                }
                "--line-burst" => {
                    o.line_burst = number(value(&mut args, "--line-burst")?, "--line-burst")?;
                    if o.line_burst > gridcheck_report::MAX_LINE_BURST {
                        return Err(format!(
                            "`--line-burst {}`: expected at most {}",
                            o.line_burst,
                            gridcheck_report::MAX_LINE_BURST
                        ));
                    }
                    o.given.push("line_burst");
                }
                "--mutant-budget" => {
                    let v = value(&mut args, "--mutant-budget")?;
                    o.mutant_budget_s = number(v.clone(), "--mutant-budget")?;
                    if !(o.mutant_budget_s > 0.0 && o.mutant_budget_s <= 60.0) {
                        return Err(format!("`--mutant-budget {v}`: expected 0 < SECS <= 60"));
                    }
                    o.given.push("mutant_budget_s");
                }
                "--tuning" => match value(&mut args, "--tuning")?.as_str() {
                    "none" => o.no_tuning = true,
                    f => o.tuning = Some(f.into()),
                },
                "--mutants" => o.mutants = true,
                "--mutant-results" => {
                    o.mutant_results = value(&mut args, "--mutant-results")?.into()
                }
                "--min-score" => {
                    let v = value(&mut args, "--min-score")?;
                    let pct: f64 = number(v.clone(), "--min-score")?;
                    if !(0.0..=100.0).contains(&pct) {
                        return Err(format!(
                            "`--min-score {v}`: expected a percentage, 0 to 100"
                        ));
                    }
                    o.min_score = Some(pct);
                }
                "--extra-environment" => {
                    let v = value(&mut args, "--extra-environment")?;
                    let e: gridcheck_report::SearchPoint = serde_json::from_str(&v)
                        .map_err(|e| format!("--extra-environment: {e}"))?;
                    o.extra.push(e);
                    if !o.given.contains(&"extra") {
                        o.given.push("extra");
                    }
                }
                "--tune" => {
                    o.tune = Some(value(&mut args, "--tune")?.into());
                    o.mutants = true;
                }
                "--worker-mutant" => {
                    o.worker = Some((
                        crate::worker::Job::Mutant,
                        value(&mut args, "--worker-mutant")?,
                    ))
                }
                "--worker-mutant-model" => {
                    o.worker = Some((
                        crate::worker::Job::MutantModel,
                        value(&mut args, "--worker-mutant-model")?,
                    ))
                }
                "--seed" => o.seed = number(value(&mut args, "--seed")?, "--seed")?,
                "--timeout" => o.timeout = number(value(&mut args, "--timeout")?, "--timeout")?,
                "--model-timeout" => {
                    o.model_timeout =
                        number(value(&mut args, "--model-timeout")?, "--model-timeout")?
                }
                "--resume" => o.resume = true,
                "--classify-timeouts" => o.classify_timeouts = true,
                "--no-classify-timeouts" => o.no_classify_timeouts = true,
                "--fresh-context" => o.fresh_context = true,
                "--worker-serve" => o.serve = true,
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
        o.cubins = cubins.unwrap_or_else(|| match &o.toolchain {
            Some(t) => o.root.join(format!("target/kernels-nvcc-{t}")),
            None => o.root.join(gridcheck_kernelgen::BUILD_DIR),
        });
        o.results = results.unwrap_or_else(|| o.root.join("target/gridcheck/results.jsonl"));
        if o.mutant_results.as_os_str().is_empty() {
            o.mutant_results = o.root.join("target/gridcheck/mutants.jsonl");
        }
        o.tiers_given = !o.tiers.is_empty() && !o.mutants;
        if o.mutants {
            // Mutants need the oracles and the GPU, and nothing of the tiers.
            o.tiers = vec![Tier::Gpu];
        } else if o.tiers.is_empty() {
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
        assert!(!parse(&["bin"]).unwrap().tiers_given);
        assert!(parse(&["bin", "--tier", "gpu"]).unwrap().tiers_given);
        let o = parse(&["bin", "--binary", "ptx", "--devrt", "/d.a"]).unwrap();
        assert_eq!(o.binary, gridcheck_toolchain::binary::Mode::Ptx);
        assert_eq!(o.devrt, Some(PathBuf::from("/d.a")));
        assert!(
            parse(&["bin", "--binary", "sass"])
                .unwrap_err()
                .contains("not auto or ptx")
        );
        let o = parse(&["bin", "--spec", "/s", "--root", "/x"]).unwrap();
        assert_eq!(o.spec, PathBuf::from("/s"));
        assert_eq!(o.cubins, PathBuf::from("/x/target/kernels"));
        assert!(!o.classify_timeouts);
        assert!(
            parse(&["bin", "--classify-timeouts"])
                .unwrap()
                .classify_timeouts
        );
    }

    #[test]
    fn a_toolchain_picks_its_kernels_and_sass_its_architectures() {
        let o = parse(&[
            "bin",
            "--toolchain",
            "13.5",
            "--tier",
            "sass",
            "--sass-arch",
            "sm_90,sm_120",
        ])
        .unwrap();
        assert_eq!(o.toolchain.as_deref(), Some("13.5"));
        assert_eq!(o.cubins, PathBuf::from("/r/target/kernels-nvcc-13.5"));
        assert_eq!(o.sass_arches, vec!["sm_90", "sm_120"]);
        assert_eq!(o.tiers, vec![Tier::Sass]);
        let o = parse(&["bin", "--toolchain", "13.5", "--cubins", "/k"]).unwrap();
        assert_eq!(o.cubins, PathBuf::from("/k"));
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
        assert!(
            parse(&["bin", "--line-burst", "65537"])
                .unwrap_err()
                .contains("at most 65536")
        );
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
