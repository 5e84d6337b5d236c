//! The names of a litmus test's operations as compilation resolves them
//! (`compile.rs`): memory cells (the global locations, then a cell for
//! each shared location each block uses), mbarriers (one per block and
//! name), and the bulk copies with what each needs at run time.

use std::collections::BTreeMap;

use gridcheck_spec::Litmus;

use crate::error::{ErrorKind, ModelError};
use crate::program::{Awaited, Copy, KernelInfo, MOp, Start, ThreadInfo};

fn err(msg: impl Into<String>) -> ModelError {
    ModelError::new(ErrorKind::Invalid, msg)
}

/// The test's memory cells, mbarriers and bulk copies as compilation
/// resolves them: global locations first, then a cell for each shared
/// location each block uses; an mbarrier for each block's name.
pub(crate) struct Names<'a> {
    pub l: &'a Litmus,
    pub cells: Vec<(String, u32)>,
    shared: BTreeMap<(usize, usize, &'a str), usize>,
    pub mbars: BTreeMap<(usize, usize, &'a str), usize>,
    pub copies: Vec<Copy>,
    store_ids: u32,
}

impl<'a> Names<'a> {
    pub(crate) fn new(l: &'a Litmus) -> Names<'a> {
        Names {
            l,
            cells: l.memory.clone(),
            shared: BTreeMap::new(),
            mbars: BTreeMap::new(),
            copies: Vec::new(),
            store_ids: 0,
        }
    }

    /// The cell of location `name` for a thread of block `block` of
    /// kernel `ki`: a global location, or the block's copy of a shared one.
    pub(crate) fn cell(
        &mut self,
        (ki, block): (usize, usize),
        name: &'a str,
    ) -> Result<usize, ModelError> {
        if let Some(i) = self.l.memory.iter().position(|(m, _)| m == name) {
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

    /// Bulk copy of thread `tid` (block `kb`) from `src` to `dst`.
    pub(crate) fn copy(
        &mut self,
        (tid, kb): (usize, (usize, usize)),
        (src, dst): (&'a str, &'a str),
        mbar: Option<usize>,
    ) -> Result<usize, ModelError> {
        let (src, dst) = (self.cell(kb, src)?, self.cell(kb, dst)?);
        let id = self.store_id();
        self.copies.push(Copy {
            thread: tid,
            src,
            dst,
            id,
            mbar,
            stale: 0,
            awaited: Awaited::default(),
        });
        Ok(self.copies.len() - 1)
    }

    /// Each copy's [`Copy::stale`]: the test's writes to its source (the
    /// most log positions its read may reach back), when a generic access to
    /// the source may happen before its issue with no proxy fence between
    /// ([`Unfenced`]); 0 otherwise.
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
            writes[c.dst] += 1;
        }
        let stale: Vec<usize> = (0..self.copies.len())
            .map(|ci| {
                let c = &self.copies[ci];
                let t = &threads[c.thread];
                let issue = t
                    .ops
                    .iter()
                    .position(|op| *op == MOp::Bulk { copy: ci })
                    .unwrap_or(0);
                let u = Unfenced {
                    threads,
                    kernels,
                    src: c.src,
                };
                if u.at(c.thread, issue) {
                    writes[c.src]
                } else {
                    0
                }
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
