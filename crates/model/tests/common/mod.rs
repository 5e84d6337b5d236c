//! Hand-built litmus tests, written in the spec's own YAML and loaded by the
//! spec crate, so that they are exactly what the harness would hand the model.

#![allow(dead_code)]

use std::path::PathBuf;

use gridcheck_spec::{Litmus, TestBody, load_sources};

/// A kernel: name, `launch:` value, and each thread's operations.
pub type K<'a> = (&'a str, &'a str, &'a [(&'a str, &'a [&'a str])]);

/// Builds and loads a one-test spec. `profile` picks the rule's profile
/// (`cdp2`, `cdp1`, `pdl`); `memory` is the YAML flow map's inside.
pub fn litmus(
    profile: &str,
    memory: &str,
    kernels: &[K<'_>],
    condition: &str,
    expect: &str,
) -> Litmus {
    litmus_with_limits(profile, memory, "", kernels, condition, expect)
}

/// [`litmus`] with `limits:` (the YAML flow map's inside; empty: none).
pub fn litmus_with_limits(
    profile: &str,
    memory: &str,
    limits: &str,
    kernels: &[K<'_>],
    condition: &str,
    expect: &str,
) -> Litmus {
    let limits = if limits.is_empty() {
        String::new()
    } else {
        format!("    limits: {{ {limits} }}\n")
    };
    load(profile, memory, &limits, kernels, condition, expect)
}

/// [`litmus`] with `shared:` locations (the YAML flow map's inside).
pub fn litmus_with_shared(
    profile: &str,
    memory: &str,
    shared: &str,
    kernels: &[K<'_>],
    condition: &str,
    expect: &str,
) -> Litmus {
    let shared = format!("    shared: {{ {shared} }}\n");
    load(profile, memory, &shared, kernels, condition, expect)
}

/// Loads a one-test spec; `extra` is whole YAML lines after `memory:`.
fn load(
    profile: &str,
    memory: &str,
    extra: &str,
    kernels: &[K<'_>],
    condition: &str,
    expect: &str,
) -> Litmus {
    let mut ks = String::new();
    for (name, launch, threads) in kernels {
        ks += &format!("      - kernel: {name}\n        launch: {launch}\n        threads:\n");
        for (t, ops) in *threads {
            ks += &format!("          {t}: [{}]\n", ops.join(", "));
        }
    }
    let yaml = gridcheck_fixture::OneRule::new()
        .id(&format!("{profile}.model.hand-built"))
        .tests(&format!(
            "  - name: hand-built\n    \
         kind: litmus\n    memory: {{ {memory} }}\n{extra}    kernels:\n{ks}    condition: '{condition}'\n    \
         expect: {expect}\n"
        ))
        .yaml();
    let spec = load_sources(
        &[(PathBuf::from("spec/hand-built.yaml"), yaml.clone())],
        None,
    )
    .unwrap_or_else(|e| panic!("{e}\n{yaml}"));
    match &spec.tests[0].body {
        TestBody::Litmus(l) => l.clone(),
        _ => unreachable!(),
    }
}

/// Exploration options for tests: the model's default, as in the harness
/// (loom and the model are optimised in test builds too).
pub fn options() -> gridcheck_model::Options {
    gridcheck_model::Options::default()
}
