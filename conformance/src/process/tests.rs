//! The parent side of the worker protocol against stand-in workers (shell
//! loops that read job lines and answer as a worker would), so that no GPU
//! and no harness build is needed.

use super::*;
use crate::job::ModelJob;

/// A model job for the test `name` with a timeout of `timeout_s`.
fn job(name: &str, timeout_s: u64) -> Job {
    let yaml = gridcheck_fixture::OneRule::new()
        .tests(
            "  - name: t\n    kind: litmus\n    memory: { x: 0 }\n    kernels:\n      - kernel: k\n        launch: host\n        threads:\n          t0: [store x 1]\n    condition: exists x == 1\n    expect: required\n",
        )
        .yaml();
    let spec = gridcheck_spec::load_sources(&[("spec/a.yaml".into(), yaml)], None).unwrap();
    let gridcheck_spec::TestBody::Litmus(l) = &spec.tests[0].body else {
        panic!("a litmus test")
    };
    Job::Model(ModelJob {
        test: name.into(),
        litmus: l.clone(),
        timeout_s,
    })
}

/// A stand-in worker: answers a job for `notrun-<x>` (any other name) with
/// a completed result naming the job and its own pid, `error` with an
/// error (and goes on, which the harness must not rely on), sleeps on
/// `hang`, exits on `crash`, answers `linger` and then never exits, and
/// answers `stall` as a worker whose watchdog saw a launch stop moving (its
/// waiting thread stuck: it never exits either).
fn fake() -> Result<Command, Box<WorkerResult>> {
    let script = format!(
        r#"while read j; do
  t=${{j#*\"test\":\"}}; t=${{t%%\"*}}
  case "$t" in
  hang) sleep 30 ;;
  crash) echo dying >&2; exit 3 ;;
  error) echo '{m}{{"Error":{{"message":"e"}}}}' ;;
  linger) echo '{m}{{"NotRun":{{"reason":"linger"}}}}'; exec sleep 30 ;;
  stall) echo '{m}{{"Stalled":{{"stall":"stall: launch 0"}}}}'; exec sleep 30 ;;
  *) echo "noise"; echo "{m}{{\"NotRun\":{{\"reason\":\"$t $$\"}}}}" ;;
esac; done"#,
        m = MARKER
    );
    let mut c = Command::new("sh");
    c.args(["-c", &script]);
    Ok(c)
}

fn reason(r: &WorkerResult) -> String {
    match r {
        WorkerResult::NotRun { reason } => reason.clone(),
        other => panic!("not a completed result: {other:?}"),
    }
}

/// The pid a stand-in worker named in its answer.
fn pid(r: &str) -> &str {
    r.split(' ').nth(1).unwrap_or_default()
}

#[test]
fn one_worker_answers_job_after_job() {
    let s = Servers::default();
    let a = reason(&s.run_with(0, &job("a", 10), fake));
    let b = reason(&s.run_with(0, &job("b", 10), fake));
    assert!(a.starts_with("a ") && b.starts_with("b "), "{a} {b}");
    // The same process answered both.
    assert_eq!(pid(&a), pid(&b));
    // Another slot has its own worker.
    let c = reason(&s.run_with(1, &job("c", 10), fake));
    assert_ne!(pid(&a), pid(&c));
}

#[test]
fn a_timeout_kills_the_worker_and_the_next_job_gets_a_new_one() {
    let s = Servers::default();
    let a = reason(&s.run_with(0, &job("a", 10), fake));
    let start = Instant::now();
    let r = s.run_with(0, &job("hang", 1), fake);
    assert_eq!(
        r,
        WorkerResult::Timeout {
            seconds: 1,
            classified: None
        }
    );
    assert!(start.elapsed() < Duration::from_secs(10), "killed at once");
    let b = reason(&s.run_with(0, &job("b", 10), fake));
    assert_ne!(pid(&a), pid(&b), "a fresh worker");
}

#[test]
fn a_worker_that_dies_is_a_crash_with_its_stderr_and_is_replaced() {
    let s = Servers::default();
    let a = reason(&s.run_with(0, &job("a", 10), fake));
    let r = s.run_with(0, &job("crash", 10), fake);
    match &r {
        WorkerResult::Crash { exit, stderr_tail } => {
            assert!(exit.contains('3'), "{exit}");
            assert!(stderr_tail.contains("dying"), "{stderr_tail}");
        }
        other => panic!("{other:?}"),
    }
    let b = reason(&s.run_with(0, &job("b", 10), fake));
    assert_ne!(pid(&a), pid(&b));
}

#[test]
fn after_an_error_the_worker_is_not_reused() {
    let s = Servers::default();
    let a = reason(&s.run_with(0, &job("a", 10), fake));
    let r = s.run_with(0, &job("error", 10), fake);
    assert!(matches!(r, WorkerResult::Error { .. }), "{r:?}");
    let b = reason(&s.run_with(0, &job("b", 10), fake));
    assert_ne!(pid(&a), pid(&b));
}

#[test]
fn a_worker_that_cannot_start_is_a_crash() {
    let s = Servers::default();
    let r = s.run_with(0, &job("a", 1), || {
        Ok(Command::new("/nonexistent/gridcheck-worker"))
    });
    assert!(
        matches!(&r, WorkerResult::Crash { exit, .. } if exit.starts_with("not started")),
        "{r:?}"
    );
}

#[test]
fn a_worker_of_its_own_answers_once_and_one_that_lingers_keeps_its_result() {
    assert!(reason(&run_once_with(&job("a", 10), fake)).starts_with("a "));
    let start = Instant::now();
    let r = run_once_with(&job("linger", 20), fake);
    assert_eq!(reason(&r), "linger");
    assert!(
        start.elapsed() < EXIT_GRACE + Duration::from_secs(5),
        "killed after the grace"
    );
    let r = run_once_with(&job("hang", 1), fake);
    assert!(
        matches!(r, WorkerResult::Timeout { seconds: 1, .. }),
        "{r:?}"
    );
}

/// A stall is answered while the launch still hangs: the harness takes the
/// answer at once, ends that worker without waiting for it to exit, and
/// gives the next job a fresh one.
#[test]
fn a_stall_ends_its_worker_at_once() {
    let s = Servers::default();
    let a = reason(&s.run_with(0, &job("a", 10), fake));
    let start = Instant::now();
    let r = s.run_with(0, &job("stall", 60), fake);
    assert_eq!(
        r,
        WorkerResult::Stalled {
            stall: "stall: launch 0".into()
        }
    );
    let b = reason(&s.run_with(0, &job("b", 10), fake));
    assert_ne!(pid(&a), pid(&b), "a fresh worker");
    let r = run_once_with(&job("stall", 60), fake);
    assert!(matches!(r, WorkerResult::Stalled { .. }), "{r:?}");
    assert!(
        start.elapsed() < EXIT_GRACE,
        "no grace for a worker that stalled: {:?}",
        start.elapsed()
    );
}
