//! `gpu_timeout:`, a test's own GPU trial timeout: seconds, 1 to 3600, on
//! litmus, runtime and host tests only; errors name file, line and field.

use std::path::PathBuf;

use gridcheck_spec::{SpecError, load_sources};

fn load_one(yaml: &str) -> Vec<SpecError> {
    match load_sources(&[(PathBuf::from("spec/bad.yaml"), yaml.to_string())], None) {
        Ok(_) => panic!("expected an error for:\n{yaml}"),
        Err(e) => e.0,
    }
}

// The shared one-rule fixture: its rule, and its test `t-one`.
use gridcheck_fixture::{RULE as GOOD_RULE, TESTS as GOOD_TEST};

#[test]
fn a_gpu_timeout_is_seconds_of_a_gpu_test() {
    let with = |v: &str| format!("{GOOD_RULE}{GOOD_TEST}    gpu_timeout: {v}\n");
    let spec =
        load_sources(&[("a.yaml".into(), with("20"))], None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(spec.tests[0].gpu_timeout, Some(20));
    let spec = load_sources(
        &[("a.yaml".into(), format!("{GOOD_RULE}{GOOD_TEST}"))],
        None,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(spec.tests[0].gpu_timeout, None);
    for bad in ["0", "3601"] {
        let e = load_one(&with(bad))[0].to_string();
        assert!(
            e.contains("field `gpu_timeout`") && e.contains("1 to 3600") && e.contains(":18:5"),
            "{e}"
        );
    }
    let e = load_one(&with("soon"))[0].to_string();
    assert!(e.contains("gpu_timeout"), "{e}");
    let compile = "tests:
  - name: t-one
    kind: compile
    source: \"int x;\"
    expect: accept
    gpu_timeout: 5
";
    let e = load_one(&format!("{GOOD_RULE}{compile}"))[0].to_string();
    assert!(
        e.contains("`gpu_timeout` is not a field of a compile test"),
        "{e}"
    );
}
