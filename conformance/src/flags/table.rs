//! The table of the harness's flags ([`FLAGS`]): each flag's spelling, its
//! value, its help and what it sets in the options being read ([`Draft`]),
//! with the parsers of their values. `flags.rs` reads a command line with it
//! and prints the help from it.

use std::path::PathBuf;

use serde_json::Value;

use crate::devices::Devices;
use crate::options::{Classify, Options};
use crate::tuning::TuningSource;
use gridcheck_report::Tier;

/// One flag: `--name VALUE` (or a switch when `value` is `None`), its help,
/// and what it sets.
pub struct Flag {
    pub name: &'static str,
    pub value: Option<&'static str>,
    pub help: &'static str,
    pub(super) set: fn(&mut Draft, &str) -> Result<(), String>,
}

/// The options while the command line is read: paths that default under
/// the root are resolved once every flag is in, whatever their order.
pub(super) struct Draft {
    pub(super) o: Options,
    spec: Option<PathBuf>,
    cubins: Option<PathBuf>,
    results: Option<PathBuf>,
    mutant_results: Option<PathBuf>,
}

impl Draft {
    /// The options before any flag.
    pub(super) fn new(root: PathBuf) -> Draft {
        Draft {
            o: Options::defaults(root),
            spec: None,
            cubins: None,
            results: None,
            mutant_results: None,
        }
    }

    /// Sets the environment's field `field` (a flag wins over a tuned file).
    fn env(&mut self, field: &str, v: impl Into<Value>) -> Result<(), String> {
        self.o.tuning.fields.insert(field.into(), v.into());
        Ok(())
    }

    /// The options, with what defaults under the root resolved.
    pub(super) fn finish(self) -> Result<Options, String> {
        let mut o = self.o;
        let root = o.root.clone();
        o.spec = self.spec.unwrap_or_else(|| root.join("spec"));
        o.kernels.root = self
            .cubins
            .unwrap_or_else(|| gridcheck_toolchain::kernels_dir(&root, o.toolchain()));
        o.results = self
            .results
            .unwrap_or_else(|| root.join("target/gridcheck/results.jsonl"));
        o.mutants.results = self
            .mutant_results
            .unwrap_or_else(|| root.join("target/gridcheck/mutants.jsonl"));
        o.tiers_given = !o.tiers.is_empty() && !o.mutants.on;
        if o.mutants.on {
            // Mutants need the oracles and the GPU, and nothing of the tiers.
            o.tiers = vec![Tier::Gpu];
        } else if o.tiers.is_empty() {
            o.tiers = Tier::ALL.to_vec();
        }
        if o.seeds.is_none() {
            o.seeds = gridcheck_spec::seeds::default_dir(&root);
        }
        let e = o.tuning.over(&gridcheck_report::Tuning::default())?;
        if e.instances == 0 || e.launches == 0 {
            return Err("--instances and --launches must be at least 1".into());
        }
        Ok(o)
    }
}

fn number<T: std::str::FromStr>(v: &str) -> Result<T, String> {
    v.parse().map_err(|_| "not a valid number".to_string())
}

fn on_off(v: &str) -> Result<bool, String> {
    match v {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err("expected on or off".into()),
    }
}

fn line_burst(v: &str) -> Result<u32, String> {
    let n: u32 = number(v)?;
    if n > gridcheck_report::MAX_LINE_BURST {
        return Err(format!(
            "expected at most {}",
            gridcheck_report::MAX_LINE_BURST
        ));
    }
    Ok(n)
}

fn budget_launches(v: &str) -> Result<u32, String> {
    let n: u32 = number(v)?;
    if n > gridcheck_report::MAX_BUDGET_LAUNCHES {
        return Err(format!(
            "expected at most {}",
            gridcheck_report::MAX_BUDGET_LAUNCHES
        ));
    }
    Ok(n)
}

fn mutant_budget(v: &str) -> Result<f64, String> {
    let s: f64 = number(v)?;
    if !(s > 0.0 && s <= 60.0) {
        return Err("expected 0 < SECS <= 60".into());
    }
    Ok(s)
}

fn percentage(v: &str) -> Result<f64, String> {
    let pct: f64 = number(v)?;
    if !(0.0..=100.0).contains(&pct) {
        return Err("expected a percentage, 0 to 100".into());
    }
    Ok(pct)
}

fn tier(v: &str) -> Result<Tier, String> {
    Tier::ALL
        .into_iter()
        .find(|x| x.as_str() == v)
        .ok_or_else(|| "unknown tier: expected model, static, gpu, sass or library".into())
}

/// A number of seconds, more than 0 and at most an hour.
fn seconds(v: &str) -> Result<f64, String> {
    v.parse::<f64>()
        .ok()
        .filter(|s| *s > 0.0 && *s <= 3600.0)
        .ok_or_else(|| "expected seconds, more than 0 and at most 3600".into())
}

fn shard(v: &str) -> Result<(usize, usize), String> {
    v.split_once('/')
        .and_then(|(i, n)| Some((i.parse().ok()?, n.parse().ok()?)))
        .filter(|&(i, n): &(usize, usize)| i >= 1 && i <= n)
        .ok_or_else(|| "expected i/n with 1 <= i <= n".into())
}

/// `--extra-environment`: one more environment, appended to the flags'.
fn extra_environment(d: &mut Draft, v: &str) -> Result<(), String> {
    let e: gridcheck_report::SearchPoint =
        serde_json::from_str(v).map_err(|e| format!("not an environment: {e}"))?;
    let e = serde_json::to_value(e).map_err(|e| e.to_string())?;
    let fields = &mut d.o.tuning.fields;
    match fields.get_mut("extra") {
        Some(Value::Array(list)) => list.push(e),
        _ => {
            fields.insert("extra".into(), Value::Array(vec![e]));
        }
    }
    Ok(())
}

macro_rules! flag {
    ($name:literal, $value:expr, $help:literal, $set:expr) => {
        Flag {
            name: $name,
            value: $value,
            help: $help,
            set: $set,
        }
    };
}

/// Every flag of the harness, in the order of the help.
pub const FLAGS: &[Flag] = &[
    flag!(
        "--tier",
        Some("model|static|gpu|sass|library"),
        "run only this tier (repeatable; default: all); a tier named\nhere that cannot run on this machine is an error",
        |d, v| {
            d.o.tiers.push(tier(v)?);
            Ok(())
        }
    ),
    flag!(
        "--toolchain",
        Some("RELEASE"),
        "an installed toolchain (.toolchains/RELEASE, cargo xtask toolchain\ninstall): its nvcc for the static and sass tiers, its kernels\n(target/kernels-nvcc-RELEASE) for the GPU tier (cargo xtask\nconformance: repeatable, or 13.0,13.5: one run each)",
        |d, v| { gridcheck_toolchain::add_releases(&mut d.o.toolchains, v) }
    ),
    flag!(
        "--sass-arch",
        Some("LIST"),
        "the sass tier's architectures (default: sm_90,sm_100,sm_120; all: every one nvcc targets)",
        |d, v| {
            d.o.sass_arches = v
                .split(',')
                .map(|a| a.trim().to_string())
                .filter(|a| !a.is_empty())
                .collect();
            Ok(())
        }
    ),
    flag!(
        "--root",
        Some("DIR"),
        "repository root (default: the workspace)",
        |d, v| {
            d.o.root = v.into();
            Ok(())
        }
    ),
    flag!(
        "--spec",
        Some("DIR"),
        "the spec to run (default: <root>/spec)",
        |d, v| {
            d.spec = Some(v.into());
            Ok(())
        }
    ),
    flag!(
        "--seeds",
        Some("DIR"),
        "seed documents for the quote check (default: ../shared/seeds)",
        |d, v| {
            d.o.seeds = Some(v.into());
            Ok(())
        }
    ),
    flag!(
        "--cubins",
        Some("DIR"),
        "built kernels (default: target/kernels)",
        |d, v| {
            d.cubins = Some(v.into());
            Ok(())
        }
    ),
    flag!(
        "--binary",
        Some("auto|ptx"),
        "auto: the device's cubin, else a lower minor's of its major, else the\nPTX through the driver's JIT; ptx: the PTX only (default: auto)",
        |d, v| {
            d.o.kernels.mode =
                gridcheck_toolchain::binary::Mode::parse(v).map_err(|_| "not auto or ptx")?;
            Ok(())
        }
    ),
    flag!(
        "--devrt",
        Some("FILE"),
        "the libcudadevrt.a PTX is linked with (default: <cubins>/libcudadevrt.a)",
        |d, v| {
            d.o.kernels.devrt = Some(v.into());
            Ok(())
        }
    ),
    flag!(
        "--results",
        Some("FILE"),
        "JSON-lines results (default: target/gridcheck/results.jsonl)",
        |d, v| {
            d.results = Some(v.into());
            Ok(())
        }
    ),
    flag!(
        "--instances",
        Some("N"),
        "litmus instances per launch (default: 1024)",
        |d, v| d.env("instances", number::<u32>(v)?)
    ),
    flag!(
        "--launches",
        Some("N"),
        "launches per litmus test (default: 32)",
        |d, v| d.env("launches", number::<u32>(v)?)
    ),
    flag!(
        "--seed",
        Some("N"),
        "incantation seed (default: 1)",
        |d, v| {
            d.o.seed = number(v)?;
            Ok(())
        }
    ),
    flag!(
        "--timeout",
        Some("SECS"),
        "kill a GPU test's process after this long (default: 60)",
        |d, v| {
            d.o.timeout = number(v)?;
            Ok(())
        }
    ),
    flag!(
        "--model-timeout",
        Some("SECS"),
        "kill the model's process for one test after this long (default: 300)",
        |d, v| {
            d.o.model_timeout = number(v)?;
            Ok(())
        }
    ),
    flag!(
        "--resume",
        None,
        "skip trials the results file already holds (a killed run goes on)",
        |d, _| {
            d.o.resume = true;
            Ok(())
        }
    ),
    flag!(
        "--classify-timeouts",
        None,
        "rerun every litmus GPU trial that timed out alone under watch: a stall\n(where the instances stopped) or a long run (its rate); by default\nonly those no known hang covers",
        |d, _| {
            d.o.classify = Classify::All;
            Ok(())
        }
    ),
    flag!(
        "--no-classify-timeouts",
        None,
        "rerun no timed-out trial under watch",
        |d, _| {
            // `--classify-timeouts` wins, in whatever order both come.
            if d.o.classify != Classify::All {
                d.o.classify = Classify::None;
            }
            Ok(())
        }
    ),
    flag!(
        "--fresh-context",
        None,
        "every GPU trial in a process and CUDA context of its own (default: one\nstaying worker a device runs the litmus and runtime tests that set no\ndevice runtime limit, each with its own module)",
        |d, _| {
            d.o.fresh_context = true;
            Ok(())
        }
    ),
    flag!(
        "--progress",
        None,
        "progress lines with the time left on stderr (default: when stderr\nis a terminal and stdout is not)",
        |d, _| {
            d.o.progress = Some(true);
            Ok(())
        }
    ),
    flag!("--no-progress", None, "no progress lines", |d, _| {
        d.o.progress = Some(false);
        Ok(())
    }),
    flag!("--junit", Some("FILE"), "also write JUnit XML", |d, v| {
        d.o.junit = Some(v.into());
        Ok(())
    }),
    flag!(
        "--shard",
        Some("I/N"),
        "run the I-th of N shards of the trials (1-based)",
        |d, v| {
            d.o.shard = Some(shard(v)?);
            Ok(())
        }
    ),
    flag!(
        "--no-escalate",
        None,
        "leave a quality warning as the suite saw it (default: rerun its test\nalone, then under the search's environments, until the outcome shows)",
        |d, _| {
            d.o.escalate.on = false;
            Ok(())
        }
    ),
    flag!(
        "--escalate-budget",
        Some("SECONDS"),
        "GPU seconds an escalation spends at most in each environment (default 0.25)",
        |d, v| {
            d.o.escalate.budget_s = seconds(v)?;
            Ok(())
        }
    ),
    flag!(
        "--escalate-total",
        Some("SECONDS"),
        "wall seconds the run's escalations take at most together (default 10)",
        |d, v| {
            d.o.escalate.total_s = seconds(v)?;
            Ok(())
        }
    ),
    flag!(
        "--escalate-search",
        Some("FILE|none"),
        "the environments an escalation tries after the run's own (default\nconformance/tuning/search.toml)",
        |d, v| {
            d.o.escalate.search = (v != "none").then(|| PathBuf::from(v));
            Ok(())
        }
    ),
    flag!(
        "--shuffle",
        Some("SEED"),
        "run the trials in the order SEED shuffles them into (the same seed,\nthe same order; default: the spec's order)",
        |d, v| {
            d.o.shuffle = Some(
                v.parse()
                    .map_err(|_| "expected a seed, a number".to_string())?,
            );
            Ok(())
        }
    ),
    flag!(
        "--tuning",
        Some("FILE|none"),
        "the testing environment (default: conformance/tuning/<gpu>.toml when\nit exists, else the built-in one); flags below win over it",
        |d, v| {
            match v {
                "none" => d.o.tuning.source = TuningSource::None,
                f => d.o.tuning.source = TuningSource::File(f.into()),
            }
            Ok(())
        }
    ),
    flag!(
        "--max-delay",
        Some("CYCLES"),
        "random delay bound before each operation (0: none)",
        |d, v| d.env("max_delay_cycles", number::<u32>(v)?)
    ),
    flag!(
        "--stress-words",
        Some("N"),
        "words the stress warps hammer (0: no stress)",
        |d, v| d.env("stress_words", number::<u32>(v)?)
    ),
    flag!(
        "--stress-iters",
        Some("N"),
        "a stress warp's iterations per phase",
        |d, v| d.env("stress_iters", number::<u32>(v)?)
    ),
    flag!(
        "--permute",
        Some("on|off"),
        "permute instances over memory slots",
        |d, v| d.env("permute", on_off(v)?)
    ),
    flag!(
        "--stress-lines",
        Some("on|off"),
        "stress warps contend the test's own location lines",
        |d, v| d.env("stress_lines", on_off(v)?)
    ),
    flag!(
        "--line-burst",
        Some("N"),
        "reductions the block issues on the line of each location a phase\nstores to, before the phase's barrier (0: none; at most 65536)",
        |d, v| d.env("line_burst", line_burst(v)?)
    ),
    flag!(
        "--extra-environment",
        Some("JSON"),
        "one more environment after the first (JSON, as a tuned file's\n[[extra]] environment)",
        extra_environment
    ),
    flag!(
        "--mutants",
        None,
        "run the mutants of the spec's tests on the GPU (mutation testing)\ninstead of the tiers, and print the mutation score",
        |d, _| {
            d.o.mutants.on = true;
            Ok(())
        }
    ),
    flag!(
        "--mutant-budget",
        Some("SECS"),
        "GPU seconds a mutant may run before it survives",
        |d, v| d.env("mutant_budget_s", mutant_budget(v)?)
    ),
    flag!(
        "--budget-launches",
        Some("N"),
        "launches a mutant's or an escalation's run makes from one load of\nits module (at most 4096; 0, the default: the environment's launches;\n1: loaded again for every launch)",
        |d, v| d.env("budget_launches", budget_launches(v)?)
    ),
    flag!(
        "--mutant-results",
        Some("FILE"),
        "mutants' JSON-lines records (default: target/gridcheck/mutants.jsonl)",
        |d, v| {
            d.mutant_results = Some(v.into());
            Ok(())
        }
    ),
    flag!(
        "--tune",
        Some("FILE"),
        "with --mutants: every mutant under each environment of FILE\n(conformance/tuning/search.toml), and the kills per GPU second of each",
        |d, v| {
            d.o.mutants.tune = Some(v.into());
            d.o.mutants.on = true;
            Ok(())
        }
    ),
    flag!(
        "--min-score",
        Some("PCT"),
        "with --mutants: fail the run when fewer than PCT % of the mutants\nthat ran are killed (a kernelgen or incantation change that lowers it)",
        |d, v| {
            d.o.mutants.min_score = Some(percentage(v)?);
            Ok(())
        }
    ),
    flag!(
        "--devices",
        Some("all|0,1,..."),
        "run the GPU tier on these GPUs at once, one worker at a time on\neach, the tests dealt out over them (default: device 0)",
        |d, v| {
            d.o.devices = Some(Devices::parse(v)?);
            Ok(())
        }
    ),
];
