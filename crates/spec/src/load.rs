//! Loading: YAML files → raw shapes → validated [`Spec`].
//!
//! Every problem becomes a [`SpecError`] naming the file, the rule or test,
//! the field, and the line and column; loading collects all of them and
//! never panics on any input. This file reads the files and splits them
//! into items; one submodule loads each kind of item (`rule`, `test` and the
//! test kinds `litmus`, `compile`, `runtime`, `host`), and `cross` checks
//! across items and files.

use std::cell::Cell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::ast::*;
use crate::error::{SpecError, SpecErrors};
use crate::limits::{MAX_ERRORS_PER_FILE, MAX_FILE_BYTES};
use crate::locate::Text;
use crate::raw::RawFile;
use crate::scan::{self, ItemKind, Scan};
use crate::seeds::Seeds;

mod blocks;
mod compile;
mod cross;
mod host;
mod litmus;
mod rule;
mod runtime;
mod source_file;
mod test;
mod tiles;

pub use crate::limits::MAX_THREADS;

/// Every `*.yaml` file under `dir`, recursively, sorted.
pub fn spec_files(dir: &Path) -> Result<Vec<PathBuf>, SpecErrors> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let p = entry?.path();
            if p.is_dir() {
                walk(&p, out)?;
            } else if p.extension().is_some_and(|e| e == "yaml" || e == "yml")
                && !p.ends_with(crate::sentences::LIST_FILE)
                && !p.ends_with(crate::shapes::SHAPES_FILE)
            {
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

/// Reads one spec file, refusing one over [`MAX_FILE_BYTES`] before reading
/// it whole, and text that is not UTF-8 at the line of the first bad byte.
fn read_spec_file(path: &Path) -> Result<String, Box<SpecError>> {
    use std::io::Read;
    let cannot = |e: std::io::Error| Box::new(SpecError::new(path, format!("cannot read: {e}")));
    let file = std::fs::File::open(path).map_err(cannot)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() > MAX_FILE_BYTES {
        return Err(Box::new(too_big(path, &bytes)));
    }
    String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = good.len() - good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1) + 1;
        Box::new(SpecError::new(path, "the file is not UTF-8 text").at(line, column))
    })
}

/// The error for a file over [`MAX_FILE_BYTES`], located where the file
/// passes the limit.
fn too_big(path: &Path, bytes: &[u8]) -> SpecError {
    let within = &bytes[..MAX_FILE_BYTES.min(bytes.len())];
    let line = within.iter().filter(|&&b| b == b'\n').count() + 1;
    let column = within.len()
        - within
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1)
        + 1;
    SpecError::new(
        path,
        format!(
            "the file is larger than {} KiB, the most a spec file may hold (it passes the limit here)",
            MAX_FILE_BYTES >> 10
        ),
    )
    .at(line, column)
}

/// Loads and validates every spec file under `dir`. With `seeds`, each rule's
/// seed must exist and its quote must occur in it verbatim. A directory
/// without spec files is an error.
pub fn load_dir(dir: &Path, seeds: Option<&Seeds>) -> Result<Spec, SpecErrors> {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    let paths = spec_files(dir)?;
    if paths.is_empty() {
        return Err(SpecErrors(vec![SpecError::new(
            dir,
            "no spec files (*.yaml) in this directory",
        )]));
    }
    for path in paths {
        match read_spec_file(&path) {
            Ok(text) => files.push((path, text)),
            Err(e) => errors.push(*e),
        }
    }
    let documents = match load_documents(dir) {
        Ok(d) => d,
        Err(e) => {
            errors.push(*e);
            None
        }
    };
    match load_checked(&files, seeds, documents.as_ref()) {
        Ok(spec) if errors.is_empty() => Ok(spec),
        Ok(_) => Err(SpecErrors(errors)),
        Err(SpecErrors(mut more)) => {
            errors.append(&mut more);
            Err(SpecErrors(errors))
        }
    }
}

/// The documents other than the seeds that rules quote,
/// `<spec dir>/documents/*.txt` ([`crate::documents`]), if the folder exists.
fn load_documents(dir: &Path) -> Result<Option<Seeds>, Box<SpecError>> {
    let docs = dir.join(crate::documents::DIR);
    if !docs.is_dir() {
        return Ok(None);
    }
    Seeds::load(&docs).map(Some).map_err(|e| {
        Box::new(SpecError::new(
            &docs,
            format!("cannot read the documents: {e}"),
        ))
    })
}

/// Loads and validates spec texts given as (path, contents). With `seeds`,
/// a rule quoting a seed is checked against it; a rule quoting another
/// document is checked only by [`load_dir`], which reads `documents/`.
pub fn load_sources(
    files: &[(PathBuf, String)],
    seeds: Option<&Seeds>,
) -> Result<Spec, SpecErrors> {
    load_checked(files, seeds, None)
}

fn load_checked(
    files: &[(PathBuf, String)],
    seeds: Option<&Seeds>,
    documents: Option<&Seeds>,
) -> Result<Spec, SpecErrors> {
    let mut cx = Cx::default();
    for (i, (path, text)) in files.iter().enumerate() {
        cx.file(i, path, text);
    }
    cx.cross_checks(files, cross::Quoted { seeds, documents });
    if cx.errors.is_empty() {
        Ok(Spec {
            rules: cx.rules,
            tests: cx.tests,
        })
    } else {
        Err(SpecErrors(cx.errors.finish()))
    }
}

/// Where each loaded rule and test came from, for located cross-file errors:
/// the index of its file among those loaded (the text is not copied).
struct Located {
    file: usize,
    /// First line of this item and of the next item of the file (if any).
    from: usize,
    until: Option<usize>,
}

/// The errors found so far, at most [`MAX_ERRORS_PER_FILE`] kept per file;
/// the count covers every error, kept or not.
#[derive(Default)]
struct Errors {
    kept: Vec<SpecError>,
    count: usize,
    per_file: HashMap<PathBuf, usize>,
    /// Set once the current file's list is full: positions are no longer
    /// searched for errors that will not be shown.
    full: Rc<Cell<bool>>,
}

impl Errors {
    fn push(&mut self, e: SpecError) {
        self.count += 1;
        let n = self.per_file.entry(e.file.clone()).or_default();
        *n += 1;
        if *n <= MAX_ERRORS_PER_FILE {
            self.kept.push(e);
        }
        if *n >= MAX_ERRORS_PER_FILE {
            self.full.set(true);
        }
    }

    /// Whether `file`'s list is full.
    fn full_for(&self, file: &Path) -> bool {
        self.per_file
            .get(file)
            .is_some_and(|&n| n >= MAX_ERRORS_PER_FILE)
    }

    /// Every error pushed, kept or not.
    fn len(&self) -> usize {
        self.count
    }

    fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The kept errors, and for each file with more, how many were left out.
    fn finish(self) -> Vec<SpecError> {
        let mut out = self.kept;
        let mut over: Vec<(PathBuf, usize)> = self
            .per_file
            .into_iter()
            .filter(|(_, n)| *n > MAX_ERRORS_PER_FILE)
            .collect();
        over.sort();
        for (file, n) in over {
            out.push(SpecError::new(
                file,
                format!(
                    "{} more errors in this file not shown (the first {MAX_ERRORS_PER_FILE} are)",
                    n - MAX_ERRORS_PER_FILE
                ),
            ));
        }
        out
    }
}

#[derive(Default)]
struct Cx {
    rules: Vec<Rule>,
    tests: Vec<Test>,
    rule_at: Vec<Located>,
    test_at: Vec<Located>,
    errors: Errors,
}

/// Builds errors about one item of one file.
struct ItemErr<'a> {
    file: &'a Path,
    text: &'a Text<'a>,
    item: String,
    from: usize,
    until: Option<usize>,
    /// The file's error list is full: skip the search for a position.
    quiet: Rc<Cell<bool>>,
}

impl ItemErr<'_> {
    /// An error at `field`, positioned at the first occurrence of `needle`
    /// (or of the field's key) inside the item.
    fn at(&self, field: &str, needle: Option<&str>, msg: impl Into<String>) -> SpecError {
        if self.quiet.get() {
            return SpecError::new(self.file, msg).at(self.from, 1);
        }
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

/// A YAML error as serde reports it, split into the field (serde's path
/// below the item, plus the unknown or missing field it names) and the
/// message.
fn yaml_error(path: &Path, e: &serde_yaml::Error, scan: &Scan, text: &Text) -> SpecError {
    let full = e.to_string();
    let msg = match full.rfind(" at line ") {
        Some(i) => &full[..i],
        None => &full,
    };
    let (yaml_path, msg) = match msg.split_once(": ") {
        Some((p, rest)) if !p.contains(' ') => (Some(p), rest),
        _ => (None, msg),
    };
    // `rules[3].source` → `source`: the item is named on its own.
    let below_item = yaml_path.and_then(|p| {
        let rest = p.split_once(']').map_or("", |(_, r)| r);
        let rest = rest.strip_prefix('.').unwrap_or(rest);
        (!rest.is_empty()).then_some(rest)
    });
    let named = ["unknown field `", "missing field `", "duplicate field `"]
        .iter()
        .find_map(|pre| msg.split(pre).nth(1).and_then(|r| r.split('`').next()));
    let field = match (below_item, named) {
        (Some(p), Some(f)) => Some(format!("{p}.{f}")),
        (Some(p), None) => Some(p.to_string()),
        (None, Some(f)) => Some(f.to_string()),
        (None, None) => yaml_path.filter(|p| *p != ".").map(str::to_string),
    };
    let mut err = SpecError::new(path, msg);
    // A tile's words (`x[0..8]`) in a flow list (`[store x[0..8] 1]`) end
    // the list early: say how to write them.
    if msg.contains("while parsing a flow") {
        err.message.push_str(
            " (an operand of a tile, `x[0..8]`, inside a flow list `[...]` is quoted, \
             \"store x[0..8] 1\", or the list is written one item a line: `- store x[0..8] 1`)",
        );
    }
    if let Some(f) = field {
        err = err.field(f);
    }
    let pos = match e.location() {
        Some(loc) => Some((loc.line(), loc.column())),
        None if msg.contains("more than one document") => scan
            .second_document
            .or(scan.first_document_end)
            .or_else(|| {
                // The first document marker after the first line.
                (2..)
                    .map_while(|n| text.line(n).map(|l| (n, l)))
                    .find(|(_, l)| l.starts_with("---") || l.starts_with("..."))
                    .map(|(n, _)| (n, 1))
            }),
        None if msg.contains("repetition limit exceeded") => scan.first_alias,
        None => None,
    };
    if let Some((line, column)) = pos {
        err = err.at(line, column);
        if err.field.is_none()
            && let Some(k) = key_at_line(text, line)
        {
            err = err.field(k);
        }
        if let Some(item) = scan.items.iter().rev().find(|i| i.line <= line) {
            err = err.item(item_label(item));
        }
    }
    if msg.contains("repetition limit exceeded") {
        err.message = "repetition limit exceeded: aliases repeat their values too many times (the first alias is here)".into();
    }
    err
}

/// The key a line starts with (`    threads:`, `- name: x` give `threads`,
/// `name`): the field of a syntax error found on that line.
fn key_at_line(text: &Text, line: usize) -> Option<String> {
    let l = text.line(line)?.trim_start();
    let l = l.strip_prefix("- ").unwrap_or(l).trim_start();
    let (key, _) = l.split_once(':')?;
    let ok = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    ok.then(|| key.to_string())
}

fn item_label(item: &scan::Item) -> String {
    let kind = match item.kind {
        ItemKind::Rule => "rule",
        ItemKind::Test => "test",
    };
    match &item.key {
        Some(k) => format!("{kind} `{k}`"),
        None => format!("the {kind} at line {}", item.line),
    }
}

impl Cx {
    fn file(&mut self, index: usize, path: &Path, src: &str) {
        self.errors.full.set(false);
        if src.len() > MAX_FILE_BYTES {
            self.errors.push(too_big(path, src.as_bytes()));
            return;
        }
        let text = Text::new(src);
        let scan = match scan::scan(src) {
            Ok(s) => s,
            Err(r) => {
                let mut e = SpecError::new(path, r.message).at(r.pos.0, r.pos.1);
                if let Some(k) = key_at_line(&text, r.pos.0) {
                    e = e.field(k);
                }
                self.errors.push(e);
                return;
            }
        };
        let raw: RawFile = match serde_yaml::from_str(src) {
            Ok(r) => r,
            Err(e) => {
                self.errors.push(yaml_error(path, &e, &scan, &text));
                return;
            }
        };
        let mut starts: Vec<usize> = scan.items.iter().map(|i| i.line).collect();
        starts.sort();
        let lines = |kind: ItemKind| -> Vec<usize> {
            scan.items
                .iter()
                .filter(|i| i.kind == kind)
                .map(|i| i.line)
                .collect()
        };
        let span = |lines: &[usize], n: usize, i: usize| -> (usize, Option<usize>) {
            match lines.get(i) {
                Some(&l) if lines.len() == n => (l, starts.iter().copied().find(|&s| s > l)),
                _ => (1, None),
            }
        };
        let rule_lines = lines(ItemKind::Rule);
        let n = raw.rules.len();
        for (i, r) in raw.rules.into_iter().enumerate() {
            let (from, until) = span(&rule_lines, n, i);
            let ie = ItemErr {
                file: path,
                text: &text,
                item: format!("rule `{}`", r.id),
                from,
                until,
                quiet: self.errors.full.clone(),
            };
            if let Some(rule) = self.rule(r, &ie) {
                self.rules.push(rule);
                self.rule_at.push(Located {
                    file: index,
                    from,
                    until,
                });
            }
        }
        let test_lines = lines(ItemKind::Test);
        let n = raw.tests.len();
        for (i, t) in raw.tests.into_iter().enumerate() {
            let (from, until) = span(&test_lines, n, i);
            let ie = ItemErr {
                file: path,
                text: &text,
                item: format!("test `{}`", t.name),
                from,
                until,
                quiet: self.errors.full.clone(),
            };
            if let Some(test) = self.test(t, &ie) {
                self.tests.push(test);
                self.test_at.push(Located {
                    file: index,
                    from,
                    until,
                });
            }
        }
    }
}
