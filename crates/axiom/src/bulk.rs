//! Memory cells, mbarriers and bulk copies as a test's operations name
//! them: the test's global locations, a cell for each shared location each
//! block uses, an mbarrier for each block's name, and each `bulkload` or
//! `bulkstore` with the events it adds (its read, its write, its
//! completion). `program.rs` resolves a test through it; `relations.rs`
//! gives the copies their orders, `proxy.rs` the proxy fences.

use std::collections::BTreeMap;

use gridcheck_spec::Litmus;

use crate::error::{AxiomError, ErrorKind};

/// A bulk copy: its issuing operation, the cells it reads and writes, and
/// its events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ACopy {
    /// The issuing thread and the operation's index in it.
    pub thread: usize,
    pub op: usize,
    pub src: usize,
    pub dst: usize,
    /// A bulk load's mbarrier; `None` for a bulk store.
    pub mbar: Option<usize>,
    /// Events: its read of `src` (through the asynchronous proxy), its
    /// write of `dst` (the value it read), its completion.
    pub read: usize,
    pub write: usize,
    pub done: usize,
}

/// The names a test's operations use, resolved as the threads are.
#[derive(Debug)]
pub(crate) struct Cells<'a> {
    l: &'a Litmus,
    /// Name and initial value of each cell: the global locations first.
    pub cells: Vec<(String, u32)>,
    shared: BTreeMap<(usize, usize, &'a str), usize>,
    mbars: BTreeMap<(usize, usize, &'a str), usize>,
    /// Copies with their events still unnumbered (see [`Cells::number`]).
    pub copies: Vec<ACopy>,
}

impl<'a> Cells<'a> {
    pub(crate) fn new(l: &'a Litmus) -> Cells<'a> {
        Cells {
            l,
            cells: l.memory.clone(),
            shared: BTreeMap::new(),
            mbars: BTreeMap::new(),
            copies: Vec::new(),
        }
    }

    /// The test being resolved.
    pub(crate) fn litmus(&self) -> &'a Litmus {
        self.l
    }

    /// The cell `name` names in block `block` of kernel `ki`: a global
    /// location, or that block's copy of a shared one.
    pub(crate) fn cell(
        &mut self,
        (ki, block): (usize, usize),
        name: &'a str,
    ) -> Result<usize, AxiomError> {
        if let Some(i) = self.l.memory.iter().position(|(m, _)| m == name) {
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
        let (src, dst) = (self.cell(kb, src)?, self.cell(kb, dst)?);
        self.copies.push(ACopy {
            thread,
            op,
            src,
            dst,
            mbar,
            read: 0,
            write: 0,
            done: 0,
        });
        Ok(self.copies.len() - 1)
    }

    /// Numbers the copies' events from `next`, then one event per
    /// mbarrier (its phase's completion); returns those and the next free
    /// event.
    pub(crate) fn number(&mut self, mut next: usize) -> (Vec<usize>, usize) {
        for c in &mut self.copies {
            (c.read, c.write, c.done) = (next, next + 1, next + 2);
            next += 3;
        }
        let phases = (next..next + self.mbars.len()).collect();
        (phases, next + self.mbars.len())
    }
}
