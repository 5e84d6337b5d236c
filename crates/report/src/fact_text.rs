//! Where in a facts file a problem is: the line of a byte offset, of a
//! fact's field, the field a line sets, and the date format the places
//! use. Text only, for `facts.rs`'s located errors.

/// The 1-based line of a byte offset.
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    1 + text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
}

/// The line of `field = ...` in the fact that starts at `from`, else the
/// fact's own line.
pub(crate) fn field_line(text: &str, from: usize, field: &str) -> usize {
    let start = from.min(text.len());
    let mut offset = start;
    for (i, l) in text[start..].split_inclusive('\n').enumerate() {
        let t = l.trim_start();
        if i > 0 && t.starts_with('[') {
            break;
        }
        if let Some(rest) = t.strip_prefix(field)
            && rest.trim_start().starts_with('=')
        {
            return line_of(text, offset);
        }
        offset += l.len();
    }
    line_of(text, start)
}

/// `field `x`: ` when line `line` (1-based) sets a field `x = ...`.
pub(crate) fn field_named_on(text: &str, line: usize) -> String {
    let l = text.lines().nth(line - 1).unwrap_or("").trim_start();
    let name: String = l
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    if !name.is_empty() && l[name.len()..].trim_start().starts_with('=') {
        format!("field `{name}`: ")
    } else {
        String::new()
    }
}

pub(crate) fn valid_date(d: &str) -> bool {
    let b = d.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}
