//! The harness binary and its results file: nothing lost, nothing silent.
//! A killed run's partial line is cut before appending, bad lines are named
//! by `--resume` and skipped, and a results file that cannot be written
//! fails the run.

use std::path::{Path, PathBuf};
use std::process::Command;

// The shared one-rule fixture, and a seed its quote occurs in.
use gridcheck_fixture::{SEED_TEXT, SPEC};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gridcheck-results-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("spec")).unwrap();
    std::fs::write(dir.join("spec/a.yaml"), SPEC).unwrap();
    // A seed the rule's quote and section title occur in.
    std::fs::create_dir_all(dir.join("seeds")).unwrap();
    std::fs::write(dir.join("seeds").join(gridcheck_fixture::SEED), SEED_TEXT).unwrap();
    dir
}

/// Runs the model tier of the scratch spec; (exit code, stderr).
fn run(dir: &Path, results: &Path, extra: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .env_remove("GRIDCHECK_RUN_ID")
        .arg("--spec")
        .arg(dir.join("spec"))
        .arg("--tier")
        .arg("model")
        .arg("--seeds")
        .arg(dir.join("seeds"))
        .arg("--results")
        .arg(results)
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    (out.status.code().unwrap_or(-1), stderr)
}

fn lines(path: &Path) -> Vec<Vec<u8>> {
    std::fs::read(path)
        .unwrap()
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

#[test]
fn a_killed_run_resumes_without_appending_onto_its_partial_line() {
    let dir = scratch("killed");
    let results = dir.join("r.jsonl");
    let (code, err) = run(&dir, &results, &[]);
    assert_eq!(code, 0, "{err}");
    let first = lines(&results);
    assert_eq!(first.len(), 1);
    // A kill in the middle of writing a second record.
    let mut bytes = std::fs::read(&results).unwrap();
    bytes.extend_from_slice(&first[0][..first[0].len() / 2]);
    std::fs::write(&results, &bytes).unwrap();
    let (code, err) = run(&dir, &results, &["--resume"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("incomplete last line"), "{err}");
    // The partial line is gone, the finished record kept and not re-run.
    let read = gridcheck_report::read_results_file(&results).unwrap();
    assert!(read.skipped.is_empty(), "{:?}", read.skipped);
    assert_eq!(read.records.len(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_resumed_run_keeps_its_run_id_and_a_new_run_gets_its_own() {
    let dir = scratch("runid");
    let results = dir.join("r.jsonl");
    let (code, err) = run(&dir, &results, &[]);
    assert_eq!(code, 0, "{err}");
    let read = |p: &Path| gridcheck_report::read_results_file(p).unwrap().records;
    let first = read(&results);
    let id = first[0].run_id.clone().unwrap();
    let started = first[0].run_started.clone().unwrap();
    assert!(!id.starts_with("legacy-") && id.len() > 17, "{id}");
    assert!(started.ends_with('Z') && started.len() == 20, "{started}");
    // The run was cut short: its trial did not run. --resume runs it again
    // under the same run.
    let text = std::fs::read_to_string(&results).unwrap();
    std::fs::write(
        &results,
        text.replace("\"status\":\"pass\"", "\"status\":\"not-run\""),
    )
    .unwrap();
    let (code, err) = run(&dir, &results, &["--resume"]);
    assert_eq!(code, 0, "{err}");
    let second = read(&results);
    assert_eq!(second.len(), 2, "{err}");
    assert_eq!(second[1].run_id.as_deref(), Some(id.as_str()));
    assert_eq!(second[1].run_started.as_deref(), Some(started.as_str()));
    // A new invocation is a new run, in the same file.
    let (code, err) = run(&dir, &results, &[]);
    assert_eq!(code, 0, "{err}");
    let third = read(&results);
    assert_ne!(third[2].run_id.as_deref(), Some(id.as_str()));
    assert_eq!(gridcheck_report::split_runs(third).len(), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn resume_names_the_lines_it_skips_and_keeps_the_rest() {
    let dir = scratch("utf8");
    let results = dir.join("r.jsonl");
    let (code, err) = run(&dir, &results, &[]);
    assert_eq!(code, 0, "{err}");
    let mut bytes = b"\xff\xfe not text\n".to_vec();
    bytes.extend_from_slice(&std::fs::read(&results).unwrap());
    std::fs::write(&results, &bytes).unwrap();
    let (code, err) = run(&dir, &results, &["--resume"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("r.jsonl:1: line skipped: not UTF-8"), "{err}");
    // The finished trial was resumed, not run and written again.
    assert_eq!(lines(&results).len(), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A run before the test was renamed (the spec's `formerly:` keeps the old
/// name) resumes under the name now; a record of a test changed since runs
/// again.
#[test]
fn resume_takes_a_former_name_and_reruns_a_changed_test() {
    let dir = scratch("renamed");
    let results = dir.join("r.jsonl");
    let spec_as = |name: &str, formerly: &str, cond: &str| {
        let s = SPEC
            .replace("t-one", name)
            .replace("    kind: litmus", &format!("{formerly}    kind: litmus"))
            .replace("k.t0.r0 == 0", cond);
        std::fs::write(dir.join("spec/a.yaml"), s).unwrap();
    };
    spec_as("t-old", "", "k.t0.r0 == 0");
    let (code, err) = run(&dir, &results, &[]);
    assert_eq!(code, 0, "{err}");
    spec_as("t-new", "    formerly: [t-old]\n", "k.t0.r0 == 0");
    let (code, err) = run(&dir, &results, &["--resume"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("1 records were written under a former name"),
        "{err}"
    );
    assert_eq!(lines(&results).len(), 1, "resumed, not run again: {err}");
    // Another program under the new name: the old record is of another
    // test now, and the trial runs again.
    spec_as("t-new", "    formerly: [t-old]\n", "k.t0.r0 == 2");
    let (code, err) = run(&dir, &results, &["--resume"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("have changed since they ran") && err.contains("model/cdp2.memory.x/t-new"),
        "{err}"
    );
    let read = gridcheck_report::read_results_file(&results).unwrap();
    let tests: Vec<&str> = read.records.iter().map(|r| r.trial.test.as_str()).collect();
    assert_eq!(tests, ["t-old", "t-new"], "the old record kept as written");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_results_file_that_cannot_be_written_fails_the_run() {
    let dir = scratch("unwritable");
    if Path::new("/dev/full").exists() {
        let (code, err) = run(&dir, Path::new("/dev/full"), &[]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("cannot write to /dev/full"), "{err}");
    }
    let (code, err) = run(&dir, &dir, &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cannot open the results file"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_empty_spec_directory_fails() {
    let dir = scratch("empty");
    std::fs::remove_file(dir.join("spec/a.yaml")).unwrap();
    let (code, err) = run(&dir, &dir.join("r.jsonl"), &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no spec files"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
