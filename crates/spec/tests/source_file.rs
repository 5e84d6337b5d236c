//! `source_file:`: a program's CUDA in a `.cu` file beside the spec, read
//! by the loader; every error names the YAML file, the test, the field and
//! its line.

use std::path::{Path, PathBuf};

use gridcheck_fixture::OneRule;
use gridcheck_spec::{SpecError, TestBody, load_dir};

/// A scratch spec directory holding `a.yaml` and the given files.
fn scratch(name: &str, yaml: &str, files: Files) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "gridcheck-source-file-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("a.yaml"), yaml).unwrap();
    for (f, text) in files {
        std::fs::write(dir.join(f), text).unwrap();
    }
    dir
}

/// Files beside the spec: (path, contents).
type Files<'a> = &'a [(&'a str, &'a [u8])];

const PROGRAM: &str = "extern \"C\" __global__ void entry(unsigned int *out) {\n  out[0] = 1;\n}\n";

fn runtime(field: &str) -> String {
    OneRule::new()
        .tests(&format!(
            "  - name: p\n    kind: runtime\n    {field}\n    outputs: [v]\n    expect: {{ v: 1 }}\n"
        ))
        .yaml()
}

fn errors(dir: &Path) -> Vec<SpecError> {
    match load_dir(dir, None) {
        Ok(_) => panic!("{} loaded; expected an error", dir.display()),
        Err(e) => e.0,
    }
}

#[test]
fn a_program_is_read_from_its_file_beside_the_spec() {
    let dir = scratch(
        "good",
        &runtime("source_file: src/p.cu"),
        &[("src/p.cu", PROGRAM.as_bytes())],
    );
    let spec = load_dir(&dir, None).unwrap_or_else(|e| panic!("{e}"));
    let t = &spec.tests[0];
    let TestBody::Runtime(r) = &t.body else {
        panic!("a runtime test")
    };
    assert_eq!(r.source, PROGRAM);
    assert_eq!(
        t.source_file.as_deref(),
        Some(dir.join("src/p.cu").as_path())
    );
    assert_eq!(t.source_line, Some(1), "the file's first line");
    // The same program inline: the same test, but where it is written.
    let inline = scratch(
        "inline",
        &runtime(
            "source: |\n      extern \"C\" __global__ void entry(unsigned int *out) {\n        out[0] = 1;\n      }",
        ),
        &[],
    );
    let spec = load_dir(&inline, None).unwrap_or_else(|e| panic!("{e}"));
    let TestBody::Runtime(r2) = &spec.tests[0].body else {
        panic!("a runtime test")
    };
    assert_eq!(r2.source, r.source);
    assert_eq!(spec.tests[0].source_file, None);
    assert_eq!(
        spec.tests[0].source_line,
        Some(11),
        "the line after `source: |`"
    );
}

/// Each bad `source_file` is refused at its line of the YAML file, naming
/// the test and the field.
#[test]
fn a_bad_source_file_is_located_in_the_spec() {
    let cases: [(&str, &str, Files, &str); 7] = [
        ("missing", "source_file: src/none.cu", &[], "cannot read `"),
        (
            "both",
            "source_file: src/p.cu\n    source: \"x\"",
            &[("src/p.cu", PROGRAM.as_bytes())],
            "`source` and `source_file` both give the program",
        ),
        (
            "absolute",
            "source_file: /etc/p.cu",
            &[],
            "is not a path below the spec file's directory",
        ),
        (
            "up",
            "source_file: ../p.cu",
            &[],
            "is not a path below the spec file's directory",
        ),
        (
            "extension",
            "source_file: src/p.txt",
            &[("src/p.txt", PROGRAM.as_bytes())],
            "is not a CUDA file",
        ),
        (
            "not-utf8",
            "source_file: src/p.cu",
            &[("src/p.cu", b"// ok\n\xff\n")],
            "not UTF-8 text (line 2)",
        ),
        (
            "no-entry",
            "source_file: src/p.cu",
            &[("src/p.cu", b"__global__ void other() {}\n")],
            "the source has no `extern \"C\" __global__ void entry(",
        ),
    ];
    for (name, field, files, message) in cases {
        let yaml = runtime(field);
        let dir = scratch(name, &yaml, files);
        // The test's error; the rule then lists a test that did not load.
        let e = errors(&dir);
        let of_test: Vec<&SpecError> = e
            .iter()
            .filter(|e| e.item.as_deref() == Some("test `p`"))
            .collect();
        assert_eq!(of_test.len(), 1, "{name}: {e:?}");
        let e = of_test[0];
        assert!(e.message.contains(message), "{name}: {e}");
        assert_eq!(e.file, dir.join("a.yaml"), "{name}");
        assert_eq!(e.item.as_deref(), Some("test `p`"), "{name}: {e}");
        assert_eq!(e.field.as_deref(), Some("source_file"), "{name}: {e}");
        let line = yaml
            .lines()
            .position(|l| l.contains("source_file:"))
            .unwrap()
            + 1;
        assert_eq!(e.line, Some(line), "{name}: {e}");
    }
}

#[test]
fn a_litmus_test_has_no_source_file() {
    let yaml = OneRule::new()
        .tests(&gridcheck_fixture::T_ONE.replace(
            "    expect: forbidden\n",
            "    expect: forbidden\n    source_file: src/p.cu\n",
        ))
        .yaml();
    let dir = scratch("litmus", &yaml, &[("src/p.cu", PROGRAM.as_bytes())]);
    let e = errors(&dir);
    assert!(
        e.iter().any(
            |e| e.message == "`source_file` is not a field of a litmus test"
                && e.field.as_deref() == Some("source_file")
        ),
        "{e:?}"
    );
}
