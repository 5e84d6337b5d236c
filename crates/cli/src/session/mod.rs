//! A GPU session as data: `gridcheck session FILE [STEP [ARG...]] [-- STEP
//! [ARG...]]...` runs the named steps of a TOML file (`lab/sessions/*.toml`),
//! each under its time limit, in a work folder that keeps its state, so
//! that a step that finished is skipped when the session is run again (a
//! warm machine, or a call cut short); what each step made is packed into
//! `$OUT`, the only place a GPU machine gives files back from.
//!
//! The file (`[[step]]` tables; an unknown key is an error naming it):
//!
//! ```toml
//! about = "what the session is for"
//! work = "target/sessions/NAME"    # the work folder, in the checkout
//! default = ["suite a", "watch"]   # the steps run when none is named
//! limit_s = 540                    # no step starts that would end past it
//! [[step]]
//! name = "suite"                   # [A-Za-z0-9_-]
//! about = "..."
//! usage = "NAME [HARNESS ARGS]"    # what its arguments are
//! min_args = 1
//! limit_s = 150                    # the whole step's time limit
//! env = { OUT = "{step}" }         # for every command of the step
//! tail = 12                        # lines of each command's output shown
//! pack = ["{step}"]                # into $OUT/<key>.tar.xz, then removed
//! run = [
//!   ["bash", "conformance/gpu-run.sh", "--tier", "gpu", "{rest}"],
//!   { argv = ["{gridcheck}", "report", "summary", "{each}/results.jsonl"],
//!     each = ["a", "b"], stdout = "{out}/summary.json", stop_on_error = true },
//!   { argv = ["{gridcheck}", "campaign", "run", "{1}", "--part"],
//!     unfinished_on_exit = 3 },   # that exit code: the step runs again
//! ]
//! ```
//!
//! A word of a command may hold placeholders: `{out}` (the work folder),
//! `{step}` (the step's own folder, `{out}/<key>`), `{key}` (the step's name
//! and arguments as one file name), `{gridcheck}` (this program), `{1}`,
//! `{2}`... (the step's arguments), `{each}` (the command's `each` value),
//! `{slug}` and `{arch}` (the GPU's, `gridcheck info`); a word that is
//! exactly `{args}` or `{rest}` stands for every argument or every one after
//! the first. An unknown placeholder, or an argument the step was not given,
//! is an error naming the file, the line, the step and the word.
//!
//! `load.rs` reads and checks a file; `plan.rs` expands the steps asked
//! for into commands; `exec.rs` runs them, keeps the state and packs.

use std::path::Path;
use std::process::ExitCode;

mod exec;
mod load;
mod plan;

pub use load::{Session, Step, load};
pub use plan::{Invocation, PlannedCommand, PlannedStep, Values, invocations, plan_step};

pub const HELP: &str = "gridcheck session FILE [--dry-run] [--list] [--again] [--work DIR] [STEP [ARG...]] [-- STEP [ARG...]]...
Runs the named steps of a session file (lab/sessions/*.toml), in order, each under its
time limit (`limit_s`), in the file's work folder (`work`, or --work DIR), where a file
keeps each step's state: a step that finished (whatever its commands' exit codes) is
skipped when the session runs again, unless --again; one killed at its limit, or one
whose command exited with its `unfinished_on_exit` code (a part with work left), runs again.
No step named: the file's `default` steps, or every step. A session's `limit_s` keeps a
step from starting when its own limit would end past it (the next call runs it).
Each command's output goes to the step's log; its last lines are shown. What a step names
in `pack` is packed into $OUT/<step>.tar.xz; at the end whatever else the work folder holds
is packed into $OUT/session.tar.xz, and the state into $OUT/session.json (a GPU machine
gives back at most 8 files under $OUT, each at most 16 MiB, at most 2 folders deep: the
session says which limit it passed). Without $OUT, the packs go to <work>/packed/.
--dry-run: the commands each step would run, placeholders filled, nothing run.
--list: the steps of the file.
Exit code: 0 when every step asked for finished, 1 when one did not (see above),
2 on a bad file or arguments.";

/// What the command line asks for.
#[derive(Debug, Default)]
struct Args {
    file: Option<String>,
    dry_run: bool,
    list: bool,
    again: bool,
    work: Option<String>,
    steps: Vec<String>,
}

fn parse_args(argv: &[String]) -> Result<Args, String> {
    let mut a = Args::default();
    let mut it = argv.iter();
    while let Some(x) = it.next() {
        if a.file.is_some() && !a.steps.is_empty() {
            // After the first step's name, everything is the steps'.
            a.steps.push(x.clone());
            continue;
        }
        match x.as_str() {
            "--dry-run" => a.dry_run = true,
            "--list" => a.list = true,
            "--again" => a.again = true,
            "--work" => a.work = Some(it.next().ok_or("--work needs a folder")?.clone()),
            "--help" | "-h" => return Err(String::new()),
            f if f.starts_with('-') && f != "--" => return Err(format!("unknown option `{f}`")),
            f if a.file.is_none() => a.file = Some(f.to_string()),
            f => a.steps.push(f.to_string()),
        }
    }
    Ok(a)
}

/// `gridcheck session ARGS`.
pub fn main(argv: &[String], root: &Path) -> ExitCode {
    let args = match parse_args(argv) {
        Ok(a) => a,
        Err(e) if e.is_empty() => {
            println!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("gridcheck session: {e}\n{HELP}");
            return ExitCode::from(2);
        }
    };
    let Some(file) = &args.file else {
        eprintln!("gridcheck session: name a session file\n{HELP}");
        return ExitCode::from(2);
    };
    let path = root.join(file);
    let session = match load(&path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("gridcheck session: {e}");
            return ExitCode::from(2);
        }
    };
    if args.list {
        for s in &session.steps {
            let usage = s.usage.as_deref().unwrap_or("");
            println!("{} {usage}\n    {}", s.name, s.about.trim());
        }
        return ExitCode::SUCCESS;
    }
    let work = root.join(args.work.as_deref().unwrap_or(&session.work));
    let result = invocations(&session, &args.steps).and_then(|inv| {
        let values = Values::new(root, &work, args.dry_run);
        let planned = inv
            .iter()
            .map(|i| plan_step(&session, i, &values))
            .collect::<Result<Vec<_>, String>>()?;
        if args.dry_run {
            exec::print_plan(&session, &planned);
            return Ok(true);
        }
        exec::run(&session, &planned, &work, root, args.again)
    });
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("gridcheck session: {}: {e}", path.display());
            ExitCode::from(2)
        }
    }
}
