//! The asynchronous proxy in the coherence axioms: which events order a
//! generic memory operation before a bulk copy's read.
//!
//! PTX ISA 9.7.9.25.2: "Accessing the same memory location across multiple
//! proxies needs a cross-proxy fence. For the *async proxy*,
//! `fence.proxy.async` should be used to synchronize memory between
//! *generic proxy* and the *async proxy*." So a generic read or write that
//! happens before a copy's read binds it (hides older writes from it,
//! CoWR and CoRR) only through a **proxy fence point** between them: a
//! `fence.proxy.async`, or a grid boundary (decision, on the rules of
//! `spec/pdl/async-proxy.yaml`: a thread's start, and a wait for a grid's
//! completion, `gridsync` in a PDL secondary or a CDP1 `devicesync` within
//! the depth limit). The initial values are written before every grid.
//!
//! In the other direction nothing is needed: a copy's write reaches other
//! events only through its completion, "followed by an implicit
//! generic-async proxy fence" (same section), or its grid's. Coherence
//! order (CoWW) follows happens-before whatever the proxies (decision: the
//! proxy governs what a copy reads). This is the PTX model's
//! "dst-proxy-fence-cause" (Dat3M's `ptx.cat`) for the one direction the
//! DSL can express, with grid boundaries added.

use crate::control::Control;
use crate::graph::Bits;
use crate::program::{AOp, INIT, Prog, Start};

/// What the coherence axioms need to know of proxies in one control
/// resolution.
pub(crate) struct Proxies {
    fence_points: Vec<usize>,
    /// Per event: a bulk copy's read.
    async_read: Vec<bool>,
    /// Per event: a generic load or store of a thread.
    generic: Vec<bool>,
}

impl Proxies {
    pub(crate) fn new(p: &Prog, c: &Control) -> Proxies {
        let mut fence_points = Vec::new();
        let mut generic = vec![false; p.events];
        for t in p.threads.iter().filter(|t| c.runs[t.kernel]) {
            fence_points.push(t.start());
            let k = &p.kernels[t.kernel];
            for (i, op) in t.ops.iter().enumerate() {
                let fence = match op {
                    AOp::FenceProxy => true,
                    AOp::GridSync => matches!(k.start, Start::HostPdl { .. }),
                    AOp::DeviceSync { .. } => (k.depth as u64) <= p.sync_depth,
                    AOp::Store { .. } | AOp::Load { .. } => {
                        generic[t.op(i)] = true;
                        false
                    }
                    _ => false,
                };
                if fence {
                    fence_points.push(t.op(i));
                }
            }
        }
        let mut async_read = vec![false; p.events];
        for &r in p.copies.iter().flat_map(|cp| &cp.reads) {
            async_read[r] = true;
        }
        Proxies {
            fence_points,
            async_read,
            generic,
        }
    }

    /// Whether `a` is ordered before `b` for coherence, given the
    /// happens-before closure `reach` (`reach[x]` holds the events after
    /// `x`): happens-before, through a proxy fence point when `a` is a
    /// generic access and `b` a copy's read.
    pub(crate) fn before(&self, reach: &[Bits], a: usize, b: usize) -> bool {
        if a == INIT {
            return b != INIT;
        }
        if !reach[a].contains(b) {
            return false;
        }
        !(self.generic[a] && self.async_read[b])
            || self
                .fence_points
                .iter()
                .any(|&f| reach[a].contains(f) && reach[f].contains(b))
    }
}
