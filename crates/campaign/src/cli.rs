//! The command line: `worker`, `merge`, `plain`, or a campaign's phases
//! (`run`, `leads`, or both), each phase followed by the results
//! (`report.rs`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use gridcheck_spec::{Litmus, TestBody};

use crate::args::{Args, Phase, USAGE};
use crate::campaign::{RECORDS, read_lines};
use crate::findings::ProgramRecord;
use crate::known::KnownHangs;
use crate::runner::Runner;
use crate::{campaign, leads, merge, plain, report, worker};

/// `gridcheck-campaign ARGS` (without the program's name), for the
/// checkout `root`.
pub fn main(argv: &[String], root: &Path) -> ExitCode {
    let result = match argv.first().map(String::as_str) {
        Some("worker") => return worker::worker_main(&argv[1..]),
        Some("merge") => merge::main(&argv[1..]).map(|()| true),
        Some("plain") => plain_main(&argv[1..]).map(|()| true),
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
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("gridcheck-campaign: {e}");
            ExitCode::from(2)
        }
    }
}

/// The phases asked for, then the results; `Ok(true)` when every program
/// ran and passed.
fn phases(a: &Args) -> Result<bool, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let mut runner = Runner {
        exe,
        instances: a.instances,
        launches: a.launches,
        seed: a.seed,
        env: a.env.clone(),
        timeout: a.timeout,
        stall: a.stall,
        known: KnownHangs::load(&a.root)?,
        next_worker: 0,
        device: None,
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
    let tests = finding_tests(&input, &text)?;
    std::fs::write(&out, plain::program(&tests))
        .map_err(|e| format!("cannot write {}: {e}", out.display()))
}

/// The litmus tests of a finding's file (a list of tests, as the leads
/// phase writes it, or a whole spec document).
fn finding_tests(file: &Path, text: &str) -> Result<Vec<(String, Litmus)>, String> {
    let doc = if text.trim_start().starts_with("tests:") || text.contains("\nrules:") {
        text.to_string()
    } else {
        format!("tests:\n{text}")
    };
    let spec = gridcheck_spec::load_sources(&[(file.to_path_buf(), doc)], None)
        .map_err(|e| e.to_string())?;
    let tests: Vec<(String, Litmus)> = spec
        .tests
        .into_iter()
        .filter_map(|t| match t.body {
            TestBody::Litmus(l) => Some((t.name, l)),
            _ => None,
        })
        .collect();
    if tests.is_empty() {
        return Err(format!("{}: no litmus test", file.display()));
    }
    Ok(tests)
}
