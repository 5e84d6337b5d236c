//! Tiles on the GPU (`gridcheck_spec::tile`): a modeled thread that stores
//! or loads words of a tile is its whole warp, as in real kernels, where a
//! warp's lanes each take their share of a slice.
//!
//! In such a thread (see [`KernelEmitter::warp_wide`]) a store of a tile's
//! words is every lane storing every 32nd word, and a load every lane
//! reading them, each segment of the register (the segments both models
//! observe) folded across the warp into the set of its values (bit `v`
//! for value `v`; a segment of one word, its value) and into its count of
//! stale words (those holding the tile's initial value: a register word
//! of its own after the observables, [`crate::Layout::stale_counts`]).
//! What each thread does for itself in PTX is done by every lane: a
//! `fence.proxy.async` (a proxy fence orders the executing thread's
//! accesses), `griddepcontrol.wait` ("the executing thread") and the wait
//! on an mbarrier; what one thread issues (a bulk copy, its group's
//! commit and wait, the trigger) lane 0 does, as for a word. Between two
//! operations the warp meets at `__syncwarp()`, which orders the lanes'
//! accesses before it before those after.

use std::fmt::{self, Write};

use gridcheck_spec::{Op, Place, Thread};

use super::{KernelEmitter, c_name};
use crate::abi::WARP;
use crate::layout::Register;

impl KernelEmitter<'_> {
    /// Whether thread `t` is its whole warp: it stores or loads words of a
    /// tile.
    pub(super) fn warp_wide(&self, t: &Thread) -> bool {
        t.ops.iter().any(|op| match op {
            Op::Store { loc, .. } | Op::Load { loc, .. } => self.is_tile(loc),
            _ => false,
        })
    }

    /// Whether every lane of a warp-wide thread executes `op` (rather than
    /// lane 0).
    pub(super) fn every_lane(&self, op: &Op) -> bool {
        match op {
            Op::Store { loc, .. } | Op::Load { loc, .. } => self.is_tile(loc),
            Op::FenceProxyAsync | Op::GridDependencySync | Op::MbarWait { .. } => true,
            _ => false,
        }
    }

    /// A store or load of a tile's words by every lane of the warp.
    pub(super) fn tile_access(&self, w: &mut impl Write, t: &Thread, op: &Op) -> fmt::Result {
        let (Op::Store { loc, .. } | Op::Load { loc, .. }) = op else {
            return Ok(());
        };
        let Ok(Place {
            range: Some((a, b)),
            ..
        }) = Place::parse(loc)
        else {
            return Ok(());
        };
        let (array, base) = self.array(loc);
        let lane = format!("threadIdx.x % {WARP}u");
        match op {
            Op::Store { value, .. } => writeln!(
                w,
                "    for (unsigned int gc_i = {a}u + {lane}; gc_i < {b}u; gc_i += {WARP}u) \
                 {array}[{base}u + gc_i] = {value}u;"
            ),
            Op::Load { reg, .. } => {
                let init = self.location(loc).map_or(0, |l| l.init);
                for r in self.tile_registers(t, reg) {
                    let Some((s, e)) = r.segment else { continue };
                    let var = reg_var(t, r);
                    let fold = if e == s + 1 {
                        "gc_w"
                    } else {
                        "gc_value_bit(gc_w)"
                    };
                    writeln!(w, "    {{  // words {s} to {} of {loc}", e - 1)?;
                    writeln!(w, "      unsigned int gc_v = 0u, gc_n = 0u;")?;
                    writeln!(
                        w,
                        "      for (unsigned int gc_i = {s}u + {lane}; gc_i < {e}u; gc_i += {WARP}u) {{"
                    )?;
                    writeln!(
                        w,
                        "        const unsigned int gc_w = {array}[{base}u + gc_i];"
                    )?;
                    writeln!(w, "        gc_v |= {fold};")?;
                    writeln!(w, "        gc_n += gc_w == {init}u ? 1u : 0u;")?;
                    writeln!(w, "      }}")?;
                    writeln!(w, "      {var} = gc_warp_or(gc_v);")?;
                    writeln!(w, "      {var}_stale = gc_warp_add(gc_n);")?;
                    writeln!(w, "    }}")?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// The layout's registers of thread `t`'s register `reg` (a tile
    /// register's segments).
    fn tile_registers<'r>(
        &'r self,
        t: &'r Thread,
        reg: &'r str,
    ) -> impl Iterator<Item = &'r Register> {
        self.lay
            .registers
            .iter()
            .filter(move |r| r.kernel == self.kernel.name && r.thread == t.name && r.reg == reg)
    }
}

/// The C variable of register `r` of thread `t`: `t0_r0`, or for a
/// segment of a tile register starting at word `a`, `t0_r0_a` (and
/// `t0_r0_a_stale`, its stale words).
pub(super) fn reg_var(t: &Thread, r: &Register) -> String {
    match r.segment {
        None => format!("{}_{}", c_name(t), r.reg),
        Some((a, _)) => format!("{}_{}_{a}", c_name(t), r.reg),
    }
}
