//! The facts (`conformance/facts/*.toml`, read by
//! `gridcheck_report::Facts`, which checks each fact's fields) checked
//! against the spec on every run, whatever the machine can run: each
//! fact names a test of the spec (a trial's fact also a rule that lists the
//! test) on a tier that runs it. So a renamed or removed test cannot leave
//! a stale fact behind, and a malformed file is noticed without nvcc or a
//! GPU. Every fact is loaded whatever the machine: where one applies is
//! decided trial by trial from the machine the trial ran on.

use std::path::Path;

use gridcheck_report::{Facts, Subject, Tier};
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
    )
}

/// Every fact of every `*.toml` in `dir`, or every problem, one per line.
pub fn load_checked(dir: &Path, root: &Path, spec: Option<&Spec>) -> Result<Facts, String> {
    let x = Facts::load_all(dir, root)?;
    let mut problems = Vec::new();
    for e in &x.entries {
        let at = e.at();
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
        Ok(x)
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

    fn check(key: &str) -> Result<Facts, String> {
        let toml = format!(
            "[\"{key}\"]\nkind = \"discrepancy\"\nsummary = \"s\"\ndepends_on = [\"toolkit\"]\n\
             evidence = \"e\"\nmeasured = [{{ sm = \"sm_90\", toolkit = \"13.0.88\", date = \"2026-11-24\" }}]\n"
        );
        let dir = std::env::temp_dir().join(format!(
            "gridcheck-facts-check-{}-{}",
            std::process::id(),
            key.len()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("gpu.toml"), toml).unwrap();
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
}
