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
