//! Tiles: locations of more than one word.
//!
//! A litmus location is one 32-bit word, or a **tile**: an array of words
//! declared with its size, `x[1024]` in words or `x[4 KiB]` / `x[64 B]` in
//! bytes (a multiple of 4). An operation names a tile's words by a range,
//! `x[0..1024]` (words 0 to 1023), or one word, `x[5]`; a word location is
//! named bare, and a tile never is. A bulk copy moves a range to a range of
//! the same length; a store writes its value to every word of its range; a
//! load of a range fills a *tile register*, which a condition reads word by
//! word: `any(k.t0.r0) == 0` (some word holds 0), `all(k.t0.r0) == 1`,
//! `any(k.t0.r0[0..512]) == 0`, or one word, `k.t0.r0[17] == 0`.
//!
//! # How both models see a tile
//!
//! The decision (`spec/README.md`, "Tiles", states it beside the rules):
//!
//! - A tile is split into **segments** at every boundary the test names: the
//!   ends of every range an operation or a condition names, carried across
//!   bulk copies (a copy moves word `i` of its source to word `i` of its
//!   destination, so a boundary on one side is one on the other). Every
//!   operation of the test covers a segment whole or not at all, so the words
//!   of a segment are alike: each is a location of its own, with its own
//!   coherence order, and nothing orders them.
//! - A segment of one word is one location, exactly as a word location
//!   (at size 1 a tile *is* a word: `crates/oracle` checks both models on
//!   the asynchronous proxy's tests rewritten over one-word tiles).
//! - A segment of `w >= 2` words is modeled by `min(w, n)` **representative
//!   words**, `n` the number of distinct values the test's tiles can hold
//!   (their initial values and the values stored to more than one word; a
//!   copy only moves them): each a location, every operation on the segment
//!   an operation on each, in order. A read of the segment sees old or new
//!   values word by word.
//! - What a read of a segment of two or more words observes is the **set of
//!   values its words hold**, as a 32-bit mask (bit `v` for value `v`; a
//!   tile's values are 0 to 31, [`crate::place::MAX_TILE_VALUE`]); a read of one word
//!   observes its value. With one representative word per value, every set
//!   a single read can show on the GPU is reached. (Two reads of one segment
//!   in one test are each exact; which words of one read go with which of
//!   the other's is not kept.)
//! - A tile's final value is not an observable: a condition reads a tile
//!   through a register, as it reads shared memory.

use std::collections::{BTreeMap, BTreeSet};

use crate::ast::{Litmus, Op};
use crate::place::{Place, base, segment_key};

/// How a test's tiles are split into segments, and how many representative
/// words model a segment of several words (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TilePlan {
    segments: BTreeMap<String, Vec<(u32, u32)>>,
    representatives: u32,
}

impl TilePlan {
    /// The segments of `name`'s words `range`, in order; `None` when `name`
    /// is not a tile.
    pub fn split(&self, name: &str, (a, b): (u32, u32)) -> Option<Vec<(u32, u32)>> {
        let segs = self.segments.get(name)?;
        Some(
            segs.iter()
                .copied()
                .filter(|&(s, e)| s >= a && e <= b)
                .collect(),
        )
    }

    /// Representative words of a segment (see the module docs).
    pub fn modeled_words(&self, (a, b): (u32, u32)) -> u32 {
        (b - a).min(self.representatives.max(1))
    }
}

impl Litmus {
    /// Words of tile `name`; `None` for a word location (or none).
    pub fn tile_words(&self, name: &str) -> Option<u32> {
        self.tiles.iter().find(|(n, _)| n == name).map(|(_, w)| *w)
    }

    /// The key `name` is declared with: `x`, or `x[1024]` for a tile.
    pub fn declared_key(&self, name: &str) -> String {
        match self.tile_words(name) {
            Some(w) => format!("{name}[{w}]"),
            None => name.to_string(),
        }
    }

    /// The global word locations (`memory:` without its tiles): the final
    /// state's locations.
    pub fn word_locations(&self) -> impl Iterator<Item = &(String, u32)> {
        self.memory
            .iter()
            .filter(|(n, _)| self.tile_words(n).is_none())
    }

    /// Words of the test's largest location: 1 without tiles.
    pub fn largest_location_words(&self) -> u32 {
        self.tiles.iter().map(|(_, w)| *w).max().unwrap_or(1).max(1)
    }

    /// The tile each tile register is loaded from, by `kernel.thread.reg`.
    fn tile_registers(&self) -> BTreeMap<String, &str> {
        let mut out = BTreeMap::new();
        for k in &self.kernels {
            for t in &k.threads {
                for op in &t.ops {
                    if let Op::Load { reg, loc } = op
                        && self.tile_words(base(loc)).is_some()
                    {
                        out.insert(format!("{}.{}.{reg}", k.name, t.name), base(loc));
                    }
                }
            }
        }
        out
    }

    /// The test's tiles split into segments (see the module docs).
    pub fn tile_plan(&self) -> TilePlan {
        let mut cuts: BTreeMap<&str, BTreeSet<u32>> = self
            .tiles
            .iter()
            .map(|(n, w)| (n.as_str(), BTreeSet::from([0, *w])))
            .collect();
        let mut cut = |name: &str, (a, b): (u32, u32)| {
            if let Some(c) = cuts.get_mut(name) {
                c.insert(a);
                c.insert(b);
            }
        };
        let mut copies = Vec::new();
        for op in self
            .kernels
            .iter()
            .flat_map(|k| &k.threads)
            .flat_map(|t| &t.ops)
        {
            let places: Vec<Place> = op
                .locations()
                .into_iter()
                .filter_map(|l| Place::parse(l).ok())
                .collect();
            for p in &places {
                if let Some(r) = p.range {
                    cut(p.name, r);
                }
            }
            if let ([src, dst], true) = (&places[..], op.is_bulk_copy())
                && let (Some(s), Some(d)) = (src.range, dst.range)
            {
                copies.push((src.name, s.0, dst.name, d.0, s.1 - s.0));
            }
        }
        let registers = self.tile_registers();
        for term in self.condition.terms() {
            let inner = crate::condition::quantified(term).unwrap_or(term);
            if let Ok(p) = Place::parse_term(inner)
                && let (Some(r), Some(tile)) = (p.range, registers.get(p.name))
            {
                cut(tile, r);
            }
        }
        carry_cuts(&mut cuts, &copies);
        let segments = cuts
            .into_iter()
            .map(|(n, c)| {
                let c: Vec<u32> = c.into_iter().collect();
                (n.to_string(), c.windows(2).map(|w| (w[0], w[1])).collect())
            })
            .collect();
        TilePlan {
            segments,
            representatives: self.tile_values().len() as u32,
        }
    }

    /// The values the test's tiles can hold: their initial values and the
    /// values stored to more than one word.
    fn tile_values(&self) -> BTreeSet<u32> {
        let mut out: BTreeSet<u32> = self
            .memory
            .iter()
            .chain(&self.shared)
            .filter(|(n, _)| self.tile_words(n).is_some())
            .map(|(_, v)| *v)
            .collect();
        for op in self
            .kernels
            .iter()
            .flat_map(|k| &k.threads)
            .flat_map(|t| &t.ops)
        {
            if let Op::Store { loc, value } = op
                && Place::parse(loc).is_ok_and(|p| p.words() > 1)
            {
                out.insert(*value);
            }
        }
        out
    }

    /// The observables an operation of `kernel.thread` writes, each with
    /// the words it covers: a register (1), or one per segment of a tile
    /// load's range (see [`segment_key`]).
    pub fn op_observables(
        &self,
        plan: &TilePlan,
        kernel: &str,
        thread: &str,
        op: &Op,
    ) -> Vec<(String, u32)> {
        let Some(reg) = op.register() else {
            return Vec::new();
        };
        let name = format!("{kernel}.{thread}.{reg}");
        if let Op::Load { loc, .. } = op
            && let Ok(Place {
                name: tile,
                range: Some(r),
            }) = Place::parse(loc)
            && let Some(segs) = plan.split(tile, r)
        {
            return segs
                .into_iter()
                .map(|s| (segment_key(&name, s), s.1 - s.0))
                .collect();
        }
        vec![(name, 1)]
    }

    /// Every observable of the final state, in a fixed order: each
    /// register (of a load, `geterror`, `peekerror` or `devicesync <reg>`)
    /// as `kernel.thread.reg` in program order, a tile load's as one key a
    /// segment ([`Litmus::op_observables`]), then each word location by
    /// name (a tile's final value is not observed).
    pub fn observables(&self) -> Vec<String> {
        let plan = self.tile_plan();
        let mut out = Vec::new();
        for k in &self.kernels {
            for t in &k.threads {
                for op in &t.ops {
                    out.extend(
                        self.op_observables(&plan, &k.name, &t.name, op)
                            .into_iter()
                            .map(|(n, _)| n),
                    );
                }
            }
        }
        out.extend(self.word_locations().map(|(l, _)| l.clone()));
        out
    }
}

/// Carries boundaries across bulk copies, `(src, src_start, dst,
/// dst_start, words)` each, until none is added.
fn carry_cuts(cuts: &mut BTreeMap<&str, BTreeSet<u32>>, copies: &[(&str, u32, &str, u32, u32)]) {
    // Each pass adds at least one boundary or ends; boundaries lie within
    // the tiles, so this ends.
    loop {
        let mut added = false;
        for &(s, sa, d, da, n) in copies {
            for (from, fa, to, ta) in [(s, sa, d, da), (d, da, s, sa)] {
                let inside: Vec<u32> = cuts
                    .get(from)
                    .map(|c| c.range(fa..=fa.saturating_add(n)).map(|x| x - fa).collect())
                    .unwrap_or_default();
                if let Some(c) = cuts.get_mut(to) {
                    for x in inside {
                        added |= c.insert(ta + x);
                    }
                }
            }
        }
        if !added {
            return;
        }
    }
}
