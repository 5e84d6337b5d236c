//! `cargo xtask record RUN [--date YYYY-MM-DD] [--gpu SLUG] [--dry-run]`:
//! publishes a GPU run's output folder (what `conformance/gpu-run.sh` left
//! in `$OUT`) as a recorded run, `records/<gpu-slug>/<date>[.N]/`.
//!
//! - The folder is named for the GPU of its records and the date (today
//!   in UTC unless `--date`); a date already recorded gets the next free
//!   `.2`, `.3`, ... so that runs are never mixed or overwritten.
//! - What the site and the reports read is kept, small: every `*.jsonl`
//!   (`results.jsonl`, `mutants.jsonl`, ...) compressed with gzip
//!   (`results.jsonl.gz`: every reader decompresses,
//!   `gridcheck_report::read_stored`), and as text `machine.txt`,
//!   `fault-check.txt`, `*.md` and `*.json` (a script's summary).
//! - `golden.txt` is written from `results.jsonl`
//!   (`gridcheck_report::golden`): one line a trial, the environment once,
//!   for a reviewer's diff.
//! - `--golden DIR...` (re)writes the golden of runs already recorded.
//! - A run under several toolchains (`conformance/gpu-toolchains.sh`)
//!   has its variants in `toolchains/<name>/` (`nvcc-13.5`): each keeps its
//!   records and `machine.txt` there as a run does, gets its `golden.txt` and
//!   `diff-from-built.md` (`report diff` from the run to the variant).
//! - Everything else (raw logs, experiment folders) is packed into
//!   `logs.tar.xz`, so that raw logs do not sit in the tree as text. A
//!   recorded run stays under `gridcheck_report::RUN_BUDGET` bytes
//!   (`crates/report/tests/records.rs` checks every one).

use std::path::{Path, PathBuf};
use std::process::Command;

use gridcheck_docs::results::{RESULTS, VARIANTS};
use gridcheck_report::{golden, read_results_file, slug, utc_date, valid_date};

use crate::{Result, root};

const USAGE: &str = "usage: cargo xtask record RUN_DIR [--date YYYY-MM-DD] [--gpu SLUG] [--dry-run]
  publishes RUN_DIR (results.jsonl and the run's logs) as records/<gpu-slug>/<date>[.N]/
       cargo xtask record --golden RECORDED_DIR...
  (re)writes golden.txt of runs already recorded, from their results.jsonl";

/// How a file of a run's output folder is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kept {
    /// Copied as it is: small text a reader or a reviewer reads.
    Text,
    /// Records, compressed: `<name>.gz`.
    Compressed,
    /// Evidence only: into `logs.tar.xz`.
    Packed,
}

fn kept(name: &str) -> Kept {
    if name.ends_with(".jsonl") {
        Kept::Compressed
    } else if name == "machine.txt"
        || name == "fault-check.txt"
        || name.ends_with(".md")
        || name.ends_with(".json")
    {
        Kept::Text
    } else {
        Kept::Packed
    }
}

/// Records `from` as `dest/<name>` as [`kept`] says; whether it was (a
/// file to pack is left to the caller).
fn keep(from: &Path, name: &str, dest: &Path) -> Result<bool> {
    match kept(name) {
        Kept::Text => crate::copy_creating(from, &dest.join(name))?,
        Kept::Compressed => {
            let bytes =
                std::fs::read(from).map_err(|e| format!("cannot read {}: {e}", from.display()))?;
            let to = dest.join(format!("{name}{}", gridcheck_report::GZ_SUFFIX));
            write_bytes(&to, &gridcheck_report::gzip(&bytes))?;
        }
        Kept::Packed => return Ok(false),
    }
    Ok(true)
}

pub fn run(args: &[String]) -> Result<()> {
    let mut run_dir = None;
    let (mut date, mut gpu, mut dry_run) = (None, None, false);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--date" => date = Some(value(it.next(), "--date")?),
            "--gpu" => gpu = Some(value(it.next(), "--gpu")?),
            "--dry-run" => dry_run = true,
            "--golden" => return it.try_for_each(|d| write_golden(Path::new(d))),
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            s if s.starts_with('-') => return Err(format!("unknown option `{s}`\n{USAGE}")),
            s if run_dir.is_none() => run_dir = Some(PathBuf::from(s)),
            s => return Err(format!("one run folder, not also `{s}`\n{USAGE}")),
        }
    }
    let run_dir = run_dir.ok_or_else(|| USAGE.to_string())?;
    let results = run_dir.join("results.jsonl");
    let read = read_results_file(&results)
        .map_err(|e| format!("cannot read {}: {e}", results.display()))?;
    for s in &read.skipped {
        eprintln!(
            "warning: {}:{}: skipped: {}",
            results.display(),
            s.line,
            s.reason
        );
    }
    let gpu = match gpu {
        Some(g) => g,
        None => gpu_slug(&read.records).ok_or_else(|| {
            format!(
                "{}: no GPU record names its GPU; give --gpu SLUG",
                results.display()
            )
        })?,
    };
    let date = match date {
        Some(d) if valid_date(&d) => d,
        Some(d) => return Err(format!("--date takes YYYY-MM-DD, not `{d}`")),
        None => today_utc(),
    };
    let dest = free_folder(&root().join("records").join(&gpu), &date);
    println!(
        "recording {} ({} records) as {}",
        run_dir.display(),
        read.records.len(),
        dest.display()
    );
    if dry_run {
        return Ok(());
    }
    publish(&run_dir, &dest, &golden(&read.records))
}

/// Writes `golden.txt` beside a recorded run's results file.
fn write_golden(dir: &Path) -> Result<()> {
    let results = gridcheck_report::find_stored(dir, RESULTS)
        .ok_or_else(|| format!("{} holds no {RESULTS}[.gz]", dir.display()))?;
    let read = read_results_file(&results)
        .map_err(|e| format!("cannot read {}: {e}", results.display()))?;
    let path = dir.join("golden.txt");
    std::fs::write(&path, golden(&read.records))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    println!("wrote {} ({} records)", path.display(), read.records.len());
    Ok(())
}

fn value(v: Option<&String>, flag: &str) -> Result<String> {
    v.cloned()
        .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))
}

/// The slug of the GPU most of the records ran on.
fn gpu_slug(records: &[gridcheck_report::TrialRecord]) -> Option<String> {
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    for r in records {
        if let Some(env) = &r.environment {
            *counts.entry(slug(&env.gpu)).or_default() += 1;
        }
    }
    let most = counts.values().copied().max()?;
    counts.into_iter().find(|(_, n)| *n == most).map(|(s, _)| s)
}

/// Today's date in UTC, from the system clock.
fn today_utc() -> String {
    utc_date(gridcheck_report::now_secs())
}

/// `<gpu_dir>/<date>`, or the first of `<date>.2`, `<date>.3`, ... that
/// does not exist.
fn free_folder(gpu_dir: &Path, date: &str) -> PathBuf {
    let first = gpu_dir.join(date);
    if !first.exists() {
        return first;
    }
    (2..)
        .map(|n| gpu_dir.join(format!("{date}.{n}")))
        .find(|p| !p.exists())
        .unwrap_or(first)
}

fn publish(run_dir: &Path, dest: &Path, golden: &str) -> Result<()> {
    let mut packed = Vec::new();
    for (name, path) in sorted_entries(run_dir)? {
        if path.is_file() && keep(&path, &name, dest)? {
            continue;
        } else if name == VARIANTS && path.is_dir() {
            packed.extend(publish_variants(&path, &dest.join(VARIANTS), dest)?);
        } else {
            packed.push(name);
        }
    }
    write(&dest.join("golden.txt"), golden)?;
    if !packed.is_empty() {
        let tarball = dest.join("logs.tar.xz");
        let status = Command::new("tar")
            .arg("-cJf")
            .arg(&tarball)
            .arg("-C")
            .arg(run_dir)
            .args(&packed)
            .status()
            .map_err(|e| format!("cannot run tar: {e}"))?;
        if !status.success() {
            return Err(format!(
                "tar failed ({status}) packing {}",
                tarball.display()
            ));
        }
        println!("packed into logs.tar.xz: {}", packed.join(", "));
    }
    println!("wrote {}", dest.display());
    Ok(())
}

/// Each variant `<variants>/<name>/` with a results file: its kept files
/// into `<dest>/<name>/`, its golden and its diff from the run recorded in
/// `run_dest`. Returns what is left to pack, relative to the run folder.
fn publish_variants(variants: &Path, dest: &Path, run_dest: &Path) -> Result<Vec<String>> {
    let mut packed = Vec::new();
    for (name, dir) in sorted_entries(variants)? {
        let results = dir.join(RESULTS);
        if !dir.is_dir() || !results.is_file() {
            packed.push(format!("{VARIANTS}/{name}"));
            continue;
        }
        let to = dest.join(&name);
        for (file, path) in sorted_entries(&dir)? {
            if !(path.is_file() && keep(&path, &file, &to)?) {
                packed.push(format!("{VARIANTS}/{name}/{file}"));
            }
        }
        let read = read_results_file(&results)
            .map_err(|e| format!("cannot read {}: {e}", results.display()))?;
        write(&to.join("golden.txt"), &golden(&read.records))?;
        let gz = |d: &Path| d.join(format!("{RESULTS}{}", gridcheck_report::GZ_SUFFIX));
        let diff = crate::diff::markdown_between(&gz(run_dest), &gz(&to), &root())?;
        write(&to.join("diff-from-built.md"), &diff)?;
        println!(
            "variant {name}: {} records, golden and diff-from-built.md",
            read.records.len()
        );
    }
    Ok(packed)
}

/// A folder's entries, sorted by name.
fn sorted_entries(dir: &Path) -> Result<Vec<(String, PathBuf)>> {
    let mut v: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
        .filter_map(|e| e.ok())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .collect();
    v.sort();
    Ok(v)
}

fn write(path: &Path, text: &str) -> Result<()> {
    write_bytes(path, text.as_bytes())
}

fn write_bytes(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
    }
    std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_checked() {
        assert!(valid_date("2026-11-26"));
        assert!(!valid_date("2026-11-2"));
        assert!(!valid_date("2026/11/26"));
    }

    #[test]
    fn a_recorded_date_gets_the_next_free_suffix() {
        let dir = std::env::temp_dir().join(format!("gc-record-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("2026-11-26")).unwrap();
        std::fs::create_dir_all(dir.join("2026-11-26.2")).unwrap();
        assert_eq!(free_folder(&dir, "2026-11-26"), dir.join("2026-11-26.3"));
        assert_eq!(free_folder(&dir, "2026-11-27"), dir.join("2026-11-27"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The names in a recorded run's `logs.tar.xz`.
    fn packed(dest: &Path) -> String {
        let out = Command::new("tar")
            .arg("-tJf")
            .arg(dest.join("logs.tar.xz"))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    #[test]
    fn logs_are_packed_and_what_readers_need_is_kept() {
        let base = std::env::temp_dir().join(format!("gc-publish-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let (run, dest) = (base.join("run"), base.join("dest"));
        std::fs::create_dir_all(run.join("experiment")).unwrap();
        for f in [
            "results.jsonl",
            "mutants.jsonl",
            "machine.txt",
            "conformance.log",
        ] {
            std::fs::write(run.join(f), f).unwrap();
        }
        std::fs::write(run.join("experiment/x.log"), "x").unwrap();
        std::fs::write(run.join("run.json"), "{}").unwrap();
        publish(&run, &dest, "g\n").unwrap();
        for f in [
            "results.jsonl.gz",
            "mutants.jsonl.gz",
            "machine.txt",
            "run.json",
            "golden.txt",
            "logs.tar.xz",
        ] {
            assert!(dest.join(f).is_file(), "{f} missing");
        }
        for f in ["conformance.log", "results.jsonl", "mutants.jsonl"] {
            assert!(!dest.join(f).exists(), "{f} kept as it was");
        }
        // Compressed, and read back as written.
        let back = gridcheck_report::read_stored(&dest.join("mutants.jsonl.gz")).unwrap();
        assert_eq!(back, b"mutants.jsonl");
        assert_ne!(std::fs::read(dest.join("mutants.jsonl.gz")).unwrap(), back);
        let list = packed(&dest);
        assert!(
            list.contains("conformance.log") && list.contains("experiment/x.log"),
            "{list}"
        );
        std::fs::remove_dir_all(&base).unwrap();
    }

    fn record_line(status: &str, nvcc: &str) -> String {
        format!(
            "{{\"trial\":\"gpu/sm_90/r.a/t\",\"tier\":\"gpu\",\"rule\":\"r.a\",\"test\":\"t\",\"status\":\"{status}\",\"message\":\"m\",\
             \"environment\":{{\"gpu\":\"G\",\"sm\":\"sm_90\",\"driver\":\"13.0\",\
             \"nvcc\":\"13.0.88\",\"toolchain\":{{\"release\":\"{nvcc}\",\"nvcc\":\"{nvcc}.1\",\
             \"devrt\":\"d\",\"source\":\"s\"}}}}}}\n"
        )
    }

    #[test]
    fn toolchain_variants_keep_their_results_and_get_a_golden_and_a_diff() {
        let base = std::env::temp_dir().join(format!("gc-variants-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let (run, dest) = (base.join("run"), base.join("dest"));
        let variant = run.join("toolchains/nvcc-13.5");
        std::fs::create_dir_all(&variant).unwrap();
        std::fs::create_dir_all(run.join("toolchains/empty")).unwrap();
        std::fs::write(run.join("results.jsonl"), record_line("pass", "13.0")).unwrap();
        std::fs::write(variant.join("results.jsonl"), record_line("fail", "13.5")).unwrap();
        std::fs::write(variant.join("machine.txt"), "G\n").unwrap();
        std::fs::write(variant.join("conformance.log"), "log").unwrap();
        publish(&run, &dest, "g\n").unwrap();
        let to = dest.join("toolchains/nvcc-13.5");
        for f in [
            "results.jsonl.gz",
            "machine.txt",
            "golden.txt",
            "diff-from-built.md",
        ] {
            assert!(to.join(f).is_file(), "{f} missing");
        }
        assert!(!to.join("conformance.log").exists());
        let golden = std::fs::read_to_string(to.join("golden.txt")).unwrap();
        assert!(golden.contains("kernels of nvcc 13.5.1"), "{golden}");
        let diff = std::fs::read_to_string(to.join("diff-from-built.md")).unwrap();
        assert!(diff.contains("1 regression"), "{diff}");
        let list = packed(&dest);
        assert!(
            list.contains("toolchains/nvcc-13.5/conformance.log")
                && list.contains("toolchains/empty"),
            "{list}"
        );
        // A variant whose results are not records is an error naming it.
        std::fs::write(variant.join("results.jsonl"), "not a record\n").unwrap();
        let e = publish(&run, &base.join("dest2"), "g\n").unwrap_err();
        assert!(e.contains("nvcc-13.5"), "{e}");
        std::fs::remove_dir_all(&base).unwrap();
    }
}
