//! Text from the spec placed in a generated file's `//` comments: a line
//! break would end the comment and put the rest of the line into the code,
//! and a backslash at the end of a line would splice the next line into the
//! comment. Such characters are written as escapes instead.

/// `s`, safe to put in a `//` comment: every control character (line breaks
/// included) as `\n`, `\r`, `\u{..}`, and a final backslash as `\u{5c}`.
pub(crate) fn comment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.char_indices() {
        match c {
            '\\' if i + 1 == s.len() => out.push_str("\\u{5c}"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push('\t'),
            // Unicode line and paragraph separators end a line to some
            // readers; every control character is made visible.
            c if c.is_control() || c == '\u{2028}' || c == '\u{2029}' => {
                out.push_str(&c.escape_unicode().to_string())
            }
            c => out.push(c),
        }
    }
    out
}

/// `s` as the file name of a `#line` directive's string literal: every
/// character that could end the literal or the line (quotes, backslashes,
/// control characters, line separators) becomes `_`.
pub(crate) fn line_directive_path(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c == '"' || c == '\\' || c.is_control() || c == '\u{2028}' || c == '\u{2029}' {
                '_'
            } else {
                c
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::comment;

    #[test]
    fn line_breaks_and_splices_are_escaped() {
        assert_eq!(comment("spec/a.yaml"), "spec/a.yaml");
        assert_eq!(comment("a\nint x;"), "a\\nint x;");
        assert_eq!(comment("a\\"), "a\\u{5c}");
        assert_eq!(comment("a\\b"), "a\\b");
        assert_eq!(comment("a\r\u{2028}\u{7}"), "a\\r\\u{2028}\\u{7}");
        for s in ["x\ny", "x\\", "x\ry", "x\u{2029}"] {
            let c = comment(s);
            assert!(
                !c.contains(['\n', '\r', '\u{2029}']) && !c.ends_with('\\'),
                "{c}"
            );
        }
    }
}
