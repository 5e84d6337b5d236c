//! The command line: `worker`, `merge`, `status`, `plain` (a finding's
//! program written, or a results folder's programs run), `batch`, or a
//! campaign's phases (`run`, `leads`, or both), each phase followed by the
//! results (`report.rs`) and, for a part (`--part`), its status.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::args::{Args, Phase, USAGE};
use crate::batch::{CampaignProgram, batch_dir, profile_of, write_batch};
use crate::campaign::{RECORDS, read_lines};
use crate::findings::ProgramRecord;
use crate::known::KnownFacts;
use crate::runner::Runner;
use crate::status::{WORK_LEFT, Work};
use crate::{campaign, leads, merge, plain, report, status, sweep, worker};

/// What a command ended with: `Clean` (exit 0), `Unclean` (1: a finding,
/// or a program not run), `WorkLeft` (3: a part to run again).
enum Ended {
    Clean,
    Unclean,
    WorkLeft,
}

impl Ended {
    fn of(clean: bool) -> Ended {
        if clean { Ended::Clean } else { Ended::Unclean }
    }

    /// A part's ending: done or not.
    fn part(done: bool) -> Ended {
        if done { Ended::Clean } else { Ended::WorkLeft }
    }
}

/// `gridcheck-campaign ARGS` (without the program's name), for the
/// checkout `root`.
pub fn main(argv: &[String], root: &Path) -> ExitCode {
    let result = match argv.first().map(String::as_str) {
        Some("worker") => return worker::worker_main(&argv[1..]),
        Some("merge") => merge::main(&argv[1..]).map(|()| Ended::Clean),
        Some("status") => status::main(&argv[1..]).map(Ended::part),
        Some("plain") if is_help(&argv[1..]) => {
            println!("{}", sweep::USAGE);
            return ExitCode::SUCCESS;
        }
        Some("plain") if writes_a_program(&argv[1..]) => {
            plain_main(&argv[1..]).map(|()| Ended::Clean)
        }
        Some("plain") => plain_runs(&argv[1..], root).map(Ended::part),
        Some("batch") => batch_main(&argv[1..]).map(|()| Ended::Clean),
        None | Some("--help" | "-h" | "help") => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        _ => match Args::parse(argv, root) {
            Ok(a) => phases(&a),
            Err(e) => {
                eprintln!("{e}\n{USAGE}");
                return ExitCode::from(2);
            }
        },
    };
    match result {
        Ok(Ended::Clean) => ExitCode::SUCCESS,
        Ok(Ended::Unclean) => ExitCode::from(1),
        Ok(Ended::WorkLeft) => ExitCode::from(WORK_LEFT),
        Err(e) => {
            eprintln!("gridcheck-campaign: {e}");
            ExitCode::from(2)
        }
    }
}

fn is_help(argv: &[String]) -> bool {
    argv.iter().any(|a| a == "--help" || a == "-h")
}

/// `plain FINDING.yaml --out PROGRAM.cu` writes a program; `plain RES`
/// runs a results folder's.
fn writes_a_program(argv: &[String]) -> bool {
    argv.iter().any(|a| a == "--out")
}

/// Whether `argv` is a command line of this program, nothing looked up or
/// run: what the commands of a session file (`lab/sessions/*.toml`) are
/// checked against.
pub fn check_args(argv: &[String]) -> Result<(), String> {
    let rest = argv.get(1..).unwrap_or_default();
    match argv.first().map(String::as_str) {
        Some("status") => status::parse(rest).map(|_| ()),
        Some("plain") if writes_a_program(rest) => Ok(()),
        Some("plain") => sweep::Options::parse(rest, Path::new(".")).map(|_| ()),
        Some("merge") => merge::parse(rest).map(|_| ()),
        Some("worker" | "batch") | None => Ok(()),
        _ => Args::check(argv),
    }
}

/// The phases asked for, then the results; for a part, its status line
/// and ending; else whether every program ran and passed.
fn phases(a: &Args) -> Result<Ended, String> {
    let ran = run_phases(a);
    if let Some(to) = &a.copy_to
        && a.out.is_dir()
    {
        let dest = status::copy_results(&a.out, to)?;
        println!("results copied to {}", dest.display());
    }
    let clean = ran?;
    if !a.part || a.dry_run {
        return Ok(Ended::of(clean));
    }
    let work = match a.phase {
        Phase::Run => Work::Run,
        Phase::Leads => Work::Leads,
        Phase::All => Work::Campaign,
    };
    status::print(&status::of(&a.out, work)?).map(Ended::part)
}

/// The phases asked for, then the results; `Ok(true)` when every program
/// ran and passed.
fn run_phases(a: &Args) -> Result<bool, String> {
    println!("campaign: results in {}", a.out.display());
    let mut runner = Runner {
        instances: a.instances,
        launches: a.launches,
        seed: a.seed,
        env: a.env.clone(),
        timeout: a.timeout,
        stall: a.stall,
        known: KnownFacts::load(&a.root)?,
        next_worker: 0,
        device: None,
        worker_programs: a.worker_programs,
    };
    let mut clean = true;
    if a.phase != Phase::Leads {
        clean &= campaign::run(a, &mut runner)?;
        if a.dry_run {
            return Ok(clean);
        }
    }
    let records_file = a.records.clone().unwrap_or_else(|| a.out.join(RECORDS));
    let records: Vec<ProgramRecord> = read_lines(&records_file)?;
    if records.is_empty() {
        return Err(format!("no records in {}", records_file.display()));
    }
    if a.phase != Phase::Run {
        // Reruns number their workers after the campaign's.
        runner.next_worker = records
            .iter()
            .filter_map(|r| r.worker)
            .max()
            .map_or(0, |w| w + 1);
        leads::run(a, &mut runner, &records)?;
    }
    Ok(report::write(a, &records)? && clean)
}

/// `plain RES [options]` (`sweep.rs`): the plain programs of RES not done
/// yet run while the budget lasts, each finding's last line and the
/// status printed; whether every one is done.
fn plain_runs(argv: &[String], root: &Path) -> Result<bool, String> {
    let o = sweep::Options::parse(argv, root)?;
    if !o.res.is_dir() {
        return Err(format!("{}: no results folder", o.res.display()));
    }
    if sweep::left(&o.res)? > 0 {
        let nvcc = gridcheck_toolchain::find_nvcc(root)?;
        println!("plain: {} with {}", o.res.display(), nvcc.path.display());
        sweep::run(&o, &nvcc)?;
    }
    if let Some(to) = &o.copy_to {
        let dest = status::copy_results(&o.res, to)?;
        println!("results copied to {}", dest.display());
    }
    status::print(&status::of(&o.res, Work::Plain)?)
}

/// `plain FINDING.yaml --out PROGRAM.cu`: the litmus tests of a spec file
/// (a finding's, its context first), in order, as one plain program.
fn plain_main(argv: &[String]) -> Result<(), String> {
    let mut input = None;
    let mut out = None;
    let mut it = argv.iter();
    while let Some(x) = it.next() {
        match x.as_str() {
            "--out" => out = Some(PathBuf::from(it.next().ok_or("--out needs a file")?)),
            s if s.starts_with('-') => return Err(format!("unknown argument `{s}`")),
            s => input = Some(PathBuf::from(s)),
        }
    }
    let input = input.ok_or("the finding's YAML is missing")?;
    let out = out.ok_or("--out PROGRAM.cu is missing")?;
    let text = std::fs::read_to_string(&input)
        .map_err(|e| format!("cannot read {}: {e}", input.display()))?;
    let tests = gridcheck_spec::render::load_litmus_tests(&input, &text)?;
    std::fs::write(&out, plain::program(&tests))
        .map_err(|e| format!("cannot write {}: {e}", out.display()))
}

/// `batch FILE.yaml... --out DIR [--repeat R]`: the litmus tests of spec
/// files (a finding's, its context first), in order, `R` times over, as one
/// campaign batch (`DIR/batches/b0000/`), for `run` to run them as it runs
/// random programs: each program's states the axiomatic model's, its name
/// the test's with `-rK` for the K-th time through.
fn batch_main(argv: &[String]) -> Result<(), String> {
    let (mut files, mut out, mut repeat) = (Vec::new(), None, 1usize);
    let mut it = argv.iter();
    while let Some(x) = it.next() {
        match x.as_str() {
            "--out" => out = Some(PathBuf::from(it.next().ok_or("--out needs a directory")?)),
            "--repeat" => {
                let v = it.next().ok_or("--repeat needs a number")?;
                repeat = v
                    .parse()
                    .map_err(|_| format!("--repeat takes a number, not `{v}`"))?;
            }
            s if s.starts_with('-') => return Err(format!("unknown argument `{s}`")),
            s => files.push(PathBuf::from(s)),
        }
    }
    let out = out.ok_or("--out DIR is missing")?;
    if files.is_empty() {
        return Err("no spec file named".into());
    }
    let mut tests = Vec::new();
    for f in &files {
        let text =
            std::fs::read_to_string(f).map_err(|e| format!("cannot read {}: {e}", f.display()))?;
        tests.extend(gridcheck_spec::render::load_litmus_tests(f, &text)?);
    }
    let mut programs = Vec::new();
    for r in 0..repeat {
        for (name, l) in &tests {
            let name = format!("{name}-r{r}");
            programs.push(
                CampaignProgram::decided(profile_of(l), &name, l)
                    .ok_or_else(|| format!("{name}: the axiomatic model does not decide it"))?,
            );
        }
    }
    write_batch(&batch_dir(&out, 0), &programs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gridcheck_spec::render::load_litmus_tests as finding_tests;

    /// A finding's file as the leads phase writes it: its tests in order.
    #[test]
    fn a_findings_tests_are_read_in_order() {
        let root = gridcheck_toolchain::checkout_root(env!("CARGO_MANIFEST_DIR"));
        let file = root.join(
            "records/nvidia-h100-80gb-hbm3/campaigns/2026-11-26/random-confirmed/findings/001-hang.yaml",
        );
        let text = std::fs::read_to_string(&file).unwrap();
        let one = finding_tests(&file, &text).unwrap();
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].0, "campaign-hang-001");
        let two = format!("{}{}", text.replace("campaign-hang-001", "ctx"), text);
        let both = finding_tests(&file, &two).unwrap();
        let names: Vec<&str> = both.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["ctx", "campaign-hang-001"]);
        let e = finding_tests(&file, "  - name: bad\n    kind: litmus\n").unwrap_err();
        assert!(e.contains("test `bad`"), "{e}");
        assert!(
            finding_tests(&file, "x: 1\n")
                .unwrap_err()
                .contains("no test")
        );
    }

    /// The plain programs checked in beside their findings are what the
    /// generator writes from them now (`gridcheck-campaign plain F.yaml
    /// --out F.cu` rewrites one).
    #[test]
    fn the_checked_in_plain_programs_are_current() {
        let root = gridcheck_toolchain::checkout_root(env!("CARGO_MANIFEST_DIR"));
        let dir = root.join("lab/experiments/campaign-confirmed-2026-11-26/findings");
        let mut seen = 0;
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let yaml = e.path();
            if yaml.extension().is_none_or(|x| x != "yaml") {
                continue;
            }
            let text = std::fs::read_to_string(&yaml).unwrap();
            let cu = yaml.with_extension("cu");
            let now = plain::program(&finding_tests(&yaml, &text).unwrap());
            assert!(
                std::fs::read_to_string(&cu).unwrap() == now,
                "{} is stale: gridcheck-campaign plain {} --out {}",
                cu.display(),
                yaml.display(),
                cu.display()
            );
            seen += 1;
        }
        assert_eq!(seen, 6);
    }
}
