//! `cargo xtask report`: reports from any results file.
//!
//! ```text
//! report summary <results.jsonl>...           status counts and the notable trials
//! report markdown <results.jsonl>... [--out FILE]
//! report junit <results.jsonl>... [--out FILE]
//! report merge <results.jsonl>... [--out FILE] [--format md|json]
//! ```

use std::path::PathBuf;

use gridcheck_docs::matrix::Matrix;
use gridcheck_docs::results::load_jsonl;
use gridcheck_report::TrialRecord;

use crate::{Result, load_spec, root};

const USAGE: &str =
    "usage: cargo xtask report summary|markdown|junit <results.jsonl>... [--out FILE]
       cargo xtask report merge <results.jsonl>... [--out FILE] [--format md|json]";

struct Args {
    files: Vec<PathBuf>,
    out: Option<PathBuf>,
    format: String,
}

fn parse(args: &[String]) -> Result<Args> {
    let mut a = Args {
        files: Vec::new(),
        out: None,
        format: "md".into(),
    };
    let mut it = args.iter();
    while let Some(x) = it.next() {
        match x.as_str() {
            "--out" => a.out = Some(it.next().ok_or(USAGE)?.into()),
            "--format" => a.format = it.next().ok_or(USAGE)?.clone(),
            f if f.starts_with("--") => return Err(format!("unknown option `{f}`\n{USAGE}")),
            f => a.files.push(f.into()),
        }
    }
    if a.files.is_empty() {
        return Err(format!("no results file given\n{USAGE}"));
    }
    Ok(a)
}

fn records(files: &[PathBuf]) -> Result<Vec<TrialRecord>> {
    let mut all = Vec::new();
    for f in files {
        all.extend(load_jsonl(f)?);
    }
    Ok(all)
}

fn emit(out: &Option<PathBuf>, text: &str) -> Result<()> {
    match out {
        Some(p) => {
            std::fs::write(p, text).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
            println!("wrote {}", p.display());
            Ok(())
        }
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

pub fn run(args: &[String]) -> Result<()> {
    let (cmd, rest) = args.split_first().ok_or(USAGE)?;
    let a = parse(rest)?;
    match cmd.as_str() {
        "summary" => emit(
            &a.out,
            &gridcheck_docs::summary::terminal(&records(&a.files)?),
        ),
        "markdown" => {
            // The spec orders each histogram's columns; a report still comes
            // out without it.
            let spec = load_spec(&root()).ok();
            let names: Vec<String> = a.files.iter().map(|f| f.display().to_string()).collect();
            let title = format!("gridcheck results: {}", names.join(", "));
            emit(
                &a.out,
                &gridcheck_docs::markdown_report::markdown(
                    &title,
                    &records(&a.files)?,
                    spec.as_ref(),
                ),
            )
        }
        "junit" => emit(&a.out, &gridcheck_report::junit(&records(&a.files)?)),
        "merge" => {
            let m = Matrix::merge_files(&a.files)?;
            match a.format.as_str() {
                "md" => emit(&a.out, &m.to_markdown()),
                "json" => emit(&a.out, &(m.to_json() + "\n")),
                f => Err(format!("unknown format `{f}`: md or json")),
            }
        }
        other => Err(format!("unknown report `{other}`\n{USAGE}")),
    }
}
