//! `cargo xtask`: gridcheck's developer commands.
//!
//! ```text
//! cargo xtask spec check                     validate the spec (quotes against the seeds)
//! cargo xtask spec coverage                  rules and tests per seed, profile, kind, status
//! cargo xtask spec coverage --sentences      the seeds' sentences: quoted by a rule, or why not a claim
//! cargo xtask codegen [--check]              write (or check) kernels/generated/
//! cargo xtask build [--arch all|sm_XX,..] [--toolchain 13.5]
//!                                            nvcc: generated kernels -> target/kernels/<sm>/*.cubin, .ptx
//!                                            (an installed toolchain's: target/kernels-nvcc-13.5/<sm>/)
//! cargo xtask plan [--arch all|sm_XX,..]     per architecture, the GPU trials that would run
//! cargo xtask toolchain install 13.5 | list  CUDA releases from PyPI into .toolchains/
//! cargo xtask conformance [opts] [-- args]   build what is needed, run the harness
//! cargo xtask gpu-bundle [--arch ..] [--toolchain R]  binaries and kernels for a GPU machine without Rust
//! cargo xtask mutants [--out DIR]            the mutation candidates' CUDA (built on the GPU machine)
//! cargo xtask doc [--out DIR]                the spec documentation site (mdBook)
//! cargo xtask report <kind> <results>...     summary, markdown, junit, merge (matrix)
//! cargo xtask record RUN_DIR                 publish a GPU run's output as records/<gpu>/<date>/
//! cargo xtask report diff BASE NEW           what changed between two runs (exit 1 on a regression)
//! cargo xtask bench [--quick] [--out F] [--compare B] | --bundle [DIR] | compare NEW BASE
//! cargo xtask bench model                    the model's executions and time per litmus test
//! cargo xtask fuzz model|gpu [--count N]     random programs: both oracles, or kernels for a GPU
//! ```

mod bench;
mod bench_model;
mod build;
mod bundle;
mod codegen;
mod coverage;
mod diff;
mod doc;
mod fuzz;
mod mutants;
mod plan;
mod record;
mod report;
mod toolchain;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

pub type Result<T> = std::result::Result<T, String>;

const USAGE: &str = "usage: cargo xtask <command>
  spec check                      validate the spec; quotes are checked against the seeds
  spec coverage                   rules and tests per seed, section, profile, kind and status
  spec coverage --sentences       every sentence of the seeds: quoted by a rule, not a claim
                                  (spec/sentences.yaml), or checkable without a rule;
                                  with --all, every sentence and its standing
  codegen [--check]               regenerate kernels/generated/ (or fail if it is stale)
  build [--arch all|sm_XX[,sm_YY]] [--jobs N] [--toolchain 13.5]
                                  compile the generated kernels with nvcc into target/kernels/<arch>/
                                  for every architecture (default all that nvcc targets) their plan
                                  allows, plus each test's PTX and libcudadevrt.a (with an installed
                                  toolchain: target/kernels-nvcc-<release>/<arch>/)
  plan [--arch all|sm_XX[,..]] [--built sm_XX[,..]] [--update-readme | --check]
                                  per GPU architecture, how many GPU trials would run, and through
                                  which binary (README's table; computed from the code); --built:
                                  with cubins of these architectures only (a bundle's --arch)
  toolchain install <release>...  install CUDA releases (nvcc, runtime, disassemblers) from PyPI
                                  into .toolchains/<release>/
  toolchain list                  the installed toolchains: nvcc, device runtime, disassembler
  conformance [--tier model|static|gpu|sass]... [--toolchain 13.0,13.5]... [harness options] [-- <libtest args>]
                                  run the conformance harness (builds the kernels when a GPU is present);
                                  with --toolchain, once per toolchain named
  gpu-bundle [--arch all|sm_XX[,..]] [--jobs N] [--toolchain 13.1,13.5]
                                  put the release harness and the kernels (every architecture by
                                  default, PTX, libcudadevrt.a; packed in kernels.tar.xz) into
                                  .gpu-bundle/ for a GPU machine (with the mutants' kernels in
                                  .gpu-bundle/mutants/generated); --toolchain adds installed
                                  toolchains' kernels (kernels-nvcc-<release>.tar.xz)
  mutants [--out DIR]             the CUDA of every mutation candidate (default .gpu-bundle/mutants)
  doc [--out DIR]                 the spec documentation site from the spec and the recorded results
                                  (default target/doc-site; open book/index.html there)
  report summary|markdown|junit <results.jsonl>... [--run ID | --all-runs] [--out FILE]
                                  a report of one run of a results file (the latest by default)
  report merge <results.jsonl>... [--out FILE] [--format md|json]
                                  a conformance matrix: trial x run (GPU, driver, nvcc, date, run id)
  report diff BASE NEW [--json] [--fail-on regression|change|never]
                                  what changed between two runs; exits 1 on a regression, 2 on bad input
                                  (see `cargo xtask report diff --help`)
  record RUN_DIR [--date D] [--gpu SLUG]
                                  publish a GPU run's output folder as records/<gpu>/<date>[.N]/
                                  (golden.txt one line a trial, raw logs packed)
  bench [--quick] [--out FILE] [--compare BASELINE] [--tolerance T]
                                  run the benchmarks on this machine's GPU (see `cargo xtask bench --help`)
  bench --bundle [DIR]            the benchmarks for a GPU machine without Rust (default .bench-bundle/)
  bench compare NEW BASELINE      compare two benchmark results files; exits 1 on a regression

  bench model [--filter S]        both oracles' cost per litmus test (release build)
  fuzz model [--count N] [--seed S] [--threads T] [--jobs J]
                                  random programs: loom against the axiomatic model (release build)
  fuzz enumerate [--ops N] [--jobs J]
                                  every program of at most N operations over two threads in two
                                  kernels (diy-style), through both oracles (release build)
  fuzz gpu [--count N] [--seed S] [--batch B] [--enumerate N] [--out DIR]
                                  random programs in batches for conformance/fuzz-gpu.sh";

/// The checkout `cargo xtask` was run for (decided at run time; see
/// `gridcheck_toolchain::checkout_root`).
pub fn root() -> PathBuf {
    gridcheck_toolchain::checkout_root(env!("CARGO_MANIFEST_DIR"))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("report")
        && args.get(1).map(String::as_str) == Some("diff")
    {
        return diff::run(&args[2..]);
    }
    let result = match args.first().map(String::as_str) {
        Some("spec") => spec(&args[1..]),
        Some("codegen") => codegen::run(&root(), args.iter().any(|a| a == "--check")),
        Some("build") => build_cmd(&args[1..]),
        Some("plan") => plan::run(&args[1..]),
        Some("toolchain") => toolchain::run(&root(), &args[1..]),
        Some("conformance") => conformance(&args[1..]),
        Some("gpu-bundle") => bundle::run(&args[1..]),
        Some("mutants") => mutants::run(&args[1..]),
        Some("doc") => doc::run(&args[1..]),
        Some("report") => report::run(&args[1..]),
        Some("record") => record::run(&args[1..]),
        Some("bench") if args.get(1).map(String::as_str) == Some("model") => {
            bench_model::run(&args[2..])
        }
        Some("bench") => bench::run(&args[1..]),
        Some("fuzz") => fuzz::run(&args[1..]),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(format!("unknown command `{other}`\n\n{USAGE}")),
        None => Err(USAGE.to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}", error_text(&e));
            ExitCode::FAILURE
        }
    }
}

/// An error as printed: `error: ` once, also where the message (a list of
/// spec errors) already starts with it.
fn error_text(e: &str) -> String {
    if e.starts_with("error: ") {
        e.to_string()
    } else {
        format!("error: {e}")
    }
}

/// `build [--arch A] [--jobs N] [--toolchain R]...`: once per toolchain
/// named, else with the default nvcc.
fn build_cmd(args: &[String]) -> Result<()> {
    let root = root();
    let (arch, jobs) = build_args(&toolchain::strip_flag(args))?;
    let tcs = toolchain::selected(&root, args)?;
    if tcs.is_empty() {
        return build::run(&root, &kernels_root(&root), &arch, jobs, None).map(|_| ());
    }
    for t in &tcs {
        build::run(
            &root,
            &toolchain::kernels_dir(&root, Some(t)),
            &arch,
            jobs,
            Some(t),
        )?;
    }
    Ok(())
}

/// `--arch all|sm_XX[,..]` (default all) and `--jobs N` (default one per
/// core) of `build` and `gpu-bundle`.
pub fn build_args(args: &[String]) -> Result<(String, usize)> {
    let (mut arch, mut jobs) = ("all".to_string(), build::default_jobs());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match (a.as_str(), it.next()) {
            ("--arch", Some(v)) => arch = v.clone(),
            ("--jobs", Some(v)) => {
                jobs = v
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| format!("--jobs: `{v}` is not a positive number"))?
            }
            _ => {
                return Err(format!(
                    "usage: cargo xtask build [--arch all|sm_XX[,sm_YY]] [--jobs N]\n\n{USAGE}"
                ));
            }
        }
    }
    Ok((arch, jobs))
}

/// The kernels root of the default toolchain: `target/kernels` (see
/// `gridcheck_toolchain::binary` for its layout).
pub fn kernels_root(root: &Path) -> PathBuf {
    root.join(gridcheck_kernelgen::BUILD_DIR)
}

/// The seeds directory: $GRIDCHECK_SEEDS, else ../shared/seeds beside the checkout.
pub fn seeds_dir(root: &Path) -> Option<PathBuf> {
    gridcheck_spec::seeds::default_dir(root)
}

pub fn load_spec(root: &Path) -> Result<gridcheck_spec::Spec> {
    let seeds = match seeds_dir(root) {
        Some(d) => Some(
            gridcheck_spec::Seeds::load(&d)
                .map_err(|e| format!("cannot read the seeds in {}: {e}", d.display()))?,
        ),
        None => None,
    };
    gridcheck_spec::load_dir(&root.join("spec"), seeds.as_ref()).map_err(|e| e.to_string())
}

fn spec(args: &[String]) -> Result<()> {
    match args.first().map(String::as_str) {
        Some("check") => {
            let root = root();
            let spec = load_spec(&root)?;
            let tests = spec.tests.len();
            println!(
                "spec OK: {} rules, {} tests, {} rule-test pairs",
                spec.rules.len(),
                tests,
                spec.pairs().count()
            );
            // The list of sentences that are not claims: its shape always,
            // its entries against the seeds when they are here.
            let sentences = coverage::sentences(&root, &spec, false)?;
            if let Some(line) = sentences.lines().find(|l| l.starts_with("checkable")) {
                println!("spec/{}: {line}", gridcheck_spec::sentences::LIST_FILE);
            }
            let shapes = gridcheck_spec::shapes::load_shapes_file(&root.join("spec"), &spec)
                .map_err(|e| e.to_string())?;
            println!(
                "spec/{}: {} shapes",
                gridcheck_spec::shapes::SHAPES_FILE,
                shapes.len()
            );
            match seeds_dir(&root) {
                Some(d) => println!("quotes checked verbatim against {}", d.display()),
                None => println!(
                    "quotes NOT checked: no seeds (set GRIDCHECK_SEEDS or put them in ../shared/seeds)"
                ),
            }
            Ok(())
        }
        Some("coverage") if args.get(1).map(String::as_str) == Some("--sentences") => {
            let root = root();
            let every = args.get(2).map(String::as_str) == Some("--all");
            print!("{}", coverage::sentences(&root, &load_spec(&root)?, every)?);
            Ok(())
        }
        Some("coverage") => {
            print!("{}", coverage::report(&load_spec(&root())?));
            Ok(())
        }
        _ => Err(format!(
            "usage: cargo xtask spec check|coverage [--sentences]\n\n{USAGE}"
        )),
    }
}

pub fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

fn status(cmd: &mut Command) -> Result<std::process::ExitStatus> {
    cmd.status().map_err(|e| format!("cannot run {cmd:?}: {e}"))
}

fn conformance(args: &[String]) -> Result<()> {
    let root = root();
    let tcs = toolchain::selected(&root, args)?;
    if tcs.is_empty() {
        return conformance_with(&root, args, None);
    }
    // Once per toolchain, each into its own results file unless one is
    // named (records name their toolchain either way).
    let rest = toolchain::strip_flag(args);
    let mut failed = Vec::new();
    for t in &tcs {
        println!("== toolchain {} (nvcc {})", t.name, t.nvcc.version);
        let mut a = vec!["--toolchain".to_string(), t.name.clone()];
        a.extend(rest.iter().cloned());
        if let Err(e) = conformance_with(&root, &a, Some(t)) {
            failed.push(format!("toolchain {}: {e}", t.name));
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(failed.join("\n"))
    }
}

fn conformance_with(
    root: &Path,
    args: &[String],
    tc: Option<&gridcheck_toolchain::Toolchain>,
) -> Result<()> {
    let (ours, libtest) = match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (args, &[][..]),
    };
    let tiers: Vec<&str> = ours
        .windows(2)
        .filter(|w| w[0] == "--tier")
        .map(|w| w[1].as_str())
        .collect();
    // Help and the list run nothing: no GPU probe, no kernel build.
    let runs = !args
        .iter()
        .any(|a| a == "--list" || conformance::options::HELP_FLAGS.contains(&a.as_str()));
    let gpu_tier = runs && (tiers.is_empty() || tiers.contains(&"gpu"));
    if gpu_tier {
        match gridcheck_gpu::probe() {
            Ok(d) => {
                println!("GPU: {} ({}), driver {}", d.name, d.sm, d.driver_version);
                codegen::run(root, true)?;
                // The device's architecture when nvcc targets it, and the
                // PTX of every test in any case.
                let kernels = toolchain::kernels_dir(root, tc);
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
                if ours.iter().any(|a| a == "--mutants" || a == "--tune") {
                    mutants::build(root, &d.sm)?;
                }
            }
            Err(reason) => println!("GPU tier will not run: {reason}"),
        }
    }
    // The harness in the profile xtask itself is built in (and `cargo
    // test`), built with xtask's own package selection: xtask depends on
    // the harness's library, so both resolve the shared dependencies'
    // features alike and a first run builds them once. Cargo shows its
    // progress. libtest's terse format unless a format is asked for: a
    // character a trial, then the summary.
    let st = status(
        cargo()
            .current_dir(root)
            .args(["build", "-p", "xtask", "-p", "conformance"]),
    )?;
    if !st.success() {
        return Err(format!("cannot build the harness ({st})"));
    }
    let harness = harness_path()?;
    let terse = runs && !args.iter().any(|a| libtest_format_given(a));
    let st = status(
        Command::new(&harness)
            .current_dir(root)
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

/// The harness binary cargo built beside this xtask (same target directory
/// and profile).
fn harness_path() -> Result<PathBuf> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find xtask's own path: {e}"))?;
    let dir = exe
        .parent()
        .ok_or_else(|| format!("{} has no directory", exe.display()))?;
    Ok(dir.join(format!("conformance{}", std::env::consts::EXE_SUFFIX)))
}

/// Whether an argument picks libtest's output format itself.
fn libtest_format_given(a: &str) -> bool {
    matches!(a, "-q" | "--quiet" | "--format" | "--exact") || a.starts_with("--format=")
}

/// `cargo build --quiet --release <args>` in the workspace.
/// Runs `cargo xtask <args> --here` again from a release build, when this
/// is a debug build: for the commands whose figures are the release
/// harness's (`bench model`, `fuzz model`).
pub fn rerun_release(args: &[String]) -> Result<()> {
    let mut cmd =
        std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(root())
        .args(["run", "--quiet", "--release", "--package", "xtask", "--"])
        .args(args)
        .arg("--here");
    let status = cmd.status().map_err(|e| format!("cannot run cargo: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "the release build of `{}` failed ({status})",
            args.join(" ")
        ))
    }
}

pub fn release_build(root: &Path, args: &[&str]) -> Result<()> {
    let st = status(
        cargo()
            .current_dir(root)
            .args(["build", "--quiet", "--release"])
            .args(args),
    )?;
    if st.success() {
        Ok(())
    } else {
        Err(format!("cargo build failed ({st})"))
    }
}

/// Copies a file for a bundle.
pub fn copy(from: &Path, to: &Path) -> Result<()> {
    std::fs::copy(from, to)
        .map(|_| ())
        .map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))
}

/// [`copy`] into a folder made first if it does not exist.
pub fn copy_creating(from: &Path, to: &Path) -> Result<()> {
    if let Some(d) = to.parent() {
        std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
    }
    copy(from, to)
}

#[cfg(test)]
mod error_tests {
    use super::error_text;

    #[test]
    fn errors_say_error_once() {
        assert_eq!(error_text("no such file"), "error: no such file");
        // A spec error list carries its own `error: ` on each line.
        let spec = "error: a.yaml:3: bad\nerror: a.yaml:9: worse";
        assert_eq!(error_text(spec), spec);
    }
}
