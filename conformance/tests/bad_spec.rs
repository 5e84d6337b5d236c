//! The harness binary on bad specs: one located error each, exit code 2, no panic.

use std::process::Command;

const RULE: &str = "rules:
  - id: cdp2.memory.x
    source: { seed: 000_522be91053af7f8d.txt, section: \"4.18.3.1 Global Memory\" }
    quote: All global memory operations in the parent thread prior to the child grid's invocation are visible to the child grid.
    profile: cdp2
    tests: [t-one]
tests:
  - name: t-one
    kind: litmus
    memory: { x: 0 }
    kernels:
      - kernel: k
        launch: host
        threads:
          t0: [store x 1, load r0 x]
    condition: exists k.t0.r0 == 0
    expect: forbidden
";

fn run_on(name: &str, yaml: &str) -> (i32, String) {
    let dir = std::env::temp_dir().join(format!("gridcheck-bad-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.yaml");
    std::fs::write(&file, yaml).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .arg("--spec")
        .arg(&dir)
        .arg("--tier")
        .arg("model")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    (
        out.status.code().unwrap_or(-1),
        stderr.replace(&*dir.display().to_string(), "DIR"),
    )
}

#[test]
fn unknown_field_duplicate_id_and_dangling_reference() {
    let (code, err) = run_on(
        "unknown",
        &RULE.replace("    profile: cdp2\n", "    qoute: q\n    profile: cdp2\n"),
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("DIR/bad.yaml:5:5: rule `cdp2.memory.x`: field `qoute`: unknown field"),
        "{err}"
    );

    let dup = RULE.replace("tests:\n  - name", "  - id: cdp2.memory.x\n    source: { seed: 000_522be91053af7f8d.txt, section: \"4.18.3.1 Global Memory\" }\n    quote: All global memory operations in the parent thread prior to the child grid's invocation are visible to the child grid.\n    profile: cdp2\n    tests: [t-one]\ntests:\n  - name");
    let (code, err) = run_on("dup", &dup);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("DIR/bad.yaml:7:") && err.contains("duplicate id"),
        "{err}"
    );
    assert_eq!(err.matches("error:").count(), 1, "{err}");

    let (code, err) = run_on("dangling", &RULE.replace("[t-one]", "[t-one, t-two]"));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("DIR/bad.yaml:6:") && err.contains("test `t-two` is not defined"),
        "{err}"
    );
    assert_eq!(err.matches("error:").count(), 1, "{err}");
}
