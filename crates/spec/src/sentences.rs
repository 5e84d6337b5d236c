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

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::ast::Rule;
use crate::error::{SpecError, SpecErrors};
use crate::locate::Text;
use crate::raw::RawSentenceList;
use crate::seeds::normalize;

/// The list of sentences that are not claims, under `spec/`. The spec loader
/// skips it; [`load_list`] reads it.
pub const LIST_FILE: &str = "sentences.yaml";

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

/// Whether a line (outside a fenced block) is code: it starts with a
/// comment, a preprocessor directive, a CUDA qualifier, a C type, a PTX
/// directive or a shell prompt; or it ends with `;`, `{` or `}`; or it is a
/// lone bracket.
pub fn looks_like_code(line: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "//",
        "#include",
        "#define",
        "__global__",
        "__device__",
        "__host__",
        "extern \"C\"",
        "extern __",
        ".extern",
        ".param",
        "$ ",
        "int ",
        "void ",
        "float ",
        "dim3 ",
        "unsigned ",
        "cudaError_t ",
        "cudaStream_t ",
        "cudaLaunchAttribute ",
        "cudaLaunchConfig_t ",
        "return ",
    ];
    let t = line.trim();
    if t.is_empty() {
        return false;
    }
    matches!(t, "(" | ")" | "{" | "}" | ";" | ");")
        || PREFIXES.iter().any(|p| t.starts_with(p))
        || t.ends_with(';')
        || t.ends_with('{')
        || t.ends_with('}')
}

/// The text outside Markdown links and images: every `[...]` (nested) and
/// the `(...)` right after it are dropped.
fn outside_links(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '[' => depth += 1,
            ']' if depth > 0 => {
                depth -= 1;
                if chars.get(i + 1) == Some(&'(') {
                    let mut parens = 0usize;
                    i += 1;
                    while i < chars.len() {
                        match chars[i] {
                            '(' => parens += 1,
                            ')' => {
                                parens -= 1;
                                if parens == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                        i += 1;
                    }
                }
            }
            c if depth == 0 => out.push(c),
            _ => {}
        }
        i += 1;
    }
    out
}

fn is_link_only(line: &str) -> bool {
    let t = line.trim();
    t == "Links/Buttons:"
        || (t.contains("](") && !outside_links(t).chars().any(char::is_alphanumeric))
}

fn is_metadata(line: &str) -> bool {
    [
        "Title:",
        "URL Source:",
        "Published Time:",
        "Markdown Content:",
        "layout:",
    ]
    .iter()
    .any(|p| line.starts_with(p))
}

fn is_toc_entry(line: &str) -> bool {
    line.contains('\t')
        && line.rsplit('\t').next().is_some_and(|last| {
            !last.trim().is_empty() && last.trim().chars().all(|c| c.is_ascii_digit())
        })
}

fn is_caption_line(line: &str) -> bool {
    let t = line.trim();
    ["Figure ", "Table "].iter().any(|p| {
        t.strip_prefix(p)
            .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
    })
}

fn is_underline(line: &str) -> bool {
    let t = line.trim();
    t.len() >= 3 && (t.chars().all(|c| c == '-') || t.chars().all(|c| c == '='))
}

fn is_table_separator(line: &str) -> bool {
    let t = line.trim();
    t.starts_with('|') && t.contains("---") && t.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '))
}

fn is_table_row(line: &str) -> bool {
    line.trim_start().starts_with('|') || line.contains('\t')
}

/// The list marker a line starts with, if it is a list item: `- `, `* `,
/// `+ `, `▶ ` (and `- ▶ `), `<n>. `.
fn list_marker(line: &str) -> Option<usize> {
    let t = line.trim_start();
    let lead = line.len() - t.len();
    for m in ["- ▶ ", "▶ ", "- ", "* ", "+ "] {
        if let Some(rest) = t.strip_prefix(m) {
            let extra = rest.len() - rest.trim_start().len();
            return Some(lead + m.len() + extra);
        }
    }
    let digits = t.chars().take_while(|c| c.is_ascii_digit()).count();
    if digits > 0 && t[digits..].starts_with(". ") {
        return Some(lead + digits + 2);
    }
    None
}

enum Block {
    /// Lines of a paragraph: (line number, text).
    Para(Vec<(usize, String)>),
    Item(Sentence),
}

/// Splits a seed's text into sentences and items (see the module docs).
pub fn split(text: &str) -> Vec<Sentence> {
    let lines: Vec<&str> = text.lines().collect();
    let mut blocks: Vec<Block> = Vec::new();
    let mut para: Vec<(usize, String)> = Vec::new();
    let mut in_fence = false;
    let flush = |para: &mut Vec<(usize, String)>, blocks: &mut Vec<Block>| {
        if !para.is_empty() {
            blocks.push(Block::Para(std::mem::take(para)));
        }
    };
    let item = |line: usize, text: &str, form: Option<NotAClaim>| {
        Block::Item(Sentence {
            line,
            text: text.trim().to_string(),
            form,
        })
    };
    for (i, raw) in lines.iter().enumerate() {
        let n = i + 1;
        let line = raw.trim_end();
        let t = line.trim();
        if t.starts_with("```") {
            flush(&mut para, &mut blocks);
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            if !t.is_empty() {
                blocks.push(item(n, t, Some(NotAClaim::Code)));
            }
            continue;
        }
        if t.is_empty() {
            flush(&mut para, &mut blocks);
            continue;
        }
        if is_underline(t) {
            // A setext underline turns the paragraph above into a heading; a
            // lone `---` is a rule (front matter, a footer).
            if para.len() == 1 {
                let (l, s) = para.remove(0);
                blocks.push(item(l, &s, Some(NotAClaim::Heading)));
            } else {
                flush(&mut para, &mut blocks);
            }
            continue;
        }
        if is_table_separator(t) {
            // The row above is the table's header.
            if let Some(Block::Item(s)) = blocks.last_mut()
                && para.is_empty()
            {
                s.form = Some(NotAClaim::Heading);
            }
            continue;
        }
        let form = if t.starts_with('#') && !looks_like_code(t) {
            Some(Some(NotAClaim::Heading))
        } else if is_metadata(t) || is_link_only(t) || is_toc_entry(line) {
            Some(Some(NotAClaim::Navigation))
        } else if is_caption_line(t) {
            Some(Some(NotAClaim::Caption))
        } else if looks_like_code(t) {
            Some(Some(NotAClaim::Code))
        } else if is_table_row(raw) {
            Some(None)
        } else {
            None
        };
        if let Some(form) = form {
            flush(&mut para, &mut blocks);
            blocks.push(item(n, t, form));
            continue;
        }
        if let Some(skip) = list_marker(line) {
            flush(&mut para, &mut blocks);
            para.push((n, line[skip..].trim().to_string()));
            continue;
        }
        para.push((n, t.to_string()));
    }
    flush(&mut para, &mut blocks);

    // A paragraph cut by a page break continues in the next one when that
    // starts with a lowercase letter.
    let mut merged: Vec<Block> = Vec::new();
    for b in blocks {
        if let (Some(Block::Para(prev)), Block::Para(next)) = (merged.last_mut(), &b) {
            let prev_end = prev.last().map(|(_, s)| s.trim_end()).unwrap_or("");
            let next_start = next.first().map(|(_, s)| s.as_str()).unwrap_or("");
            let prev_words: usize = prev.iter().map(|(_, s)| s.split_whitespace().count()).sum();
            if !prev_end.ends_with(['.', ':', ';', '?', '!'])
                && (prev.len() > 1 || prev_words > 12)
                && next_start.starts_with(|c: char| c.is_lowercase())
            {
                prev.extend(next.iter().cloned());
                continue;
            }
        }
        merged.push(b);
    }

    let mut out = Vec::new();
    for b in merged {
        match b {
            Block::Item(s) => out.push(s),
            Block::Para(lines) => {
                let first = lines[0].0;
                let joined = lines
                    .iter()
                    .map(|(_, s)| s.as_str())
                    .collect::<Vec<_>>()
                    .join(" ");
                let single = lines.len() == 1;
                if single
                    && joined.split_whitespace().count() <= 12
                    && !joined.trim_end().ends_with(['.', ':', ';', '?', '!'])
                {
                    out.push(Sentence {
                        line: first,
                        text: joined,
                        form: Some(NotAClaim::Heading),
                    });
                    continue;
                }
                // Line numbers: each sentence starts on the line holding its
                // first character.
                let mut offsets = Vec::new();
                let mut at = 0;
                for (l, s) in &lines {
                    offsets.push((at, *l));
                    at += s.len() + 1;
                }
                for (start, s) in sentence_spans(&joined) {
                    let line = offsets
                        .iter()
                        .rev()
                        .find(|(o, _)| *o <= start)
                        .map_or(first, |(_, l)| *l);
                    out.push(Sentence {
                        line,
                        text: s.to_string(),
                        form: None,
                    });
                }
            }
        }
    }
    out
}

const ABBREVIATIONS: &[&str] = &["i.e.", "e.g.", "etc.", "vs.", "cf.", "fig.", "no."];

/// The sentences of a paragraph with their byte offsets.
fn sentence_spans(p: &str) -> Vec<(usize, &str)> {
    let bytes: Vec<(usize, char)> = p.char_indices().collect();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let (_, c) = bytes[i];
        if matches!(c, '.' | '?' | '!') {
            // Closing marks after the punctuation.
            let mut j = i + 1;
            while j < bytes.len()
                && matches!(
                    bytes[j].1,
                    ')' | '"' | '\'' | '*' | '_' | '`' | ']' | '”' | '’'
                )
            {
                j += 1;
            }
            let ws = j < bytes.len() && bytes[j].1.is_whitespace();
            let mut k = j;
            while k < bytes.len() && bytes[k].1.is_whitespace() {
                k += 1;
            }
            let opens = k < bytes.len() && {
                let d = bytes[k].1;
                d.is_uppercase()
                    || d.is_ascii_digit()
                    || matches!(d, '`' | '*' | '_' | '[' | '(' | '"' | '\'' | '“' | '‘')
            };
            let end = if j < bytes.len() { bytes[j].0 } else { p.len() };
            let word_start = p[..bytes[i].0]
                .rfind(|c: char| c.is_whitespace() || c == '(')
                .map_or(0, |w| w + 1);
            let word = p[word_start..bytes[i].0 + 1].to_lowercase();
            let abbreviation = c == '.' && ABBREVIATIONS.contains(&word.as_str());
            if ws && opens && !abbreviation {
                let s = p[start..end].trim();
                if !s.is_empty() {
                    out.push((
                        start + (p[start..end].len() - p[start..end].trim_start().len()),
                        s,
                    ));
                }
                start = bytes[k].0;
                i = k;
                continue;
            }
        }
        i += 1;
    }
    let s = p[start..].trim();
    if !s.is_empty() {
        out.push((
            start + (p[start..].len() - p[start..].trim_start().len()),
            s,
        ));
    }
    out
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

/// One entry of `spec/sentences.yaml`: a sentence (or every sentence of the
/// seed starting with `text`) that is not a claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedNonClaim {
    pub seed: String,
    /// A prefix of the sentence, compared after normalization.
    pub text: String,
    pub kind: NotAClaim,
    pub reason: String,
    /// 1-based line of the entry in the list file.
    pub line: usize,
}

/// Reads `spec/sentences.yaml`; every problem is located by line and
/// column, with the entry and the field.
pub fn load_list(path: &Path, src: &str) -> Result<Vec<ListedNonClaim>, SpecErrors> {
    let raw: RawSentenceList = serde_yaml::from_str(src).map_err(|e| {
        let full = e.to_string();
        let msg = full
            .rfind(" at line ")
            .map_or(full.as_str(), |i| &full[..i]);
        let mut err = SpecError::new(path, msg);
        if let Some(loc) = e.location() {
            err = err.at(loc.line(), loc.column());
        }
        SpecErrors(vec![err])
    })?;
    let text = Text::new(src);
    let starts = text.entries("seed");
    let aligned = starts.len() == raw.sentences.len();
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for (i, r) in raw.sentences.into_iter().enumerate() {
        let line = if aligned { starts[i].line } else { 1 };
        let until = if aligned {
            starts.get(i + 1).map(|e| e.line)
        } else {
            None
        };
        let err = |field: &str, msg: String| {
            let pos = text.field(field, line, until).unwrap_or((line, 1));
            SpecError::new(path, msg)
                .at(pos.0, pos.1)
                .item(format!("sentence {}", i + 1))
                .field(field)
        };
        let kind = NotAClaim::parse(&r.kind);
        if kind.is_none() {
            errors.push(err(
                "kind",
                format!(
                    "unknown kind `{}`: expected one of {}",
                    r.kind,
                    NotAClaim::ALL.map(NotAClaim::as_str).join(", ")
                ),
            ));
        }
        if normalize(&r.text).split_whitespace().count() < 2 {
            errors.push(err(
                "text",
                "the text must hold at least two words of the sentence".into(),
            ));
        }
        if r.reason.trim().is_empty() {
            errors.push(err("reason", "the reason is empty".into()));
        }
        if let Some(kind) = kind {
            out.push(ListedNonClaim {
                seed: r.seed,
                text: r.text,
                kind,
                reason: r.reason,
                line,
            });
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(SpecErrors(errors))
    }
}

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
        quotes
            .entry(r.source.seed.as_str())
            .or_default()
            .push((normalize(&r.quote), r.id.as_str()));
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

    fn texts(v: &[Sentence]) -> Vec<(&str, Option<NotAClaim>)> {
        v.iter().map(|s| (s.text.as_str(), s.form)).collect()
    }

    #[test]
    fn finds_rule_ids_in_a_reason() {
        assert_eq!(
            rule_ids_in(
                "Relied on by cdp2.memory.x-y and `pdl.wait.z`. Also cdp2.memory.x-y, not cdp3.a.b or e.g. this."
            ),
            vec!["cdp2.memory.x-y", "pdl.wait.z"]
        );
    }

    #[test]
    fn splits_sentences_but_not_abbreviations_or_numbers() {
        let s = split(
            "A grid, i.e. a launch, runs. CDP2 is the default in CUDA 12.0 and later. Use `x` (e.g. `y`) here.\n",
        );
        assert_eq!(
            texts(&s),
            vec![
                ("A grid, i.e. a launch, runs.", None),
                ("CDP2 is the default in CUDA 12.0 and later.", None),
                ("Use `x` (e.g. `y`) here.", None),
            ]
        );
    }

    #[test]
    fn splits_after_closing_marks_and_before_code_marks() {
        let s = split("It waits (see below). `cudaFree()` frees. Is it *so*? Yes!\n");
        assert_eq!(
            texts(&s).iter().map(|t| t.0).collect::<Vec<_>>(),
            vec![
                "It waits (see below).",
                "`cudaFree()` frees.",
                "Is it *so*?",
                "Yes!"
            ]
        );
    }

    #[test]
    fn joins_lines_of_a_paragraph_and_keeps_line_numbers() {
        let s = split("First part\nof a sentence. Second\nsentence here.\n\nThird one.\n");
        assert_eq!(
            s.iter()
                .map(|s| (s.line, s.text.as_str()))
                .collect::<Vec<_>>(),
            vec![
                (1, "First part of a sentence."),
                (2, "Second sentence here."),
                (5, "Third one."),
            ]
        );
    }

    #[test]
    fn a_page_break_does_not_end_a_sentence() {
        let s = split(
            "The user must call it after the launch to know whether or not the launch generated\n\nan error, however it may not.\n",
        );
        assert_eq!(s.len(), 1);
        assert_eq!(
            s[0].text,
            "The user must call it after the launch to know whether or not the launch generated an error, however it may not."
        );
    }

    #[test]
    fn classifies_headings_code_navigation_and_captions() {
        let seed = "\
Title: 4.5. Programmatic Dependent Launch
URL Source: https://example.com/x.html

4.5.1. Background[#](https://example.com/x.html#background \"Link\")
--------------------------------------

### 4.5.1.1. Overview[#](https://example.com/#o)

Global Memory

 __global__  void k() {
 // a comment
 x = 1;
}

```
a fenced line
```

Figure 39 GPU activity timeline[#](https://example.com/#f)

[![Image 1: t](https://example.com/a.png)](https://example.com/a.png)

Introduction\t1

Links/Buttons:
- [#](https://example.com/#x)

A claim.
";
        let s = split(seed);
        assert_eq!(
            texts(&s),
            vec![
                (
                    "Title: 4.5. Programmatic Dependent Launch",
                    Some(NotAClaim::Navigation)
                ),
                (
                    "URL Source: https://example.com/x.html",
                    Some(NotAClaim::Navigation)
                ),
                (
                    "4.5.1. Background[#](https://example.com/x.html#background \"Link\")",
                    Some(NotAClaim::Heading)
                ),
                (
                    "### 4.5.1.1. Overview[#](https://example.com/#o)",
                    Some(NotAClaim::Heading)
                ),
                ("Global Memory", Some(NotAClaim::Heading)),
                ("__global__  void k() {", Some(NotAClaim::Code)),
                ("// a comment", Some(NotAClaim::Code)),
                ("x = 1;", Some(NotAClaim::Code)),
                ("}", Some(NotAClaim::Code)),
                ("a fenced line", Some(NotAClaim::Code)),
                (
                    "Figure 39 GPU activity timeline[#](https://example.com/#f)",
                    Some(NotAClaim::Caption)
                ),
                (
                    "[![Image 1: t](https://example.com/a.png)](https://example.com/a.png)",
                    Some(NotAClaim::Navigation)
                ),
                ("Introduction\t1", Some(NotAClaim::Navigation)),
                ("Links/Buttons:", Some(NotAClaim::Navigation)),
                ("- [#](https://example.com/#x)", Some(NotAClaim::Navigation)),
                ("A claim.", None),
            ]
        );
    }

    #[test]
    fn tables_rows_are_items_and_headers_are_headings() {
        let s = split(
            "| Memory Space | Same pointers? |\n| --- | --- |\n| Global Memory | Yes |\n\n<code>cudaFree</code>\tNot on host pointers\n",
        );
        assert_eq!(
            texts(&s),
            vec![
                (
                    "| Memory Space | Same pointers? |",
                    Some(NotAClaim::Heading)
                ),
                ("| Global Memory | Yes |", None),
                ("<code>cudaFree</code>\tNot on host pointers", None),
            ]
        );
    }

    #[test]
    fn list_items_are_paragraphs_of_their_own() {
        let s = split(
            "Do this:\n- ▶ Dg is the grid\n*   `Db` is the block. It is a dim3.\n1. Add a wait.\n",
        );
        assert_eq!(
            texts(&s).iter().map(|t| t.0).collect::<Vec<_>>(),
            vec![
                "Do this:",
                "Dg is the grid",
                "`Db` is the block.",
                "It is a dim3.",
                "Add a wait."
            ]
        );
    }

    fn rule(seed: &str, quote: &str) -> Rule {
        Rule {
            id: format!("cdp2.x.{}", quote.len()),
            source: crate::ast::Source {
                seed: seed.into(),
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

    #[test]
    fn the_list_file_is_validated_with_locations() {
        let src = "sentences:\n  - seed: a.txt\n    text: This document\n    kind: meta\n    reason: about the document\n  - seed: a.txt\n    text: x\n    kind: musing\n    reason: ''\n";
        let e = load_list(Path::new("spec/sentences.yaml"), src).unwrap_err();
        let msgs: Vec<String> = e.0.iter().map(|e| e.to_string()).collect();
        assert_eq!(msgs.len(), 3, "{msgs:?}");
        assert!(msgs[0].starts_with(
            "spec/sentences.yaml:8:5: sentence 2: field `kind`: unknown kind `musing`"
        ));
        assert!(msgs[1].contains(":7:5: sentence 2: field `text`"));
        assert!(msgs[2].contains(":9:5: sentence 2: field `reason`"));
        let bad =
            load_list(Path::new("s.yaml"), "sentences:\n  - seed: a\n    txt: b\n").unwrap_err();
        assert!(
            bad.to_string().contains("s.yaml:3:5")
                && bad.to_string().contains("unknown field `txt`"),
            "{bad}"
        );
        let ok = load_list(
            Path::new("s.yaml"),
            &src[..src.find("  - seed: a.txt\n    text: x").unwrap()],
        )
        .unwrap();
        assert_eq!(
            ok,
            vec![ListedNonClaim {
                seed: "a.txt".into(),
                text: "This document".into(),
                kind: NotAClaim::Meta,
                reason: "about the document".into(),
                line: 2,
            }]
        );
    }
}
