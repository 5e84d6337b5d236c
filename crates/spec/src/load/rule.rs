//! A rule: id, profile, quote, tests or an untested status.

use std::collections::BTreeSet;

use super::{Cx, ItemErr};
use crate::ast::*;
use crate::raw::{RawRule, RawSource};

impl Cx {
    pub(super) fn rule(&mut self, r: RawRule, ie: &ItemErr) -> Option<Rule> {
        let before = self.errors.len();
        let profile = Profile::parse(&r.profile);
        if profile.is_none() {
            self.errors.push(ie.at(
                "profile",
                None,
                format!(
                    "unknown profile `{}`: expected cdp2, cdp1 or pdl",
                    r.profile
                ),
            ));
        }
        let parts: Vec<&str> = r.id.split('.').collect();
        let well_formed = parts.len() >= 3
            && parts.iter().all(|p| {
                !p.is_empty()
                    && p.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            });
        if !well_formed {
            self.errors.push(ie.at(
                "id",
                None,
                "an id reads `<profile>.<area>.<claim>`: lowercase words, digits and `-`, separated by dots",
            ));
        } else if let Some(p) = profile
            && parts[0] != p.as_str()
        {
            self.errors.push(ie.at(
                "id",
                None,
                format!("the id starts with `{}` but the profile is `{p}`", parts[0]),
            ));
        }
        if r.quote.trim().is_empty() {
            self.errors.push(ie.at("quote", None, "the quote is empty"));
        }
        let source = self.source(r.source, ie);
        let untested = match (&r.status, &r.reason) {
            (None, None) => None,
            (Some(s), Some(reason)) => match UntestedStatus::parse(s) {
                Some(status) if !reason.trim().is_empty() => Some(Untested {
                    status,
                    reason: reason.clone(),
                }),
                Some(_) => {
                    self.errors
                        .push(ie.at("reason", None, "the reason is empty"));
                    None
                }
                None => {
                    self.errors.push(ie.at(
                        "status",
                        None,
                        format!(
                            "unknown status `{s}`: expected one of {}",
                            UntestedStatus::ALL.map(UntestedStatus::as_str).join(", ")
                        ),
                    ));
                    None
                }
            },
            (Some(_), None) => {
                self.errors
                    .push(ie.at("status", None, "a status needs a `reason`"));
                None
            }
            (None, Some(_)) => {
                self.errors
                    .push(ie.at("reason", None, "a reason goes with a `status`"));
                None
            }
        };
        if r.tests.is_empty() && untested.is_none() && r.status.is_none() {
            self.errors.push(ie.at(
                "tests",
                None,
                "the rule has no test: list its tests, or give a `status` and a `reason`",
            ));
        }
        let mut seen = BTreeSet::new();
        for t in &r.tests {
            if !seen.insert(t) {
                self.errors
                    .push(ie.at("tests", Some(t), format!("test `{t}` is listed twice")));
            }
        }
        if self.errors.len() > before {
            return None;
        }
        Some(Rule {
            id: r.id,
            source: source?,
            quote: r.quote,
            profile: profile?,
            tests: r.tests,
            untested,
            decision: r.decision,
            origin: Origin {
                file: ie.file.to_path_buf(),
                line: ie.from,
            },
        })
    }

    /// A rule's source names exactly one document: a seed or a file of
    /// `spec/documents/`.
    fn source(&mut self, s: RawSource, ie: &ItemErr) -> Option<Source> {
        let (kind, file) = match (s.seed, s.document) {
            (Some(f), None) => (SourceKind::Seed, f),
            (None, Some(f)) => (SourceKind::Document, f),
            (Some(_), Some(_)) => {
                self.errors.push(ie.at(
                    "source",
                    None,
                    "a source names a `seed` or a `document`, not both",
                ));
                return None;
            }
            (None, None) => {
                self.errors.push(ie.at(
                    "source",
                    None,
                    "a source names a `seed` (one of the seed documents) or a `document` (a file of spec/documents/)",
                ));
                return None;
            }
        };
        Some(Source {
            kind,
            file,
            section: s.section,
        })
    }
}
