//! The fleet recipe of conformance/README.md, on the CPU tiers: the harness run as N
//! shards (`--shard i/N`, each shard its own results file, as a job array
//! runs them on N machines), then merged as `cargo xtask report merge`
//! merges them. The merge must hold exactly the trials and statuses of one
//! unsharded run: none lost, none run twice.
//!
//! The shards share one run id (`GRIDCHECK_RUN_ID`, as the README's recipe
//! sets it), so that the merge takes them for one run; without it each
//! shard is a run of its own, a column each.
//!
//! The run is the model and static tiers of one family of rules
//! (`cdp1.streams`: litmus tests and compile tests), to stay short; the
//! static tier runs where nvcc is found (CI installs it) and is left out
//! where it is not (a tier named by `--tier` must run).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use gridcheck_docs::matrix::Matrix;
use gridcheck_report::{Status, Tier, TrialId};

const FILTER: &str = "cdp1.streams";
const SHARDS: usize = 3;

fn root() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    root.canonicalize().unwrap_or(root)
}

/// One harness run of the model and static tiers; panics with its output
/// if it fails.
fn harness(results: &Path, extra: &[String], run_id: Option<&str>) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_conformance"));
    match run_id {
        Some(id) => cmd.env("GRIDCHECK_RUN_ID", id),
        None => cmd.env_remove("GRIDCHECK_RUN_ID"),
    };
    let out = cmd
        .arg("--root")
        .arg(root())
        .args(["--tier", "model", "--no-progress"])
        // A tier named by --tier must run: the static one only where nvcc is.
        .args(if gridcheck_toolchain::find_nvcc(&root()).is_ok() {
            &["--tier", "static"][..]
        } else {
            &[][..]
        })
        .arg("--results")
        .arg(results)
        .args(extra)
        .args([FILTER, "-q"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A merged matrix's single column as trial -> status.
fn column(m: &Matrix) -> BTreeMap<TrialId, Status> {
    assert_eq!(
        m.columns.len(),
        1,
        "CPU tiers on one kind of machine merge into one column: {:?}",
        m.columns
    );
    m.rows
        .iter()
        .map(|r| (r.trial.clone(), r.cells[0].as_ref().unwrap().status))
        .collect()
}

#[test]
fn shards_merge_into_the_unsharded_run() {
    let dir = std::env::temp_dir().join(format!("gridcheck-fleet-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let whole = dir.join("whole.jsonl");
    harness(&whole, &[], None);
    let shards: Vec<PathBuf> = (1..=SHARDS)
        .map(|i| {
            let f = dir.join(format!("shard-{i}.jsonl"));
            harness(
                &f,
                &["--shard".into(), format!("{i}/{SHARDS}")],
                Some("fleet-1"),
            );
            f
        })
        .collect();

    // No trial in two shards, none lost: the shards' records, one by one.
    let whole_records = gridcheck_report::read_results_file(&whole).unwrap();
    assert!(whole_records.skipped.is_empty());
    let mut seen: BTreeMap<TrialId, usize> = BTreeMap::new();
    for (i, f) in shards.iter().enumerate() {
        let read = gridcheck_report::read_results_file(f).unwrap();
        assert!(read.skipped.is_empty(), "{:?}", read.skipped);
        assert!(!read.records.is_empty(), "shard {} ran nothing", i + 1);
        for r in read.records {
            if let Some(j) = seen.insert(r.trial.clone(), i) {
                panic!("{} ran in shards {} and {}", r.trial, j + 1, i + 1);
            }
        }
    }
    assert_eq!(seen.len(), whole_records.records.len());

    // The merge of the shards is the unsharded run.
    let merged = column(&Matrix::merge_files(&shards, None).unwrap());
    let expected = column(&Matrix::merge_files(std::slice::from_ref(&whole), None).unwrap());
    assert_eq!(merged, expected);
    // Every record carries its run: the shards the fleet's, the whole run
    // its own, a new one.
    let ids = |f: &Path| -> Vec<Option<String>> {
        let read = gridcheck_report::read_results_file(f).unwrap();
        read.records.into_iter().map(|r| r.run_id).collect()
    };
    assert!(
        shards
            .iter()
            .flat_map(|f| ids(f))
            .all(|i| i.as_deref() == Some("fleet-1"))
    );
    let whole_ids = ids(&whole);
    assert!(
        whole_ids
            .iter()
            .all(|i| *i == whole_ids[0] && i.as_deref() != Some("fleet-1"))
    );
    assert!(!whole_ids[0].as_deref().unwrap().starts_with("legacy-"));
    // Shards of different runs are different columns.
    harness(
        &shards[0],
        &["--shard".into(), format!("1/{SHARDS}")],
        Some("fleet-2"),
    );
    let m = Matrix::merge_files(&shards, None).unwrap();
    assert_eq!(m.columns.len(), 2, "{:?}", m.columns);
    // Both tiers took part (the static one where nvcc is), and the model
    // tier's trials ran and passed.
    let model = expected.keys().filter(|t| t.tier == Tier::Model).count();
    let compile = expected.keys().filter(|t| t.tier == Tier::Static).count();
    let nvcc = gridcheck_toolchain::find_nvcc(&root()).is_ok();
    assert!(model >= 5 && (compile >= 2 || !nvcc), "{expected:?}");
    assert!(
        expected
            .iter()
            .filter(|(t, _)| t.tier == Tier::Model)
            .all(|(_, s)| *s == Status::Pass),
        "{expected:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
