//! The memory a litmus kernel touches: the instance's memory and register
//! pointers, a location's place (`mem[...]` or the block's `smem[...]`),
//! and what the asynchronous proxy needs: the block's shared locations and
//! mbarriers, the bulk copies and their completion (helpers of
//! `kernels/include/gridcheck.cuh`, sm_90 and newer; a copy of a tile's
//! words carries their bytes to its mbarrier), and the drain of a thread's
//! copies before it exits.

use std::fmt::{self, Write};

use gridcheck_spec::place::base;
use gridcheck_spec::{Op, Place, Thread};

use super::KernelEmitter;
use crate::layout::{Layout, Location};

impl KernelEmitter<'_> {
    /// The memory and register pointers of the instance, when the kernel
    /// uses them.
    pub(super) fn pointers(&self, w: &mut impl Write) -> fmt::Result {
        let k = self.kernel;
        let has_mem = k.threads.iter().any(|t| {
            t.ops
                .iter()
                .flat_map(|op| op.locations())
                .any(|loc| !self.is_shared(loc))
        });
        if has_mem {
            writeln!(
                w,
                "  volatile unsigned int *const mem = p.mem + (size_t)slot * kSlotStride;"
            )?;
        }
        let has_loads = k
            .threads
            .iter()
            .any(|t| t.ops.iter().any(|op| op.register().is_some()));
        if has_loads {
            writeln!(
                w,
                "  volatile unsigned int *const regs = p.regs + (size_t)slot * kRegStride;"
            )?;
        }
        Ok(())
    }

    /// Whether `loc` (or the tile whose words it names) is a shared
    /// location of the test.
    pub(super) fn is_shared(&self, loc: &str) -> bool {
        let loc = base(loc);
        self.lay.shared.iter().any(|l| l.name == loc)
    }

    /// Whether `loc` names words of a tile.
    pub(super) fn is_tile(&self, loc: &str) -> bool {
        self.location(loc).is_some_and(|l| l.tile.is_some())
    }

    /// The location `loc` names (a tile for its words), shared or global.
    pub(super) fn location(&self, loc: &str) -> Option<&Location> {
        let loc = base(loc);
        self.lay
            .shared
            .iter()
            .chain(&self.lay.locations)
            .find(|l| l.name == loc)
    }

    /// The mbarriers the kernel's threads name, in order of first mention.
    fn mbarriers(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for op in self.kernel.threads.iter().flat_map(|t| &t.ops) {
            if let Op::BulkLoad { bar, .. } | Op::MbarWait { bar } = op
                && !out.contains(&bar.as_str())
            {
                out.push(bar);
            }
        }
        out
    }

    /// The block's shared locations and mbarriers, when its threads use
    /// them: thread 0 writes the initial values and initializes the
    /// mbarriers (one arrival, the bulk load's `expect_tx`), then fences the
    /// proxies, so that the asynchronous proxy reads the initial values
    /// and finds the mbarriers, before the block's first barrier.
    pub(super) fn shared_memory(&self, w: &mut impl Write) -> fmt::Result {
        let uses_shared = self
            .kernel
            .threads
            .iter()
            .flat_map(|t| &t.ops)
            .flat_map(|op| op.locations())
            .any(|loc| self.is_shared(loc));
        let bars = self.mbarriers();
        if !uses_shared && bars.is_empty() {
            return Ok(());
        }
        if uses_shared {
            writeln!(
                w,
                "  __shared__ __align__(128) unsigned int gc_shared[{}u];  // the block's shared locations",
                self.lay.shared_words()
            )?;
            writeln!(w, "  volatile unsigned int *const smem = gc_shared;")?;
        }
        for b in &bars {
            writeln!(
                w,
                "  __shared__ unsigned long long gc_mbar_{b};  // mbarrier {b}"
            )?;
        }
        writeln!(w, "  if (threadIdx.x == 0u) {{")?;
        if uses_shared {
            for l in &self.lay.shared {
                match l.tile {
                    None => writeln!(w, "    smem[{}u] = {}u;  // {}", l.offset, l.init, l.name)?,
                    Some(n) => writeln!(
                        w,
                        "    for (unsigned int gc_i = 0u; gc_i < {n}u; ++gc_i) smem[{}u + gc_i] = {}u;  // {}[{n}]",
                        l.offset, l.init, l.name
                    )?,
                }
            }
        }
        for b in &bars {
            writeln!(w, "    gc_mbar_init(&gc_mbar_{b});")?;
        }
        writeln!(
            w,
            "    gc_fence_proxy_async();  // the initial values and mbarriers reach the async proxy"
        )?;
        writeln!(w, "  }}")
    }

    /// The end of thread `t`'s operations: its bulk copies drained, so that
    /// none outlives the block's shared memory: each bulk load's mbarrier,
    /// and the reads of its bulk stores (`cp.async.bulk.wait_group.read 0`
    /// after committing them). Their writes may still be in flight.
    pub(super) fn drain(&self, w: &mut impl Write, t: &Thread) -> fmt::Result {
        let mut stores = false;
        for op in &t.ops {
            match op {
                Op::BulkLoad { bar, .. } => writeln!(
                    w,
                    "    if (gc_lead) gc_mbar_wait(&gc_mbar_{bar});  // drain: the bulk load completed"
                )?,
                Op::BulkStore { .. } => stores = true,
                _ => {}
            }
        }
        if stores {
            writeln!(
                w,
                "    if (gc_lead) {{ gc_bulk_commit(); gc_bulk_wait_read<0>(); }}  // drain: the bulk stores read shared memory"
            )?;
        }
        Ok(())
    }

    /// A location as C: `mem[offset]` or `smem[offset]` (for words of a
    /// tile, its first).
    pub(super) fn place(&self, loc: &str) -> String {
        let first = Place::parse(loc)
            .ok()
            .and_then(|p| p.range)
            .map_or(0, |r| r.0);
        let (array, offset) = self.array(loc);
        format!("{array}[{}u]", offset + first)
    }

    /// The array a location is in (`mem` or `smem`) and its offset there.
    pub(super) fn array(&self, loc: &str) -> (&'static str, u32) {
        match self.lay.shared.iter().find(|l| l.name == base(loc)) {
            Some(l) => ("smem", l.offset),
            None => ("mem", location_offset(self.lay, loc)),
        }
    }

    /// An operation of the asynchronous proxy.
    pub(super) fn bulk_op(&self, w: &mut impl Write, op: &Op) -> fmt::Result {
        // A copy of a tile's words moves their bytes, which its mbarrier
        // expects; one of a word, a line's 16 bytes (`GC_BULK_BYTES`).
        let bytes = |loc: &str| {
            Place::parse(loc)
                .ok()
                .filter(|p| p.words() > 1)
                .map(|p| p.words() * 4)
        };
        match op {
            Op::BulkLoad { dst, src, bar } => match bytes(src) {
                None => writeln!(
                    w,
                    "    gc_bulk_load(&{}, &{}, &gc_mbar_{bar});",
                    self.place(dst),
                    self.place(src)
                ),
                Some(n) => writeln!(
                    w,
                    "    gc_bulk_load_bytes(&{}, &{}, &gc_mbar_{bar}, {n}u);  // {n} bytes: {dst} <- {src}",
                    self.place(dst),
                    self.place(src)
                ),
            },
            Op::MbarWait { bar } => writeln!(w, "    gc_mbar_wait(&gc_mbar_{bar});"),
            Op::BulkStore { dst, src } => match bytes(src) {
                None => writeln!(
                    w,
                    "    gc_bulk_store(&{}, &{});",
                    self.place(dst),
                    self.place(src)
                ),
                Some(n) => writeln!(
                    w,
                    "    gc_bulk_store_bytes(&{}, &{}, {n}u);  // {n} bytes: {dst} <- {src}",
                    self.place(dst),
                    self.place(src)
                ),
            },
            Op::BulkCommit => writeln!(w, "    gc_bulk_commit();"),
            Op::BulkWait {
                read: false,
                pending,
            } => {
                writeln!(w, "    gc_bulk_wait<{pending}>();")
            }
            Op::BulkWait {
                read: true,
                pending,
            } => {
                writeln!(w, "    gc_bulk_wait_read<{pending}>();")
            }
            Op::FenceProxyAsync => writeln!(w, "    gc_fence_proxy_async();"),
            _ => Ok(()),
        }
    }
}

/// The word offset of a location within an instance's slot (of a tile
/// whose words `loc` names, its first word's).
pub(super) fn location_offset(lay: &Layout, loc: &str) -> u32 {
    let loc = base(loc);
    lay.locations
        .iter()
        .find(|l| l.name == loc)
        .map_or(0, |l| l.offset)
}
