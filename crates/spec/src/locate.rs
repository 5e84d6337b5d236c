//! Finds where things are in a spec file's text, so that errors found after
//! deserialization (duplicate ids, dangling references, bad operations) can
//! still name a line and column.
//!
//! Items are found by their first key: a rule is a list entry `- id: ...`, a
//! test a list entry `- name: ...`. The i-th rule of the file is the i-th such
//! line.

/// A position, 1-based.
pub type Pos = (usize, usize);

pub struct Text<'a> {
    lines: Vec<&'a str>,
}

/// One rule or test entry: its first line and its value.
#[derive(Debug, Clone)]
pub struct Entry {
    pub line: usize,
    pub value: String,
}

impl<'a> Text<'a> {
    pub fn new(src: &'a str) -> Text<'a> {
        Text {
            lines: src.lines().collect(),
        }
    }

    /// Every list entry whose first key is `key`, in order.
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

    /// The first occurrence of `needle` on lines `from..until` (1-based,
    /// `until` exclusive; `None` means the end of the file).
    pub fn find(&self, needle: &str, from: usize, until: Option<usize>) -> Option<Pos> {
        let end = until.unwrap_or(self.lines.len() + 1);
        (from.max(1)..end).find_map(|n| {
            let l = self.lines.get(n - 1)?;
            l.find(needle).map(|c| (n, c + 1))
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

/// The entry that contains `line`, given every entry sorted by line.
pub fn enclosing(entries: &[(Entry, String)], line: usize) -> Option<&(Entry, String)> {
    entries.iter().rev().find(|(e, _)| e.line <= line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_entries_and_fields() {
        let src = "rules:\n  - id: a.b.c\n    tests: [t1]\n  - id: \"a.b.d\"\n    tests: [t2]\n";
        let t = Text::new(src);
        let e = t.entries("id");
        assert_eq!(e.len(), 2);
        assert_eq!((e[1].line, e[1].value.as_str()), (4, "a.b.d"));
        assert_eq!(t.field("tests", 4, None), Some((5, 5)));
        assert_eq!(t.find("t2", 2, Some(4)), None);
    }
}
