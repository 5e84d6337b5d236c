//! The facts (`conformance/facts/*.toml`, read by
//! `gridcheck_report::Facts`, which checks each fact's fields) checked
//! against the spec on every run, whatever the machine can run: each
//! fact names a test of the spec (a trial's fact also a rule that lists the
//! test) on a tier that runs it. So a renamed or removed test cannot leave
//! a stale fact behind, and a malformed file is noticed without nvcc or a
//! GPU. Every fact is loaded whatever the machine: where one applies is
//! decided trial by trial from the machine the trial ran on. A machine-code
//! fact about a user program (`sass/<toolchain>/<sm>/user/<program>`) names
//! a program of `kernels/sass/programs.toml` instead, and a library fact
//! (`lib/<release>/<target>/<algorithm>`) an algorithm of the CCCL catalog.

use std::path::Path;

use gridcheck_report::{Facts, Subject, Tier, USER_PROGRAMS};
use gridcheck_spec::{Spec, TestBody};

/// Whether `tier` makes trials of a test with this body.
fn runs(tier: Tier, body: &TestBody) -> bool {
    matches!(
        (tier, body),
        (Tier::Model, TestBody::Litmus(_))
            | (Tier::Static, TestBody::Compile(_))
            | (
                Tier::Gpu,
                TestBody::Litmus(_) | TestBody::Runtime(_) | TestBody::Host(_)
            )
            | (Tier::Sass, TestBody::Litmus(_))
    )
}

/// Every fact of every `*.toml` in `dir`, or every problem, one per line.
pub fn load_checked(dir: &Path, root: &Path, spec: Option<&Spec>) -> Result<Facts, String> {
    let x = Facts::load_all(dir, root)?;
    let mut problems = Vec::new();
    let mut programs = None;
    for e in &x.entries {
        let at = e.at();
        if e.subject.tier() == Tier::Library {
            if let Err(why) = crate::library::names_an_algorithm(root, &e.subject) {
                problems.push(format!("{at}: `{}` {why}", e.subject));
            }
            continue;
        }
        if e.subject.tier() == Tier::Sass && e.subject.rule() == Some(USER_PROGRAMS) {
            let dir = root.join(gridcheck_sass::programs::PROGRAMS_DIR);
            let names = programs.get_or_insert_with(|| {
                gridcheck_sass::programs::load(&dir)
                    .map(|ps| ps.into_iter().map(|p| p.name).collect::<Vec<_>>())
            });
            match names {
                Ok(names) if names.iter().any(|n| n == e.subject.test()) => {}
                Ok(_) => problems.push(format!(
                    "{at}: `{}` names no user program of {}/programs.toml",
                    e.subject,
                    gridcheck_sass::programs::PROGRAMS_DIR
                )),
                Err(why) => problems.push(format!(
                    "{at}: `{}` names a user program, but the programs cannot be read: {why}",
                    e.subject
                )),
            }
            continue;
        }
        let Some(spec) = spec else { continue };
        let test = spec.test(e.subject.test());
        let listed = match &e.subject {
            Subject::Trial(t) => spec
                .rule(&t.rule)
                .is_some_and(|r| r.tests.iter().any(|n| n == &t.test)),
            Subject::Test(_) => true,
        };
        if let Some(now) = spec
            .test_now_or_formerly(e.subject.test())
            .filter(|_| test.is_none())
        {
            problems.push(format!(
                "{at}: `{}` names `{}`, which is called `{}` now (its `formerly:` lists the old name): name the test as it is now",
                e.subject,
                e.subject.test(),
                now.name
            ));
        } else if !test.is_some_and(|t| listed && runs(e.subject.tier(), &t.body)) {
            problems.push(format!(
                "{at}: `{}` is not a test or trial of this spec (a renamed or removed rule or test?)",
                e.subject
            ));
        } else if let Some(t) = test
            && e.subject.tier() == Tier::Gpu
            && matches!(t.body, TestBody::Litmus(_))
        {
            shaped(e, t, &mut problems);
        }
    }
    if problems.is_empty() {
        Ok(x)
    } else {
        Err(problems.join("\n"))
    }
}

/// A GPU fact about a litmus test states its mechanism (`shape`), and the
/// shape covers the test it was measured on.
fn shaped(e: &gridcheck_report::Fact, t: &gridcheck_spec::Test, problems: &mut Vec<String>) {
    let at = e.at();
    let TestBody::Litmus(l) = &t.body else { return };
    if e.shape.is_empty() {
        problems.push(format!(
            "{at}: `{}`: field `shape`: a fact about a litmus test states its mechanism as a shape (conformance/facts/README.md)",
            e.subject
        ));
    } else if e.shape_of(l).is_none() {
        problems.push(format!(
            "{at}: `{}`: field `shape`: no pattern of it matches `{}`, the test it was measured on",
            e.subject, t.name
        ));
    }
}

/// Whether a known hang (`kind = "hang"`) is about a GPU trial of `test`.
pub fn known_hang(facts: &Facts, test: &str) -> bool {
    facts.entries.iter().any(|f| {
        f.kind == gridcheck_report::FactKind::Hang
            && f.subject.tier() == Tier::Gpu
            && f.subject.test() == test
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> Spec {
        let yaml = gridcheck_fixture::OneRule::new().tests(
            "  - name: t-one
    formerly: [t-old]
    kind: litmus
    memory: { x: 0 }
    kernels:
      - kernel: k
        launch: host
        threads:
          t0: [store x 1]
    condition: exists x == 1
    expect: required
",
        );
        gridcheck_spec::load_sources(&[("spec/a.yaml".into(), yaml.yaml())], None).unwrap()
    }

    /// The shape line of a GPU fact about `t-one` (its one store).
    fn shape_of(key: &str, shape: &str) -> String {
        if key.starts_with("gpu/") {
            format!("shape = \"{shape}\"\n")
        } else {
            String::new()
        }
    }

    const T_ONE: &str = "K: host\\nK.a: store x";

    fn check(key: &str) -> Result<Facts, String> {
        check_shaped(key, &shape_of(key, T_ONE))
    }

    fn check_shaped(key: &str, shape: &str) -> Result<Facts, String> {
        let toml = format!(
            "[\"{key}\"]\nkind = \"discrepancy\"\nsummary = \"s\"\ndepends_on = [\"toolkit\"]\n{shape}\
             evidence = \"e\"\nmeasured = [{{ sm = \"sm_90\", toolkit = \"13.0.88\", date = \"2026-11-24\" }}]\n"
        );
        check_with(key, &toml, None)
    }

    #[test]
    fn a_gpu_fact_about_a_litmus_test_states_a_shape_that_covers_it() {
        let e = check_shaped("gpu/sm_90/t-one", "").unwrap_err();
        assert!(
            e.starts_with("gpu.toml:1: ")
                && e.contains("field `shape`: a fact about a litmus test states its mechanism"),
            "{e}"
        );
        let e = check_shaped(
            "gpu/sm_90/t-one",
            &shape_of("gpu/", "K: host\\nK.a: load x"),
        )
        .unwrap_err();
        assert!(e.contains("no pattern of it matches `t-one`"), "{e}");
    }

    /// The facts file `toml` in a checkout that has `programs` as its
    /// `kernels/sass/programs.toml`.
    fn check_with(key: &str, toml: &str, programs: Option<&str>) -> Result<Facts, String> {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(
            "gridcheck-facts-check-{}-{n}-{}",
            std::process::id(),
            key.len()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("gpu.toml"), toml).unwrap();
        if let Some(p) = programs {
            let d = dir.join(gridcheck_sass::programs::PROGRAMS_DIR);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("programs.toml"), p).unwrap();
            std::fs::write(
                d.join("wait-in-loop.cu"),
                "w(); // sass: wait\nl(); // sass: load\n",
            )
            .unwrap();
        }
        let r = load_checked(&dir, &dir, Some(&spec()));
        let _ = std::fs::remove_dir_all(&dir);
        r
    }

    #[test]
    fn every_fact_names_a_test_of_the_spec() {
        assert_eq!(check("gpu/sm_90/t-one").unwrap().entries.len(), 1);
        assert!(check("gpu/sm_90/cdp2.memory.x/t-one").is_ok());
        let e = check("gpu/sm_90/t-old").unwrap_err();
        assert!(e.contains("called `t-one` now"), "{e}");
        let e = check("gpu/sm_90/t-gone").unwrap_err();
        assert!(
            e.starts_with("gpu.toml:1: ") && e.contains("t-gone") && e.contains("not a test"),
            "{e}"
        );
        let e = check("gpu/sm_90/cdp2.memory.y/t-one").unwrap_err();
        assert!(e.contains("not a test"), "{e}");
        let e = check("static/t-one").unwrap_err();
        assert!(e.contains("not a test"), "{e}");
        let e = check("gpu/t-one").unwrap_err();
        assert!(e.starts_with("gpu.toml:1: "), "{e}");
    }

    #[test]
    fn a_user_program_fact_names_a_program_of_the_checkout() {
        let fact = |key: &str| {
            format!(
                "\n[\"{key}\"]\nkind = \"discrepancy\"\nsummary = \"s\"\n\
                 depends_on = [\"toolkit\", \"sm>=100\"]\nevidence = \"e\"\n\
                 measured = [{{ sm = \"sm_100\", toolkit = \"13.2.86\", date = \"2026-11-26\" }}]\n"
            )
        };
        let programs = "[[program]]\nname = \"wait-in-loop\"\nfile = \"wait-in-loop.cu\"\n\
                        kernel = \"secondary\"\nsummary = \"s\"\nafter_wait = [\"load\"]\n";
        let key = "sass/13.2/sm_100/user/wait-in-loop";
        let x = check_with(key, &fact(key), Some(programs)).unwrap();
        assert_eq!(x.entries.len(), 1);
        // A machine-code trial of a test of the spec.
        let key = "sass/13.2/sm_100/cdp2.memory.x/t-one";
        assert!(check_with(key, &fact(key), Some(programs)).is_ok());
        let key = "sass/13.2/sm_100/user/no-such";
        let e = check_with(key, &fact(key), Some(programs)).unwrap_err();
        assert!(
            e.starts_with("gpu.toml:2: ") && e.contains("names no user program of kernels/sass"),
            "{e}"
        );
        // No programs file: an error, not a silent pass.
        let key = "sass/13.2/sm_100/user/wait-in-loop";
        let e = check_with(key, &fact(key), None).unwrap_err();
        assert!(e.starts_with("gpu.toml:2: "), "{e}");
    }

    #[test]
    fn a_known_hang_is_found_by_its_test() {
        let hang = |key: &str| {
            let toml = format!(
                "[\"{key}\"]\nkind = \"hang\"\nsummary = \"s\"\ndepends_on = [\"driver\"]\n{}\
                 evidence = \"e\"\nmeasured = [{{ gpu = \"G\", sm = \"sm_90\", driver = \"580.1\", date = \"2026-11-24\" }}]\n",
                shape_of(key, T_ONE)
            );
            check_with(key, &toml, None).unwrap()
        };
        assert!(known_hang(&hang("gpu/sm_90/t-one"), "t-one"));
        assert!(known_hang(&hang("gpu/sm_90/cdp2.memory.x/t-one"), "t-one"));
        assert!(!known_hang(&hang("gpu/sm_90/t-one"), "t-two"));
        // A discrepancy is not a hang.
        assert!(!known_hang(&check("gpu/sm_90/t-one").unwrap(), "t-one"));
    }
}
