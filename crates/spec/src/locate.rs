//! Finds where things are in a spec file's text, so that errors found after
//! deserialization (duplicate ids, dangling references, bad operations) can
//! still name a line and column.
//!
//! Where each item starts comes from the parser's events (`scan.rs`); this
//! searches for a needle or a field's key inside an item's lines.

/// A position, 1-based.
pub type Pos = (usize, usize);

pub struct Text<'a> {
    lines: Vec<&'a str>,
}

/// One list entry written `- key: value`: its line and its value.
#[derive(Debug, Clone)]
pub struct Entry {
    pub line: usize,
    pub value: String,
}

impl<'a> Text<'a> {
    /// Splits lines where the YAML parser does (LF, CR LF, a lone CR, and
    /// U+0085, U+2028, U+2029), so that line numbers agree with its own.
    pub fn new(src: &'a str) -> Text<'a> {
        let mut lines = Vec::new();
        let mut start = 0;
        let mut it = src.char_indices().peekable();
        while let Some((i, c)) = it.next() {
            let end = match c {
                '\r' if it.peek().is_some_and(|&(_, n)| n == '\n') => {
                    it.next();
                    i + 2
                }
                '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}' => i + c.len_utf8(),
                _ => continue,
            };
            lines.push(&src[start..i]);
            start = end;
        }
        if start < src.len() {
            lines.push(&src[start..]);
        }
        Text { lines }
    }

    /// Line `n` (1-based).
    /// Every list entry written `- <key>: value` (block style), in order:
    /// `spec/sentences.yaml`'s entries, whose first key is `seed`.
    pub fn entries(&self, key: &str) -> Vec<Entry> {
        let prefix = format!("- {key}:");
        self.lines
            .iter()
            .enumerate()
            .filter_map(|(i, l)| {
                let rest = l.trim_start().strip_prefix(&prefix)?;
                let value = rest.trim().trim_matches(|c| c == '"' || c == '\'');
                Some(Entry {
                    line: i + 1,
                    value: value.to_string(),
                })
            })
            .collect()
    }

    pub fn line(&self, n: usize) -> Option<&'a str> {
        self.lines.get(n.checked_sub(1)?).copied()
    }

    /// The first occurrence of `needle` on lines `from..until` (1-based,
    /// `until` exclusive; `None` means the end of the file).
    pub fn find(&self, needle: &str, from: usize, until: Option<usize>) -> Option<Pos> {
        let end = until.unwrap_or(self.lines.len() + 1);
        (from.max(1)..end).find_map(|n| {
            let l = self.lines.get(n - 1)?;
            // A search prepares the needle first: lines too short to hold
            // it are passed over without that cost (a long needle against
            // many short lines would be quadratic).
            if l.len() < needle.len() {
                return None;
            }
            l.find(needle).map(|c| (n, l[..c].chars().count() + 1))
        })
    }

    /// The line where the text of the `source:` key inside the entry
    /// starting at `from` begins: the next line for a block scalar
    /// (`source: |`), the key's own line for a scalar written after it; for
    /// an alias (`source: *name`), where the anchor's (`&name`) text begins.
    pub fn source_start(&self, from: usize, until: Option<usize>) -> Option<usize> {
        let (line, col) = self.field("source", from, until)?;
        self.value_start(line, col + "source:".len())
    }

    /// Where the value that starts at 1-based `line` and byte `col` (just
    /// after a key's `:`) begins.
    fn value_start(&self, line: usize, col: usize) -> Option<usize> {
        let rest = self.lines.get(line - 1)?.get(col - 1..)?;
        let rest = rest.split(" #").next().unwrap_or("").trim();
        if let Some(alias) = rest.strip_prefix('*') {
            let anchor = format!("&{}", alias.trim());
            let (l, c) = (1..=self.lines.len()).find_map(|n| {
                let text = self.lines[n - 1];
                text.find(&anchor)
                    .filter(|&c| {
                        text[c + anchor.len()..]
                            .chars()
                            .next()
                            .is_none_or(char::is_whitespace)
                    })
                    .map(|c| (n, c + 1))
            })?;
            return self.value_start(l, c + anchor.len());
        }
        // Past an anchor, what is left is the scalar or its block header.
        let rest = match rest.strip_prefix('&') {
            Some(a) => a
                .split_once(char::is_whitespace)
                .map_or("", |(_, r)| r.trim()),
            None => rest,
        };
        if rest.is_empty() || rest.starts_with(['|', '>']) {
            Some(line + 1)
        } else {
            Some(line)
        }
    }

    /// The position of key `field:` inside the entry starting at `from`.
    pub fn field(&self, field: &str, from: usize, until: Option<usize>) -> Option<Pos> {
        self.find(&format!("{field}:"), from, until)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_needles_and_fields() {
        let src = "rules:\n  - id: a.b.c\n    tests: [t1]\n  - id: \"a.b.d\"\n    tests: [t2]\n";
        let t = Text::new(src);
        assert_eq!(t.find("a.b.d", 1, None), Some((4, 10)));
        assert_eq!(t.field("tests", 4, None), Some((5, 5)));
        assert_eq!(t.find("t2", 2, Some(4)), None);
        // Line breaks as YAML counts them; columns in characters.
        let t = Text::new("a\rb\r\nc\u{2028}é x\n");
        assert_eq!(t.find("x", 1, None), Some((4, 3)));
    }
}
