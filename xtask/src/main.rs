//! `cargo xtask`: gridcheck's developer commands.
//!
//! ```text
//! cargo xtask spec check                     validate the spec (quotes against the seeds)
//! cargo xtask spec coverage                  rules and tests per seed, profile, kind, status
//! cargo xtask spec coverage --sentences      the seeds' sentences: quoted by a rule, or why not a claim
//! cargo xtask codegen [--check]              write (or check) kernels/generated/
//! cargo xtask build [--arch sm_90]           nvcc: generated kernels -> target/kernels/<sm>/*.cubin
//! cargo xtask conformance [opts] [-- args]   build what is needed, run the harness
//! cargo xtask gpu-bundle                     binaries and cubins for a GPU machine without Rust
//! cargo xtask mutants [--out DIR]            the mutation candidates' CUDA (built on the GPU machine)
//! cargo xtask doc [--out DIR]                the spec documentation site (mdBook)
//! cargo xtask report <kind> <results>...     summary, markdown, junit, merge (matrix)
//! cargo xtask bench [--quick] [--out F] [--compare B] | --bundle [DIR] | compare NEW BASE
//! cargo xtask bench model                    the model's executions and time per litmus test
//! cargo xtask fuzz model|gpu [--count N]     random programs: both oracles, or kernels for a GPU
//! ```

mod bench;
mod bench_model;
mod build;
mod codegen;
mod coverage;
mod doc;
mod fuzz;
mod mutants;
mod report;

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
  build [--arch sm_90]            compile the generated kernels with nvcc into target/kernels/<arch>/
  conformance [--tier model|static|gpu]... [harness options] [-- <libtest args>]
                                  run the conformance harness (builds the kernels when a GPU is present)
  gpu-bundle                      put the release harness and the cubins into .gpu-bundle/ for a GPU machine
                                  (with the mutants' kernels in .gpu-bundle/mutants/generated)
  mutants [--out DIR]             the CUDA of every mutation candidate (default .gpu-bundle/mutants)
  doc [--out DIR]                 the spec documentation site from the spec and the recorded results
                                  (default target/doc-site; open book/index.html there)
  report summary|markdown|junit <results.jsonl>... [--out FILE]
                                  a report of any results file
  report merge <results.jsonl>... [--out FILE] [--format md|json]
                                  a conformance matrix: trial x GPU, driver, nvcc
  bench [--quick] [--out FILE] [--compare BASELINE] [--tolerance T]
                                  run the benchmarks on this machine's GPU (see `cargo xtask bench --help`)
  bench --bundle [DIR]            the benchmarks for a GPU machine without Rust (default .bench-bundle/)
  bench compare NEW BASELINE      compare two benchmark results files; exits 1 on a regression

  bench model [--filter S]        both oracles' cost per litmus test (release build)
  fuzz model [--count N] [--seed S] [--threads T] [--jobs J]
                                  random programs: loom against the axiomatic model (release build)
  fuzz gpu [--count N] [--seed S] [--out DIR]
                                  random programs and their kernels for conformance/fuzz-gpu.sh";

/// The checkout `cargo xtask` was run for (decided at run time; see
/// `gridcheck_toolchain::checkout_root`).
pub fn root() -> PathBuf {
    gridcheck_toolchain::checkout_root(env!("CARGO_MANIFEST_DIR"))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("spec") => spec(&args[1..]),
        Some("codegen") => codegen::run(&root(), args.iter().any(|a| a == "--check")),
        Some("build") => {
            arch_arg(&args[1..]).and_then(|arch| build::run(&root(), &arch).map(|_| ()))
        }
        Some("conformance") => conformance(&args[1..]),
        Some("gpu-bundle") => gpu_bundle(),
        Some("mutants") => mutants::run(&args[1..]),
        Some("doc") => doc::run(&args[1..]),
        Some("report") => report::run(&args[1..]),
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

fn arch_arg(args: &[String]) -> Result<String> {
    match args {
        [] => Ok("sm_90".into()),
        [flag, arch] if flag == "--arch" => Ok(arch.clone()),
        _ => Err(format!(
            "usage: cargo xtask build [--arch sm_90]\n\n{USAGE}"
        )),
    }
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

fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

fn status(cmd: &mut Command) -> Result<std::process::ExitStatus> {
    cmd.status().map_err(|e| format!("cannot run {cmd:?}: {e}"))
}

fn conformance(args: &[String]) -> Result<()> {
    let root = root();
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
                codegen::run(&root, true)?;
                build::run(&root, &d.sm)?;
                if ours.iter().any(|a| a == "--mutants" || a == "--tune") {
                    mutants::build(&root, &d.sm)?;
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
    let st =
        status(
            cargo()
                .current_dir(&root)
                .args(["build", "-p", "xtask", "-p", "conformance"]),
        )?;
    if !st.success() {
        return Err(format!("cannot build the harness ({st})"));
    }
    let harness = harness_path()?;
    let terse = runs && !args.iter().any(|a| libtest_format_given(a));
    let st = status(
        Command::new(&harness)
            .current_dir(&root)
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

fn gpu_bundle() -> Result<()> {
    let root = root();
    codegen::run(&root, true)?;
    let cubins = build::run(&root, "sm_90")?;
    release_build(
        &root,
        &[
            "-p",
            "conformance",
            "-p",
            "gridcheck-gpu",
            "--bin",
            "conformance",
            "--example",
            "litmus_smoke",
        ],
    )?;
    let bundle = root.join(".gpu-bundle");
    let kernels = bundle.join("kernels/sm_90");
    std::fs::create_dir_all(&kernels)
        .map_err(|e| format!("cannot create {}: {e}", kernels.display()))?;
    copy(
        &root.join("target/release/conformance"),
        &bundle.join("conformance"),
    )?;
    // Histograms and instance rates of every litmus test, with and without
    // incantations: `litmus_smoke spec .gpu-bundle/kernels/sm_90 65536 8`.
    copy(
        &root.join("target/release/examples/litmus_smoke"),
        &bundle.join("litmus_smoke"),
    )?;
    for c in &cubins {
        copy(c, &kernels.join(c.file_name().unwrap_or_default()))?;
    }
    // The commit the bundle is built from, for the records of its runs
    // (the bundle scripts export it as GRIDCHECK_COMMIT).
    let commit = gridcheck_toolchain::checkout_commit(&root).unwrap_or_default();
    std::fs::write(bundle.join("commit"), format!("{commit}\n"))
        .map_err(|e| format!("cannot write {}: {e}", bundle.join("commit").display()))?;
    let fixtures = fixtures(&root, &bundle.join("fixtures/sm_90"))?;
    mutants::run(&["--out".into(), bundle.join("mutants").display().to_string()])?;
    println!(
        "{} ready: the harness, {} cubins and {fixtures} fault fixtures. On the GPU machine: \
         bash conformance/gpu-run.sh; bash conformance/fault-check.sh",
        bundle.display(),
        cubins.len()
    );
    Ok(())
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

/// Builds the fault fixtures (`conformance/fixtures/spec`) into `out`. The
/// `fault-load` fixture is compiled with `-rdc=true -cubin` and no device
/// link against cudadevrt, a real mistake whose module does not load.
fn fixtures(root: &Path, out: &Path) -> Result<usize> {
    let spec = gridcheck_spec::load_dir(&root.join("conformance/fixtures/spec"), None)
        .map_err(|e| e.to_string())?;
    let nvcc = gridcheck_toolchain::find_nvcc(root)?;
    let work = root.join("target/fixtures");
    for d in [out, &work] {
        std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
    }
    let mut n = 0;
    for t in &spec.tests {
        let gridcheck_spec::TestBody::Runtime(r) = &t.body else {
            continue;
        };
        let src = work.join(format!("{}.cu", t.name));
        let obj = work.join(format!("{}.o", t.name));
        let cubin = out.join(format!("{}.cubin", t.name));
        std::fs::write(&src, &r.source)
            .map_err(|e| format!("cannot write {}: {e}", src.display()))?;
        let steps = if t.name == "fault-load" {
            vec![nvcc.run(&[
                "-arch=sm_90".into(),
                "-rdc=true".into(),
                "-cubin".into(),
                src.display().to_string(),
                "-o".into(),
                cubin.display().to_string(),
            ])]
        } else {
            let c = nvcc.compile_rdc(&src, &work, "sm_90", &[], &obj);
            if c.success {
                vec![c, nvcc.dlink_cubin(&obj, "sm_90", &cubin)]
            } else {
                vec![c]
            }
        };
        if let Some(bad) = steps.iter().find(|s| !s.success) {
            return Err(format!(
                "fixture {} does not build:\n{}\n$ {}",
                t.name,
                bad.output.trim(),
                bad.command
            ));
        }
        n += 1;
    }
    Ok(n)
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
