//! The architecture's invariants, checked by `cargo test` as
//! rust-analyzer's tidy checks its own: every source file opens with a `//!`
//! doc; ARCHITECTURE.md's code map has a section for every crate, names
//! only files, paths and tests that exist, and stays within 300 lines;
//! README.md stays within 220 lines and names only commands that `cargo
//! xtask help` and `gridcheck help` list; the records' crates depend only
//! on those below them (`tidy/layers.rs`); only `crates/spec` reads YAML;
//! `crates/model` and `crates/kernelgen` do no I/O; every member uses the
//! workspace lints; no source file is over 600 lines; no function outside
//! tests is over 120 lines; no two modules of a crate, the crate root among
//! them, import each other, directly or not (a check with no list of
//! exceptions).
//!
//! A listed exception is checked too: once it no longer applies, the test
//! fails until it is taken off the list, so the lists cannot go stale.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

#[path = "tidy/functions.rs"]
mod functions;
#[path = "tidy/graph.rs"]
mod graph;
#[path = "tidy/layers.rs"]
mod layers;
#[path = "tidy/readme.rs"]
mod readme;

use functions::functions;
use graph::{crate_refs, find_cycle, module_graph, root_items};
use layers::{BELOW, depends_on};
use readme::{MAX_README_LINES, readme_problems, xtask_commands};

fn root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    here.canonicalize().unwrap_or(here)
}

/// The workspace's crates: `crates/*`, `conformance`, `xtask`, relative to
/// the root.
fn crates() -> Vec<PathBuf> {
    let root = root();
    let mut v: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .map(|p| p.strip_prefix(&root).unwrap().to_path_buf())
        .collect();
    v.extend([PathBuf::from("conformance"), PathBuf::from("xtask")]);
    v.sort();
    v
}

/// Every `.rs` file under `dir` (relative to the root), skipping build
/// output and test fixtures' generated trees.
fn rs_files(dir: &Path) -> Vec<PathBuf> {
    let root = root();
    let mut out = Vec::new();
    let mut stack = vec![root.join(dir)];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                if name != "target" && !name.starts_with('.') {
                    stack.push(p);
                }
            } else if name.ends_with(".rs") {
                out.push(p.strip_prefix(&root).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

fn all_rs_files() -> Vec<PathBuf> {
    crates().iter().flat_map(|c| rs_files(c)).collect()
}

fn read(rel: &Path) -> String {
    std::fs::read_to_string(root().join(rel))
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", rel.display()))
}

#[test]
fn every_source_file_opens_with_a_doc_comment() {
    let missing: Vec<String> = all_rs_files()
        .into_iter()
        .filter(|f| !read(f).starts_with("//!"))
        .map(|f| f.display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "these files do not open with a `//!` comment saying what they are:\n  {}",
        missing.join("\n  ")
    );
}

/// The most lines ARCHITECTURE.md may have: a map, not an inventory.
const MAX_ARCHITECTURE_LINES: usize = 300;

/// The code map's section of each crate: `### `<dir>`` up to the next
/// heading.
fn code_map() -> BTreeMap<String, String> {
    let text = read(Path::new("ARCHITECTURE.md"));
    let start = text
        .find("## Code map")
        .expect("ARCHITECTURE.md has a code map");
    let rest = &text[start..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |i| i + 3);
    let mut sections = BTreeMap::new();
    let mut current: Option<(String, String)> = None;
    for line in rest[..end].lines() {
        if let Some(h) = line.strip_prefix("### ") {
            if let Some((k, v)) = current.take() {
                sections.insert(k, v);
            }
            let key = h.trim().trim_matches('`').trim_end_matches('/');
            current = Some((key.to_string(), String::new()));
        } else if let Some((_, v)) = current.as_mut() {
            v.push_str(line);
            v.push('\n');
        }
    }
    if let Some((k, v)) = current {
        sections.insert(k, v);
    }
    sections
}

/// The backquoted names of a text: `a`, `b/c.rs`.
fn quoted(text: &str) -> impl Iterator<Item = &str> {
    text.split('`').skip(1).step_by(2)
}

/// The source files a crate's section names: the backquoted names ending in
/// `.rs` without a folder (`ast.rs`, `sync.rs`).
fn named_files(section: &str) -> Vec<String> {
    quoted(section)
        .filter(|n| {
            n.ends_with(".rs")
                && !n.contains('/')
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        })
        .map(String::from)
        .collect()
}

/// The repository paths a text names: backquoted names with a `/` made of
/// path characters only (no placeholder such as `<gpu-slug>`, no glob).
fn named_paths(text: &str) -> Vec<String> {
    quoted(text)
        .filter(|n| {
            n.contains('/')
                && !n.starts_with('/')
                && !n.starts_with("./")
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '/' | '.'))
        })
        .map(String::from)
        .collect()
}

/// The `(checked: <file>::<test>)` references of a text, as (file, test).
fn checked_references(text: &str) -> Vec<(String, String)> {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    flat.split("checked: ")
        .skip(1)
        .filter_map(|rest| {
            let reference = rest.split([')', ' ', ';', ',']).next()?;
            let (file, test) = reference.split_once("::")?;
            // `(checked: <file>::<test>)` explains the form: no reference.
            (!reference.contains('<')).then(|| (file.to_string(), test.to_string()))
        })
        .collect()
}

/// What ARCHITECTURE.md says that is not so: a crate without its section, a
/// section of what is not a crate, a source file its crate does not have, a
/// path that does not exist, a test that does not exist, too many lines.
fn architecture_problems(text: &str, map: &BTreeMap<String, String>) -> Vec<String> {
    let mut problems = Vec::new();
    for krate in crates() {
        let key = krate.display().to_string();
        if !map.contains_key(&key) {
            problems.push(format!("{key}: no section `### `{key}`` in the code map"));
        }
    }
    for (key, section) in map {
        let dir = root().join(key);
        if !dir.join("Cargo.toml").is_file() && key != "crates/vendor" {
            if !key.contains(' ') {
                problems.push(format!("`{key}`: a section of what is not a crate"));
            }
            continue;
        }
        let files = rs_files(Path::new(key));
        for name in named_files(section) {
            if !files
                .iter()
                .any(|f| f.file_name().is_some_and(|n| *n == *name))
            {
                problems.push(format!("{key}: `{name}` (no such file in the crate)"));
            }
        }
    }
    for path in named_paths(text) {
        if !root().join(&path).exists() {
            problems.push(format!("`{path}` (no such path)"));
        }
    }
    for (file, test) in checked_references(text) {
        let body = std::fs::read_to_string(root().join(&file)).unwrap_or_default();
        if !body.contains(&format!("fn {test}(")) {
            problems.push(format!("checked: {file}::{test} (no such test)"));
        }
    }
    let lines = text.lines().count();
    if lines > MAX_ARCHITECTURE_LINES {
        problems.push(format!(
            "{lines} lines, over {MAX_ARCHITECTURE_LINES}: a map names crates and invariants, module docs say the rest"
        ));
    }
    problems
}

#[test]
fn architecture_names_every_crate() {
    let text = read(Path::new("ARCHITECTURE.md"));
    let problems = architecture_problems(&text, &code_map());
    assert!(
        problems.is_empty(),
        "ARCHITECTURE.md is not true to the tree:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn only_the_spec_crate_reads_yaml() {
    let mut found = Vec::new();
    for krate in crates() {
        if krate == Path::new("crates/spec") {
            continue;
        }
        let manifest = krate.join("Cargo.toml");
        if read(&manifest).contains("yaml") {
            found.push(format!("{} depends on a YAML crate", manifest.display()));
        }
        // Spelled in pieces, so that this file does not match itself.
        let needles = [
            ["serde", "_yaml"].concat(),
            ["yaml", "_serde"].concat(),
            ["lib", "yaml"].concat(),
        ];
        for f in rs_files(&krate) {
            let text = read(&f);
            for needle in &needles {
                if text.contains(needle) {
                    found.push(format!("{} uses {needle}", f.display()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "only crates/spec reads YAML:\n  {}",
        found.join("\n  ")
    );
}

#[test]
fn the_records_crates_depend_only_on_those_below() {
    let mut found = Vec::new();
    for (krate, above) in BELOW {
        let manifest = read(&Path::new(krate).join("Cargo.toml"));
        let named = above.iter().filter(|p| depends_on(&manifest, p));
        found.extend(named.map(|p| format!("{krate} depends on {p}")));
    }
    assert!(
        found.is_empty(),
        "report -> judge -> store -> record, never back:\n  {}",
        found.join("\n  ")
    );
}

/// The text of a source file before its `#[cfg(test)]` module.
fn non_test_code(text: &str) -> &str {
    text.find("#[cfg(test)]").map_or(text, |i| &text[..i])
}

#[test]
fn model_and_kernelgen_do_no_io() {
    let mut found = Vec::new();
    for krate in ["crates/model", "crates/kernelgen"] {
        for f in rs_files(&Path::new(krate).join("src")) {
            if f.file_name().is_some_and(|n| n == "tests.rs") {
                continue;
            }
            let text = read(&f);
            for needle in [
                "std::fs",
                "std::process",
                "std::net",
                "std::io",
                "std::env",
                "File::",
                "Command::",
                "println!",
                "eprintln!",
            ] {
                if non_test_code(&text).contains(needle) {
                    found.push(format!("{} uses {needle}", f.display()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "crates/model and crates/kernelgen do no I/O:\n  {}",
        found.join("\n  ")
    );
}

#[test]
fn every_member_uses_the_workspace_lints() {
    let workspace = read(Path::new("Cargo.toml"));
    assert!(workspace.contains("[workspace.lints.rust]"));
    assert!(workspace.contains("[workspace.lints.clippy]"));
    let missing: Vec<String> = crates()
        .into_iter()
        .map(|c| c.join("Cargo.toml"))
        .filter(|m| {
            let t = read(m);
            let lints = t.split("[lints]").nth(1).unwrap_or("");
            !lints
                .lines()
                .take_while(|l| !l.starts_with('['))
                .any(|l| l.replace(' ', "") == "workspace=true")
        })
        .map(|m| m.display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "members without `[lints] workspace = true`:\n  {}",
        missing.join("\n  ")
    );
}

/// Files over the limit that another change is splitting.
const LONG_FILES_BEING_SPLIT: &[&str] = &[];
const MAX_LINES: usize = 600;

#[test]
fn no_source_file_is_over_600_lines() {
    let mut long = Vec::new();
    for f in all_rs_files() {
        let n = read(&f).lines().count();
        let name = f.display().to_string();
        let excepted = LONG_FILES_BEING_SPLIT.contains(&name.as_str());
        if n > MAX_LINES && !excepted {
            long.push(format!("{name}: {n} lines"));
        }
        if excepted && n <= MAX_LINES {
            long.push(format!(
                "{name} is {n} lines now: take it off LONG_FILES_BEING_SPLIT"
            ));
        }
    }
    assert!(
        long.is_empty(),
        "split these files along their seams (at most {MAX_LINES} lines):\n  {}",
        long.join("\n  ")
    );
}

/// Functions over the limit that another change is splitting, as
/// `path::name`. Its owner takes each off the list once split.
const LONG_FUNCTIONS_BEING_SPLIT: &[&str] = &[];
const MAX_FN_LINES: usize = 120;

/// The files whose functions count: every crate's `.rs` files but its
/// `tests/` directories and test modules' files (`tests.rs`); `benches/`
/// and `examples/` count.
fn non_test_files() -> Vec<PathBuf> {
    all_rs_files()
        .into_iter()
        .filter(|f| {
            !f.components().any(|c| c.as_os_str() == "tests")
                && f.file_name().is_some_and(|n| n != "tests.rs")
        })
        .collect()
}

#[test]
fn no_function_is_over_120_lines() {
    let mut long = Vec::new();
    let mut seen = BTreeSet::new();
    for f in non_test_files() {
        for (name, line, n) in functions(&read(&f)) {
            let key = format!("{}::{name}", f.display());
            let excepted = LONG_FUNCTIONS_BEING_SPLIT.contains(&key.as_str());
            if n > MAX_FN_LINES && !excepted {
                long.push(format!("{}:{line}: fn {name} is {n} lines", f.display()));
            }
            if excepted && n > MAX_FN_LINES {
                seen.insert(key);
            }
        }
    }
    for key in LONG_FUNCTIONS_BEING_SPLIT {
        if !seen.contains(*key) {
            long.push(format!(
                "{key} is no longer over {MAX_FN_LINES} lines: take it off LONG_FUNCTIONS_BEING_SPLIT"
            ));
        }
    }
    assert!(
        long.is_empty(),
        "split these functions at their steps, each a named function (at most {MAX_FN_LINES} lines):\n  {}",
        long.join("\n  ")
    );
}

#[test]
fn no_import_cycle_between_modules() {
    let mut problems = Vec::new();
    for krate in crates() {
        if let Some(c) = find_cycle(&module_graph(&krate)) {
            problems.push(format!("{}: {}", krate.display(), c.join(" -> ")));
        }
    }
    assert!(
        problems.is_empty(),
        "import cycles (move what both sides need into a module of its own):\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn the_checks_see_what_they_check() {
    // The reference parser finds grouped and nested imports.
    let refs = crate_refs(
        "use crate::{a, b::{c, d}, e::F};\nlet x = crate::g::h();\nuse gridcheck_crate::z;",
    );
    assert_eq!(
        refs,
        ["a", "b", "e", "g"].map(String::from).into_iter().collect()
    );
    // A two-module cycle is found, an acyclic graph has none.
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.entry("a".into()).or_default().insert("b".into());
    g.entry("b".into()).or_default().insert("c".into());
    assert_eq!(find_cycle(&g), None);
    g.entry("c".into()).or_default().insert("a".into());
    assert_eq!(
        find_cycle(&g),
        Some(["a", "b", "c", "a"].map(String::from).to_vec())
    );
    // The walk sees the crates and their modules.
    assert!(crates().contains(&PathBuf::from("crates/docs")));
    let docs = module_graph(Path::new("crates/docs"));
    assert!(docs["site"].contains("pages") && docs["pages"].contains("context"));
    assert!(code_map().contains_key("crates/docs"));

    // A crate root is a node: a module using an item the root defines
    // depends on it, a re-export resolves to its module, and the root
    // depends on the modules it names by bare path.
    let mods: BTreeSet<String> = ["options", "tiers"].map(String::from).into();
    let items = root_items(
        "pub use options::{Options, Tier};\npub struct Ctx {\n    x: u8,\n}\nfn cached() {}",
        "lib.rs",
        &mods,
    );
    assert_eq!(items["Options"], "options");
    assert_eq!(items["Ctx"], "lib.rs");
    assert_eq!(items["cached"], "lib.rs");
    assert!(!items.contains_key("x"));
    let conformance = module_graph(Path::new("conformance"));
    assert!(conformance["lib.rs"].contains("run"));
    assert!(conformance["run"].contains("tiers") && conformance["tiers"].contains("ctx"));

    // A function over the limit is seen, with its length from `fn` to its
    // closing brace; one in a test module, a declaration and an empty body
    // are not.
    let long_body = "        x();\n".repeat(130);
    let text = format!(
        "trait T {{\n    fn decl(&self);\n}}\nfn empty() {{}}\npub(crate) fn long(\n    a: u8,\n) -> u8 {{\n{long_body}}}\n\
         #[cfg(test)]\nmod tests {{\n    fn in_test() {{\n{long_body}    }}\n}}\n"
    );
    assert_eq!(functions(&text), vec![("long".to_string(), 5, 134)]);

    // ARCHITECTURE.md naming a file, a path or a test that is not there,
    // a section of what is not a crate, or too many lines, is caught.
    let mut map: BTreeMap<String, String> = code_map();
    map.insert(
        "crates/docs".to_string(),
        "`site.rs`, `gone.rs`\n".to_string(),
    );
    map.insert("no-such-dir".to_string(), String::new());
    let text = format!(
        "`crates/docs/src/site.rs` `crates/no/such.rs` `records/<gpu>/x`\n\
         (checked: xtask/tests/tidy.rs::no_function_is_over_120_lines)\n\
         (checked: xtask/tests/tidy.rs::no_such_test)\n{}",
        "line\n".repeat(MAX_ARCHITECTURE_LINES)
    );
    assert_eq!(
        architecture_problems(&text, &map),
        [
            "crates/docs: `gone.rs` (no such file in the crate)",
            "`no-such-dir`: a section of what is not a crate",
            "`crates/no/such.rs` (no such path)",
            "checked: xtask/tests/tidy.rs::no_such_test (no such test)",
            "303 lines, over 300: a map names crates and invariants, module docs say the rest",
        ]
    );
    // A crate without its section is caught.
    map.remove("crates/spec");
    assert!(
        architecture_problems("", &map)
            .contains(&"crates/spec: no section `### `crates/spec`` in the code map".to_string())
    );
}

/// `cargo xtask help`'s text, from the binary these tests are built with.
fn xtask_usage() -> String {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("help")
        .output()
        .expect("xtask runs");
    assert!(o.status.success(), "cargo xtask help failed");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The commands `gridcheck help` lists: the `name`s of `crates/cli`'s
/// command table.
fn gridcheck_commands() -> BTreeSet<String> {
    let lib = read(Path::new("crates/cli/src/lib.rs"));
    lib.split("name: \"")
        .skip(1)
        .filter_map(|rest| rest.split_once('"').map(|(n, _)| n.to_string()))
        .collect()
}

#[test]
fn readme_is_short_and_names_only_commands_that_exist() {
    let text = read(Path::new("README.md"));
    let problems = readme_problems(
        &text,
        &xtask_commands(&xtask_usage()),
        &gridcheck_commands(),
    );
    assert!(
        problems.is_empty(),
        "README.md is not true to the commands:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn the_readme_check_sees_what_it_checks() {
    let xtask = xtask_commands(&xtask_usage());
    assert!(xtask["report"].contains("diff") && xtask["spec"].contains("check"));
    assert!(xtask["conformance"].is_empty() && xtask.contains_key("help"));
    let gridcheck = gridcheck_commands();
    assert!(
        ["run", "campaign", "check", "report", "session"]
            .iter()
            .all(|c| gridcheck.contains(*c))
    );
    let text = format!(
        "Run `cargo xtask conformance --tier gpu` or `./b/gridcheck session F`.\n\
         ```sh\ncargo xtask frobnicate   # or `gridcheck chek`\ncargo xtask report dif A B\n\
         cargo xtask fuzz model|gpux\n```\n`cargo xtask\n  toolchain instal 13.5`\n{}",
        "line\n".repeat(MAX_README_LINES - 7)
    );
    assert_eq!(
        readme_problems(&text, &xtask, &gridcheck),
        [
            "`cargo xtask frobnicate   # or `gridcheck chek``: cargo xtask has no command `frobnicate`",
            "`cargo xtask frobnicate   # or `gridcheck chek``: gridcheck has no command `chek`",
            "`cargo xtask report dif A B`: cargo xtask report has no `dif`",
            "`cargo xtask fuzz model|gpux`: cargo xtask fuzz has no `gpux`",
            "`cargo xtask toolchain instal 13.5`: cargo xtask toolchain has no `instal`",
            "221 lines, over 220: the first screen says what it is and how to run it, the docs the rest",
        ]
    );
}
