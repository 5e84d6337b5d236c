//! `spec/shapes.yaml`: the shapes in which public code has failed (a wait a
//! guard compiled out, many streams of programmatic launches, a launch
//! event's early start), each with its public source (a project and its
//! issue or pull request, named, not linked), what it is, and the spec's
//! tests and the machine-code tier's user programs (`kernels/sass/`) that
//! cover it. The spec loader skips the file; [`load_shapes`] reads it
//! against a loaded spec, every problem located. The site's *Real-world
//! shapes* page is made from it.

use std::collections::HashSet;
use std::path::Path;

use crate::ast::Spec;
use crate::error::{SpecError, SpecErrors};
use crate::locate::Text;
use crate::ops::is_name;
use crate::raw::RawShapeList;

/// The list of shapes, under `spec/`.
pub const SHAPES_FILE: &str = "shapes.yaml";

/// One shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    /// Lowercase words and `-`: the page's anchor.
    pub id: String,
    pub title: String,
    /// Where it was reported: a project, its issue or pull request.
    pub sources: Vec<String>,
    /// What the shape is and what the tests do with it.
    pub summary: String,
    /// Spec tests (by name) that cover it.
    pub tests: Vec<String>,
    /// Machine-code tier user programs (`kernels/sass/programs.toml` names)
    /// that cover it; the spec does not read that manifest, the site checks
    /// them against it.
    pub programs: Vec<String>,
    /// 1-based line of the entry.
    pub line: usize,
}

/// Reads `spec/shapes.yaml` against `spec`: ids unique and well-formed,
/// title, summary and at least one source given, every test a test of the
/// spec, something (a test or a program) covering each shape.
pub fn load_shapes(path: &Path, src: &str, spec: &Spec) -> Result<Vec<Shape>, SpecErrors> {
    let raw: RawShapeList =
        serde_yaml::from_str(src).map_err(|e| SpecErrors(vec![SpecError::of_yaml(path, &e)]))?;
    let text = Text::new(src);
    let starts = text.entries("id");
    let aligned = starts.len() == raw.shapes.len();
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for (i, r) in raw.shapes.into_iter().enumerate() {
        let line = if aligned { starts[i].line } else { 1 };
        let until = if aligned {
            starts.get(i + 1).map(|e| e.line)
        } else {
            None
        };
        let err = |field: &str, needle: Option<&str>, msg: String| {
            let pos = needle
                .and_then(|n| text.find(n, line, until))
                .or_else(|| text.field(field, line, until))
                .unwrap_or((line, 1));
            SpecError::new(path, msg)
                .at(pos.0, pos.1)
                .item(format!("shape `{}`", r.id))
                .field(field)
        };
        if !is_name(&r.id) {
            errors.push(err(
                "id",
                None,
                "an id is lowercase words, digits and `-`".into(),
            ));
        }
        if !seen.insert(r.id.clone()) {
            errors.push(err("id", None, "the id is used twice".into()));
        }
        for (field, value) in [("title", &r.title), ("summary", &r.summary)] {
            if value.trim().is_empty() {
                errors.push(err(field, None, format!("the {field} is empty")));
            }
        }
        if r.sources.iter().all(|s| s.trim().is_empty()) {
            errors.push(err(
                "sources",
                None,
                "a shape names its public source (a project and its issue or pull request)".into(),
            ));
        }
        for t in &r.tests {
            if spec.test(t).is_none() {
                errors.push(err(
                    "tests",
                    Some(t),
                    format!("`{t}` is not a test of the spec"),
                ));
            }
        }
        if r.tests.is_empty() && r.programs.is_empty() {
            errors.push(err(
                "tests",
                None,
                "a shape names the tests or programs that cover it".into(),
            ));
        }
        out.push(Shape {
            id: r.id,
            title: r.title,
            sources: r.sources,
            summary: r.summary,
            tests: r.tests,
            programs: r.programs,
            line,
        });
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(SpecErrors(errors))
    }
}

/// `spec_dir/shapes.yaml` read and checked against `spec`; an empty list
/// when the file does not exist.
pub fn load_shapes_file(spec_dir: &Path, spec: &Spec) -> Result<Vec<Shape>, SpecErrors> {
    let path = spec_dir.join(SHAPES_FILE);
    if !path.is_file() {
        return Ok(Vec::new());
    }
    let src = std::fs::read_to_string(&path)
        .map_err(|e| SpecErrors(vec![SpecError::new(&path, format!("cannot read: {e}"))]))?;
    load_shapes(&path, &src, spec)
}
