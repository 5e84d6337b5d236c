//! The parts of a generated file that are not a litmus test's kernels: the
//! do-not-edit header every file starts with, and the whole file of a
//! runtime or host test (header, then the test's source verbatim, after a
//! `#line` directive naming the spec file and the line the source starts
//! on, so that nvcc's errors point into the spec).
//!
//! Every emitter writes into a [`fmt::Write`] and returns [`fmt::Result`];
//! the public functions write into a `String`, which cannot fail.

use std::fmt::{self, Write};

use gridcheck_spec::{Check, HostTest, RuntimeExpect, RuntimeTest, Test};

/// Runs an emitter into a new `String`.
pub(crate) fn to_string(emit: impl FnOnce(&mut String) -> fmt::Result) -> String {
    let mut o = String::new();
    // Writing into a String never fails: the `fmt::Result` can only be Ok.
    emit(&mut o).expect("formatting into a String does not fail");
    o
}

/// The generated file of a runtime test: the do-not-edit header, which
/// names the spec file, the rules and how the runner calls the entry
/// kernel, then the test's `source` verbatim.
pub fn generate_runtime(
    test: &Test,
    rt: &RuntimeTest,
    spec_file: &str,
    rule_ids: &[&str],
) -> String {
    to_string(|w| runtime_file(w, test, rt, spec_file, rule_ids))
}

fn runtime_file(
    w: &mut impl Write,
    test: &Test,
    rt: &RuntimeTest,
    spec_file: &str,
    rule_ids: &[&str],
) -> fmt::Result {
    header(w, test, " (runtime)", spec_file, rule_ids)?;
    build_line(w, &rt.arch, &rt.flags, "")?;
    writeln!(
        w,
        "// Run: {}<<<{}, {}>>>(out), out zeroed, {} words",
        rt.entry,
        rt.grid,
        rt.block,
        rt.outputs.len().max(1)
    )?;
    if !rt.limits.is_empty() {
        let limits: Vec<String> = rt
            .limits
            .iter()
            .map(|(l, v)| format!("{} = {v}", l.as_str()))
            .collect();
        writeln!(w, "// Limits, set before loading: {}", limits.join(", "))?;
    }
    for (i, name) in rt.outputs.iter().enumerate() {
        writeln!(w, "//   out[{i}] = {name}")?;
    }
    match &rt.expect {
        RuntimeExpect::Values(checks) => expect_line(w, "Expect", checks)?,
        RuntimeExpect::LoadError { name, value } => writeln!(
            w,
            "// Expect: loading the module fails with {name} ({value})"
        )?,
    }
    verbatim(w, &rt.source, test, spec_file)
}

/// The generated file of a host test: the do-not-edit header, how it is
/// built and what it must print, then the test's `source` verbatim.
pub fn generate_host(test: &Test, ht: &HostTest, spec_file: &str, rule_ids: &[&str]) -> String {
    to_string(|w| host_file(w, test, ht, spec_file, rule_ids))
}

fn host_file(
    w: &mut impl Write,
    test: &Test,
    ht: &HostTest,
    spec_file: &str,
    rule_ids: &[&str],
) -> fmt::Result {
    header(w, test, " (host program)", spec_file, rule_ids)?;
    build_line(w, &ht.arch, &ht.flags, " -lcudadevrt -o <test>.host")?;
    writeln!(
        w,
        "// Run: the program prints `gridcheck-output <name> <value>` for: {}",
        ht.outputs.join(", ")
    )?;
    expect_line(w, "Expect", &ht.expect)?;
    if !ht.may.is_empty() {
        expect_line(w, "May (allowed, should be seen)", &ht.may)?;
    }
    verbatim(w, &ht.source, test, spec_file)
}

fn build_line(w: &mut impl Write, arch: &str, flags: &[String], tail: &str) -> fmt::Result {
    let flags = if flags.is_empty() {
        "(none)".to_string()
    } else {
        crate::escape::comment(&flags.join(" "))
    };
    writeln!(
        w,
        "// Build: nvcc -arch={arch} -rdc=true{tail}, extra flags: {flags}"
    )
}

fn expect_line(w: &mut impl Write, head: &str, checks: &[(String, Check)]) -> fmt::Result {
    let checks: Vec<String> = checks
        .iter()
        .map(|(name, c)| {
            if c.text.starts_with(['=', '!', '<', '>']) {
                format!("{name} {}", crate::escape::comment(&c.text))
            } else {
                format!("{name} == {}", crate::escape::comment(&c.text))
            }
        })
        .collect();
    writeln!(w, "// {head}: {}", checks.join(", "))
}

/// Ends a generated file's header and appends the test's source (with a
/// final newline if it has none), after `#line <line> "<file>"` when the
/// line the source starts on is known: `#line 1 "<the .cu file>"` for a
/// program read from its own file (`source_file:`), else the spec file
/// and the line of the spec the source starts on.
fn verbatim(w: &mut impl Write, source: &str, test: &Test, spec_file: &str) -> fmt::Result {
    writeln!(w, "//")?;
    writeln!(w, "// The test's source, verbatim:")?;
    writeln!(w)?;
    if let Some(line) = test.source_line {
        let file = match &test.source_file {
            Some(cu) => crate::paths::spec_relative(cu),
            None => spec_file.to_string(),
        };
        writeln!(
            w,
            "#line {line} \"{}\"",
            crate::escape::line_directive_path(&file)
        )?;
    }
    w.write_str(source)?;
    if !source.is_empty() && !source.ends_with('\n') {
        writeln!(w)?;
    }
    Ok(())
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first lines of every generated file: the do-not-edit line naming the
/// spec file, the test (with `kind` after its name), its description and the
/// rules that list it.
pub(crate) fn header(
    w: &mut impl Write,
    test: &Test,
    kind: &str,
    spec_file: &str,
    rule_ids: &[&str],
) -> fmt::Result {
    writeln!(
        w,
        "// Generated by cargo xtask codegen from {}; do not edit by hand.",
        crate::escape::comment(spec_file)
    )?;
    writeln!(w, "//")?;
    writeln!(w, "// Test: {}{kind}", test.name)?;
    if let Some(d) = &test.description {
        writeln!(w, "// {}", crate::escape::comment(&one_line(d)))?;
    }
    let rules = if rule_ids.is_empty() {
        "(none)".to_string()
    } else {
        rule_ids.join(", ")
    };
    writeln!(w, "// Rules: {rules}")
}

#[cfg(test)]
mod tests;
