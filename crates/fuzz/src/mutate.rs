//! The mutations of spec text (line and token edits, nesting and alias
//! bombs, files joined) and the damage done to results files, as proptest
//! strategies, and how each is applied.

use std::path::PathBuf;

use gridcheck_spec::limits::MAX_FILE_BYTES;
use proptest::prelude::*;

/// Tokens of YAML and of the DSL that mutations insert.
const TOKENS: &[&str] = &[
    "[",
    "]",
    "{",
    "}",
    ": ",
    "- ",
    ", ",
    "&a ",
    "*a",
    "<<: *a",
    "? ",
    "|",
    ">-",
    "#",
    "\"",
    "'",
    "\\",
    "\n",
    "\r",
    "\t",
    "\u{2028}",
    "\u{85}",
    "---\n",
    "...\n",
    "%YAML 1.2\n",
    "!!binary ",
    "~",
    "(",
    ")",
    "!",
    "/\\",
    "\\/",
    "&&",
    "||",
    "==",
    "!=",
    "exists ",
    "t0",
    "t01",
    "t1",
    "t29",
    "t30",
    "t9999",
    "r0",
    "x",
    "launch ",
    "store x 1",
    "load r0 x",
    "syncthreads",
    "devicesync",
    "geterror e0",
    "host-pdl",
    "device",
    "0",
    "-1",
    "4294967296",
    "1e9",
    "null",
    "true",
    "cudaSuccess",
    "cudaErrorLaunchPendingCountExceeded",
    "kind: litmus",
    "kind: runtime",
    "kind: host",
    "kind: compile",
    "expect: forbidden",
    "1-bad-name",
    "sm_90",
    "\u{0}",
    "é",
];

/// One change to a text.
#[derive(Debug, Clone)]
pub enum Mutation {
    DeleteLine(usize),
    DuplicateLine(usize),
    SwapLines(usize, usize),
    /// A token at a line and a column (both taken modulo the text's).
    Insert(usize, usize, usize),
    /// A line's value (after `: `) replaced by a token.
    ReplaceValue(usize, usize),
    /// A line repeated many times.
    Repeat(usize, usize),
    /// A token repeated many times at a position (nesting, conditions).
    Nest(usize, usize, usize, usize),
    Indent(usize, i8),
    /// A line of another spec file.
    Splice(usize, usize, usize),
    /// An anchored long value and many aliases of it.
    AliasBomb(usize, usize, usize),
    Truncate(usize),
}

pub fn mutation() -> impl Strategy<Value = Mutation> {
    let n = any::<usize>;
    prop_oneof![
        1 => n().prop_map(Mutation::DeleteLine),
        1 => n().prop_map(Mutation::DuplicateLine),
        1 => (n(), n()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        4 => (n(), n(), n()).prop_map(|(a, b, c)| Mutation::Insert(a, b, c)),
        2 => (n(), n()).prop_map(|(a, b)| Mutation::ReplaceValue(a, b)),
        1 => (n(), 2usize..3000).prop_map(|(a, k)| Mutation::Repeat(a, k)),
        1 => (n(), n(), n(), prop_oneof![2usize..64, 64usize..100_000])
            .prop_map(|(a, b, t, k)| Mutation::Nest(a, b, t, k)),
        1 => (n(), -8i8..8).prop_map(|(a, d)| Mutation::Indent(a, d)),
        1 => (n(), n(), n()).prop_map(|(a, f, l)| Mutation::Splice(a, f, l)),
        1 => (n(), 1usize..70_000, 1usize..5000).prop_map(|(a, len, k)| Mutation::AliasBomb(a, len, k)),
        1 => n().prop_map(Mutation::Truncate),
    ]
}

fn floor_char(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Applies `muts` to `text`; `others` are the files lines are spliced from.
pub fn mutate(text: &str, others: &[(PathBuf, String)], muts: &[Mutation]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for m in muts {
        if lines.is_empty() {
            lines.push(String::new());
        }
        let at = |i: usize| i % lines.len();
        match *m {
            Mutation::DeleteLine(i) => {
                lines.remove(at(i));
            }
            Mutation::DuplicateLine(i) => {
                let l = lines[at(i)].clone();
                lines.insert(at(i), l);
            }
            Mutation::SwapLines(a, b) => {
                let (a, b) = (at(a), at(b));
                lines.swap(a, b);
            }
            Mutation::Insert(i, c, t) => {
                let i = at(i);
                let l = &mut lines[i];
                let c = floor_char(l, c % (l.len() + 1));
                l.insert_str(c, TOKENS[t % TOKENS.len()]);
            }
            Mutation::ReplaceValue(i, t) => {
                let i = at(i);
                let l = &mut lines[i];
                if let Some(p) = l.find(": ") {
                    l.truncate(p + 2);
                    l.push_str(TOKENS[t % TOKENS.len()]);
                }
            }
            Mutation::Repeat(i, k) => {
                let i = at(i);
                let l = lines[i].clone();
                let k = k.min(MAX_FILE_BYTES * 2 / (l.len() + 1));
                lines.splice(i..i, std::iter::repeat_n(l, k));
            }
            Mutation::Nest(i, c, t, k) => {
                let i = at(i);
                let tok = ["[", "{", "~", "(", "[[", "~(", "{a: ", "- "][t % 8];
                let close = match tok {
                    "[" | "[[" => "]",
                    "{" | "{a: " => "}",
                    "~(" | "(" => ")",
                    _ => "",
                };
                let l = &mut lines[i];
                let c = floor_char(l, c % (l.len() + 1));
                let mut s = tok.repeat(k);
                s.push_str("x == 1");
                s.push_str(&close.repeat(k));
                l.insert_str(c, &s);
            }
            Mutation::Indent(i, d) => {
                let i = at(i);
                let l = &mut lines[i];
                if d > 0 {
                    l.insert_str(0, &" ".repeat(d as usize));
                } else {
                    let n = l.len() - l.trim_start_matches(' ').len();
                    l.drain(..n.min((-d) as usize));
                }
            }
            Mutation::Splice(i, f, l) => {
                if let Some((_, other)) = others.get(f % others.len().max(1)) {
                    let ol: Vec<&str> = other.lines().collect();
                    if !ol.is_empty() {
                        let i = at(i);
                        lines.insert(i, ol[l % ol.len()].to_string());
                    }
                }
            }
            Mutation::AliasBomb(i, len, k) => {
                let i = at(i);
                let l = &mut lines[i];
                let head = match l.find(": ") {
                    Some(p) => l[..p + 2].to_string(),
                    None => "    tests: ".into(),
                };
                *l = format!("{head}[&b {}{}]", "n".repeat(len), ", *b".repeat(k));
            }
            Mutation::Truncate(i) => {
                let i = at(i);
                lines.truncate(i.max(1));
            }
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// Byte-level damage to a results file.
#[derive(Debug, Clone)]
pub enum Damage {
    Cut(usize),
    Flip(usize, u8),
    Insert(usize, Vec<u8>),
    DuplicateRange(usize, usize),
    DeleteRange(usize, usize),
}

pub fn damage() -> impl Strategy<Value = Damage> {
    let n = any::<usize>;
    prop_oneof![
        n().prop_map(Damage::Cut),
        (n(), any::<u8>()).prop_map(|(a, b)| Damage::Flip(a, b)),
        (
            n(),
            prop_oneof![
                proptest::collection::vec(any::<u8>(), 1..16),
                Just(b"\xff\xfe".to_vec()),
                Just(b"\n".to_vec()),
                Just(b"{\"trial\":".to_vec()),
            ]
        )
            .prop_map(|(a, b)| Damage::Insert(a, b)),
        (n(), 0usize..4096).prop_map(|(a, l)| Damage::DuplicateRange(a, l)),
        (n(), 0usize..4096).prop_map(|(a, l)| Damage::DeleteRange(a, l)),
    ]
}

pub fn apply_damage(bytes: &[u8], ds: &[Damage]) -> Vec<u8> {
    let mut b = bytes.to_vec();
    for d in ds {
        let at = |i: usize, b: &Vec<u8>| i % (b.len() + 1);
        match d {
            Damage::Cut(i) => b.truncate(at(*i, &b)),
            Damage::Flip(i, x) => {
                if !b.is_empty() {
                    let i = i % b.len();
                    b[i] ^= x;
                }
            }
            Damage::Insert(i, v) => {
                let i = at(*i, &b);
                b.splice(i..i, v.iter().copied());
            }
            Damage::DuplicateRange(i, l) => {
                let i = at(*i, &b);
                let j = (i + l).min(b.len());
                let r = b[i..j].to_vec();
                b.splice(j..j, r);
            }
            Damage::DeleteRange(i, l) => {
                let i = at(*i, &b);
                let j = (i + l).min(b.len());
                b.drain(i..j);
            }
        }
    }
    b
}
