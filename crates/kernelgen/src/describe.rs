//! The header comment of a litmus test's CUDA after its first lines: the
//! condition and expected verdict, each kernel with how it is launched and
//! its threads' programs, and the memory, register and status layout.

use std::fmt::{self, Write};

use gridcheck_spec::{KernelLaunch, Litmus};

use crate::layout::Layout;

/// The header comment after the first lines: the condition, the kernels
/// and their programs, and the layout.
pub(crate) fn description(w: &mut impl Write, litmus: &Litmus, lay: &Layout) -> fmt::Result {
    writeln!(
        w,
        "// Condition: {} (expected {})",
        litmus.condition, litmus.expect
    )?;
    writeln!(w, "//")?;
    writeln!(w, "// Kernels:")?;
    for k in &litmus.kernels {
        let launch = match k.launch {
            KernelLaunch::Host { pdl: false } => "host".to_string(),
            KernelLaunch::Host { pdl: true } => "host-pdl".to_string(),
            KernelLaunch::Device => match litmus.launcher_of(&k.name) {
                Some((pk, pt, s)) => {
                    format!("device, from {}.{} into stream {s}", pk.name, pt.name)
                }
                None => "device".to_string(),
            },
        };
        writeln!(w, "//   {} ({launch})", k.name)?;
        for t in &k.threads {
            let ops: Vec<String> = t.ops.iter().map(|o| o.to_string()).collect();
            writeln!(w, "//     {}: [{}]", t.name, ops.join(", "))?;
        }
    }
    writeln!(w, "//")?;
    writeln!(
        w,
        "// Layout (words; ABI in kernels/include/gridcheck.cuh):"
    )?;
    for l in &lay.locations {
        match l.tile {
            None => writeln!(
                w,
                "//   mem[slot * {} + {}] = {} (initially {})",
                lay.slot_stride, l.offset, l.name, l.init
            )?,
            Some(n) => writeln!(
                w,
                "//   mem[slot * {} + {}..] = {}[{n}] (every word initially {})",
                lay.slot_stride, l.offset, l.name, l.init
            )?,
        }
    }
    for l in &lay.shared {
        match l.tile {
            None => writeln!(
                w,
                "//   gc_shared[{}] = {} (each block's; initially {})",
                l.offset, l.name, l.init
            )?,
            Some(n) => writeln!(
                w,
                "//   gc_shared[{}..] = {}[{n}] (each block's; every word initially {})",
                l.offset, l.name, l.init
            )?,
        }
    }
    for (i, r) in lay.registers.iter().enumerate() {
        match r.segment {
            Some((a, b)) if b > a + 1 => writeln!(
                w,
                "//   regs[slot * {} + {i}] = {} (the set of its words' values, bit v for v)",
                lay.reg_stride, r.name
            )?,
            _ => writeln!(w, "//   regs[slot * {} + {i}] = {}", lay.reg_stride, r.name)?,
        }
    }
    let first = lay.registers.len();
    for (i, r) in lay.stale_counts.iter().enumerate() {
        writeln!(
            w,
            "//   regs[slot * {} + {}] = {} (its words that held the initial value; not an observable)",
            lay.reg_stride,
            first + i,
            r.name
        )?;
    }
    for k in &lay.kernels {
        if k.blocks > 1 {
            writeln!(
                w,
                "//   status[slot * {} + {}] = {} ran: {} blocks of {} threads, each adds 1",
                lay.status_stride, k.status_word, k.name, k.blocks, k.block_dim
            )?;
        } else {
            writeln!(
                w,
                "//   status[slot * {} + {}] = {} ran ({} threads per block)",
                lay.status_stride, k.status_word, k.name, k.block_dim
            )?;
        }
    }
    for e in lay.error_words() {
        writeln!(
            w,
            "//   status[slot * {} + {}] = error of {}",
            lay.status_stride, e.word, e.what
        )?;
    }
    writeln!(w)
}
