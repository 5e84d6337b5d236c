//! A litmus kernel's registers: the C variable of each (a tile register's
//! one a segment, with its count of stale words: `tile.rs`), declared in the
//! prologue and stored into the instance's registers by lane 0 at the end.

use std::fmt::{self, Write};

use gridcheck_spec::Thread;

use super::KernelEmitter;
use super::tile::reg_var;
use crate::layout::Register;

impl KernelEmitter<'_> {
    /// Every register variable of the kernel's threads, set to 0.
    pub(super) fn register_variables(&self, w: &mut impl Write) -> fmt::Result {
        for t in &self.kernel.threads {
            for r in self.thread_registers(t) {
                writeln!(w, "  unsigned int {} = 0u;", reg_var(t, r))?;
                if r.segment.is_some() {
                    writeln!(w, "  unsigned int {}_stale = 0u;", reg_var(t, r))?;
                }
            }
        }
        Ok(())
    }

    /// The layout's registers of thread `t`, in program order (a tile
    /// register once a segment).
    pub(super) fn thread_registers<'r>(
        &'r self,
        t: &'r Thread,
    ) -> impl Iterator<Item = &'r Register> {
        self.lay
            .registers
            .iter()
            .filter(move |r| r.kernel == self.kernel.name && r.thread == t.name)
    }

    /// Thread `t`'s registers into the instance's (and a tile register's
    /// stale words after the observables), by lane 0.
    pub(super) fn register_stores(&self, w: &mut impl Write, t: &Thread) -> fmt::Result {
        for (idx, r) in self.lay.registers.iter().enumerate() {
            if r.kernel == self.kernel.name && r.thread == t.name {
                writeln!(w, "    if (gc_lead) regs[{idx}u] = {};", reg_var(t, r))?;
            }
        }
        let first = self.lay.registers.len();
        for (i, r) in self.lay.stale_counts.iter().enumerate() {
            if r.kernel == self.kernel.name && r.thread == t.name {
                writeln!(
                    w,
                    "    if (gc_lead) regs[{}u] = {}_stale;  // {}",
                    first + i,
                    reg_var(t, r),
                    r.name
                )?;
            }
        }
        Ok(())
    }
}
