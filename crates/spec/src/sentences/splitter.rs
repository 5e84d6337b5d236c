//! The splitter: a seed's text into sentences and items (code lines,
//! table rows, headings, navigation, captions), as the module docs of
//! [`crate::sentences`] describe.

use super::{NotAClaim, Sentence};

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
    let mut out = Vec::new();
    for b in join_page_breaks(blocks(text)) {
        match b {
            Block::Item(s) => out.push(s),
            Block::Para(lines) => para_sentences(&lines, &mut out),
        }
    }
    out
}

/// The text's paragraphs and items (headings, code, navigation, captions,
/// table rows), in order.
fn blocks(text: &str) -> Vec<Block> {
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
    blocks
}

/// A paragraph cut by a page break continues in the next one when that
/// starts with a lowercase letter.
fn join_page_breaks(blocks: Vec<Block>) -> Vec<Block> {
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
    merged
}

/// A paragraph's sentences, each with the line it starts on; a short
/// unpunctuated one-line paragraph is a heading.
fn para_sentences(lines: &[(usize, String)], out: &mut Vec<Sentence>) {
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
        return;
    }
    // Line numbers: each sentence starts on the line holding its
    // first character.
    let mut offsets = Vec::new();
    let mut at = 0;
    for (l, s) in lines {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(v: &[Sentence]) -> Vec<(&str, Option<NotAClaim>)> {
        v.iter().map(|s| (s.text.as_str(), s.form)).collect()
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
}
