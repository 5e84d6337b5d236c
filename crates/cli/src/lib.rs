//! The `gridcheck` command: one front door to the project's programs, as
//! cargo is for Rust. It holds no logic of its own beyond choosing the
//! library that does the work:
//!
//! - `run`: the conformance harness (`conformance::main_with`, what the
//!   `conformance` binary runs), its workers included (`gridcheck run
//!   --worker`);
//! - `campaign`: random programs at scale (`gridcheck_campaign::main`), its
//!   batch workers included (`gridcheck campaign worker`);
//! - `report`: what the GPU machine's scripts read of the records, as JSON
//!   (the harness's `report` subcommands);
//! - `check`: the check of shipped machine code, when built in;
//! - `session`: a GPU session as data (`session/`: a TOML file of named
//!   steps, each under a time limit, resumable, outputs packed);
//! - `info`: what the scripts used to compute (`info.rs`: the GPU's slug and
//!   architecture, a toolchain's kernels folder, nvcc's commands);
//! - `help [COMMAND]`.
//!
//! A command that starts itself as a worker says so once
//! (`gridcheck_child::set_own_args`), so that its workers are
//! `gridcheck <command> ...` too.

use std::path::Path;
use std::process::ExitCode;

mod info;
pub mod session;

/// One subcommand: its name, a line for `gridcheck help`, and its help.
struct Command {
    name: &'static str,
    about: &'static str,
    help: &'static str,
}

/// Every subcommand, in the order `gridcheck help` lists them.
const COMMANDS: [Command; 7] = [
    Command {
        name: "run",
        about: "the conformance harness: model, static, gpu and sass trials",
        help: "gridcheck run [OPTIONS] [FILTER] [-- LIBTEST ARGS]\n\
               The conformance harness (`cargo xtask conformance` builds the kernels, then runs\n\
               this). `gridcheck run --help` lists its options; `gridcheck run --list` its trials.",
    },
    Command {
        name: "campaign",
        about: "random and enumerated litmus programs at scale on one GPU",
        help: "gridcheck campaign DIR [OPTIONS] | run | leads | status | plain | merge ...\n\
               `gridcheck campaign --help` lists its phases and options.",
    },
    Command {
        name: "check",
        about: "the check of shipped machine code (cubins, libraries)",
        help: "gridcheck check ...\nThe machine-code check of shipped programs.",
    },
    Command {
        name: "report",
        about: "what the records say, as JSON (default) or text",
        help: "gridcheck report summary RESULTS [--all-runs] [--every-trial] [--format json|text]\n\
               gridcheck report mutants MUTANTS... [--root DIR] [--format json|text]\n\
               gridcheck report rates RATES [--format json|text]\n\
               gridcheck report tuning MUTANTS-TUNE --search FILE --base FILE",
    },
    Command {
        name: "session",
        about: "a GPU session as data: named steps, time limits, resumable, packed into $OUT",
        help: session::HELP,
    },
    Command {
        name: "info",
        about: "the GPU's slug and architecture, kernels folders, nvcc's commands",
        help: info::HELP,
    },
    Command {
        name: "help",
        about: "this list, or a command's help",
        help: "gridcheck help [COMMAND]",
    },
];

/// `gridcheck check`: the machine-code check of shipped programs
/// (`gridcheck_check::cli`, the same command line as `cargo xtask check`).
/// `Option` so that a build without it would say so rather than fail.
const CHECK: Option<fn(&[String], &Path) -> ExitCode> =
    Some(
        |args, root| match gridcheck_check::cli::run(args, root, None) {
            Ok(code) => ExitCode::from(code),
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(2)
            }
        },
    );

/// `gridcheck ARGS` (without the program's name), for the checkout `root`.
pub fn main(argv: &[String], root: &Path) -> ExitCode {
    let (cmd, rest) = match argv.split_first() {
        Some((c, rest)) => (c.as_str(), rest),
        None => return help(&[]),
    };
    match cmd {
        "run" => {
            gridcheck_child::set_own_args(&["run"]);
            let argv = std::iter::once("gridcheck run".to_string())
                .chain(rest.iter().cloned())
                .collect();
            conformance::main_with(argv, root.to_path_buf())
        }
        "campaign" => {
            gridcheck_child::set_own_args(&["campaign"]);
            gridcheck_campaign::main(rest, root)
        }
        "report" => {
            let argv = ["gridcheck".to_string(), "report".to_string()]
                .into_iter()
                .chain(rest.iter().cloned())
                .collect();
            conformance::main_with(argv, root.to_path_buf())
        }
        "check" => match CHECK {
            Some(check) => check(rest, root),
            None => {
                eprintln!(
                    "gridcheck check: not built in this binary (the machine-code check of \
                     shipped programs is not part of it yet)"
                );
                ExitCode::from(2)
            }
        },
        "session" => session::main(rest, root),
        "info" => info::main(rest, root),
        "help" | "--help" | "-h" => help(rest),
        other => {
            eprintln!("gridcheck: no command `{other}`\n");
            eprint!("{}", listing());
            ExitCode::from(2)
        }
    }
}

/// `gridcheck help [COMMAND]`.
fn help(args: &[String]) -> ExitCode {
    match args.first() {
        None => {
            print!("{}", listing());
            ExitCode::SUCCESS
        }
        Some(name) => match COMMANDS.iter().find(|c| c.name == name.as_str()) {
            Some(c) => {
                println!("gridcheck {}: {}\n\n{}", c.name, c.about, c.help);
                ExitCode::SUCCESS
            }
            None => {
                eprintln!("gridcheck help: no command `{name}`\n");
                eprint!("{}", listing());
                ExitCode::from(2)
            }
        },
    }
}

/// The usage line and a line a command.
fn listing() -> String {
    let mut s = String::from("usage: gridcheck COMMAND [ARGS]\n\ncommands:\n");
    for c in &COMMANDS {
        s.push_str(&format!("  {:<9} {}\n", c.name, c.about));
    }
    s.push_str("\n`gridcheck help COMMAND` says more of one.\n");
    s
}
