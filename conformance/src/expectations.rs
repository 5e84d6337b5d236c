//! The expectations files checked on every run, whatever the machine can run
//! (the files themselves are read by `gridcheck_report::Expectations`): each
//! file parses, each entry gives a reason and, against the spec the files
//! are about, names a test of it (a trial entry also a rule that lists the
//! test) on a tier that runs it. So a renamed or removed test cannot leave
//! a stale entry behind, and a malformed file is noticed without nvcc or a
//! GPU. A machine-code trial of a user program
//! (`sass/<toolchain>/<sm>/user/<program>`) names a program of
//! `kernels/sass/programs.toml` instead.

use std::path::Path;

use gridcheck_report::{Expectations, Subject, Tier, USER_PROGRAMS};
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

/// Every problem of every `*.toml` in `dir`, one per line, or `Ok`.
pub fn check_all(dir: &Path, root: &Path, spec: Option<&Spec>) -> Result<(), String> {
    let x = Expectations::load_all(dir, root)?;
    let mut problems = Vec::new();
    for e in &x.entries {
        let at = e.file.display();
        if e.reason.trim().is_empty() {
            problems.push(format!(
                "{at}: `{}` has an empty reason: say why it is known to fail, with the evidence",
                e.subject
            ));
        }
        if e.subject.tier() == Tier::Sass && e.subject.rule() == Some(USER_PROGRAMS) {
            let programs = gridcheck_sass::programs::load(&root.join(crate::sass::PROGRAMS_DIR))
                .unwrap_or_default();
            if !programs.iter().any(|p| p.name == e.subject.test()) {
                problems.push(format!(
                    "{at}: `{}` names no user program of {}/programs.toml",
                    e.subject,
                    crate::sass::PROGRAMS_DIR
                ));
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
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> Spec {
        let yaml = "rules:
  - id: cdp2.memory.x
    source: { seed: s.txt, section: \"1 S\" }
    quote: q
    profile: cdp2
    tests: [t-one]
tests:
  - name: t-one
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
";
        gridcheck_spec::load_sources(&[("spec/a.yaml".into(), yaml.into())], None).unwrap()
    }

    fn check(toml: &str) -> Result<(), String> {
        let dir = std::env::temp_dir().join(format!(
            "gridcheck-expectations-check-{}-{}",
            std::process::id(),
            toml.len()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("gpu.toml"), toml).unwrap();
        let r = check_all(&dir, &dir, Some(&spec()));
        let _ = std::fs::remove_dir_all(&dir);
        r
    }

    #[test]
    fn every_entry_names_a_test_of_the_spec_and_gives_a_reason() {
        assert!(check("[xfail]\n\"gpu/sm_90/t-one\" = \"measured\"\n").is_ok());
        assert!(check("[xfail]\n\"gpu/sm_90/cdp2.memory.x/t-one\" = \"measured\"\n").is_ok());
        let e = check("[xfail]\n\"gpu/sm_90/t-old\" = \"measured\"\n").unwrap_err();
        assert!(e.contains("called `t-one` now"), "{e}");
        let e = check("[xfail]\n\"gpu/sm_90/t-gone\" = \"measured\"\n").unwrap_err();
        assert!(e.contains("t-gone") && e.contains("not a test"), "{e}");
        let e = check("[xfail]\n\"gpu/sm_90/cdp2.memory.y/t-one\" = \"m\"\n").unwrap_err();
        assert!(e.contains("not a test"), "{e}");
        let e = check("[xfail]\n\"static/t-one\" = \"m\"\n").unwrap_err();
        assert!(e.contains("not a test"), "{e}");
        let e = check("[xfail]\n\"gpu/sm_90/t-one\" = \" \"\n").unwrap_err();
        assert!(e.contains("empty reason"), "{e}");
        assert!(check("[xfial]\n").is_err());
        // A machine-code trial of the spec's test, and of a user program
        // the checkout does not have.
        assert!(check("[xfail]\n\"sass/13.5/sm_90/cdp2.memory.x/t-one\" = \"m\"\n").is_ok());
        let e = check("[xfail]\n\"sass/13.5/sm_90/user/no-such\" = \"m\"\n").unwrap_err();
        assert!(e.contains("names no user program"), "{e}");
    }
}
