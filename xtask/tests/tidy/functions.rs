//! The functions of a source file and their lengths, for the
//! function-length check.

/// The functions of a rustfmt-formatted source file, outside its
/// `#[cfg(test)]` modules: `(name, first line, lines)`, from the `fn` line
/// to the closing brace at the same indentation. Declarations without a
/// body (`fn f();`) and bodies on the `fn` line (`{}`) are not functions here.
pub fn functions(text: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let closes = |l: &str, at: usize| l.len() == at + 1 && indent(l) == at && l.ends_with('}');
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let at = indent(line);
        // A test module: skip to its end.
        if line.trim() == "#[cfg(test)]" && lines.get(i + 1).is_some_and(|l| l.ends_with('{')) {
            i += 2;
            while i < lines.len() && !closes(lines[i], at) {
                i += 1;
            }
            continue;
        }
        let mut words = line.split_whitespace().peekable();
        while words.peek().is_some_and(|w| {
            w.starts_with("pub") || matches!(*w, "const" | "async" | "unsafe" | "extern" | "\"C\"")
        }) {
            words.next();
        }
        if words.next() == Some("fn") {
            let name: String = words
                .next()
                .unwrap_or("")
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let head_end = (i..lines.len()).find(|&j| {
                let l = lines[j].trim_end();
                l.ends_with('{') || l.ends_with(';') || l.ends_with('}')
            });
            let body = head_end.filter(|&j| lines[j].trim_end().ends_with('{'));
            if let Some(k) = body.and_then(|j| (j + 1..lines.len()).find(|&k| closes(lines[k], at)))
            {
                out.push((name, i + 1, k - i + 1));
            }
        }
        i += 1;
    }
    out
}
