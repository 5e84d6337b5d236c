//! Checks across items and files: unique ids and names, former names
//! (`formerly`) no test's name and claimed once, every listed test defined
//! and every test listed, quotes verbatim in their seeds.

use std::cell::Cell;
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::rc::Rc;

use super::{Cx, Errors, ItemErr, Located};
use crate::locate::Text;
use crate::seeds::Seeds;

impl Cx {
    pub(super) fn cross_checks(&mut self, files: &[(PathBuf, String)], seeds: Option<&Seeds>) {
        let texts: Vec<Text> = files.iter().map(|(_, t)| Text::new(t)).collect();
        let err_at = |errors: &Errors,
                      at: &Located,
                      item: String,
                      field: &str,
                      needle: Option<&str>,
                      msg: String| {
            let file = &files[at.file].0;
            ItemErr {
                file,
                text: &texts[at.file],
                item,
                from: at.from,
                until: at.until,
                quiet: Rc::new(Cell::new(errors.full_for(file))),
            }
            .at(field, needle, msg)
        };
        let mut ids: HashMap<&str, usize> = HashMap::new();
        for (i, r) in self.rules.iter().enumerate() {
            if let Some(&first) = ids.get(r.id.as_str()) {
                let prev = &self.rules[first].origin;
                self.errors.push(err_at(
                    &self.errors,
                    &self.rule_at[i],
                    format!("rule `{}`", r.id),
                    "id",
                    None,
                    format!("duplicate id: also defined at {prev}"),
                ));
            } else {
                ids.insert(&r.id, i);
            }
        }
        let mut names: HashMap<&str, usize> = HashMap::new();
        for (i, t) in self.tests.iter().enumerate() {
            if let Some(&first) = names.get(t.name.as_str()) {
                let prev = &self.tests[first].origin;
                self.errors.push(err_at(
                    &self.errors,
                    &self.test_at[i],
                    format!("test `{}`", t.name),
                    "name",
                    None,
                    format!("duplicate test name: also defined at {prev}"),
                ));
            } else {
                names.insert(&t.name, i);
            }
        }
        // A former name belongs to one test and is no test's name now, so
        // that a result recorded under it has one test to go to.
        let mut former: HashMap<&str, usize> = HashMap::new();
        for (i, t) in self.tests.iter().enumerate() {
            for f in &t.formerly {
                let clash = if f == &t.name {
                    Some(format!("`{f}` is the test's own name, not a former one"))
                } else if let Some(&live) = names.get(f.as_str()) {
                    Some(format!(
                        "`{f}` is the name of a test now (at {}): a former name is no test's name",
                        self.tests[live].origin
                    ))
                } else if let Some(&first) = former.get(f.as_str()).filter(|&&j| j != i) {
                    Some(format!(
                        "`{f}` is also a former name of `{}` (at {}): results recorded under it would belong to two tests",
                        self.tests[first].name, self.tests[first].origin
                    ))
                } else {
                    former.insert(f, i);
                    None
                };
                if let Some(msg) = clash {
                    self.errors.push(err_at(
                        &self.errors,
                        &self.test_at[i],
                        format!("test `{}`", t.name),
                        "formerly",
                        None,
                        msg,
                    ));
                }
            }
        }
        let mut referenced = BTreeSet::new();
        for (i, r) in self.rules.iter().enumerate() {
            for name in &r.tests {
                referenced.insert(name.as_str());
                if !names.contains_key(name.as_str()) {
                    let msg = match former.get(name.as_str()) {
                        Some(&now) => format!(
                            "test `{name}` is now called `{}` (its `formerly` lists `{name}`)",
                            self.tests[now].name
                        ),
                        None => format!("test `{name}` is not defined in any spec file"),
                    };
                    self.errors.push(err_at(
                        &self.errors,
                        &self.rule_at[i],
                        format!("rule `{}`", r.id),
                        "tests",
                        Some(name),
                        msg,
                    ));
                }
            }
            if let Some(seeds) = seeds {
                if !seeds.has(&r.source.seed) {
                    let known: Vec<&str> = seeds.names().collect();
                    self.errors.push(err_at(
                        &self.errors,
                        &self.rule_at[i],
                        format!("rule `{}`", r.id),
                        "source.seed",
                        Some(&r.source.seed),
                        format!(
                            "no seed `{}` in {} (have: {})",
                            r.source.seed,
                            seeds.dir.display(),
                            known.join(", ")
                        ),
                    ));
                } else if !seeds.contains(&r.source.seed, &r.quote) {
                    let prefix = seeds.matching_prefix(&r.source.seed, &r.quote);
                    self.errors.push(err_at(&self.errors, &self.rule_at[i], format!("rule `{}`", r.id), "quote", None, format!("the quote is not verbatim in {}: it matches up to \"{}\" and then differs", r.source.seed, prefix)));
                } else {
                    let title = r
                        .source
                        .section
                        .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == ' ');
                    if !seeds.contains(&r.source.seed, title) {
                        self.errors.push(err_at(
                            &self.errors,
                            &self.rule_at[i],
                            format!("rule `{}`", r.id),
                            "source.section",
                            None,
                            format!(
                                "section title `{title}` does not occur in {}",
                                r.source.seed
                            ),
                        ));
                    }
                }
            }
        }
        for (i, r) in self.rules.iter().enumerate() {
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
                    self.errors.push(err_at(
                        &self.errors,
                        &self.rule_at[i],
                        format!("rule `{}`", r.id),
                        "reason",
                        None,
                        msg,
                    ));
                }
            }
        }
        for (i, t) in self.tests.iter().enumerate() {
            if !referenced.contains(t.name.as_str()) {
                self.errors.push(err_at(
                    &self.errors,
                    &self.test_at[i],
                    format!("test `{}`", t.name),
                    "name",
                    None,
                    "no rule lists this test in its `tests`".into(),
                ));
            }
        }
    }
}
