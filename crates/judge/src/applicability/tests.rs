//! Tests of where a fact applies and the status it gives a trial.
use std::path::Path;

use gridcheck_record::{CompileSummary, Environment};

use super::*;

const H100: &str = "NVIDIA H100 80GB HBM3";

fn facts(depends_on: &str, kind: &str) -> Facts {
    let text = format!(
        "[\"gpu/sm_90/t\"]\nkind = \"{kind}\"\nsummary = \"It wrote zeros.\"\n\
         depends_on = [{depends_on}]\nevidence = \"e\"\nmeasured = [\n\
         {{ gpu = \"{H100}\", sm = \"sm_90\", driver = \"580.159.04\", device_runtime = \"13.0\", date = \"2026-11-24\" }},\n]\n{}",
        envelope(kind)
    );
    Facts {
        entries: Facts::parse(&text, Path::new("f.toml"), Path::new("/")).unwrap(),
    }
}

/// An `unobserved` fact's envelope line (the H100 under its tuned file),
/// empty for another kind.
fn envelope(kind: &str) -> String {
    if kind != "unobserved" {
        return String::new();
    }
    format!(
        "envelope = {{ gpus = [\"{H100}\"], environments = [\"tuned.toml\"], instances = 1000, words = 1 }}\n"
    )
}

fn rec(sm: &str, gpu: &str, driver: &str, nvcc: &str, status: Status) -> TrialRecord {
    let mut r = TrialRecord::new(TrialId::gpu(sm, "a.b", "t"), status, "what ran");
    r.environment = Some(Environment {
        gpu: gpu.into(),
        sm: sm.into(),
        driver: "13.0".into(),
        nvcc: Some(nvcc.into()),
        driver_version: Some(driver.into()),
        tuning: None,
        tuning_file: None,
        binary: None,
        toolchain: None,
        device: None,
    });
    r
}

fn h100(status: Status) -> TrialRecord {
    rec("sm_90", H100, "580.159.04", "13.0.88", status)
}

fn h200(status: Status) -> TrialRecord {
    rec("sm_90", "NVIDIA H200", "580.159.04", "13.0.88", status)
}

const RUNTIME: &str = "\"driver\", \"device-runtime\"";

#[test]
fn xfail_where_it_was_measured() {
    let f = facts(RUNTIME, "discrepancy");
    for s in [Status::Fail, Status::Crash, Status::Unmodeled] {
        let (status, m) = f.apply(&h100(s));
        assert_eq!(status, Status::Xfail, "{s}");
        assert!(
            m.starts_with("expected failure (It wrote zeros.; measured here: NVIDIA H100"),
            "{m}"
        );
        assert!(m.contains("f.toml:1): what ran"), "{m}");
    }
}

#[test]
fn the_kernels_toolchain_is_the_device_runtime_judged() {
    let f = facts(RUNTIME, "discrepancy");
    // The harness's nvcc says 13.0, but the kernels were built (and
    // their device runtime linked) by 13.5, where the fact, which
    // depends on the device runtime, was never measured: the same
    // failure is known, naming the device runtime.
    let mut r = h100(Status::Fail);
    if let Some(e) = r.environment.as_mut() {
        e.toolchain = Some(gridcheck_record::ToolchainRecord {
            release: "13.5".into(),
            nvcc: "13.5.37".into(),
            devrt: "nvidia-cuda-runtime 13.5.37".into(),
            source: ".toolchains/13.5".into(),
            disassembler: None,
        });
    }
    let (status, m) = f.apply(&r);
    assert_eq!(status, Status::Known);
    assert!(m.contains("the device runtime here is 13.5.37"), "{m}");
    // Without the toolchain, the harness's nvcc decides: measured here.
    assert_eq!(f.apply(&h100(Status::Fail)).0, Status::Xfail);
}

#[test]
fn known_where_it_applies_but_was_never_measured() {
    let f = facts(RUNTIME, "discrepancy");
    let (status, m) = f.apply(&h200(Status::Fail));
    assert_eq!(status, Status::Known);
    assert!(
        m.contains("first measured on NVIDIA H100 80GB HBM3 (sm_90), driver 580.159.04"),
        "{m}"
    );
    // Another device runtime of the same minor version: the same.
    let r = rec(
        "sm_90",
        "NVIDIA H200",
        "580.159.04",
        "13.0.40",
        Status::Fail,
    );
    assert_eq!(f.apply(&r).0, Status::Known);
    // The trial's own fact is found, whatever rule lists the test.
    let mut other = h200(Status::Fail);
    other.trial.rule = "c.d".into();
    assert_eq!(f.apply(&other).0, Status::Known);
}

#[test]
fn an_outcome_never_observed_is_known_until_it_shows() {
    let f = facts(RUNTIME, "unobserved");
    let (status, m) = f.apply(&h100(Status::QualityWarning));
    assert_eq!(status, Status::Xfail, "{m}");
    assert!(m.starts_with("known, stronger than the guide"), "{m}");
    assert_eq!(f.apply(&h200(Status::QualityWarning)).0, Status::Known);
    // Observed at last: the fact no longer holds.
    assert_eq!(f.apply(&h100(Status::Pass)).0, Status::Changed);
    // It explains no failure.
    assert_eq!(f.apply(&h100(Status::Fail)).0, Status::Fail);
}

#[test]
fn a_rare_fact_not_seen_in_a_run_is_not_changed() {
    let mut f = facts(RUNTIME, "hang");
    f.entries[0].sometimes = true;
    let (status, m) = f.apply(&h100(Status::Pass));
    assert_eq!(status, Status::Pass, "{m}");
    assert!(m.contains("shows only in some runs"), "{m}");
    // When it does show, it is known as ever.
    assert_eq!(f.apply(&h100(Status::Timeout)).0, Status::KnownHang);
    // The file's spelling; a misspelling is an error.
    let text = "[\"gpu/sm_90/t\"]\nkind = \"hang\"\nsummary = \"s\"\nreproduces = \"sometimes\"\n\
                depends_on = [\"driver\"]\nevidence = \"e\"\nmeasured = [{ gpu = \"G\", sm = \"sm_90\", driver = \"1\", date = \"2026-11-24\" }]\n";
    let parsed = Facts::parse(text, Path::new("f.toml"), Path::new("/")).unwrap();
    assert!(parsed[0].sometimes);
    let bad = text.replace("sometimes", "often");
    assert!(Facts::parse(&bad, Path::new("f.toml"), Path::new("/")).is_err());
}

#[test]
fn changed_where_it_applies_and_no_longer_fails() {
    for (f, r) in [
        (facts(RUNTIME, "discrepancy"), h100(Status::Pass)),
        (facts(RUNTIME, "discrepancy"), h200(Status::QualityWarning)),
        (facts(RUNTIME, "hang"), h200(Status::Pass)),
    ] {
        let (status, m) = f.apply(&r);
        assert_eq!(status, Status::Changed, "{m}");
        assert!(m.starts_with("changed: the known"), "{m}");
        assert!(
            m.contains("did not reproduce") && m.contains("f.toml:1"),
            "{m}"
        );
    }
}

#[test]
fn known_hang_for_a_timeout_a_hang_covers() {
    let f = facts(RUNTIME, "hang");
    let (status, m) = f.apply(&h100(Status::Timeout));
    assert_eq!(status, Status::KnownHang);
    assert!(
        m.starts_with("known hang (It wrote zeros.; measured here"),
        "{m}"
    );
    let (status, m) = f.apply(&h200(Status::Timeout));
    assert_eq!(status, Status::KnownHang);
    assert!(m.contains("not yet on this machine"), "{m}");
    // A hang explains no fail, a discrepancy no timeout.
    let (status, m) = f.apply(&h100(Status::Fail));
    assert_eq!(status, Status::Fail);
    assert!(m.contains("f.toml:1 is a hang, not a fail"), "{m}");
    let d = facts(RUNTIME, "discrepancy");
    assert_eq!(d.apply(&h100(Status::Timeout)).0, Status::Timeout);
}

#[test]
fn unmodeled_is_a_failure_facts_can_explain() {
    let f = facts(RUNTIME, "discrepancy");
    assert_eq!(f.apply(&h200(Status::Unmodeled)).0, Status::Known);
    assert_eq!(
        Facts::default().apply(&h100(Status::Unmodeled)).0,
        Status::Unmodeled
    );
}

#[test]
fn a_fact_travels_where_its_dependencies_differ() {
    // Another driver: the same failure is known, naming the driver.
    let f = facts(RUNTIME, "discrepancy");
    let r = rec("sm_90", H100, "590.1", "13.0.88", Status::Fail);
    let (status, m) = f.apply(&r);
    assert_eq!(status, Status::Known, "{m}");
    assert!(
        m.starts_with("known (It wrote zeros.; first measured on NVIDIA H100"),
        "{m}"
    );
    assert!(
        m.contains("not under this configuration") && m.contains("the driver here is 590.1"),
        "{m}"
    );
    // Another device runtime; a timeout under a hang fact.
    let r = rec("sm_90", H100, "580.159.04", "13.1.0", Status::Fail);
    assert_eq!(f.apply(&r).0, Status::Known);
    let h = facts(RUNTIME, "hang");
    let r = rec("sm_90", H100, "580.159.04", "13.1.0", Status::Timeout);
    let (status, m) = h.apply(&r);
    assert_eq!(status, Status::KnownHang, "{m}");
    assert!(m.contains("the device runtime here is 13.1.0"), "{m}");
    // The GPU model: an H100 fact on an H200.
    let g = facts("\"gpu-model\", \"driver\"", "discrepancy");
    let (status, m) = g.apply(&h200(Status::Fail));
    assert_eq!(status, Status::Known);
    assert!(m.contains("the GPU here is NVIDIA H200"), "{m}");
    assert_eq!(g.apply(&h100(Status::Fail)).0, Status::Xfail);
    // Not reproducing there is a change, shown with the difference:
    // never a silent pass.
    let (status, m) = g.apply(&h200(Status::Pass));
    assert_eq!(status, Status::Changed, "{m}");
    assert!(
        m.contains("did not reproduce here (pass), where it depends on")
            && m.contains("the GPU here is NVIDIA H200"),
        "{m}"
    );
    // A fact that applies is preferred to one measured elsewhere only.
    let both = Facts {
        entries: [g.entries.clone(), facts(RUNTIME, "discrepancy").entries].concat(),
    };
    assert_eq!(both.apply(&h200(Status::Fail)).0, Status::Known);
    assert!(
        both.apply(&h200(Status::Fail))
            .1
            .contains("not yet on this machine")
    );
    // An unknown driver matches nothing: known, saying so.
    let mut r = h100(Status::Fail);
    r.environment.as_mut().unwrap().driver_version = None;
    let (status, m) = f.apply(&r);
    assert_eq!(status, Status::Known);
    assert!(m.contains("the driver here is unknown"), "{m}");
    // A kind that does not explain the status leaves it as it is.
    assert_eq!(
        h.apply(&rec("sm_90", H100, "590.1", "13.0.88", Status::Fail))
            .0,
        Status::Fail
    );
}

#[test]
fn architectures_the_key_and_a_range() {
    let f = facts(RUNTIME, "discrepancy");
    // No range: the key's architecture only.
    let r = rec(
        "sm_100",
        "NVIDIA B200",
        "580.159.04",
        "13.0.88",
        Status::Fail,
    );
    assert!(f.covering(&r.trial).is_empty());
    assert_eq!(f.apply(&r).0, Status::Fail);
    let g = facts("\"driver\", \"sm>=90\"", "discrepancy");
    assert_eq!(g.apply(&r).0, Status::Known);
    let old = rec(
        "sm_80",
        "NVIDIA A100",
        "580.159.04",
        "13.0.88",
        Status::Fail,
    );
    assert!(g.covering(&old.trial).is_empty());
    assert_eq!(g.apply(&old).0, Status::Fail);
}

#[test]
fn trial_facts_first_and_statuses_that_did_not_run_are_left_alone() {
    let text = "[\"gpu/sm_90/t\"]\nkind = \"discrepancy\"\nsummary = \"test\"\ndepends_on = [\"driver\"]\nevidence = \"e\"\nmeasured = [{ sm = \"sm_90\", driver = \"580.159.04\", date = \"2026-11-24\" }]\n\
                [\"gpu/sm_90/a.b/t\"]\nkind = \"discrepancy\"\nsummary = \"trial\"\ndepends_on = [\"driver\"]\nevidence = \"e\"\nmeasured = [{ sm = \"sm_90\", driver = \"580.159.04\", date = \"2026-11-24\" }]\n";
    let f = Facts {
        entries: Facts::parse(text, Path::new("f.toml"), Path::new("/")).unwrap(),
    };
    let r = h200(Status::Fail);
    assert_eq!(f.covering(&r.trial)[0].summary, "trial");
    // No GPU model in the place: never "measured here", so known.
    let (status, m) = f.apply(&r);
    assert_eq!(status, Status::Known);
    assert!(m.starts_with("known (trial;"), "{m}");
    for s in [Status::NotRun, Status::NotSupported, Status::OracleConflict] {
        assert_eq!(f.apply(&h100(s)).0, s);
    }
}

#[test]
fn a_compile_fact_depends_on_the_toolkit() {
    let text = "[\"static/c\"]\nkind = \"discrepancy\"\nsummary = \"accepted\"\ndepends_on = [\"toolkit\"]\nevidence = \"e\"\nmeasured = [{ toolkit = \"13.0.88\", date = \"2026-11-22\" }]\n";
    let f = Facts {
        entries: Facts::parse(text, Path::new("f.toml"), Path::new("/")).unwrap(),
    };
    let compiled = |nvcc: &str| {
        let mut r = TrialRecord::new(TrialId::compile("r.s", "c"), Status::Fail, "m");
        r.compile = Some(CompileSummary {
            nvcc: nvcc.into(),
            command: String::new(),
            success: true,
            output: String::new(),
            toolchain: None,
        });
        r
    };
    assert_eq!(f.apply(&compiled("13.0.88")).0, Status::Xfail);
    assert_eq!(f.apply(&compiled("13.0.40")).0, Status::Known);
    // Another release: known, naming it.
    let (status, m) = f.apply(&compiled("13.2.1"));
    assert_eq!(status, Status::Known);
    assert!(m.contains("nvcc here is 13.2.1"), "{m}");
}

/// A library fact: measured with CCCL 13.0 on the H200, keyed by its
/// algorithm (every case), covering every release and judged by `cccl`.
fn library_facts() -> Facts {
    let text = "[\"lib/13.0/sm_90/merge_sort_keys\"]\nkind = \"discrepancy\"\n\
                summary = \"Sorted keys come back unsorted.\"\n\
                depends_on = [\"cccl\", \"gpu-model\", \"driver\"]\nevidence = \"e\"\n\
                measured = [{ gpu = \"NVIDIA H200\", sm = \"sm_90\", driver = \"580.159.04\", cccl = \"13.0\", date = \"2026-11-29\" }]\n";
    Facts {
        entries: Facts::parse(text, Path::new("library.toml"), Path::new("/")).unwrap(),
    }
}

fn library(release: &str, target: &str, gpu: &str, status: Status) -> TrialRecord {
    let mut r = rec("sm_90", gpu, "580.159.04", "13.0.88", status);
    r.trial = TrialId::library(release, target, "merge_sort_keys", "n1000-stress");
    r.library = Some(gridcheck_record::LibraryResult {
        release: release.into(),
        cccl: None,
        target: target.into(),
        algorithm: "merge_sort_keys".into(),
        size: 1000,
        env: "stress".into(),
        reps: 20,
        run: gridcheck_record::LibraryRun::default(),
        controls: Vec::new(),
        beside: Vec::new(),
        reproducer: None,
    });
    r
}

#[test]
fn a_library_fact_is_known_where_it_reproduces_and_changed_in_a_release_that_passes() {
    let f = library_facts();
    let (s, m) = f.apply(&library("13.0", "sm_90", "NVIDIA H200", Status::Fail));
    assert_eq!(s, Status::Xfail, "{m}");
    assert!(m.contains("CCCL of 13.0"), "{m}");
    // Another GPU of the same release: it depends on the GPU model.
    let (s, m) = f.apply(&library("13.0", "sm_90", H100, Status::Fail));
    assert_eq!(s, Status::Known, "{m}");
    assert!(m.contains("the GPU here is NVIDIA H100"), "{m}");
    // A newer release that fails the same way: known, naming the release.
    let (s, m) = f.apply(&library("13.3", "sm_90", "NVIDIA H200", Status::Fail));
    assert_eq!(s, Status::Known, "{m}");
    assert!(m.contains("the CCCL here is 13.3's"), "{m}");
    // A release where it passes: changed, never a silent pass.
    let (s, m) = f.apply(&library("13.3", "sm_90", "NVIDIA H200", Status::Pass));
    assert_eq!(s, Status::Changed, "{m}");
    // Another target, another algorithm: not covered.
    let (s, _) = f.apply(&library("13.0", "compute_80", "NVIDIA H200", Status::Fail));
    assert_eq!(s, Status::Fail);
    let mut other = library("13.0", "sm_90", "NVIDIA H200", Status::Fail);
    other.trial = TrialId::library("13.0", "sm_90", "inclusive_scan", "n1000-stress");
    assert_eq!(f.apply(&other).0, Status::Fail);
}

#[test]
fn a_library_fact_names_its_release_and_only_it_depends_on_cccl() {
    let parse = |key: &str, deps: &str, place: &str| {
        let text = format!(
            "[\"{key}\"]\nkind = \"discrepancy\"\nsummary = \"s\"\ndepends_on = [{deps}]\n\
             evidence = \"e\"\nmeasured = [{{ {place}date = \"2026-11-29\" }}]\n"
        );
        Facts::parse(&text, Path::new("library.toml"), Path::new("/"))
    };
    let place = "gpu = \"G\", sm = \"sm_90\", driver = \"580\", cccl = \"13.0\", ";
    assert!(parse("lib/13.0/compute_80/a", "\"cccl\", \"driver\"", place).is_ok());
    assert!(parse("lib/13.0/sm_90/a/n1-quiet", "\"cccl\"", place).is_ok());
    let e = parse("lib/13.0/sm_90/a", "\"driver\"", place).unwrap_err();
    assert!(
        e.contains("library.toml:") && e.contains("depends on `cccl`"),
        "{e}"
    );
    let e = parse("lib/13.3/sm_90/a", "\"cccl\"", place).unwrap_err();
    assert!(e.contains("no place with cccl 13.3"), "{e}");
    let e = parse("lib/13.0/sm_90/a", "\"cccl\"", "sm = \"sm_90\", ").unwrap_err();
    assert!(e.contains("gives no `cccl`"), "{e}");
    let e = parse("gpu/sm_90/t", "\"cccl\"", place).unwrap_err();
    assert!(e.contains("only a fact of the library tier"), "{e}");
}
