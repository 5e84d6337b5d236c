//! `--mutants` on a machine without a GPU: every candidate of a small spec
//! is judged by both oracles and recorded (a mutant as not run, with the
//! reason and the outcomes that would kill it; a candidate the oracles do
//! not change as not a mutant), and the score is printed.

use std::process::Command;

use gridcheck_report::{MutantRecord, MutantStatus};

/// The shared one-rule fixture's rule, listing a message-passing test.
fn spec() -> String {
    gridcheck_fixture::OneRule::new().tests(MP).yaml()
}

const MP: &str = "  - name: mp
    kind: litmus
    memory: { x: 0, y: 0 }
    kernels:
      - kernel: parent
        launch: host
        threads:
          t0: [store x 1, syncthreads, launch child]
          t1: [store y 1, syncthreads]
      - kernel: child
        launch: device
        threads:
          t0: [load r0 x, load r1 y]
    condition: exists (child.t0.r0 == 0 \\/ child.t0.r1 == 0)
    expect: forbidden
";

#[test]
fn mutants_are_judged_and_recorded_without_a_gpu() {
    let dir = std::env::temp_dir().join(format!("gridcheck-mutants-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("spec")).unwrap();
    std::fs::write(dir.join("spec/a.yaml"), spec()).unwrap();
    std::fs::create_dir_all(dir.join("seeds")).unwrap();
    std::fs::write(
        dir.join("seeds").join(gridcheck_fixture::SEED),
        gridcheck_fixture::SEED_TEXT,
    )
    .unwrap();
    let results = dir.join("mutants.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .arg("--spec")
        .arg(dir.join("spec"))
        .arg("--seeds")
        .arg(dir.join("seeds"))
        .arg("--mutants")
        .arg("--mutant-results")
        .arg(&results)
        .arg("--results")
        .arg(dir.join("r.jsonl"))
        // No GPU in CI; on a GPU machine the GPU runs are what is tested.
        .env("CUDA_VISIBLE_DEVICES", "")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("mutation score:"), "{stdout}");
    let bytes = std::fs::read(&results).unwrap();
    let read: gridcheck_report::LinesRead<MutantRecord> =
        gridcheck_report::read_json_lines(&bytes, "a mutant record");
    assert!(read.skipped.is_empty(), "{:?}", read.skipped);
    let by_name = |n: &str| {
        read.records
            .iter()
            .find(|r| r.mutant == n)
            .unwrap_or_else(|| panic!("no record of {n}: {:?}", read.records))
    };
    // Dropping the barrier lets the child miss t1's write.
    let barrier = by_name("mp~drop-syncthreads");
    assert_eq!(barrier.verdict, Some(gridcheck_spec::Verdict::Allowed));
    assert!(!barrier.kill_states.is_empty());
    assert!(
        matches!(
            barrier.status,
            MutantStatus::NotRun | MutantStatus::Killed | MutantStatus::Survived
        ),
        "{barrier:?}"
    );
    if barrier.status == MutantStatus::NotRun {
        assert!(
            barrier.message.starts_with("not run: "),
            "{}",
            barrier.message
        );
    }
    // The launching thread's own write reaches its child whatever the stream.
    let stream = by_name("mp~null-to-stream");
    assert_eq!(stream.status, MutantStatus::NotAMutant);
    assert!(
        stream.message.contains("still say forbidden"),
        "{}",
        stream.message
    );
    // One record per candidate, each named after the test.
    assert!(read.records.iter().all(|r| r.test == "mp"));
    let mut names: Vec<&str> = read.records.iter().map(|r| r.mutant.as_str()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), read.records.len());
    let _ = std::fs::remove_dir_all(&dir);
}
