//! The facts' file format (`conformance/facts/*.toml`): what parses, every
//! error with its file, line and field; and the checked-in facts against
//! the spec and the newest recorded run of each GPU.

use std::path::Path;

use gridcheck_judge::{Applies, ArchRange, Dependency, Fact, FactKind, Facts, Here, sm_number};
use gridcheck_record::{Status, TrialRecord};

const GOOD: &str = r#"# a comment
["gpu/sm_90/t"]
kind = "discrepancy"
summary = "It wrote zeros."
depends_on = ["driver", "device-runtime"]
measured = [
  { gpu = "NVIDIA H100 80GB HBM3", sm = "sm_90", driver = "580.159.04", device_runtime = "13.0", date = "2026-11-24" },
]
evidence = """
Measured, and this and that ruled out.
"""
"#;

fn parse(text: &str) -> Result<Vec<Fact>, String> {
    Facts::parse(
        text,
        Path::new("/r/conformance/facts/gpu.toml"),
        Path::new("/r"),
    )
}

#[test]
fn a_fact_parses_with_its_file_and_line() {
    let f = parse(GOOD).unwrap();
    assert_eq!(f.len(), 1);
    let f = &f[0];
    assert_eq!(f.subject.to_string(), "gpu/sm_90/t");
    assert_eq!((f.kind, f.line), (FactKind::Discrepancy, 2));
    assert_eq!(f.at(), "conformance/facts/gpu.toml:2");
    assert_eq!(f.evidence, "Measured, and this and that ruled out.");
    assert_eq!(
        f.depends_on,
        vec![Dependency::Driver, Dependency::DeviceRuntime]
    );
    assert_eq!(f.depends_on_text(), "driver, device-runtime");
    assert_eq!(
        f.measured[0].to_string(),
        "NVIDIA H100 80GB HBM3 (sm_90), driver 580.159.04, device runtime 13.0, 2026-11-24"
    );
    let two = format!("{GOOD}\n{}", GOOD.replace("gpu/sm_90/t", "gpu/sm_90/a.b/u"));
    let f = parse(&two).unwrap();
    assert_eq!((f[0].line, f[1].line), (2, 14), "file order");
}

#[test]
fn dependencies_and_ranges() {
    for s in [
        "gpu-model",
        "driver",
        "device-runtime",
        "toolkit",
        "sm>=90",
        "sm<100",
        "sm==80",
    ] {
        assert_eq!(s.parse::<Dependency>().unwrap().to_string(), s);
    }
    for s in ["sm", "sm>=", "sm>=9a", "gpu", "sm=>90"] {
        assert!(s.parse::<Dependency>().is_err(), "{s}");
    }
    let r = ArchRange { op: ">=", sm: 90 };
    assert!(r.contains("sm_90") && r.contains("sm_100") && !r.contains("sm_89"));
    assert!(!r.contains("gpu"));
    assert_eq!(sm_number("sm_90a"), Some(90));
}

/// Every malformed fact is an error naming the file, the line and the
/// field.
#[test]
fn errors_name_the_file_line_and_field() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "kind = \"discrepancy\"",
            "kind = \"flake\"",
            "gpu.toml:3: field `kind`: unknown variant `flake`",
        ),
        (
            "summary = ",
            "colour = 1\nsummary = ",
            "gpu.toml:4: field `colour`: unknown field `colour`",
        ),
        (
            "\"gpu/sm_90/t\"",
            "\"gpu/t\"",
            "gpu.toml:2: `gpu/t`: a GPU name starts `gpu/sm_XX/`",
        ),
        (
            "\"driver\", ",
            "\"drivers\", ",
            "gpu.toml:5: field `depends_on`: `drivers` is none of",
        ),
        (
            "It wrote zeros.",
            "",
            "gpu.toml:4: `gpu/sm_90/t`: field `summary`",
        ),
        (
            "\"driver\", \"device-runtime\"",
            "",
            "gpu.toml:5: `gpu/sm_90/t`: field `depends_on`: name what",
        ),
        (
            "\"device-runtime\"]",
            "\"driver\"]",
            "gpu.toml:5: `gpu/sm_90/t`: field `depends_on`: `driver` is named twice",
        ),
        (
            "2026-11-24",
            "24.11.2026",
            "gpu.toml:6: `gpu/sm_90/t`: field `measured`: date `24.11.2026`",
        ),
        (
            "driver = \"580.159.04\", ",
            "",
            "gpu.toml:6: `gpu/sm_90/t`: field `measured`: the place of 2026-11-24 depends on `driver` but gives no `driver`",
        ),
        (
            "sm = \"sm_90\"",
            "sm = \"sm_80\"",
            "field `measured`: no place on the key's `sm_90`",
        ),
        (
            "\"device-runtime\"]",
            "\"sm>=100\"]",
            "field `depends_on`: the key's `sm_90` is outside `sm>=100`",
        ),
        (
            "date = ",
            "where = \"x\", date = ",
            "gpu.toml:7: unknown field `where`",
        ),
        (
            "\nMeasured, and this and that ruled out.\n",
            "  ",
            "field `evidence`",
        ),
    ];
    for (from, to, want) in cases {
        assert!(GOOD.contains(from), "{from}");
        let e = parse(&GOOD.replacen(from, to, 1)).unwrap_err();
        assert!(e.starts_with("conformance/facts/gpu.toml:"), "{e}");
        assert!(e.contains(want), "want {want:?} in {e}");
    }
    // Equivalent mutants: an `unobserved` fact's, named `<test>~<operator>`.
    let with_mutants = GOOD.replace("evidence = ", "mutants = [\"t~add-pdl\"]\nevidence = ");
    let e = parse(&with_mutants).unwrap_err();
    assert!(
        e.contains("field `mutants`: only an `unobserved` fact makes mutants equivalent"),
        "{e}"
    );
    let unobserved = with_mutants.replace("\"discrepancy\"", "\"unobserved\"");
    let e = parse(&unobserved).unwrap_err();
    assert!(
        e.contains("gpu.toml:2: `gpu/sm_90/t`: field `envelope`: an `unobserved` fact states what was tried"),
        "{e}"
    );
    let unobserved = unobserved.replace(
        "evidence = ",
        "envelope = { gpus = [\"H\"], environments = [\"t.toml\"], instances = 5, words = 1 }\nevidence = ",
    );
    assert_eq!(parse(&unobserved).unwrap()[0].mutants, ["t~add-pdl"]);
    let e = parse(&unobserved.replace("t~add-pdl", "t-add-pdl")).unwrap_err();
    assert!(
        e.contains(
            "gpu.toml:9: `gpu/sm_90/t`: field `mutants`: `t-add-pdl` is not `<test>~<operator>`"
        ),
        "{e}"
    );
    // A launch error: its shape names the calls that fail.
    let launch_error = GOOD.replace("\"discrepancy\"", "\"launch-error\"");
    let e = parse(&launch_error).unwrap_err();
    assert!(
        e.contains(
            "gpu.toml:2: `gpu/sm_90/t`: field `shape`: a `launch-error` fact states the calls"
        ),
        "{e}"
    );
    let with_shape =
        launch_error.replace("evidence = ", "shape = \"K: any, record _ _\"\nevidence = ");
    let f = &parse(&with_shape).unwrap()[0];
    assert_eq!(
        (f.kind, f.kind.as_str()),
        (FactKind::LaunchError, "launch-error")
    );
    assert_eq!(f.shape.len(), 1);
    let e = parse(&GOOD.replace("\"gpu/sm_90/t\"", "\"static/t\"")).unwrap_err();
    assert!(
        e.contains("field `depends_on`: `driver`: a fact of the static tier runs no GPU"),
        "{e}"
    );
    let e = parse(&GOOD.replace("measured = [\n  {", "measured = [\n ] \n x = [{")).unwrap_err();
    assert!(e.starts_with("conformance/facts/gpu.toml:"), "{e}");
}

#[test]
fn loading_a_directory() {
    let dir = std::env::temp_dir().join(format!("gridcheck-facts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("gpu.toml"), GOOD).unwrap();
    std::fs::write(dir.join("notes.txt"), "not a fact").unwrap();
    let x = Facts::load_all(&dir, &dir).unwrap();
    assert_eq!(x.entries.len(), 1);
    assert_eq!(x.entries[0].file, Path::new("gpu.toml"));
    std::fs::write(dir.join("bad.toml"), "[\"gpu/sm_90/x\"]\nkind = 1\n").unwrap();
    let e = Facts::load_all(&dir, &dir).unwrap_err();
    assert!(e.starts_with("bad.toml:2:"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(Facts::load_all(&dir, &dir).unwrap().entries.is_empty());
}

fn root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The checked-in files parse, every fact names a test of the spec (and,
/// for a trial, a rule that lists it) or a user program of the machine-code
/// tier, and every GPU fact's first place is the H100 where the list began.
#[test]
fn the_checked_in_facts_name_real_tests() {
    let root = root();
    let x = Facts::load_all(&root.join("conformance/facts"), &root).unwrap();
    assert!(x.entries.len() >= 8, "{}", x.entries.len());
    let spec = gridcheck_spec::load_dir(&root.join("spec"), None).unwrap();
    let programs = std::fs::read_to_string(root.join("kernels/sass/programs.toml")).unwrap();
    let catalog = gridcheck_library::Catalog::load(&root).unwrap();
    for e in &x.entries {
        if e.subject.tier() == gridcheck_record::Tier::Library {
            // `lib/<release>/<target>/<algorithm>[/<case>]`: an algorithm of
            // that release in the generated catalog.
            let key = e.subject.test_key();
            let release = key.toolchain.as_deref().and_then(|r| catalog.release(r));
            assert!(
                release.is_some_and(|r| r.algorithms.iter().any(|a| a.name == key.test)),
                "{}: no such algorithm of that release in the catalog",
                e.subject
            );
            continue;
        }
        if e.subject.rule() == Some(gridcheck_record::USER_PROGRAMS) {
            let name = format!("name = \"{}\"", e.subject.test());
            assert!(programs.contains(&name), "{}", e.subject);
            continue;
        }
        assert!(spec.test(e.subject.test()).is_some(), "{}", e.subject);
        // The equivalent mutants it names are of tests of the spec.
        for m in &e.mutants {
            let (test, _) = m.split_once('~').unwrap();
            assert!(spec.test(test).is_some(), "{}: mutant {m}", e.subject);
        }
        if let Some(rule) = e.subject.rule() {
            let r = spec.rule(rule).unwrap_or_else(|| panic!("{}", e.subject));
            assert!(
                r.tests.iter().any(|t| t == e.subject.test()),
                "{}",
                e.subject
            );
        }
    }
}

/// Facts travel: on an H200 with the H100's driver and device runtime,
/// the H100's facts of the driver and device runtime apply (`known`), the
/// ones believed to depend on the GPU model do not; the H200's own facts
/// travel to the H100 the same way.
#[test]
fn the_h100s_facts_on_an_h200() {
    let root = root();
    let x = Facts::load_all(&root.join("conformance/facts"), &root).unwrap();
    let h200 = Here {
        gpu: Some("NVIDIA H200".into()),
        sm: Some("sm_90".into()),
        driver: Some("580.159.04".into()),
        device_runtime: Some("13.0.88".into()),
        toolkit: Some("13.0.88".into()),
        cccl: None,
    };
    let h100 = Here {
        gpu: Some("NVIDIA H100 80GB HBM3".into()),
        ..h200.clone()
    };
    let mut known = Vec::new();
    for f in x
        .entries
        .iter()
        .filter(|f| f.subject.tier() == gridcheck_record::Tier::Gpu)
    {
        // Measured on one of the two; the other is where it travels.
        let (home, away, away_gpu, home_gpu) = match f.applies(&h100) {
            Applies::Measured(_) => (&h100, &h200, "NVIDIA H200", "NVIDIA H100 80GB HBM3"),
            _ => (&h200, &h100, "NVIDIA H100 80GB HBM3", "NVIDIA H200"),
        };
        assert!(
            matches!(f.applies(home), Applies::Measured(_)),
            "{} was measured on neither GPU",
            f.subject
        );
        match f.applies(away) {
            Applies::Elsewhere(p) => {
                assert_eq!(p.gpu.as_deref(), Some(home_gpu));
                if home_gpu.contains("H100") {
                    known.push(f.subject.test().to_string());
                }
            }
            Applies::Beyond(p, why) => {
                assert_eq!(p.gpu.as_deref(), Some(home_gpu));
                assert!(
                    why.contains(&format!("the GPU here is {away_gpu}")),
                    "{why}"
                );
            }
            Applies::No(why) => panic!("{} does not travel to the {away_gpu}: {why}", f.subject),
            // Measured on both GPUs.
            Applies::Measured(_) => {}
        }
    }
    for t in [
        "c2-ptx-parameter-buffer-64-byte-aligned",
        "c2-jit-cdp1-device-synchronize-load-error",
        "c2-memset-async-diagnosis",
        "c2-device-copies-match-host",
        "c2-device-attribute-ordinal-range",
    ] {
        assert!(
            known.contains(&t.to_string()),
            "{t} does not travel: {known:?}"
        );
    }
}

/// The newest recorded run of each GPU agrees with the files: every xfail
/// there is covered by a fact measured on that machine, and a trial such a
/// fact covers was xfail (or did not run). Older runs keep the statuses of
/// their day.
#[test]
fn the_checked_in_facts_cover_the_recorded_xfails() {
    let root = root();
    let x = Facts::load_all(&root.join("conformance/facts"), &root).unwrap();
    let mut checked = 0;
    for gpu in std::fs::read_dir(root.join("records")).unwrap().flatten() {
        let newest = std::fs::read_dir(gpu.path())
            .into_iter()
            .flatten()
            .flatten()
            .filter(|d| gridcheck_store::find_stored(&d.path(), "results.jsonl").is_some())
            .max_by_key(|d| d.file_name());
        let Some(date) = newest else { continue };
        let file = gridcheck_store::find_stored(&date.path(), "results.jsonl").unwrap();
        let read = gridcheck_store::read_results_file(&file).unwrap();
        assert!(
            read.skipped.is_empty(),
            "{}: {:?}",
            file.display(),
            read.skipped
        );
        let records: Vec<TrialRecord> = read.records;
        let nvcc = records
            .iter()
            .find_map(|r| r.environment.as_ref().and_then(|e| e.nvcc.clone()));
        for r in &records {
            let mut here = Here::of(r);
            if here.toolkit.is_none() {
                here.toolkit = nvcc.clone();
            }
            let measured = x
                .covering(&r.trial)
                .into_iter()
                .any(|f| matches!(f.applies(&here), Applies::Measured(_)));
            if r.status == Status::Xfail {
                assert!(
                    measured,
                    "{} was xfail, no fact measured there covers it",
                    r.trial
                );
                checked += 1;
            }
            if measured {
                // Judged by today's facts (a record may predate the fact
                // that covers it); a known hang that did not happen in this
                // run is `changed`, not stale: the harness's environment
                // makes it rare (the fact's evidence says how rare).
                let now = x.apply(r).0;
                let covering = x.covering(&r.trial);
                let only_hangs = covering
                    .iter()
                    .all(|f| f.kind == gridcheck_judge::FactKind::Hang);
                // A rare behaviour (`reproduces = "sometimes"`) that did not
                // show leaves the trial's own status.
                let only_rare = covering.iter().all(|f| f.sometimes);
                assert!(
                    matches!(
                        now,
                        Status::Xfail | Status::KnownHang | Status::NotSupported | Status::NotRun
                    ) || (now == Status::Changed && only_hangs)
                        || (matches!(now, Status::Pass | Status::QualityWarning) && only_rare),
                    "{} is covered but was {} (today's facts make it {now})",
                    r.trial,
                    r.status
                );
            }
        }
    }
    assert!(checked > 0, "no recorded xfail was checked");
}

/// A machine-code fact of a user program, as `conformance/facts/sass.toml`
/// keys one: its first toolchain and architecture, the toolkit and an
/// architecture range.
const SASS: &str = r#"["sass/13.2/sm_100/user/p"]
kind = "discrepancy"
summary = "The load is issued before the wait."
depends_on = ["toolkit", "sm>=100"]
measured = [
  { toolkit = "13.2.86", sm = "sm_100", date = "2026-11-26" },
  { toolkit = "13.5.37", sm = "sm_120", date = "2026-11-26" },
]
evidence = "Measured."
"#;

#[test]
fn a_machine_code_fact_covers_every_toolchain_it_was_measured_with() {
    let f = Facts {
        entries: parse(SASS).unwrap(),
    };
    let trial = |tc: &str, sm: &str, nvcc: &str| {
        let mut r = TrialRecord::new(
            gridcheck_record::TrialId::sass(tc, sm, "user", "p"),
            Status::Fail,
            "m",
        );
        r.compile = Some(gridcheck_record::CompileSummary {
            nvcc: nvcc.into(),
            command: String::new(),
            success: true,
            output: String::new(),
            toolchain: None,
        });
        f.apply(&r).0
    };
    assert_eq!(trial("13.2", "sm_100", "13.2.86"), Status::Xfail);
    assert_eq!(trial("13.5", "sm_120", "13.5.37"), Status::Xfail);
    // In the range, with a measured nvcc, but never on this architecture
    // with it: known.
    assert_eq!(trial("13.5", "sm_100", "13.5.37"), Status::Known);
    assert_eq!(trial("13.2", "sm_120", "13.2.86"), Status::Known);
    assert_eq!(trial("13.5", "sm_120", "13.5.1"), Status::Known);
    // Never measured with 13.0: the finding travels, known; sm_90 is
    // outside the range, where it says nothing.
    assert_eq!(trial("13.0", "sm_100", "13.0.88"), Status::Known);
    assert_eq!(trial("13.5", "sm_90", "13.5.37"), Status::Fail);

    let cases = [
        (
            "\"toolkit\", ",
            "",
            "sass.toml:4: `sass/13.2/sm_100/user/p`: field `depends_on`: a fact of the sass tier depends on the `toolkit`",
        ),
        (
            "\"sm>=100\"",
            "\"sm>=100\", \"driver\"",
            "field `depends_on`: `driver`: a fact of the sass tier runs no GPU",
        ),
        (
            "13.2.86",
            "13.3.73",
            "sass.toml:5: `sass/13.2/sm_100/user/p`: field `measured`: no place with nvcc 13.2",
        ),
        (
            "\"sm>=100\"",
            "\"sm>=120\"",
            "the key's `sm_100` is outside `sm>=120`",
        ),
    ];
    for (from, to, want) in cases {
        assert!(SASS.contains(from), "{from}");
        let e = Facts::parse(
            &SASS.replacen(from, to, 1),
            Path::new("/r/conformance/facts/sass.toml"),
            Path::new("/r"),
        )
        .unwrap_err();
        assert!(e.starts_with("conformance/facts/sass.toml:"), "{e}");
        assert!(e.contains(want), "want {want:?} in {e}");
    }
}
