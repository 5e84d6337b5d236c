//! `cargo xtask conformance [options] [-- <libtest args>]`: builds what the
//! harness needs and runs it (`gridcheck run`), once per `--toolchain` named. The command
//! line is read with the harness's own flag table (`conformance::flags`):
//! which tiers, which toolchains, `--mutants`; the kernels are built for
//! the GPU in hand when the GPU tier runs.

use std::path::{Path, PathBuf};
use std::process::Command;

use conformance::Options;
use conformance::flags::{self, HELP_FLAGS};
use gridcheck_report::Tier;
use gridcheck_toolchain::Toolchain;

use crate::workspace::{Result, cargo, root, status};
use crate::{build, codegen, mutants};

pub fn run(args: &[String]) -> Result<()> {
    let root = root();
    // Help runs nothing else: the harness prints it.
    if args.iter().any(|a| HELP_FLAGS.contains(&a.as_str())) {
        return run_harness(&root, args, false);
    }
    let argv = std::iter::once("conformance".to_string())
        .chain(split(args).0.iter().cloned())
        .collect();
    let opts = flags::parse(argv, root.clone())?;
    if opts.toolchains.is_empty() {
        return run_with(&root, args, &opts, None);
    }
    // Once per toolchain, each into its own results file unless one is
    // named (records name their toolchain either way).
    let rest = flags::without(args, "--toolchain");
    let mut failed = Vec::new();
    for name in &opts.toolchains {
        let t = gridcheck_toolchain::find_toolchain(&root, name)?;
        println!("== toolchain {} (nvcc {})", t.name, t.nvcc.version);
        let mut a = vec!["--toolchain".to_string(), t.name.clone()];
        a.extend(rest.iter().cloned());
        if let Err(e) = run_with(&root, &a, &opts, Some(&t)) {
            failed.push(format!("toolchain {}: {e}", t.name));
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(failed.join("\n"))
    }
}

/// The harness's options and libtest's (after `--`).
fn split(args: &[String]) -> (&[String], &[String]) {
    match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (args, &[]),
    }
}

/// One run of the harness with `args`: the kernels built first when the
/// GPU tier runs (not for `--list`).
fn run_with(root: &Path, args: &[String], opts: &Options, tc: Option<&Toolchain>) -> Result<()> {
    let runs = !args.iter().any(|a| a == "--list");
    if runs && opts.runs(Tier::Gpu) {
        build_for_the_gpu(root, tc, opts.mutants.on)?;
    }
    run_harness(root, args, runs)
}

/// Builds the harness and runs it with `args` (ours, then libtest's),
/// in libtest's terse format when `terse` and no format is asked for.
fn run_harness(root: &Path, args: &[String], terse: bool) -> Result<()> {
    let (ours, libtest) = split(args);
    // The harness in the profile xtask itself is built in (and `cargo
    // test`), built with xtask's own package selection: xtask depends on
    // the harness's library, so both resolve the shared dependencies'
    // features alike and a first run builds them once. Cargo shows its
    // progress. libtest's terse format unless a format is asked for: a
    // character a trial, then the summary.
    build_gridcheck(root, false)?;
    let harness = harness_path()?;
    let terse = terse && !args.iter().any(|a| libtest_format_given(a));
    let st = status(
        Command::new(&harness)
            .current_dir(root)
            .arg("run")
            .args(ours)
            .args(libtest)
            .args(terse.then_some("--quiet")),
    )?;
    if st.success() {
        Ok(())
    } else {
        Err(format!("conformance failed ({st})"))
    }
}

/// With a GPU: the generated kernels checked current and built for its
/// architecture when nvcc targets it (and the PTX of every test in any
/// case), the mutants' kernels with `--mutants`.
fn build_for_the_gpu(root: &Path, tc: Option<&Toolchain>, mutants: bool) -> Result<()> {
    let d = match gridcheck_gpu::probe() {
        Ok(d) => d,
        Err(reason) => {
            println!("GPU tier will not run: {reason}");
            return Ok(());
        }
    };
    println!("GPU: {} ({}), driver {}", d.name, d.sm, d.driver_version);
    codegen::run(root, true)?;
    let kernels = gridcheck_toolchain::kernels_dir(root, tc.map(|t| t.name.as_str()));
    let nvcc = match tc {
        Some(t) => t.nvcc.clone(),
        None => gridcheck_toolchain::find_nvcc(root)?,
    };
    let (targets, _) = build::targets(&nvcc, &kernels)?;
    let arch = if targets.contains(&d.sm) {
        d.sm.clone()
    } else {
        println!(
            "nvcc {} does not target {}: the PTX only",
            nvcc.version, d.sm
        );
        "none".into()
    };
    build::run(root, &kernels, &arch, build::default_jobs(), tc)?;
    if mutants {
        mutants::build(root, &d.sm)?;
    }
    Ok(())
}

/// `cargo xtask report rejudge RESULTS...`: `gridcheck report` with `args`
/// (`rejudge RESULTS... [--format text]`) on this checkout's facts and
/// spec, the command built first.
pub fn report(args: &[String]) -> Result<()> {
    let root = root();
    build_gridcheck(&root, true)?;
    let st = status(
        Command::new(harness_path()?)
            .current_dir(&root)
            .arg("report")
            .args(args)
            .arg("--root")
            .arg(&root),
    )?;
    if st.success() {
        Ok(())
    } else {
        Err(format!("gridcheck report failed ({st})"))
    }
}

/// Builds `gridcheck` (and xtask, so that both resolve the shared
/// dependencies' features alike), cargo's progress shown unless `quiet`.
fn build_gridcheck(root: &Path, quiet: bool) -> Result<()> {
    let mut cmd = cargo();
    cmd.current_dir(root).arg("build");
    if quiet {
        cmd.arg("-q");
    }
    let st = status(cmd.args(["-p", "xtask", "-p", "gridcheck-cli", "--bin", "gridcheck"]))?;
    if st.success() {
        Ok(())
    } else {
        Err(format!("cannot build gridcheck ({st})"))
    }
}

/// The `gridcheck` binary cargo built beside this xtask (same target
/// directory and profile); `gridcheck run` is the harness.
fn harness_path() -> Result<PathBuf> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find xtask's own path: {e}"))?;
    let dir = exe
        .parent()
        .ok_or_else(|| format!("{} has no directory", exe.display()))?;
    Ok(dir.join(format!("gridcheck{}", std::env::consts::EXE_SUFFIX)))
}

/// Whether an argument picks libtest's output format itself.
fn libtest_format_given(a: &str) -> bool {
    matches!(a, "-q" | "--quiet" | "--format" | "--exact") || a.starts_with("--format=")
}
