//! Where a test's spec file is, as the generated files and the site name
//! it: relative to the repository root.

use std::path::{Component, Path};

/// The spec file of a test as a path relative to the repository root
/// (`spec/...`), whatever directory the spec was loaded from.
pub fn spec_relative(file: &Path) -> String {
    let parts: Vec<String> = file
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    match parts.iter().rposition(|p| p == "spec") {
        Some(i) => parts[i..].join("/"),
        None => parts.join("/"),
    }
}
