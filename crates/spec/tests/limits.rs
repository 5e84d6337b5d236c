//! Hostile and careless input: every bound of `limits.rs` holds with a
//! located error, and what is accepted is what the generated code and the
//! model agree on.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use gridcheck_spec::limits::{
    MAX_CONDITION_NESTING, MAX_ERRORS_PER_FILE, MAX_FILE_BYTES, MAX_THREAD_INDEX,
};
use gridcheck_spec::{SpecError, load_dir, load_sources};

// The shared one-rule fixture's rule (listing `t-one`).
use gridcheck_fixture::RULE;

fn test_with(threads: &str, condition: &str) -> String {
    format!(
        "tests:
  - name: t-one
    kind: litmus
    memory: {{ x: 0 }}
    kernels:
      - kernel: k
        launch: host
        threads:
{threads}
    condition: {condition}
    expect: forbidden
"
    )
}

fn good_test() -> String {
    test_with(
        "          t0: [store x 1, load r0 x]",
        "exists k.t0.r0 == 0",
    )
}

/// The errors of loading one file, within `limit`.
fn errors_within(yaml: &str, limit: Duration) -> Vec<SpecError> {
    let t = Instant::now();
    let r = load_sources(&[(PathBuf::from("spec/bad.yaml"), yaml.to_string())], None);
    assert!(t.elapsed() < limit, "took {:?}", t.elapsed());
    match r {
        Ok(_) => panic!("expected an error for:\n{}", &yaml[..yaml.len().min(2000)]),
        Err(e) => e.0,
    }
}

fn errors(yaml: &str) -> Vec<SpecError> {
    errors_within(yaml, Duration::from_secs(5))
}

/// The one error of `yaml`, besides the rule's dangling reference to the
/// test that did not load.
fn one(yaml: &str) -> SpecError {
    let e: Vec<SpecError> = errors(yaml)
        .into_iter()
        .filter(|e| !e.message.contains("is not defined in any spec file"))
        .collect();
    assert_eq!(e.len(), 1, "{e:#?}");
    e.into_iter().next().unwrap()
}

#[test]
fn the_minimal_file_loads() {
    load_sources(&[("a.yaml".into(), format!("{RULE}{}", good_test()))], None).unwrap();
}

#[test]
fn a_file_over_the_size_limit_is_refused_before_parsing() {
    let yaml = format!("{RULE}# {}\n", "x".repeat(MAX_FILE_BYTES));
    let e = one(&yaml);
    assert!(e.message.contains("larger than"), "{e}");
    assert_eq!(e.line, Some(7), "{e}");
    // Read from disk: refused without reading it whole.
    let dir = std::env::temp_dir().join(format!("gridcheck-big-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("big.yaml"), &yaml).unwrap();
    let e = load_dir(&dir, None).unwrap_err().0;
    assert!(e[0].message.contains("larger than"), "{e:?}");
    assert_eq!(e[0].line, Some(7));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn deep_flow_nesting_is_refused_quickly_and_located() {
    let n = 100_000;
    let yaml = format!("{RULE}    reason: {}{}\n", "[".repeat(n), "]".repeat(n));
    let e = errors_within(&yaml, Duration::from_secs(2));
    assert!(e[0].message.contains("nest more than"), "{e:?}");
    assert_eq!(e[0].line, Some(7));
}

#[test]
fn deeply_nested_conditions_are_refused_not_a_stack_overflow() {
    for open in ["~", "(", "~("] {
        let cond = format!("\"exists {}k.t0.r0 == 0\"", open.repeat(5_000));
        let yaml = format!(
            "{RULE}{}",
            test_with("          t0: [store x 1, load r0 x]", &cond)
        );
        let e = one(&yaml);
        assert!(e.message.contains("nest more than"), "{e}");
        assert_eq!(e.field.as_deref(), Some("condition"));
        assert_eq!(e.line, Some(16));
    }
    // At the limit it loads.
    let cond = format!(
        "exists {}k.t0.r0 == 0{}",
        "(".repeat(MAX_CONDITION_NESTING),
        ")".repeat(MAX_CONDITION_NESTING)
    );
    let yaml = format!(
        "{RULE}{}",
        test_with("          t0: [store x 1, load r0 x]", &cond)
    );
    load_sources(&[("a.yaml".into(), yaml)], None).unwrap();
}

#[test]
fn alias_bombs_are_refused_at_the_alias() {
    // One long name repeated thousands of times by aliases.
    let name = "n".repeat(64 * 1024);
    let yaml = format!(
        "rules:\n  - id: cdp2.memory.x\n    source: {{ seed: s.txt, section: \"1 S\" }}\n    quote: q\n    profile: cdp2\n    tests: [&a {name}{}]\n",
        ", *a".repeat(4000)
    );
    let e = one(&yaml);
    assert!(e.message.contains("counting what aliases repeat"), "{e}");
    assert_eq!(e.line, Some(6));
    // A billion laughs.
    let mut yaml = String::from("rules:\n  - id: &l0 cdp2.memory.x\n");
    for i in 1..30 {
        yaml += &format!("    x{i}: &l{i} [*l{0}, *l{0}]\n", i - 1);
    }
    let e = errors_within(&yaml, Duration::from_secs(2));
    assert!(e[0].message.contains("aliases repeat"), "{e:?}");
    assert!(e[0].line.is_some());
}

#[test]
fn errors_per_file_are_capped_and_the_rest_counted() {
    let mut yaml = String::from("rules:\n");
    for i in 0..300 {
        yaml += &format!(
            "  - id: cdp2.memory.r{i}\n    source: {{ seed: s.txt, section: \"1 S\" }}\n    quote: q\n    profile: nope\n    tests: [t-one]\n"
        );
    }
    let e = errors(&yaml);
    assert_eq!(e.len(), MAX_ERRORS_PER_FILE + 1, "{}", e.len());
    let last = e.last().unwrap();
    assert!(
        last.message.starts_with(&format!(
            "{} more errors in this file not shown",
            300 - MAX_ERRORS_PER_FILE
        )),
        "{last}"
    );
    assert!(e[..MAX_ERRORS_PER_FILE].iter().all(|e| e.line.is_some()));
}

#[test]
fn thread_names_are_canonical_and_fit_a_block() {
    let e = one(&format!(
        "{RULE}{}",
        test_with(
            "          t1: [store x 1]\n          t01: [load r0 x]",
            "exists k.t1.r0 == 0"
        )
    ));
    assert!(e.message.contains("`t01`"), "{e}");
    assert!(e.message.contains("leading zeros"), "{e}");
    assert_eq!(e.field.as_deref(), Some("kernels.k.threads.t01"));
    assert_eq!(e.line, Some(16));
    let high = format!("t{}", MAX_THREAD_INDEX + 1);
    let e = one(&format!(
        "{RULE}{}",
        test_with(
            &format!("          {high}: [store x 1, load r0 x]"),
            &format!("exists k.{high}.r0 == 0")
        )
    ));
    assert!(e.message.contains("1024 threads"), "{e}");
    assert_eq!(e.line, Some(15));
    let ok = format!("t{MAX_THREAD_INDEX}");
    load_sources(
        &[(
            "a.yaml".into(),
            format!(
                "{RULE}{}",
                test_with(
                    &format!("          {ok}: [store x 1, load r0 x]"),
                    &format!("exists k.{ok}.r0 == 0")
                )
            ),
        )],
        None,
    )
    .unwrap();
}

#[test]
fn test_names_start_with_a_letter() {
    let yaml = format!("{RULE}{}", good_test()).replace("t-one", "1-one");
    let e = one(&yaml);
    assert!(e.message.contains("starting with a letter"), "{e}");
    assert_eq!((e.line, e.field.as_deref()), (Some(8), Some("name")));
}

#[test]
fn serde_errors_keep_their_path_as_the_field() {
    let yaml = RULE.replace("section: \"1 S\" ", "sectoin: \"1 S\" ") + &good_test();
    let e = one(&yaml);
    assert_eq!(e.field.as_deref(), Some("source.sectoin"), "{e}");
    assert_eq!(e.item.as_deref(), Some("rule `cdp2.memory.x`"));
    assert!(!e.message.contains("rules[0]"), "{e}");
    let yaml = RULE.replace("    quote: q\n", "") + &good_test();
    let e = one(&yaml);
    assert_eq!(e.field.as_deref(), Some("quote"), "{e}");
    // serde places a missing field at the start of its mapping.
    assert_eq!(e.line, Some(2));
}

#[test]
fn a_second_document_is_located() {
    let yaml = format!("{RULE}---\n{}", good_test());
    let e = one(&yaml);
    assert!(e.message.contains("more than one document"), "{e}");
    assert_eq!(e.line, Some(7));
    // A directive after the first document's content starts a second one.
    let yaml = format!("{RULE}%YAML 1.2\n{}", good_test());
    let e = errors(&yaml);
    assert!(e[0].message.contains("more than one document"), "{e:?}");
    assert_eq!(e[0].line, Some(7));
}

#[test]
fn repetition_limit_errors_are_located() {
    // Many aliases of a small value in a small file: within the first
    // pass's budget, past serde's own repetition limit.
    let mut yaml = String::from("rules:\n  - id: cdp2.memory.x\n    z0: &z0 [q]\n");
    for i in 1..12 {
        yaml += &format!("    z{i}: &z{i} [*z{0}, *z{0}, *z{0}]\n", i - 1);
    }
    let e = errors(&yaml);
    assert!(e.iter().all(|e| e.line.is_some()), "{e:#?}");
}

#[test]
fn flow_style_entries_do_not_shift_later_errors() {
    let yaml = "rules:
  - {id: cdp2.memory.a, source: {seed: s.txt, section: \"1 S\"}, quote: q, profile: cdp2, tests: [t-one]}
  - id: cdp2.memory.b
    source: { seed: s.txt, section: \"1 S\" }
    quote: q
    profile: cdp3
    tests: [t-one]
"
    .to_string()
        + &good_test();
    let e = one(&yaml);
    assert_eq!(e.item.as_deref(), Some("rule `cdp2.memory.b`"));
    assert_eq!(e.line, Some(6), "{e}");
}

#[test]
fn non_utf8_files_and_empty_directories() {
    let dir = std::env::temp_dir().join(format!("gridcheck-utf8-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let e = load_dir(&dir, None).unwrap_err().0;
    assert!(e[0].message.contains("no spec files"), "{e:?}");
    let mut bytes = RULE.as_bytes().to_vec();
    bytes.extend_from_slice(b"# caf\xe9\n");
    std::fs::write(dir.join("a.yaml"), &bytes).unwrap();
    let e = load_dir(&dir, None).unwrap_err().0;
    assert!(e[0].message.contains("not UTF-8"), "{e:?}");
    assert_eq!((e[0].line, e[0].column), (Some(7), Some(6)));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn many_items_load_in_linear_time() {
    // 3 000 rules and tests in one file (about 0.9 MB): each item's errors
    // search only its own lines, and nothing copies the file per item.
    let mut yaml = String::from("rules:\n");
    for i in 0..3000 {
        yaml += &format!(
            "  - id: cdp2.memory.r{i}\n    source: {{ seed: s.txt, section: \"1 S\" }}\n    quote: q\n    profile: cdp2\n    tests: [t{i}]\n"
        );
    }
    yaml += "tests:\n";
    for i in 0..3000 {
        yaml += &format!(
            "  - name: t{i}\n    kind: compile\n    source: \"__global__ void k() {{}}\"\n    expect: accept\n"
        );
    }
    assert!(yaml.len() < MAX_FILE_BYTES);
    let t = Instant::now();
    let spec = load_sources(&[("a.yaml".into(), yaml)], None).unwrap();
    assert_eq!(spec.rules.len(), 3000);
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
}

#[test]
fn long_needles_in_long_items_are_found_in_linear_time() {
    // A 64 KiB test name listed 200 times (through an alias) in a rule of
    // 2 000 lines: each error's position is searched in the rule's lines.
    let name = "n".repeat(64 * 1024);
    let yaml = format!(
        "rules:\n  - id: cdp2.memory.x\n    source: {{ seed: s.txt, section: \"1 S\" }}\n    quote: q\n    profile: cdp2\n{}    tests: [&b {name}{}]\n",
        "    # a comment line before the tests\n".repeat(2000),
        ", *b".repeat(200),
    );
    let e = errors_within(&yaml, Duration::from_secs(3));
    assert!(
        e[0].message.contains("listed twice"),
        "{:.200}",
        e[0].message
    );
    assert_eq!(e[0].line, Some(2006));
}
