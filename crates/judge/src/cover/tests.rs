//! What a fact covers: tests by name and by shape, mutants within and
//! outside the envelope, findings by shape and kind.

use std::collections::BTreeMap;
use std::path::Path;

use gridcheck_record::Environment;
use gridcheck_spec::{Litmus, Spec, TestBody, Verdict};

use super::*;
use crate::Facts;

/// Tests `a` and `b` (a grid that tail-launches a kernel reading x) and
/// `c` (one thread storing then loading x).
fn spec() -> Spec {
    let tail = |name: &str, parent: &str, child: &str, extra: &str| {
        format!(
            "  - name: {name}\n    kind: litmus\n    memory: {{ x: 0, y: 0 }}\n    kernels:\n      - kernel: {parent}\n        launch: host\n        threads:\n          t0: [{extra}store x 1, launch {child} tail]\n      - kernel: {child}\n        launch: device\n        threads:\n          t0: [load r0 x]\n    condition: exists {child}.t0.r0 == 0\n    expect: allowed\n"
        )
    };
    let yaml = format!(
        "rules:\n  - id: cdp2.t.r\n    source: {{ seed: s.txt, section: \"1\" }}\n    quote: q\n    profile: cdp2\n    tests: [a, b, c]\ntests:\n{}{}  - name: c\n    kind: litmus\n    memory: {{ x: 0 }}\n    kernels:\n      - kernel: k\n        launch: host\n        threads:\n          t0: [store x 1, load r0 x]\n    condition: exists k.t0.r0 == 0\n    expect: forbidden\n",
        tail("a", "p", "q", ""),
        tail("b", "k", "m", "store y 1, ")
    );
    gridcheck_spec::load_sources(&[("s.yaml".into(), yaml)], None).unwrap()
}

fn program(spec: &Spec, test: &str) -> Litmus {
    match &spec.test(test).unwrap().body {
        TestBody::Litmus(l) => l.clone(),
        _ => unreachable!(),
    }
}

/// An `unobserved` fact about `a` (shape: a tail launch whose kernel
/// loads x; tried on an H100 under `t.toml`), a discrepancy about `c`
/// (shape: a thread that stores x then loads it) and a compile-time fact
/// without a shape.
fn facts() -> Facts {
    let text = "[\"gpu/sm_90/a\"]\nkind = \"unobserved\"\nsummary = \"s\"\ndepends_on = [\"driver\"]\n\
        shape = \"\"\"\nP: host, launch C tail\nC: tail\nC.b: load x\n\"\"\"\n\
        envelope = { gpus = [\"H100\"], environments = [\"t.toml\"], instances = 9, words = 1 }\n\
        measured = [{ gpu = \"H100\", sm = \"sm_90\", driver = \"580\", date = \"2026-11-26\" }]\n\
        evidence = \"e\"\n\
        [\"gpu/sm_90/c\"]\nkind = \"discrepancy\"\nsummary = \"s\"\ndepends_on = [\"driver\"]\n\
        shape = \"\"\"\nK: host\nK.a: store x, load x\n\"\"\"\n\
        measured = [{ gpu = \"H100\", sm = \"sm_90\", driver = \"580\", date = \"2026-11-26\" }]\n\
        evidence = \"e\"\n\
        [\"static/c\"]\nkind = \"discrepancy\"\nsummary = \"s\"\ndepends_on = [\"toolkit\"]\n\
        measured = [{ toolkit = \"13.0.88\", date = \"2026-11-26\" }]\nevidence = \"e\"\n";
    Facts {
        entries: Facts::parse(text, Path::new("f.toml"), Path::new(".")).unwrap(),
    }
}

fn mutant(name: &str, test: &str, gpu: Option<&str>) -> MutantRecord {
    MutantRecord {
        mutant: name.into(),
        test: test.into(),
        operator: "op".into(),
        site: String::new(),
        original: Verdict::Forbidden,
        status: MutantStatus::Survived,
        message: String::new(),
        verdict: None,
        decided_by: String::new(),
        kill_states: Vec::new(),
        runs: Vec::new(),
        budget_s: 1.0,
        environment: gpu.map(|g| Environment {
            gpu: g.into(),
            sm: "sm_90".into(),
            driver: "13.0".into(),
            nvcc: None,
            driver_version: Some("580".into()),
            tuning: None,
            tuning_file: Some("t.toml".into()),
            device: None,
            binary: None,
            toolchain: None,
        }),
        commit: None,
    }
}

fn finding(class: &str, program: Result<Litmus, String>) -> RecordedFinding {
    RecordedFinding {
        campaign: "records/g/campaigns/d/c".into(),
        line: 1,
        class: class.into(),
        shape: String::new(),
        first: "p-1".into(),
        ended: "context".into(),
        program,
    }
}

/// The covers of [`facts`] with mutants `a~x` (the program of `b`) on
/// the H100, on an H200 and on no GPU, and `c~y` (of `c`) on the H100
/// (on the H200, not a mutant);
/// findings: a violation of `c`'s program, a hang of it, a violation
/// without a program.
fn covers() -> Vec<FactCover> {
    let spec = spec();
    let programs: BTreeMap<String, Litmus> = [
        ("a~x".to_string(), program(&spec, "b")),
        ("c~y".to_string(), program(&spec, "c")),
    ]
    .into();
    let mutants = [
        mutant("a~x", "a", Some("H100")),
        mutant("a~x", "a", Some("NVIDIA H200")),
        mutant("a~x", "a", None),
        mutant("c~y", "c", Some("H100")),
        MutantRecord {
            status: MutantStatus::NotAMutant,
            ..mutant("c~y", "c", Some("NVIDIA H200"))
        },
    ];
    let findings = [
        finding("violation", Ok(program(&spec, "c"))),
        finding("hang", Ok(program(&spec, "c"))),
        finding("violation", Err("not recorded".into())),
    ];
    facts().cover(&CoverInputs {
        spec: &spec,
        mutants: &mutants,
        programs: &programs,
        findings: &findings,
    })
}

#[test]
fn a_shape_that_matches_a_test_it_does_not_name_lists_it_by_shape() {
    let c = covers();
    assert_eq!(c[0].fact, "gpu/sm_90/a");
    assert_eq!(
        c[0].named,
        [NamedTest {
            test: "a".into(),
            shape_matches: true
        }]
    );
    assert_eq!(c[0].by_shape, ["b"]);
    assert_eq!(
        c[0].counts().to_string(),
        "tests 1 by name, 1 by shape only; mutants 3 (1 within the envelope, 2 outside); \
         no recorded finding"
    );
}

#[test]
fn a_shape_that_matches_only_its_named_test_says_so() {
    let c = covers();
    assert_eq!(c[1].fact, "gpu/sm_90/c");
    assert!(c[1].named[0].shape_matches);
    assert!(c[1].by_shape.is_empty(), "{:?}", c[1].by_shape);
    // A discrepancy has no envelope: its mutants are counted, not split.
    assert_eq!(
        c[1].counts().to_string(),
        "tests 1 by name, 0 by shape only; mutants 1; findings 1 \
         (1 of its kind without a recorded program)"
    );
    // No shape: its key only, whatever matches.
    assert_eq!(
        c[2].counts().to_string(),
        "tests 1 by name (no shape: its key only); no mutant or finding matched"
    );
    assert!(!c[2].named[0].shape_matches);
}

#[test]
fn mutants_are_within_or_outside_the_envelope_with_why() {
    let c = covers();
    let m: Vec<(&str, Option<&str>, &Inside)> = c[0]
        .mutants
        .iter()
        .map(|m| (m.mutant.as_str(), m.gpu.as_deref(), &m.inside))
        .collect();
    assert_eq!(m.len(), 3);
    assert!(m.contains(&("a~x", Some("H100"), &Inside::Within)), "{m:?}");
    let h200 = m.iter().find(|x| x.1 == Some("NVIDIA H200")).unwrap();
    assert!(
        matches!(h200.2, Inside::Outside(why) if why.contains("not a GPU it was tried on")),
        "{m:?}"
    );
    assert!(
        m.contains(&("a~x", None, &Inside::Outside("it ran on no GPU".into()))),
        "{m:?}"
    );
    // The other fact's shape does not match `b`'s program; a candidate
    // that is not a mutant is not counted.
    assert!(c[1].mutants.iter().all(|m| m.mutant == "c~y"));
    assert_eq!(c[1].mutants.len(), 1, "{:?}", c[1].mutants);
    assert_eq!(c[1].mutants[0].inside, Inside::NoEnvelope);
}

#[test]
fn findings_are_covered_by_shape_and_kind() {
    let c = covers();
    // The violation of `c`'s program: the discrepancy; the hang of it: no
    // fact of its kind; the unobserved fact covers no finding.
    assert_eq!(c[1].findings.len(), 1);
    assert_eq!(c[1].findings[0].class, "violation");
    assert_eq!(c[1].findings_unmatched, 1);
    assert!(c[0].findings.is_empty() && c[0].findings_unmatched == 0);
    // Each fact's counts, as the summary's lines show them.
    let counts: Vec<CoverCounts> = c.iter().map(FactCover::counts).collect();
    assert_eq!(counts.len(), 3);
    assert_eq!(
        (counts[0].fact.as_str(), counts[0].kind),
        ("gpu/sm_90/a", "unobserved")
    );
    assert!(
        counts[0]
            .to_string()
            .starts_with("tests 1 by name, 1 by shape only;"),
        "{}",
        counts[0]
    );
}

#[test]
fn a_finding_is_explained_by_its_kind_of_fact() {
    assert_eq!(FactKind::of_finding("hang"), Some(FactKind::Hang));
    assert_eq!(
        FactKind::of_finding("unmodeled"),
        Some(FactKind::Discrepancy)
    );
    assert_eq!(
        FactKind::of_finding("launch-error"),
        Some(FactKind::LaunchError)
    );
    assert_eq!(FactKind::of_finding("crash"), None);
}
