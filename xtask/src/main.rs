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
//! cargo xtask report rejudge RESULTS...      a recorded run judged by today's facts
//! cargo xtask report spread INPUT...          a GPU's run-to-run spread, the baseline report diff reads
//! cargo xtask bench [--quick] [--out F] [--compare B] | --bundle [DIR] | compare NEW BASE
//! cargo xtask bench model                    the model's executions and time per litmus test
//! cargo xtask fuzz model|gpu [--count N]     random programs: both oracles, or kernels for a GPU
//! cargo xtask campaign prepare|plain-toolchains   the random-program campaign's work here
//! cargo xtask library scan|list|build        the CCCL library programs (kernels/cccl/)
//! cargo xtask check PATH... [--trace F]      PDL loads before the wait in binaries people ship
//! ```

mod bench;
mod bench_model;
mod build;
mod bundle;
mod campaign;
mod check;
mod codegen;
mod coverage;
mod diff;
mod doc;
mod fuzz;
mod harness;
mod library;
mod mutants;
mod plan;
mod record;
mod report;
mod spread;
mod tiles;
mod toolchain;
mod workspace;

use std::process::ExitCode;

pub use workspace::{
    Result, cargo, copy, copy_creating, load_spec, release_build, rerun_release, root, seeds_dir,
    status,
};

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
  report spread INPUT... [--out FILE]
                                  the run-to-run spread of one GPU from several runs, the baseline
                                  report diff reads (default conformance/spread/<gpu-slug>.json)
  report rejudge <results.jsonl>... [--format text]
                                  a recorded run judged by today's facts (no GPU): JSON lines out,
                                  the changed statuses and the summary on stderr
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
                                  random programs in batches for conformance/fuzz-gpu.sh
  campaign prepare [COUNT] [SEED] the campaign's programs in .gpu-bundle/ (fuzz: COUNT random ones,
                                  10000, of seed SEED, 2027; enum3; old: the 2026-11-26 campaigns'
                                  findings' batches), compiled and packed where nvcc is found
                                  (lab/sessions/campaign.toml runs them on the GPU machine)
  tiles sweep [--sizes 4B,..] [--readers generic,bulk] [--out DIR] [TEST...]
                                  the tile tests at every size and reader, as a campaign's programs
                                  (.gpu-bundle/tiles; lab/experiments/tiles/README.md)
  tiles table DIR RES             the sweep's table from the campaign's records
  campaign plain-toolchains RES... [--bins DIR] [--arch ARCH]
                                  each finding's plain program of RES built by every installed
                                  toolchain into .gpu-bundle/plain/<RES's name>/
  library scan                    regenerate kernels/cccl/algorithms.toml from the installed releases'
                                  CCCL headers (the algorithms that launch with PDL)
  library list                    the catalog: per release, its PDL algorithms, programs and patches
  library pack [--out FILE]       the built programs into .gpu-bundle/library.tar.xz for a GPU machine
  library build [--release R,..] [--target sm_90,compute_80] [--program P,..] [--variant V,..] [--jobs N] [--force]
                                  the CCCL programs with each release's own nvcc into
                                  target/library/<release>/<target>/ (as shipped, -nopdl, -ptx90,
                                  -sass80, -<patch>; --variant shipped,-sass80 builds only those),
                                  with build.json
  check PATH... [--trace FILE] [--produced FILE] [--format text|json|sarif]
                                  the machine-code check of cubins, fatbins, executables and libraries:
                                  every load that can run before the PDL wait and the parameter its
                                  address comes from; a finding where the previous kernel writes it
                                  (exit 1), 2 on an error (see `cargo xtask check --help`)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("report")
        && args.get(1).map(String::as_str) == Some("diff")
    {
        return diff::run(&args[2..]);
    }
    if args.first().map(String::as_str) == Some("check") {
        return check::run(&args[1..]);
    }
    let result = match args.first().map(String::as_str) {
        Some("spec") => spec(&args[1..]),
        Some("codegen") => codegen::run(&root(), args.iter().any(|a| a == "--check")),
        Some("build") => build::command(&args[1..]),
        Some("plan") => plan::run(&args[1..]),
        Some("toolchain") => toolchain::run(&root(), &args[1..]),
        Some("conformance") => harness::run(&args[1..]),
        Some("gpu-bundle") => bundle::run(&args[1..]),
        Some("mutants") => mutants::run(&args[1..]),
        Some("doc") => doc::run(&args[1..]),
        Some("report") if args.get(1).map(String::as_str) == Some("spread") => {
            spread::run(&args[2..])
        }
        Some("report") if args.get(1).map(String::as_str) == Some("rejudge") => {
            harness::report(&args[1..])
        }
        Some("report") => report::run(&args[1..]),
        Some("record") => record::run(&args[1..]),
        Some("bench") if args.get(1).map(String::as_str) == Some("model") => {
            bench_model::run(&args[2..])
        }
        Some("bench") => bench::run(&args[1..]),
        Some("fuzz") => fuzz::run(&args[1..]),
        Some("campaign") => campaign::run(&args[1..]),
        Some("tiles") => tiles::run(&args[1..]),
        Some("library") => library::run(&args[1..]),
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
