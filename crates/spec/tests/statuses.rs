//! The `definition` and `erratum` statuses name the rules they concern.

use std::path::PathBuf;

use gridcheck_spec::{UntestedStatus, load_sources};

// The shared one-rule fixture.
use gridcheck_fixture::SPEC as TESTED;

fn with_rule(status: &str, reason: &str) -> Result<gridcheck_spec::Spec, Vec<String>> {
    let yaml = format!("{TESTED}\n# second file\n",);
    let extra = format!(
        "rules:\n  - id: cdp2.overview.y\n    source: {{ seed: s.txt, section: \"1 S\" }}\n    quote: q\n    profile: cdp2\n    status: {status}\n    reason: {reason}\n"
    );
    load_sources(
        &[
            (PathBuf::from("spec/a.yaml"), yaml),
            (PathBuf::from("spec/b.yaml"), extra),
        ],
        None,
    )
    .map_err(|e| e.0.iter().map(|e| e.to_string()).collect())
}

#[test]
fn a_definition_names_existing_rules() {
    let spec = with_rule("definition", "cdp2.memory.x relies on it.").unwrap();
    let u = spec
        .rule("cdp2.overview.y")
        .unwrap()
        .untested
        .clone()
        .unwrap();
    assert_eq!(u.status, UntestedStatus::Definition);

    let e = with_rule("definition", "Relied on by many rules.").unwrap_err();
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].starts_with("spec/b.yaml:7:5: rule `cdp2.overview.y`: field `reason`:")
            && e[0].contains("names the rules it concerns by id"),
        "{e:?}"
    );

    let e = with_rule("erratum", "The code does what cdp2.memory.nope tests.").unwrap_err();
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].contains("names `cdp2.memory.nope`, which is no rule"),
        "{e:?}"
    );

    // Other statuses need not name rules.
    assert!(with_rule("untestable", "No program sees it.").is_ok());
}
