//! README.md against the commands: its length, and every `cargo xtask` and
//! `gridcheck` command it names, spelled as the programs accept it.

use std::collections::{BTreeMap, BTreeSet};

/// The most lines README.md may have: its first screen says what the
/// project is and how to run it, the docs it links to say the rest.
pub const MAX_README_LINES: usize = 220;

/// The code of a Markdown text: each line of its fenced blocks, and each of
/// its inline code spans, whitespace made single spaces (a span may be
/// broken across lines).
pub fn code(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut prose = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if fenced {
            out.push(line.to_string());
        } else {
            prose.push_str(line);
            prose.push('\n');
        }
    }
    let flat = prose.split_whitespace().collect::<Vec<_>>().join(" ");
    out.extend(flat.split('`').skip(1).step_by(2).map(String::from));
    out
}

/// What follows each `program` word of a piece of code (the program run
/// by name or by path, `gridcheck` or `./.gpu-bundle/gridcheck`, or
/// quoted in a comment): its next two words, without the punctuation
/// that ends them.
fn invocations<'a>(code: &'a str, program: &str) -> Vec<Vec<&'a str>> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices(program) {
        let before = code[..at].chars().next_back();
        let after = &code[at + program.len()..];
        if before.is_none_or(|c| matches!(c, ' ' | '/' | '`')) && after.starts_with(' ') {
            let words = after.split_whitespace().take(2);
            out.push(
                words
                    .map(|w| w.trim_end_matches(['`', ',', '.', ';', ':', ')']))
                    .collect(),
            );
        }
    }
    out
}

/// A word that names a command or a choice of commands (`diff`,
/// `model|enumerate|gpu`), not an option, an argument or a placeholder.
fn command_word(w: &str) -> bool {
    w.starts_with(|c: char| c.is_ascii_lowercase())
        && w.chars()
            .all(|c| c.is_ascii_lowercase() || c == '-' || c == '|')
}

/// The commands of `cargo xtask help`'s text: each first word with its
/// subcommands (the second words that are command words), `help` among
/// them.
pub fn xtask_commands(usage: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    out.entry("help".into()).or_default();
    for line in usage
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
    {
        let mut words = line.split_whitespace();
        let Some(first) = words.next().filter(|w| command_word(w)) else {
            continue;
        };
        let subs = out.entry(first.to_string()).or_default();
        if let Some(second) = words.next().filter(|w| command_word(w)) {
            subs.extend(second.split('|').map(String::from));
        }
    }
    out
}

/// What README.md says that the programs do not: too many lines, a `cargo
/// xtask` command or subcommand that `xtask` (its commands from
/// [`xtask_commands`]) does not have, a `gridcheck` command that is not
/// one of `gridcheck`'s.
pub fn readme_problems(
    text: &str,
    xtask: &BTreeMap<String, BTreeSet<String>>,
    gridcheck: &BTreeSet<String>,
) -> Vec<String> {
    let mut problems = Vec::new();
    for piece in code(text) {
        for words in invocations(&piece, "cargo xtask") {
            let Some(first) = words.first().filter(|w| command_word(w)) else {
                continue;
            };
            let Some(subs) = xtask.get(*first) else {
                problems.push(format!("`{piece}`: cargo xtask has no command `{first}`"));
                continue;
            };
            let second = words.get(1).filter(|w| command_word(w) && !subs.is_empty());
            for sub in second.iter().flat_map(|w| w.split('|')) {
                if !subs.contains(sub) {
                    problems.push(format!("`{piece}`: cargo xtask {first} has no `{sub}`"));
                }
            }
        }
        for words in invocations(&piece, "gridcheck") {
            let Some(first) = words.first().filter(|w| command_word(w)) else {
                continue;
            };
            if !gridcheck.contains(*first) {
                problems.push(format!("`{piece}`: gridcheck has no command `{first}`"));
            }
        }
    }
    let lines = text.lines().count();
    if lines > MAX_README_LINES {
        problems.push(format!(
            "{lines} lines, over {MAX_README_LINES}: the first screen says what it is and how to run it, the docs the rest"
        ));
    }
    problems
}
