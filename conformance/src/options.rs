//! The harness's options: what the command line says, read by the flag
//! table (`flags.rs`), which leaves the rest (filters, `--list`, `--ignored`,
//! `--format`, ...) to libtest-mimic. Nothing here is decided: the
//! environment a GPU gets, the toolchain found and the devices are the
//! plan's and the runner's (`plan.rs`, `runner.rs`).

use std::path::PathBuf;

use crate::binary::Kernels;
use crate::devices::Devices;
use crate::tuning::TuningFlags;

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
    /// The built kernels (`--cubins`, `--binary`, `--devrt`).
    pub kernels: Kernels,
    /// JSON-lines results file, appended to as each trial finishes.
    pub results: PathBuf,
    pub seed: u64,
    /// Seconds a GPU test may run before its process is killed.
    pub timeout: u64,
    /// Seconds the model may explore one litmus test before its process is killed.
    pub model_timeout: u64,
    /// Which litmus GPU trials that time out are rerun alone under watch.
    pub classify: Classify,
    /// `--fresh-context`: every GPU trial in a process (and CUDA context) of
    /// its own, instead of the staying worker (`process.rs`).
    pub fresh_context: bool,
    /// Skip trials the results file already has a result for.
    pub resume: bool,
    /// Print progress lines with an estimate on standard error (`None`: when
    /// standard error is a terminal and standard output is not).
    pub progress: Option<bool>,
    /// Write JUnit XML here after the run.
    pub junit: Option<PathBuf>,
    /// Run only shard `i` of `n` (1-based) of the trials, by name order.
    pub shard: Option<(usize, usize)>,
    /// `--shuffle SEED`: run the trials in the order this seed shuffles
    /// them into (`run.rs`); `None`: the spec's order.
    pub shuffle: Option<u64>,
    /// The testing environment's flags and `--tuning` (`tuning.rs`).
    pub tuning: TuningFlags,
    /// `--mutants` and its options.
    pub mutants: MutantOptions,
    /// The escalation of quality warnings (`escalate.rs`).
    pub escalate: EscalateOptions,
    /// `--devices`: the GPUs the GPU tier runs on (`None`: device 0, as
    /// without the flag; see `devices.rs`).
    pub devices: Option<Devices>,
    /// `--toolchain`: installed toolchains (`.toolchains/<release>`), in
    /// order. The harness runs one: its nvcc for the static and sass tiers,
    /// its kernels (`target/kernels-nvcc-<release>`) for the GPU tier unless
    /// `--cubins`; `cargo xtask conformance` runs the harness once a
    /// toolchain.
    pub toolchains: Vec<String>,
    /// `--sass-arch`: the architectures of the sass tier.
    pub sass_arches: Vec<String>,
    /// Arguments for libtest-mimic.
    pub libtest: Vec<String>,
}

/// Which litmus GPU trials that timed out are rerun alone under watch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Classify {
    /// Those no known hang covers.
    #[default]
    Unknown,
    /// Every one (`--classify-timeouts`).
    All,
    /// None (`--no-classify-timeouts`).
    None,
}

/// `--mutants` and what goes with it.
#[derive(Debug, Clone, Default)]
pub struct MutantOptions {
    /// Run the mutants of the spec's tests instead of the tiers.
    pub on: bool,
    /// The mutants' JSON-lines records.
    pub results: PathBuf,
    /// `--tune FILE`: run every mutant under each environment of FILE.
    pub tune: Option<PathBuf>,
    /// `--min-score PCT`: the mutants' run fails below this score.
    pub min_score: Option<f64>,
}

/// How a quality warning is escalated (`escalate.rs`).
#[derive(Debug, Clone)]
pub struct EscalateOptions {
    /// `--no-escalate` turns it off.
    pub on: bool,
    /// `--escalate-budget S`: the GPU seconds each environment may spend.
    pub budget_s: f64,
    /// `--escalate-total S`: the wall seconds a run's escalations may take
    /// together (a driver that hides fifty outcomes must not make the
    /// suite take an hour; what is not escalated says so).
    pub total_s: f64,
    /// `--escalate-search FILE|none`: the environments tried after the
    /// run's own, relative to the root when relative (`None`: none).
    pub search: Option<PathBuf>,
}

impl Default for EscalateOptions {
    fn default() -> Self {
        EscalateOptions {
            on: true,
            budget_s: 0.25,
            total_s: 10.0,
            search: Some(PathBuf::from("conformance/tuning/search.toml")),
        }
    }
}

impl Options {
    /// The options before any flag: the built-in environment, the
    /// defaults; paths under `root` are set once every flag is read.
    pub fn defaults(root: PathBuf) -> Options {
        Options {
            tiers: Vec::new(),
            tiers_given: false,
            kernels: Kernels {
                root: PathBuf::new(),
                mode: Default::default(),
                devrt: None,
            },
            seeds: None,
            results: PathBuf::new(),
            spec: PathBuf::new(),
            root,
            seed: 1,
            timeout: 60,
            model_timeout: 300,
            classify: Classify::Unknown,
            resume: false,
            fresh_context: false,
            progress: None,
            junit: None,
            shard: None,
            shuffle: None,
            tuning: TuningFlags::default(),
            mutants: MutantOptions::default(),
            escalate: EscalateOptions::default(),
            devices: None,
            toolchains: Vec::new(),
            sass_arches: ["sm_90", "sm_100", "sm_120"].map(String::from).to_vec(),
            libtest: Vec::new(),
        }
    }

    pub fn runs(&self, tier: Tier) -> bool {
        self.tiers.contains(&tier)
    }

    /// The toolchain of this run (`--toolchain`), if one was named.
    pub fn toolchain(&self) -> Option<&str> {
        self.toolchains.first().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(a: &[&str]) -> Result<Options, String> {
        crate::flags::parse(a.iter().map(|s| s.to_string()).collect(), "/r".into())
    }

    fn environment(o: &Options) -> gridcheck_report::Tuning {
        o.tuning.over(&Default::default()).unwrap()
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
        assert_eq!(environment(&o).instances, 8);
        assert_eq!(o.libtest, vec!["bin", "pdl.wait", "--list"]);
        assert_eq!(parse(&["bin"]).unwrap().tiers, Tier::ALL.to_vec());
        assert!(!parse(&["bin"]).unwrap().tiers_given);
        assert!(parse(&["bin", "--tier", "gpu"]).unwrap().tiers_given);
        let o = parse(&["bin", "--binary", "ptx", "--devrt", "/d.a"]).unwrap();
        assert_eq!(o.kernels.mode, gridcheck_toolchain::binary::Mode::Ptx);
        assert_eq!(o.kernels.devrt, Some(PathBuf::from("/d.a")));
        assert!(
            parse(&["bin", "--binary", "sass"])
                .unwrap_err()
                .contains("not auto or ptx")
        );
        let o = parse(&["bin", "--spec", "/s", "--root", "/x"]).unwrap();
        assert_eq!(o.spec, PathBuf::from("/s"));
        assert_eq!(o.kernels.root, PathBuf::from("/x/target/kernels"));
        assert_eq!(
            o.results,
            PathBuf::from("/x/target/gridcheck/results.jsonl")
        );
        assert_eq!(o.classify, Classify::Unknown);
        for (flags, want) in [
            (&["--classify-timeouts"][..], Classify::All),
            (&["--no-classify-timeouts"], Classify::None),
            (
                &["--classify-timeouts", "--no-classify-timeouts"],
                Classify::All,
            ),
            (
                &["--no-classify-timeouts", "--classify-timeouts"],
                Classify::All,
            ),
        ] {
            let argv: Vec<&str> = std::iter::once("bin")
                .chain(flags.iter().copied())
                .collect();
            assert_eq!(parse(&argv).unwrap().classify, want, "{flags:?}");
        }
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
        assert_eq!(o.toolchain(), Some("13.5"));
        assert_eq!(o.kernels.root, PathBuf::from("/r/target/kernels-nvcc-13.5"));
        assert_eq!(o.sass_arches, vec!["sm_90", "sm_120"]);
        assert_eq!(o.tiers, vec![Tier::Sass]);
        let o = parse(&["bin", "--toolchain", "13.5", "--cubins", "/k"]).unwrap();
        assert_eq!(o.kernels.root, PathBuf::from("/k"));
        // cargo xtask conformance names several; each run gets one.
        let argv = [
            "bin",
            "--toolchain",
            "13.0,13.5",
            "-q",
            "--toolchain",
            "13.2",
            "f",
        ];
        let o = parse(&argv).unwrap();
        assert_eq!(o.toolchains, ["13.0", "13.5", "13.2"]);
        let args: Vec<String> = argv[1..].iter().map(|s| s.to_string()).collect();
        assert_eq!(crate::flags::without(&args, "--toolchain"), ["-q", "f"]);
        // A value that reads like the flag is another flag's value.
        let args: Vec<String> = ["--junit", "--toolchain", "--toolchain", "13.5", "g"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            crate::flags::without(&args, "--toolchain"),
            ["--junit", "--toolchain", "g"]
        );
        assert!(
            parse(&["bin", "--toolchain", "13.x"])
                .unwrap_err()
                .starts_with("`--toolchain 13.x`: `13.x` is not a toolchain")
        );
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
            if f.starts_with("--worker") {
                // A worker gets a typed job now (`job.rs`), not flags.
                assert!(flag.is_none(), "{f} is a flag again");
                continue;
            }
            let flag = flag.unwrap_or_else(|| panic!("{f} is no flag any more"));
            assert!(!flag.help.is_empty(), "{f} has no help");
            assert!(
                help.contains(&format!("\n  {f} ")),
                "{f} in the help:\n{help}"
            );
        }
        assert_eq!(&FLAGS_BEFORE[41..], &crate::flags::HELP_FLAGS[..2]);
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
        assert!(o.mutants.on && !o.tiers_given);
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
    }
}
