//! The names of a litmus test's operations as compilation resolves them
//! (`compile.rs`): memory cells (the global word locations, then a cell
//! for each shared location each block uses and for each representative
//! word of a tile's segment), mbarriers (one per block and name), and the
//! bulk copies with what each needs at run time.
//!
//! Tiles (`gridcheck_spec::tile`, the decision in `spec/README.md`): a
//! segment of one word is one cell, as a word location; a segment of
//! several words is its representative words, each a cell of its own, and
//! an operation on the segment is the same operation on each, in order.

use std::collections::BTreeMap;

use gridcheck_spec::{Litmus, Place, TilePlan};

use crate::error::{ErrorKind, ModelError};
use crate::program::{Awaited, Copy, KernelInfo, MOp, Start, ThreadInfo};

fn err(msg: impl Into<String>) -> ModelError {
    ModelError::new(ErrorKind::Invalid, msg)
}

/// The cells of a tile's representative word: the tile, its segment's
/// first word and the word's index among the segment's representatives;
/// with the kernel and block for a shared tile.
type TileWord<'a> = (Option<(usize, usize)>, &'a str, u32, u32);

/// An operand's cells, segment by segment: each segment's width in words
/// and its cells (one for a word location or a segment of one word; a
/// segment of several has its representative words, see
/// `gridcheck_spec::tile`).
pub(crate) type Segments = Vec<(u32, Vec<usize>)>;

/// The test's memory cells, mbarriers and bulk copies as compilation
/// resolves them: the global word locations first, then a cell for each
/// shared word location each block uses and for each representative word
/// of a tile's segment (a shared tile's per block); an mbarrier for each
/// block's name.
pub(crate) struct Names<'a> {
    pub l: &'a Litmus,
    /// How the test's tiles are split and modeled.
    pub plan: TilePlan,
    pub cells: Vec<(String, u32)>,
    /// The global word locations: cells `0..globals`.
    pub globals: usize,
    shared: BTreeMap<(usize, usize, &'a str), usize>,
    tiles: BTreeMap<TileWord<'a>, usize>,
    pub mbars: BTreeMap<(usize, usize, &'a str), usize>,
    pub copies: Vec<Copy>,
    store_ids: u32,
    /// Reads of the copies so far, over their words.
    copy_reads: usize,
}

impl<'a> Names<'a> {
    pub(crate) fn new(l: &'a Litmus) -> Names<'a> {
        let cells: Vec<(String, u32)> = l.word_locations().cloned().collect();
        Names {
            l,
            plan: l.tile_plan(),
            globals: cells.len(),
            cells,
            shared: BTreeMap::new(),
            tiles: BTreeMap::new(),
            mbars: BTreeMap::new(),
            copies: Vec::new(),
            store_ids: 0,
            copy_reads: 0,
        }
    }

    /// The cells `operand` names for a thread of block `kb`, segment by
    /// segment: a word location's one cell, or the representative words of
    /// each segment of a tile's range.
    pub(crate) fn place(
        &mut self,
        kb: (usize, usize),
        operand: &'a str,
    ) -> Result<Segments, ModelError> {
        let p = Place::parse(operand).map_err(err)?;
        let Some(range) = p.range else {
            return Ok(vec![(1, vec![self.cell(kb, p.name)?])]);
        };
        let segments = self
            .plan
            .split(p.name, range)
            .ok_or_else(|| err(format!("`{operand}`: `{}` is not a tile", p.name)))?;
        let global = self.l.memory.iter().find(|(m, _)| m == p.name);
        let (owner, init) = match global {
            Some((_, v)) => (None, *v),
            None => (
                Some(kb),
                self.l
                    .shared
                    .iter()
                    .find(|(m, _)| m == p.name)
                    .map(|(_, v)| *v)
                    .ok_or_else(|| err(format!("location `{}` is not declared", p.name)))?,
            ),
        };
        let mut out = Vec::new();
        for (a, b) in segments {
            let cells = (0..self.plan.modeled_words((a, b)))
                .map(|j| {
                    let next = self.cells.len();
                    let cell = *self.tiles.entry((owner, p.name, a, j)).or_insert(next);
                    if cell == next {
                        let block = owner.map_or(String::new(), |(ki, bl)| {
                            format!("{}.b{bl}.", self.l.kernels[ki].name)
                        });
                        self.cells
                            .push((format!("{block}{}[{a}..{b}]#{j}", p.name), init));
                    }
                    cell
                })
                .collect();
            out.push((b - a, cells));
        }
        Ok(out)
    }

    /// The cell of word location `name` for a thread of block `block` of
    /// kernel `ki`: a global location, or the block's copy of a shared one.
    fn cell(&mut self, (ki, block): (usize, usize), name: &'a str) -> Result<usize, ModelError> {
        if let Some(i) = self.cells[..self.globals]
            .iter()
            .position(|(m, _)| m == name)
        {
            return Ok(i);
        }
        let init = self
            .l
            .shared
            .iter()
            .find(|(m, _)| m == name)
            .map(|(_, v)| *v)
            .ok_or_else(|| err(format!("location `{name}` is not declared")))?;
        let next = self.cells.len();
        let cell = *self.shared.entry((ki, block, name)).or_insert(next);
        if cell == next {
            let kernel = &self.l.kernels[ki].name;
            self.cells.push((format!("{kernel}.b{block}.{name}"), init));
        }
        Ok(cell)
    }

    pub(crate) fn mbar(&mut self, (ki, block): (usize, usize), name: &'a str) -> usize {
        let next = self.mbars.len();
        *self.mbars.entry((ki, block, name)).or_insert(next)
    }

    pub(crate) fn store_id(&mut self) -> u32 {
        self.store_ids += 1;
        self.store_ids
    }

    /// Bulk copy of thread `tid` (block `kb`) from `src` to `dst`: word
    /// `i` of the source to word `i` of the destination, which lie in
    /// segments alike (the plan carries boundaries across copies).
    pub(crate) fn copy(
        &mut self,
        (tid, kb): (usize, (usize, usize)),
        (src, dst): (&'a str, &'a str),
        mbar: Option<usize>,
    ) -> Result<usize, ModelError> {
        let (from, to) = (self.place(kb, src)?, self.place(kb, dst)?);
        let words: Vec<(usize, usize)> = from
            .iter()
            .flat_map(|(_, c)| c)
            .copied()
            .zip(to.iter().flat_map(|(_, c)| c).copied())
            .collect();
        let widths = |s: &Segments| s.iter().map(|(w, c)| (*w, c.len())).collect::<Vec<_>>();
        if widths(&from) != widths(&to) {
            return Err(err(format!(
                "the bulk copy of `{src}` into `{dst}` moves segments that differ"
            )));
        }
        let id = self.store_id();
        self.copies.push(Copy {
            thread: tid,
            stale: vec![0; words.len()],
            first_read: self.copy_reads,
            words,
            id,
            mbar,
            awaited: Awaited::default(),
        });
        self.copy_reads += self.copies.last().map_or(0, |c| c.words.len());
        Ok(self.copies.len() - 1)
    }

    /// Each copy's [`Copy::stale`], a word at a time: the test's writes to
    /// the word's source (the most log positions its read may reach back),
    /// when a generic access to it may happen before the copy's issue with
    /// no proxy fence between ([`Unfenced`]); 0 otherwise.
    pub(crate) fn stale_options(&mut self, threads: &[ThreadInfo], kernels: &[KernelInfo]) {
        let mut writes = vec![0usize; self.cells.len()];
        for t in threads {
            for op in &t.ops {
                if let MOp::Store { loc, .. } = op {
                    writes[*loc] += 1;
                }
            }
        }
        for c in &self.copies {
            for &(_, dst) in &c.words {
                writes[dst] += 1;
            }
        }
        let stale: Vec<Vec<usize>> = (0..self.copies.len())
            .map(|ci| {
                let c = &self.copies[ci];
                let t = &threads[c.thread];
                let issue = t
                    .ops
                    .iter()
                    .position(|op| *op == MOp::Bulk { copy: ci })
                    .unwrap_or(0);
                c.words
                    .iter()
                    .map(|&(src, _)| {
                        let u = Unfenced {
                            threads,
                            kernels,
                            src,
                        };
                        if u.at(c.thread, issue) {
                            writes[src]
                        } else {
                            0
                        }
                    })
                    .collect()
            })
            .collect();
        for (c, n) in self.copies.iter_mut().zip(stale) {
            c.stale = n;
            let waits = threads[c.thread].ops.iter().filter_map(|op| match op {
                MOp::BulkWait { read, .. } => Some(*read),
                _ => None,
            });
            for read in waits {
                c.awaited.read |= read;
                c.awaited.written |= !read;
            }
        }
    }
}

/// Whether a thread's view may hold a generic access to `src` that passed
/// no proxy fence: the only way a bulk copy's read can take a store older
/// than what happens before it (see `memory.rs`). A static
/// over-approximation along the edges a view follows within a block: the
/// thread's own operations since its last proxy fence point (its start, a
/// `fence.proxy.async`, a `gridsync` of a PDL secondary, a `devicesync`
/// that waits), the other threads' at each barrier it passes since, and,
/// for an `mbarwait` or `bulkwait` since, any generic access to `src` in
/// the block. Other grids reach a thread only through grid boundaries,
/// which are proxy fences.
struct Unfenced<'a> {
    threads: &'a [ThreadInfo],
    kernels: &'a [KernelInfo],
    src: usize,
}

impl Unfenced<'_> {
    /// Before operation `pos` of thread `t`.
    fn at(&self, t: usize, pos: usize) -> bool {
        let th = &self.threads[t];
        let k = &self.kernels[th.kernel];
        let fence = |op: &MOp| match op {
            MOp::FenceProxy => true,
            MOp::GridSync => matches!(k.start, Start::HostPdl { .. }),
            MOp::DeviceSync { .. } => !k.sync_depth_exceeded,
            _ => false,
        };
        let from = th.ops[..pos].iter().rposition(fence).map_or(0, |f| f + 1);
        let block: Vec<usize> = (0..self.threads.len())
            .filter(|&o| self.threads[o].kernel == th.kernel && self.threads[o].block == th.block)
            .collect();
        let generic =
            |op: &MOp| matches!(op, MOp::Store { loc, .. } | MOp::Load { loc } if *loc == self.src);
        for (j, op) in th.ops.iter().enumerate().take(pos).skip(from) {
            let dirty = match op {
                _ if generic(op) => true,
                MOp::SyncThreads => {
                    let n = barriers(&th.ops[..j]);
                    block.iter().filter(|&&o| o != t).any(|&o| {
                        nth_barrier(&self.threads[o].ops, n).is_some_and(|p| self.at(o, p))
                    })
                }
                MOp::MbarWait { .. } | MOp::BulkWait { .. } => block
                    .iter()
                    .any(|&o| self.threads[o].ops.iter().any(generic)),
                _ => false,
            };
            if dirty {
                return true;
            }
        }
        false
    }
}

fn barriers(ops: &[MOp]) -> usize {
    ops.iter().filter(|op| **op == MOp::SyncThreads).count()
}

/// The position of the `n`-th (from 0) barrier of a program.
fn nth_barrier(ops: &[MOp], n: usize) -> Option<usize> {
    ops.iter()
        .enumerate()
        .filter(|(_, op)| **op == MOp::SyncThreads)
        .nth(n)
        .map(|(i, _)| i)
}
