//! A worker gets its whole job as one JSON line and loads nothing else: run
//! from an empty directory, with no spec, no options and no kernels within
//! reach, it explores a test that is in no spec from the job alone, and
//! takes a GPU job as far as the device (none here: it says so, and ends).

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use conformance::job::{GpuBody, GpuJob, Job, ModelJob, WorkerResult};
use gridcheck_report::{TrialId, Tuning};

/// A litmus test that is in no spec: a store and a load of one thread.
fn litmus() -> gridcheck_spec::Litmus {
    let yaml = gridcheck_fixture::OneRule::new()
        .tests(
            "  - name: not-in-any-spec\n    kind: litmus\n    memory: { x: 0 }\n    kernels:\n      - kernel: k\n        launch: host\n        threads:\n          t0: [store x 1, load r0 x]\n    condition: exists k.t0.r0 == 1\n    expect: required\n",
        )
        .yaml();
    let spec = gridcheck_spec::load_sources(&[("elsewhere/a.yaml".into(), yaml)], None).unwrap();
    match &spec.tests[0].body {
        gridcheck_spec::TestBody::Litmus(l) => l.clone(),
        _ => panic!("a litmus test"),
    }
}

/// Runs a worker in an empty directory with `jobs` on its input: the
/// results it printed, in order.
fn worker(jobs: &[Job]) -> Vec<WorkerResult> {
    let dir = std::env::temp_dir().join(format!("gridcheck-worker-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .arg(conformance::WORKER_FLAG)
        .current_dir(&dir)
        // No GPU: the GPU job stops at the device.
        .env("CUDA_VISIBLE_DEVICES", "")
        .env_remove("GRIDCHECK_SEEDS")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for j in jobs {
        writeln!(stdin, "{}", j.line()).unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(WorkerResult::of_line)
        .collect()
}

#[test]
fn a_worker_runs_its_job_and_reads_no_spec() {
    let l = litmus();
    let model = Job::Model(ModelJob {
        test: "not-in-any-spec".into(),
        litmus: l.clone(),
        timeout_s: 60,
    });
    let gpu = Job::Gpu(GpuJob {
        trial: TrialId::gpu("sm_90", "cdp2.nowhere", "not-in-any-spec"),
        test: "not-in-any-spec".into(),
        body: GpuBody::Litmus(l),
        binary: PathBuf::from("/nonexistent/sm_90/not-in-any-spec.cubin"),
        devrt: PathBuf::from("/nonexistent/libcudadevrt.a"),
        environment: Tuning::default(),
        seed: 1,
        timeout_s: 60,
        stall_after_s: 2.0,
        device: None,
        watch: None,
    });
    // After a model job the worker goes on; after a GPU job that found no
    // device it ends, and a job after that is never answered.
    let results = worker(&[model.clone(), gpu, model]);
    assert_eq!(results.len(), 2, "{results:?}");
    match &results[0] {
        WorkerResult::Model(m) => {
            assert_eq!(m.verdict, gridcheck_spec::Verdict::Required, "{m:?}");
            assert_eq!(m.states.len(), 1, "{m:?}");
        }
        other => panic!("not the model's answer: {other:?}"),
    }
    match &results[1] {
        // The device is the first thing a GPU job needs that the job does
        // not carry (on a GPU machine with CUDA_VISIBLE_DEVICES empty, the
        // driver sees none).
        WorkerResult::Error { message } => assert!(
            message.contains("CUDA") && !message.contains("spec"),
            "{message}"
        ),
        other => panic!("not the device's error: {other:?}"),
    }
}

#[test]
fn a_line_that_is_no_job_is_an_error_and_ends_the_worker() {
    let dir = std::env::temp_dir().join(format!("gridcheck-worker-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .arg(conformance::WORKER_FLAG)
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{{\"Model\": 3}}").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let results: Vec<WorkerResult> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(WorkerResult::of_line)
        .collect();
    assert!(
        matches!(&results[..], [WorkerResult::Error { message }] if message.starts_with("the worker cannot read its job")),
        "{results:?}"
    );
}

/// What the worker's code may use: its job, the GPU runner and the oracles,
/// never the spec's loader, the options or the harness's choices.
#[test]
fn the_worker_code_names_nothing_but_its_job() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![dir.join("worker.rs")];
    for e in std::fs::read_dir(dir.join("worker")).unwrap() {
        files.push(e.unwrap().path());
    }
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for needle in [
            "load_dir",
            "load_sources",
            "Options",
            "crate::plan",
            "crate::flags",
            "crate::binary",
            "crate::runner",
            "std::env::args",
        ] {
            assert!(!text.contains(needle), "{} uses {needle}", f.display());
        }
    }
    assert!(files.len() >= 3, "{files:?}");
}
