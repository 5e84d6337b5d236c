//! `spec/shapes.yaml`: the real list loads against the real spec, and a bad
//! list is refused with every problem located.

use std::path::{Path, PathBuf};

use gridcheck_fixture::RULE;
use gridcheck_spec::load_sources;
use gridcheck_spec::shapes::{load_shapes, load_shapes_file};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn the_real_list_loads_and_names_real_tests() {
    let spec =
        gridcheck_spec::load_dir(&root().join("spec"), None).unwrap_or_else(|e| panic!("{e}"));
    let shapes = load_shapes_file(&root().join("spec"), &spec).unwrap_or_else(|e| panic!("{e}"));
    assert!(shapes.iter().any(|s| s.id == "guarded-wait"), "{shapes:?}");
    for s in &shapes {
        assert!(!s.sources.is_empty() && !s.title.is_empty(), "{s:?}");
        for t in &s.tests {
            assert!(spec.test(t).is_some(), "{t}");
        }
    }
}

#[test]
fn problems_are_located_by_shape_and_field() {
    let spec = load_sources(
        &[(
            "a.yaml".into(),
            format!(
                "{RULE}tests:\n  - name: t-one\n    kind: host\n    source: \"int main() {{ return 0; }}\"\n    outputs: [a]\n    expect:\n      a: 0\n"
            ),
        )],
        None,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let list = "shapes:
  - id: good
    title: A shape
    sources: [a project, its issue]
    summary: what it is
    tests: [t-one]
  - id: Bad_Id
    title: ''
    sources: []
    summary: s
    tests: [t-two]
  - id: good
    title: t
    sources: [s]
    summary: s
";
    let e = load_shapes(Path::new("spec/shapes.yaml"), list, &spec).unwrap_err();
    let msgs: Vec<String> = e.0.iter().map(|e| e.to_string()).collect();
    let has = |at: &str, says: &str| {
        assert!(
            msgs.iter().any(|m| m.contains(at) && m.contains(says)),
            "{at} / {says}: {msgs:?}"
        )
    };
    has("spec/shapes.yaml:7:", "lowercase words");
    has(":8:5: shape `Bad_Id`: field `title`", "the title is empty");
    has(":9:5: shape `Bad_Id`: field `sources`", "public source");
    has(":11:", "`t-two` is not a test of the spec");
    has(":12:", "the id is used twice");
    has("shape `good`: field `tests`", "names the tests or programs");
    let ok = load_shapes(
        Path::new("s.yaml"),
        &list[..list.find("  - id: Bad_Id").unwrap()],
        &spec,
    )
    .unwrap();
    assert_eq!(ok.len(), 1);
    assert_eq!((ok[0].id.as_str(), ok[0].line), ("good", 2));
    let bad = load_shapes(
        Path::new("s.yaml"),
        "shapes:\n  - id: a\n    titel: b\n",
        &spec,
    )
    .unwrap_err();
    assert!(
        bad.to_string().contains("s.yaml:3:5") && bad.to_string().contains("unknown field `titel`"),
        "{bad}"
    );
}
