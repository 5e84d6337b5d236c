//! The seeds split into sentences, each quoted by a rule or listed as not a
//! claim: `cargo xtask spec coverage --sentences`.
//!
//! # The splitter
//!
//! A seed is read line by line (1-based line numbers are kept for the
//! report):
//!
//! - A fenced block (between two lines starting with three backquotes) gives
//!   one *code* item per non-empty line.
//! - Outside fences, a line that looks like code (see [`looks_like_code`]) is
//!   a *code* item of its own; a line that is only Markdown links and images
//!   (a footer, a figure, `Links/Buttons:`), a captured page's metadata
//!   (`Title:`, `URL Source:`, `Published Time:`, `Markdown Content:`,
//!   `layout:`) or a table of contents entry (text, a tab, a page number) is a
//!   *navigation* item; a line starting `Figure <n>` or `Table <n>` is a
//!   *caption*; a line starting `#` is a *heading*, and so is the line above a
//!   line of only `-` or `=` (the underline is dropped).
//! - A table row (a line starting `|`, or a line with a tab) is one item,
//!   whatever its cells hold; the separator row `| --- |` is dropped, and the
//!   row above it (the header) is a heading.
//! - Other lines are prose. Consecutive prose lines form a paragraph; an
//!   empty line ends it, and so does a list item (a line starting `-`, `*`,
//!   `+`, `▶` or `<n>.`), which begins its own paragraph. A paragraph that
//!   ends without final punctuation and is followed, after empty lines, by
//!   one starting with a lowercase letter continues there (a page break of a
//!   PDF capture).
//! - A paragraph is split into sentences after `.`, `?` or `!` (and any
//!   closing `)`, quote, `*`, `_` or backquote) followed by white space and
//!   an uppercase letter, a digit or an opening mark — except after the
//!   abbreviations `i.e.`, `e.g.`, `etc.`, `vs.`, `cf.`, `Fig.`, `No.`.
//! - A paragraph of one line, of at most 12 words, that does not end with
//!   `.`, `:`, `;`, `?` or `!` is a *heading* (a title, a label, a caption of
//!   a code block).
//!
//! # Coverage
//!
//! A rule's quote covers a sentence of its seed when the normalized sentence
//! occurs in the normalized quote or the normalized quote occurs in the
//! normalized sentence ([`crate::seeds::normalize`]). A heading, code,
//! navigation or caption item is not a claim by its form (a rule may still
//! quote it, a code line for instance). Of the other sentences, one a rule
//! covers is checkable and has a rule; one listed in `spec/sentences.yaml`
//! is not a claim for the reason given there (listing a sentence a rule
//! covers is an error); every other sentence is checkable and has no rule.
//!
//! This file holds what a sentence is and why one is not a claim; the
//! splitter is in `sentences/splitter.rs`, the reading of
//! `spec/sentences.yaml` in `sentences/list.rs` and each sentence's standing
//! and the report in `sentences/coverage.rs`.

use std::fmt;

mod coverage;
mod list;
mod splitter;

pub use coverage::{SeedSentences, SentenceCoverage, Standing, coverage};
pub use list::{LIST_FILE, ListedNonClaim, load_list};
pub use splitter::{looks_like_code, split};

/// Why a sentence is not a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NotAClaim {
    /// A heading, a title, a label (found by its form).
    Heading,
    /// A line of code (found by its form).
    Code,
    /// Links, a table of contents, a page's metadata or a cross-reference.
    Navigation,
    /// A figure's or a table's caption.
    Caption,
    /// About the document itself (its purpose, its audience, its date).
    Meta,
    /// A benefit or a motivation that states nothing a program can check.
    Motivation,
    /// The author's view, advice or background outside CUDA's behaviour.
    Opinion,
    /// A legal notice or a trademark.
    Legal,
    /// Says again what another sentence of the same seed says (the reason
    /// names it).
    Repetition,
}

impl NotAClaim {
    pub const ALL: [NotAClaim; 9] = [
        NotAClaim::Heading,
        NotAClaim::Code,
        NotAClaim::Navigation,
        NotAClaim::Caption,
        NotAClaim::Meta,
        NotAClaim::Motivation,
        NotAClaim::Opinion,
        NotAClaim::Legal,
        NotAClaim::Repetition,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            NotAClaim::Heading => "heading",
            NotAClaim::Code => "code",
            NotAClaim::Navigation => "navigation",
            NotAClaim::Caption => "caption",
            NotAClaim::Meta => "meta",
            NotAClaim::Motivation => "motivation",
            NotAClaim::Opinion => "opinion",
            NotAClaim::Legal => "legal",
            NotAClaim::Repetition => "repetition",
        }
    }

    pub fn parse(s: &str) -> Option<NotAClaim> {
        NotAClaim::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl fmt::Display for NotAClaim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One sentence (or item: a code line, a table row, a heading) of a seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sentence {
    /// 1-based line of the seed where it starts.
    pub line: usize,
    /// As in the seed, its lines joined by one space.
    pub text: String,
    /// Not a claim by its form, when it is a heading, code, navigation or a
    /// caption.
    pub form: Option<NotAClaim>,
}

impl Sentence {
    /// The text with Markdown links reduced to their text, for reports.
    pub fn display(&self) -> String {
        strip_links(&self.text)
    }
}

/// `[text](url)` → `text`, `![alt](url)` → `alt`.
fn strip_links(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(open) = rest.find("](") {
        let Some(close) = rest[open + 2..].find(')') else {
            break;
        };
        out.push_str(&rest[..open]);
        rest = &rest[open + 2 + close + 1..];
    }
    out.push_str(rest);
    out.replace("![", "").replace('[', "")
}

/// The rule ids (`<profile>.<area>.<claim>`, profile `cdp2`, `cdp1` or
/// `pdl`) a text names, each once, in order.
pub fn rule_ids_in(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '-')) {
        let word = word.trim_end_matches('.');
        let parts: Vec<&str> = word.split('.').collect();
        if parts.len() == 3
            && matches!(parts[0], "cdp2" | "cdp1" | "pdl")
            && parts[1..].iter().all(|p| !p.is_empty())
            && !out.iter().any(|o| o == word)
        {
            out.push(word.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_rule_ids_in_a_reason() {
        assert_eq!(
            rule_ids_in(
                "Relied on by cdp2.memory.x-y and `pdl.wait.z`. Also cdp2.memory.x-y, not cdp3.a.b or e.g. this."
            ),
            vec!["cdp2.memory.x-y", "pdl.wait.z"]
        );
    }
}
