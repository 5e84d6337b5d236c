//! Final-state conditions, herd7 style: `exists (child.t0.r1 == 0 \/ x != 1)`.
//!
//! Grammar (`/\` and `&&` are the same, so are `\/` and `||`; `~` and `!` are not):
//! ```text
//! condition := "exists" expr
//! expr      := conj ( ("\/" | "||") conj )*
//! conj      := unary ( ("/\" | "&&") unary )*
//! unary     := ("~" | "!") unary | "(" expr ")" | atom
//! atom      := term ("==" | "!=") value
//!            | ("any" | "all") "(" register [range] ")" ("==" | "!=") value
//! term      := kernel "." thread "." reg [range]   |   location
//! register  := kernel "." thread "." reg           (a tile register)
//! range     := "[" n "]"   |   "[" a ".." b "]"
//! value     := number   |   a cudaError_t name (cudaSuccess, cudaErrorLaunchPendingCountExceeded, ...)
//! ```
//! A tile register (a load of a tile's range, [`crate::tile`]) is read word
//! by word: `any(k.t0.r0) == 0` holds when some word holds 0, `any(..) != 1`
//! when some word differs from 1, `all(k.t0.r0) == 1` when every word holds
//! 1, `all(..) != 0` when none holds 0; `k.t0.r0[5] == 0` compares word 5
//! (words are numbered as in the tile). A term is kept as its text:
//! `any(k.t0.r0[0..8])`.
//! The verdict a test expects is about this `exists`: forbidden (no final
//! state satisfies `expr`), allowed (some does), required (every one does).
//!
//! A condition nests `(` and `~` at most [`MAX_CONDITION_NESTING`] deep and
//! holds at most [`MAX_CONDITION_TERMS`] comparisons, so that parsing,
//! evaluating and dropping one never recurse deeper than that.

use std::fmt;

use crate::cuda_errors::cuda_error_value;
use crate::limits::{MAX_CONDITION_NESTING, MAX_CONDITION_TERMS};
use crate::state::State;

/// `exists <expr>`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Condition {
    pub expr: Expr,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Expr {
    Cmp { term: String, eq: bool, value: u32 },
    Not(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
}

impl Condition {
    /// Whether a final state satisfies the condition. Every term must be an
    /// observable of the state; validation ensures this for loaded specs.
    pub fn holds(&self, state: &State) -> Result<bool, String> {
        self.expr.eval(state)
    }

    /// Every term the condition mentions.
    pub fn terms(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.expr.collect_terms(&mut out);
        out
    }
}

impl Expr {
    pub fn eval(&self, state: &State) -> Result<bool, String> {
        Ok(match self {
            Expr::Cmp { term, eq, value } => match quantifier(term) {
                Some((all, inner)) => words_hold(state, inner, all, *eq, *value)
                    .ok_or_else(|| format!("`{term}` reads no tile register of this test"))?,
                None => {
                    let v = state
                        .get(term)
                        .ok_or_else(|| format!("`{term}` is not an observable of this test"))?;
                    (*v == *value) == *eq
                }
            },
            Expr::Not(e) => !e.eval(state)?,
            Expr::And(a, b) => a.eval(state)? && b.eval(state)?,
            Expr::Or(a, b) => a.eval(state)? || b.eval(state)?,
        })
    }

    fn collect_terms<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Expr::Cmp { term, .. } => out.push(term),
            Expr::Not(e) => e.collect_terms(out),
            Expr::And(a, b) | Expr::Or(a, b) => {
                a.collect_terms(out);
                b.collect_terms(out);
            }
        }
    }
}

impl fmt::Display for Condition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "exists {}", self.expr)
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Cmp { term, eq, value } => {
                write!(f, "{term} {} {value}", if *eq { "==" } else { "!=" })
            }
            Expr::Not(e) => write!(f, "~({e})"),
            Expr::And(a, b) => write!(f, "({a} /\\ {b})"),
            Expr::Or(a, b) => write!(f, "({a} \\/ {b})"),
        }
    }
}

/// The register (and range) inside `any(...)` or `all(...)`.
pub fn quantified(term: &str) -> Option<&str> {
    quantifier(term).map(|(_, inner)| inner)
}

/// `(true, inner)` for `all(inner)`, `(false, inner)` for `any(inner)`.
fn quantifier(term: &str) -> Option<(bool, &str)> {
    let inner = |q: &str| term.strip_prefix(q)?.strip_suffix(')');
    inner("any(")
        .map(|i| (false, i))
        .or_else(|| inner("all(").map(|i| (true, i)))
}

/// Whether some word (`all`: every word) of the tile register `inner`
/// (within its range, if it names one) compares with `value` as `eq` says;
/// `None` when the state holds no segment of it. A segment of one word
/// holds its value, one of more the set of its values as a mask
/// ([`crate::place::observe`]).
fn words_hold(state: &State, inner: &str, all: bool, eq: bool, value: u32) -> Option<bool> {
    let p = crate::place::Place::parse_term(inner).ok()?;
    let (lo, hi) = p.range.unwrap_or((0, u32::MAX));
    let prefix = format!("{}[", p.name);
    let bit = 1u32.checked_shl(value).unwrap_or(0);
    let mut seen = false;
    for (key, &v) in state.range(prefix.clone()..) {
        if !key.starts_with(&prefix) {
            break;
        }
        let Some((a, b)) = crate::place::Place::parse_term(key)
            .ok()
            .and_then(|k| k.range)
        else {
            continue;
        };
        if a < lo || b > hi {
            continue;
        }
        seen = true;
        // Some word equal, every word equal, for this segment.
        let (some_eq, every_eq) = if b == a + 1 {
            (v == value, v == value)
        } else {
            (v & bit != 0, v == bit)
        };
        // Some word differs, no word equal.
        let (some_ne, none_eq) = if b == a + 1 {
            (v != value, v != value)
        } else {
            (v & !bit != 0, v & bit == 0)
        };
        let holds = match (all, eq) {
            (false, true) => some_eq,
            (false, false) => some_ne,
            (true, true) => every_eq,
            (true, false) => none_eq,
        };
        if holds != all {
            return Some(holds);
        }
    }
    seen.then_some(all)
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Num(u32),
    Eq,
    Ne,
    And,
    Or,
    Not,
    LParen,
    RParen,
}

fn lex(s: &str) -> Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        let two = s.get(i..i + 2).unwrap_or("");
        if c.is_whitespace() {
            i += 1;
        } else if two == "==" {
            out.push(Tok::Eq);
            i += 2;
        } else if two == "!=" {
            out.push(Tok::Ne);
            i += 2;
        } else if two == "/\\" || two == "&&" {
            out.push(Tok::And);
            i += 2;
        } else if two == "\\/" || two == "||" {
            out.push(Tok::Or);
            i += 2;
        } else if c == '~' || c == '!' {
            out.push(Tok::Not);
            i += 1;
        } else if c == '(' {
            out.push(Tok::LParen);
            i += 1;
        } else if c == ')' {
            out.push(Tok::RParen);
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && (b[i] as char).is_ascii_digit() {
                i += 1;
            }
            let n = s[start..i]
                .parse()
                .map_err(|_| format!("number `{}` does not fit in 32 bits", &s[start..i]))?;
            out.push(Tok::Num(n));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < b.len() && {
                let d = b[i] as char;
                d.is_ascii_alphanumeric() || d == '_' || d == '.' || d == '-'
            } {
                i += 1;
            }
            // A word or a range of a tile register: `k.t0.r0[0..8]`.
            if b.get(i) == Some(&b'[') {
                match s[i..].find(']') {
                    Some(end) => i += end + 1,
                    None => return Err(format!("`[` at offset {i} is not closed by `]`")),
                }
            }
            out.push(Tok::Ident(s[start..i].to_string()));
        } else {
            return Err(format!("unexpected character `{c}` at offset {i}"));
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
    /// `(` and `~` open around the current token.
    depth: usize,
    /// Comparisons so far.
    terms: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        t
    }
    fn expr(&mut self) -> Result<Expr, String> {
        let mut lhs = self.conj()?;
        while self.peek() == Some(&Tok::Or) {
            self.pos += 1;
            lhs = Expr::Or(Box::new(lhs), Box::new(self.conj()?));
        }
        Ok(lhs)
    }
    fn conj(&mut self) -> Result<Expr, String> {
        let mut lhs = self.unary()?;
        while self.peek() == Some(&Tok::And) {
            self.pos += 1;
            lhs = Expr::And(Box::new(lhs), Box::new(self.unary()?));
        }
        Ok(lhs)
    }
    /// Enters a `(` or `~`, refusing to nest deeper than the limit.
    fn nest<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T, String>) -> Result<T, String> {
        if self.depth >= MAX_CONDITION_NESTING {
            return Err(format!(
                "`(` and `~` nest more than {MAX_CONDITION_NESTING} deep"
            ));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }
    fn unary(&mut self) -> Result<Expr, String> {
        match self.next() {
            Some(Tok::Not) => Ok(Expr::Not(Box::new(self.nest(Self::unary)?))),
            Some(Tok::LParen) => {
                let e = self.nest(Self::expr)?;
                match self.next() {
                    Some(Tok::RParen) => Ok(e),
                    other => Err(format!("expected `)`, found {}", show(other.as_ref()))),
                }
            }
            Some(Tok::Ident(q))
                if (q == "any" || q == "all") && self.peek() == Some(&Tok::LParen) =>
            {
                self.pos += 1;
                let inner = match self.next() {
                    Some(Tok::Ident(r)) => r,
                    other => {
                        return Err(format!(
                            "expected a tile register in `{q}(...)`, found {}",
                            show(other.as_ref())
                        ));
                    }
                };
                match self.next() {
                    Some(Tok::RParen) => self.compare(format!("{q}({inner})")),
                    other => Err(format!(
                        "expected `)` after `{q}({inner}`, found {}",
                        show(other.as_ref())
                    )),
                }
            }
            Some(Tok::Ident(term)) => self.compare(term),
            other => Err(format!(
                "expected a comparison, `(` or `~`, found {}",
                show(other.as_ref())
            )),
        }
    }

    /// The rest of a comparison after its term.
    fn compare(&mut self, term: String) -> Result<Expr, String> {
        self.terms += 1;
        if self.terms > MAX_CONDITION_TERMS {
            return Err(format!(
                "more than {MAX_CONDITION_TERMS} comparisons in one condition"
            ));
        }
        let eq = match self.next() {
            Some(Tok::Eq) => true,
            Some(Tok::Ne) => false,
            other => {
                return Err(format!(
                    "expected `==` or `!=` after `{term}`, found {}",
                    show(other.as_ref())
                ));
            }
        };
        match self.next() {
            Some(Tok::Num(value)) => Ok(Expr::Cmp { term, eq, value }),
            Some(Tok::Ident(name)) => match cuda_error_value(&name) {
                Some(value) => Ok(Expr::Cmp { term, eq, value }),
                None => Err(format!(
                    "`{name}` is neither a number nor a cudaError_t name"
                )),
            },
            other => Err(format!(
                "expected a number or a cudaError_t name, found {}",
                show(other.as_ref())
            )),
        }
    }
}

fn show(t: Option<&Tok>) -> String {
    match t {
        None => "end of condition".into(),
        Some(Tok::Ident(s)) => format!("`{s}`"),
        Some(Tok::Num(n)) => format!("`{n}`"),
        Some(t) => format!("{t:?}"),
    }
}

/// Parses `exists <expr>`.
pub fn parse(s: &str) -> Result<Condition, String> {
    let s = s.trim();
    let rest = s
        .strip_prefix("exists")
        .filter(|r| r.starts_with(|c: char| c.is_whitespace() || c == '('))
        .ok_or_else(|| "a condition starts with `exists`".to_string())?;
    let mut p = Parser {
        toks: lex(rest)?,
        pos: 0,
        depth: 0,
        terms: 0,
    };
    let expr = p.expr()?;
    if let Some(t) = p.peek() {
        return Err(format!("unexpected {} after the condition", show(Some(t))));
    }
    Ok(Condition { expr })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(pairs: &[(&str, u32)]) -> State {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn precedence_and_eval() {
        let c = parse("exists c.t0.r0 == 0 \\/ c.t0.r1 == 0 /\\ x != 1").unwrap();
        // `/\` binds tighter than `\/`.
        assert!(
            c.holds(&state(&[("c.t0.r0", 0), ("c.t0.r1", 1), ("x", 1)]))
                .unwrap()
        );
        assert!(
            !c.holds(&state(&[("c.t0.r0", 1), ("c.t0.r1", 0), ("x", 1)]))
                .unwrap()
        );
        assert!(
            c.holds(&state(&[("c.t0.r0", 1), ("c.t0.r1", 0), ("x", 0)]))
                .unwrap()
        );
        assert_eq!(c.terms(), vec!["c.t0.r0", "c.t0.r1", "x"]);
    }

    #[test]
    fn cuda_error_names_are_values() {
        let c =
            parse("exists k.t0.e0 == cudaErrorLaunchPendingCountExceeded /\\ e1 != cudaSuccess")
                .unwrap();
        assert!(c.holds(&state(&[("k.t0.e0", 69), ("e1", 65)])).unwrap());
        assert!(!c.holds(&state(&[("k.t0.e0", 69), ("e1", 0)])).unwrap());
    }

    #[test]
    fn negation_and_parentheses() {
        let c = parse("exists ~(a == 1 && b == 1)").unwrap();
        assert!(c.holds(&state(&[("a", 1), ("b", 0)])).unwrap());
        assert!(!c.holds(&state(&[("a", 1), ("b", 1)])).unwrap());
    }

    #[test]
    fn errors_are_messages() {
        assert!(parse("forall x == 1").unwrap_err().contains("exists"));
        assert!(parse("exists (x == 1").unwrap_err().contains("`)`"));
        assert!(
            parse("exists x = 1")
                .unwrap_err()
                .contains("unexpected character")
        );
        assert!(
            parse("exists x == 1 y")
                .unwrap_err()
                .contains("after the condition")
        );
        assert!(
            parse("exists e == cudaErrorNoSuchThing")
                .unwrap_err()
                .contains("neither a number nor a cudaError_t name")
        );
        let c = parse("exists y == 1").unwrap();
        assert!(c.holds(&state(&[("x", 1)])).unwrap_err().contains("`y`"));
    }

    #[test]
    fn nesting_and_size_are_bounded() {
        // Thousands of levels would overflow the stack when parsed,
        // evaluated or dropped: refused at the limit instead.
        for open in ["~", "(", "!("] {
            let deep = format!("exists {}x == 1", open.repeat(100_000));
            let e = parse(&deep).unwrap_err();
            assert!(e.contains("nest more than"), "{e}");
        }
        let at_limit = format!(
            "exists {}x == 1{}",
            "(".repeat(MAX_CONDITION_NESTING),
            ")".repeat(MAX_CONDITION_NESTING)
        );
        assert!(
            parse(&at_limit)
                .unwrap()
                .holds(&state(&[("x", 1)]))
                .unwrap()
        );
        let long = |n: usize| format!("exists x == 1{}", " /\\ x == 1".repeat(n - 1));
        let c = parse(&long(MAX_CONDITION_TERMS)).unwrap();
        assert!(c.holds(&state(&[("x", 1)])).unwrap());
        assert!(
            parse(&long(MAX_CONDITION_TERMS + 1))
                .unwrap_err()
                .contains("comparisons")
        );
    }
}
