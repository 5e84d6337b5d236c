//! The harness's flags as a table ([`FLAGS`]): each flag's spelling, its
//! value, its help line and what it sets. One driver ([`parse`]) reads the
//! command line with it into the [`Options`], leaving whatever is not ours
//! to libtest-mimic, and the help ([`usage`]) is printed from it, so a flag
//! and its help cannot drift apart. An error names the flag and the value
//! it got. `cargo xtask conformance` reads the harness's command line with
//! the same table (which tiers, which toolchains).
//!
//! The testing environment's flags (`--instances`, `--max-delay`, ...) set
//! a field of the one environment type (`gridcheck_report::Tuning`) by its
//! name, into `Options::tuning`; they win over a tuned file
//! (`environment.rs`), and a new incantation needs one row here.

mod table;

use std::path::PathBuf;

use crate::options::Options;
use table::Draft;
pub use table::{FLAGS, Flag};

/// Our options' help, from [`FLAGS`].
pub fn usage() -> String {
    const WIDTH: usize = 26;
    let mut out = String::from("gridcheck conformance options (before libtest's own):\n");
    for f in FLAGS.iter().filter(|f| !f.help.is_empty()) {
        let head = match f.value {
            Some(v) => format!("{} {v}", f.name),
            None => f.name.to_string(),
        };
        for (i, line) in f.help.lines().enumerate() {
            let left = if i == 0 { head.as_str() } else { "" };
            out += &format!(
                "  {left:<WIDTH$}{}{line}\n",
                if left.len() >= WIDTH { "  " } else { "" }
            );
        }
    }
    out + "Everything else (filters, --list, --ignored, --exact, --format json, -q) is libtest's.\n\
           Alone: --worker is the harness's own worker process. What scripts ask (a toolchain's\n\
           kernels folder, the GPU's slug): `gridcheck info`."
}

/// Reads `argv` (the program first) with [`FLAGS`] into the options, `root`
/// the default repository root: ours are applied in order, the rest is
/// kept for libtest-mimic.
pub fn parse(argv: Vec<String>, root: PathBuf) -> Result<Options, String> {
    let mut d = Draft::new(root);
    let mut args = argv.into_iter();
    if let Some(program) = args.next() {
        d.o.libtest.push(program);
    }
    while let Some(a) = args.next() {
        if a == "--help-gridcheck" {
            return Err(usage());
        }
        let Some(flag) = FLAGS.iter().find(|f| f.name == a) else {
            d.o.libtest.push(a);
            continue;
        };
        let value = match flag.value {
            Some(_) => args
                .next()
                .ok_or_else(|| format!("`{a}` needs a value\n\n{}", usage()))?,
            None => String::new(),
        };
        (flag.set)(&mut d, &value).map_err(|e| match flag.value {
            Some(_) => format!("`{a} {value}`: {e}"),
            None => format!("`{a}`: {e}"),
        })?;
    }
    d.finish()
}

/// `args` without every `name` flag of ours and its value (how `cargo xtask
/// conformance` gives each run its one `--toolchain`).
pub fn without(args: &[String], name: &str) -> Vec<String> {
    let takes_value = FLAGS
        .iter()
        .find(|f| f.name == name)
        .is_some_and(|f| f.value.is_some());
    let mut out = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == name {
            if takes_value {
                it.next();
            }
            continue;
        }
        // Another flag's value is kept whatever it reads.
        if let Some(f) = FLAGS.iter().find(|f| f.name == a) {
            out.push(a.clone());
            if f.value.is_some()
                && let Some(v) = it.next()
            {
                out.push(v.clone());
            }
            continue;
        }
        out.push(a.clone());
    }
    out
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
        usage()
    );
    let _ = out.flush();
    drop(out);
    let _ = libtest_mimic::Arguments::from_iter([program, "--help"]);
    std::process::exit(0)
}
