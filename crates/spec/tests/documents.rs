//! Rules quoting a document other than the seeds: `source: { document: ... }`,
//! checked against the passages copied in the spec folder's `documents/`.

use gridcheck_spec::load_dir;

#[test]
fn a_rule_quotes_a_seed_or_a_document_checked_against_spec_documents() {
    let dir = std::env::temp_dir().join(format!("gc-spec-documents-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("documents")).unwrap();
    std::fs::write(
        dir.join("documents/ptx.txt"),
        "Title: PTX ISA\nURL Source: https://example.org/ptx\n\n# 9.7 Wait\nThe wait makes them visible.\n",
    )
    .unwrap();
    let rule = |source: &str, quote: &str| {
        format!(
            "rules:\n  - id: pdl.a.b\n    source: {source}\n    quote: {quote}\n    profile: pdl\n    status: untestable\n    reason: r\n"
        )
    };
    let load = |yaml: String| {
        std::fs::write(dir.join("a.yaml"), yaml).unwrap();
        load_dir(&dir, None).map_err(|e| e.to_string())
    };
    let spec = load(rule(
        "{ document: ptx.txt, section: 9.7 Wait }",
        "The wait makes them visible.",
    ))
    .unwrap();
    assert_eq!(
        spec.rules[0].source.kind,
        gridcheck_spec::SourceKind::Document
    );
    assert_eq!(spec.rules[0].source.seed(), None);
    let e = load(rule(
        "{ document: ptx.txt, section: 9.7 Wait }",
        "The wait orders nothing.",
    ))
    .unwrap_err();
    assert!(e.contains("quote") && e.contains("ptx.txt"), "{e}");
    let e = load(rule("{ document: other.txt, section: S }", "q")).unwrap_err();
    assert!(
        e.contains("source.document") && e.contains("other.txt"),
        "{e}"
    );
    let e = load(rule("{ seed: s.txt, document: ptx.txt, section: S }", "q")).unwrap_err();
    assert!(e.contains("not both"), "{e}");
    let e = load(rule("{ section: S }", "q")).unwrap_err();
    assert!(e.contains("field `source`"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}
