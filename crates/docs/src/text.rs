//! Escaping and small formatting helpers shared by the pages and reports.

use gridcheck_report::Status;

/// Escapes text for HTML (and for Markdown inside HTML blocks).
pub fn html(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// Prose in a Markdown paragraph, shown as written: HTML-escaped, and the
/// characters Markdown would read as emphasis, code or links escaped
/// (`h-tf-*` twice in a paragraph is not italics).
pub fn prose(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in html(s).chars() {
        if matches!(c, '\\' | '*' | '_' | '`' | '[' | ']') {
            o.push('\\');
        }
        o.push(c);
    }
    o
}

/// Text for one Markdown table cell: HTML-escaped, pipes escaped, one line.
pub fn cell(s: &str) -> String {
    html(s)
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
        .replace('*', "\\*")
        .replace('_', "\\_")
}

/// Inline code that survives backquotes inside.
pub fn code(s: &str) -> String {
    let fence = if s.contains('`') { "`` " } else { "`" };
    let close = if s.contains('`') { " ``" } else { "`" };
    format!("{fence}{}{close}", s.replace(['\n', '\r'], " "))
}

/// A fenced code block whose fence is longer than any backquote run inside.
pub fn fenced(lang: &str, body: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in body.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let fence = "`".repeat((longest + 1).max(3));
    format!("{fence}{lang}\n{}\n{fence}\n", body.trim_end_matches('\n'))
}

/// A status as a coloured badge (`gc-status gc-<status>` in the site's CSS).
pub fn badge(status: Status) -> String {
    format!(
        "<span class=\"gc-status gc-{s}\">{s}</span>",
        s = status.as_str()
    )
}

/// How bad a status is, for "the worst status of a rule": a failure first,
/// a trial that did not run last.
pub use gridcheck_report::summary::rank as severity;

/// The page of a rule, relative to the book's `src/`.
pub fn rule_path(id: &str) -> String {
    format!("rules/{id}.md")
}

/// A slug for anchors and file names: lowercase alphanumerics and `-` (the
/// same function names a GPU's results and tuned files).
pub use gridcheck_report::slug;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prose_is_shown_as_written() {
        assert_eq!(
            prose("h-tf-* and p-tf-* <a>"),
            "h-tf-\\* and p-tf-\\* &lt;a&gt;"
        );
        assert_eq!(prose("`x` [y] a_b"), "\\`x\\` \\[y\\] a\\_b");
    }

    #[test]
    fn escapes() {
        assert_eq!(html("<a & \"b\">"), "&lt;a &amp; &quot;b&quot;&gt;");
        assert_eq!(cell("a|b\nc_d"), "a\\|b c\\_d");
        assert_eq!(code("x`y"), "`` x`y ``");
        assert_eq!(fenced("", "a ```` b"), "`````\na ```` b\n`````\n");
        assert_eq!(slug("4.18.3.1 Global Memory"), "4-18-3-1-global-memory");
        assert!(severity(Status::Fail) > severity(Status::Pass));
        assert!(severity(Status::Pass) > severity(Status::NotSupported));
    }
}
