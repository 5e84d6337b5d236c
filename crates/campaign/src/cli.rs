//! The command line: `worker`, `merge`, `plain`, or a campaign's phases
//! (`run`, `leads`, or both), each phase followed by the results
//! (`report.rs`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::args::{Args, Phase, USAGE};
use crate::batch::{CampaignProgram, batch_dir, profile_of, write_batch};
use crate::campaign::{RECORDS, read_lines};
use crate::findings::ProgramRecord;
use crate::known::KnownFacts;
use crate::runner::Runner;
use crate::{campaign, leads, merge, plain, report, worker};

/// `gridcheck-campaign ARGS` (without the program's name), for the
/// checkout `root`.
pub fn main(argv: &[String], root: &Path) -> ExitCode {
    let result = match argv.first().map(String::as_str) {
        Some("worker") => return worker::worker_main(&argv[1..]),
        Some("merge") => merge::main(&argv[1..]).map(|()| true),
        Some("plain") => plain_main(&argv[1..]).map(|()| true),
        Some("batch") => batch_main(&argv[1..]).map(|()| true),
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
