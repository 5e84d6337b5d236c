//! The escalation of a quality warning against stand-in workers (shell
//! loops that answer jobs as a worker would): one whose outcome shows only
//! in a fresh worker, as the first job of its process, and one whose
//! outcome never shows.

use std::process::Command;

use gridcheck_report::{SearchPoint, Status, Tuning};

use super::*;
use crate::job::MARKER;

/// A stand-in worker: a GPU job gets a histogram of one state, the
/// outcome shown (`r0=1`) only when it is the process's first job; an
/// escalation's steps show it only then too (`ALONE=1`), or never (and
/// take 0.3 s to say so).
fn stand_in(alone: bool) -> Result<Command, Box<WorkerResult>> {
    let script = format!(
        r#"n=0; while read j; do n=$((n+1))
  if [ "$ALONE" = 1 ] && [ $n = 1 ]; then k=3; else k=0; fi
  case "$j" in
  '{{"Escalate"'*) [ $k = 0 ] && sleep 0.3; echo '{m}{{"Escalated":[{{"environment":"alone","instances":640,"observed":'$k',"budget_s":0.25}},{{"environment":"late-write","instances":6400,"observed":0,"budget_s":0.25}}]}}' ;;
  *) echo '{m}{{"Litmus":{{"histogram":[[{{"r0":'$((k>0))'}},35840]],"instances":35840,"launch_failures":0,"first_launch_error":null,"elapsed_s":0.1,"seed":1}}}}' ;;
  esac; done"#,
        m = MARKER
    );
    let mut c = Command::new("sh");
    c.args(["-c", &script])
        .env("ALONE", if alone { "1" } else { "0" });
    Ok(c)
}

fn alone_only(_: &Place) -> Result<Command, Box<WorkerResult>> {
    stand_in(true)
}

fn never(_: &Place) -> Result<Command, Box<WorkerResult>> {
    stand_in(false)
}

fn runner(worker: process::WorkerCommand, total_s: f64) -> Runner {
    let mut opts = Options::defaults(std::env::temp_dir());
    opts.tiers = vec![Tier::Model];
    opts.escalate.total_s = total_s;
    let mut r = Runner::new(&opts).unwrap();
    r.worker = worker;
    r
}

fn run_of(test: &str) -> GpuRun {
    let spec = gridcheck_spec::load_sources(
        &[(
            "spec/a.yaml".into(),
            gridcheck_fixture::OneRule::new()
                .tests(&format!(
                    "  - name: {test}\n    kind: litmus\n    memory: {{ x: 0 }}\n    kernels:\n      - kernel: k\n        launch: host\n        threads:\n          t0: [load r0 x]\n    condition: exists k.t0.r0 == 1\n    expect: allowed\n"
                ))
                .yaml(),
        )],
        None,
    )
    .unwrap();
    let gridcheck_spec::TestBody::Litmus(l) = &spec.tests[0].body else {
        panic!("a litmus test")
    };
    GpuRun::Job(Box::new(GpuJob {
        trial: TrialId::gpu("sm_90", "r", test),
        test: test.into(),
        body: GpuBody::Litmus(l.clone()),
        binary: "k.cubin".into(),
        devrt: "libcudadevrt.a".into(),
        environment: Tuning::default(),
        seed: 1,
        timeout_s: 10,
        stall_after_s: 2.0,
        device: None,
        watch: None,
    }))
}

/// Two steps of 0.25 GPU s: the run's own environment, then one more.
fn steps() -> Vec<SearchPoint> {
    let more = SearchPoint {
        name: "late-write".into(),
        tuning: Tuning::default(),
    };
    crate::escalate::steps(&Tuning::default(), &[more], 0.25)
}

/// The suite's run in the staying worker, after another test's.
fn in_the_suite(r: &Runner, run: &GpuRun) -> WorkerResult {
    let GpuRun::Job(j) = run else { panic!() };
    let job = Job::Gpu((**j).clone());
    let _ = r
        .servers
        .run_with(0, &job, || (r.worker)(&Place::default()));
    r.servers
        .run_with(0, &job, || (r.worker)(&Place::default()))
}

#[test]
fn an_outcome_that_shows_only_alone_is_provoked_by_escalation() {
    let r = runner(alone_only, 20.0);
    let run = run_of("t-alone");
    match in_the_suite(&r, &run) {
        WorkerResult::Litmus { histogram, .. } => {
            assert!(
                histogram.iter().all(|(s, _)| s.values().all(|&v| v == 0)),
                "the suite's run does not show it: {histogram:?}"
            );
        }
        other => panic!("{other:?}"),
    }
    let e = r.escalate(&steps(), &run).unwrap();
    assert_eq!(e.provoked_by.as_deref(), Some("alone"));
    let (status, msg) = crate::escalate::judge(&e, 35840, "");
    assert_eq!(status, Status::Pass, "{msg}");
    assert!(msg.contains("3 of 640 instances under `alone`"), "{msg}");
}

#[test]
fn an_outcome_that_never_shows_stays_a_warning_with_its_bound_and_the_budget_runs_out() {
    // Wall time for one escalation of 0.3 s, not two.
    let r = runner(never, 0.75);
    let e = r.escalate(&steps(), &run_of("t-never")).unwrap();
    assert_eq!(e.provoked_by, None);
    let bound = e.rate_upper_95.expect("a bound when nothing showed");
    assert!(
        (bound - (1.0 - 0.05f64.powf(1.0 / 7040.0))).abs() < 1e-12,
        "{bound}"
    );
    assert!(e.wall_s.is_some_and(|w| w >= 0.3), "{:?}", e.wall_s);
    let (status, msg) = crate::escalate::judge(&e, 35840, "");
    assert_eq!(status, Status::QualityWarning);
    assert!(
        msg.contains("0 of 7040 instances under alone, late-write"),
        "{msg}"
    );
    // The same test again is the same escalation, not another run.
    assert_eq!(r.escalate(&steps(), &run_of("t-never")).unwrap(), e);
    // Another test finds the run's budget spent, and says so.
    let why = r.escalate(&steps(), &run_of("t-other")).unwrap_err();
    assert!(
        why.starts_with("not escalated: ") && why.contains("--escalate-total"),
        "{why}"
    );
}
