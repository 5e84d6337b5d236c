//! A litmus test written back as spec YAML: what a generated or shrunk
//! program prints so that it can be pasted into `spec/`, and what the
//! random-program generator loads (through [`crate::load_sources`], so that
//! every generated program is one the loader accepts).

use std::fmt::Write;
use std::path::{Path, PathBuf};

use crate::ast::{KernelLaunch, Litmus, Profile, Spec, TestBody};
use crate::error::{SpecError, SpecErrors};

/// One entry of a spec file's `tests:` list (indented for it).
pub fn litmus_test_yaml(name: &str, description: &str, l: &Litmus) -> String {
    let mut s = String::new();
    let q = |t: &str| format!("'{}'", t.replace('\'', "''"));
    let _ = writeln!(s, "  - name: {name}");
    let _ = writeln!(s, "    description: {}", q(description));
    let _ = writeln!(s, "    kind: litmus");
    // A tile's key (`x[1024]`) is quoted: `[` cannot start or be inside a
    // plain key of a flow mapping.
    let entry = |(n, v): &(String, u32)| match l.tile_words(n) {
        Some(_) => format!("\"{}\": {v}", l.declared_key(n)),
        None => format!("{n}: {v}"),
    };
    let memory: Vec<String> = l.memory.iter().map(entry).collect();
    let _ = writeln!(s, "    memory: {{ {} }}", memory.join(", "));
    if !l.shared.is_empty() {
        let shared: Vec<String> = l.shared.iter().map(entry).collect();
        let _ = writeln!(s, "    shared: {{ {} }}", shared.join(", "));
    }
    if !l.limits.is_empty() {
        let limits: Vec<String> = l
            .limits
            .iter()
            .map(|(k, v)| format!("{}: {v}", k.as_str()))
            .collect();
        let _ = writeln!(s, "    limits: {{ {} }}", limits.join(", "));
    }
    let _ = writeln!(s, "    kernels:");
    for k in &l.kernels {
        let launch = match k.launch {
            KernelLaunch::Host { pdl: false } => "host",
            KernelLaunch::Host { pdl: true } => "host-pdl",
            KernelLaunch::Device => "device",
        };
        let _ = writeln!(s, "      - kernel: {}", k.name);
        let _ = writeln!(s, "        launch: {launch}");
        let _ = writeln!(s, "        threads:");
        for t in &k.threads {
            // An operand of a tile (`x[0..8]`) would end the flow list.
            let ops: Vec<String> = t
                .ops
                .iter()
                .map(|o| o.to_string())
                .map(|o| {
                    if o.contains('[') {
                        format!("\"{o}\"")
                    } else {
                        o
                    }
                })
                .collect();
            let _ = writeln!(s, "          {}: [{}]", t.name, ops.join(", "));
        }
    }
    let _ = writeln!(s, "    condition: {}", q(&l.condition.to_string()));
    let _ = writeln!(s, "    expect: {}", l.expect);
    s
}

/// A whole spec document holding one rule and the test, for loading.
pub fn litmus_spec_yaml(profile: Profile, name: &str, l: &Litmus) -> String {
    format!(
        "rules:\n  - id: {profile}.generated.{name}\n    source: {{ seed: generated.txt, section: \"1 Generated\" }}\n    \
         quote: generated\n    profile: {profile}\n    tests: [{name}]\ntests:\n{}",
        litmus_test_yaml(name, "generated", l)
    )
}

/// Loads the YAML of [`litmus_spec_yaml`] (or any one-test document) and
/// returns its litmus test.
pub fn load_litmus(yaml: &str) -> Result<Litmus, SpecErrors> {
    let spec: Spec =
        crate::load_sources(&[(PathBuf::from("generated.yaml"), yaml.to_string())], None)?;
    match spec.tests.into_iter().next().map(|t| t.body) {
        Some(TestBody::Litmus(l)) => Ok(l),
        _ => Err(SpecErrors(vec![SpecError::new(
            "generated.yaml",
            "the document holds no litmus test",
        )])),
    }
}

/// The litmus tests of a file, by name, in file order: a whole spec
/// document, or a list of tests as a campaign's leads phase writes a
/// finding ([`litmus_test_yaml`] entries, each starting with its
/// `  - name:` line), each then loaded with a rule of the first profile
/// that accepts it.
pub fn load_litmus_tests(file: &Path, text: &str) -> Result<Vec<(String, Litmus)>, String> {
    if text.starts_with("rules:") || text.contains("\nrules:") {
        let spec = crate::load_sources(&[(file.to_path_buf(), text.to_string())], None)
            .map_err(|e| e.to_string())?;
        let tests: Vec<(String, Litmus)> = spec
            .tests
            .into_iter()
            .filter_map(|t| match t.body {
                TestBody::Litmus(l) => Some((t.name, l)),
                _ => None,
            })
            .collect();
        return match tests.is_empty() {
            true => Err(format!("{}: no litmus test", file.display())),
            false => Ok(tests),
        };
    }
    const ENTRY: &str = "  - name: ";
    let starts: Vec<usize> = text
        .match_indices(ENTRY)
        .map(|(i, _)| i)
        .filter(|&i| i == 0 || text.as_bytes()[i - 1] == b'\n')
        .collect();
    if starts.is_empty() {
        return Err(format!(
            "{}: no test (no line starting `{}`)",
            file.display(),
            ENTRY.trim()
        ));
    }
    let mut tests = Vec::new();
    for (n, &from) in starts.iter().enumerate() {
        let entry = &text[from..starts.get(n + 1).copied().unwrap_or(text.len())];
        let name = entry[ENTRY.len()..].lines().next().unwrap_or("").trim();
        let mut last = String::new();
        let loaded = Profile::ALL.iter().find_map(|&p| {
            let doc = format!(
                "rules:\n  - id: {p}.finding.{name}\n    source: {{ seed: finding.txt, section: \"1\" }}\n    quote: finding\n    profile: {p}\n    tests: [{name}]\ntests:\n{entry}"
            );
            load_litmus(&doc)
                .map_err(|e| last = e.to_string())
                .ok()
        });
        let l = loaded.ok_or_else(|| format!("{}: test `{name}`: {last}", file.display()))?;
        tests.push((name.to_string(), l));
    }
    Ok(tests)
}
