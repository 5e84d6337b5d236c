//! A failing case's controls: the same case run with the program's other
//! builds (`-nopdl`, `-ptx90`, `-sass80`, `-sass80-nopdl`, `-<patch>`), in
//! rounds beside the case's own build.
//!
//! Round 1 runs each control once, at the seed the case failed at. Each
//! later round runs the case's own build again and every control still
//! open (not failed, not `invalid`, not `not-run`), all at the round's new
//! seed, so that a control that is right every time is set against how
//! often the case's build failed beside it: a failure that shows in one
//! run of three is not removed by a control that passed once.
//!
//! A control removes the failure (`pass`) when every run of it was right
//! and, were it as likely to fail as the case's build was beside it (the
//! build's failed runs over its runs, the first included), being right in
//! as many runs would have had probability at most [`SEPARATED`]. Right
//! every time but above that: `unseparated`. The rounds end at the case's
//! `control_rounds`, and early once none is open, or (from round 3 on)
//! once every open control is separated.

use std::path::{Path, PathBuf};

use gridcheck_report::{LibraryControl, LibraryRun};

use super::cases::Case;
use super::contract as library_contract;
use super::exec::{self, Ran};

/// The probability below which a control that was always right is said
/// to remove a failure (see the module's text).
pub const SEPARATED: f64 = 0.05;

/// What the controls need of the failing case.
pub struct Failing<'a> {
    /// The trial's name; a control's hold is `<name>~<variant>`.
    pub name: &'a str,
    pub root: &'a Path,
    pub release: &'a str,
    pub target: &'a str,
    pub program: &'a str,
    pub algorithm: &'a str,
    pub case: &'a Case,
    /// The seed of the case's run; round `r` (from 1) runs at `seed + r - 1`.
    pub seed: u64,
    /// The build the case ran, and its variant when not the shipped one
    /// (not its own control).
    pub exe: &'a Path,
    pub ran: Option<&'a str>,
    /// The algorithm's waits, as the catalog lists them (a patch's message).
    pub waits: &'a [String],
}

/// The controls and the case's build's runs beside them (none: the case
/// passed).
#[derive(Default)]
pub struct Controls {
    pub controls: Vec<LibraryControl>,
    pub beside: Vec<LibraryRun>,
}

/// One control while the rounds go on.
struct Open {
    variant: String,
    exe: PathBuf,
    runs: Vec<LibraryRun>,
    /// Why it ran no more: not built, or not run (its reason).
    not_run: Option<String>,
}

/// Runs the controls of `f` in rounds; `held` runs a binary with the
/// device held (a hold's name, the binary, its arguments).
pub fn run(f: &Failing, held: &dyn Fn(&str, &Path, &[String]) -> Ran) -> Controls {
    let mut open: Vec<Open> = exec::variants(f.root, f.release, f.target, f.program)
        .into_iter()
        .filter(|v| Some(v.as_str()) != f.ran)
        .map(|variant| {
            let exe = library_contract::binary(f.root, f.release, f.target, f.program, &variant);
            let not_run = (!exe.is_file()).then(|| format!("{} is not built", exe.display()));
            Open {
                variant,
                exe,
                runs: Vec::new(),
                not_run,
            }
        })
        .collect();
    let reps = f.case.reps;
    let mut beside = Vec::new();
    let rounds = f.case.control_rounds.max(1);
    for round in 1..=rounds {
        let args = exec::args(f.algorithm, f.case, f.seed + round - 1);
        if round > 1 {
            // From round 3 on, with the build run again beside them at
            // least once, the rounds end when they can show no more.
            let settled = |c: &Open| !c.is_open(reps) || c.separated(reps, &beside);
            if !open.iter().any(|c| c.is_open(reps)) || round > 2 && open.iter().all(settled) {
                break;
            }
            // The case's build could not run again: nothing to compare with.
            let Ran::Run(again, _) = held(f.name, f.exe, &args) else {
                break;
            };
            beside.push(again);
        }
        for c in open.iter_mut().filter(|c| c.is_open(reps)) {
            match held(&format!("{}~{}", f.name, c.variant), &c.exe, &args) {
                Ran::NotRun(reason) if c.runs.is_empty() => c.not_run = Some(reason),
                ran => c.runs.push(run_of(ran)),
            }
        }
    }
    let controls = open
        .into_iter()
        .map(|c| c.judge(f, &beside))
        .inspect(|c| {
            if c.removes_failure() {
                eprintln!("{}: {}", f.name, c.message);
            }
        })
        .collect();
    Controls { controls, beside }
}

/// A run's counts. A control that ran before and now says it cannot run
/// gets a run that failed with that reason.
fn run_of(ran: Ran) -> LibraryRun {
    match ran {
        Ran::Run(run, _) => run,
        Ran::NotRun(reason) => LibraryRun {
            problem: Some(format!("not run: {reason}")),
            ..LibraryRun::default()
        },
    }
}

/// The case's own build beside the controls: failed runs of all its runs,
/// the first (the case's own run, which failed) included.
fn build_failed(reps: u64, beside: &[LibraryRun]) -> (usize, usize) {
    let failed = beside.iter().filter(|r| !r.passed(reps)).count();
    (1 + failed, 1 + beside.len())
}

impl Open {
    /// Edges measured in a `-nopdl` build's runs: it still launches with PDL.
    fn still_pdl(&self) -> Option<u64> {
        self.runs
            .iter()
            .filter_map(|r| r.pdl_edges)
            .find(|&n| gridcheck_library::is_nopdl(&self.variant) && n > 0)
    }

    fn is_open(&self, reps: u64) -> bool {
        self.not_run.is_none()
            && self.still_pdl().is_none()
            && self.runs.iter().all(|r| r.passed(reps))
    }

    /// The probability of its runs all right, were it as likely to fail
    /// as the case's build was beside it.
    fn chance(&self, reps: u64, beside: &[LibraryRun]) -> f64 {
        let (failed, of) = build_failed(reps, beside);
        (1.0 - failed as f64 / of as f64).powi(self.runs.len() as i32)
    }

    fn separated(&self, reps: u64, beside: &[LibraryRun]) -> bool {
        self.chance(reps, beside) <= SEPARATED
    }

    /// Its outcome: `not-run`, `invalid` (a `-nopdl` build measured
    /// launching with PDL), `fail`, `pass` (removes the failure) or
    /// `unseparated`.
    fn judge(mut self, f: &Failing, beside: &[LibraryRun]) -> LibraryControl {
        let reps = f.case.reps;
        let v = self.variant.clone();
        let (outcome, message) = if let Some(why) = self.not_run.take() {
            ("not-run", why)
        } else if let Some(n) = self.still_pdl() {
            (
                "invalid",
                format!(
                    "`{v}` still launches with PDL ({n} programmatic edges in one captured call): no control"
                ),
            )
        } else if let Some((k, bad)) = self
            .runs
            .iter()
            .enumerate()
            .find_map(|(k, r)| r.failure(reps).map(|b| (k, b)))
        {
            let when = if k == 0 {
                String::new()
            } else {
                format!(" (in round {}, right in the {k} before)", k + 1)
            };
            ("fail", format!("`{v}` still fails: {bad}{when}"))
        } else {
            let (failed, of) = build_failed(reps, beside);
            let m = self.runs.len();
            let calls: u64 = self.runs.iter().map(|r| r.calls).sum();
            let right = if m == 1 {
                format!("right in {calls} calls")
            } else {
                format!(
                    "right in all {m} runs ({calls} calls) while the case's build failed {failed} of {of} beside it"
                )
            };
            if self.separated(reps, beside) {
                (
                    "pass",
                    format!("`{v}` removes the failure: {}, {right}", what(f, &v)),
                )
            } else {
                (
                    "unseparated",
                    format!(
                        "`{v}` ({}) was {right}: were it as likely to fail, that would have probability {:.2}; not separated",
                        what(f, &v),
                        self.chance(reps, beside)
                    ),
                )
            }
        };
        let mut runs = self.runs.into_iter();
        LibraryControl {
            variant: v,
            outcome: outcome.into(),
            message,
            run: runs.next(),
            rounds: runs.collect(),
        }
    }
}

/// What a variant changes, in words.
fn what(f: &Failing, variant: &str) -> String {
    match variant {
        "-nopdl" => "PDL off (-DCCCL_DISABLE_PDL)".to_string(),
        "-ptx90" => "compute_90 PTX instead of compute_80".to_string(),
        "-sass80" => {
            "the compute_80 code compiled ahead to sm_90 SASS by nvcc (no JIT)".to_string()
        }
        "-sass80-nopdl" => {
            "PDL off in the compute_80 code compiled ahead to sm_90 SASS".to_string()
        }
        patch => format!(
            "the wait moved to the kernel's first line (patch `{}`; the algorithm's waits: {})",
            patch.trim_start_matches('-'),
            if f.waits.is_empty() {
                "none listed".to_string()
            } else {
                f.waits.join(", ")
            }
        ),
    }
}

/// The controls in a failure's message.
pub fn text(controls: &[LibraryControl]) -> String {
    if controls.is_empty() {
        return "; no control built".into();
    }
    let parts: Vec<String> = controls
        .iter()
        .map(|c| format!("{} {} ({})", c.variant, c.outcome, c.message))
        .collect();
    format!("; controls: {}", parts.join("; "))
}
