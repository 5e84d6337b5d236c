//! Where in a facts file something is: the line of an offset, of a fact's
//! field, and the field a line sets; an architecture's number. (A date's
//! form is checked by `date.rs`, a device name's slug is
//! `gridcheck_record::slug`.)

/// The 1-based line of a byte offset.
pub(super) fn line_of(text: &str, offset: usize) -> usize {
    1 + text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
}

/// The line of `field = ...` in the fact that starts at `from`, else the
/// fact's own line.
pub(super) fn field_line(text: &str, from: usize, field: &str) -> usize {
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
pub(super) fn field_named_on(text: &str, line: usize) -> String {
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

/// `sm_90` → 90 (`sm_90a` → 90).
pub fn sm_number(sm: &str) -> Option<u32> {
    let digits: String = sm
        .strip_prefix("sm_")?
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().ok()
}
