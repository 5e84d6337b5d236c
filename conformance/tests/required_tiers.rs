//! A tier that was asked for and cannot run here is an error: `--tier gpu`
//! on a machine without a GPU (or driver) exits non-zero with the reason
//! and records nothing; without `--tier` the GPU tier is ignored with the
//! reason, as ever. On a machine with a GPU the first half does not apply
//! and is skipped, said so.

use std::path::{Path, PathBuf};
use std::process::Command;

// The shared one-rule fixture, and a seed its quote occurs in.
use gridcheck_fixture::{SEED_TEXT, SPEC};

fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("gridcheck-required-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("spec")).unwrap();
    std::fs::write(dir.join("spec/a.yaml"), SPEC).unwrap();
    // A seed the rule's quote and section title occur in.
    std::fs::create_dir_all(dir.join("seeds")).unwrap();
    std::fs::write(dir.join("seeds").join(gridcheck_fixture::SEED), SEED_TEXT).unwrap();
    dir
}

fn run(dir: &Path, results: &Path, tiers: &[&str]) -> (i32, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_conformance"));
    cmd.arg("--spec")
        .arg(dir.join("spec"))
        .arg("--seeds")
        .arg(dir.join("seeds"))
        .arg("--results")
        .arg(results)
        .arg("--no-progress")
        .env_remove("GRIDCHECK_REQUIRE_TIERS");
    for t in tiers {
        cmd.args(["--tier", t]);
    }
    let out = cmd.output().unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!all.contains("panicked"), "{all}");
    (out.status.code().unwrap_or(-1), all)
}

fn records(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect()
}

#[test]
fn an_explicit_gpu_tier_without_a_gpu_is_an_error_and_records_nothing() {
    if let Ok(d) = gridcheck_gpu::probe() {
        eprintln!(
            "not run: this machine has a GPU ({}), so the GPU tier can run",
            d.name
        );
        return;
    }
    let dir = scratch("gpu");
    let results = dir.join("r.jsonl");
    let (code, out) = run(&dir, &results, &["gpu"]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("error: the gpu tier was asked for and cannot run here: "),
        "{out}"
    );
    assert!(records(&results).is_empty(), "{:?}", records(&results));
    // Asked for with the model tier: the same.
    let (code, _) = run(&dir, &results, &["model", "gpu"]);
    assert_eq!(code, 2);
    assert!(records(&results).is_empty());
    // Not asked for: the model tier runs, the GPU trial is ignored and
    // recorded not-supported with the reason.
    let (code, out) = run(&dir, &results, &[]);
    assert_eq!(code, 0, "{out}");
    let recs = records(&results);
    let gpu: Vec<&String> = recs
        .iter()
        .filter(|r| r.contains("\"tier\":\"gpu\""))
        .collect();
    assert_eq!(gpu.len(), 1, "{recs:?}");
    assert!(
        gpu[0].contains("\"status\":\"not-supported\""),
        "{}",
        gpu[0]
    );
    assert!(gpu[0].contains("not run: "), "{}", gpu[0]);
    assert!(
        recs.iter()
            .any(|r| r.contains("\"tier\":\"model\"") && r.contains("\"status\":\"pass\""))
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_explicit_tier_that_can_run_is_not_an_error() {
    let dir = scratch("model");
    let results = dir.join("r.jsonl");
    let (code, out) = run(&dir, &results, &["model"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(records(&results).len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The harness runs one toolchain at a time (`cargo xtask conformance`
/// runs it once a toolchain): several is an error before anything runs.
#[test]
fn several_toolchains_are_an_error_and_record_nothing() {
    let dir = scratch("toolchains");
    let results = dir.join("r.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .args(["--tier", "model", "--toolchain", "13.0,13.5", "--results"])
        .arg(&results)
        .arg("--spec")
        .arg(dir.join("spec"))
        .arg("--seeds")
        .arg(dir.join("seeds"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--toolchain names 13.0, 13.5: the harness runs one toolchain at a time"),
        "{err}"
    );
    assert!(records(&results).is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--tier library` where it cannot run (no GPU here; on a GPU machine
/// without a built release the same) stops before any trial.
#[test]
fn an_explicit_library_tier_without_a_gpu_is_an_error_and_records_nothing() {
    if let Ok(d) = gridcheck_gpu::probe() {
        eprintln!(
            "not run: this machine has a GPU ({}), so whether the library tier can run depends on its builds",
            d.name
        );
        return;
    }
    let dir = scratch("library");
    let results = dir.join("r.jsonl");
    let (code, out) = run(&dir, &results, &["library"]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("error: the library tier was asked for and cannot run here: "),
        "{out}"
    );
    assert!(records(&results).is_empty(), "{:?}", records(&results));
    let _ = std::fs::remove_dir_all(&dir);
}
