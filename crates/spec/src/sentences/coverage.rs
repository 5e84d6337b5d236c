//! Where each sentence of the seeds stands (quoted by a rule, not a claim
//! by its form or as listed, or checkable without a rule), and the report
//! of `spec coverage --sentences`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{ListedNonClaim, NotAClaim, Sentence, split};
use crate::ast::Rule;
use crate::error::{SpecError, SpecErrors};
use crate::seeds::normalize;

/// Where a sentence stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// Quoted by these rules.
    Covered(Vec<String>),
    /// Not a claim by its form.
    Form(NotAClaim),
    /// Not a claim, as listed (the entry's line in the list file).
    Listed(NotAClaim, usize),
    /// Checkable, and no rule quotes it.
    Uncovered,
}

/// A seed's sentences and where each stands.
#[derive(Debug, Clone)]
pub struct SeedSentences {
    pub seed: String,
    pub sentences: Vec<(Sentence, Standing)>,
}

impl SeedSentences {
    pub fn total(&self) -> usize {
        self.sentences.len()
    }

    pub fn covered(&self) -> usize {
        self.count(|s| matches!(s, Standing::Covered(_)))
    }

    pub fn uncovered(&self) -> usize {
        self.count(|s| matches!(s, Standing::Uncovered))
    }

    pub fn by_form(&self) -> usize {
        self.count(|s| matches!(s, Standing::Form(_)))
    }

    pub fn listed(&self) -> usize {
        self.count(|s| matches!(s, Standing::Listed(..)))
    }

    /// Covered and uncovered: the sentences that state something checkable.
    pub fn checkable(&self) -> usize {
        self.covered() + self.uncovered()
    }

    fn count(&self, f: impl Fn(&Standing) -> bool) -> usize {
        self.sentences.iter().filter(|(_, s)| f(s)).count()
    }
}

/// The sentence coverage of every seed.
#[derive(Debug, Clone)]
pub struct SentenceCoverage {
    pub seeds: Vec<SeedSentences>,
}

impl SentenceCoverage {
    pub fn checkable(&self) -> usize {
        self.seeds.iter().map(SeedSentences::checkable).sum()
    }

    pub fn uncovered(&self) -> usize {
        self.seeds.iter().map(SeedSentences::uncovered).sum()
    }

    /// Uncovered over checkable, in percent (0 when nothing is checkable).
    pub fn uncovered_percent(&self) -> f64 {
        let c = self.checkable();
        if c == 0 {
            0.0
        } else {
            100.0 * self.uncovered() as f64 / c as f64
        }
    }

    /// Counts per seed, the percentage, and every uncovered sentence.
    pub fn text(&self) -> String {
        let mut s = String::from(
            "seed                          sentences  by-form  listed  checkable  covered  uncovered\n",
        );
        for d in &self.seeds {
            s += &format!(
                "{:<30}{:>9}{:>9}{:>8}{:>11}{:>9}{:>11}\n",
                d.seed,
                d.total(),
                d.by_form(),
                d.listed(),
                d.checkable(),
                d.covered(),
                d.uncovered()
            );
        }
        s += &format!(
            "checkable sentences without a rule: {} of {} ({:.1} %)\n",
            self.uncovered(),
            self.checkable(),
            self.uncovered_percent()
        );
        for d in &self.seeds {
            for (sentence, standing) in &d.sentences {
                if *standing == Standing::Uncovered {
                    s += &format!(
                        "  uncovered {}:{}: {}\n",
                        d.seed,
                        sentence.line,
                        sentence.display()
                    );
                }
            }
        }
        s
    }
}

impl SentenceCoverage {
    /// Every sentence with its standing, one a line: `<seed>:<line>
    /// <standing> <text>`.
    pub fn every_sentence(&self) -> String {
        let mut s = String::new();
        for d in &self.seeds {
            for (sentence, standing) in &d.sentences {
                let st = match standing {
                    Standing::Covered(ids) => format!("rule {}", ids.join(",")),
                    Standing::Form(k) => format!("form {k}"),
                    Standing::Listed(k, line) => format!("listed {k} (line {line})"),
                    Standing::Uncovered => "UNCOVERED".to_string(),
                };
                s += &format!(
                    "{}:{} [{st}] {}\n",
                    d.seed,
                    sentence.line,
                    sentence.display()
                );
            }
        }
        s
    }
}

/// Splits each seed (name, raw text) and finds each sentence's standing.
/// Errors: a listed entry whose seed is unknown, that matches no sentence,
/// or that matches a sentence a rule quotes (located in `list_path`).
pub fn coverage(
    seeds: &[(String, String)],
    rules: &[Rule],
    list: &[ListedNonClaim],
    list_path: &Path,
) -> Result<SentenceCoverage, SpecErrors> {
    let mut quotes: BTreeMap<&str, Vec<(String, &str)>> = BTreeMap::new();
    for r in rules {
        if let Some(seed) = r.source.seed() {
            quotes
                .entry(seed)
                .or_default()
                .push((normalize(&r.quote), r.id.as_str()));
        }
    }
    let mut used = vec![false; list.len()];
    let mut errors = Vec::new();
    let mut out = Vec::new();
    for (seed, text) in seeds {
        let q = quotes.get(seed.as_str()).map(Vec::as_slice).unwrap_or(&[]);
        let mut sentences = Vec::new();
        for s in split(text) {
            let norm = normalize(&s.text);
            let rules: Vec<String> = if norm.is_empty() {
                Vec::new()
            } else {
                q.iter()
                    .filter(|(quote, _)| quote.contains(&norm) || norm.contains(quote.as_str()))
                    .map(|(_, id)| id.to_string())
                    .collect()
            };
            let matching: Vec<(usize, &ListedNonClaim)> = list
                .iter()
                .enumerate()
                .filter(|(_, e)| e.seed == *seed && norm.starts_with(&normalize(&e.text)))
                .collect();
            let listed = matching.first().copied();
            for &(i, e) in &matching {
                used[i] = true;
                if !rules.is_empty() {
                    errors.push(list_err(
                        list_path,
                        e,
                        format!(
                            "listed as not a claim ({}), but rule `{}` quotes it",
                            e.kind,
                            rules.join("`, `")
                        ),
                    ));
                }
            }
            let standing = if let Some(form) = s.form {
                Standing::Form(form)
            } else if !rules.is_empty() {
                Standing::Covered(rules)
            } else if let Some((_, e)) = listed {
                Standing::Listed(e.kind, e.line)
            } else {
                Standing::Uncovered
            };
            sentences.push((s, standing));
        }
        out.push(SeedSentences {
            seed: seed.clone(),
            sentences,
        });
    }
    for (i, e) in list.iter().enumerate() {
        if !seeds.iter().any(|(s, _)| *s == e.seed) {
            errors.push(list_err(list_path, e, format!("no seed `{}`", e.seed)));
        } else if !used[i] {
            errors.push(list_err(
                list_path,
                e,
                format!("`{}` begins no sentence of {}", e.text.trim(), e.seed),
            ));
        }
    }
    if errors.is_empty() {
        Ok(SentenceCoverage { seeds: out })
    } else {
        Err(SpecErrors(errors))
    }
}

fn list_err(path: &Path, e: &ListedNonClaim, msg: String) -> SpecError {
    SpecError::new(PathBuf::from(path), msg)
        .at(e.line, 1)
        .field("text")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(seed: &str, quote: &str) -> Rule {
        Rule {
            id: format!("cdp2.x.{}", quote.len()),
            source: crate::ast::Source {
                kind: crate::ast::SourceKind::Seed,
                file: seed.into(),
                section: "1 S".into(),
            },
            quote: quote.into(),
            profile: crate::ast::Profile::Cdp2,
            tests: vec!["t".into()],
            untested: None,
            decision: None,
            origin: crate::ast::Origin {
                file: "f.yaml".into(),
                line: 1,
            },
        }
    }

    fn listed(seed: &str, text: &str, kind: NotAClaim) -> ListedNonClaim {
        ListedNonClaim {
            seed: seed.into(),
            text: text.into(),
            kind,
            reason: "r".into(),
            line: 7,
        }
    }

    #[test]
    fn a_quote_covers_a_sentence_either_way_round() {
        let seeds = vec![(
            "a.txt".to_string(),
            "Child grids’ writes are visible. The pool is 2048 launches long. Nothing here. This document is nice.\n".to_string(),
        )];
        // The quote holds the first sentence (with the typographic
        // apostrophe written plainly); the second sentence holds the quote.
        let rules = vec![
            rule("a.txt", "Child grids' writes are visible. The pool"),
            rule("a.txt", "is 2048 launches"),
            rule("b.txt", "Nothing here."),
        ];
        let list = vec![listed("a.txt", "This document", NotAClaim::Meta)];
        let c = coverage(&seeds, &rules, &list, Path::new("sentences.yaml")).unwrap();
        let st: Vec<&Standing> = c.seeds[0].sentences.iter().map(|(_, s)| s).collect();
        assert!(matches!(st[0], Standing::Covered(_)));
        assert!(matches!(st[1], Standing::Covered(_)));
        assert_eq!(
            st[2],
            &Standing::Uncovered,
            "a quote of another seed covers nothing"
        );
        assert_eq!(st[3], &Standing::Listed(NotAClaim::Meta, 7));
        assert_eq!((c.checkable(), c.uncovered()), (3, 1));
        assert!((c.uncovered_percent() - 100.0 / 3.0).abs() < 1e-9);
        assert!(c.text().contains("uncovered a.txt:1: Nothing here."));
    }

    #[test]
    fn stale_or_contradicting_list_entries_are_errors() {
        let seeds = vec![(
            "a.txt".to_string(),
            "One claim here. Another one there.\n".to_string(),
        )];
        let rules = vec![rule("a.txt", "One claim here.")];
        let list = vec![
            listed("a.txt", "One claim", NotAClaim::Motivation),
            listed("a.txt", "Missing sentence", NotAClaim::Meta),
            listed("z.txt", "Another one", NotAClaim::Meta),
        ];
        let e = coverage(&seeds, &rules, &list, Path::new("spec/sentences.yaml")).unwrap_err();
        let msgs: Vec<String> = e.0.iter().map(|e| e.to_string()).collect();
        assert_eq!(msgs.len(), 3, "{msgs:?}");
        assert!(
            msgs[0].contains("spec/sentences.yaml:7:1")
                && msgs[0].contains("rule `cdp2.x.15` quotes it")
        );
        assert!(
            msgs.iter()
                .any(|m| m.contains("begins no sentence of a.txt"))
        );
        assert!(msgs.iter().any(|m| m.contains("no seed `z.txt`")));
    }
}
