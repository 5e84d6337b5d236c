//! `cargo xtask report`: reports from any results file.
//!
//! ```text
//! report summary <results.jsonl>... [--run ID | --all-runs] [--format json]   status counts and the notable trials
//! report markdown <results.jsonl>... [--run ID | --all-runs] [--out FILE]
//! report junit <results.jsonl>... [--run ID | --all-runs] [--out FILE]
//! report merge <results.jsonl>... [--by-toolchain] [--out FILE] [--format md|json]
//! report diff BASE NEW [--json] [--fail-on regression|change|never]   (`diff.rs`)
//! ```
//!
//! A results file the harness appended to several times holds several
//! runs (`gridcheck_report::runs`); summary, markdown and junit report the
//! latest run of each file unless told otherwise, and say so; merge gives
//! each run its column (`--by-toolchain`: one row a trial across
//! toolchains, see `gridcheck_docs::matrix`).

use std::path::PathBuf;

use gridcheck_docs::matrix::{Matrix, MergeOptions};
use gridcheck_docs::results::load_jsonl;
use gridcheck_report::{RunChoice, RunRecords, TrialRecord};
use gridcheck_spec::Spec;

use crate::{Result, load_spec, root};

const USAGE: &str = "usage: cargo xtask report summary|markdown|junit <results.jsonl[.gz] | run folder>... [--run ID | --all-runs] [--out FILE]
       cargo xtask report summary ... --format json   (one summary a run, as scripts read it)
       cargo xtask report merge <results.jsonl>... [--by-toolchain] [--out FILE] [--format md|json]
       cargo xtask report diff BASE NEW [--json] [--fail-on regression|change|never] [--out FILE]
                                (cargo xtask report diff --help says more)";

#[derive(Debug)]
struct Args {
    files: Vec<PathBuf>,
    out: Option<PathBuf>,
    format: String,
    runs: RunChoice,
    /// `merge --by-toolchain`.
    by_toolchain: bool,
}

fn parse(args: &[String]) -> Result<Args> {
    let mut a = Args {
        files: Vec::new(),
        out: None,
        format: "md".into(),
        runs: RunChoice::Latest,
        by_toolchain: false,
    };
    let mut it = args.iter();
    while let Some(x) = it.next() {
        match x.as_str() {
            "--out" => a.out = Some(it.next().ok_or(USAGE)?.into()),
            "--format" => a.format = it.next().ok_or(USAGE)?.clone(),
            "--run" => a.runs = RunChoice::Id(it.next().ok_or(USAGE)?.clone()),
            "--all-runs" => a.runs = RunChoice::All,
            "--by-toolchain" => a.by_toolchain = true,
            f if f.starts_with("--") => return Err(format!("unknown option `{f}`\n{USAGE}")),
            f => a.files.push(results_of(f.as_ref())),
        }
    }
    if a.files.is_empty() {
        return Err(format!("no results file given\n{USAGE}"));
    }
    if let Some(out) = &a.out
        && let Some(f) = a.files.iter().find(|f| same_file(f, out))
    {
        return Err(format!(
            "--out {} is one of the results files read ({}): it would be overwritten",
            out.display(),
            f.display()
        ));
    }
    Ok(a)
}

/// A results file as given, or the one a run folder holds
/// (`records/<gpu>/<date>/results.jsonl.gz`).
pub(crate) fn results_of(p: &std::path::Path) -> PathBuf {
    if p.is_dir() {
        gridcheck_report::find_stored(p, "results.jsonl").unwrap_or_else(|| p.join("results.jsonl"))
    } else {
        p.to_path_buf()
    }
}

/// Whether two paths name one file (through links and `..` too).
fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

/// Every record of the files, a record written under a test's former name
/// moved to the test's name now when the checkout's spec loads (see
/// `TrialRecord::under_current_name`).
pub(crate) fn records(files: &[PathBuf], spec: Option<&Spec>) -> Result<Vec<TrialRecord>> {
    let mut all = Vec::new();
    for f in files {
        all.extend(load_jsonl(f)?);
    }
    if let Some(spec) = spec {
        gridcheck_report::under_current_names(&mut all, spec);
    }
    Ok(all)
}

/// The chosen runs of each file (see [`RunChoice`]), runs of one id in
/// several files (a fleet's shards) joined; with a header for each, saying
/// which run of its file it is and listing the others.
fn chosen_runs(
    files: &[PathBuf],
    spec: Option<&Spec>,
    choice: &RunChoice,
) -> Result<Vec<(String, RunRecords)>> {
    let mut out: Vec<(String, RunRecords)> = Vec::new();
    for f in files {
        let all = gridcheck_report::split_runs(records(std::slice::from_ref(f), spec)?);
        let name = f.display().to_string();
        let chosen = choice
            .pick(all.clone())
            .map_err(|e| format!("{name}: {e}"))?;
        for run in chosen {
            match out.iter_mut().find(|(_, r)| r.id == run.id) {
                Some((header, r)) => {
                    header.push_str(&format!("(and its records in {name})\n"));
                    r.records.extend(run.records);
                }
                None => out.push((gridcheck_docs::summary::run_header(&run, &all, &name), run)),
            }
        }
    }
    Ok(out)
}

/// The records of the chosen runs, each run's header on stderr.
fn chosen_records(a: &Args, spec: Option<&Spec>) -> Result<Vec<TrialRecord>> {
    let runs = chosen_runs(&a.files, spec, &a.runs)?;
    let mut all = Vec::new();
    for (header, run) in runs {
        eprint!("{header}");
        all.extend(run.records);
    }
    Ok(all)
}

/// The checkout's spec, or `None` with a note when it does not load (the
/// reports still come out, under the names the records were written with).
pub(crate) fn spec_if_it_loads() -> Option<Spec> {
    load_spec(&root())
        .inspect_err(|e| {
            eprintln!(
                "note: the spec does not load, so records keep the test names they were written under:\n{e}"
            )
        })
        .ok()
}

pub(crate) fn emit(out: &Option<PathBuf>, text: &str) -> Result<()> {
    match out {
        Some(p) => {
            std::fs::write(p, text).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
            println!("wrote {}", p.display());
            Ok(())
        }
        None => {
            use std::io::Write as _;
            // A closed pipe (`| head`) ends the output quietly.
            match std::io::stdout().lock().write_all(text.as_bytes()) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    Err(format!("cannot write the report: {e}"))
                }
                _ => Ok(()),
            }
        }
    }
}

pub fn run(args: &[String]) -> Result<()> {
    let (cmd, rest) = args.split_first().ok_or(USAGE)?;
    let a = parse(rest)?;
    // The spec orders each histogram's columns and gives each test its
    // name now; a report still comes out without it.
    if a.by_toolchain && cmd != "merge" {
        return Err(format!("--by-toolchain is an option of merge\n{USAGE}"));
    }
    let spec = spec_if_it_loads();
    match cmd.as_str() {
        "summary" if a.format == "json" => {
            // One summary a run, for scripts (the headers go to stderr).
            let runs: Vec<gridcheck_report::Summary> =
                chosen_runs(&a.files, spec.as_ref(), &a.runs)?
                    .into_iter()
                    .map(|(header, run)| {
                        eprint!("{header}");
                        gridcheck_report::Summary::of(&run.records)
                    })
                    .collect();
            let json = serde_json::json!({ "runs": runs });
            emit(&a.out, &format!("{json}\n"))
        }
        "summary" => {
            let mut text = String::new();
            for (header, run) in chosen_runs(&a.files, spec.as_ref(), &a.runs)? {
                if !text.is_empty() {
                    text.push('\n');
                }
                text += &header;
                text += &gridcheck_docs::summary::terminal(&run.records);
            }
            emit(&a.out, &text)
        }
        "markdown" => {
            let names: Vec<String> = a.files.iter().map(|f| f.display().to_string()).collect();
            let title = format!("gridcheck results: {}", names.join(", "));
            // The driver version from a machine.txt beside a results file.
            let driver = a.files.iter().find_map(|f| {
                let txt = std::fs::read_to_string(f.parent()?.join("machine.txt")).ok()?;
                gridcheck_docs::results::machine_txt_driver(&txt)
            });
            let md = gridcheck_docs::markdown_report::markdown(
                &title,
                &chosen_records(&a, spec.as_ref())?,
                spec.as_ref(),
                driver.as_deref(),
            );
            emit(&a.out, &md)
        }
        "junit" => emit(
            &a.out,
            &gridcheck_report::junit(&chosen_records(&a, spec.as_ref())?),
        ),
        "merge" => {
            let opts = MergeOptions {
                by_toolchain: a.by_toolchain,
                ..Default::default()
            };
            let m = Matrix::merge_files_with(&a.files, spec.as_ref(), opts)?;
            match a.format.as_str() {
                "md" => emit(&a.out, &m.to_markdown()),
                "json" => emit(&a.out, &(m.to_json() + "\n")),
                f => Err(format!("unknown format `{f}`: md or json")),
            }
        }
        other => Err(format!("unknown report `{other}`\n{USAGE}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Result<Args> {
        parse(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn files_and_options() {
        let a = args(&["a.jsonl", "--out", "m.md", "b.jsonl", "--format", "json"]).unwrap();
        assert_eq!(
            a.files,
            [PathBuf::from("a.jsonl"), PathBuf::from("b.jsonl")]
        );
        assert_eq!(a.out, Some(PathBuf::from("m.md")));
        assert_eq!(a.format, "json");
        assert_eq!(a.runs, RunChoice::Latest);
        assert_eq!(
            args(&["a", "--run", "3fa9"]).unwrap().runs,
            RunChoice::Id("3fa9".into())
        );
        assert_eq!(args(&["a", "--all-runs"]).unwrap().runs, RunChoice::All);
        assert!(args(&["a", "--by-toolchain"]).unwrap().by_toolchain);
        assert!(!args(&["a"]).unwrap().by_toolchain);
        assert!(
            run(&["summary".into(), "a".into(), "--by-toolchain".into()])
                .unwrap_err()
                .contains("--by-toolchain is an option of merge")
        );
        assert!(args(&["a", "--run"]).is_err());
        assert!(args(&[]).unwrap_err().contains("no results file"));
        assert!(args(&["a", "--out"]).is_err());
        assert!(args(&["a", "--bogus"]).unwrap_err().contains("--bogus"));
        // Never overwrite an input, however it is spelt.
        assert!(
            args(&["merge", "a.jsonl", "--out", "a.jsonl"])
                .unwrap_err()
                .contains("would be overwritten")
        );
        let here = std::env::current_dir().unwrap();
        let name = here.file_name().unwrap().to_string_lossy().into_owned();
        let other = format!("../{name}/Cargo.toml");
        assert!(
            args(&["Cargo.toml", "--out", &other])
                .unwrap_err()
                .contains("would be overwritten")
        );
        assert!(
            run(&["nope".into(), "a".into()])
                .unwrap_err()
                .contains("unknown report")
        );
    }

    /// A recorded run's folder (its compressed results) summarised as
    /// JSON, as scripts read it.
    #[test]
    fn a_recorded_run_summarised_as_json() {
        let run_dir = root().join("records/nvidia-h100-80gb-hbm3/2026-11-26.5");
        let out = std::env::temp_dir().join(format!("gc-summary-{}.json", std::process::id()));
        let s = |p: &std::path::Path| p.display().to_string();
        run(&[
            "summary".into(),
            s(&run_dir),
            "--format".into(),
            "json".into(),
            "--out".into(),
            s(&out),
        ])
        .unwrap();
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        let summary = &v["runs"][0];
        assert_eq!(summary["run_id"], "20261126T180934Z-d3f87120");
        let by_status: u64 = summary["statuses"]
            .as_object()
            .unwrap()
            .values()
            .map(|n| n.as_u64().unwrap())
            .sum();
        assert_eq!(Some(by_status), summary["trials"].as_u64());
        assert!(by_status > 400, "{summary}");
        assert_eq!(summary["failing"], 0);
        std::fs::remove_file(&out).unwrap();
    }

    #[test]
    fn merge_by_toolchain_shares_a_row_across_toolchains_and_refuses_a_clash() {
        let dir = std::env::temp_dir().join(format!("gc-merge-tc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let line = |release: &str, run: &str| {
            let mut r = TrialRecord::new(
                gridcheck_report::TrialId::sass(release, "sm_90", "r.a", "t"),
                gridcheck_report::Status::Pass,
                "m",
            );
            r.run_id = Some(run.into());
            r.to_json_line() + "\n"
        };
        let write = |name: &str, text: String| {
            let p = dir.join(name);
            std::fs::write(&p, text).unwrap();
            p.display().to_string()
        };
        let a = write("a.jsonl", line("13.0", "run-a"));
        let b = write("b.jsonl", line("13.5", "run-b"));
        let out = dir.join("m.md").display().to_string();
        let merge = |files: &[&str], by: bool| {
            let mut args: Vec<String> = vec!["merge".into()];
            args.extend(files.iter().map(|f| f.to_string()));
            args.extend(["--out".into(), out.clone()]);
            if by {
                args.push("--by-toolchain".into());
            }
            run(&args).map(|_| std::fs::read_to_string(&out).unwrap())
        };
        let plain = merge(&[&a, &b], false).unwrap();
        assert!(
            plain.contains("| sass/13.0/sm\\_90/r.a/t | pass | — |"),
            "{plain}"
        );
        let by = merge(&[&a, &b], true).unwrap();
        assert!(by.contains("| sass/sm\\_90/r.a/t | pass | pass |"), "{by}");
        // One run id for both toolchains: an error naming both records.
        let c = write("c.jsonl", line("13.5", "run-a"));
        let e = merge(&[&a, &c], true).unwrap_err();
        assert!(
            e.contains("`sass/13.0/sm_90/r.a/t`") && e.contains("`sass/13.5/sm_90/r.a/t`"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
