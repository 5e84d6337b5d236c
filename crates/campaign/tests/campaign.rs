//! `gridcheck-campaign` end to end on a stand-in GPU
//! (`GRIDCHECK_CAMPAIGN_FAKE_GPU`: rules say which programs hang or fail,
//! and after which others; nothing is compiled): every program runs or says
//! why not, a hang costs only its own program, a known hang is matched by
//! its fact's test and capped, a part cut by its budget is resumed, and
//! every finding ends: a finding that needs one earlier program is
//! bisected to it and shrunk with it; one that never returns is closed
//! with the bound on its rate.

mod common;

use std::process::Command;

use common::{by_name, campaign, fresh, lines, program};
use gridcheck_campaign::{CampaignProgram, batch_dir, write_batch};
use serde_json::Value;

#[test]
fn every_program_runs_or_says_why_and_a_known_hang_is_the_facts() {
    let (dir, rules) = fresh(
        "campaign-known",
        r#"{"rules": [{"thread_ops": ["record", "record"], "outcome": "hang"}]}"#,
    );
    let programs = [
        program("c-0", "store x 1, launch k1 tail"),
        program("c-1", "store x 1, record e1, record e2, launch k1"),
        program("c-4", "launch k1 tail, store x 1"),
        program("c-2", "launch k1, store x 1"),
        program("c-3", "record e1, store x 1, record e2, launch k1"),
    ];
    write_batch(&batch_dir(&dir, 0), &programs[..3]).unwrap();
    write_batch(&batch_dir(&dir, 1), &programs[3..]).unwrap();
    let out = dir.join("out");
    let (d, o) = (dir.display().to_string(), out.display().to_string());
    // A part with no budget reaches nothing, and says so program by program.
    let (code, text) = campaign(&rules, &["run", &d, "--out", &o, "--budget", "0"]);
    assert_eq!(code, Some(1), "{text}");
    let first = lines(&out.join("campaign.jsonl"));
    assert_eq!(first.len(), 5);
    assert!(first.iter().all(|r| {
        r["outcome"]["NotRun"]["reason"]
            .as_str()
            .unwrap()
            .starts_with("not reached")
    }));
    // Resumed: every program has one record, and runs or says why not.
    let (code, text) = campaign(
        &rules,
        &["run", &d, "--out", &o, "--resume", "--hang-cap", "1"],
    );
    assert_eq!(code, Some(1), "{text}");
    let rs = lines(&out.join("campaign.jsonl"));
    assert_eq!(rs.len(), 5, "{rs:?}");
    let class = |n: &str| by_name(&rs, n)["class"].as_str().unwrap().to_string();
    let want = [
        ("c-0", "pass"),
        ("c-1", "hang"),
        ("c-4", "pass"),
        ("c-2", "pass"),
        ("c-3", "not-run"),
    ];
    for (n, c) in want {
        assert_eq!(class(n), c, "{n}: {rs:?}");
    }
    // The hang is the known one, named by its fact; it cost only itself
    // (c-4 ran in a fresh worker); c-3, of the same known hang, was skipped
    // once the cap of one was reached, with that reason.
    let fact = "gpu/sm_90/c2-event-two-records-null-stream";
    assert_eq!(by_name(&rs, "c-1")["known_hang"], fact);
    assert_ne!(by_name(&rs, "c-4")["worker"], by_name(&rs, "c-0")["worker"]);
    let why = by_name(&rs, "c-3")["outcome"]["NotRun"]["reason"]
        .as_str()
        .unwrap();
    assert!(why.contains(fact) && why.contains("--hang-cap"), "{why}");
    // The leads: the one finding is the known hang.
    let (code, text) = campaign(&rules, &["leads", &d, "--out", &o]);
    assert_eq!(code, Some(1), "{text}");
    let f = lines(&out.join("findings.jsonl"));
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0]["ended"], "known");
    assert_eq!(f[0]["known"]["test"], "c2-event-two-records-null-stream");
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(
        (s["programs"].as_u64(), s["ran"].as_u64()),
        (Some(5), Some(4))
    );
    assert_eq!(s["ended"]["known"], 1);
    assert_eq!(s["device"], "a fake GPU");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A launch error in a program that makes the launch-error fact's calls
/// (an event record) ends `known` by that fact, also where the calls are a
/// known hang's too, never as the hang; one in a program without an event
/// call is its own finding.
#[test]
fn a_launch_error_of_an_event_call_is_the_known_launch_error_not_a_hang() {
    let (dir, rules) = fresh(
        "campaign-known-class",
        r#"{"rules": [{"thread_ops": ["record", "record"], "outcome": "launch-error"},
                      {"program": "k-2", "outcome": "launch-error"}]}"#,
    );
    let programs = [
        program("k-0", "store x 1, launch k1 tail"),
        program("k-1", "store x 1, record e1, record e2, launch k1"),
        program("k-2", "store x 1, launch k1 s1"),
    ];
    write_batch(&batch_dir(&dir, 0), &programs).unwrap();
    let out = dir.join("out");
    let (d, o) = (dir.display().to_string(), out.display().to_string());
    let (code, text) = campaign(&rules, &["run", &d, "--out", &o]);
    assert_eq!(code, Some(1), "{text}");
    let rs = lines(&out.join("campaign.jsonl"));
    assert_eq!(by_name(&rs, "k-1")["class"], "launch-error", "{rs:?}");
    assert_eq!(by_name(&rs, "k-2")["class"], "launch-error", "{rs:?}");
    let (code, text) = campaign(&rules, &["leads", &d, "--out", &o]);
    assert_eq!(code, Some(1), "{text}");
    let f = lines(&out.join("findings.jsonl"));
    assert_eq!(f.len(), 2, "{f:?}");
    let of = |p: &str| {
        f.iter()
            .find(|x| x["first"] == p)
            .unwrap_or_else(|| panic!("{f:?}"))
    };
    let fact = "gpu/sm_90/c2-event-cross-stream-dependency";
    assert_eq!(of("k-1")["class"], "launch-error");
    assert_eq!(of("k-1")["ended"], "known", "{f:?}");
    assert_eq!(of("k-1")["known"]["fact"], fact);
    assert_eq!(
        of("k-1")["known"]["test"],
        "c2-event-cross-stream-dependency"
    );
    assert_eq!(of("k-2")["ended"], "alone", "{f:?}");
    assert!(of("k-2")["known"].is_null(), "{f:?}");
    let summary = std::fs::read_to_string(out.join("summary.txt")).unwrap();
    assert!(
        summary.contains(&format!("a known launch-error: {fact}")),
        "{summary}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_finding_that_needs_an_earlier_program_is_bisected_to_it_and_shrunk_with_it() {
    // q6 hangs only in a worker that ran a program with an event record
    // before it (q2, the only one): never alone.
    let (dir, rules) = fresh(
        "campaign-context",
        r#"{"rules": [{"thread_ops": ["trigger", "launch"], "outcome": "hang", "after": [{"thread_ops": ["record"]}]}]}"#,
    );
    let mut programs: Vec<CampaignProgram> = (0..8)
        .map(|i| program(&format!("q{i}"), "store x 1, launch k1"))
        .collect();
    programs[2] = program("q2", "store x 1, record e1, launch k1");
    programs[6] = program("q6", "store x 1, trigger, store x 2, launch k1");
    write_batch(&batch_dir(&dir, 0), &programs).unwrap();
    let out = dir.join("out");
    let (d, o) = (dir.display().to_string(), out.display().to_string());
    let runs = [
        "--alone-runs",
        "2",
        "--context-runs",
        "2",
        "--rate-runs",
        "2",
    ];
    let mut args = vec![d.as_str(), "--out", &o];
    args.extend(runs);
    let (code, text) = campaign(&rules, &args);
    assert_eq!(code, Some(1), "{text}");
    let rs = lines(&out.join("campaign.jsonl"));
    let q6 = by_name(&rs, "q6");
    assert_eq!(
        (q6["class"].as_str(), q6["seq"].as_u64()),
        (Some("hang"), Some(6))
    );
    assert_eq!(by_name(&rs, "q7")["class"], "pass");
    let f = lines(&out.join("findings.jsonl"));
    assert_eq!(f.len(), 1, "{f:?}");
    let f = &f[0];
    assert_eq!(
        (f["ended"].as_str(), f["confirmed_alone"].as_bool()),
        (Some("context"), Some(false)),
        "{f}"
    );
    assert_eq!(f["alone"]["shown"], 0);
    let c = &f["context"];
    assert_eq!(c["programs"], serde_json::json!(["q2"]), "{f}");
    assert_eq!(
        (c["prefix"].as_u64(), c["minimal"].as_bool()),
        (Some(6), Some(true))
    );
    // Shrunk with its context, and shown in every rate run.
    let t = &f["test"];
    assert_eq!(t["rate"]["shown"], 2, "{f}");
    assert_eq!(t["rate"]["runs"], 2);
    assert!(t["shrink_steps"].as_u64().unwrap() >= 2, "{f}");
    let yaml = std::fs::read_to_string(out.join(t["yaml"].as_str().unwrap())).unwrap();
    let (ctx, lead) = (
        yaml.find("name: campaign-hang-000-context-1").unwrap(),
        yaml.find("name: campaign-hang-000\n").unwrap(),
    );
    assert!(ctx < lead, "{yaml}");
    let lead_yaml = &yaml[lead..];
    assert!(
        lead_yaml.contains("trigger") && lead_yaml.contains("launch"),
        "{yaml}"
    );
    assert!(!lead_yaml.contains("store x 2"), "not shrunk: {yaml}");
    let cu = std::fs::read_to_string(out.join(t["plain"].as_str().unwrap())).unwrap();
    assert!(
        cu.contains("cudaEventRecord") && cu.contains("cudaTriggerProgrammaticLaunchCompletion"),
        "{cu}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_finding_that_never_returns_is_closed_with_the_bound_on_its_rate() {
    // r3's instances fail once, the first time it runs, never again.
    let (dir, rules) = fresh(
        "campaign-closed",
        r#"{"rules": [{"program": "r3", "outcome": "launch-error", "times": 1}]}"#,
    );
    let programs: Vec<CampaignProgram> = (0..5)
        .map(|i| program(&format!("r{i}"), "store x 1, launch k1"))
        .collect();
    write_batch(&batch_dir(&dir, 0), &programs).unwrap();
    let out = dir.join("out");
    let (d, o) = (dir.display().to_string(), out.display().to_string());
    let mut args = vec![d.as_str(), "--out", &o];
    args.extend(["--alone-runs", "2", "--context-runs", "2"]);
    let (code, text) = campaign(&rules, &args);
    assert_eq!(code, Some(1), "{text}");
    let f = lines(&out.join("findings.jsonl"));
    assert_eq!(f.len(), 1, "{f:?}");
    let f = &f[0];
    assert_eq!(f["class"], "launch-error");
    assert_eq!(f["ended"], "closed", "{f}");
    assert_eq!(f["closed"]["prefix"], 3);
    assert_eq!(f["closed"]["reruns"]["runs"], 2);
    // Two runs alone and two with its context, each giving r3 the
    // instances that bound the rate it was seen at (1 of 1 024: about
    // 3 000, 6 launches of 512), not the campaign's 2.
    let b = &f["bound"];
    assert_eq!(
        (b["runs"].as_u64(), b["instances"].as_u64()),
        (Some(4), Some(4 * 6 * 512)),
        "{f}"
    );
    let per_instance = 1.0 - 0.05f64.powf(1.0 / (4.0 * 6.0 * 512.0));
    assert!((b["per_instance"].as_f64().unwrap() - per_instance).abs() < 1e-12);
    assert!(f.get("test").is_none() && f.get("context").is_none());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `batch` writes spec files' tests, in order and repeated, as one batch;
/// `run --worker-programs 1` runs each program in a worker of its own, so
/// that a finding that needs an earlier program in its worker is not shown.
#[test]
fn a_batch_from_spec_files_runs_in_one_worker_or_a_worker_a_program() {
    let (dir, rules) = fresh(
        "campaign-worker-programs",
        r#"{"rules": [{"program": "lead-r1", "outcome": "launch-error", "after": [{"program": "ctx-r0"}]}]}"#,
    );
    let spec = dir.join("finding.yaml");
    let test = |name: &str, k0: &str| {
        let p = program(name, k0);
        let yaml = &p.yaml[p.yaml.find("  - name:").unwrap()..];
        yaml.to_string()
    };
    std::fs::write(
        &spec,
        format!(
            "{}{}",
            test("ctx", "store x 1, launch k1"),
            test("lead", "record e1, launch k1")
        ),
    )
    .unwrap();
    let d = dir.join("c");
    let batch = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_gridcheck-campaign"))
            .arg("batch")
            .args(args)
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, text) = batch(&[
        &spec.display().to_string(),
        "--out",
        &d.display().to_string(),
        "--repeat",
        "2",
    ]);
    assert_eq!(code, Some(0), "{text}");
    let names: Vec<String> = std::fs::read_to_string(d.join("batches/b0000/programs.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["name"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(names, ["ctx-r0", "lead-r0", "ctx-r1", "lead-r1"]);
    let run = |n: &str| {
        let out = dir.join(format!("out{n}"));
        let (code, text) = campaign(
            &rules,
            &[
                "run",
                &d.display().to_string(),
                "--out",
                &out.display().to_string(),
                "--worker-programs",
                n,
            ],
        );
        assert!(code.is_some(), "{text}");
        lines(&out.join("campaign.jsonl"))
    };
    let one = run("0");
    assert_eq!(by_name(&one, "lead-r1")["class"], "launch-error", "{one:?}");
    assert!(one.iter().all(|r| r["worker"] == one[0]["worker"]));
    let fresh = run("1");
    assert_eq!(fresh.len(), 4);
    assert!(
        fresh.iter().all(|r| r["class"] == "pass" && r["seq"] == 0),
        "{fresh:?}"
    );
    let workers: std::collections::BTreeSet<u64> = fresh
        .iter()
        .map(|r| r["worker"].as_u64().unwrap())
        .collect();
    assert_eq!(workers.len(), 4);
    // Bad arguments are named.
    let (code, text) = batch(&["--out", "x"]);
    assert_eq!(code, Some(2));
    assert!(text.contains("no spec file"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
