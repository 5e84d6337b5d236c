//! `conformance report summary|mutants|rates FILE [--format json|text]`:
//! what the scripts of a GPU machine without Rust read, as JSON (the
//! default), or as text for a terminal. The scripts under `conformance/`
//! and `lab/sessions/` call this rather than parse a log.
//!
//! - `summary RESULTS [--all-runs] [--every-trial]`: the latest run of a
//!   results file (`gridcheck_report::Summary`: counts by status and
//!   tier, the trials that fail the run, the notable ones; with
//!   `--every-trial`, each trial's status and message). JSON: `{"file",
//!   "runs_in_file", "runs": [summary...]}`.
//! - `mutants MUTANTS...`: the mutation score of mutants' records
//!   (`gridcheck_report::Score`, a survivor that an `unobserved` fact of
//!   `conformance/facts/` covers where it ran listed as equivalent).
//!   `--equivalence shape` (the default): a fact's shape matches the
//!   mutated program, as the current spec makes it, and its envelope
//!   holds the run; `--equivalence name`: the fact names the mutant or its
//!   test (the rule before facts had shapes), to compare.
//! - `rejudge RESULTS...`: today's facts applied to a recorded run
//!   (`rejudge.rs`): each record's status before the facts, judged again
//!   with its test's program in the current spec. JSON lines out, the
//!   changed statuses and the summary on stderr; with `--format text`,
//!   the changes and the summary.
//! - `rates RATES`: the litmus instance rates `litmus_smoke` appended
//!   (`GC_RATES`), per family and mode (`gridcheck_report::rates`).
//! - `tuning MUTANTS-TUNE --search FILE --base FILE`: the tuned file a
//!   search (`--mutants --tune FILE`) makes for the GPU it ran on, as TOML
//!   (`gridcheck_report::choose`: the most kills on the tests the search
//!   chooses on, then the most a GPU second; the extra environments of the
//!   base file, the one the GPU ran under before).
//!
//! Exit status: 0, or 2 with the reason on stderr for an input that cannot
//! be read or an unknown option.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::rejudge::{read, warn};
use gridcheck_report::rates::{RateRecord, rate_groups};
use gridcheck_report::{Equivalence, Facts, MutantRecord, Score, Summary, read_json_lines};

const USAGE: &str =
    "usage: conformance report summary RESULTS [--all-runs] [--every-trial] [--format json|text]
       conformance report mutants MUTANTS... [--equivalence shape|name] [--root DIR] [--format json|text]
       conformance report rejudge RESULTS... [--root DIR] [--format json|text]
       conformance report rates RATES [--format json|text]
       conformance report tuning MUTANTS-TUNE --search FILE --base FILE
JSON by default (what scripts read); --format text for a terminal.";

#[derive(Debug)]
struct Args {
    files: Vec<PathBuf>,
    text: bool,
    all_runs: bool,
    every_trial: bool,
    root: PathBuf,
    search: Option<PathBuf>,
    base: Option<PathBuf>,
    /// `--equivalence name`: a survivor equivalent by a fact's name.
    by_name: bool,
}

fn parse(args: &[String], default_root: &Path) -> Result<Args, String> {
    let mut a = Args {
        files: Vec::new(),
        text: false,
        all_runs: false,
        every_trial: false,
        root: default_root.to_path_buf(),
        search: None,
        base: None,
        by_name: false,
    };
    let mut it = args.iter();
    while let Some(x) = it.next() {
        match x.as_str() {
            "--format" => match it.next().map(String::as_str) {
                Some("json") => a.text = false,
                Some("text") => a.text = true,
                other => return Err(format!("--format takes json or text, not {other:?}")),
            },
            "--all-runs" => a.all_runs = true,
            "--every-trial" => a.every_trial = true,
            "--root" => a.root = it.next().ok_or("--root needs a folder")?.into(),
            "--search" => a.search = Some(it.next().ok_or("--search needs a file")?.into()),
            "--base" => a.base = Some(it.next().ok_or("--base needs a file")?.into()),
            "--equivalence" => match it.next().map(String::as_str) {
                Some("shape") => a.by_name = false,
                Some("name") => a.by_name = true,
                other => return Err(format!("--equivalence takes shape or name, not {other:?}")),
            },
            f if f.starts_with('-') => return Err(format!("unknown option `{f}`")),
            f => a.files.push(f.into()),
        }
    }
    if a.files.is_empty() {
        return Err("name a file".into());
    }
    Ok(a)
}

/// The `report` subcommand, `argv` after `report`.
pub(crate) fn main(argv: &[String], default_root: &Path) -> ExitCode {
    let Some((what, rest)) = argv.split_first() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let out = parse(rest, default_root).and_then(|a| match what.as_str() {
        "summary" => summary(&a),
        "mutants" => mutants(&a),
        "rates" => rates(&a),
        "rejudge" => crate::rejudge::rejudge(&a.files, &a.root, a.text),
        "tuning" => tuning(&a),
        o => Err(format!("unknown report `{o}`")),
    });
    match out {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn json(v: &impl serde::Serialize) -> Result<String, String> {
    serde_json::to_string(v)
        .map(|s| s + "\n")
        .map_err(|e| e.to_string())
}

fn summary(a: &Args) -> Result<String, String> {
    let [file] = a.files.as_slice() else {
        return Err("summary reads one results file".into());
    };
    let read = gridcheck_report::read_results(&read(file)?);
    warn(file, &read.skipped);
    let mut runs = gridcheck_report::split_runs(read.records);
    let in_file = runs.len();
    if !a.all_runs && in_file > 1 {
        runs.drain(..in_file - 1);
    }
    let covers = fact_covers(file, &a.root)?;
    let summaries: Vec<Summary> = runs
        .iter()
        .map(|r| {
            let s = Summary::of(&r.records).with_facts(&covers);
            if a.every_trial {
                s.with_every_trial(&r.records)
            } else {
                s
            }
        })
        .collect();
    if a.text {
        let mut t = String::new();
        for s in &summaries {
            t += &format!(
                "run {} of {}:\n",
                s.run_id.as_deref().unwrap_or("-"),
                file.display()
            );
            t += &s.text();
        }
        return Ok(t);
    }
    json(&serde_json::json!({
        "file": file.display().to_string(),
        "runs_in_file": in_file,
        "runs": summaries,
    }))
}

/// What each fact of the checkout at `root` covers (`summary::covers`),
/// with the mutants recorded beside the results `file`; none where `root`
/// holds no facts (a results file read outside a checkout).
fn fact_covers(file: &Path, root: &Path) -> Result<Vec<gridcheck_report::FactCover>, String> {
    let dir = root.join(gridcheck_report::FACTS_DIR);
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let spec = crate::rejudge::spec(root)?;
    let facts = crate::facts::load_checked(&dir, root, Some(&spec))?;
    let beside = file.parent().unwrap_or(Path::new("."));
    let mutants: Vec<MutantRecord> = match gridcheck_report::find_stored(beside, "mutants.jsonl") {
        Some(m) => lines_of(&[m], "a mutant record")?,
        None => Vec::new(),
    };
    crate::summary::covers(&spec, &facts, &mutants, root)
}

/// The JSON-lines records of `files`, each skipped line named on stderr.
fn lines_of<T: serde::de::DeserializeOwned>(
    files: &[PathBuf],
    what: &str,
) -> Result<Vec<T>, String> {
    let mut records = Vec::new();
    for f in files {
        let read = read_json_lines::<T>(&read(f)?, what);
        warn(f, &read.skipped);
        records.extend(read.records);
    }
    Ok(records)
}

fn mutants(a: &Args) -> Result<String, String> {
    let records: Vec<MutantRecord> = lines_of(&a.files, "a mutant record")?;
    let facts = Facts::load_all(&a.root.join(gridcheck_report::FACTS_DIR), &a.root)?;
    let programs = if a.by_name {
        BTreeMap::new()
    } else {
        gridcheck_mutate::programs(&crate::rejudge::spec(&a.root)?)
    };
    let eq = if a.by_name {
        Equivalence::Name
    } else {
        Equivalence::Shape(&programs)
    };
    let score = Score::judged_by(&records, Some(&facts), eq);
    if a.text {
        let from = records
            .iter()
            .find_map(|r| r.environment.as_ref()?.tuning_file.clone())
            .unwrap_or_else(|| "as recorded".into());
        return Ok(gridcheck_report::score_text(&records, &score, false, &from));
    }
    json(&serde_json::json!({
        "killed": score.overall.killed,
        "mutants": score.overall.mutants,
        "percent": score.overall.percent(),
        "equivalence": score.equivalence,
        "score": score,
    }))
}

fn rates(a: &Args) -> Result<String, String> {
    let records: Vec<RateRecord> = lines_of(&a.files, "a rate record")?;
    let groups = rate_groups(&records);
    if a.text {
        return Ok(groups.iter().map(|g| g.line() + "\n").collect());
    }
    json(&serde_json::json!({ "runs": records.len(), "groups": groups }))
}

fn tuning(a: &Args) -> Result<String, String> {
    let (Some(search), Some(base)) = (&a.search, &a.base) else {
        return Err("tuning needs --search FILE and --base FILE".into());
    };
    let records: Vec<MutantRecord> = lines_of(&a.files, "a mutant record")?;
    let text = std::fs::read_to_string(search)
        .map_err(|e| format!("cannot read {}: {e}", search.display()))?;
    let points = gridcheck_report::parse_search(&text, search)?;
    let base = gridcheck_report::Tuning::load(base)?;
    let (name, figures) = gridcheck_report::choose(&records)
        .ok_or("the records hold no run of a search point: not a search's records")?;
    let point = points
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| format!("the chosen point `{name}` is not in {}", search.display()))?;
    let env = records.iter().find_map(|r| r.environment.as_ref());
    let header = format!(
        "The testing environment of the {}, chosen by `conformance/mutants-gpu.sh --tune {}`\n\
         (driver {}, commit {}) and written by `conformance report tuning`.",
        env.map_or("GPU", |e| e.gpu.as_str()),
        search.display(),
        env.and_then(|e| e.driver_version.as_deref())
            .unwrap_or("unknown"),
        records
            .iter()
            .find_map(|r| r.commit.as_deref())
            .unwrap_or("unknown"),
    );
    gridcheck_report::tuned_file(point, &figures, &base, &header)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("gc-report-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn args(files: &[&Path], extra: &[&str]) -> Args {
        let mut v: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        v.extend(extra.iter().map(|s| s.to_string()));
        parse(&v, Path::new("/nonexistent")).unwrap()
    }

    #[test]
    fn a_summary_of_the_latest_run_as_json_with_every_trial() {
        let d = temp("summary");
        let f = d.join("results.jsonl");
        let line = |run: &str, test: &str, status: &str| {
            format!(
                r#"{{"trial":"gpu/sm_90/r/{test}","tier":"gpu","rule":"r","test":"{test}","status":"{status}","message":"killed after 3 s\nmore","run_id":"{run}","run_started":"2026-11-2{run}T00:00:00Z"}}"#
            ) + "\n"
        };
        let text = line("1", "a", "pass") + &line("2", "a", "timeout") + &line("2", "b", "pass");
        std::fs::write(&f, text).unwrap();
        let v: serde_json::Value =
            serde_json::from_str(&summary(&args(&[&f], &["--every-trial"])).unwrap()).unwrap();
        assert_eq!(v["runs_in_file"], 2);
        let run = &v["runs"][0];
        assert_eq!(
            (run["run_id"].as_str(), run["failing"].as_u64()),
            (Some("2"), Some(1))
        );
        assert_eq!(run["every_trial"][0]["status"], "timeout");
        assert_eq!(run["every_trial"][0]["message"], "killed after 3 s\nmore");
        let all: serde_json::Value =
            serde_json::from_str(&summary(&args(&[&f], &["--all-runs"])).unwrap()).unwrap();
        assert_eq!(all["runs"].as_array().unwrap().len(), 2);
        let t = summary(&args(&[&f], &["--format", "text"])).unwrap();
        assert!(t.starts_with("run 2 of ") && t.contains("timeout"), "{t}");
        assert!(
            !t.contains("what each known fact covers"),
            "no facts here: {t}"
        );
        let e = summary(&args(&[&d.join("missing.jsonl")], &[])).unwrap_err();
        assert!(e.contains("missing.jsonl"), "{e}");
        // In the checkout: a line a fact, its counts as the site shows them.
        let root = gridcheck_toolchain::checkout_root(env!("CARGO_MANIFEST_DIR"));
        let mut in_checkout = args(&[&f], &["--format", "text"]);
        in_checkout.root = root.clone();
        let t = summary(&in_checkout).unwrap();
        let facts =
            gridcheck_report::Facts::load_all(&root.join("conformance/facts"), &root).unwrap();
        let block = &t[t
            .find("what each known fact covers")
            .expect("the facts' block")..];
        assert_eq!(block.lines().count(), 1 + facts.entries.len(), "{block}");
        assert!(
            block.contains("  gpu/sm_90/c2-tail-sees-other-thread-write-after-trigger (discrepancy): tests 1 by name, "),
            "{block}"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn rates_summarised_per_family_and_mode() {
        let d = temp("rates");
        let f = d.join("rates.jsonl");
        std::fs::write(
            &f,
            "{\"test\":\"pdl-a\",\"mode\":\"plain\",\"instances\":100,\"elapsed_s\":2.0,\"launch_s\":1.0,\"hits\":0}\nnot json\n",
        )
        .unwrap();
        let v: serde_json::Value =
            serde_json::from_str(&rates(&args(&[&f], &[])).unwrap()).unwrap();
        assert_eq!(v["runs"], 1);
        assert_eq!(v["groups"][0]["family"], "pdl");
        assert_eq!(v["groups"][0]["median"], 100.0);
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// The H200's committed mutants (2026-11-27.7): the same score by
    /// shape as by name (112 of 112 killed, the same 16 equivalent, the
    /// held-out quarter 46 of 46); a run under an environment no envelope
    /// holds makes none equivalent by shape, the same by name.
    #[test]
    fn the_h200s_mutants_by_shape_and_by_name() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let file = root.join("records/nvidia-h200/2026-11-27.7/mutants.jsonl.gz");
        let score = |file: &Path, eq: &str| -> serde_json::Value {
            let mut a = args(&[file], &["--equivalence", eq]);
            a.root = root.clone();
            serde_json::from_str(&mutants(&a).unwrap()).unwrap()
        };
        let equivalent = |v: &serde_json::Value| -> Vec<String> {
            v["score"]["equivalent"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["mutant"].as_str().unwrap().to_string())
                .collect()
        };
        let (shape, name) = (score(&file, "shape"), score(&file, "name"));
        for v in [&shape, &name] {
            assert_eq!(
                (v["killed"].as_u64(), v["mutants"].as_u64()),
                (Some(112), Some(112))
            );
            assert_eq!(v["score"]["held_out"]["killed"], 46);
            assert_eq!(v["score"]["held_out"]["mutants"], 46);
        }
        assert_eq!(shape["equivalence"], "shape");
        assert_eq!(equivalent(&shape).len(), 16);
        assert_eq!(equivalent(&shape), equivalent(&name));
        // Outside every envelope: another tuned file.
        let d = temp("envelope");
        let other = d.join("mutants.jsonl");
        let text = String::from_utf8(read(&file).unwrap()).unwrap();
        std::fs::write(
            &other,
            text.replace("conformance/tuning/nvidia-h200.toml", "mine.toml"),
        )
        .unwrap();
        let (shape, name) = (score(&other, "shape"), score(&other, "name"));
        assert_eq!(equivalent(&shape), Vec::<String>::new());
        assert_eq!(shape["mutants"], 128);
        assert_eq!(equivalent(&name).len(), 16);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn options_are_checked() {
        let p = |v: &[&str]| {
            parse(
                &v.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
                Path::new("."),
            )
        };
        assert!(p(&[]).unwrap_err().contains("name a file"));
        assert!(p(&["f", "--format", "xml"]).is_err());
        assert!(p(&["f", "--bogus"]).unwrap_err().contains("--bogus"));
        assert!(p(&["f", "--format", "text"]).unwrap().text);
    }
}
