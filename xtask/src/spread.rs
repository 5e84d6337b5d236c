//! `cargo xtask report spread INPUT... [--out FILE]`: the run-to-run
//! spread of one GPU (`gridcheck_report::spread`), from several runs of the
//! suite on it, written as its baseline, by default
//! `conformance/spread/<gpu-slug>.json`, which `report diff` then reads
//! for a NEW run of that GPU. INPUT: a results file (as written or
//! compressed) or a run folder; every run a file holds counts.

use std::path::{Path, PathBuf};

use gridcheck_report::RunRecords;
use gridcheck_report::spread::{SPREAD_DIR, Spread};

use crate::report::spec_if_it_loads;
use crate::{Result, root};

const USAGE: &str = "usage: cargo xtask report spread INPUT... [--out FILE]
  the run-to-run spread of one GPU from two runs or more of the suite on it (INPUT: a results
  file, .jsonl or .jsonl.gz, or a run folder; every run of a file counts), written to FILE
  (default conformance/spread/<gpu-slug>.json), which report diff reads for that GPU's runs";

/// The baseline `report diff` uses for a run of `gpu`, when there is one.
pub fn baseline_path(root: &Path, gpu: &str) -> PathBuf {
    root.join(SPREAD_DIR)
        .join(format!("{}.json", gridcheck_report::slug(gpu)))
}

/// Reads a baseline, or says what is wrong with it, naming the file.
pub fn load(path: &Path) -> Result<Spread> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Spread::parse(&text).map_err(|e| format!("{}: not a spread baseline: {e}", path.display()))
}

pub fn run(args: &[String]) -> Result<()> {
    let (mut inputs, mut out) = (Vec::new(), None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--out" => out = Some(PathBuf::from(it.next().ok_or(USAGE)?)),
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            f if f.starts_with("--") => return Err(format!("unknown option `{f}`\n{USAGE}")),
            f => inputs.push(crate::report::results_of(Path::new(f))),
        }
    }
    let spec = spec_if_it_loads();
    let mut runs: Vec<(String, RunRecords)> = Vec::new();
    for f in &inputs {
        let records = crate::report::records(std::slice::from_ref(f), spec.as_ref())?;
        let name = relative(f);
        for r in gridcheck_report::split_runs(records) {
            runs.push((format!("{name}@{}", r.id), r));
        }
    }
    let spread = Spread::of(&runs)?;
    let out = out.unwrap_or_else(|| baseline_path(&root(), &spread.gpu));
    let text = serde_json::to_string_pretty(&spread).map_err(|e| e.to_string())? + "\n";
    if let Some(d) = out.parent() {
        std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
    }
    std::fs::write(&out, text).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    let rated = spread.trials.values().filter(|t| t.rate.is_some()).count();
    println!(
        "wrote {}: {} runs of {}, {} trials ({rated} with a histogram in every run or some)",
        out.display(),
        spread.runs.len(),
        spread.gpu,
        spread.trials.len()
    );
    Ok(())
}

/// A path relative to the checkout when under it.
fn relative(p: &Path) -> String {
    let r = root();
    let abs = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let base = std::fs::canonicalize(&r).unwrap_or(r);
    abs.strip_prefix(&base)
        .map(|x| x.display().to_string())
        .unwrap_or_else(|_| p.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two runs of a GPU into a baseline, then `report diff` of the first
    /// against a copy of the second reads it for NEW's GPU (`--spread`):
    /// no regression; without it the same diff lists the same changes.
    #[test]
    fn a_baseline_from_two_runs_is_read_by_report_diff() {
        let dir = std::env::temp_dir().join(format!("gc-spread-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let line = |run: &str, pos: u64| {
            format!(
                r#"{{"trial":"gpu/sm_90/cdp2.x/t","tier":"gpu","rule":"cdp2.x","test":"t","status":"pass","message":"m","environment":{{"gpu":"GPU X","sm":"sm_90","driver":"13.0"}},"hardware":{{"rows":[{{"state":{{"r0":0}},"count":{},"satisfies":false,"modeled":true}},{{"state":{{"r0":1}},"count":{pos},"satisfies":true,"modeled":true}}],"positive":{pos},"negative":{},"observation":"sometimes","instances":1000,"launch_failures":0,"first_launch_error":null,"elapsed_s":1.0,"seed":0}},"run_id":"{run}"}}"#,
                1000 - pos,
                1000 - pos
            ) + "\n"
        };
        let (a, b) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
        std::fs::write(&a, line("ra", 100)).unwrap();
        std::fs::write(&b, line("rb", 300)).unwrap();
        let out = dir.join("spread.json");
        let s = |p: &Path| p.display().to_string();
        run(&[s(&a), s(&b), "--out".into(), s(&out)]).unwrap();
        let spread = load(&out).unwrap();
        assert_eq!((spread.gpu.as_str(), spread.runs.len()), ("GPU X", 2));
        assert!(
            spread.runs[0].source.ends_with("a.jsonl@ra"),
            "{:?}",
            spread.runs
        );
        // 10 % and 30 %: a move between them is within the spread.
        let json = dir.join("diff.json");
        let diff = |extra: &[&str]| {
            let mut args = vec![s(&a), s(&b), "--json".into(), "--out".into(), s(&json)];
            args.extend(extra.iter().map(|x| x.to_string()));
            crate::diff::run(&args);
            serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(&json).unwrap())
                .unwrap()
        };
        let with = diff(&["--spread", &s(&out)]);
        assert_eq!(with["regressions"], 0, "{with}");
        assert_eq!(with["spread"], "GPU X, 2 runs");
        let c = &with["histogram_changes"][0];
        assert_eq!(c["kind"], "rate-moved");
        assert!(
            c["spread"]
                .as_str()
                .unwrap()
                .starts_with("within the spread"),
            "{c}"
        );
        let without = diff(&["--no-spread"]);
        assert!(without.get("spread").is_none(), "{without}");
        // One run is not a spread.
        let e = run(&[s(&a), "--out".into(), s(&out)]).unwrap_err();
        assert!(e.contains("two runs or more"), "{e}");
        // A damaged baseline is an error naming it.
        std::fs::write(&out, "{").unwrap();
        assert!(load(&out).unwrap_err().contains("spread.json"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
