//! The spec loader against the real spec and against bad input.

use std::path::{Path, PathBuf};

use gridcheck_spec::{Seeds, SpecError, TestBody, Verdict, load_dir, load_sources};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn load_one(yaml: &str) -> Vec<SpecError> {
    match load_sources(&[(PathBuf::from("spec/bad.yaml"), yaml.to_string())], None) {
        Ok(_) => panic!("expected an error for:\n{yaml}"),
        Err(e) => e.0,
    }
}

// The shared one-rule fixture: its rule, and its test `t-one`.
use gridcheck_fixture::{RULE as GOOD_RULE, TESTS as GOOD_TEST};

#[test]
fn the_real_spec_loads_and_quotes_are_verbatim() {
    let seeds_dir = std::env::var_os("GRIDCHECK_SEEDS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared/seeds"));
    let seeds = Seeds::load(&seeds_dir).ok();
    let spec = load_dir(&root().join("spec"), seeds.as_ref()).unwrap_or_else(|e| panic!("{e}"));
    assert!(spec.rules.len() >= 7, "{} rules", spec.rules.len());
    assert!(spec.pairs().count() >= spec.rules.len());
    if seeds.is_none() {
        eprintln!(
            "note: no seeds at {}; quotes not checked",
            seeds_dir.display()
        );
    }
}

#[test]
fn a_good_minimal_file_loads() {
    let spec = load_sources(
        &[("a.yaml".into(), format!("{GOOD_RULE}{GOOD_TEST}"))],
        None,
    )
    .unwrap();
    let t = spec.test("t-one").unwrap();
    let TestBody::Litmus(l) = &t.body else {
        panic!()
    };
    assert_eq!(l.expect, Verdict::Forbidden);
    assert_eq!(
        l.observables(),
        vec!["k.t0.r0".to_string(), "x".to_string()]
    );
    assert_eq!(t.origin.line, 8);
}

#[test]
fn unknown_field_is_located_and_names_the_rule() {
    let yaml = GOOD_RULE.replace("    quote: q\n", "    quote: q\n    qoute: oops\n") + GOOD_TEST;
    let errs = load_one(&yaml);
    assert_eq!(errs.len(), 1, "{errs:?}");
    let msg = errs[0].to_string();
    assert!(
        msg.starts_with("spec/bad.yaml:5:5: rule `cdp2.memory.x`: field `qoute`: "),
        "{msg}"
    );
    assert!(!msg.contains("at line"), "{msg}");
    assert!(msg.contains("unknown field `qoute`"), "{msg}");
}

#[test]
fn duplicate_id_is_located_at_the_second() {
    let second = GOOD_RULE.replace("rules:\n", "");
    let yaml = format!("{GOOD_RULE}{second}{GOOD_TEST}");
    let errs = load_one(&yaml);
    assert_eq!(errs.len(), 1, "{errs:?}");
    let msg = errs[0].to_string();
    assert!(msg.starts_with("spec/bad.yaml:7:"), "{msg}");
    assert!(msg.contains("field `id`"), "{msg}");
    assert!(
        msg.contains("duplicate id: also defined at spec/bad.yaml:2"),
        "{msg}"
    );
}

#[test]
fn dangling_test_reference_is_located() {
    let yaml = GOOD_RULE.replace("[t-one]", "[t-one, t-missing]") + GOOD_TEST;
    let errs = load_one(&yaml);
    assert_eq!(errs.len(), 1, "{errs:?}");
    let msg = errs[0].to_string();
    assert!(msg.starts_with("spec/bad.yaml:6:20:"), "{msg}");
    assert!(
        msg.contains("field `tests`: test `t-missing` is not defined"),
        "{msg}"
    );
}

/// `formerly:` names the test's old names: each a test name, none the
/// test's own or listed twice, none a test's name now, none claimed by two
/// tests; a rule still listing an old name is told the name now.
#[test]
fn former_names_belong_to_one_test_and_no_test_has_them() {
    let with = |formerly: &str| {
        GOOD_TEST.replace(
            "    kind: litmus\n",
            &format!("    formerly: {formerly}\n    kind: litmus\n"),
        )
    };
    let spec = load_sources(
        &[(
            "a.yaml".into(),
            format!("{GOOD_RULE}{}", with("[t-old, t-older]")),
        )],
        None,
    )
    .unwrap();
    assert_eq!(spec.test("t-one").unwrap().formerly, ["t-old", "t-older"]);
    assert_eq!(spec.test_now_or_formerly("t-older").unwrap().name, "t-one");
    assert_eq!(spec.test_now_or_formerly("t-one").unwrap().name, "t-one");
    assert!(spec.test("t-old").is_none() && spec.test_now_or_formerly("t-gone").is_none());

    let msgs =
        |yaml: String| -> Vec<String> { load_one(&yaml).iter().map(|e| e.to_string()).collect() };
    for (formerly, says) in [
        ("[T_old]", "`T_old` is not a test name"),
        ("[t-one]", "`t-one` is the test's own name"),
        ("[t-old, t-old]", "`t-old` is listed twice"),
    ] {
        let all = msgs(format!("{GOOD_RULE}{}", with(formerly)));
        assert!(
            all.len() == 1
                && all[0].starts_with("spec/bad.yaml:9:")
                && all[0].contains("test `t-one`: field `formerly`: ")
                && all[0].contains(says),
            "{formerly}: {all:?}"
        );
    }
    // A second test whose name, or former name, is a former name of t-one.
    let two = GOOD_RULE.replace("[t-one]", "[t-one, t-two]");
    let second = |name: &str, formerly: &str| {
        with(formerly)
            .replace("tests:\n", "")
            .replace("t-one", name)
    };
    let all = msgs(format!("{two}{}{}", with("[t-two]"), second("t-two", "[]")));
    assert!(
        all.iter().any(|m| m.starts_with("spec/bad.yaml:9:")
            && m.contains("`t-two` is the name of a test now (at spec/bad.yaml:")),
        "{all:?}"
    );
    let all = msgs(format!(
        "{two}{}{}",
        with("[t-old]"),
        second("t-two", "[t-old]")
    ));
    assert!(
        all.iter()
            .any(|m| m.contains("test `t-two`: field `formerly`")
                && m.contains("`t-old` is also a former name of `t-one`")),
        "{all:?}"
    );
    let all = msgs(format!(
        "{}{}",
        GOOD_RULE.replace("[t-one]", "[t-one, t-old]"),
        with("[t-old]")
    ));
    assert!(
        all.iter().any(|m| m.starts_with("spec/bad.yaml:6:")
            && m.contains("test `t-old` is now called `t-one`")),
        "{all:?}"
    );
}

#[test]
fn a_test_no_rule_lists_is_an_error() {
    let yaml =
        GOOD_RULE.replace("[t-one]", "[]\n    status: untestable\n    reason: r") + GOOD_TEST;
    let msg = load_one(&yaml)[0].to_string();
    assert!(
        msg.contains("test `t-one`: field `name`: no rule lists this test"),
        "{msg}"
    );
}

#[test]
fn bad_operations_and_conditions_are_located() {
    let yaml = GOOD_RULE.to_string()
        + &GOOD_TEST
            .replace("load r0 x]", "lod r0 x]")
            .replace("k.t0.r0 == 0", "k.t0.r9 == 0");
    let errs = load_one(&yaml);
    let all: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
    assert!(
        all.iter().any(|m| m.starts_with("spec/bad.yaml:15:")
            && m.contains("field `kernels.k.threads.t0[1]`")
            && m.contains("unknown operation `lod`")),
        "{all:?}"
    );
}

#[test]
fn undeclared_locations_and_unlaunched_kernels() {
    let yaml = GOOD_RULE.to_string()
        + &GOOD_TEST.replace("store x 1", "store z 1").replace(
            "    condition:",
            "      - kernel: orphan\n        launch: device\n        threads:\n          t0: [store x 2]\n    condition:",
        );
    let all: Vec<String> = load_one(&yaml).iter().map(|e| e.to_string()).collect();
    assert!(
        all.iter()
            .any(|m| m.contains("location `z` is not declared")),
        "{all:?}"
    );
    assert!(
        all.iter().any(|m| m.contains("no operation launches it")),
        "{all:?}"
    );
}

#[test]
fn too_many_threads() {
    // Five threads are over loom's reach, not over the loader's: the
    // axiomatic model decides them alone.
    let five: String = (1..5)
        .map(|i| format!("          t{i}: [store x {i}]\n"))
        .collect();
    let yaml = GOOD_RULE.to_string()
        + &GOOD_TEST.replace(
            "          t0: [store x 1, load r0 x]\n",
            &format!("          t0: [store x 1, load r0 x]\n{five}"),
        );
    load_sources(&[(PathBuf::from("spec/ok.yaml"), yaml)], None).unwrap_or_else(|e| panic!("{e}"));
    let many: String = (0..33)
        .map(|i| format!("          b{}.t{}: [store x 1]\n", i / 2, i % 2))
        .collect();
    let yaml = GOOD_RULE.to_string()
        + &GOOD_TEST
            .replace("          t0: [store x 1, load r0 x]\n", &many)
            .replace("k.t0.r0 == 0", "x == 0");
    let all: Vec<String> = load_one(&yaml).iter().map(|e| e.to_string()).collect();
    assert!(
        all.iter().any(|m| m.contains("33 threads in all")),
        "{all:?}"
    );
    assert!(
        all.iter().any(|m| m.contains("the highest block is b15")),
        "{all:?}"
    );
}

#[test]
fn several_blocks_name_every_thread_and_every_block() {
    let with = |threads: &str, condition: &str| {
        GOOD_RULE.to_string()
            + &GOOD_TEST
                .replace("          t0: [store x 1, load r0 x]\n", threads)
                .replace("k.t0.r0 == 0", condition)
    };
    let spec = load_sources(
        &[(
            "a.yaml".into(),
            with(
                "          b0.t0: [store x 1]\n          b0.t1: [load r0 x]\n          b1.t0: [load r0 x]\n",
                "k.b1.t0.r0 == 0",
            ),
        )],
        None,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let TestBody::Litmus(l) = &spec.tests[0].body else {
        panic!()
    };
    assert_eq!(l.kernels[0].blocks(), 2);
    assert_eq!(l.kernels[0].block_threads(0).count(), 2);
    assert_eq!(l.observables(), ["k.b0.t1.r0", "k.b1.t0.r0", "x"]);
    for (threads, cond, msg) in [
        (
            "          b0.t0: [store x 1]\n          t1: [load r0 x]\n",
            "k.t1.r0 == 0",
            "either every thread names its block",
        ),
        (
            "          b0.t0: [store x 1]\n          b0.t1: [load r0 x]\n",
            "k.b0.t1.r0 == 0",
            "kernel `k` has one block: name its threads `t0`",
        ),
        (
            "          b0.t0: [store x 1]\n          b2.t0: [load r0 x]\n",
            "k.b2.t0.r0 == 0",
            "threads in block b2 but none in b1",
        ),
        (
            "          b0.t01: [store x 1]\n          b1.t0: [load r0 x]\n",
            "k.b1.t0.r0 == 0",
            "is not named `t<index>` or `b<block>.t<index>`",
        ),
        (
            "          b0.t0: [launch c s1]\n          b1.t0: [record e1 s1]\n",
            "x == 0",
            "stream `s1` is used by `b0.t0` and `b1.t0`, threads of different blocks",
        ),
        (
            "          b0.t0: [record e1]\n          b1.t0: [waitevent null e1]\n",
            "x == 0",
            "event `e1` is used by `b0.t0` and `b1.t0`",
        ),
        (
            "          b0.t0: [record e1]\n          b1.t0: [waitevent null e1]\n",
            "x == 0",
            "which no thread of block b1 of kernel `k` records",
        ),
    ] {
        let mut yaml = with(threads, cond);
        if threads.contains("launch c") {
            yaml = yaml.replace(
                "    condition:",
                "      - kernel: c\n        launch: device\n        threads:\n          t0: [store x 2]\n    condition:",
            );
        }
        let all: Vec<String> = load_one(&yaml).iter().map(|e| e.to_string()).collect();
        assert!(all.iter().any(|m| m.contains(msg)), "{msg}: {all:?}");
    }
}

#[test]
fn malformed_yaml_is_an_error_not_a_panic() {
    for yaml in [
        "rules: [",
        "rules: 3",
        ":\n  - -",
        "tests:\n  - name: a\n    kind: compile\n    expect: reject\n",
        "\u{0}",
    ] {
        let _ = load_one(yaml);
    }
}

const RUNTIME_TEST: &str = "tests:
  - name: t-one
    kind: runtime
    source: |
      extern \"C\" __global__ void entry(unsigned int *out) { out[0] = 69; out[1] = 20; }
    limits: { dev-runtime-pending-launch-count: 16 }
    outputs: [err, n]
    expect:
      err: cudaErrorLaunchPendingCountExceeded
      n: \">= 16\"
";

#[test]
fn runtime_tests_name_errors_and_comparisons() {
    let spec = load_sources(
        &[("a.yaml".into(), format!("{GOOD_RULE}{RUNTIME_TEST}"))],
        None,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let TestBody::Runtime(r) = &spec.tests[0].body else {
        panic!()
    };
    let gridcheck_spec::RuntimeExpect::Values(checks) = &r.expect else {
        panic!()
    };
    assert_eq!(checks[0].1.value, 69);
    assert!(checks[0].1.holds(69) && !checks[0].1.holds(0));
    assert!(checks[1].1.holds(16) && checks[1].1.holds(20) && !checks[1].1.holds(15));
    assert_eq!(r.limits.len(), 1);
}

#[test]
fn runtime_test_errors() {
    let all = |y: &str| -> Vec<String> {
        load_one(&format!("{GOOD_RULE}{y}"))
            .iter()
            .map(|e| e.to_string())
            .collect()
    };
    let e = all(&RUNTIME_TEST.replace("cudaErrorLaunchPendingCountExceeded", "cudaErrorNope"));
    assert!(
        e.iter()
            .any(|m| m.contains("field `expect.err`") && m.contains("`cudaErrorNope` is neither")),
        "{e:?}"
    );
    let e = all(&RUNTIME_TEST.replace("outputs: [err, n]", "outputs: [err]"));
    assert!(
        e.iter()
            .any(|m| m.contains("`n` is not one of the `outputs`")),
        "{e:?}"
    );
    let e = all(&RUNTIME_TEST.replace("void entry(", "void main2("));
    assert!(
        e.iter()
            .any(|m| m.contains("field `source`") && m.contains("void entry(")),
        "{e:?}"
    );
    let e = all(&RUNTIME_TEST.replace("dev-runtime-pending-launch-count", "pending"));
    assert!(
        e.iter().any(|m| m.contains("unknown limit `pending`")),
        "{e:?}"
    );
    let e =
        all(&RUNTIME_TEST.replace("    outputs:", "    condition: exists x == 1\n    outputs:"));
    assert!(
        e.iter()
            .any(|m| m.contains("`condition` is not a field of a runtime test")),
        "{e:?}"
    );
}

const HOST_TEST: &str = "tests:
  - name: t-one
    kind: host
    flags: [-DX=1]
    source: |
      #include \"gridcheck_host.cuh\"
      int main() { gc_output(\"err\", 0); gc_output(\"edges\", 1); return 0; }
    outputs: [err, edges]
    expect:
      err: cudaSuccess
      edges: \">= 1\"
";

#[test]
fn host_tests_carry_their_program_outputs_and_checks() {
    let spec = load_sources(
        &[("a.yaml".into(), format!("{GOOD_RULE}{HOST_TEST}"))],
        None,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let TestBody::Host(h) = &spec.tests[0].body else {
        panic!("not a host test: {:?}", spec.tests[0].body)
    };
    assert_eq!(spec.tests[0].body.kind(), "host");
    assert_eq!(h.arch, "sm_90");
    assert_eq!(h.flags, ["-DX=1"]);
    assert_eq!(h.outputs, ["err", "edges"]);
    assert_eq!(h.expect.len(), 2);
    assert!(h.expect[0].1.holds(0) && !h.expect[0].1.holds(1));
    assert!(h.expect[1].1.holds(2) && !h.expect[1].1.holds(0));
}

#[test]
fn host_test_errors_name_the_field() {
    let first = |y: String| load_one(&format!("{GOOD_RULE}{y}"))[0].to_string();
    let e = first(HOST_TEST.replace("    flags: [-DX=1]\n", "    entry: main\n"));
    assert!(e.contains("`entry` is not a field of a host test"), "{e}");
    let e = first(HOST_TEST.replace("int main()", "void f()"));
    assert!(e.contains("source") && e.contains("int main("), "{e}");
    let e = first(HOST_TEST.replace("      edges: \">= 1\"\n", "      nodes: 1\n"));
    assert!(
        e.contains("expect.nodes") && e.contains("not one of the `outputs`"),
        "{e}"
    );
    let e = first(HOST_TEST.replace(
        "    flags: [-DX=1]\n",
        "    load_error: cudaErrorSymbolNotFound\n",
    ));
    assert!(
        e.contains("`load_error` is not a field of a host test"),
        "{e}"
    );
    let e = first(HOST_TEST.replace("kind: host", "kind: hostprog"));
    assert!(
        e.contains("expected litmus, compile, runtime or host"),
        "{e}"
    );
}

const ERROR_TEST: &str = "tests:
  - name: t-one
    kind: litmus
    memory: { x: 0 }
    limits: { dev-runtime-pending-launch-count: 1, dev-runtime-sync-depth: 3 }
    kernels:
      - kernel: k
        launch: host
        threads:
          t0: [launch c tail, launch d, peekerror e0, geterror e1, devicesync e2]
      - kernel: c
        launch: device
        threads:
          t0: [store x 1]
      - kernel: d
        launch: device
        threads:
          t0: [store x 2]
    condition: exists k.t0.e0 == cudaErrorLaunchPendingCountExceeded /\\ k.t0.e1 != cudaSuccess
    expect: required
";

#[test]
fn litmus_limits_and_error_registers_load() {
    let spec = load_sources(
        &[("a.yaml".into(), format!("{GOOD_RULE}{ERROR_TEST}"))],
        None,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let TestBody::Litmus(l) = &spec.tests[0].body else {
        panic!()
    };
    assert_eq!(
        l.limit(gridcheck_spec::Limit::DevRuntimePendingLaunchCount),
        Some(1)
    );
    assert_eq!(l.limit(gridcheck_spec::Limit::DevRuntimeSyncDepth), Some(3));
    assert_eq!(
        l.observables(),
        ["k.t0.e0", "k.t0.e1", "k.t0.e2", "x"].map(String::from)
    );
    assert_eq!(l.condition.terms(), ["k.t0.e0", "k.t0.e1"]);
}

#[test]
fn litmus_limit_and_error_register_errors_are_located() {
    let all = |y: &str| -> Vec<String> {
        load_one(&format!("{GOOD_RULE}{y}"))
            .iter()
            .map(|e| e.to_string())
            .collect()
    };
    let e = all(&ERROR_TEST.replace("dev-runtime-sync-depth: 3", "stack-size: 1024"));
    assert!(
        e.iter().any(|m| m.starts_with("spec/bad.yaml:11:")
            && m.contains("field `limits.stack-size`")
            && m.contains("not a litmus test limit")),
        "{e:?}"
    );
    let e = all(&ERROR_TEST.replace("pending-launch-count: 1,", "pending-launch-count: 0,"));
    assert!(
        e.iter().any(
            |m| m.contains("field `limits.dev-runtime-pending-launch-count`")
                && m.contains("at least 1")
        ),
        "{e:?}"
    );
    let e = all(&ERROR_TEST.replace("devicesync e2", "devicesync e1"));
    assert!(
        e.iter()
            .any(|m| m.starts_with("spec/bad.yaml:16:")
                && m.contains("register `e1` is written twice")),
        "{e:?}"
    );
    let e = all(&ERROR_TEST.replace("geterror e1", "geterror"));
    assert!(
        e.iter().any(
            |m| m.contains("field `kernels.k.threads.t0[3]`") && m.contains("missing register")
        ),
        "{e:?}"
    );
    let e = all(&ERROR_TEST.replace("!= cudaSuccess", "!= cudaSucess"));
    assert!(
        e.iter().any(|m| m.contains("field `condition`")
            && m.contains("`cudaSucess` is neither a number nor a cudaError_t name")),
        "{e:?}"
    );
    let e = all(&ERROR_TEST.replace("limits: { dev", "limits: { -1: 2, dev"));
    assert!(!e.is_empty());
}
