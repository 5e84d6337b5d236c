//! Recorded results: `records/<gpu-slug>/<date>/results.jsonl.gz` (or
//! `results.jsonl`, as the harness wrote it: every record file is read
//! through `gridcheck_report::read_stored`, compressed or not), one
//! directory per GPU and date, beside the run's `machine.txt`; a file
//! holding several runs is shown by its latest.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gridcheck_report::{MutantRecord, TrialRecord, find_stored, stored_name};

use crate::Result;

/// Reads a JSON-lines results file, compressed or not. Every line that is
/// not a trial record (not UTF-8, not a record, an incomplete last line)
/// is skipped and named on stderr with the reason; blank lines are skipped
/// quietly.
pub fn load_jsonl(path: &Path) -> Result<Vec<TrialRecord>> {
    let bytes = gridcheck_report::read_stored(path).map_err(|e| format!("cannot read {e}"))?;
    let (records, skipped) = parse_jsonl(&bytes, path);
    for s in skipped {
        eprintln!("warning: {s}");
    }
    Ok(records)
}

/// [`load_jsonl`] on bytes already read: the records, and one line per
/// skipped line (`path:line: skipped: reason`).
pub fn parse_jsonl(bytes: &[u8], path: &Path) -> (Vec<TrialRecord>, Vec<String>) {
    let read = gridcheck_report::read_results(bytes);
    let skipped = read
        .skipped
        .iter()
        .map(|s| format!("{}:{}: skipped: {}", path.display(), s.line, s.reason))
        .collect();
    (read.records, skipped)
}

/// Where a run happened, as its records and `machine.txt` say.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct Machine {
    /// The device name (`NVIDIA H100 80GB HBM3`), or the directory's slug
    /// when no record names it.
    pub gpu: String,
    /// The driver: its version (`580.159.04`) when the records or
    /// `machine.txt` give it, else the CUDA driver API version (`CUDA 13.0`).
    pub driver: String,
    /// nvcc's version where the harness ran (`environment.nvcc`), or `-`
    /// when the run had none: not necessarily what built the kernels.
    pub nvcc: String,
    /// The toolchain that built the kernels (`13.5 (nvcc 13.5.37)`), from
    /// `environment.toolchain`, or for a run without GPU records the
    /// compiler its compile and machine-code records name; `None` where no
    /// record names one (records made before toolchains were recorded).
    pub toolchain: Option<String>,
}

impl Machine {
    /// From one record's environment (and a `machine.txt` fallback for the
    /// driver version).
    pub fn of(rec: &TrialRecord, fallback_driver: Option<&str>) -> Option<Machine> {
        let env = rec.environment.as_ref()?;
        let driver = env
            .driver_version
            .clone()
            .or_else(|| fallback_driver.map(str::to_string))
            .unwrap_or_else(|| format!("CUDA {}", env.driver));
        Some(Machine {
            gpu: env.gpu.clone(),
            driver,
            nvcc: env.nvcc.clone().unwrap_or_else(|| "-".into()),
            toolchain: env.toolchain.as_ref().map(|t| t.label()),
        })
    }

    /// The first toolchain the records name (see
    /// [`TrialRecord::kernels_toolchain`]), labelled.
    pub fn toolchain_of(records: &[TrialRecord]) -> Option<String> {
        records
            .iter()
            .find_map(|r| r.kernels_toolchain())
            .map(|t| t.label())
    }

    pub fn label(&self) -> String {
        let kernels = match &self.toolchain {
            Some(t) => format!(", kernels built by {t}"),
            None => String::new(),
        };
        format!(
            "{}, driver {}, nvcc {}{kernels}",
            self.gpu, self.driver, self.nvcc
        )
    }
}

/// One recorded run: a results file with its directory's GPU slug and date.
#[derive(Debug, Clone)]
pub struct Run {
    pub slug: String,
    /// `YYYY-MM-DD`, the directory's name.
    pub date: String,
    pub dir: PathBuf,
    /// Its results file: `results.jsonl.gz` as recorded, or
    /// `results.jsonl` ([`RESULTS`]).
    pub results: PathBuf,
    pub machine: Machine,
    pub records: Vec<TrialRecord>,
    /// `mutants.jsonl` beside the results (`conformance --mutants`), and
    /// every `mutants-tune*.jsonl` (`--tune`), when recorded.
    pub mutants: Vec<MutantRecord>,
    pub tuning_search: Vec<MutantRecord>,
    /// A toolchain variant's name (`nvcc-13.5`, its folder under
    /// [`VARIANTS`]); `None` for a run itself.
    pub variant: Option<String>,
    /// The run under other toolchains' kernels (`toolchains/<name>/`), by
    /// name; not runs of their own (never in [`latest`] or the runs page).
    pub variants: Vec<Run>,
}

impl Run {
    /// The records of one rule, in file order.
    pub fn of_rule<'a>(&'a self, rule: &'a str) -> impl Iterator<Item = &'a TrialRecord> + 'a {
        self.records.iter().filter(move |r| r.trial.rule == rule)
    }

    /// The path of its results file relative to `root` (for pages).
    pub fn results_path(&self, root: &Path) -> String {
        let p = &self.results;
        p.strip_prefix(root).unwrap_or(p).display().to_string()
    }
}

/// The driver version `machine.txt` names: its first line is nvidia-smi's
/// `name, driver_version, compute_cap`.
pub fn machine_txt_driver(text: &str) -> Option<String> {
    let first = text.lines().next()?;
    let v = first.split(',').nth(1)?.trim();
    let looks_like_version =
        !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.') && v.contains('.');
    looks_like_version.then(|| v.to_string())
}

/// A run directory's name: `YYYY-MM-DD`, or `YYYY-MM-DD.N` for the N-th run
/// of that day (N from 2), so that a later run never overwrites an earlier one.
pub fn is_date(s: &str) -> bool {
    let (day, nth) = match s.split_once('.') {
        Some((d, n)) => (d, Some(n)),
        None => (s, None),
    };
    gridcheck_report::valid_date(day) && nth.is_none_or(|n| n.parse::<u32>().is_ok_and(|n| n >= 2))
}

/// The order of run directories: by day, then by the run of the day.
pub fn run_order(date: &str) -> (&str, u32) {
    match date.split_once('.') {
        Some((d, n)) => (d, n.parse().unwrap_or(1)),
        None => (date, 1),
    }
}

/// Every run under `dir` (`<slug>/<date>/results.jsonl`), sorted by slug
/// then date, each with its toolchain variants (see [`VARIANTS`]). A
/// directory that is not a date, or a date without a results file, is
/// skipped; a results file that cannot be read is an error (its bad lines
/// are skipped and named, see [`load_jsonl`]).
pub fn load_runs(dir: &Path) -> Result<Vec<Run>> {
    let mut runs = Vec::new();
    for gpu_dir in subdirs(dir)? {
        let slug = name_of(&gpu_dir);
        for date_dir in subdirs(&gpu_dir)? {
            let date = name_of(&date_dir);
            if !is_date(&date) {
                continue;
            }
            let Some(results) = find_stored(&date_dir, RESULTS) else {
                continue;
            };
            let mut run = load_run(&slug, &date, &date_dir, results)?;
            let variants = date_dir.join(VARIANTS);
            if variants.is_dir() {
                for v in subdirs(&variants)? {
                    let Some(results) = find_stored(&v, RESULTS) else {
                        eprintln!(
                            "note: {} has no results file: not a toolchain variant",
                            v.display()
                        );
                        continue;
                    };
                    let mut variant = load_run(&slug, &date, &v, results)?;
                    variant.variant = Some(name_of(&v));
                    run.variants.push(variant);
                }
            }
            runs.push(run);
        }
    }
    Ok(runs)
}

/// The folder of a recorded run's toolchain variants:
/// `records/<gpu>/<date>/toolchains/<name>/results.jsonl` (`nvcc-13.5`:
/// the same run under another toolchain's kernels, published by `cargo
/// xtask record`), each with its `machine.txt` and the like.
pub const VARIANTS: &str = "toolchains";

/// A run's results file, `results.jsonl`; a recorded run keeps it
/// compressed, `results.jsonl.gz` (`gridcheck_report::find_stored` finds
/// either).
pub const RESULTS: &str = "results.jsonl";

/// The subdirectories of `d`, sorted.
fn subdirs(d: &Path) -> Result<Vec<PathBuf>> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(d)
        .map_err(|e| format!("cannot read the results directory {}: {e}", d.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    Ok(v)
}

/// The run recorded in `dir` (its results file `file`, `machine.txt`,
/// mutants), without variants.
fn load_run(slug: &str, date: &str, dir: &Path, file: PathBuf) -> Result<Run> {
    let records = latest_run(load_jsonl(&file)?, &file);
    let machine_txt = std::fs::read_to_string(dir.join("machine.txt")).ok();
    let fallback = machine_txt.as_deref().and_then(machine_txt_driver);
    let machine = records
        .iter()
        .find_map(|r| Machine::of(r, fallback.as_deref()))
        .unwrap_or_else(|| Machine {
            gpu: slug.to_string(),
            driver: fallback.clone().unwrap_or_else(|| "unknown".into()),
            nvcc: "-".into(),
            toolchain: Machine::toolchain_of(&records),
        });
    Ok(Run {
        slug: slug.to_string(),
        date: date.to_string(),
        mutants: match find_stored(dir, "mutants.jsonl") {
            Some(f) => load_mutants(&f)?,
            None => Vec::new(),
        },
        tuning_search: load_searches(dir)?,
        dir: dir.to_path_buf(),
        results: file,
        machine,
        records,
        variant: None,
        variants: Vec::new(),
    })
}

/// The latest run of a results file (`gridcheck_report::runs`): a folder
/// whose file the harness appended to twice shows its last run, and names
/// the others on stderr, never a mix of them.
fn latest_run(records: Vec<TrialRecord>, file: &Path) -> Vec<TrialRecord> {
    let mut runs = gridcheck_report::split_runs(records);
    let latest = runs.pop().map(|r| r.records).unwrap_or_default();
    if !runs.is_empty() {
        let others: Vec<&str> = runs.iter().map(|r| r.id.as_str()).collect();
        eprintln!(
            "note: {} holds {} runs; the pages show the latest, the others are left out: {}",
            file.display(),
            runs.len() + 1,
            others.join(", ")
        );
    }
    latest
}

/// The records of every environment search of a run (`mutants-tune*.jsonl`,
/// compressed or not, in name order).
fn load_searches(dir: &Path) -> Result<Vec<MutantRecord>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = name_of(p);
            let n = stored_name(&n);
            n.starts_with("mutants-tune") && n.ends_with(".jsonl")
        })
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        out.extend(load_mutants(&f)?);
    }
    Ok(out)
}

/// A mutants' records file, compressed or not; lines that are not records
/// are named on stderr and skipped.
pub fn load_mutants(path: &Path) -> Result<Vec<MutantRecord>> {
    let bytes = gridcheck_report::read_stored(path).map_err(|e| format!("cannot read {e}"))?;
    let read: gridcheck_report::LinesRead<MutantRecord> =
        gridcheck_report::read_json_lines(&bytes, "a mutant record");
    for s in &read.skipped {
        eprintln!(
            "warning: {}:{}: skipped: {}",
            path.display(),
            s.line,
            s.reason
        );
    }
    Ok(read.records)
}

fn name_of(p: &Path) -> String {
    p.file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

/// The newest run of each GPU (by directory slug), in slug order.
pub fn latest(runs: &[Run]) -> Vec<&Run> {
    latest_where(runs, |_| true)
}

/// The newest run of each GPU among those `keep` takes (a tier's page
/// takes the newest run that ran its tier), in slug order.
pub fn latest_where(runs: &[Run], keep: impl Fn(&Run) -> bool) -> Vec<&Run> {
    let mut by_slug: BTreeMap<&str, &Run> = BTreeMap::new();
    for r in runs.iter().filter(|r| keep(r)) {
        let e = by_slug.entry(&r.slug).or_insert(r);
        if run_order(&r.date) > run_order(&e.date) {
            *e = r;
        }
    }
    by_slug.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_malformed_line_is_skipped_and_named_with_file_and_line() {
        let good = r#"{"trial":"model/a/b","tier":"model","rule":"a","test":"b","status":"pass","message":"m"}"#;
        let text = format!("{good}\n\n{{\"trial\": 3}}\n{good}\n{good}");
        let (records, skipped) = parse_jsonl(text.as_bytes(), Path::new("x/results.jsonl"));
        assert_eq!(records.len(), 2);
        assert_eq!(skipped.len(), 2, "{skipped:?}");
        assert!(
            skipped[0].starts_with("x/results.jsonl:3: skipped: not a trial record"),
            "{skipped:?}"
        );
        assert!(
            skipped[1].starts_with("x/results.jsonl:5: skipped: an incomplete last line"),
            "{skipped:?}"
        );
    }

    #[test]
    fn a_file_of_two_runs_is_its_latest() {
        let rec = |secs: u64, status: &str| {
            let mut r: TrialRecord = serde_json::from_str(&format!(
                r#"{{"trial":"model/a/b","tier":"model","rule":"a","test":"b","status":"{status}","message":"m"}}"#
            ))
            .unwrap();
            gridcheck_report::RunStamp::at(secs, secs).stamp(&mut r);
            r
        };
        let kept = latest_run(vec![rec(1, "pass"), rec(2, "fail")], Path::new("r.jsonl"));
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].status, gridcheck_report::Status::Fail);
    }

    #[test]
    fn driver_version_from_machine_txt() {
        assert_eq!(
            machine_txt_driver("NVIDIA H100 80GB HBM3, 580.159.04, 9.0\nCuda ...").as_deref(),
            Some("580.159.04")
        );
        assert_eq!(machine_txt_driver("nvidia-smi failed\n"), None);
        assert_eq!(machine_txt_driver(""), None);
    }

    #[test]
    fn a_missing_results_directory_is_an_error() {
        let e = load_runs(Path::new("/nonexistent/results")).unwrap_err();
        assert!(e.contains("/nonexistent/results"), "{e}");
    }

    #[test]
    fn latest_is_the_newest_date_per_gpu() {
        let run = |slug: &str, date: &str| Run {
            slug: slug.into(),
            date: date.into(),
            dir: PathBuf::new(),
            results: PathBuf::new(),
            machine: Machine {
                gpu: slug.into(),
                driver: "d".into(),
                nvcc: "n".into(),
                toolchain: None,
            },
            records: vec![],
            mutants: vec![],
            tuning_search: vec![],
            variant: None,
            variants: vec![],
        };
        assert!(is_date("2026-11-24") && is_date("2026-11-24.2") && is_date("2026-11-24.10"));
        assert!(!is_date("2026-11-24.1") && !is_date("2026-11-24.x") && !is_date("2026-11-2"));
        assert!(run_order("2026-11-24.10") > run_order("2026-11-24.9"));
        assert!(run_order("2026-11-24.2") > run_order("2026-11-24"));
        let runs = [
            run("a", "2026-01-02"),
            run("a", "2026-03-01"),
            run("b", "2025-12-31"),
        ];
        let l: Vec<(&str, &str)> = latest(&runs)
            .iter()
            .map(|r| (r.slug.as_str(), r.date.as_str()))
            .collect();
        assert_eq!(l, [("a", "2026-03-01"), ("b", "2025-12-31")]);
    }

    #[test]
    fn a_run_has_its_toolchain_variants_and_they_are_not_runs() {
        let root = std::env::temp_dir().join(format!("gc-variants-{}", std::process::id()));
        let run = root.join("gpu-x/2026-11-26");
        let line = |test: &str, release: &str| {
            format!(
                r#"{{"trial":"gpu/sm_90/r/{test}","tier":"gpu","rule":"r","test":"{test}","status":"pass","message":"m","environment":{{"gpu":"G","sm":"sm_90","driver":"13.0","nvcc":"13.0.88","toolchain":{{"release":"{release}","nvcc":"{release}.1","devrt":"d","source":"s"}}}}}}"#
            ) + "\n"
        };
        for (dir, release) in [
            (run.clone(), "13.0"),
            (run.join("toolchains/nvcc-13.5"), "13.5"),
            (run.join("toolchains/nvcc-13.2"), "13.2"),
        ] {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("results.jsonl"), line("t", release)).unwrap();
        }
        // A folder without results (logs only) is no variant.
        std::fs::create_dir_all(run.join("toolchains/logs-only")).unwrap();
        let runs = load_runs(&root).unwrap();
        assert_eq!(runs.len(), 1, "variants are not runs of their own");
        let names: Vec<Option<&str>> = runs[0]
            .variants
            .iter()
            .map(|v| v.variant.as_deref())
            .collect();
        assert_eq!(names, [Some("nvcc-13.2"), Some("nvcc-13.5")]);
        assert_eq!(
            runs[0].machine.toolchain.as_deref(),
            Some("13.0 (nvcc 13.0.1)")
        );
        let v = &runs[0].variants[1];
        assert_eq!(v.machine.toolchain.as_deref(), Some("13.5 (nvcc 13.5.1)"));
        assert_eq!(v.machine.nvcc, "13.0.88", "the harness's nvcc");
        assert!(
            v.machine
                .label()
                .ends_with("nvcc 13.0.88, kernels built by 13.5 (nvcc 13.5.1)"),
            "{}",
            v.machine.label()
        );
        assert_eq!((v.slug.as_str(), v.date.as_str()), ("gpu-x", "2026-11-26"));
        assert_eq!(latest(&runs).len(), 1);
        // A variant's results file that cannot be read is an error naming it.
        #[cfg(target_os = "linux")]
        {
            let bad = run.join("toolchains/nvcc-13.2/results.jsonl");
            std::fs::remove_file(&bad).unwrap();
            std::os::unix::fs::symlink("/proc/self/mem", &bad).unwrap();
            let e = load_runs(&root).unwrap_err();
            assert!(e.contains("toolchains/nvcc-13.2/results.jsonl"), "{e}");
        }
        std::fs::remove_dir_all(&root).unwrap();
    }
}
