//! The module graph of a crate, for the import-cycle check: the `crate::`
//! paths of each module's files, the crate root as a node of its own, and a
//! cycle search.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::{non_test_code, read, root, rs_files};

/// The first path segment of every `crate::` path in `text` (`use
/// crate::{a, b::c}` gives `a` and `b`).
pub fn crate_refs(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut rest = text;
    while let Some(i) = rest.find("crate::") {
        let before = rest[..i].chars().last();
        rest = &rest[i + "crate::".len()..];
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue; // `gridcheck_crate::`, not this crate
        }
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.insert(ident(item.trim()));
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                if depth == 0 || c != '{' {
                    item.push(c);
                }
            }
            out.insert(ident(item.trim()));
        } else {
            out.insert(ident(rest));
        }
    }
    out.remove("");
    out
}

/// A crate's root file: `src/lib.rs`, else `src/main.rs` (a `main.rs`
/// beside a `lib.rs` declares no modules: it uses the library by name).
fn crate_root(krate: &Path) -> Option<PathBuf> {
    ["lib.rs", "main.rs"]
        .map(|f| krate.join("src").join(f))
        .into_iter()
        .find(|f| root().join(f).is_file())
}

/// Code without comments (a doc link is not a dependency) and without the
/// `#[cfg(test)]` module.
fn code_of(text: &str) -> String {
    non_test_code(text)
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The names a crate root gives its crate: the items it defines (`Ctx` in
/// `pub struct Ctx`) map to the root itself, `node`; what it re-exports
/// (`pub use options::{Options, Tier}`) maps to the module it comes from.
pub fn root_items(code: &str, node: &str, modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut items = BTreeMap::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let lines: Vec<&str> = code.lines().collect();
    for (i, line) in lines
        .iter()
        .enumerate()
        .filter(|(_, l)| !l.starts_with(' '))
    {
        // A `use` group over several lines is one statement.
        let mut line = line.to_string();
        if line.contains("use ") {
            for next in &lines[i + 1..] {
                if line.ends_with(';') {
                    break;
                }
                line.push(' ');
                line.push_str(next.trim());
            }
        }
        let mut words = line.split_whitespace().peekable();
        while words
            .peek()
            .is_some_and(|w| w.starts_with("pub") || matches!(*w, "async" | "unsafe"))
        {
            words.next();
        }
        let rest: Vec<&str> = words.collect();
        match rest.as_slice() {
            ["use", path @ ..] => {
                let path = path.join(" ");
                let path = path.strip_prefix("crate::").unwrap_or(&path);
                let first = ident(path);
                if !modules.contains(&first) {
                    continue;
                }
                let names = match path.split_once('{') {
                    Some((_, group)) => crate_refs(&format!("crate::{{{group}")),
                    None => {
                        let last = path.trim_end_matches(';').rsplit("::").next().unwrap_or("");
                        BTreeSet::from([ident(last.rsplit(" as ").next().unwrap_or(last).trim())])
                    }
                };
                for name in names {
                    items.insert(name, first.clone());
                }
            }
            ["const", "fn", name, ..] => {
                items.insert(ident(name), node.to_string());
            }
            [kind, name, ..]
                if matches!(
                    *kind,
                    "struct" | "enum" | "fn" | "type" | "const" | "static" | "trait" | "union"
                ) =>
            {
                items.insert(ident(name), node.to_string());
            }
            _ => {}
        }
    }
    items.retain(|k, _| !k.is_empty());
    items
}

/// The modules a crate root uses: `crate::m` and the bare paths `m::` it may
/// write for its own modules (`use options::Tier`, `tiers::model(..)`).
fn root_refs(code: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = crate_refs(code);
    for m in modules {
        let needle = format!("{m}::");
        let mut rest = code;
        while let Some(i) = rest.find(&needle) {
            let before = rest[..i].chars().last();
            rest = &rest[i + needle.len()..];
            if !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
                out.insert(m.clone());
            }
        }
    }
    out
}

/// The module graph of a crate: top-level module → the top-level modules
/// its non-test files (its own and its submodules') name through `crate::` (or
/// `super::` in a top-level module's own file). The crate root is a node
/// too, named by its file (`lib.rs`): a module that uses an item the root
/// defines depends on the root, and the root depends on the modules it uses.
pub fn module_graph(krate: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let src = krate.join("src");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let files = rs_files(&src);
    let root_file = crate_root(krate);
    let top = |f: &Path| -> Option<String> {
        let rel = f.strip_prefix(&src).ok()?;
        let first = rel.components().next()?.as_os_str().to_string_lossy();
        let name = first.trim_end_matches(".rs").to_string();
        (!matches!(name.as_str(), "lib" | "main")).then_some(name)
    };
    let names: BTreeSet<String> = files.iter().filter_map(|f| top(f)).collect();
    let node = root_file
        .as_ref()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned());
    let items = match (&root_file, &node) {
        (Some(f), Some(n)) => {
            let code = code_of(&read(f));
            graph.insert(n.clone(), root_refs(&code, &names));
            root_items(&code, n, &names)
        }
        _ => BTreeMap::new(),
    };
    // A test module's file (`tests.rs`) is test code, like a `#[cfg(test)]`
    // module: not a dependency of the crate.
    let is_test = |f: &Path| f.file_name().is_some_and(|n| n == "tests.rs");
    for f in files.iter().filter(|f| !is_test(f)) {
        let Some(m) = top(f) else {
            continue;
        };
        let mut code = code_of(&read(f));
        // `super::` from a module's own file, `super::super::` from its
        // submodule's, is the crate root.
        let mut depth = f.strip_prefix(&src).map_or(0, |r| r.components().count());
        if f.file_name().is_some_and(|n| n == "mod.rs") {
            depth -= 1;
        }
        code = code.replace(&"super::".repeat(depth), "crate::");
        let refs = crate_refs(&code).into_iter().filter_map(|r| {
            if names.contains(&r) {
                Some(r)
            } else {
                items.get(&r).cloned()
            }
        });
        let e = graph.entry(m.clone()).or_default();
        e.extend(refs.filter(|r| *r != m));
    }
    graph
}

/// A cycle of the graph, if it has one.
pub fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == n) {
            let mut cycle = path[i..].to_vec();
            cycle.push(n.to_string());
            return Some(cycle);
        }
        if done.contains(n) {
            return None;
        }
        path.push(n.to_string());
        for next in graph.get(n).into_iter().flatten() {
            if let Some(c) = visit(next, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|n| visit(n, graph, &mut Vec::new(), &mut done))
}
