//! A litmus test's locations, words and tiles: their declarations, the
//! places operations name (a word location bare, a tile by a range inside
//! it), bulk copies of ranges, and condition terms over tile registers
//! (see `crate::tile` for what they mean).

use std::collections::{BTreeMap, BTreeSet};

use super::{Cx, ItemErr};
use crate::ast::Op;
use crate::condition::quantified;
use crate::place::{BULK_WORDS, MAX_SHARED_BYTES, MAX_TILE_VALUE, Place, declaration};

impl Cx {
    /// The entries of `memory:` or `shared:` (`field`): each a word
    /// location's name or a tile's declaration, `x[1024]`. Returns the
    /// locations by name; the tiles go into `tiles` with their words.
    pub(super) fn declarations(
        &mut self,
        field: &str,
        raw: BTreeMap<String, u32>,
        tiles: &mut Vec<(String, u32)>,
        ie: &ItemErr,
    ) -> Vec<(String, u32)> {
        let mut out: Vec<(String, u32)> = Vec::new();
        for (key, init) in raw {
            let (name, words) = match declaration(&key) {
                Ok(d) => d,
                Err(m) => {
                    self.errors.push(ie.at(field, Some(&key), m));
                    continue;
                }
            };
            if !crate::place::is_ident(name) {
                self.errors.push(ie.at(
                    field,
                    Some(&key),
                    format!("`{name}` is not a valid location name"),
                ));
                continue;
            }
            if out.iter().any(|(n, _)| n == name) {
                self.errors
                    .push(ie.at(field, Some(&key), format!("`{name}` is declared twice")));
                continue;
            }
            if let Some(w) = words {
                if init > MAX_TILE_VALUE {
                    self.errors.push(ie.at(
                        field,
                        Some(&key),
                        format!(
                            "tile `{key}` starts at {init}; a tile's values are 0 to \
                             {MAX_TILE_VALUE} (a read of several words observes the set of its \
                             values as a 32-bit mask)"
                        ),
                    ));
                }
                tiles.push((name.to_string(), w));
            }
            out.push((name.to_string(), init));
        }
        out
    }

    /// A block's shared locations fit the generated kernel's static shared
    /// memory: at most [`MAX_SHARED_BYTES`], each location on 128-byte
    /// lines of its own (a word location one line).
    pub(super) fn shared_size(
        &mut self,
        shared: &[(String, u32)],
        tiles: &[(String, u32)],
        ie: &ItemErr,
    ) {
        let bytes: u64 = shared
            .iter()
            .map(|(n, _)| match tiles.iter().find(|(t, _)| t == n) {
                Some((_, w)) => u64::from(*w).div_ceil(32) * 128,
                None => 128,
            })
            .sum();
        if bytes > u64::from(MAX_SHARED_BYTES) {
            self.errors.push(ie.at(
                "shared",
                None,
                format!(
                    "the shared locations take {bytes} bytes of each block; a block holds at \
                     most {} KiB of them (the generated kernel's static shared memory)",
                    MAX_SHARED_BYTES / 1024
                ),
            ));
        }
    }
}

/// A test's location names: global (`memory:`) and shared (`shared:`),
/// and the tiles among them with their words.
pub(super) struct Locations<'a> {
    pub global: BTreeSet<&'a str>,
    pub shared: BTreeSet<&'a str>,
    pub tiles: BTreeMap<&'a str, u32>,
}

impl Locations<'_> {
    /// What is wrong with the places an operation names: each declared, of
    /// the kind it needs (a load or store takes either, a bulk copy's
    /// global side a global location and its shared side a shared one); a
    /// word location bare and a tile by a range inside it; a store of
    /// several words writes a tile's value; a bulk copy's sides are as
    /// long, in whole 16-byte units from a 16-byte boundary unless it moves
    /// one word.
    pub fn check(&self, op: &Op) -> Vec<String> {
        let mut errors = Vec::new();
        let mut place = |loc: &str, kind: Option<(bool, &str)>| -> Option<u32> {
            match self.place(op, loc, kind) {
                Ok(words) => Some(words),
                Err(m) => {
                    errors.push(m);
                    None
                }
            }
        };
        match op {
            Op::Store { loc, value } => {
                let words = place(loc, None);
                if words.is_some_and(|w| w > 1) && *value > MAX_TILE_VALUE {
                    errors.push(format!(
                        "`{op}` stores {value} to several words of a tile; a tile's values are \
                         0 to {MAX_TILE_VALUE}"
                    ));
                }
            }
            Op::Load { loc, .. } => {
                place(loc, None);
            }
            Op::BulkLoad { dst, src, .. } | Op::BulkStore { dst, src } => {
                let load = matches!(op, Op::BulkLoad { .. });
                let s = place(src, Some((!load, "the source")));
                let d = place(dst, Some((load, "the destination")));
                if let (Some(s), Some(d)) = (s, d) {
                    errors.extend(bulk_lengths(op, src, dst, s, d));
                    if s == 1 && d == 1 {
                        errors.extend(self.one_word_copy(op, [src, dst]));
                    }
                }
            }
            _ => {}
        }
        errors
    }

    /// The words `loc` names in `op`, or why it is wrong; `kind`: whether
    /// it must be shared (`true`) or global (`false`), and its role.
    fn place(&self, op: &Op, loc: &str, kind: Option<(bool, &str)>) -> Result<u32, String> {
        let p = Place::parse(loc)?;
        let name = p.name;
        let (global, shared) = (self.global.contains(name), self.shared.contains(name));
        match kind {
            None if !global && !shared => {
                return Err(if self.shared.is_empty() {
                    format!("location `{name}` is not declared in `memory`")
                } else {
                    format!("location `{name}` is not declared in `memory` or `shared`")
                });
            }
            Some((false, role)) if !global => {
                return Err(if shared {
                    format!(
                        "`{name}` is shared memory; {role} of `{op}` is a global location (`memory`)"
                    )
                } else {
                    format!("location `{name}` is not declared in `memory`")
                });
            }
            Some((true, role)) if !shared => {
                return Err(if global {
                    format!(
                        "`{name}` is global memory; {role} of `{op}` is a shared location (`shared`)"
                    )
                } else {
                    format!("location `{name}` is not declared in `shared`")
                });
            }
            _ => {}
        }
        match (self.tiles.get(name), p.range) {
            (None, None) => Ok(1),
            (None, Some(_)) => Err(format!(
                "`{loc}` in `{op}`: `{name}` is a word, not a tile: name it bare, `{name}` \
                 (declare `{name}[N]` for a tile of N words)"
            )),
            (Some(w), None) => Err(format!(
                "`{op}` names tile `{name}` ({w} words) as a word: name its words, \
                 `{name}[0..{w}]`, or one of them, `{name}[0]`"
            )),
            (Some(&w), Some((_, b))) if b > w => Err(format!(
                "`{loc}` in `{op}` is outside tile `{name}`, whose words are 0 to {}",
                w - 1
            )),
            (Some(_), Some(_)) => Ok(p.words()),
        }
    }
}

impl Locations<'_> {
    /// A bulk copy of one word moves the 16 bytes from its location, as for
    /// a word location: only a word location or a tile of one word has
    /// them to itself.
    fn one_word_copy(&self, op: &Op, sides: [&str; 2]) -> Option<String> {
        sides.iter().find_map(|loc| {
            let p = Place::parse(loc).ok()?;
            let w = *self.tiles.get(p.name)?;
            (w > 1).then(|| {
                format!(
                    "`{op}` copies one word of tile `{}`: a bulk copy moves 16 bytes, so a tile \
                     of more than one word is copied in whole 16-byte units ({BULK_WORDS} words)",
                    p.name
                )
            })
        })
    }
}

/// What is wrong with the lengths of a bulk copy's sides, `s` and `d`
/// words long.
fn bulk_lengths(op: &Op, src: &str, dst: &str, s: u32, d: u32) -> Vec<String> {
    if s != d {
        return vec![format!(
            "`{op}` copies {s} words into {d}: a bulk copy's sides are as long"
        )];
    }
    if s == 1 {
        return Vec::new();
    }
    let start = |loc: &str| {
        Place::parse(loc)
            .ok()
            .and_then(|p| p.range)
            .map_or(0, |r| r.0)
    };
    if [s, start(src), start(dst)]
        .iter()
        .any(|n| !n.is_multiple_of(BULK_WORDS))
    {
        return vec![format!(
            "`{op}` moves {s} words; a bulk copy of more than one word moves whole 16-byte units \
             ({BULK_WORDS} words) from a 16-byte boundary: its length and its sides' first \
             words are multiples of {BULK_WORDS}"
        )];
    }
    Vec::new()
}

/// Whether a condition term reads a tile register word by word: `any(..)`,
/// `all(..)` or one word `k.t0.r0[5]`.
pub(super) fn is_tile_term(term: &str) -> bool {
    quantified(term).is_some() || term.ends_with(']')
}

/// What is wrong with a condition term about tiles, if anything: a tile
/// register compared as a word, `any`/`all` of what is not a tile
/// register, a word or a range outside what its load read. `None` for a
/// term that is right, or not about tiles.
pub(super) fn tile_term(obs: &BTreeSet<String>, term: &str) -> Option<String> {
    let inner = quantified(term).unwrap_or(term);
    let p = match Place::parse_term(inner) {
        Ok(p) => p,
        Err(m) => return Some(m),
    };
    let prefix = format!("{}[", p.name);
    let segments: Vec<(u32, u32)> = obs
        .iter()
        .filter(|k| k.starts_with(&prefix))
        .filter_map(|k| Place::parse_term(k).ok()?.range)
        .collect();
    let read = segments
        .first()
        .map(|s| s.0)
        .zip(segments.last().map(|s| s.1));
    match (quantified(term).is_some(), p.range, read) {
        (false, None, Some((a, b))) => Some(format!(
            "`{term}` holds a tile (words {a} to {}): compare `any({term})`, `all({term})` or \
             one word, `{term}[{a}]`",
            b - 1
        )),
        (true, _, None) | (false, Some(_), None) => Some(format!(
            "`{term}` reads words of a tile register, and `{}` is not one (a `load` of a tile's \
             range is: `load r0 x[0..8]`)",
            p.name
        )),
        (_, Some((ra, rb)), Some((a, b))) if ra < a || rb > b => Some(format!(
            "`{term}` names {} of `{}`, which holds words {a} to {} only",
            if rb == ra + 1 {
                format!("word {ra}")
            } else {
                format!("words {ra} to {}", rb - 1)
            },
            p.name,
            b - 1
        )),
        _ => None,
    }
}
