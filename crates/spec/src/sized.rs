//! A tile test made again at another size, or with another kind of reader:
//! what a sweep of a shape over sizes runs (`cargo xtask tiles sweep`), so
//! that what one test says at one size is tried at the sizes real kernels
//! move, by the same text at every size.
//!
//! - [`resized`] scales every tile of a test, and every range an operation
//!   or a condition names, by one ratio: the test's largest tile becomes
//!   `words` words. A range that does not scale to whole words (half of a
//!   tile of 2 words is one word, of 1 word none) is an error naming it.
//! - [`bulk_reads`] makes each generic load of a global tile a bulk copy
//!   into shared memory, waited for on an mbarrier, and a load of the copy:
//!   the reader a TMA kernel is. The copy lands in the test's shared tile
//!   when it holds the range (each block has its own copy of it), else in
//!   a new one.
//!
//! Both give a [`Litmus`] that is loaded again from its YAML
//! ([`crate::render`]) before it is used, so every sized test is one the
//! loader accepts (a tile past 64 KiB, shared memory past 48 KiB: its
//! error).

use crate::ast::{Litmus, Op};
use crate::condition::Expr;
use crate::place::Place;

/// The shared tile a bulk reader makes when the test has none that holds
/// its range, and its mbarriers' prefix (`rb0`, `rb1`: one a copy).
pub const READER_TILE: &str = "rd";
pub const READER_BAR: &str = "rb";

/// `l` with its largest tile at `words` words and every other tile, range
/// and index scaled by the same ratio.
pub fn resized(l: &Litmus, words: u32) -> Result<Litmus, String> {
    let from = l
        .tiles
        .iter()
        .map(|(_, w)| *w)
        .max()
        .ok_or("the test has no tile to resize")?;
    if words == 0 {
        return Err("a tile holds at least one word".into());
    }
    let scale = |n: u32, what: &str| -> Result<u32, String> {
        let v = u64::from(n) * u64::from(words);
        if !v.is_multiple_of(u64::from(from)) {
            return Err(format!(
                "{what}: {n} of {from} words is not a whole number of words at {words}"
            ));
        }
        u32::try_from(v / u64::from(from)).map_err(|_| format!("{what}: too large"))
    };
    let mut out = l.clone();
    for (name, w) in &mut out.tiles {
        *w = scale(*w, &format!("tile `{name}`"))?;
    }
    for t in out.kernels.iter_mut().flat_map(|k| &mut k.threads) {
        for op in &mut t.ops {
            for loc in places_mut(op) {
                *loc = scale_place(loc, &scale)?;
            }
        }
    }
    map_terms(&mut out.condition.expr, &mut |term| {
        // The register inside `any(...)` / `all(...)`, as the condition
        // reads it, or the whole term.
        let inner = crate::condition::quantified(term).unwrap_or(term);
        let start = term.find(inner).unwrap_or(0);
        let end = start + inner.len();
        Ok(format!(
            "{}{}{}",
            &term[..start],
            scale_place(inner, &scale)?,
            &term[end..]
        ))
    })?;
    Ok(out)
}

/// `l` with each generic load of a global tile made a bulk copy into
/// shared memory, an mbarrier wait and a load of the shared copy; `None`
/// when it has no such load.
pub fn bulk_reads(l: &Litmus) -> Result<Option<Litmus>, String> {
    let mut out = l.clone();
    let mut new_tile = 0u32;
    let mut made = 0usize;
    for t in out.kernels.iter_mut().flat_map(|k| &mut k.threads) {
        let mut ops = Vec::with_capacity(t.ops.len());
        for op in std::mem::take(&mut t.ops) {
            let Op::Load { reg, loc } = &op else {
                ops.push(op);
                continue;
            };
            let p = Place::parse(loc)?;
            let Some((a, b)) = p
                .range
                .filter(|_| !l.is_shared(loc) && l.tile_words(p.name).is_some())
            else {
                ops.push(op);
                continue;
            };
            let dst = match l
                .shared
                .iter()
                .find(|(n, _)| l.tile_words(n).is_some_and(|w| w >= b))
            {
                Some((n, _)) => format!("{n}[{a}..{b}]"),
                None => {
                    new_tile = new_tile.max(b - a);
                    format!("{READER_TILE}[0..{}]", b - a)
                }
            };
            let bar = format!("{READER_BAR}{made}");
            made += 1;
            ops.push(Op::BulkLoad {
                dst: dst.clone(),
                src: loc.clone(),
                bar: bar.clone(),
            });
            ops.push(Op::MbarWait { bar });
            ops.push(Op::Load {
                reg: reg.clone(),
                loc: dst,
            });
        }
        t.ops = ops;
    }
    if new_tile > 0 {
        out.shared.push((READER_TILE.into(), 0));
        out.tiles.push((READER_TILE.into(), new_tile));
    }
    Ok((made > 0).then_some(out))
}

/// The location operands of an operation.
fn places_mut(op: &mut Op) -> Vec<&mut String> {
    match op {
        Op::Store { loc, .. } | Op::Load { loc, .. } => vec![loc],
        Op::BulkLoad { dst, src, .. } | Op::BulkStore { dst, src } => vec![dst, src],
        _ => Vec::new(),
    }
}

/// `x[a..b]` (or `x[i]`) with its bounds scaled; a bare name as it is.
fn scale_place(
    text: &str,
    scale: &impl Fn(u32, &str) -> Result<u32, String>,
) -> Result<String, String> {
    let p = Place::parse_term(text)?;
    let Some((a, b)) = p.range else {
        return Ok(text.to_string());
    };
    let what = format!("`{text}`");
    let range = if b == a + 1 && !text.contains("..") {
        let i = scale(a, &what)?;
        (i, i + 1)
    } else {
        (scale(a, &what)?, scale(b, &what)?)
    };
    Ok(Place {
        name: p.name,
        range: Some(range),
    }
    .to_string())
}

/// Rewrites every term of a condition.
fn map_terms(
    e: &mut Expr,
    f: &mut impl FnMut(&str) -> Result<String, String>,
) -> Result<(), String> {
    match e {
        Expr::Cmp { term, .. } => *term = f(term)?,
        Expr::Not(x) => map_terms(x, f)?,
        Expr::And(a, b) | Expr::Or(a, b) => {
            map_terms(a, f)?;
            map_terms(b, f)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
