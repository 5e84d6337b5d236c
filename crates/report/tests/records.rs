//! The recorded data, `records/<gpu-slug>/`: its layout (suite runs by
//! date, `campaigns/<date>/`, `bench/<date>/`), every folder within its
//! size budget, and every record file readable by the readers the site and
//! `cargo xtask report` use.

use std::path::{Path, PathBuf};

use gridcheck_report::{MutantRecord, RUN_BUDGET, find_stored, read_json_lines, read_results_file};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn subdirs(d: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(d)
        .unwrap_or_else(|e| panic!("{}: {e}", d.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    v
}

fn name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// `YYYY-MM-DD` or `YYYY-MM-DD.N`.
fn is_date(s: &str) -> bool {
    let day = s.split_once('.').map_or(s, |(d, _)| d);
    day.len() == 10
        && day.bytes().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                c == b'-'
            } else {
                c.is_ascii_digit()
            }
        })
}

/// Every recorded folder: `records/<gpu>/<date>/`,
/// `records/<gpu>/campaigns/<date>/` and `records/<gpu>/bench/<date>/`.
/// Anything else under a GPU's folder fails the test: the layout is the
/// one home of recorded data, and its readers find nothing elsewhere.
fn recorded_folders() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for gpu in subdirs(&root().join("records")) {
        for d in subdirs(&gpu) {
            match name(&d).as_str() {
                "campaigns" | "bench" => {
                    for run in subdirs(&d) {
                        assert!(is_date(&name(&run)), "{}: not a date", run.display());
                        out.push(run);
                    }
                }
                n if is_date(n) => out.push(d),
                _ => panic!(
                    "{}: neither a run's date nor campaigns/ or bench/ (records/README.md)",
                    d.display()
                ),
            }
        }
    }
    out
}

/// The files under `d`, every level, with their sizes.
fn files(d: &Path) -> Vec<(PathBuf, u64)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(d).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            out.push((p.clone(), e.metadata().unwrap().len()));
        }
    }
    out
}

#[test]
fn every_recorded_folder_is_within_its_budget() {
    let folders = recorded_folders();
    assert!(folders.len() >= 10, "{folders:?}");
    let mut over = Vec::new();
    for d in &folders {
        let fs = files(d);
        let total: u64 = fs.iter().map(|(_, n)| n).sum();
        if total > RUN_BUDGET {
            let mut big = fs.clone();
            big.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
            over.push(format!(
                "{}: {total} bytes, over {RUN_BUDGET} (largest: {})",
                d.display(),
                big.iter()
                    .take(3)
                    .map(|(p, n)| format!("{} {n}", p.display()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        // Records are kept compressed (`cargo xtask record`): a plain
        // JSON-lines file of a suite run is a megabyte of text.
        for (p, n) in &fs {
            assert!(
                !(p.extension().is_some_and(|e| e == "jsonl") && *n > 64 * 1024),
                "{}: {n} bytes of plain JSON lines; record keeps them as .jsonl.gz",
                p.display()
            );
        }
    }
    assert!(over.is_empty(), "{}", over.join("\n"));
}

#[test]
fn every_recorded_results_and_mutants_file_reads_whole() {
    let mut results = 0;
    for d in recorded_folders() {
        for (p, _) in files(&d) {
            let n = name(&p);
            let stem = gridcheck_report::stored_name(&n);
            if stem.starts_with("mutants") && stem.ends_with(".jsonl") {
                let bytes = gridcheck_report::read_stored(&p).unwrap();
                let read = read_json_lines::<MutantRecord>(&bytes, "a mutant record");
                assert!(
                    read.skipped.is_empty(),
                    "{}: {:?}",
                    p.display(),
                    read.skipped
                );
                assert!(!read.records.is_empty(), "{}", p.display());
            }
        }
        // A run's own results, and its toolchain variants'.
        let mut runs = vec![d.clone()];
        if d.join("toolchains").is_dir() {
            runs.extend(subdirs(&d.join("toolchains")));
        }
        for run in runs {
            let Some(f) = find_stored(&run, "results.jsonl") else {
                continue;
            };
            let read = read_results_file(&f).unwrap_or_else(|e| panic!("{e}"));
            assert!(
                read.skipped.is_empty(),
                "{}: {:?}",
                f.display(),
                read.skipped
            );
            assert!(!read.records.is_empty(), "{}", f.display());
            results += 1;
        }
    }
    assert!(results >= 18, "{results} results files");
}

/// The committed spread of the H100 (`conformance/spread/`) parses, is of
/// the H100's runs, and judges the comparable recorded runs the same: no
/// regression from one to the next.
#[test]
fn the_committed_h100_spread_and_the_runs_it_comes_from() {
    use gridcheck_report::run_diff::diff_runs_with;
    use gridcheck_report::spread::{SPREAD_DIR, Spread};
    let root = root();
    let path = root.join(SPREAD_DIR).join("nvidia-h100-80gb-hbm3.json");
    let spread = Spread::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(spread.gpu, "NVIDIA H100 80GB HBM3");
    assert!(spread.runs.len() >= 5, "{:?}", spread.runs);
    let run = |date: &str| {
        let f = find_stored(
            &root.join("records/nvidia-h100-80gb-hbm3").join(date),
            "results.jsonl",
        )
        .unwrap();
        read_results_file(&f).unwrap().records
    };
    for (a, b) in [
        ("2026-11-26.3", "2026-11-26.4"),
        ("2026-11-26.4", "2026-11-26.5"),
    ] {
        let d = diff_runs_with(&run(a), &run(b), Some(&spread));
        assert_eq!(d.regressions(), 0, "{a} to {b}: {d:#?}");
        assert!(d.spread.is_some());
    }
}

/// Whether a record's results hold a trial of the GPU tier.
fn has_gpu_tier(dir: &Path) -> bool {
    find_stored(dir, "results.jsonl")
        .and_then(|p| read_results_file(&p).ok())
        .is_some_and(|r| {
            r.records
                .iter()
                .any(|t| t.trial.tier == gridcheck_report::Tier::Gpu)
        })
}

/// The newest suite run of each GPU with a `run.json` (`gpu-run.sh`
/// writes it: the harness's exit code and wall time), and its wall seconds.
fn newest_walls() -> Vec<(String, f64)> {
    let mut out = Vec::new();
    for gpu in subdirs(&root().join("records")) {
        // `2026-11-27.10` after `2026-11-27.9`: by day, then the number.
        let key = |p: &PathBuf| {
            let n = name(p);
            let (day, k) = n.split_once('.').unwrap_or((&n, "0"));
            (day.to_string(), k.parse::<u32>().unwrap_or(0))
        };
        // The newest run of the GPU tier (a run of the library tier alone
        // is no measure of the suite's time).
        let newest = subdirs(&gpu)
            .into_iter()
            .filter(|d| is_date(&name(d)) && d.join("run.json").is_file() && has_gpu_tier(d))
            .max_by_key(key);
        if let Some(d) = newest {
            let text = std::fs::read_to_string(d.join("run.json")).unwrap();
            let v: serde_json::Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{}: {e}", d.join("run.json").display()));
            let ms = v["wall_ms"]
                .as_f64()
                .unwrap_or_else(|| panic!("{}: no wall_ms", d.display()));
            out.push((d.display().to_string(), ms / 1000.0));
        }
    }
    out
}

/// README.md says how long the GPU tier takes on each GPU ("about N s on
/// an H200"): within 3 s of that GPU's newest recorded run.
#[test]
fn the_readmes_suite_time_is_the_records() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let flat = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    let walls = newest_walls();
    assert!(walls.len() >= 2, "{walls:?}");
    for (run, wall) in walls {
        // records/nvidia-h200/<date>: the H200.
        let slug = Path::new(&run)
            .parent()
            .and_then(|p| p.file_name())
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let short = slug.split('-').nth(1).unwrap_or_default().to_uppercase();
        let tail = format!(" s on an {short}");
        let said: f64 = flat
            .split("about ")
            .skip(1)
            .find_map(|rest| rest.split_once(&tail)?.0.parse().ok())
            .unwrap_or_else(|| panic!("README.md says `about N{tail}` for {run}"));
        assert!(
            (wall - said).abs() <= 3.0,
            "README.md says the GPU tier takes about {said} s on an {short}; {run} took {wall:.1} s"
        );
    }
}
