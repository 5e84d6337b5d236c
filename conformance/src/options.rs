//! The harness's own options, taken out of the command line before the rest
//! goes to libtest-mimic (filters, `--list`, `--ignored`, `--format`, ...):
//! what they are here, how each flag reads in `flags.rs`.

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
    /// The testing environment: instances, launches, incantations, the
    /// mutants' GPU budget and the further environments (`[[extra]]`). The
    /// built-in one, then the GPU's tuned file (`--tuning`), then the
    /// environment flags: they win (`environment.rs`).
    pub environment: gridcheck_report::Tuning,
    /// The environment's fields given as flags, by field name.
    pub environment_flags: serde_json::Map<String, serde_json::Value>,
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
         (a bundle: bash conformance/gpu-run.sh [options] [libtest options])\n\n{}\n\n\
         libtest's options (after ours; `cargo xtask conformance` takes them after `--`):",
        crate::flags::usage()
    );
    let _ = out.flush();
    drop(out);
    let _ = libtest_mimic::Arguments::from_iter([program, "--help"]);
    std::process::exit(0)
}

impl Options {
    /// Splits our options from libtest's. `root` is the default repository root.
    pub fn parse(argv: Vec<String>, root: PathBuf) -> Result<Options, String> {
        let mut d = crate::flags::Draft {
            o: Options::defaults(root),
            spec: None,
            cubins: None,
            results: None,
        };
        crate::flags::parse(argv, &mut d)?;
        let mut o = d.o;
        // Paths default relative to the root, whichever order flags come in.
        o.spec = d.spec.unwrap_or_else(|| o.root.join("spec"));
        o.cubins = d.cubins.unwrap_or_else(|| match &o.toolchain {
            Some(t) => o.root.join(format!("target/kernels-nvcc-{t}")),
            None => o.root.join(gridcheck_kernelgen::BUILD_DIR),
        });
        o.results = d
            .results
            .unwrap_or_else(|| o.root.join("target/gridcheck/results.jsonl"));
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
        o.environment = o.with_flags(&gridcheck_report::Tuning::default())?;
        if o.environment.instances == 0 || o.environment.launches == 0 {
            return Err("--instances and --launches must be at least 1".into());
        }
        Ok(o)
    }

    /// The options before any flag: the built-in environment, paths under
    /// `root`.
    fn defaults(root: PathBuf) -> Options {
        Options {
            tiers: Vec::new(),
            tiers_given: false,
            binary: Default::default(),
            devrt: None,
            seeds: None,
            cubins: PathBuf::new(),
            results: PathBuf::new(),
            spec: PathBuf::new(),
            root,
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
            environment: gridcheck_report::Tuning::default(),
            environment_flags: serde_json::Map::new(),
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
        }
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
        assert_eq!(o.environment.instances, 8);
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

    /// Every flag the hand-written parser took, with its spelling.
    const FLAGS_BEFORE: [&str; 43] = [
        "--tier",
        "--toolchain",
        "--sass-arch",
        "--root",
        "--spec",
        "--seeds",
        "--cubins",
        "--binary",
        "--devrt",
        "--results",
        "--instances",
        "--launches",
        "--seed",
        "--timeout",
        "--model-timeout",
        "--resume",
        "--classify-timeouts",
        "--progress",
        "--no-progress",
        "--junit",
        "--shard",
        "--tuning",
        "--max-delay",
        "--stress-words",
        "--stress-iters",
        "--permute",
        "--stress-lines",
        "--line-burst",
        "--extra-environment",
        "--mutants",
        "--mutant-budget",
        "--mutant-results",
        "--tune",
        "--min-score",
        "--devices",
        "--worker",
        "--worker-model",
        "--worker-mutant",
        "--worker-mutant-model",
        "--worker-device",
        "--help-gridcheck",
        "--help",
        "-h",
    ];

    #[test]
    fn every_flag_keeps_its_spelling_and_the_help_shows_ours() {
        use crate::flags::{FLAGS, usage};
        let help = usage();
        for f in &FLAGS_BEFORE[..40] {
            let flag = FLAGS.iter().find(|x| x.name == *f);
            let flag = flag.unwrap_or_else(|| panic!("{f} is no flag any more"));
            let shown = help.contains(&format!("\n  {f} "));
            assert_eq!(shown, !flag.help.is_empty(), "{f} in the help:\n{help}");
            assert_eq!(flag.help.is_empty(), f.starts_with("--worker"), "{f}");
        }
        assert_eq!(&FLAGS_BEFORE[41..], &HELP_FLAGS[..2]);
        let mut names: Vec<&str> = FLAGS.iter().map(|f| f.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), FLAGS.len(), "a flag is in the table twice");
        let e = parse(&["bin", "--help-gridcheck"]).unwrap_err();
        assert!(
            e.contains("--line-burst N") && e.contains("is libtest's"),
            "{e}"
        );
        // A switch takes no value; a flag with one takes the next argument.
        let o = parse(&["bin", "--resume", "f", "--junit", "j.xml", "g"]).unwrap();
        assert_eq!(o.libtest, vec!["bin", "f", "g"]);
        assert_eq!(o.junit, Some(PathBuf::from("j.xml")));
        let o = parse(&["bin", "--tune", "s.toml"]).unwrap();
        assert!(o.mutants && !o.tiers_given);
        assert_eq!(o.tiers, vec![Tier::Gpu]);
    }

    #[test]
    fn errors_name_the_flag_and_its_value() {
        for (argv, start) in [
            (
                &["bin", "--timeout", "soon"][..],
                "`--timeout soon`: not a valid number",
            ),
            (
                &["bin", "--permute", "maybe"],
                "`--permute maybe`: expected on or off",
            ),
            (&["bin", "--tier", "gpux"], "`--tier gpux`: unknown tier"),
            (
                &["bin", "--min-score", "101"],
                "`--min-score 101`: expected a percentage",
            ),
            (
                &["bin", "--mutant-budget", "0"],
                "`--mutant-budget 0`: expected 0 < SECS",
            ),
            (
                &["bin", "--binary", "sass"],
                "`--binary sass`: not auto or ptx",
            ),
            (&["bin", "--junit"], "`--junit` needs a value"),
        ] {
            let e = parse(argv).unwrap_err();
            assert!(e.starts_with(start), "{argv:?}: {e}");
        }
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
