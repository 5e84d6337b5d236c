//! Loading: YAML files → raw shapes → validated [`Spec`].
//!
//! Every problem becomes a [`SpecError`] naming the file, the rule or test,
//! the field, and the line and column; loading collects all of them and
//! never panics on any input. This file reads the files and splits them
//! into items; one submodule loads each kind of item (`rule`, `test` and the
//! test kinds `litmus`, `compile`, `runtime`, `host`), and `cross` checks
//! across items and files.

use std::path::{Path, PathBuf};

use crate::ast::*;
use crate::error::{SpecError, SpecErrors};
use crate::locate::{Entry, Text, enclosing};
use crate::raw::RawFile;
use crate::seeds::Seeds;

mod compile;
mod cross;
mod host;
mod litmus;
mod rule;
mod runtime;
mod test;

/// loom runs at most 4 spawned threads besides the main one; every modeled
/// GPU thread is a loom thread.
pub const MAX_THREADS: usize = 4;

/// Every `*.yaml` file under `dir`, recursively, sorted.
pub fn spec_files(dir: &Path) -> Result<Vec<PathBuf>, SpecErrors> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let p = entry?.path();
            if p.is_dir() {
                walk(&p, out)?;
            } else if p.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                out.push(p);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(dir, &mut out).map_err(|e| {
        SpecErrors(vec![SpecError::new(
            dir,
            format!("cannot read the spec directory: {e}"),
        )])
    })?;
    out.sort();
    Ok(out)
}

/// Loads and validates every spec file under `dir`. With `seeds`, each rule's
/// seed must exist and its quote must occur in it verbatim.
pub fn load_dir(dir: &Path, seeds: Option<&Seeds>) -> Result<Spec, SpecErrors> {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for path in spec_files(dir)? {
        match std::fs::read_to_string(&path) {
            Ok(text) => files.push((path, text)),
            Err(e) => errors.push(SpecError::new(&path, format!("cannot read: {e}"))),
        }
    }
    match load_sources(&files, seeds) {
        Ok(spec) if errors.is_empty() => Ok(spec),
        Ok(_) => Err(SpecErrors(errors)),
        Err(SpecErrors(mut more)) => {
            errors.append(&mut more);
            Err(SpecErrors(errors))
        }
    }
}

/// Loads and validates spec texts given as (path, contents).
pub fn load_sources(
    files: &[(PathBuf, String)],
    seeds: Option<&Seeds>,
) -> Result<Spec, SpecErrors> {
    let mut cx = Cx::default();
    for (path, text) in files {
        cx.file(path, text);
    }
    cx.cross_checks(seeds);
    if cx.errors.is_empty() {
        Ok(Spec {
            rules: cx.rules,
            tests: cx.tests,
        })
    } else {
        Err(SpecErrors(cx.errors))
    }
}

/// Where each loaded rule and test came from, for located cross-file errors.
struct Located {
    file: PathBuf,
    text: String,
    /// First line of this item and of the next item of the file (if any).
    from: usize,
    until: Option<usize>,
}

#[derive(Default)]
struct Cx {
    rules: Vec<Rule>,
    tests: Vec<Test>,
    rule_at: Vec<Located>,
    test_at: Vec<Located>,
    errors: Vec<SpecError>,
}

/// Builds errors about one item of one file.
struct ItemErr<'a> {
    file: &'a Path,
    text: &'a Text<'a>,
    item: String,
    from: usize,
    until: Option<usize>,
}

impl ItemErr<'_> {
    /// An error at `field`, positioned at the first occurrence of `needle`
    /// (or of the field's key) inside the item.
    fn at(&self, field: &str, needle: Option<&str>, msg: impl Into<String>) -> SpecError {
        let key = field.rsplit('.').next().unwrap_or(field);
        let key = key.split('[').next().unwrap_or(key);
        let pos = needle
            .and_then(|n| self.text.find(n, self.from, self.until))
            .or_else(|| self.text.field(key, self.from, self.until))
            .unwrap_or((self.from, 1));
        SpecError::new(self.file, msg)
            .at(pos.0, pos.1)
            .item(self.item.clone())
            .field(field)
    }
}

impl Cx {
    fn file(&mut self, path: &Path, src: &str) {
        let text = Text::new(src);
        let rule_entries = text.entries("id");
        let test_entries = text.entries("name");
        let raw: RawFile = match serde_yaml::from_str(src) {
            Ok(r) => r,
            Err(e) => {
                let full = e.to_string();
                let msg = match full.rfind(" at line ") {
                    Some(i) => &full[..i],
                    None => &full,
                };
                // The YAML path (`rules[0].source: ...`) repeats what the
                // item and the position already say.
                let msg = match msg.split_once(": ") {
                    Some((yaml_path, rest)) if !yaml_path.contains(' ') => rest,
                    _ => msg,
                };
                let mut err = SpecError::new(path, msg);
                if let Some(f) = msg
                    .split("unknown field `")
                    .nth(1)
                    .and_then(|r| r.split('`').next())
                {
                    err = err.field(f);
                }
                if let Some(loc) = e.location() {
                    err = err.at(loc.line(), loc.column());
                    let mut all: Vec<(Entry, String)> = rule_entries
                        .iter()
                        .map(|e| (e.clone(), format!("rule `{}`", e.value)))
                        .chain(
                            test_entries
                                .iter()
                                .map(|e| (e.clone(), format!("test `{}`", e.value))),
                        )
                        .collect();
                    all.sort_by_key(|(e, _)| e.line);
                    if let Some((_, item)) = enclosing(&all, loc.line()) {
                        err = err.item(item.clone());
                    }
                }
                self.errors.push(err);
                return;
            }
        };
        let mut starts: Vec<usize> = rule_entries
            .iter()
            .chain(test_entries.iter())
            .map(|e| e.line)
            .collect();
        starts.sort();
        let span = |entries: &[Entry], i: usize| -> (usize, Option<usize>) {
            match entries.get(i) {
                Some(e) if entries.len() > i => {
                    (e.line, starts.iter().copied().find(|&l| l > e.line))
                }
                _ => (1, None),
            }
        };
        let aligned_rules = rule_entries.len() == raw.rules.len();
        for (i, r) in raw.rules.into_iter().enumerate() {
            let (from, until) = if aligned_rules {
                span(&rule_entries, i)
            } else {
                (1, None)
            };
            let ie = ItemErr {
                file: path,
                text: &text,
                item: format!("rule `{}`", r.id),
                from,
                until,
            };
            if let Some(rule) = self.rule(r, &ie) {
                self.rules.push(rule);
                self.rule_at.push(Located {
                    file: path.to_path_buf(),
                    text: src.to_string(),
                    from,
                    until,
                });
            }
        }
        let aligned_tests = test_entries.len() == raw.tests.len();
        for (i, t) in raw.tests.into_iter().enumerate() {
            let (from, until) = if aligned_tests {
                span(&test_entries, i)
            } else {
                (1, None)
            };
            let ie = ItemErr {
                file: path,
                text: &text,
                item: format!("test `{}`", t.name),
                from,
                until,
            };
            if let Some(test) = self.test(t, &ie) {
                self.tests.push(test);
                self.test_at.push(Located {
                    file: path.to_path_buf(),
                    text: src.to_string(),
                    from,
                    until,
                });
            }
        }
    }
}
