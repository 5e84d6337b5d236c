//! The names of a litmus test's operations as compilation resolves them
//! (`compile.rs`): memory cells (the global locations, then a cell for
//! each shared location each block uses), mbarriers (one per block and
//! name), and the bulk copies with what each needs at run time.

use std::collections::BTreeMap;

use gridcheck_spec::Litmus;

use crate::error::{ErrorKind, ModelError};
use crate::program::{Awaited, Copy, MOp, ThreadInfo};

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

    /// Each copy's [`Copy::stale`]: the test's writes to its source, when
    /// some thread of its block accesses the source through the generic
    /// proxy (a generic access is what can run ahead of the proxy).
    pub(crate) fn stale_options(&mut self, threads: &[ThreadInfo]) {
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
        let generic = |c: &Copy| {
            let (k, b) = (threads[c.thread].kernel, threads[c.thread].block);
            threads
                .iter()
                .filter(|t| t.kernel == k && t.block == b)
                .flat_map(|t| &t.ops)
                .any(|op| matches!(op, MOp::Store { loc, .. } | MOp::Load { loc } if *loc == c.src))
        };
        let stale: Vec<usize> = self
            .copies
            .iter()
            .map(|c| if generic(c) { writes[c.src] } else { 0 })
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
