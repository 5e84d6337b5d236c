//! A host test's `may`: the outcomes its source allows and a run should
//! show, checks of outputs that `expect` does not check.

use std::path::PathBuf;

use gridcheck_fixture::RULE;
use gridcheck_spec::{SpecError, TestBody, load_sources};

fn host(may: &str) -> String {
    format!(
        "{RULE}tests:
  - name: t-one
    kind: host
    source: |
      int main() {{ return 0; }}
    outputs: [err, edges]
    expect:
      err: cudaSuccess
{may}"
    )
}

fn errors(yaml: &str) -> Vec<SpecError> {
    match load_sources(&[(PathBuf::from("spec/bad.yaml"), yaml.to_string())], None) {
        Ok(_) => panic!("expected an error for:\n{yaml}"),
        Err(e) => e.0,
    }
}

#[test]
fn may_loads_beside_expect() {
    let spec = load_sources(
        &[("a.yaml".into(), host("    may:\n      edges: \"> 1\"\n"))],
        None,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let TestBody::Host(h) = &spec.tests[0].body else {
        panic!("not a host test")
    };
    assert_eq!(h.expect.len(), 1);
    assert_eq!(h.may.len(), 1);
    assert!(h.may[0].1.holds(2) && !h.may[0].1.holds(1));
    let plain =
        load_sources(&[("a.yaml".into(), host(""))], None).unwrap_or_else(|e| panic!("{e}"));
    let TestBody::Host(h) = &plain.tests[0].body else {
        panic!("not a host test")
    };
    assert!(h.may.is_empty());
}

#[test]
fn may_errors_name_the_field() {
    let e = errors(&host("    may:\n      nodes: 1\n"))[0].to_string();
    assert!(
        e.contains("may.nodes") && e.contains("not one of the `outputs`"),
        "{e}"
    );
    let e = errors(&host("    may:\n      err: 1\n"))[0].to_string();
    assert!(
        e.contains("may.err") && e.contains("expected or allowed, not both"),
        "{e}"
    );
    let e = errors(&host("    may: 3\n"))[0].to_string();
    assert!(e.contains("`may` maps output names"), "{e}");
    let runtime = host("    may: { err: 1 }\n")
        .replace("kind: host", "kind: runtime")
        .replace(
            "int main() { return 0; }",
            "extern \"C\" __global__ void entry(unsigned int *out) { out[0] = 0; }",
        );
    let e = errors(&runtime);
    assert!(
        e.iter().any(|m| m
            .to_string()
            .contains("`may` is not a field of a runtime test")),
        "{e:?}"
    );
}
