//! Memory cells, mbarriers and bulk copies as a test's operations name
//! them: the test's global word locations, a cell for each shared location
//! each block uses and for each representative word of a tile's segment,
//! an mbarrier for each block's name, and each `bulkload` or `bulkstore`
//! with the events it adds (a read and a write a word, its completion).
//! `program.rs` resolves a test through it; `relations.rs` gives the
//! copies their orders, `proxy.rs` the proxy fences.
//!
//! Tiles (`gridcheck_spec::tile`; the decision in `spec/README.md`): the
//! words of a segment are alike and unordered, each its own location; a
//! segment of one word is one cell, a segment of several its
//! representative words, a cell each.

use std::collections::BTreeMap;

use gridcheck_spec::{Litmus, Place, TilePlan};

use crate::error::{AxiomError, ErrorKind};

/// A bulk copy: its issuing operation, the cells it reads and writes, and
/// its events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ACopy {
    /// The issuing thread and the operation's index in it.
    pub thread: usize,
    pub op: usize,
    /// Cells, a word at a time: `(source, destination)`.
    pub words: Vec<(usize, usize)>,
    /// A bulk load's mbarrier; `None` for a bulk store.
    pub mbar: Option<usize>,
    /// Events: per word its read of the source (through the asynchronous
    /// proxy) and its write of the destination (the value that read took);
    /// its completion.
    pub reads: Vec<usize>,
    pub writes: Vec<usize>,
    pub done: usize,
}

/// The cells of a tile's representative word: the owning block (a shared
/// tile's), the tile, its segment's first word, the word's index among the
/// segment's representatives.
type TileWord<'a> = (Option<(usize, usize)>, &'a str, u32, u32);

/// The names a test's operations use, resolved as the threads are.
#[derive(Debug)]
pub(crate) struct Cells<'a> {
    l: &'a Litmus,
    /// Name and initial value of each cell: the global word locations
    /// first (`globals` of them).
    pub cells: Vec<(String, u32)>,
    pub globals: usize,
    plan: TilePlan,
    shared: BTreeMap<(usize, usize, &'a str), usize>,
    tiles: BTreeMap<TileWord<'a>, usize>,
    mbars: BTreeMap<(usize, usize, &'a str), usize>,
    /// Copies with their events still unnumbered (see [`Cells::number`]).
    pub copies: Vec<ACopy>,
}

impl<'a> Cells<'a> {
    pub(crate) fn new(l: &'a Litmus) -> Cells<'a> {
        let cells: Vec<(String, u32)> = l.word_locations().cloned().collect();
        Cells {
            l,
            globals: cells.len(),
            cells,
            plan: l.tile_plan(),
            shared: BTreeMap::new(),
            tiles: BTreeMap::new(),
            mbars: BTreeMap::new(),
            copies: Vec::new(),
        }
    }

    /// The test being resolved.
    pub(crate) fn litmus(&self) -> &'a Litmus {
        self.l
    }

    /// How the test's tiles are split and modeled.
    pub(crate) fn plan(&self) -> &TilePlan {
        &self.plan
    }

    /// The cells `operand` names in block `kb`, in order: a word location's
    /// one, or each representative word of each segment of a tile's range.
    pub(crate) fn place(
        &mut self,
        kb: (usize, usize),
        operand: &'a str,
    ) -> Result<Vec<usize>, AxiomError> {
        let p = Place::parse(operand).map_err(|m| AxiomError::new(ErrorKind::Invalid, m))?;
        let Some(range) = p.range else {
            return Ok(vec![self.cell(kb, p.name)?]);
        };
        let Some(segments) = self.plan.split(p.name, range) else {
            return Err(AxiomError::new(
                ErrorKind::Invalid,
                format!("`{operand}`: `{}` is not a tile", p.name),
            ));
        };
        let (owner, init) = match self.l.memory.iter().find(|(m, _)| m == p.name) {
            Some((_, v)) => (None, *v),
            None => match self.l.shared.iter().find(|(m, _)| m == p.name) {
                Some((_, v)) => (Some(kb), *v),
                None => {
                    return Err(AxiomError::new(
                        ErrorKind::Invalid,
                        format!("location `{}` is not declared", p.name),
                    ));
                }
            },
        };
        let mut out = Vec::new();
        for (a, b) in segments {
            for j in 0..self.plan.modeled_words((a, b)) {
                let next = self.cells.len();
                let cell = *self.tiles.entry((owner, p.name, a, j)).or_insert(next);
                if cell == next {
                    let block = owner.map_or(String::new(), |(ki, bl)| {
                        format!("{}.b{bl}.", self.l.kernels[ki].name)
                    });
                    self.cells
                        .push((format!("{block}{}[{a}..{b}]#{j}", p.name), init));
                }
                out.push(cell);
            }
        }
        Ok(out)
    }

    /// The cell word location `name` names in block `block` of kernel
    /// `ki`: a global location, or that block's copy of a shared one.
    fn cell(&mut self, (ki, block): (usize, usize), name: &'a str) -> Result<usize, AxiomError> {
        if let Some(i) = self.cells[..self.globals]
            .iter()
            .position(|(m, _)| m == name)
        {
            return Ok(i);
        }
        let Some((_, init)) = self.l.shared.iter().find(|(m, _)| m == name) else {
            return Err(AxiomError::new(
                ErrorKind::Invalid,
                format!("location `{name}` is not declared"),
            ));
        };
        let next = self.cells.len();
        let cell = *self.shared.entry((ki, block, name)).or_insert(next);
        if cell == next {
            let kernel = &self.l.kernels[ki].name;
            self.cells
                .push((format!("{kernel}.b{block}.{name}"), *init));
        }
        Ok(cell)
    }

    /// The mbarrier `name` of block `block` of kernel `ki`.
    pub(crate) fn mbar(&mut self, (ki, block): (usize, usize), name: &'a str) -> usize {
        let next = self.mbars.len();
        *self.mbars.entry((ki, block, name)).or_insert(next)
    }

    /// Adds the copy of operation `op` of thread `thread` (of block `kb`).
    pub(crate) fn copy(
        &mut self,
        (thread, op, kb): (usize, usize, (usize, usize)),
        (src, dst): (&'a str, &'a str),
        mbar: Option<usize>,
    ) -> Result<usize, AxiomError> {
        let (src, dst) = (self.place(kb, src)?, self.place(kb, dst)?);
        if src.len() != dst.len() {
            return Err(AxiomError::new(
                ErrorKind::Invalid,
                "a bulk copy's sides are modeled by different numbers of words",
            ));
        }
        self.copies.push(ACopy {
            thread,
            op,
            words: src.into_iter().zip(dst).collect(),
            mbar,
            reads: Vec::new(),
            writes: Vec::new(),
            done: 0,
        });
        Ok(self.copies.len() - 1)
    }

    /// Numbers the copies' events from `next` (a copy's reads, its writes,
    /// its completion), then one event per mbarrier (its phase's
    /// completion); returns those and the next free event.
    pub(crate) fn number(&mut self, mut next: usize) -> (Vec<usize>, usize) {
        for c in &mut self.copies {
            let n = c.words.len();
            c.reads = (next..next + n).collect();
            c.writes = (next + n..next + 2 * n).collect();
            c.done = next + 2 * n;
            next += 2 * n + 1;
        }
        let phases = (next..next + self.mbars.len()).collect();
        (phases, next + self.mbars.len())
    }
}
