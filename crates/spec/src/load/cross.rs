//! Checks across items and files: unique ids and names, former names
//! (`formerly`) no test's name and claimed once, every listed test defined
//! and every test listed, quotes verbatim in their seeds.

use std::cell::Cell;
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::rc::Rc;

use super::{Cx, Errors, ItemErr, Located};
use crate::ast::{Rule, SourceKind, Test};
use crate::locate::Text;
use crate::seeds::Seeds;

/// Errors about items, placed in their files: the files, their texts and
/// the error list.
struct Out<'a> {
    files: &'a [(PathBuf, String)],
    texts: Vec<Text<'a>>,
    errors: &'a mut Errors,
}

impl Out<'_> {
    /// An error about `item` at `field` (at `needle` in it, if given).
    fn push(&mut self, at: &Located, item: String, field: &str, needle: Option<&str>, msg: String) {
        let file = &self.files[at.file].0;
        let e = ItemErr {
            file,
            text: &self.texts[at.file],
            item,
            from: at.from,
            until: at.until,
            quiet: Rc::new(Cell::new(self.errors.full_for(file))),
        }
        .at(field, needle, msg);
        self.errors.push(e);
    }
}

impl Cx {
    pub(super) fn cross_checks(&mut self, files: &[(PathBuf, String)], quoted: Quoted) {
        let Cx {
            rules,
            tests,
            rule_at,
            test_at,
            errors,
        } = self;
        let mut out = Out {
            files,
            texts: files.iter().map(|(_, t)| Text::new(t)).collect(),
            errors,
        };
        let ids = unique_ids(&mut out, rules, rule_at);
        let names = unique_names(&mut out, tests, test_at);
        let former = former_names(&mut out, tests, test_at, &names);
        let referenced = listed_tests(&mut out, (rules, rule_at), tests, (&names, &former), quoted);
        reasons_name_rules(&mut out, rules, rule_at, &ids);
        every_test_listed(&mut out, tests, test_at, &referenced);
    }
}

/// Rule ids are unique: the map from id to the first rule with it.
fn unique_ids<'r>(
    out: &mut Out,
    rules: &'r [Rule],
    rule_at: &[Located],
) -> HashMap<&'r str, usize> {
    let mut ids: HashMap<&str, usize> = HashMap::new();
    for (i, r) in rules.iter().enumerate() {
        if let Some(&first) = ids.get(r.id.as_str()) {
            let prev = &rules[first].origin;
            out.push(
                &rule_at[i],
                format!("rule `{}`", r.id),
                "id",
                None,
                format!("duplicate id: also defined at {prev}"),
            );
        } else {
            ids.insert(&r.id, i);
        }
    }
    ids
}

/// Test names are unique: the map from name to the first test with it.
fn unique_names<'t>(
    out: &mut Out,
    tests: &'t [Test],
    test_at: &[Located],
) -> HashMap<&'t str, usize> {
    let mut names: HashMap<&str, usize> = HashMap::new();
    for (i, t) in tests.iter().enumerate() {
        if let Some(&first) = names.get(t.name.as_str()) {
            let prev = &tests[first].origin;
            out.push(
                &test_at[i],
                format!("test `{}`", t.name),
                "name",
                None,
                format!("duplicate test name: also defined at {prev}"),
            );
        } else {
            names.insert(&t.name, i);
        }
    }
    names
}

/// A former name belongs to one test and is no test's name now, so that a
/// result recorded under it has one test to go to: the map from former
/// name to its test.
fn former_names<'t>(
    out: &mut Out,
    tests: &'t [Test],
    test_at: &[Located],
    names: &HashMap<&str, usize>,
) -> HashMap<&'t str, usize> {
    let mut former: HashMap<&str, usize> = HashMap::new();
    for (i, t) in tests.iter().enumerate() {
        for f in &t.formerly {
            let clash = if f == &t.name {
                Some(format!("`{f}` is the test's own name, not a former one"))
            } else if let Some(&live) = names.get(f.as_str()) {
                Some(format!(
                    "`{f}` is the name of a test now (at {}): a former name is no test's name",
                    tests[live].origin
                ))
            } else if let Some(&first) = former.get(f.as_str()).filter(|&&j| j != i) {
                Some(format!(
                    "`{f}` is also a former name of `{}` (at {}): results recorded under it would belong to two tests",
                    tests[first].name, tests[first].origin
                ))
            } else {
                former.insert(f, i);
                None
            };
            if let Some(msg) = clash {
                out.push(
                    &test_at[i],
                    format!("test `{}`", t.name),
                    "formerly",
                    None,
                    msg,
                );
            }
        }
    }
    former
}

/// Every test a rule lists is defined (or renamed: then its new name is
/// said), and the rule's source checked against the seeds: the tests listed.
fn listed_tests<'r>(
    out: &mut Out,
    (rules, rule_at): (&'r [Rule], &[Located]),
    tests: &[Test],
    (names, former): (&HashMap<&str, usize>, &HashMap<&str, usize>),
    quoted: Quoted,
) -> BTreeSet<&'r str> {
    let mut referenced = BTreeSet::new();
    for (i, r) in rules.iter().enumerate() {
        for name in &r.tests {
            referenced.insert(name.as_str());
            if !names.contains_key(name.as_str()) {
                let msg = match former.get(name.as_str()) {
                    Some(&now) => format!(
                        "test `{name}` is now called `{}` (its `formerly` lists `{name}`)",
                        tests[now].name
                    ),
                    None => format!("test `{name}` is not defined in any spec file"),
                };
                out.push(
                    &rule_at[i],
                    format!("rule `{}`", r.id),
                    "tests",
                    Some(name),
                    msg,
                );
            }
        }
        let (field, docs) = match r.source.kind {
            SourceKind::Seed => ("source.seed", quoted.seeds),
            SourceKind::Document => ("source.document", quoted.documents),
        };
        if let Some(docs) = docs {
            check_source(out, r, (&rule_at[i], field), docs);
        }
    }
    referenced
}

/// The texts rules quote: the seeds, and the other documents
/// (`spec/documents/`), each when at hand.
#[derive(Clone, Copy)]
pub(super) struct Quoted<'a> {
    pub seeds: Option<&'a Seeds>,
    pub documents: Option<&'a Seeds>,
}

/// A rule's seed or document exists, its quote is verbatim in it, and so
/// is its section's title.
fn check_source(out: &mut Out, r: &Rule, (at, field): (&Located, &str), seeds: &Seeds) {
    if !seeds.has(&r.source.file) {
        let known: Vec<&str> = seeds.names().collect();
        out.push(
            at,
            format!("rule `{}`", r.id),
            field,
            Some(&r.source.file),
            format!(
                "no file `{}` in {} (have: {})",
                r.source.file,
                seeds.dir.display(),
                known.join(", ")
            ),
        );
    } else if !seeds.contains(&r.source.file, &r.quote) {
        let prefix = seeds.matching_prefix(&r.source.file, &r.quote);
        out.push(
            at,
            format!("rule `{}`", r.id),
            "quote",
            None,
            format!(
                "the quote is not verbatim in {}: it matches up to \"{}\" and then differs",
                r.source.file, prefix
            ),
        );
    } else {
        let title = r
            .source
            .section
            .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == ' ');
        if !seeds.contains(&r.source.file, title) {
            out.push(
                at,
                format!("rule `{}`", r.id),
                "source.section",
                None,
                format!(
                    "section title `{title}` does not occur in {}",
                    r.source.file
                ),
            );
        }
    }
}

/// A rule whose untested status names rules names them by id, and only
/// rules that exist.
fn reasons_name_rules(
    out: &mut Out,
    rules: &[Rule],
    rule_at: &[Located],
    ids: &HashMap<&str, usize>,
) {
    for (i, r) in rules.iter().enumerate() {
        if let Some(u) = r.untested.as_ref().filter(|u| u.status.names_rules()) {
            let named = crate::sentences::rule_ids_in(&u.reason);
            let msg = match named.iter().find(|id| !ids.contains_key(id.as_str())) {
                Some(id) => Some(format!("the reason names `{id}`, which is no rule")),
                None if named.is_empty() => Some(format!(
                    "a `{}` names the rules it concerns by id in its reason",
                    u.status.as_str()
                )),
                None => None,
            };
            if let Some(msg) = msg {
                out.push(&rule_at[i], format!("rule `{}`", r.id), "reason", None, msg);
            }
        }
    }
}

/// Every test is listed by a rule.
fn every_test_listed(
    out: &mut Out,
    tests: &[Test],
    test_at: &[Located],
    referenced: &BTreeSet<&str>,
) {
    for (i, t) in tests.iter().enumerate() {
        if !referenced.contains(t.name.as_str()) {
            out.push(
                &test_at[i],
                format!("test `{}`", t.name),
                "name",
                None,
                "no rule lists this test in its `tests`".into(),
            );
        }
    }
}
