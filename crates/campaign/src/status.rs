//! Where a campaign run in parts stands: `gridcheck-campaign status RES
//! [--phase run|leads|plain]` and the last line of a part (`--part`), one
//! JSON line read from the results' own files, never from a log:
//!
//! - `run`: the programs the budget did not reach (their records'
//!   reason starts `not reached:`, as `--resume` reads them);
//! - `leads`: the findings still `open` in `findings.jsonl`;
//! - `plain`: the findings' plain programs without a finished
//!   characterization (`sweep.rs`);
//! - no phase: `run` and `leads` together, the whole campaign.
//!
//! `run` and `leads` are done when nothing is left and `summary.json`
//! holds as many programs as the records (a part killed before it wrote
//! its summary is not done); the exit code says it: 0 done, 3 work left
//! (run the part again), 2 bad input, with the file and line.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::campaign::{RECORDS, not_reached, read_lines};
use crate::ending::LeadEnd;
use crate::findings::ProgramRecord;
use crate::report::Summary;
use crate::sweep;

/// The exit code of a part, or of `status`, with work left.
pub const WORK_LEFT: u8 = 3;

/// Which work `status` counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    Run,
    Leads,
    Plain,
    /// Run and leads.
    Campaign,
}

impl Work {
    pub fn parse(v: &str) -> Result<Work, String> {
        match v {
            "run" => Ok(Work::Run),
            "leads" => Ok(Work::Leads),
            "plain" => Ok(Work::Plain),
            _ => Err(format!("--phase run|leads|plain, not `{v}`")),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Work::Run => "run",
            Work::Leads => "leads",
            Work::Plain => "plain",
            Work::Campaign => "campaign",
        }
    }
}

/// The line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Status {
    pub phase: String,
    pub results: String,
    /// Programs, findings or plain programs left.
    pub left: usize,
    /// Whether `summary.json` is there and counts every record (always
    /// for `plain`).
    pub summarized: bool,
    pub done: bool,
}

/// Where the work of `work` stands in the results folder `res`.
pub fn of(res: &Path, work: Work) -> Result<Status, String> {
    if !res.is_dir() {
        return Err(format!("{}: no results folder", res.display()));
    }
    let (left, summarized) = match work {
        Work::Plain => (sweep::left(res)?, true),
        Work::Leads => (leads_left(res)?, summary(res)?.is_some()),
        Work::Run | Work::Campaign => {
            let summary = summary(res)?;
            let records = records(res, summary.as_ref())?;
            let mut left = records.iter().filter(|r| not_reached(r)).count();
            if work == Work::Campaign {
                left += leads_left(res)?;
            }
            (left, summary.is_some_and(|s| s.programs == records.len()))
        }
    };
    Ok(Status {
        phase: work.name().into(),
        results: res.display().to_string(),
        left,
        summarized,
        done: left == 0 && summarized,
    })
}

fn leads_left(res: &Path) -> Result<usize, String> {
    let ends: Vec<LeadEnd> = read_lines(&res.join("findings.jsonl"))?;
    Ok(ends.iter().filter(|e| e.ended == "open").count())
}

/// `summary.json`, where the part wrote it.
fn summary(res: &Path) -> Result<Option<Summary>, String> {
    let f = res.join("summary.json");
    let text = match std::fs::read_to_string(&f) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", f.display())),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| format!("{}: {e}", f.display()))
}

/// The programs' records (`campaign.jsonl`), read once for what is left
/// and whether `summary` counts them all.
fn records(res: &Path, summary: Option<&Summary>) -> Result<Vec<ProgramRecord>, String> {
    let records = res.join(RECORDS);
    if let Some(s) = summary.filter(|s| s.programs > 0 && !records.is_file()) {
        // A recorded campaign keeps its records packed: this folder cannot
        // say whether its parts are done.
        return Err(format!(
            "{}: missing, while {} counts {} programs (unpack the records into the folder first)",
            records.display(),
            res.join("summary.json").display(),
            s.programs
        ));
    }
    read_lines(&records)
}

/// Copies the results folder `res` into `to/<its name>` (what was there
/// before replaced), the copy a GPU machine gives back.
pub fn copy_results(res: &Path, to: &Path) -> Result<PathBuf, String> {
    let name = res
        .file_name()
        .ok_or_else(|| format!("{}: no name to copy it by", res.display()))?;
    let dest = to.join(name);
    if dest.exists() {
        std::fs::remove_dir_all(&dest)
            .map_err(|e| format!("cannot remove {}: {e}", dest.display()))?;
    }
    copy_tree(res, &dest)?;
    Ok(dest)
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("cannot create {}: {e}", to.display()))?;
    let entries =
        std::fs::read_dir(from).map_err(|e| format!("cannot read {}: {e}", from.display()))?;
    for e in entries {
        let e = e.map_err(|e| format!("cannot read {}: {e}", from.display()))?;
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if src.is_dir() {
            copy_tree(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst)
                .map_err(|e| format!("cannot copy {} to {}: {e}", src.display(), dst.display()))?;
        }
    }
    Ok(())
}

/// `status RES [--phase run|leads|plain]`'s words: the results folder
/// and the work asked about.
pub fn parse(argv: &[String]) -> Result<(PathBuf, Work), String> {
    let (mut res, mut work) = (None, Work::Campaign);
    let mut it = argv.iter();
    while let Some(x) = it.next() {
        match x.as_str() {
            "--phase" => work = Work::parse(it.next().ok_or("--phase needs a value")?)?,
            s if s.starts_with('-') => return Err(format!("unknown argument `{s}`")),
            s if res.is_none() => res = Some(PathBuf::from(s)),
            s => return Err(format!("one results folder, not also `{s}`")),
        }
    }
    Ok((res.ok_or("the results folder is missing")?, work))
}

/// `status RES [--phase run|leads|plain]`: the line printed; `Ok(true)`
/// when done.
pub fn main(argv: &[String]) -> Result<bool, String> {
    let (res, work) = parse(argv)?;
    print(&of(&res, work)?)
}

/// Prints the line; whether it says done.
pub fn print(s: &Status) -> Result<bool, String> {
    println!("{}", serde_json::to_string(s).map_err(|e| e.to_string())?);
    Ok(s.done)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("gridcheck-status-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn record(name: &str, outcome: &str) -> String {
        format!(
            r#"{{"batch":"b0000","index":0,"name":"{name}","class":"not-run","detail":"","shape":"s","known_hang":null,"oracle":"axiom","outcome":{outcome}}}"#
        )
    }

    fn summary(programs: usize, open: usize) -> String {
        format!(
            r#"{{"campaign": "c", "device": null, "programs": {programs}, "ran": 0, "not_run": {{}}, "classes": {{}}, "compile_s": 0.0, "gpu_s": 0.0, "leads_gpu_s": 0.0, "programs_per_gpu_minute": 0.0, "environment": {{"instances": 1, "launches": 1, "tuning": null, "max_delay_cycles": 0, "stress_words": 0, "permute": true, "line_burst": 0}}, "findings": {open}, "findings_by_class": {{}}, "ended": {{}}}}"#
        )
    }

    fn finding(ended: &str) -> String {
        format!(
            r#"{{"class":"hang","shape":"s-{ended}","programs":1,"first":"p","batch":"b0000","index":0,"detail":"d","ended":"{ended}","confirmed_alone":false,"alone":{{"runs":0,"shown":0,"instances":0}}}}"#
        )
    }

    #[test]
    fn the_work_left_is_read_from_the_results_files() {
        let d = dir("left");
        let not_reached = r#"{"NotRun":{"reason":"not reached: the budget"}}"#;
        let capped = r#"{"NotRun":{"reason":"skipped: a hang"}}"#;
        let lines = [
            record("a", not_reached),
            record("b", capped),
            record("c", not_reached),
        ];
        std::fs::write(d.join(RECORDS), lines.join("\n") + "\n").unwrap();
        // No summary yet: not done, whatever is left.
        let s = of(&d, Work::Run).unwrap();
        assert_eq!((s.left, s.summarized, s.done), (2, false, false));
        std::fs::write(d.join("summary.json"), summary(3, 0)).unwrap();
        assert_eq!(of(&d, Work::Run).unwrap().left, 2);
        // Every program reached, and summarized: done.
        std::fs::write(d.join(RECORDS), record("b", capped) + "\n").unwrap();
        let s = of(&d, Work::Run).unwrap();
        assert_eq!(
            (s.left, s.summarized, s.done),
            (0, false, false),
            "the summary counts 3"
        );
        std::fs::write(d.join("summary.json"), summary(1, 0)).unwrap();
        let s = of(&d, Work::Run).unwrap();
        assert_eq!((s.left, s.done, s.phase.as_str()), (0, true, "run"));
        // A summary whose records are not in the folder (a recorded
        // campaign keeps them packed): an error naming the file, not "left".
        std::fs::rename(d.join(RECORDS), d.join("kept")).unwrap();
        let e = of(&d, Work::Run).unwrap_err();
        assert!(e.contains(RECORDS) && e.contains("missing"), "{e}");
        std::fs::rename(d.join("kept"), d.join(RECORDS)).unwrap();
        // The leads: the findings still open.
        let ends = [finding("open"), finding("known"), finding("open")];
        std::fs::write(d.join("findings.jsonl"), ends.join("\n")).unwrap();
        let s = of(&d, Work::Leads).unwrap();
        assert_eq!((s.left, s.done), (2, false));
        assert_eq!(of(&d, Work::Campaign).unwrap().left, 2);
        std::fs::write(d.join("findings.jsonl"), finding("closed")).unwrap();
        assert!(of(&d, Work::Campaign).unwrap().done);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn bad_results_are_named_by_file_and_line() {
        let d = dir("bad");
        std::fs::write(
            d.join(RECORDS),
            record("a", r#"{"Hang":{"message":"m"}}"#) + "\n{\"batch\": 3}\n",
        )
        .unwrap();
        let e = of(&d, Work::Run).unwrap_err();
        assert!(
            e.contains(&format!("{}:2:", d.join(RECORDS).display())),
            "{e}"
        );
        std::fs::write(d.join("findings.jsonl"), "{\"class\":\"hang\"}\n").unwrap();
        let e = of(&d, Work::Leads).unwrap_err();
        assert!(
            e.contains("findings.jsonl:1:") && e.contains("missing field"),
            "{e}"
        );
        let e = of(&d.join("nope"), Work::Run).unwrap_err();
        assert!(e.ends_with("nope: no results folder"), "{e}");
        assert!(Work::parse("lead").unwrap_err().contains("`lead`"));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn the_results_are_copied_whole_in_place_of_an_older_copy() {
        let d = dir("copy");
        let res = d.join("fuzz");
        std::fs::create_dir_all(res.join("findings")).unwrap();
        std::fs::write(res.join("findings/000-hang.yaml"), "y").unwrap();
        std::fs::write(res.join(RECORDS), "r").unwrap();
        let to = d.join("out");
        std::fs::create_dir_all(to.join("fuzz")).unwrap();
        std::fs::write(to.join("fuzz/stale"), "s").unwrap();
        let dest = copy_results(&res, &to).unwrap();
        assert_eq!(dest, to.join("fuzz"));
        assert_eq!(
            std::fs::read_to_string(dest.join("findings/000-hang.yaml")).unwrap(),
            "y"
        );
        assert!(dest.join(RECORDS).is_file() && !dest.join("stale").exists());
        let _ = std::fs::remove_dir_all(&d);
    }
}
