//! The conformance harness: every (rule, test) pair of the spec becomes
//! libtest-mimic trials on three tiers.
//!
//! - `model/<rule>/<test>`: the verdict equals the spec's. Both oracles run;
//!   the axiomatic model's states are the verdict, loom cross-checks them,
//!   and a disagreement is `oracle-conflict` (ARCHITECTURE.md, "Two
//!   oracles: who decides what").
//! - `static/<rule>/<test>`: a compile test, run with nvcc.
//! - `gpu/<sm>/<rule>/<test>`: the litmus test on the GPU, its histogram
//!   diffed against the model (ARCHITECTURE.md, "The verdict diff").
//! - `sass/<toolchain>/<sm>/<rule>/<test>` and
//!   `sass/<toolchain>/<sm>/user/<program>`: the machine code keeps the
//!   program order around PDL and launch primitives (`sass.rs`).
//!
//! A trial that cannot run here (no nvcc, no CUDA driver, kernels not built)
//! is reported ignored with the reason, never passed. Every finished trial is
//! appended at once to the JSON-lines results file (one write a record; a
//! write that fails fails the run), and a summary with each test's model
//! verdict and hardware histogram is printed after the run. `--resume`
//! reads the file back, naming every line it skips and why. Every record
//! carries the run's id and start time (`RunStamp::for_invocation`).

mod binary;
pub mod devices;
mod environment;
mod facts;
pub mod flags;
mod host;
mod listing;
mod mutants;
pub mod options;
mod piped;
mod progress;
mod results_file;
pub mod sass;
pub mod server;
pub mod summary;
mod tiers;
pub mod timeouts;
pub mod worker;

use std::collections::HashMap;
use std::fs::File;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, OnceLock};

use gridcheck_gpu::DeviceInfo;
use gridcheck_report::runs::RUN_ID_VAR;
use gridcheck_report::{Facts, ModelSummary, RunStamp, Status, TrialId, TrialRecord};
use gridcheck_spec::{Seeds, Spec};
use gridcheck_toolchain::{Nvcc, Toolchain};
use libtest_mimic::{Arguments, Completion, Failed, Trial};

pub use options::{Options, Tier};

type Shared<T> = Arc<OnceLock<Result<T, String>>>;

/// Everything trials share: the spec, the tools found, caches of model and
/// hardware results (a test listed by two rules runs once), and the sink.
pub struct Ctx {
    pub opts: Options,
    pub spec: Spec,
    /// The toolchain (`--toolchain`'s, else the default nvcc's), found when
    /// a tier needs it: the static and sass tiers compile with its nvcc, and
    /// the GPU records name its version ([`Ctx::toolkit`]).
    pub toolchain: Result<Toolchain, String>,
    /// The first device of the GPU tier (the one without `--devices`), or
    /// why the tier cannot run here.
    pub device: Result<DeviceInfo, String>,
    /// The GPU tier's devices, one worker process at a time on each.
    pub devices: Option<devices::Pool>,
    /// The checkout's commit, which every record carries.
    pub commit: Option<String>,
    /// The run's id and start time, which every record written carries.
    pub run: RunStamp,
    models: Mutex<HashMap<String, Shared<ModelSummary>>>,
    hardware: Mutex<HashMap<String, Shared<worker::WorkerResult>>>,
    sass: Mutex<HashMap<String, Shared<sass::Outcome>>>,
    /// Trials ignored because their tier cannot run here, with the reason.
    skipped: Mutex<Vec<TrialRecord>>,
    /// The known facts (`conformance/facts/`), every one: where each
    /// applies is decided trial by trial.
    pub facts: Facts,
    /// Trials a previous run finished (`--resume`).
    done: HashMap<TrialId, TrialRecord>,
    records: Mutex<Vec<TrialRecord>>,
    sink: Mutex<Option<File>>,
    /// The first write to the results file that failed: the run fails.
    write_error: Mutex<Option<String>>,
    progress: OnceLock<progress::Progress>,
    /// `--mutants`: the mutants' records and their file.
    mutants: mutants::Sink,
    /// The staying GPU workers, one per device (`server.rs`).
    servers: server::Servers,
}

fn cached<T>(
    map: &Mutex<HashMap<String, Shared<T>>>,
    key: &str,
    make: impl FnOnce() -> Result<T, String>,
) -> Arc<OnceLock<Result<T, String>>> {
    let cell = {
        let mut m = map.lock().unwrap_or_else(|p| p.into_inner());
        m.entry(key.to_string()).or_default().clone()
    };
    cell.get_or_init(make);
    cell
}

impl Ctx {
    /// Loads the spec and finds the tools. Spec errors are returned, located.
    pub fn new(mut opts: Options) -> Result<Ctx, String> {
        let seeds = match &opts.seeds {
            Some(dir) => Some(
                Seeds::load(dir)
                    .map_err(|e| format!("cannot read the seeds in {}: {e}", dir.display()))?,
            ),
            None => None,
        };
        let spec =
            gridcheck_spec::load_dir(&opts.spec, seeds.as_ref()).map_err(|e| e.to_string())?;
        let (device, devices) = if opts.runs(Tier::Gpu) {
            match devices::Pool::new(opts.devices.as_ref())? {
                Ok(pool) => (Ok(pool.selected()[0].clone()), Some(pool)),
                Err(reason) => (Err(reason), None),
            }
        } else {
            (Err("the gpu tier is off".into()), None)
        };
        opts.tune(device.as_ref().ok())?;
        let toolchain = if opts.runs(Tier::Static) || opts.runs(Tier::Sass) || device.is_ok() {
            match &opts.toolchain {
                Some(name) => gridcheck_toolchain::find_toolchain(&opts.root, name),
                None => gridcheck_toolchain::find_nvcc(&opts.root).map(Toolchain::of_nvcc),
            }
        } else {
            Err("no tier that needs nvcc is on".into())
        };
        // Every fact, whatever this machine can run; they name trials of
        // the checkout's own spec.
        let own_spec = std::fs::canonicalize(&opts.spec).ok()
            == std::fs::canonicalize(opts.root.join("spec")).ok();
        let facts = facts::load_checked(
            &opts.root.join(gridcheck_report::FACTS_DIR),
            &opts.root,
            own_spec.then_some(&spec),
        )?;
        let (done, resumed_run) = if opts.resume {
            results_file::previous_results(&opts.results, &spec)?
        } else {
            (HashMap::new(), None)
        };
        let run = RunStamp::for_invocation(resumed_run, std::env::var(RUN_ID_VAR).ok());
        let sink = results_file::open_sink(&opts.results)?;
        let mutants = if opts.mutants {
            mutants::Sink::open(&opts.mutant_results)?
        } else {
            mutants::Sink::default()
        };
        let commit = gridcheck_toolchain::run_commit(&opts.root);
        Ok(Ctx {
            opts,
            spec,
            toolchain,
            device,
            devices,
            commit,
            run,
            models: Mutex::default(),
            hardware: Mutex::default(),
            sass: Mutex::default(),
            done,
            facts,
            skipped: Mutex::default(),
            records: Mutex::default(),
            sink: Mutex::new(Some(sink)),
            write_error: Mutex::default(),
            progress: OnceLock::new(),
            mutants,
            servers: server::Servers::default(),
        })
    }

    /// The toolchain's nvcc, or why there is none.
    pub fn nvcc(&self) -> Result<&Nvcc, &String> {
        self.toolchain.as_ref().map(|t| &t.nvcc)
    }

    /// nvcc's version for the GPU records: the device runtime the facts
    /// judge by (the kernels link the `libcudadevrt` of the toolkit that
    /// built them, the same release as the harness's nvcc on a bundle's
    /// GPU machine).
    pub fn toolkit(&self) -> Option<String> {
        self.nvcc().ok().map(|n| n.version.clone())
    }

    /// The model's outcome for a litmus test, computed once, in a worker
    /// process with a timeout.
    pub(crate) fn model(&self, test: &str) -> Result<ModelSummary, String> {
        let cell = cached(&self.models, test, || {
            match worker::run_isolated(
                &self.opts,
                worker::Job::Model,
                test,
                &devices::Place::default(),
            ) {
                worker::WorkerResult::Model(m) => Ok(m),
                worker::WorkerResult::Timeout { seconds, .. } => Err(format!(
                    "the model did not finish in {seconds} s (--model-timeout)"
                )),
                worker::WorkerResult::Error { message } => Err(message),
                worker::WorkerResult::Crash { exit, stderr_tail } => {
                    Err(format!("the model's process died ({exit}): {stderr_tail}"))
                }
                other => Err(format!("unexpected worker result {other:?}")),
            }
        });
        cell.get()
            .cloned()
            .unwrap_or_else(|| Err("no result".into()))
    }

    /// The GPU result of a test, run once in a worker process (a host test's
    /// program is its own process) on the test's device, one at a time on
    /// each device.
    fn hardware(&self, test: &str) -> worker::WorkerResult {
        let cell = cached(&self.hardware, test, || {
            let slot = self.devices.as_ref().map(|p| p.slot(test));
            let place = match (&self.devices, slot) {
                (Some(p), Some(s)) => p.place(s),
                _ => devices::Place::default(),
            };
            let _one_at_a_time = self.devices.as_ref().zip(slot).map(|(p, s)| p.lock(s));
            let spec_test = self.spec.test(test);
            let timeout =
                timeouts::trial_timeout(self.opts.timeout, spec_test.and_then(|t| t.gpu_timeout));
            let opts = Options {
                timeout,
                ..self.opts.clone()
            };
            let result = match spec_test.map(|t| (t, &t.body)) {
                Some((t, gridcheck_spec::TestBody::Host(h))) => {
                    let choice = self
                        .device_for(test)
                        .map_err(String::clone)
                        .and_then(|d| binary::choose(&opts, d, t));
                    match choice {
                        Ok(c) => host::run_host_program(&opts, &c.built.file, h, &place),
                        Err(reason) => worker::WorkerResult::NotRun { reason },
                    }
                }
                Some((t, _)) if !opts.fresh_context && server::serves(t) => {
                    self.servers.run(&opts, slot.unwrap_or(0), test, &place)
                }
                _ => worker::run_isolated(&opts, worker::Job::Gpu, test, &place),
            };
            let litmus = matches!(
                spec_test.map(|t| &t.body),
                Some(gridcheck_spec::TestBody::Litmus(_))
            );
            Ok(match result {
                worker::WorkerResult::Timeout { seconds, .. }
                    if litmus
                        && timeouts::should_classify(
                            &opts,
                            facts::known_hang(&self.facts, test),
                        ) =>
                {
                    timeouts::classify(&opts, test, &place, seconds)
                }
                other => other,
            })
        });
        match cell.get() {
            Some(Ok(r)) => r.clone(),
            _ => worker::WorkerResult::Error {
                message: "no result".into(),
            },
        }
    }

    /// Stores a finished trial: in memory for the summary, and as one JSON
    /// line, written at once so a crash loses nothing already finished. The
    /// first write that fails is reported and ends the writing; the run then
    /// fails ([`Ctx::write_error`]).
    pub fn record(&self, mut r: TrialRecord) {
        self.run.stamp(&mut r);
        let mut sink = self.sink.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(f) = sink.as_mut()
            && let Err(e) = gridcheck_report::append_record(f, &r)
        {
            let msg = format!(
                "cannot write to {}: {e} (trial {} and later ones are not recorded)",
                self.opts.results.display(),
                r.trial
            );
            eprintln!("error: {msg}");
            *sink = None;
            *self.write_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(msg);
        }
        drop(sink);
        self.records
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(r);
        self.tick();
    }

    fn tick(&self) {
        if let Some(line) = self.progress.get().and_then(progress::Progress::tick) {
            eprintln!("{line}");
        }
    }

    /// Notes a trial ignored because its tier cannot run here.
    pub(crate) fn skipped(&self, r: TrialRecord) {
        self.skipped
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(r);
    }

    /// Records the ignored trials that were not run anyway (`--include-ignored`
    /// runs them), limited to those libtest's filters selected.
    fn record_skipped(&self, selected: &dyn Fn(&str) -> bool) {
        let ran: std::collections::HashSet<TrialId> = self
            .records
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|r| r.trial.clone())
            .collect();
        let skipped = std::mem::take(&mut *self.skipped.lock().unwrap_or_else(|p| p.into_inner()));
        for r in skipped {
            if !ran.contains(&r.trial) && selected(&r.trial.to_string()) {
                self.record(r);
            }
        }
    }

    /// A trial a previous run finished, kept in this run's summary without
    /// being written again.
    pub(crate) fn resumed(&self, trial: &TrialId) -> Option<TrialRecord> {
        let r = self.done.get(trial)?.clone();
        self.records
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(r.clone());
        self.tick();
        Some(r)
    }

    /// Why the results file is incomplete, if a write failed.
    pub fn write_error(&self) -> Option<String> {
        self.write_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn records(&self) -> Vec<TrialRecord> {
        let mut v = self
            .records
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        v.sort_by(|a, b| a.trial.cmp(&b.trial));
        v
    }

    /// The device that runs a test's GPU trials, or why none can.
    pub fn device_for(&self, test: &str) -> Result<&DeviceInfo, &String> {
        match (&self.devices, &self.device) {
            (Some(pool), Ok(_)) => Ok(pool.device(test)),
            (_, d) => d.as_ref(),
        }
    }

    /// The `sm_XX` GPU trials are named for: the device's, or the build target.
    pub fn sm(&self) -> String {
        match &self.device {
            Ok(d) => d.sm.clone(),
            Err(_) => "sm_90".into(),
        }
    }
}

/// Turns a status into libtest's terms: failures fail, statuses that did not
/// run are ignored with their reason, the rest pass.
pub(crate) fn conclude(status: Status, message: &str) -> Result<Completion, Failed> {
    match status {
        Status::Pass
        | Status::QualityWarning
        | Status::Xfail
        | Status::Known
        | Status::KnownHang
        | Status::Changed => Ok(Completion::Completed),
        Status::NotSupported | Status::NotRun => Ok(Completion::ignored_with(message)),
        Status::Fail
        | Status::OracleConflict
        | Status::Timeout
        | Status::Crash
        | Status::Unmodeled => Err(message.into()),
    }
}

/// Builds every trial of the enabled tiers.
pub fn trials(ctx: &Arc<Ctx>) -> Vec<Trial> {
    if ctx.opts.mutants {
        return mutants::trials(ctx);
    }
    let mut out = Vec::new();
    if ctx.opts.runs(Tier::Sass) {
        out.extend(sass::trials(ctx));
    }
    for (rule, test) in ctx.spec.pairs() {
        for tier in Tier::ALL {
            if ctx.opts.runs(tier)
                && let Some(t) = tiers::trial(ctx, tier, rule, test)
            {
                out.push(t);
            }
        }
    }
    out
}

/// The whole harness, from a command line. Returns the process exit code.
pub fn main_with(argv: Vec<String>, default_root: PathBuf) -> ExitCode {
    if argv
        .iter()
        .skip(1)
        .any(|a| options::HELP_FLAGS.contains(&a.as_str()))
    {
        options::print_help(argv.first().map(String::as_str).unwrap_or("conformance"));
    }
    let opts = match Options::parse(argv, default_root) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    if opts.serve {
        return server::serve(&opts);
    }
    if let Some((job, test)) = opts.worker.clone() {
        let result = match job {
            worker::Job::Mutant => mutants::gpu_here(&opts, &test),
            worker::Job::MutantModel => mutants::judge_here(&opts, &test),
            _ => worker::work(&opts, job, &test),
        };
        return worker::report(&result);
    }
    let args = Arguments::from_iter(opts.libtest.clone());
    let ctx = match Ctx::new(opts) {
        Ok(c) => Arc::new(c),
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    // A tier asked for (`--tier`, GRIDCHECK_REQUIRE_TIERS) that cannot run
    // here is an error, before any trial runs or is recorded.
    if let Some(e) = tiers::required_but_unavailable(&ctx).filter(|_| !args.list) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let mut all = trials(&ctx);
    if let Some(shard) = ctx.opts.shard {
        all = take_shard(all, shard);
    }
    if args.list {
        return listing::list(&args, &all);
    }
    let names: Vec<(String, bool)> = all
        .iter()
        .map(|t| (t.name().to_string(), args.is_filtered_out(t)))
        .collect();
    if let Some(pool) = &ctx.devices {
        deal_gpu_tests(&ctx, pool, &names, &args);
    }
    start_progress(&ctx, &all, &args);
    let conclusion = libtest_mimic::run(&args, all);
    if let Err(code) = finish(&ctx, &args, &names) {
        return code;
    }
    conclusion.exit_code()
}

/// Shard `i` of `n` (from 1): every `n`th trial in name order.
fn take_shard(mut all: Vec<Trial>, (i, n): (usize, usize)) -> Vec<Trial> {
    all.sort_by(|a, b| a.name().cmp(b.name()));
    all.into_iter()
        .enumerate()
        .filter(|(k, _)| k % n == i - 1)
        .map(|(_, t)| t)
        .collect()
}

/// The GPU tests this run selects, dealt out over the devices (and, with
/// `--devices`, each device's share said).
fn deal_gpu_tests(ctx: &Ctx, pool: &devices::Pool, names: &[(String, bool)], args: &Arguments) {
    let tests: Vec<String> = names
        .iter()
        .filter(|(_, out)| !out)
        .filter_map(|(n, _)| n.parse::<TrialId>().ok())
        .filter(|t| t.tier == Tier::Gpu)
        .map(|t| t.test)
        .collect();
    pool.assign(&tests);
    if ctx.opts.devices.is_some() && !args.list {
        for (slot, d) in pool.selected().iter().enumerate() {
            let n = tests.iter().filter(|t| pool.slot(t) == slot).count();
            eprintln!(
                "GPU tier on device {} ({}, {}, {}): {n} test runs",
                d.ordinal,
                d.name,
                d.pci_bus_id.as_deref().unwrap_or("no PCI bus id"),
                d.uuid.as_deref().unwrap_or("no UUID")
            );
        }
    }
}

/// The progress line on a terminal's standard error (or as `--progress`
/// says), counting the trials to run.
fn start_progress(ctx: &Ctx, all: &[Trial], args: &Arguments) {
    let show_progress = ctx.opts.progress.unwrap_or_else(|| {
        use std::io::IsTerminal;
        std::io::stderr().is_terminal() && !std::io::stdout().is_terminal()
    });
    if show_progress && !args.list {
        let total = all
            .iter()
            .filter(|t| !args.is_filtered_out(t) && !args.is_ignored(t))
            .count();
        let _ = ctx.progress.set(progress::Progress::new(total));
    }
}

/// After the trials: the mutants' score or the summary, the JUnit file,
/// and the records' completeness; the exit code that overrides the
/// trials', if any.
fn finish(ctx: &Ctx, args: &Arguments, names: &[(String, bool)]) -> Result<(), ExitCode> {
    let mut score_ok = true;
    if !args.list {
        if ctx.opts.mutants {
            score_ok = mutants::print_summary(ctx);
        } else {
            ctx.record_skipped(&|trial| names.iter().any(|(n, out)| n == trial && !out));
            summary::print(ctx);
        }
        if let Some(path) = &ctx.opts.junit
            && let Err(e) = std::fs::write(path, gridcheck_report::junit(&ctx.records()))
        {
            eprintln!("cannot write {}: {e}", path.display());
            return Err(ExitCode::from(2));
        }
    }
    if let Some(e) = ctx
        .mutants
        .error
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
    {
        eprintln!("error: the mutants' records are incomplete: {e}");
        return Err(ExitCode::from(2));
    }
    if let Some(e) = ctx.write_error() {
        eprintln!("error: the results file is incomplete: {e}");
        return Err(ExitCode::from(2));
    }
    if !score_ok {
        return Err(ExitCode::FAILURE);
    }
    Ok(())
}
